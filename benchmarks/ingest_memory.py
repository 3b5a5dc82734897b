"""Peak memory of reading a long score table into a matrix: ``tinybench-builder ingest TABLE --out X.parquet``.

::

    python -m benchmarks.ingest_memory --models 2000 --items 5000                 # long CSV
    python -m benchmarks.ingest_memory --models 20000 --items 5000 --cap 8G       # under prlimit --as
    python -m benchmarks.ingest_memory --models 2000 --items 5000 --layout long-parquet
    python -m benchmarks.ingest_memory --workdir /data/x --keep                  # reuse the table
    python -m benchmarks.ingest_memory --models 3 --items 1000000 --outputs parquet csv long.parquet long.csv

Writes a dense long table (``model,item,score``, one row per pair, binary scores, rows in model
order unless ``--shuffle``) into ``--workdir`` (a temporary folder by default, removed at the
end), then runs ``python -m tinybench_builder ingest`` on it in a fresh process, optionally under
``prlimit --as=CAP`` so that a run that needs more never takes the machine down (it then fails
with the out-of-memory exit status instead). The peak resident memory of that process
(``ru_maxrss`` from ``wait4``, in a small launcher: see :data:`_LAUNCH`) is reported, with the
matrix size (models x items x 8 bytes), their ratio and the ratio of what the table added to a
baseline run of the same command on a 10 x 10 table (the interpreter and its libraries). The matrix written is checked against the
generator (shape and a digest of the scores).

``--outputs`` chooses what the ingest writes, one run each: ``parquet`` (the wide table, the
default), ``csv`` (wide CSV), ``long.parquet`` and ``long.csv`` (``--layout long``). Each output
written is then read back (``ResponseMatrix.read``, what ``fit`` and ``estimate`` do) in a fresh
process, whose peak RSS is reported too. ``--write-docs`` puts the table of the runs into
``docs/BENCHMARKS.md``, one section per configuration (:func:`section_id`).
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

from benchmarks.docs_tables import Conditions, add_docs_arg, write_sections

LAYOUTS = ("long-csv", "long-parquet")
#: what ``--outputs`` may ask the ingest to write: (file ending, --layout)
OUTPUTS = {"parquet": ("parquet", "wide"), "csv": ("csv", "wide"), "long.parquet": ("parquet", "long"),
           "long.csv": ("csv", "long")}


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


def run_ingest(table: Path, out: Path, cap: int | None, layout: str = "wide") -> dict:
    """``python -m tinybench_builder ingest table --out out`` in a fresh process: exit status, seconds, peak RSS."""
    cmd = [sys.executable, "-m", "tinybench_builder", "ingest", str(table), "--out", str(out), "--progress", "none",
           "--jobs", "1"] + (["--layout", layout] if layout != "wide" else [])
    return _measured(cmd, cap)


_READ_BACK = ("import sys\nfrom tinybench_builder.read.matrix import ResponseMatrix\n"
              "m = ResponseMatrix.read(sys.argv[1])\nprint(m.shape[0], m.shape[1])\n")


def run_read_back(out: Path, cap: int | None) -> dict:
    """``ResponseMatrix.read(out)`` (what ``fit`` and ``estimate`` do first) in a fresh process: its peak RSS."""
    return _measured([sys.executable, "-c", _READ_BACK, str(out)], cap)


#: runs argv[2:] and writes its ru_maxrss (KiB) to argv[1]: a child's peak RSS counts the RSS of
#: the process it was forked from (Linux copies the old memory's high-water mark at exec, vfork
#: too), so the command is forked from this small launcher (~10 MiB), not from the benchmark,
#: which holds the table it generated (a 3 x 1,000,000 table left ~440 MiB in every peak)
_LAUNCH = ("import os, sys\npid = os.fork()\nif pid == 0:\n    os.execvp(sys.argv[2], sys.argv[2:])\n"
           "_, status, usage = os.wait4(pid, 0)\nopen(sys.argv[1], 'w').write(str(usage.ru_maxrss))\n"
           "sys.exit(os.waitstatus_to_exitcode(status))\n")


def _measured(cmd: list[str], cap: int | None) -> dict:
    """Run ``cmd`` (under ``prlimit --as=cap``): exit status, seconds, peak RSS (``wait4`` in a
    launcher, see :data:`_LAUNCH`), last lines."""
    if cap:
        cmd = ["prlimit", f"--as={cap}", *cmd]
    with tempfile.NamedTemporaryFile("r", suffix=".maxrss") as rss:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", _LAUNCH, rss.name, *cmd], capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        peak_kib = int(rss.read().strip() or 0)
    return {"status": proc.returncode, "seconds": round(seconds, 1), "peak_mib": round(peak_kib / 1024, 1),
            "stderr": proc.stderr.strip().splitlines()[-3:], "stdout": proc.stdout.strip().splitlines()[:1]}


def _digest_of(out: Path) -> tuple[tuple[int, int], str]:
    from tinybench_builder.read.matrix import ResponseMatrix

    m = ResponseMatrix.read(out)
    return m.shape, hashlib.sha256(np.ascontiguousarray(m.scores).tobytes()).hexdigest()


#: how a run's ``--out`` is shown in the table
_SHOWN = {"parquet": "X.parquet", "csv": "X.csv", "long.parquet": "X.parquet --layout long",
          "long.csv": "X.csv --layout long"}


def docs_table(rows: list[dict]) -> str:
    """The runs of one configuration as a Markdown table (docs/BENCHMARKS.md), one row per output."""
    header = ("| input | models x items | rows | matrix | `--out` | exit | ingest s | ingest peak RSS | peak / matrix "
              "| added / matrix | output | read-back s | read-back peak RSS | matrix checked |")
    lines = [header, "|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        done = r["status"] == 0
        cap = f", under `prlimit --as={r['cap'] / (1 << 30):g}G`" if r["cap"] else ""
        size = f"{r['out_mib']:,} MiB" if done else "-"
        read_peak = f"{r['read_peak_mib']:,.0f} MiB" if done else "-"
        checked = "-" if "checked" not in r else "yes" if r["checked"] else "NO"
        lines.append(f"| {r['layout']} ({r['table_mib']:,.0f} MiB){cap} | {r['models']:,} x {r['items']:,} | "
                     f"{r['rows']:,} | {r['matrix_mib']:,.0f} MiB | `{_SHOWN[r['output']]}` | {r['status']} | "
                     f"{r['seconds']:.0f} | {r['peak_mib']:,.0f} MiB | {r['peak_over_matrix']:.2f} | "
                     f"{r['added_over_matrix']:.2f} | {size} | {r.get('read_seconds', '-')} | {read_peak} | "
                     f"{checked} |")
    base = rows[0]
    baselines = (f"Baselines (the same commands on a 10 x 10 table: the interpreter and its libraries): ingest "
                 f"{base['baseline_peak_mib']:,.0f} MiB, read-back {base['read_baseline_peak_mib']:,.0f} MiB.")
    lines += ["", baselines]
    return "\n".join(lines)


def section_id(args: argparse.Namespace) -> str:
    """The docs/BENCHMARKS.md section of a configuration: each configuration keeps its own table."""
    outputs = "" if args.outputs == ["parquet"] else "." + "-".join(o.replace(".", "_") for o in args.outputs)
    return (f"ingest_memory.{args.layout}.{args.models}x{args.items}{'.shuffled' if args.shuffle else ''}"
            f"{f'.cap{args.cap}' if args.cap else ''}{outputs}")


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
    p.add_argument("--outputs", nargs="+", choices=sorted(OUTPUTS), default=["parquet"],
                   help="what the ingest writes, one run each: the wide parquet (default), wide CSV, or the long "
                        "layout (--layout long) as parquet or CSV; each written output is read back in a fresh process")
    add_docs_arg(p)
    args = p.parse_args(argv)
    conditions = Conditions()

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
        base_read = run_read_back(work / "tiny_out.parquet", args.cap)
        matrix_mib = args.models * args.items * 8 / (1 << 20)
        rows = []
        for output in args.outputs:
            _, out_layout = OUTPUTS[output]
            out = work / f"out.{output}"
            run = run_ingest(table, out, args.cap, out_layout)
            row = {
                "layout": args.layout, "output": output, "models": args.models, "items": args.items,
                "rows": args.models * args.items, "table_mib": round(table.stat().st_size / (1 << 20), 1),
                "matrix_mib": round(matrix_mib, 1), "cap": args.cap, "status": run["status"],
                "seconds": run["seconds"], "peak_mib": run["peak_mib"], "baseline_peak_mib": base["peak_mib"],
                "read_baseline_peak_mib": base_read["peak_mib"],
                "peak_over_matrix": round(run["peak_mib"] / matrix_mib, 2),
                "added_over_matrix": round((run["peak_mib"] - base["peak_mib"]) / matrix_mib, 2),
                "table_written_s": round(made, 1), "load": os.getloadavg()[0], "stderr": run["stderr"],
            }
            if run["status"] == 0:
                row["out_mib"] = round(out.stat().st_size / (1 << 20), 1)
                back = run_read_back(out, args.cap)
                row.update(read_status=back["status"], read_seconds=back["seconds"], read_peak_mib=back["peak_mib"])
                if not args.no_check and back["status"] == 0:
                    shape, got = _digest_of(out)
                    row["checked"] = shape == (args.models, args.items) and (args.shuffle or got == want)
                out.unlink()
            print(json.dumps(row), flush=True)
            rows.append(row)
        if args.write_docs:
            title = f"Ingest memory: {args.layout}, {args.models:,} x {args.items:,}"
            write_sections([(section_id(args), title, docs_table(rows))], conditions, argv=argv,
                           module="ingest_memory")
        return 0 if all(r["status"] == 0 for r in rows) else 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
