"""Accuracy of the tiny estimators on real data (the protocol of the core issue).

For each response matrix and seed: shuffle the models with
``numpy.random.default_rng(seed).permutation``; the first ceil(25%) are test models,
the rest the ``fit`` input; k anchors; truth = the test model's mean over all its
non-NaN items. Reports the MAE of random-k (mean of 50 draws), irt, p-IRT, gp-IRT,
Spearman's rank correlation (gp-IRT vs truth) and the 95% interval coverage.
Nothing is tuned on the test models: ``fit`` sees only the training models.

    python -m builder.bench.accuracy                # the four protocol datasets, seeds 0 1 2
    python -m builder.bench.accuracy --dev          # development mode: never touches the test models

``--dev`` is for design decisions: for each dataset and seed it keeps only the protocol's
*training* models and runs the same protocol inside them (``--dev-reps`` nested splits, the
first 25% of a reshuffle as pseudo-test models). Choices made on ``--dev`` numbers leave
the protocol's test models unseen.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from ..fitting import fit_estimator
from ..matrix import ResponseMatrix

PROTOCOL_DATASETS = ("alpaca_eval_2", "gsm8k_zeroeval", "wmdp_bio", "wmdp_cyber")
DEFAULT_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "responses"


def random_k_mae(Y: np.ndarray, truth: np.ndarray, k: int, draws: int, rng: np.random.Generator) -> float:
    errs = []
    for _ in range(draws):
        pick = rng.choice(Y.shape[1], k, replace=False)
        est = np.nanmean(Y[:, pick], axis=1)
        errs.append(np.nanmean(np.abs(est - truth)))
    return float(np.mean(errs))


def run_one(matrix: ResponseMatrix, seed: int, k: int, fit_kwargs: dict) -> dict:
    n = matrix.shape[0]
    perm = np.random.default_rng(seed).permutation(n)
    n_test = math.ceil(0.25 * n)
    test, train = perm[:n_test], perm[n_test:]
    t0 = time.perf_counter()
    res = fit_estimator(matrix.select_models(train), n_anchors=k, seed=seed, progress=False, **fit_kwargs)
    fit_time = time.perf_counter() - t0
    est = res.estimator
    Yt = matrix.scores[test]
    truth = np.nanmean(Yt, axis=1)
    out = est.estimate(Yt[:, res.anchors.positions])
    g = lambda key: np.array([r[key] for r in out])
    gp, lo, hi = g("gpirt"), g("ci_low"), g("ci_high")
    return {
        "seed": seed, "n_train": int(len(train)), "n_test": int(n_test), "n_dims": est.n_dims,
        "lambda": list(est.lambdas.values())[0], "fit_seconds": fit_time,
        "random": random_k_mae(Yt, truth, k, 50, np.random.default_rng(1000 + seed)),
        "irt": float(np.mean(np.abs(g("irt") - truth))),
        "pirt": float(np.mean(np.abs(g("pirt") - truth))),
        "gpirt": float(np.mean(np.abs(gp - truth))),
        "spearman": float(spearmanr(gp, truth).statistic),
        "coverage": float(np.mean((truth >= lo) & (truth <= hi))),
        "ci_width": float(np.mean(hi - lo)),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m builder.bench.accuracy", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", type=Path, default=DEFAULT_DATA, help="folder of <name>.parquet matrices")
    ap.add_argument("--datasets", nargs="+", default=list(PROTOCOL_DATASETS))
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--anchors", type=int, default=100)
    ap.add_argument("--dims", type=int, default=None)
    ap.add_argument("--binarize", action="store_true")
    ap.add_argument("--json", type=Path, help="also write all rows as JSON")
    ap.add_argument("--dev", action="store_true",
                    help="development mode: nested splits of the protocol's training models only")
    ap.add_argument("--dev-reps", type=int, default=4, help="nested splits per seed in --dev mode (default 4)")
    args = ap.parse_args(argv)
    fit_kwargs = {"n_dims": args.dims, "binarize": args.binarize}
    rows = []
    for name in args.datasets:
        path = args.data_dir / f"{name}.parquet"
        if not path.exists():
            print(f"error: {path} not found", file=sys.stderr)
            return 2
        matrix = ResponseMatrix.read(path)
        for seed in args.seeds:
            if args.dev:
                n = matrix.shape[0]
                train = np.sort(np.random.default_rng(seed).permutation(n)[math.ceil(0.25 * n):])
                runs = [(matrix.select_models(train), seed * 100 + 10 + r) for r in range(args.dev_reps)]
            else:
                runs = [(matrix, seed)]
            for data, split_seed in runs:
                r = run_one(data, split_seed, args.anchors, fit_kwargs)
                r["dataset"] = name
                rows.append(r)
            print(f"{name} seed {seed}: " + ", ".join(
                f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items() if k not in ("dataset", "seed")
            ), file=sys.stderr)
    keys = ["random", "irt", "pirt", "gpirt", "spearman", "coverage", "ci_width", "fit_seconds"]
    mode = f"DEV mode ({args.dev_reps} nested splits of each seed's training models)" if args.dev else "protocol"
    print(f"\n{mode}; k = {args.anchors}; means over seeds {args.seeds}\n")
    print("| dataset | train/test models | random-k | irt | p-IRT | gp-IRT | gp-IRT / random | Spearman | 95% coverage | mean CI width | fit s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    ratios = []
    for name in args.datasets:
        rs = [r for r in rows if r["dataset"] == name]
        m = {k: float(np.mean([r[k] for r in rs])) for k in keys}
        ratios.append(m["gpirt"] / m["random"])
        print(f"| {name} | {rs[0]['n_train']}/{rs[0]['n_test']} | {m['random']:.4f} | {m['irt']:.4f} | {m['pirt']:.4f} | "
              f"{m['gpirt']:.4f} | {m['gpirt'] / m['random']:.2f} | {m['spearman']:.3f} | {m['coverage']:.0%} | "
              f"{m['ci_width']:.3f} | {m['fit_seconds']:.1f} |")
    allcov = np.mean([r["coverage"] for r in rows])
    print(f"\nmean gp-IRT / random ratio: {np.mean(ratios):.2f}; pooled coverage: {allcov:.0%}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
