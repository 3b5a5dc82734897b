"""Speed of fit and estimate at the Open LLM Leaderboard v1 shape, side by side with the original.

    python -m benchmarks.speed                       # fit + estimate, 400 models x 28,659 items
    python -m benchmarks.speed --pyirt-epochs 20     # also time py-irt multidim_2pl (extrapolated)

* ``fit``: the whole ``python -m tinybench_builder fit`` pipeline (dimension chosen by validation,
  10 k-means seeds, calibration, refit) on a 0/1 matrix simulated from a 2-D 2PL model.
* ``estimate``: ms per model of ``TinyEstimator.estimate`` (one call per model, and one
  batched call) at N = 28,659, k = 100, against the original algorithm
  (:mod:`benchmarks.original`: unseen items rebuilt by list membership and BFGS with
  numerical gradients on every call).
* BLAS threads: ``fit`` always runs with one (``fit_estimator`` sets it: faster here, and the
  same result on any machine); ``estimate`` and the original run with ``--blas-threads``
  (default 1, what ``tinybench-builder estimate`` uses); the table records both.
* ``py-irt``: the original IRT fit (multidim_2pl, hierarchical priors, lr 0.1) timed for
  ``--pyirt-epochs`` epochs on the same matrix and extrapolated linearly to its 2000-epoch
  default (needs ``pip install torch==2.13.0 py-irt``; a benchmark-only extra).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from benchmarks import docs_tables
from tinybench_builder.model import fit_estimator
from tinybench_builder.read import simulate_responses


def time_estimates(est, Y_anchor: np.ndarray, repeats: int) -> dict:
    rows = Y_anchor[:repeats]
    est.estimate(rows[0])  # warm-up (sparse cluster matrix, caches)
    t0 = time.perf_counter()
    for r in rows:
        est.estimate(r)
    single = (time.perf_counter() - t0) / len(rows) * 1000
    t0 = time.perf_counter()
    est.estimate(rows)
    batched = (time.perf_counter() - t0) / len(rows) * 1000
    return {"ms_per_model": single, "ms_per_model_batched": batched}


def time_original(est, Y_anchor: np.ndarray, repeats: int, scenario_lists: bool = True) -> float:
    """ms per model of the original per-call estimation, on our fitted parameters."""
    from benchmarks.original import original_balance_weights, original_estimate, to_original_params

    A3, B3 = to_original_params(*est.irt_parameters())
    bw = original_balance_weights(len(est.item_ids))
    t0 = time.perf_counter()
    for r in Y_anchor[:repeats]:
        original_estimate(r, est.anchor_positions, est.anchor_weights, A3, B3, bw, 0.5,
                          scenario_lists=scenario_lists)
    return (time.perf_counter() - t0) / repeats * 1000


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.speed", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=int, default=400)
    ap.add_argument("--items", type=int, default=28659)
    ap.add_argument("--anchors", type=int, default=100)
    ap.add_argument("--dims", type=int, default=None, help="fix the IRT dimension (default: chosen by validation)")
    ap.add_argument("--repeats", type=int, default=50, help="models timed for estimate")
    ap.add_argument("--original-repeats", type=int, default=5, help="models timed for the original estimate")
    ap.add_argument("--pyirt-epochs", type=int, default=0, help="time py-irt for this many epochs (0: skip)")
    ap.add_argument("--pyirt-dims", type=int, default=None, help="py-irt dimension (default: the one fit chose)")
    ap.add_argument("--pyirt-threads", type=int, default=1, help="torch threads for py-irt (default 1)")
    ap.add_argument("--blas-threads", type=int, default=1,
                    help="BLAS threads for the estimate timings, ours and the original (default 1, as `tinybench-builder "
                         "estimate`); fit always uses 1")
    docs_tables.add_docs_arg(ap)
    args = ap.parse_args(argv)
    conditions = docs_tables.Conditions()
    from threadpoolctl import threadpool_limits

    from benchmarks import blas_threads

    available = blas_threads()

    matrix, _ = simulate_responses(n_models=args.models, n_items=args.items, n_dims=2, seed=0)
    print(f"matrix: {args.models} models x {args.items} items (simulated 2-D 2PL, 0/1)", file=sys.stderr)
    t0 = time.perf_counter()
    res = fit_estimator(matrix, n_anchors=args.anchors, n_dims=args.dims, seed=0, progress=True)
    fit_s = time.perf_counter() - t0
    est = res.estimator
    print(f"fit: {fit_s:.1f} s (D = {est.n_dims}, dims scores {res.report['dims_scores']})", file=sys.stderr)

    Y_new, _ = simulate_responses(n_models=max(args.repeats, args.original_repeats), n_items=args.items, n_dims=2, seed=1)
    Ya = Y_new.scores[:, est.anchor_positions]
    with threadpool_limits(limits=args.blas_threads, user_api="blas"):
        threads = blas_threads()
        ours = time_estimates(est, Ya, args.repeats)
        orig_ms = time_original(est, Ya, args.original_repeats)
        orig_fast = time_original(est, Ya, args.original_repeats, scenario_lists=False)
    rows = [("fit (whole pipeline)", f"{fit_s:.1f} s", "", "", "1")]
    rows.append(("estimate, one call per model (original as released)", f"{ours['ms_per_model']:.2f} ms",
                 f"{orig_ms:.0f} ms", f"{orig_ms / ours['ms_per_model']:.0f}x", str(threads)))
    rows.append(("estimate, one call per model (original without its per-scenario list scans)",
                 f"{ours['ms_per_model']:.2f} ms", f"{orig_fast:.0f} ms", f"{orig_fast / ours['ms_per_model']:.0f}x",
                 str(threads)))
    rows.append(("estimate, batched", f"{ours['ms_per_model_batched']:.2f} ms", "", "", str(threads)))
    if args.pyirt_epochs:
        from benchmarks.pyirt_baseline import extrapolate, time_pyirt

        D = args.pyirt_dims or est.n_dims
        r = time_pyirt(matrix.scores, dims=D, epochs=args.pyirt_epochs, seed=0, threads=args.pyirt_threads)
        if r.get("ok"):
            total = extrapolate(r, 2000)
            rows.append((f"py-irt multidim_2pl D={D}, 2000 epochs (extrapolated from {args.pyirt_epochs})",
                         f"{fit_s:.1f} s (ours)", f"{total:.0f} s", f"{total / fit_s:.0f}x",
                         f"1 (ours), {args.pyirt_threads} torch"))
        else:
            rows.append(("py-irt multidim_2pl", "", f"failed: {r.get('error')}", "", ""))
    head = (f"{args.models} models x {args.items} items (simulated 2-D 2PL, 0/1), k = {args.anchors}; "
            f"BLAS threads available: {available}")
    table = "\n".join(["| what | ours | original | speed-up | BLAS threads |", "|---|---:|---:|---:|---:|",
                       *("| " + " | ".join(row) + " |" for row in rows)])
    print(f"\n{head}\n\n{table}")
    if args.write_docs:
        docs_tables.write_sections([("speed", "Speed", f"{head}.\n\n{table}")], conditions, argv=argv,
                                   module="speed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
