"""Same data, same tiny benchmark: fit one matrix from several file layouts, row/column
orders and BLAS thread counts, and compare the anchors and the estimates.

    python -m benchmarks.stability ../shared/data/responses/wmdp_bio.parquet

Layouts: the wide parquet as given; a long CSV with its rows shuffled; the wide table with
models and items permuted; a Fortran-ordered copy; and the wide parquet again with 2 BLAS
threads (a fresh process with ``OPENBLAS_NUM_THREADS=2``). Each fit uses the same seed;
the estimates are for the first 20 models of the matrix, from their anchor results.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks import docs_tables
from tinybench_builder.read import ResponseMatrix


def fit_summary(path: str, k: int, seed: int) -> dict:
    """Anchors and estimates of a fit of the table at ``path``."""
    from tinybench_builder.model import fit_estimator

    matrix = ResponseMatrix.read(path)
    res = fit_estimator(matrix, n_anchors=k, seed=seed, progress=False)
    ref = ResponseMatrix.read(path).to_frame().sort_index().iloc[:20]
    out = res.estimator.estimate(ref[res.estimator.anchor_ids].to_numpy())
    return {"anchors": sorted(res.estimator.anchor_ids), "score": [r["score"] for r in out],
            "ci_low": [r["ci_low"] for r in out], "ci_high": [r["ci_high"] for r in out]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.stability", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("matrix", help="a wide parquet score matrix")
    ap.add_argument("--anchors", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--_child", action="store_true", help=argparse.SUPPRESS)
    docs_tables.add_docs_arg(ap)
    args = ap.parse_args(argv)
    conditions = docs_tables.Conditions()
    if args._child:  # the 2-thread run, in a process started with the thread variables set
        print(json.dumps(fit_summary(args.matrix, args.anchors, args.seed)))
        return 0
    if not Path(args.matrix).is_file():
        print(f"error: {args.matrix} not found", file=sys.stderr)
        return 2
    base = ResponseMatrix.read(args.matrix)
    frame = base.to_frame()
    rng = np.random.default_rng(12345)
    runs = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        long = frame.stack(future_stack=True).dropna().rename("score").reset_index()
        long.columns = ["model", "item", "score"]
        long.sample(frac=1.0, random_state=1).to_csv(tmp / "long.csv", index=False)
        frame.iloc[rng.permutation(frame.shape[0]), rng.permutation(frame.shape[1])].to_parquet(tmp / "permuted.parquet")
        ResponseMatrix(np.asfortranarray(base.scores), base.models, base.items).write(tmp / "fortran.parquet")
        for name, path in (("wide parquet", args.matrix), ("long CSV, rows shuffled", tmp / "long.csv"),
                           ("models and items permuted", tmp / "permuted.parquet"),
                           ("Fortran-ordered copy", tmp / "fortran.parquet")):
            runs[name] = fit_summary(str(path), args.anchors, args.seed)
            print(f"fitted: {name}", file=sys.stderr)
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"}
        proc = subprocess.run([sys.executable, "-m", "benchmarks.stability", args.matrix, "--anchors",
                               str(args.anchors), "--seed", str(args.seed), "--_child"],
                              capture_output=True, text=True, env=env, check=True,
                              cwd=Path(__file__).resolve().parents[1])  # the repository top: benchmarks/ importable
        runs["2 BLAS threads"] = json.loads(proc.stdout.strip().splitlines()[-1])
    ref = runs["wide parquet"]
    head = (f"{Path(args.matrix).name}: {base.shape[0]} models x {base.shape[1]} items, k = {args.anchors}, "
            f"seed {args.seed}")
    lines = ["| input | anchors shared with the wide parquet fit | max abs difference of score / ci_low / ci_high |",
             "|---|---:|---:|"]
    for name, r in runs.items():
        shared = len(set(r["anchors"]) & set(ref["anchors"]))
        diff = max(float(np.max(np.abs(np.array(r[key]) - np.array(ref[key])))) for key in ("score", "ci_low", "ci_high"))
        lines.append(f"| {name} | {shared}/{len(ref['anchors'])} | {diff:.1e} |")
    table = "\n".join(lines)
    print(f"\n{head}\n\n{table}")
    if args.write_docs:
        section = "stability." + re.sub(r"[^a-z0-9_.-]+", "_", Path(args.matrix).stem.lower())
        docs_tables.write_sections([(section, f"Stability: {Path(args.matrix).name}", f"{head}.\n\n{table}")],
                                   conditions, argv=argv, module="stability")
    return 0


if __name__ == "__main__":
    sys.exit(main())
