"""What a fit gives, written down so that two versions of the code can be compared.

    python -m benchmarks.fingerprint --out fp.json              # fit every case, write the fingerprint
    python -m benchmarks.fingerprint --compare old.json new.json  # anchors identical? estimates how far apart?

The cases: every matrix of ``../shared/data/responses/`` (``fit`` defaults: k = 100, seed 0,
the dimension chosen by validation), WMDP-bio with the original k-means design, AlpacaEval 2.0
(soft scores) binarised, the 400 x 28,659 matrix of :mod:`benchmarks.speed` and a simulated
soft-score matrix with missing values and subscenarios (the staged fit, with a mask). For each
case the fingerprint keeps the anchors (item ids), the IRT parameters and the estimates
(``score``, ``ci_low``, ``ci_high``, ``irt``, ``pirt``, ``gpirt``) of every training model from
its anchor results, and the out-of-fold scores of the validation report.

The script uses only the package's public API (``fit_estimator``, ``ResponseMatrix.read``,
``simulate_responses``), so that it also runs against an older checkout of the package:
``PYTHONPATH=/path/to/old/checkout python benchmarks/fingerprint.py --out old.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "responses"
KEYS = ("score", "ci_low", "ci_high", "irt", "pirt", "gpirt")


def cases(data: Path, quick: bool = False):
    """(name, make matrix, fit keyword arguments)."""
    from tinybench_builder.read import ResponseMatrix, simulate_responses

    out: list = []
    for path in sorted(data.glob("*.parquet")):
        out.append((path.stem, lambda p=path: ResponseMatrix.read(p), {}))
    if (data / "wmdp_bio.parquet").exists():
        out.append(("wmdp_bio[kmeans]", lambda: ResponseMatrix.read(data / "wmdp_bio.parquet"),
                    {"design": "kmeans"}))
    if (data / "alpaca_eval_2.parquet").exists():
        out.append(("alpaca_eval_2[binarize]", lambda: ResponseMatrix.read(data / "alpaca_eval_2.parquet"),
                    {"binarize": True}))
    if not quick:
        out.append(("speed_400x28659", lambda: simulate_responses(n_models=400, n_items=28659, n_dims=2, seed=0)[0],
                    {}))
        out.append(("soft_300x6000_missing",
                    lambda: simulate_responses(n_models=300, n_items=6000, n_dims=2, seed=3, missing=0.1,
                                               subscenarios=20, soft=True)[0], {}))
    return out


def fingerprint(matrix, **kwargs) -> dict:
    from tinybench_builder.model import fit_estimator

    t0 = time.perf_counter()
    res = fit_estimator(matrix, n_anchors=100, seed=0, progress=False, **kwargs)
    seconds = time.perf_counter() - t0
    est = res.estimator
    pos = {item: j for j, item in enumerate(matrix.items)}
    Y = matrix.scores[:, [pos[a] for a in est.anchor_ids]]
    results = est.estimate(Y)
    A, b = est.irt_parameters()
    oof = res.report.get("oof", {})
    return {
        "anchors": list(est.anchor_ids), "n_dims": int(est.n_dims),
        "estimates": {k: [float(r[k]) for r in results] for k in KEYS},
        "A": np.asarray(A).tolist(), "b": np.asarray(b).tolist(),
        "oof_score": oof.get("score"), "table": res.report.get("table"), "seconds": seconds,
    }


def _flat(x) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in np.ravel(np.array(x, dtype=object))], dtype=np.float64)


def compare(old: dict, new: dict) -> list[dict]:
    rows: list[dict] = []
    for name in old:
        if name not in new:
            rows.append({"case": name, "note": "missing in the second file"})
            continue
        a, b = old[name], new[name]
        est = max(float(np.nanmax(np.abs(_flat(a["estimates"][k]) - _flat(b["estimates"][k])), initial=0.0))
                  for k in KEYS)
        par = max(float(np.nanmax(np.abs(_flat(a[k]) - _flat(b[k])), initial=0.0)) for k in ("A", "b"))
        oof = float(np.nanmax(np.abs(_flat(a["oof_score"]) - _flat(b["oof_score"])), initial=0.0))
        rows.append({"case": name, "anchors_identical": a["anchors"] == b["anchors"],
                     "same_dims": a["n_dims"] == b["n_dims"], "max_estimate_diff": est, "max_oof_diff": oof,
                     "max_irt_param_diff": par, "seconds": [round(a["seconds"], 1), round(b["seconds"], 1)]})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.fingerprint", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="write the fingerprint of every case here (JSON)")
    ap.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"), help="compare two fingerprint files")
    ap.add_argument("--data", type=Path, default=DATA, help="folder of the shared response matrices")
    ap.add_argument("--quick", action="store_true", help="only the shared matrices (no 28,659-item fits)")
    ap.add_argument("--only", nargs="*", help="case names to run")
    args = ap.parse_args(argv)
    if args.compare:
        old, new = (json.loads(Path(p).read_text()) for p in args.compare)
        rows = compare(old, new)
        print("| case | anchors identical | same D | max estimate diff | max out-of-fold diff | max IRT parameter diff "
              "| seconds (old, new) |")
        print("|---|---|---|---:|---:|---:|---|")
        for r in rows:
            if "note" in r:
                print(f"| {r['case']} | {r['note']} | | | | | |")
                continue
            print(f"| {r['case']} | {r['anchors_identical']} | {r['same_dims']} | {r['max_estimate_diff']:.3g} | "
                  f"{r['max_oof_diff']:.3g} | {r['max_irt_param_diff']:.3g} | {r['seconds']} |")
        ok = all(r.get("anchors_identical") and r.get("max_estimate_diff", 1.0) <= 1e-6 for r in rows)
        return 0 if ok else 1
    if not args.out:
        ap.error("give --out or --compare")
    import tinybench_builder

    print(f"tinybench_builder from {Path(tinybench_builder.__file__).parent}", file=sys.stderr)
    out = {}
    for name, make, kwargs in cases(args.data, args.quick):
        if args.only and name not in args.only:
            continue
        try:
            matrix = make()
        except ValueError as exc:  # e.g. alpaca_eval_1.parquet holds -1 (not a score in [0, 1])
            print(f"{name}: skipped ({exc})", file=sys.stderr)
            continue
        out[name] = fingerprint(matrix, **kwargs)
        print(f"{name}: {out[name]['seconds']:.1f} s", file=sys.stderr, flush=True)
    Path(args.out).write_text(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
