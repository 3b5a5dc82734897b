"""Ingest speed: Open LLM Leaderboard v1 details for N models, read into one matrix.

::

    python -m builder.bench.ingest_speed --models 500 --workdir /tmp/x

Writes fixture details for N models (all six benchmarks, 28,659 rows each: ARC 1172,
HellaSwag 10042, MMLU 14042 over 57 subject files, TruthfulQA 817, Winogrande 1267,
GSM8K 1319; 62 parquet files per model, laid out like the Hub repos), then times
``builder.ingest.ingest`` on the folder and prints a result table. The fixture files hold only
small columns (``example`` and the ``metrics`` struct), so generating them stays fast; the
reader reads only the metric column either way. Fixtures are reused when already present.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import zlib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from builder.sources.open_llm_leaderboard import MMLU_ROWS, V1_TASKS, V1_TOTAL_ROWS

TS = "2024-01-15T10-20-30.123456"
BENCHES = ("arc", "hellaswag", "mmlu", "truthfulqa", "winogrande", "gsm8k")


def task_files() -> list[tuple[str, str, int, tuple[str, ...]]]:
    """(scenario, task name, rows, metric fields) of the 62 details files of one model."""
    out = []
    for t in V1_TASKS:
        if t.scenario not in BENCHES:
            continue
        fields = ("mc1", "mc2") if t.scenario == "truthfulqa" else ("acc",) if t.scenario == "gsm8k" else ("acc", "acc_norm")
        if t.scenario == "mmlu":
            out += [("mmlu", t.pipe.format(sub=s), n, fields) for s, n in MMLU_ROWS.items()]
        else:
            out.append((t.scenario, t.pipe, t.rows, fields))
    assert sum(f[2] for f in out) == V1_TOTAL_ROWS
    return out


def model_scores(k: int) -> dict[str, dict[str, np.ndarray]]:
    """Deterministic fake scores of model k: {task name: {metric: values}}."""
    rng = np.random.default_rng(k)
    ability = rng.normal()
    out = {}
    for scenario, name, rows, fields in task_files():
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
    from builder.sources.open_llm_leaderboard import classify

    row = matrix.scores[matrix.models.index(f"bench-org/model-{k:05d}")]
    col = {c: j for j, c in enumerate(matrix.items)}
    for name, vals in model_scores(k).items():
        scenario, sub, metric, _, _ = classify(name)
        ids = [".".join([scenario] + ([sub] if sub else []) + [str(i)]) for i in range(len(vals[metric]))]
        got = row[[col[i] for i in ids]]
        if not np.array_equal(got, vals[metric]):
            raise AssertionError(f"model {k}: {name} differs")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=int, default=500)
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--executor", choices=["process", "thread", "serial", "all"], default="process")
    args = ap.parse_args(argv)

    from builder.ingest import ingest

    root = args.workdir / "details"
    gen = generate(root, args.models, args.workers)
    files = len(task_files())
    size = sum(f.stat().st_size for f in root.rglob("*.parquet"))
    present = sum(1 for d in root.iterdir() if d.name.startswith("details_"))
    if present != args.models:
        print(f"note: {present} model folders in {root} (reused from an earlier run)", file=sys.stderr)
    kinds = ["process", "thread", "serial"] if args.executor == "all" else [args.executor]
    rows = []
    for kind in kinds:
        t0 = time.perf_counter()
        m = ingest([root], workers=args.workers, executor=kind)
        dt = time.perf_counter() - t0
        check(m, 0)
        check(m, present - 1)
        rows.append((kind, dt, m.shape, m.scores.nbytes, m.summary()["missing_share"]))
        del m
    rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    print()
    print(f"Open LLM Leaderboard v1 details: {present} models x {files} files ({V1_TOTAL_ROWS} rows/model), "
          f"{size / 2**20:.0f} MiB on disk; fixtures generated in {gen:.1f} s")
    print(f"{'executor':<9} {'workers':>7} {'models':>7} {'items':>7} {'seconds':>8} {'models/s':>9} {'files/s':>8}")
    for kind, dt, shape, _, _ in rows:
        w = 1 if kind == "serial" else args.workers
        print(f"{kind:<9} {w:>7} {shape[0]:>7} {shape[1]:>7} {dt:>8.1f} {shape[0] / dt:>9.1f} "
              f"{shape[0] * files / dt:>8.0f}")
    print(f"output matrix {rows[-1][3] / 2**20:.0f} MiB (float64); peak RSS of one process {rss / 1024:.0f} MiB; "
          f"missing share {rows[-1][4]:.3f}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
