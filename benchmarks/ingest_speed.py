"""Ingest speed and client memory: Open LLM Leaderboard v1 details of N models, read into one
matrix by the local process pool and by a 2-worker Dask LocalCluster.

::

    python -m benchmarks.ingest_speed                      # 2,000 models, local vs Dask
    python -m benchmarks.ingest_speed --models 500         # smaller
    python -m benchmarks.ingest_speed --workdir /data/x    # keep (and reuse) the fixtures

Writes fixture details for N models (all six benchmarks, 28,659 rows each: ARC 1172,
HellaSwag 10042, MMLU 14042 over 57 subject files, TruthfulQA 817, Winogrande 1267,
GSM8K 1319; 62 parquet files per model, laid out like the Hub repos) into ``--workdir``
(default: a temporary folder, removed at the end), then times ``tinybench_builder.read.ingest.ingest`` on the
folder once per engine. Each engine runs in a fresh Python process, so that the peak resident
memory (``ru_maxrss``) of that process, the *client*, is its own; the Dask workers and the
process pool's workers are other processes. The fixture files hold only small columns
(``example`` and the ``metrics`` struct), so generating them stays fast; the reader reads only
the metric column either way. Both runs must give the same matrix (checked by a digest).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from benchmarks import docs_tables
from tinybench_builder.read.sources.open_llm_leaderboard import MMLU_ROWS, V1_TASKS, V1_TOTAL_ROWS

TS = "2024-01-15T10-20-30.123456"
BENCHES = ("arc", "hellaswag", "mmlu", "truthfulqa", "winogrande", "gsm8k")


def task_files() -> list[tuple[str, str, int, tuple[str, ...]]]:
    """(scenario, task name, rows, metric fields) of the 62 details files of one model."""
    out: list[tuple[str, str, int, tuple[str, ...]]] = []
    for t in V1_TASKS:
        if t.scenario not in BENCHES:
            continue
        fields = ("mc1", "mc2") if t.scenario == "truthfulqa" else ("acc",) if t.scenario == "gsm8k" else ("acc", "acc_norm")
        if t.scenario == "mmlu":
            out += [("mmlu", t.pipe.format(sub=s), n, fields) for s, n in MMLU_ROWS.items()]
        else:
            out.append((t.scenario, t.pipe, int(t.rows or 0), fields))
    assert sum(f[2] for f in out) == V1_TOTAL_ROWS
    return out


def model_scores(k: int) -> dict[str, dict[str, np.ndarray]]:
    """Deterministic fake scores of model k: {task name: {metric: values}}."""
    rng = np.random.default_rng(k)
    ability = rng.normal()
    out = {}
    for _scenario, name, rows, fields in task_files():
        diff = np.random.default_rng(zlib.crc32(name.encode())).normal(size=rows)
        p = 1 / (1 + np.exp(-(ability - diff)))
        vals = {}
        for f in fields:
            vals[f] = p if f == "mc2" else (rng.random(rows) < p).astype(np.float64)
        out[name] = vals
    return out


def write_model(root: str, k: int) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = Path(root) / f"details_bench-org__model-{k:05d}"
    done = folder / ".complete"
    if done.exists():
        return 0
    run = folder / TS
    run.mkdir(parents=True, exist_ok=True)
    for name, vals in model_scores(k).items():
        n = len(next(iter(vals.values())))
        metrics = pa.StructArray.from_arrays([pa.array(v) for v in vals.values()], names=list(vals))
        table = pa.table({"example": pa.array([f"q{i}" for i in range(n)]), "metrics": metrics})
        pq.write_table(table, run / f"details_{name}_{TS}.parquet", compression="snappy")
    done.touch()
    return len(vals)


def generate(root: Path, n: int, workers: int) -> float:
    t0 = time.perf_counter()
    root.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        list(pool.map(write_model, [str(root)] * n, range(n), chunksize=8))
    return time.perf_counter() - t0


def check(matrix, k: int) -> None:
    """The matrix row of model k equals its generated headline scores."""
    from tinybench_builder.read.sources.open_llm_leaderboard import classify

    row = matrix.scores[matrix.models.index(f"bench-org/model-{k:05d}")]
    col = {c: j for j, c in enumerate(matrix.items)}
    for name, vals in model_scores(k).items():
        scenario, sub, metric, _, _ = classify(name)
        assert metric is not None  # every generated task has its metric
        ids = [".".join([scenario] + ([sub] if sub else []) + [str(i)]) for i in range(len(vals[metric]))]
        got = row[[col[i] for i in ids]]
        if not np.array_equal(got, vals[metric]):
            raise AssertionError(f"model {k}: {name} differs")


def _rss_mib() -> float | None:
    """Resident memory of this process now (Linux), MiB."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def digest(matrix) -> str:
    """A digest of models, items and scores (NaN included): equal matrices, equal digests."""
    h = hashlib.sha256()
    h.update("\n".join(matrix.models).encode())
    h.update("\n".join(matrix.items).encode())
    h.update(np.ascontiguousarray(matrix.scores).data)  # the buffer itself: no copy
    return h.hexdigest()[:16]


def run_one(engine: str, root: Path, workers: int, executor: str) -> dict:
    """Time one ingest of ``root`` in this process (a fresh one: see :func:`measure`)."""
    from tinybench_builder.read import ingest

    setup = 0.0
    if engine == "dask":
        import logging

        import distributed

        t0 = time.perf_counter()
        cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                           dashboard_address=None, silence_logs=logging.CRITICAL)
        client = distributed.Client(cluster)
        setup = time.perf_counter() - t0
    rss_before = _rss_mib()
    t0 = time.perf_counter()
    try:
        if engine == "dask":
            with distributed.get_task_stream(client) as stream:
                m = ingest([root], scheduler=client)
        else:
            m = ingest([root], workers=workers, executor=executor)
        seconds = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # before the checks below
    finally:
        if engine == "dask":
            client.close()
            cluster.close()
    compute = None
    if engine == "dask":  # worker time spent in the read tasks (list files, open parquet, read a column)
        compute = sum(ss["stop"] - ss["start"] for d in stream.data if d["key"].startswith("ingest-read-")
                      for ss in d["startstops"] if ss["action"] == "compute")
    present = len(m.models)
    check(m, 0)
    check(m, present - 1)
    return {"engine": engine, "workers": workers, "setup": setup, "seconds": seconds, "models": m.shape[0],
            "items": m.shape[1], "matrix_mib": m.scores.nbytes / 2**20, "digest": digest(m),
            "rss_before_mib": rss_before,
            "client_peak_mib": peak, "read_compute_s": compute,
            "missing_share": m.summary()["missing_share"]}


def measure(engine: str, root: Path, workers: int, executor: str) -> dict:
    """:func:`run_one` in a fresh Python process (its own peak memory)."""
    env = dict(os.environ)
    repo = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([repo] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.ingest_speed", "--run-one", engine, "--workdir", str(root.parent),
         "--workers", str(workers), "--executor", executor],
        capture_output=True, text=True, env=env,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the {engine} run failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=int, default=2000)
    ap.add_argument("--workdir", type=Path, default=None,
                    help="where the fixtures go (kept and reused); default: a temporary folder, removed at the end")
    ap.add_argument("--workers", type=int, default=2, help="local pool size and Dask workers (default: 2)")
    ap.add_argument("--engines", default="local,dask", help="comma-separated: local (process pool), dask (LocalCluster)")
    ap.add_argument("--executor", choices=["process", "thread", "serial"], default="process",
                    help="the local engine's executor (default: process)")
    ap.add_argument("--run-one", choices=["local", "dask"], default=None, help=argparse.SUPPRESS)
    docs_tables.add_docs_arg(ap)
    args = ap.parse_args(argv)
    args.conditions, args.argv = docs_tables.Conditions(), argv

    if args.run_one:  # the child of measure(): one timed ingest, its numbers as a JSON line
        print(json.dumps(run_one(args.run_one, args.workdir / "details", args.workers, args.executor)))
        return 0
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = [e for e in engines if e not in ("local", "dask")]
    if unknown or not engines:
        print(f"error: unknown engine(s) {', '.join(unknown) or '(none)'}; use local and/or dask", file=sys.stderr)
        return 2
    if "dask" in engines:
        try:
            import distributed  # noqa: F401
        except ImportError:
            print("note: Dask is not installed (pip install -e '.[distributed]'); timing the local engine only",
                  file=sys.stderr)
            engines = [e for e in engines if e != "dask"]
            if not engines:
                return 2
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="ingest_bench_"))
    try:
        return _bench(args, engines, workdir)
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)


def _bench(args, engines: list[str], workdir: Path) -> int:
    root = workdir / "details"
    gen = generate(root, args.models, args.workers)
    files = len(task_files())
    size = sum(f.stat().st_size for f in root.rglob("*.parquet"))
    present = sum(1 for d in root.iterdir() if d.name.startswith("details_"))
    if present != args.models:
        print(f"note: {present} model folders in {root} (reused from an earlier run)", file=sys.stderr)
    rows = []
    for engine in engines:
        rows.append(measure(engine, root, args.workers, args.executor))
    from benchmarks import blas_threads

    threads = blas_threads()  # the workers inherit this process's environment and BLAS defaults
    first = (f"Open LLM Leaderboard v1 details: {present} models x {files} files ({V1_TOTAL_ROWS} rows/model), "
             f"{size / 2**20:.0f} MiB on disk; fixtures generated in {gen:.1f} s")
    head = ("| engine | workers | BLAS threads | models | items | setup s | ingest s | models/s | ms/model/worker | "
            "client RSS before MiB | client peak RSS MiB |")
    out = [first, "", head, "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        name = "Dask LocalCluster" if r["engine"] == "dask" else f"local {args.executor} pool"
        per = 1000 * r["seconds"] * r["workers"] / r["models"]
        out.append(f"| {name} | {r['workers']} | {threads} | {r['models']} | {r['items']} | {r['setup']:.1f} | "
                   f"{r['seconds']:.1f} | {r['models'] / r['seconds']:.1f} | {per:.0f} | {r['rss_before_mib']:.0f} | "
                   f"{r['client_peak_mib']:.0f} |")
    out.append("")
    for r in rows:
        if r.get("read_compute_s"):
            out.append(f"Dask task stream: the read tasks took {1000 * r['read_compute_s'] / r['models']:.0f} ms of "
                       f"worker time per model ({r['read_compute_s']:.1f} s in all).")
    same = len({r["digest"] for r in rows}) == 1
    out.append(f"Output matrix {rows[-1]['matrix_mib']:.0f} MiB (float64); missing share "
               f"{rows[-1]['missing_share']:.3f}; matrices identical: {'yes' if same else 'NO'}.")
    print("\n" + "\n".join(out) + f"\nload average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if args.write_docs:
        docs_tables.write_sections([("ingest_speed", "Ingest speed", "\n".join(out))], args.conditions,
                                   argv=args.argv, module="ingest_speed")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
