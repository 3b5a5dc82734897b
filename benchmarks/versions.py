"""Versioned updates on real data: a v1.1 that keeps v1.0's design, fitted on more models.

The accuracy benchmark's protocols and seeds (:mod:`benchmarks.protocols`: interpolation and
extrapolation, seeds 0-4, k = 100) on every matrix of ``../shared/data/responses``. For each
split:

* **v1.0**: ``fit_estimator`` on a random half of the split's training models
  (``numpy.random.default_rng(1000 + seed)``: ``params.derived_seed(seed, "bench_versions_half")``), a fresh design;
* **v1.1**: ``fit_estimator(keep_design=v1.0)`` on all the training models: the same anchors
  (checked: ids, order, strata, weights and design hash), the IRT model, regression and
  calibration refitted;
* **fresh**: ``fit_estimator`` on all the training models with a new design (what a new major
  version would ship; the accuracy benchmark's own fit), for reference.

Reported per dataset and protocol (means over seeds): the test models' score MAE (over
random-k's, the plain mean of k random items) and 95% coverage with v1.0, v1.1 and fresh; the
test models' results on the v1.0 anchors (results logged against v1.0) re-estimated by v1.1:
mean and max absolute change of their estimates; the fit time of the update against a fresh
fit on the same models.

    python -m benchmarks.versions                     # every dataset, both protocols, seeds 0-4
    python -m benchmarks.versions --datasets wmdp_bio --seeds 0 1
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import docs_tables, protocols
from tinybench_builder.params import derived_seed
from tinybench_builder.read import ResponseMatrix

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "responses"
VERSIONS = ("v1.0", "v1.1", "fresh")


def run_split(name: str, path: str, protocol: str, seed: int, k: int) -> dict:
    """v1.0 on half the training models, v1.1 keeping its design on all of them, a fresh fit on all."""
    from benchmarks.peers import random_k_mae
    from tinybench_builder.model import fit_estimator

    matrix = ResponseMatrix.read(path)
    Y, models = matrix.scores, matrix.models
    train, test = protocols.split(protocol, Y, models, seed)
    half = np.sort(np.random.default_rng(derived_seed(seed, "bench_versions_half")).permutation(train)[: len(train) // 2])
    fits: dict[str, Any] = {}
    seconds: dict[str, float] = {}
    for version, number, rows, keep in (("v1.0", "1.0.0", half, None), ("v1.1", "1.1.0", train, "v1.0"),
                                        ("fresh", "2.0.0", train, None)):
        t0 = time.perf_counter()
        fits[version] = fit_estimator(matrix.select_models(rows), n_anchors=k, seed=seed, progress=False,
                                      metadata={"version": number},
                                      keep_design=fits[keep].estimator if keep else None)
        seconds[version] = time.perf_counter() - t0
    e10, e11 = fits["v1.0"].estimator, fits["v1.1"].estimator
    same = (e10.anchor_ids == e11.anchor_ids and e10.design_hash == e11.design_hash
            and np.array_equal(e10.strata, e11.strata) and np.array_equal(e10.anchor_weights, e11.anchor_weights))
    truth = protocols.model_means(Y[test])
    out = {"dataset": name, "protocol": protocol, "seed": seed, "n_v10": int(len(half)), "n_v11": int(len(train)),
           "n_test": int(len(test)), "anchors_identical": bool(same), "seconds": seconds,
           "random": random_k_mae(Y[test], truth, k, seed=seed), "truth": truth.tolist()}
    for version, res in fits.items():
        est = res.estimator
        r = est.estimate(Y[test][:, res.anchors.positions])
        score = np.array([x["score"] for x in r])
        lo, hi = np.array([x["ci_low"] for x in r]), np.array([x["ci_high"] for x in r])
        out[version] = {"score": score.tolist(), "mae": float(np.mean(np.abs(score - truth))),
                        "coverage": float(np.mean((lo <= truth) & (truth <= hi))),
                        "width": float(np.mean(hi - lo)), "n_dims": int(est.n_dims)}
    # the test models' results logged against v1.0, re-estimated by v1.1 (declared as such)
    logged = Y[test][:, fits["v1.0"].anchors.positions]
    again = np.array([x["score"] for x in e11.estimate(logged, version="1.0.0")])
    moved = np.abs(again - np.array(out["v1.0"]["score"]))
    out["re_estimated"] = {"mean_abs_change": float(moved.mean()), "max_abs_change": float(moved.max()),
                           "same_results": bool(same)}
    return out


def summarize(rows: list[dict], datasets, protocol: str) -> str:
    """The table of one protocol (means over seeds), as docs/BENCHMARKS.md shows it."""
    rows = [r for r in rows if r["protocol"] == protocol]
    head = ("| dataset | models v1.0 / v1.1 | anchors identical | MAE / random-k: v1.0 | v1.1 | fresh | "
            "coverage: v1.0 | v1.1 | fresh | v1.0 results re-estimated: mean / max abs. change | "
            "fit s: update / fresh |")
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    means: dict[str, list[float]] = {v: [] for v in VERSIONS}
    for name in datasets:
        rs = [r for r in rows if r["dataset"] == name]
        if not rs:
            continue
        rand = np.mean([r["random"] for r in rs])
        ratio = {v: np.mean([r[v]["mae"] for r in rs]) / rand for v in VERSIONS}
        for v in VERSIONS:
            means[v].append(ratio[v])
        cov = {v: np.mean([r[v]["coverage"] for r in rs]) for v in VERSIONS}
        same = sum(r["anchors_identical"] for r in rs)
        mv = np.mean([r["re_estimated"]["mean_abs_change"] for r in rs])
        mx = np.max([r["re_estimated"]["max_abs_change"] for r in rs])
        t_up = np.median([r["seconds"]["v1.1"] for r in rs])
        t_fr = np.median([r["seconds"]["fresh"] for r in rs])
        lines.append(f"| {name} | {rs[0]['n_v10']} / {rs[0]['n_v11']} | {same}/{len(rs)} | {ratio['v1.0']:.2f} | "
                     f"{ratio['v1.1']:.2f} | {ratio['fresh']:.2f} | {cov['v1.0']:.0%} | {cov['v1.1']:.0%} | "
                     f"{cov['fresh']:.0%} | {mv:.4f} / {mx:.4f} | {t_up:.1f} / {t_fr:.1f} |")
    if means["v1.0"]:
        lines.append(f"| **mean** | | | {np.mean(means['v1.0']):.2f} | {np.mean(means['v1.1']):.2f} | "
                     f"{np.mean(means['fresh']):.2f} | | | | | |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.versions", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    protocols.add_protocol_args(ap, DEFAULT_DATA)
    ap.add_argument("--anchors", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="parallel splits (default 2)")
    ap.add_argument("--json", type=Path, help="also write every split's numbers as JSON")
    docs_tables.add_docs_arg(ap)
    args = ap.parse_args(argv)
    conditions = docs_tables.Conditions()
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    tasks = []
    for name in args.datasets:
        path = args.data_dir / f"{name}.parquet"
        if not path.is_file():
            print(f"error: {path} not found (--data-dir)", file=sys.stderr)
            return 2
        tasks += [(name, str(path), p, s, args.anchors) for p in args.protocols for s in args.seeds]
    rows = []
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        for i, row in enumerate(pool.map(_run_task, tasks), 1):
            rows.append(row)
            print(f"[{i}/{len(tasks)}] {row['dataset']} {row['protocol']} seed {row['seed']}: anchors identical "
                  f"{row['anchors_identical']}, MAE v1.0 {row['v1.0']['mae']:.4f} v1.1 {row['v1.1']['mae']:.4f}, "
                  f"update {row['seconds']['v1.1']:.1f} s, fresh {row['seconds']['fresh']:.1f} s", file=sys.stderr)
    run = (f"k = {args.anchors}; seeds {args.seeds}; {time.perf_counter() - t0:.0f} s with {args.jobs} process(es); "
           "fits on 1 BLAS thread")
    print(f"\n{run}\n")
    docs = []
    for protocol in args.protocols:
        table = summarize(rows, args.datasets, protocol)
        print(f"### {protocol}\n\n{table}\n")
        docs.append((f"versions.{protocol}", f"Versions: {protocol}", f"{run}.\n\n{table}"))
    if args.json:
        args.json.write_text(json.dumps({"rows": rows}, indent=1))
    if args.write_docs:
        docs_tables.write_sections(docs, conditions, argv=argv, module="versions")
    return 0 if all(r["anchors_identical"] for r in rows) else 1


def _run_task(task):
    return run_split(*task)


if __name__ == "__main__":
    sys.exit(main())
