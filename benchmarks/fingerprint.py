"""What a fit gives, written down so that two versions of the code can be compared.

    python -m benchmarks.fingerprint --out fp.json              # fit every case, write the fingerprint
    python -m benchmarks.fingerprint --compare old.json new.json  # anchors identical? estimates how far apart?
    python -m benchmarks.fingerprint --compare old.json new.json --exact  # every number equal to the last bit?

The cases: every matrix of ``../shared/data/responses/`` (``fit`` defaults: k = 100, seed 0,
the dimension chosen by validation), WMDP-bio with the original k-means design, AlpacaEval 2.0
(soft scores) binarised, the five HELM Lite matrices as one bundle (five scenarios, one joint
IRT), that bundle fitted on four scenarios and grown by the fifth (``extend_estimator``) and
refitted keeping its design (``fit_estimator(keep_design=...)``), the 400 x 28,659 matrix of
:mod:`benchmarks.speed` and a simulated soft-score matrix with missing values and subscenarios
(the staged fit, with a mask). For each case the fingerprint keeps the anchors (item ids), the
IRT parameters, the estimates (``score``, ``ci_low``, ``ci_high``, ``se``, ``irt``, ``pirt``,
``gpirt``, ``n_answered``, and per scenario for bundles) of every training model from its anchor
results, whole and partial (three fixed masks of unanswered anchors), every array of
``TinyEstimator.components`` for both, and the out-of-fold scores and the table of the
validation report. ``--exact`` asks every one of these numbers to be equal to the last bit.

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
#: every key of a result (``estimate``), recorded for the exact comparison
RESULT_KEYS = (*KEYS, "se", "n_answered")
#: the bundle of HELM Lite matrices (same 83 models in the same order): scenario -> file stem
HELM = ("helm_lite_gsm8k", "helm_lite_math", "helm_lite_med_qa", "helm_lite_mmlu", "helm_lite_openbookqa")


def helm_bundle(data: Path, stems=HELM):
    """The HELM Lite matrices side by side as one matrix of five scenarios (item ids ``<scenario>/<id>``)."""
    import pandas as pd

    from tinybench_builder.read import ResponseMatrix

    parts = [ResponseMatrix.read(data / f"{stem}.parquet") for stem in stems]
    models = parts[0].models
    if any(p.models != models for p in parts):
        raise ValueError("the HELM Lite matrices do not hold the same models in the same order")
    items = [f"{stem}/{i}" for stem, p in zip(stems, parts) for i in p.items]
    info = pd.DataFrame({"scenario": [stem for stem, p in zip(stems, parts) for _ in p.items]}, index=items)
    return ResponseMatrix(np.hstack([p.scores for p in parts]), list(models), items, info)


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
    if all((data / f"{stem}.parquet").exists() for stem in HELM):
        out.append(("helm_lite[bundle]", lambda: helm_bundle(data), {}))
        out.append(("helm_lite[extend]", lambda: helm_bundle(data), {"extend": HELM[:4]}))
        out.append(("helm_lite[keep_design]", lambda: helm_bundle(data), {"keep": True}))
    if not quick:
        out.append(("speed_400x28659", lambda: simulate_responses(n_models=400, n_items=28659, n_dims=2, seed=0)[0],
                    {}))
        out.append(("soft_300x6000_missing",
                    lambda: simulate_responses(n_models=300, n_items=6000, n_dims=2, seed=3, missing=0.1,
                                               subscenarios=20, soft=True)[0], {}))
    return out


def _fit(matrix, extend=None, keep: bool = False, **kwargs):
    """The case's fit: ``fit_estimator``; with ``extend`` (scenarios), fitted on those and grown by
    the others (``extend_estimator``); with ``keep``, refitted keeping the first fit's design."""
    from tinybench_builder.model import extend_estimator, fit_estimator

    if extend is not None:
        first = matrix.select_items(np.flatnonzero(np.isin(matrix.scenarios(), list(extend))))
        previous = fit_estimator(first, n_anchors=80, seed=0, progress=False, **kwargs).estimator
        return extend_estimator(previous, matrix, n_anchors=100, seed=0)
    res = fit_estimator(matrix, n_anchors=100, seed=0, progress=False, **kwargs)
    if keep:
        res = fit_estimator(matrix, n_anchors=100, seed=1, progress=False, keep_design=res.estimator, **kwargs)
    return res


def _masks(n: int, k: int) -> dict:
    """Three fixed patterns of unanswered anchors (True = unanswered): about a third of them, all but
    ten, and every other row with the first half of the anchors unanswered."""
    rng = np.random.default_rng(12345)
    third = rng.random((n, k)) < 1 / 3
    ten = np.ones((n, k), dtype=bool)
    for i in range(n):
        ten[i, rng.choice(k, size=min(10, k), replace=False)] = False
    half = np.zeros((n, k), dtype=bool)
    half[::2, : k // 2] = True
    return {"third": third, "ten": ten, "half": half}


def _results(results: list) -> dict:
    """Every number of a list of ``estimate`` results (per scenario too), by key."""
    out: dict = {k: [float(r[k]) for r in results] for k in RESULT_KEYS}
    names = sorted({s for r in results for s in r.get("scenarios", {})})
    for s in names:
        out[f"scenarios.{s}"] = {k: [float(r["scenarios"][s][k]) for r in results] for k in RESULT_KEYS}
    return out


def _components(est, Y: np.ndarray) -> dict:
    return {key: np.asarray(v, dtype=np.float64).tolist() for key, v in sorted(est.components(Y).items())}


def fingerprint(matrix, **kwargs) -> dict:
    t0 = time.perf_counter()
    res = _fit(matrix, **kwargs)
    seconds = time.perf_counter() - t0
    est = res.estimator
    pos = {item: j for j, item in enumerate(matrix.items)}
    Y = matrix.scores[:, [pos[a] for a in est.anchor_ids]]
    results = est.estimate(Y)
    A, b = est.irt_parameters()
    oof = res.report.get("oof", {})
    partial = {}
    for name, mask in _masks(*Y.shape).items():
        Yp = np.where(mask, np.nan, Y)
        partial[name] = {"estimates": _results(est.estimate(Yp)), "components": _components(est, Yp)}
    return {
        "anchors": list(est.anchor_ids), "n_dims": int(est.n_dims),
        "estimates": {k: [float(r[k]) for r in results] for k in KEYS},
        "A": np.asarray(A).tolist(), "b": np.asarray(b).tolist(),
        "oof_score": oof.get("score"), "table": res.report.get("table"), "seconds": seconds,
        "all_estimates": _results(results), "components": _components(est, Y), "partial": partial,
        "oof": oof, "params": est.params, "design_hash": est.design_hash,
    }


def differences(a, b, where: str = "") -> list[str]:
    """Where two fingerprints (JSON trees) differ, to the last bit (NaN equals NaN; ``seconds`` ignored)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{where}.{k}: only in one" for k in sorted(set(a) ^ set(b))]
        for k in sorted(set(a) & set(b)):
            if k != "seconds":
                out += differences(a[k], b[k], f"{where}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} vs {len(b)} entries"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{where}[{i}]")]
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return []
    return [] if (type(a) is type(b) and a == b) else [f"{where}: {a!r} vs {b!r}"]


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
    ap.add_argument("--exact", action="store_true",
                    help="with --compare: every recorded number must be equal to the last bit (lists the differences)")
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
        if args.exact:
            found = [d for name in sorted(set(old) | set(new))
                     for d in differences(old.get(name), new.get(name), name)]
            print(f"\nexact: {len(found)} difference(s) in {len(set(old) | set(new))} case(s)",
                  *(f"  {d}" for d in found[:50]), sep="\n")
            ok = ok and not found
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
