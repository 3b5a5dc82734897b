"""Peak memory of reading a long score table into a matrix: ``tinybench-builder ingest TABLE --out X.parquet``.

::

    python -m benchmarks.ingest_memory --models 2000 --items 5000                 # long CSV
    python -m benchmarks.ingest_memory --models 20000 --items 5000 --cap 8G       # under prlimit --as
    python -m benchmarks.ingest_memory --models 2000 --items 5000 --layout long-parquet
    python -m benchmarks.ingest_memory --workdir /data/x --keep                  # reuse the table

Writes a dense long table (``model,item,score``, one row per pair, binary scores, rows in model
order unless ``--shuffle``) into ``--workdir`` (a temporary folder by default, removed at the
end), then runs ``python -m tinybench_builder ingest`` on it in a fresh process, optionally under
``prlimit --as=CAP`` so that a run that needs more never takes the machine down (it then fails
with the out-of-memory exit status instead). The peak resident memory of that process
(``ru_maxrss`` from ``wait4``) is reported, with the matrix size (models x items x 8 bytes),
their ratio and the ratio of what the table added to a baseline run of the same command on a
10 x 10 table (the interpreter and its libraries). The matrix written is checked against the
generator (shape and a digest of the scores).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import docs_tables

LAYOUTS = ("long-csv", "long-parquet")


def _scores(n_models: int, n_items: int, first: int, count: int, seed: int) -> np.ndarray:
    """Scores of models ``first .. first+count-1`` (deterministic for the seed, whatever the blocks)."""
    rows = [np.random.default_rng([seed, first + r]).random(n_items) < 0.6 for r in range(count)]
    return np.asarray(rows, dtype=np.float64)


def model_name(i: int) -> str:
    return f"org/model-{i:06d}"


def item_name(j: int) -> str:
    return f"subject_{j % 57:02d}.{j:06d}"


def write_table(path: Path, n_models: int, n_items: int, layout: str, seed: int = 0, shuffle: bool = False,
                block: int = 200) -> str:
    """Write the long table block by block (bounded memory); returns the sha256 of its wide scores."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    items = pa.array([item_name(j) for j in range(n_items)])
    digest = hashlib.sha256()
    writer: Any = None
    sink: Any = None
    try:
        for first in range(0, n_models, block):
            count = min(block, n_models - first)
            s = _scores(n_models, n_items, first, count, seed)
            digest.update(s.tobytes())
            models = pa.array(np.repeat([model_name(first + r) for r in range(count)], n_items))
            item_col = pa.concat_arrays([items] * count)
            score = pa.array(s.ravel())
            table = pa.table({"model": models, "item": item_col, "score": score})
            if shuffle:
                table = table.take(np.random.default_rng([seed, first]).permutation(table.num_rows))
            if layout == "long-csv":
                if sink is None:
                    sink = pa.OSFile(str(path), "wb")
                    writer = pacsv.CSVWriter(sink, table.schema,
                                             write_options=pacsv.WriteOptions(quoting_style="none"))
                writer.write_table(table)
            else:
                if writer is None:
                    writer = pq.ParquetWriter(str(path), table.schema)
                writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()
        if sink is not None:
            sink.close()
    return digest.hexdigest()


def run_ingest(table: Path, out: Path, cap: int | None) -> dict:
    """``python -m tinybench_builder ingest table --out out`` in a fresh process: exit status, seconds, peak RSS."""
    cmd = [sys.executable, "-m", "tinybench_builder", "ingest", str(table), "--out", str(out), "--progress", "none",
           "--jobs", "1"]
    if cap:
        cmd = ["prlimit", f"--as={cap}", *cmd]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    assert proc.stdout is not None and proc.stderr is not None  # both are pipes
    stdout, stderr = proc.stdout.read(), proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"status": proc.returncode, "seconds": round(seconds, 1), "peak_mib": round(usage.ru_maxrss / 1024, 1),
            "stderr": stderr.strip().splitlines()[-3:], "stdout": stdout.strip().splitlines()[:1]}


def _digest_of(out: Path) -> tuple[tuple[int, int], str]:
    from tinybench_builder.read.matrix import ResponseMatrix

    m = ResponseMatrix.read(out)
    return m.shape, hashlib.sha256(np.ascontiguousarray(m.scores).tobytes()).hexdigest()


def markdown_row(row: dict[str, Any]) -> str:
    """One run as a Markdown table of one row (the columns of docs/BENCHMARKS.md's memory tables)."""
    cap = "" if not row["cap"] else f", under `prlimit --as={row['cap'] / (1 << 30):g}G`"
    checked = "not checked" if "checked" not in row else "yes" if row["checked"] else "NO"
    head = ("| layout | models x items | rows | table | matrix | exit | seconds | peak RSS | baseline peak RSS "
            "| peak / matrix | added / matrix | matrix checked |")
    line = (f"| {row['layout']}{cap} | {row['models']:,} x {row['items']:,} | {row['rows']:,} "
            f"| {row['table_mib']:,.0f} MiB | {row['matrix_mib']:,.0f} MiB | {row['status']} | {row['seconds']:.0f} "
            f"| {row['peak_mib']:,.0f} MiB | {row['baseline_peak_mib']:,.0f} MiB | {row['peak_over_matrix']:.2f} "
            f"| {row['added_over_matrix']:.2f} | {checked} |")
    return "\n".join([head, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|", line])


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    return int(float(text[:-1]) * units[text[-1]]) if text and text[-1] in units else int(text)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.ingest_memory", description=__doc__.split("\n\n")[0])
    p.add_argument("--models", type=int, default=2000)
    p.add_argument("--items", type=int, default=5000)
    p.add_argument("--layout", choices=LAYOUTS, default="long-csv")
    p.add_argument("--shuffle", action="store_true", help="rows in random order within blocks of 200 models")
    p.add_argument("--cap", type=parse_size, default=None, metavar="BYTES",
                   help="address-space cap of the ingest process (prlimit --as), e.g. 8G")
    p.add_argument("--workdir", type=Path, default=None, help="where the table goes (default: a temporary folder)")
    p.add_argument("--keep", action="store_true", help="keep the work folder (and reuse a table already there)")
    p.add_argument("--no-check", action="store_true", help="skip reading the output back (saves memory and time)")
    docs_tables.add_docs_arg(p)
    args = p.parse_args(argv)
    conditions = docs_tables.Conditions()

    work = args.workdir or Path(tempfile.mkdtemp(prefix="tinybench-memory-"))
    work.mkdir(parents=True, exist_ok=True)
    ext = "csv" if args.layout == "long-csv" else "parquet"
    table = work / f"long_{args.models}x{args.items}{'_shuffled' if args.shuffle else ''}.{ext}"
    try:
        t0 = time.perf_counter()
        digest_file = table.with_suffix(".sha256")
        if args.keep and table.exists() and digest_file.exists():
            want = digest_file.read_text().strip()
            made = 0.0
        else:
            want = write_table(table, args.models, args.items, args.layout, shuffle=args.shuffle)
            digest_file.write_text(want + "\n")
            made = time.perf_counter() - t0
        tiny = work / f"tiny.{ext}"
        write_table(tiny, 10, 10, args.layout)
        base = run_ingest(tiny, work / "tiny_out.parquet", args.cap)
        run = run_ingest(table, work / "out.parquet", args.cap)
        matrix_mib = args.models * args.items * 8 / (1 << 20)
        row = {
            "layout": args.layout, "models": args.models, "items": args.items, "rows": args.models * args.items,
            "table_mib": round(table.stat().st_size / (1 << 20), 1), "matrix_mib": round(matrix_mib, 1),
            "cap": args.cap, "status": run["status"], "seconds": run["seconds"], "peak_mib": run["peak_mib"],
            "baseline_peak_mib": base["peak_mib"],
            "peak_over_matrix": round(run["peak_mib"] / matrix_mib, 2),
            "added_over_matrix": round((run["peak_mib"] - base["peak_mib"]) / matrix_mib, 2),
            "table_written_s": round(made, 1), "load": os.getloadavg()[0], "stderr": run["stderr"],
        }
        if run["status"] == 0 and not args.no_check:
            shape, got = _digest_of(work / "out.parquet")
            row["checked"] = shape == (args.models, args.items) and (args.shuffle or got == want)
        print(json.dumps(row))
        if args.write_docs:
            section = (f"ingest_memory.{args.layout}.{args.models}x{args.items}{'.shuffled' if args.shuffle else ''}"
                       f"{f'.cap{args.cap}' if args.cap else ''}")
            docs_tables.write_sections([(section, f"Ingest memory: {args.layout}, {args.models:,} x {args.items:,}",
                                         markdown_row(row))], conditions, argv=argv, module="ingest_memory")
        return 0 if run["status"] == 0 else 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
