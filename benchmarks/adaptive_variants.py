"""Paired comparison of adaptive runs: a session variant (or FAQ) against a baseline run.

``python -m benchmarks.adaptive --dev ... --json BASE.json`` and the same command with one option
changed (``--batch 1``, ``--mixing 0.1``, ...) write per-model results on the same splits and
test models; this script pairs them and prints, per protocol and budget, the geometric mean over
matrices of

* the **ESS ratio**: the baseline's mean squared error over the variant's (variance/MSE
  definition: the variance of the random-n mean cancels in the ratio), > 1 = the variant better;
* the **width ratio**: (the baseline's mean width / the variant's)^2 (FAQ's width-based one);

with the variant's coverage (mean and min-max over matrices) and mean width. ``--faq`` compares
every run's sessions with the FAQ sessions of the base run (made with ``benchmarks.adaptive
--faq``) on the same test models instead::

    python -m benchmarks.adaptive_variants BASE.json VARIANT.json [VARIANT2.json ...] [--labels ...]
    python -m benchmarks.adaptive_variants BASE.json [VARIANT.json ...] --faq   # each run / BASE's FAQ

Design choices are made on development-protocol runs (``--dev``); see docs/ADAPTIVE.md.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from benchmarks import protocols


def _key(row: dict) -> tuple:
    return row["dataset"], row["protocol"], row["seed"], row.get("dev_rep"), row.get("draw", 0)


def _load(path: Path) -> dict[tuple, dict]:
    rows = json.loads(path.read_text())["rows"]
    return {_key(r): r for r in rows if not r.get("fits_only")}


def _result(row: dict, spec: str, method: str) -> dict | None:
    b = row["budgets"].get(spec)
    return None if b is None else b.get(method)


def compare(base: dict[tuple, dict], other: dict[tuple, dict], base_method: str = "adaptive",
            other_method: str = "adaptive") -> dict[tuple, dict]:
    """``{(protocol, spec): {"ess": geo-mean ratio, "width": geo-mean ratio, "coverage": [...],
    "widths": [...], "n_matrices": int}}`` over the rows both runs have (paired by split)."""
    per: dict[tuple, dict[str, dict[str, list]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for key, rb in base.items():
        ro = other.get(key)
        if ro is None:
            continue
        if rb["test_models"] != ro["test_models"]:
            raise ValueError(f"{key}: the two runs have different test models (not the same split)")
        truth = np.asarray(rb["truth"])
        for spec in rb["budgets"]:
            a, b = _result(rb, spec, base_method), _result(ro, spec, other_method)
            if a is None or b is None:
                continue
            acc = per[(rb["protocol"], spec)][rb["dataset"]]
            acc["err_a"] += list((np.asarray(a["score"]) - truth) ** 2)
            acc["err_b"] += list((np.asarray(b["score"]) - truth) ** 2)
            acc["w_a"] += list(np.asarray(a["ci_high"]) - np.asarray(a["ci_low"]))
            lo, hi = np.asarray(b["ci_low"]), np.asarray(b["ci_high"])
            acc["w_b"] += list(hi - lo)
            acc["cov_b"] += list(protocols.covers(lo, truth, hi))
    out = {}
    for cell, mats in per.items():
        ess, wid, cov, widths = [], [], [], []
        for acc in mats.values():
            mse_a, mse_b = float(np.mean(acc["err_a"])), float(np.mean(acc["err_b"]))
            if mse_a > 0 and mse_b > 0:
                ess.append(math.log(mse_a / mse_b))
            wa, wb = float(np.mean(acc["w_a"])), float(np.mean(acc["w_b"]))
            if wa > 0 and wb > 0:
                wid.append(2 * math.log(wa / wb))
            cov.append(float(np.mean(acc["cov_b"])))
            widths.append(wb)
        out[cell] = {"ess": math.exp(np.mean(ess)) if ess else float("nan"),
                     "width": math.exp(np.mean(wid)) if wid else float("nan"),
                     "coverage": cov, "widths": widths, "n_matrices": len(mats)}
    return out


def table(results: list[tuple[str, dict]], budgets: list[str]) -> str:
    """Markdown: one row per variant, protocol and budget."""
    lines = [("| variant | protocol | budget | matrices | ESS (var/MSE) ratio | width-based ratio | "
              "coverage mean (min-max) | width |"), "|---|---|---|---:|---:|---:|---|---:|"]
    for label, res in results:
        for protocol in ("interpolation", "extrapolation"):
            for spec in budgets:
                c = res.get((protocol, spec))
                if c is None:
                    continue
                cov = c["coverage"]
                lines.append(f"| {label} | {protocol} | {spec} | {c['n_matrices']} | {c['ess']:.2f} | "
                             f"{c['width']:.2f} | {100 * np.mean(cov):.1f}% ({100 * min(cov):.0f}%-"
                             f"{100 * max(cov):.0f}%) | {np.mean(c['widths']):.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.adaptive_variants", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base", type=Path, help="the baseline run (benchmarks.adaptive --json)")
    ap.add_argument("variants", type=Path, nargs="*", help="runs with one option changed, on the same splits")
    ap.add_argument("--labels", nargs="+", help="one label per variant (default: the file names)")
    ap.add_argument("--faq", action="store_true",
                    help="compare every run's sessions with the base run's FAQ sessions (ratios: FAQ's error / ours)")
    ap.add_argument("--budgets", nargs="+", default=["100", "10%", "2.5%"])
    args = ap.parse_args(argv)
    for p in [args.base, *args.variants]:
        if not p.is_file():
            ap.error(f"{p}: no such file")
    if args.labels and len(args.labels) != len(args.variants) + (1 if args.faq else 0):
        ap.error("--labels: one label per run compared")
    base = _load(args.base)
    results = []
    if args.faq:  # the base run's FAQ sessions are the baseline: ratios > 1 mean ours is ahead
        runs = [args.base, *args.variants]
        labels = args.labels or [p.stem for p in runs]
        for label, p in zip(labels, runs):
            results.append((f"{label} / FAQ", compare(base, _load(p), base_method="faq", other_method="adaptive")))
    else:
        labels = args.labels or [p.stem for p in args.variants]
        for label, p in zip(labels, args.variants):
            results.append((label, compare(base, _load(p))))
    print(table(results, args.budgets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
