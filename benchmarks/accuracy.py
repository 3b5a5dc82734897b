"""Accuracy of the tiny estimators on real data, side by side with BenchPred's methods.

Two protocols (:mod:`benchmarks.protocols`) on every matrix of ``../shared/data/responses``,
k anchors, seeds 0-4:

* **interpolation**: a random 25% of the models are test models, the rest the ``fit`` input;
* **extrapolation**: fit on the weakest 50% of the models, test on the strongest 30%.

For each test model the truth is its mean over all its evaluated items. Reported per
dataset: MAE / random-k (random-k = the plain mean of k random items, mean of 50 draws)
of our ``score`` and components (irt, p-IRT, gp-IRT) and of the nine BenchPred methods
(read from ``benchmarks/cache/peers``; see :mod:`benchmarks.peers`), the coverage and mean
width of our 95% interval, and the spread over seeds.

    python -m benchmarks.accuracy                      # both protocols, every dataset, seeds 0-4
    python -m benchmarks.accuracy --dev                # development protocol: training models only

``--dev`` is for design decisions: for each dataset, protocol and seed it keeps only the
protocol's *training* models and runs the same protocol inside them
(:func:`protocols.dev_splits`). Choices made on ``--dev`` numbers leave the protocol's
test models unseen. BenchPred rows are not available in ``--dev`` mode.
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

from tinybench_builder.read import ResponseMatrix
from benchmarks import docs_tables, protocols

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "responses"
OURS = ("irt", "pirt", "gpirt", "score")
LABELS = {"irt": "irt", "pirt": "p-IRT", "gpirt": "gp-IRT", "score": "**score**",
          "random_sampling": "rand. sampling", "random_sampling_and_learn": "RS+learn",
          "random_search_and_learn": "RSearch+learn", "aipw": "AIPW", "lasso": "lasso", "pca": "PCA",
          "double_optimize": "double opt.", "anchor_points_weighted": "AP weighted",
          "anchor_points_predictor": "AP predictor"}


def run_split(name: str, path: str, protocol: str, seed: int, k: int, dev_rep: int | None,
              fit_kwargs: dict) -> dict:
    """Fit on one split's training models and estimate its test models (one task)."""
    from tinybench_builder.model import fit_estimator
    from benchmarks.peers import random_k_mae

    matrix = ResponseMatrix.read(path)
    Y, models = matrix.scores, matrix.models
    train, test = protocols.train_test(protocol, Y, models, seed, dev_rep)
    t0 = time.perf_counter()
    res = fit_estimator(matrix.select_models(train), n_anchors=k, seed=seed, progress=False, **fit_kwargs)
    fit_s = time.perf_counter() - t0
    Yt = Y[test]
    truth = protocols.model_means(Yt)
    t0 = time.perf_counter()
    out = res.estimator.estimate(Yt[:, res.anchors.positions])
    est_ms = 1000 * (time.perf_counter() - t0) / len(test)
    def get(key):
        return [float(r[key]) for r in out]

    comp = res.estimator.components(Yt[:, res.anchors.positions])
    return {
        "components": {key: comp[key][:, 0].tolist() for key in ("db", "se_db", "mb", "ridge", "weight_db", "se")},
        "dataset": name, "protocol": protocol, "seed": seed, "dev_rep": dev_rep,
        "n_train": int(len(train)), "n_test": int(len(test)), "n_dims": res.estimator.n_dims,
        "fit_seconds": fit_s, "estimate_ms_per_model": est_ms, "truth": truth.tolist(),
        "random": random_k_mae(Yt, truth, k, seed=seed),
        **{key: get(key) for key in OURS}, "ci_low": get("ci_low"), "ci_high": get("ci_high"),
        "params": res.report.get("params"),
    }


def attach_peers(row: dict, matrix: ResponseMatrix, k: int, cache_dir, peers_python) -> None:
    """Add the BenchPred predictions of the row's split (cache; the venv on a miss)."""
    from benchmarks.peers import PEER_METHODS, PeersUnavailableError, peer_predictions

    try:
        res = peer_predictions(row["dataset"], matrix.scores, matrix.models, matrix.items, row["protocol"],
                               row["seed"], k=k, methods=PEER_METHODS, cache_dir=cache_dir,
                               peers_python=peers_python)
    except PeersUnavailableError as exc:
        print(f"warning: no BenchPred rows for {row['dataset']} {row['protocol']} seed {row['seed']}: "
              f"{str(exc).splitlines()[0]}", file=sys.stderr)
        return
    row["peers"] = {m: [float(x) for x in r["pred"]] for m, r in res.items() if r.get("error") is None}


def _mae(pred, truth) -> float:
    pred, truth = np.asarray(pred, dtype=np.float64), np.asarray(truth, dtype=np.float64)
    return float(np.nanmean(np.abs(pred - truth)))


def summarize(rows: list[dict], datasets, protocol: str) -> tuple[str, dict]:
    """Markdown tables (ratios; coverage) for one protocol and the numbers behind them."""
    rows = [r for r in rows if r["protocol"] == protocol]
    peer_names = sorted({m for r in rows for m in r.get("peers", {})},
                        key=lambda m: list(LABELS).index(m) if m in LABELS else 99)
    methods = list(OURS) + peer_names
    stats: dict = {}
    for name in datasets:
        rs = [r for r in rows if r["dataset"] == name]
        if not rs:
            continue
        rand = np.array([r["random"] for r in rs])
        st = {"n_train": rs[0]["n_train"], "n_test": rs[0]["n_test"], "random": float(rand.mean()), "ratio": {},
              "sd": {}}
        for m in methods:
            maes = [(_mae(r[m], r["truth"]) if m in OURS else _mae(r["peers"][m], r["truth"]))
                    for r in rs if m in OURS or m in r.get("peers", {})]
            if len(maes) != len(rs):
                continue
            st["ratio"][m] = float(np.mean(maes) / rand.mean())
            st["sd"][m] = float(np.std(np.array(maes) / rand, ddof=1)) if len(rs) > 1 else 0.0
        truth = np.concatenate([r["truth"] for r in rs])
        lo, hi = np.concatenate([r["ci_low"] for r in rs]), np.concatenate([r["ci_high"] for r in rs])
        st["coverage"] = float(np.mean((truth >= lo) & (truth <= hi)))
        st["width"] = float(np.mean(hi - lo))
        err = np.abs(np.concatenate([r["score"] for r in rs]) - truth)
        st["width_over_mae"] = float(st["width"] / np.mean(err)) if np.mean(err) > 0 else float("inf")
        by_seed: dict = {}
        for r in rs:  # dev: the nested splits of a seed pooled
            t, lo_, hi_ = (np.asarray(r[key], dtype=np.float64) for key in ("truth", "ci_low", "ci_high"))
            a = by_seed.setdefault(r["seed"], [0, 0])
            a[0] += int(((t >= lo_) & (t <= hi_)).sum())
            a[1] += len(t)
        st["min_seed_coverage"] = float(min(a / b for a, b in by_seed.values()))
        st["fit_seconds"] = float(np.mean([r["fit_seconds"] for r in rs]))
        st["seeds"] = len(rs)
        stats[name] = st
    lines = [
        "| dataset | train/test | random-k MAE | " + " | ".join(str(LABELS.get(m, m)) for m in methods)
        + " | best other | score / best | 95% coverage | min over seeds | width | width / MAE |",
        "|---|---|---:|" + "---:|" * len(methods) + "---|---:|---:|---:|---:|---:|",
    ]
    for name, st in stats.items():
        others = {m: v for m, v in st["ratio"].items() if m != "score"}
        best = min(others, key=lambda m: others[m])
        cells = []
        for m in methods:
            v = st["ratio"].get(m)
            if v is None:
                cells.append("")
            elif m == "score":
                cells.append(f"**{v:.2f}** ±{st['sd'][m]:.2f}")
            else:
                cells.append(f"{v:.2f}")
        lines.append(f"| {name} | {st['n_train']}/{st['n_test']} | {st['random']:.4f} | " + " | ".join(cells)
                     + f" | {LABELS.get(best, best)} {others[best]:.2f} | {st['ratio']['score'] / others[best]:.2f}"
                     f" | {st['coverage']:.0%} | {st['min_seed_coverage']:.0%} | {st['width']:.3f}"
                     f" | {st['width_over_mae']:.1f} |")
    means = {m: float(np.mean([st["ratio"][m] for st in stats.values() if m in st["ratio"]])) for m in methods}
    lines.append("| **mean** | | | " + " | ".join(f"{means[m]:.2f}" for m in methods) + " | | | "
                 f"{np.mean([st['coverage'] for st in stats.values()]):.0%} | "
                 f"{min(st['min_seed_coverage'] for st in stats.values()):.0%} | "
                 f"{np.mean([st['width'] for st in stats.values()]):.3f} | "
                 f"{np.mean([st['width_over_mae'] for st in stats.values()]):.1f} |")
    return "\n".join(lines), {"datasets": stats, "mean_ratio": means}


def goals(protocol: str, summary: dict) -> list[str]:
    """The issue's goals, checked on a summary."""
    st = summary["datasets"]
    if not st:
        return []
    cov = {n: s["coverage"] for n, s in st.items()}
    out = []
    if protocol == "extrapolation":
        worse = [n for n, s in st.items() if s["ratio"]["score"] > 1.0]
        out.append(f"score MAE <= random-k on every dataset: {'met' if not worse else 'NOT met: ' + ', '.join(worse)}")
    else:
        means = summary["mean_ratio"]
        best = min(means, key=means.get)
        verdict = "met" if best == "score" else f"NOT met ({LABELS.get(best, best)} {means[best]:.3f} vs score {means['score']:.3f})"
        out.append(f"lowest mean ratio of all methods: {verdict}")
        far = [n for n, s in st.items()
               if s["ratio"]["score"] > 1.05 * min(v for m, v in s["ratio"].items() if m != "score")]
        out.append(f"never more than 5% worse than the best method: {'met' if not far else 'NOT met: ' + ', '.join(far)}")
        out.append(f"mean ratio <= 0.65: {'met' if means['score'] <= 0.65 else 'NOT met'} ({means['score']:.3f})")
    peers = [m for m in summary["mean_ratio"] if m not in OURS]
    if peers:
        best_peer = min(peers, key=summary["mean_ratio"].get)
        lead = summary["mean_ratio"]["score"] < summary["mean_ratio"][best_peer]
        out.append(f"mean ratio below every BenchPred method's: {'met' if lead else 'NOT met'} (score "
                   f"{summary['mean_ratio']['score']:.3f}, {LABELS.get(best_peer, best_peer)} "
                   f"{summary['mean_ratio'][best_peer]:.3f})")
    bad = [n for n, c in cov.items() if not 0.90 <= c <= 0.97]
    out.append(f"95% intervals cover 90-97% per dataset: {'met' if not bad else 'NOT met: ' + ', '.join(f'{n} {cov[n]:.0%}' for n in bad)}")
    wide = [f"{n} {s['width_over_mae']:.1f}" for n, s in st.items() if s["width_over_mae"] > 6.0]
    out.append(f"mean width / MAE <= 6 per dataset: {'met' if not wide else 'NOT met: ' + ', '.join(wide)}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.accuracy", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    protocols.add_protocol_args(ap, DEFAULT_DATA)
    ap.add_argument("--anchors", type=int, default=100)
    ap.add_argument("--dims", type=int, default=None, help="IRT dimension (default: chosen by validation)")
    ap.add_argument("--design", choices=("stratified", "kmeans"), default="stratified")
    ap.add_argument("--kappa", type=float, default=None, help="fit_estimator's kappa (default: its default)")
    ap.add_argument("--dev", action="store_true", help="development protocol: nested splits of training models only")
    ap.add_argument("--dev-reps", type=int, default=2, help="nested interpolation splits per seed in --dev (default 2)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="parallel fits (default 2)")
    ap.add_argument("--peers-cache", type=Path, default=None, help="BenchPred cache folder (default benchmarks/cache/peers)")
    ap.add_argument("--peers-python", type=Path, default=None,
                    help="BenchPred venv interpreter, used only on a cache miss (see benchmarks.peers)")
    ap.add_argument("--json", type=Path, help="also write every split's per-model estimates as JSON")
    ap.add_argument("--card-summary", type=Path, metavar="JSON",
                    help="merge each dataset's numbers into this file, keyed by the matrix's sha256 (the cards of "
                         "tiny benchmarks built from that matrix show them: dataset_cards/accuracy.json)")
    docs_tables.add_docs_arg(ap)
    args = ap.parse_args(argv)
    conditions = docs_tables.Conditions()
    if args.card_summary is not None and args.dev:
        ap.error("--card-summary takes the test protocol's numbers (not --dev)")
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    fit_kwargs = {"n_dims": args.dims, "design": args.design}
    if args.kappa is not None:
        fit_kwargs["kappa"] = args.kappa
    tasks = []
    for name in args.datasets:
        path = args.data_dir / f"{name}.parquet"
        if not path.is_file():
            print(f"error: {path} not found (--data-dir)", file=sys.stderr)
            return 2
        for protocol in args.protocols:
            for seed in args.seeds:
                reps = ([None] if not args.dev else
                        list(range(args.dev_reps if protocol == "interpolation" else 1)))
                tasks += [(name, str(path), protocol, seed, args.anchors, rep, fit_kwargs) for rep in reps]
    rows = []
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        for i, row in enumerate(pool.map(_run_task, tasks), 1):
            rows.append(row)
            print(f"[{i}/{len(tasks)}] {row['dataset']} {row['protocol']} seed {row['seed']}"
                  f"{'' if row['dev_rep'] is None else ' dev ' + str(row['dev_rep'])}: score MAE "
                  f"{_mae(row['score'], row['truth']):.4f}, random-k {row['random']:.4f}, fit {row['fit_seconds']:.1f} s",
                  file=sys.stderr)
    if not args.dev:
        from benchmarks.peers import DEFAULT_CACHE_DIR

        matrices = {name: ResponseMatrix.read(args.data_dir / f"{name}.parquet") for name in args.datasets}
        for row in rows:
            attach_peers(row, matrices[row["dataset"]], args.anchors, args.peers_cache or DEFAULT_CACHE_DIR,
                         args.peers_python)
    from benchmarks import blas_threads

    run = (f"{'DEV protocol (training models only)' if args.dev else 'Protocol'}; k = {args.anchors}; seeds "
           f"{args.seeds}; design {args.design}; {time.perf_counter() - t0:.0f} s with {args.jobs} process(es); "
           f"fits on 1 BLAS thread (fit_estimator's own limit; {blas_threads()} outside it)")
    print(f"\n{run}\n")
    summaries, docs = {}, []
    for protocol in args.protocols:
        table, summ = summarize(rows, args.datasets, protocol)
        summaries[protocol] = summ
        goal_lines = "\n".join(f"- {line}" for line in goals(protocol, summ))
        print(f"### {protocol}: MAE / random-k (score: ± sd over seeds)\n\n{table}\n")
        print(goal_lines + "\n")
        text = (f"{run}. Cells: MAE / random-k (score: ± sd over seeds).\n\n{table}\n\n"
                f"Goals checked by the script:\n\n{goal_lines}")
        docs.append((f"accuracy{'-dev' if args.dev else ''}.{protocol}",
                     f"{protocol.capitalize()}{' (development protocol)' if args.dev else ''}", text))
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "summaries": summaries}, indent=1))
    if args.card_summary is not None:
        write_card_summary(args.card_summary, summaries, {n: args.data_dir / f"{n}.parquet" for n in args.datasets},
                           args.anchors, args.seeds)
    if args.write_docs:
        docs_tables.write_sections(docs, conditions, argv=argv, module="accuracy")
    return 0


def write_card_summary(path: Path, summaries: dict, matrices: dict, k: int, seeds) -> None:
    """Merge each dataset's score MAE, random-k MAE, coverage and width per protocol into ``path``
    (JSON, keyed by the matrix file's sha256): what a card shows for a tiny benchmark built from
    that very matrix (:func:`tinybench_builder.dataset.cards.accuracy_rows`)."""
    from tinybench_builder.layout import file_sha256

    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    data.setdefault("command", "python -m benchmarks.accuracy --datasets ... --card-summary " + path.name)
    out = data.setdefault("matrices", {})
    for name, file in matrices.items():
        entry = {"dataset": name, "k": int(k), "seeds": list(map(int, seeds)), "date": time.strftime("%Y-%m-%d"),
                 "protocols": {}}
        for protocol, summ in summaries.items():
            st = summ["datasets"].get(name)
            if st is None:
                continue
            ratio = st["ratio"]["score"]
            entry["protocols"][protocol] = {
                "n_train": st["n_train"], "n_test": st["n_test"], "random_mae": round(st["random"], 5),
                "score_mae": round(ratio * st["random"], 5), "ratio": round(ratio, 3), "ratio_sd": round(st["sd"]["score"], 3),
                "coverage": round(st["coverage"], 3), "width": round(st["width"], 4)}
        out[file_sha256(file)] = entry
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _run_task(task):
    return run_split(*task)


if __name__ == "__main__":
    sys.exit(main())
