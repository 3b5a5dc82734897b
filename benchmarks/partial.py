"""Partial runs: the estimate and its 95% interval when only some anchors are answered.

A crashed job, ``lm_eval --limit N`` or a tiny split evaluated in pieces leave a model with
n of the k anchors answered. On every matrix of ``../shared/data/responses`` and both
protocols of :mod:`benchmarks.protocols` (k = 100, seeds 0-4), for every test model and
n answered in 5, 10, 25, 50, 75, 100:

* **random**: ``--draws`` random subsets of n anchors (``default_rng([seed, n, model])``);
* **first**: the first n anchors in ``anchor_ids`` order (the tiny split's row order: what
  ``lm_eval --limit n`` evaluates), one subset; whole strata are then missing.

Reported per dataset, protocol, kind and n: coverage of the 95% interval (pooled over
models, draws and seeds; its minimum over seeds; on the strongest test model of each split),
mean width, MAE, width / MAE, the count of intervals narrower than 0.001, and the MAE of the
plain mean of n random items (random-n) for reference.

    python -m benchmarks.partial                        # every dataset, both protocols, seeds 0-4
    python -m benchmarks.partial --dev                  # development protocol (training models only)
    python -m benchmarks.partial --datasets wmdp_bio --seeds 0 1

``--dev`` runs the same measurements inside each protocol's training models
(:func:`protocols.dev_splits`), for design choices that never see the test models.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from benchmarks import docs_tables, protocols
from tinybench_builder.params import derived_seed
from tinybench_builder.read import ResponseMatrix

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "responses"
ANSWERED = (5, 10, 25, 50, 75, 100)
KINDS = ("random", "first")
#: an interval narrower than this is reported as (nearly) zero width
NARROW = 1e-3
_CHUNK = 400  # rows per estimate call (bounds the (rows, items) work arrays)


def subset_masks(k: int, n: int, kind: str, n_models: int, draws: int, seed: int) -> np.ndarray:
    """Boolean masks (n_models, draws', k) of the anchors answered (draws' = 1 for ``first`` or n >= k)."""
    n = min(int(n), k)
    if kind == "first" or n >= k:
        mask = np.zeros((n_models, 1, k), dtype=bool)
        mask[:, :, :n] = True
        return mask
    if kind != "random":
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    mask = np.zeros((n_models, draws, k), dtype=bool)
    for i in range(n_models):
        rng = np.random.default_rng([int(seed), n, i])
        for d in range(draws):
            mask[i, d, rng.choice(k, n, replace=False)] = True
    return mask


def estimate_rows(est, Ya: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``score, ci_low, ci_high`` of ``est.estimate`` for every row of an (m, k) anchor matrix."""
    score, lo, hi = (np.empty(Ya.shape[0]) for _ in range(3))
    for start in range(0, Ya.shape[0], _CHUNK):
        out = est.estimate(Ya[start:start + _CHUNK])
        sl = slice(start, start + len(out))
        score[sl] = [r["score"] for r in out]
        lo[sl] = [r["ci_low"] for r in out]
        hi[sl] = [r["ci_high"] for r in out]
    return score, lo, hi


def random_n_mae(Yt: np.ndarray, truth: np.ndarray, n: int, seed: int, draws: int = 50) -> float:
    """MAE of the plain mean of n random items (NaN ignored), mean over draws."""
    rng = np.random.default_rng(derived_seed(seed, "bench_partial_random"))
    errs = []
    for _ in range(draws):
        sub = Yt[:, rng.choice(Yt.shape[1], min(n, Yt.shape[1]), replace=False)]
        obs = ~np.isnan(sub)
        m = np.where(obs.any(1), np.where(obs, sub, 0.0).sum(1) / np.maximum(obs.sum(1), 1), np.nan)
        errs.append(np.nanmean(np.abs(m - truth)))
    return float(np.mean(errs))


def partial_records(est, Ya: np.ndarray, truth: np.ndarray, seed: int, answered=ANSWERED, kinds=KINDS,
                    draws: int = 10) -> dict:
    """Estimates of every test model on its subsets: ``{(kind, n): {"err", "width", "covered", "model"}}``.

    ``Ya`` (models, k) holds the test models' anchor results (NaN = not evaluated); the
    entries outside a subset are set to NaN (unanswered).
    """
    n_models, k = Ya.shape
    out = {}
    for kind in kinds:
        for n in answered:
            masks = subset_masks(k, n, kind, n_models, draws, seed)
            d = masks.shape[1]
            rows = np.where(masks, Ya[:, None, :], np.nan).reshape(n_models * d, k)
            model = np.repeat(np.arange(n_models), d)
            keep = ~np.isnan(rows).all(1)  # a model with no evaluated anchor in the subset has no estimate
            score, lo, hi = estimate_rows(est, rows[keep])
            t = truth[model[keep]]
            out[(kind, int(n))] = {"err": np.abs(score - t), "width": hi - lo,
                                   "covered": (t >= lo) & (t <= hi), "model": model[keep]}
    return out


def run_split(name: str, path: str, protocol: str, seed: int, k: int, dev_rep: int | None, answered, draws: int,
              fit_kwargs: dict) -> dict:
    """Fit on one split's training models; partial-run estimates of its test models (one task)."""
    from tinybench_builder.model import fit_estimator

    matrix = ResponseMatrix.read(path)
    Y, models = matrix.scores, matrix.models
    train, test = protocols.train_test(protocol, Y, models, seed, dev_rep)
    t0 = time.perf_counter()
    res = fit_estimator(matrix.select_models(train), n_anchors=k, seed=seed, progress=False, **fit_kwargs)
    fit_s = time.perf_counter() - t0
    Yt = Y[test]
    truth = protocols.model_means(Yt)
    recs = partial_records(res.estimator, Yt[:, res.anchors.positions], truth, seed, answered, KINDS, draws)
    strongest = int(np.argmax(truth))
    cells = {}
    for (kind, n), r in recs.items():
        top = r["model"] == strongest
        cells[f"{kind}:{n}"] = {
            "n": int(r["err"].size), "covered": int(r["covered"].sum()), "width_sum": float(r["width"].sum()),
            "err_sum": float(r["err"].sum()), "narrow": int((r["width"] < NARROW).sum()),
            "top_n": int(top.sum()), "top_covered": int(r["covered"][top].sum()),
            "random_n": random_n_mae(Yt, truth, n, seed),
        }
    return {"dataset": name, "protocol": protocol, "seed": seed, "dev_rep": dev_rep, "n_train": int(len(train)),
            "n_test": int(len(test)), "fit_seconds": fit_s, "cells": cells}


def summarize(rows: list[dict], datasets, protocol: str, answered) -> tuple[str, dict]:
    """Per dataset x kind x n: coverage (pooled; minimum over seeds; strongest model), width, MAE."""
    rows = [r for r in rows if r["protocol"] == protocol]
    stats: dict = {}
    for name in datasets:
        rs = [r for r in rows if r["dataset"] == name]
        if not rs:
            continue
        for kind in KINDS:
            for n in answered:
                cs = [r["cells"][f"{kind}:{n}"] for r in rs if f"{kind}:{n}" in r["cells"]]
                if not cs:
                    continue
                tot = sum(c["n"] for c in cs)
                by_seed: dict = {}
                for r, c in zip(rs, cs):
                    a = by_seed.setdefault(r["seed"], [0, 0])
                    a[0] += c["covered"]
                    a[1] += c["n"]
                mae = sum(c["err_sum"] for c in cs) / tot
                width = sum(c["width_sum"] for c in cs) / tot
                top = sum(c["top_n"] for c in cs)
                stats[(name, kind, n)] = {
                    "coverage": sum(c["covered"] for c in cs) / tot,
                    "min_seed_coverage": min(a / b for a, b in by_seed.values()),
                    "top_coverage": sum(c["top_covered"] for c in cs) / top if top else float("nan"),
                    "width": width, "mae": mae, "width_over_mae": width / mae if mae > 0 else float("inf"),
                    "narrow": sum(c["narrow"] for c in cs), "count": tot,
                    "random_n": float(np.mean([c["random_n"] for c in cs])),
                }
    head = "| dataset | subsets | " + " | ".join(f"n = {n}" for n in answered) + " |"
    lines = [head, "|---|---|" + "---|" * len(answered)]
    for name in datasets:
        for kind in KINDS:
            cells = []
            for n in answered:
                st = stats.get((name, kind, n))
                cells.append("" if st is None else
                             f"{st['coverage']:.0%} (min {st['min_seed_coverage']:.0%}, top {st['top_coverage']:.0%})"
                             f" w {st['width']:.3f} e {st['mae']:.3f}")
            if any(cells):
                lines.append(f"| {name} | {kind} | " + " | ".join(cells) + " |")
    lines += ["", ("| subsets | n answered | coverage: worst dataset | mean | min over seeds | strongest model (worst) "
                   "| mean width | MAE | random-n MAE | width / MAE | intervals < 0.001 |"),
              "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    overall = {}
    for kind in KINDS:
        for n in answered:
            sts = {name: stats[(name, kind, n)] for name in datasets if (name, kind, n) in stats}
            if not sts:
                continue
            worst = min(sts, key=lambda m: sts[m]["coverage"])
            o = {"worst": worst, "worst_coverage": sts[worst]["coverage"],
                 "mean_coverage": float(np.mean([s["coverage"] for s in sts.values()])),
                 "min_seed_coverage": min(s["min_seed_coverage"] for s in sts.values()),
                 "top_coverage": min(s["top_coverage"] for s in sts.values()),
                 "width": float(np.mean([s["width"] for s in sts.values()])),
                 "mae": float(np.mean([s["mae"] for s in sts.values()])),
                 "random_n": float(np.mean([s["random_n"] for s in sts.values()])),
                 "width_over_mae": float(np.mean([s["width_over_mae"] for s in sts.values()])),
                 "narrow": sum(s["narrow"] for s in sts.values()), "count": sum(s["count"] for s in sts.values())}
            overall[(kind, n)] = o
            lines.append(f"| {kind} | {n} | {o['worst_coverage']:.0%} ({worst}) | {o['mean_coverage']:.0%} | "
                         f"{o['min_seed_coverage']:.0%} | {o['top_coverage']:.0%} | {o['width']:.3f} | {o['mae']:.4f} | "
                         f"{o['random_n']:.4f} | {o['width_over_mae']:.1f} | {o['narrow']} of {o['count']} |")
    return "\n".join(lines), {"datasets": {"|".join(map(str, key)): v for key, v in stats.items()},
                              "overall": {f"{a}|{b}": v for (a, b), v in overall.items()}}


def goals(summary: dict, answered) -> list[str]:
    """The issue's goals for partial runs, checked on a summary."""
    ov = summary["overall"]
    out = []
    narrow = sum(v["narrow"] for v in ov.values())
    out.append(f"no interval narrower than {NARROW}: {'met' if narrow == 0 else f'NOT met ({narrow})'}")
    low = [f"{key} {v['worst']} {v['worst_coverage']:.0%}" for key, v in ov.items() if v["worst_coverage"] < 0.90]
    out.append(f"coverage >= 90% per dataset for every n: {'met' if not low else 'NOT met: ' + '; '.join(low)}")
    top = [f"{key} {v['top_coverage']:.0%}" for key, v in ov.items() if v["top_coverage"] < 0.90]
    out.append(f"strongest model's coverage >= 90% for every n (worst dataset): "
               f"{'met' if not top else 'NOT met: ' + '; '.join(top)}")
    for kind in KINDS:
        ws = [ov[f"{kind}|{n}"]["width"] for n in answered if f"{kind}|{n}" in ov]
        ok = all(a >= b for a, b in zip(ws, ws[1:]))
        out.append(f"{kind}: mean width shrinks as n grows: {'met' if ok else 'NOT met'} "
                   f"({', '.join(f'{w:.3f}' for w in ws)})")
    return out


#: the per-dataset table in docs/BENCHMARKS.md: folded, it is long
PER_DATASET = ("<details><summary>Per dataset: coverage (min over seeds, strongest test model), mean width w, "
               "MAE e</summary>\n\n{table}\n\n</details>")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.partial", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    protocols.add_protocol_args(ap, DEFAULT_DATA)
    ap.add_argument("--anchors", type=int, default=100)
    ap.add_argument("--answered", nargs="+", type=int, default=list(ANSWERED), help="n answered (default 5 ... 100)")
    ap.add_argument("--draws", type=int, default=10, help="random subsets per model and n (default 10)")
    ap.add_argument("--dev", action="store_true", help="development protocol: nested splits of training models only")
    ap.add_argument("--dev-reps", type=int, default=2, help="nested interpolation splits per seed in --dev (default 2)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="parallel fits (default 2)")
    ap.add_argument("--json", type=Path, help="also write the per-split counts and the summaries as JSON")
    docs_tables.add_docs_arg(ap)
    args = ap.parse_args(argv)
    conditions = docs_tables.Conditions()
    if args.jobs < 1 or args.draws < 1 or min(args.answered) < 1:
        ap.error("--jobs, --draws and --answered must be positive")
    answered = sorted(set(args.answered))
    tasks: list = []
    for name in args.datasets:
        path = args.data_dir / f"{name}.parquet"
        if not path.is_file():
            print(f"error: {path} not found (--data-dir)", file=sys.stderr)
            return 2
        for protocol in args.protocols:
            for seed in args.seeds:
                reps = [None] if not args.dev else list(range(args.dev_reps if protocol == "interpolation" else 1))
                tasks += [(name, str(path), protocol, seed, args.anchors, rep, answered, args.draws, {})
                          for rep in reps]
    t0 = time.perf_counter()
    rows = run_tasks(tasks, args.jobs)
    run = (f"{'DEV protocol (training models only)' if args.dev else 'Protocol'}; k = {args.anchors}; seeds "
           f"{args.seeds}; {args.draws} random subsets per model and n; {len(tasks)} fits; "
           f"{time.perf_counter() - t0:.0f} s with {args.jobs} process(es)")
    print(f"\n{run}\n")
    summaries, docs = {}, []
    for protocol in args.protocols:
        table, summ = summarize(rows, args.datasets, protocol, answered)
        summaries[protocol] = summ
        goal_lines = "\n".join(f"- {line}" for line in goals(summ, answered))
        print(f"### {protocol}: coverage of the 95% interval (min over seeds, strongest test model), "
              f"mean width w, MAE e\n\n{table}\n")
        print(goal_lines + "\n")
        per_dataset, overall = table.split("\n\n", 1)
        docs.append((f"partial{'-dev' if args.dev else ''}.{protocol}",
                     f"Partial runs: {protocol}{' (development protocol)' if args.dev else ''}",
                     f"{run}.\n\n{overall}\n\nGoals checked by the script:\n\n{goal_lines}\n\n"
                     + PER_DATASET.format(table=per_dataset)))
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "summaries": summaries}, indent=1))
    if args.write_docs:
        docs_tables.write_sections(docs, conditions, argv=argv, module="partial")
    return 0


def run_tasks(tasks: list, jobs: int) -> list[dict]:
    rows = []
    with ProcessPoolExecutor(jobs) as pool:
        for i, row in enumerate(pool.map(_run_task, tasks), 1):
            rows.append(row)
            c = row["cells"]
            worst = min(c, key=lambda key: c[key]["covered"] / max(c[key]["n"], 1))
            print(f"[{i}/{len(tasks)}] {row['dataset']} {row['protocol']} seed {row['seed']}"
                  f"{'' if row['dev_rep'] is None else ' dev ' + str(row['dev_rep'])}: worst coverage "
                  f"{c[worst]['covered'] / max(c[worst]['n'], 1):.0%} ({worst}), fit {row['fit_seconds']:.1f} s",
                  file=sys.stderr)
    return rows


def _run_task(task):
    return run_split(*task)


if __name__ == "__main__":
    sys.exit(main())
