"""Adaptive evaluation against random-k and the fixed tiny design, on real data (issue 16).

For every matrix of ``../shared/data/responses`` (:data:`protocols.ACCURACY_DATASETS`; the
reader refuses ``alpaca_eval_1``, whose scores lie outside [0, 1]), both protocols of
:mod:`benchmarks.protocols`, seeds 0-4 and budgets of 50, 100 and 200 items and 2.5% and
10% of the items N, each held-out model is evaluated at the same number of items n by

* **random-k**: the plain mean of n random items (MAE: mean of 50 draws, as the accuracy
  benchmark; its variance ``(1 - n/N) S^2 / n`` exactly);
* **fixed**: the tiny benchmark fitted with n anchors (``fit_estimator``, the stratified design
  and its composite score), answered by the model on its anchors;
* **adaptive**: ``est.adaptive(budget=n)`` on the estimator fitted with 100 anchors, answered
  from the model's row, batches of ``--batch`` items; a session's pool is the items the model
  was evaluated on, and its truth the mean over them (the accuracy benchmark's);
* **tiny + adaptive** (n > 100): the 100 anchors' answers as ``start``, then n - 100 adaptive
  items.

Reported per protocol and budget: MAE / random-k, the effective sample size (the variance of
random-k / the mean squared error, averaged over test models and seeds: how many random items
one item is worth; also against FAQ's reference, the Horvitz-Thompson mean under Bernoulli
sampling, whose variance is that of random-k divided by about ``1 - score``), its **ceiling**
(one draw of the session's rule with the model's ability fitted on ALL its results: what no IRT
predictor of this fit can beat), coverage and mean width of the 95% interval, and the time per
``next_items`` + ``record`` call. ``--speed`` times the calls at N = 28,659 (the Open LLM
Leaderboard v1 shape; parameters simulated from a 2-D model).

    python -m benchmarks.adaptive                  # test protocol (run once, at the end)
    python -m benchmarks.adaptive --dev            # development protocol: training models only
    python -m benchmarks.adaptive --speed          # the N = 28,659 timing only

``--dev`` runs the same protocols inside each split's training models
(:func:`protocols.dev_splits`): every design choice of the session (mixing, tempering, prior
scale, warm start) is made there. Fits are cached in ``benchmarks/cache/adaptive`` (keyed by the
data, the split and the code of the fit), so design runs do not refit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import protocols
from benchmarks.docs_tables import add_docs_arg
from tinybench_builder.layout import ESTIMATOR_JSON
from tinybench_builder.params import derived_seed
from tinybench_builder.read import ResponseMatrix

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "responses"
DEFAULT_CACHE = Path(__file__).resolve().parent / "cache" / "adaptive"
BUDGETS = ("50", "100", "200", "2.5%", "10%")
#: the estimator the sessions run on (and the warm start's tiny split)
SESSION_K = 100
METHODS = ("random", "fixed", "adaptive", "warm")
LABELS = {"random": "random-k", "fixed": "fixed tiny", "adaptive": "adaptive", "warm": "tiny + adaptive"}


def resolve_budget(spec: str, n_items: int) -> int:
    """``"50"`` -> 50; ``"2.5%"`` -> round(2.5% of N) (at least 2, at most N)."""
    if spec.endswith("%"):
        n = int(round(float(spec[:-1]) / 100.0 * n_items))
    else:
        n = int(spec)
    return max(2, min(n, n_items))


def _code_digest() -> str:
    """Hash of the code a fit depends on (``tinybench_builder/model/``: the IRT fit, anchors, calibration): a
    changed fit invalidates the cache. The cached side files are read by the current estimator."""
    h = hashlib.sha256()
    for p in sorted((ROOT / "tinybench_builder" / "model").glob("*.py")):
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:12]


def fit_cached(matrix: ResponseMatrix, rows: np.ndarray, k: int, seed: int, cache: Path | None, key: str,
               n_dims: int | None = None):
    """The estimator fitted on ``matrix``'s ``rows`` with k anchors (cached on disk); ``n_dims``
    fixes the IRT dimension (default: the fit's own choice)."""
    from tinybench_builder.estimator import TinyEstimator
    from tinybench_builder.model import fit_estimator

    folder = None if cache is None else cache / key / (f"k{k}" if n_dims is None else f"k{k}-d{n_dims}")
    if folder is not None and (folder / ESTIMATOR_JSON).is_file():
        return TinyEstimator.load(folder), 0.0
    t0 = time.perf_counter()
    est = fit_estimator(matrix.select_models(rows), n_anchors=k, seed=seed, n_dims=n_dims, progress=False).estimator
    seconds = time.perf_counter() - t0
    if folder is not None:
        import shutil

        tmp = folder.parent / f".{folder.name}.{os.getpid()}.tmp"
        est.save(tmp)
        try:
            os.replace(tmp, folder)
        except OSError:  # another process cached it meanwhile
            shutil.rmtree(tmp, ignore_errors=True)
    return est, seconds


def run_session(est, y: np.ndarray, items: list[str], budget: int, seed: int, batch: int, options: dict,
                start: dict | None = None) -> tuple[dict, list[float], list[float]]:
    """One model's session answered from its row ``y`` (NaN = not evaluated: outside the pool):
    its result, the wall time and the CPU time of each ``next_items`` + ``record`` call (wall
    time depends on the machine's load)."""
    col = {iid: j for j, iid in enumerate(items)}
    pool = [iid for iid in est.item_ids if not np.isnan(y[col[iid]])]
    s = est.adaptive(budget=budget, seed=seed, start=start, pool=pool, **options)
    times: list[float] = []
    cpu: list[float] = []
    while not s.done:
        t0, c0 = time.perf_counter(), time.process_time()
        ids = s.next_items(batch)
        s.record({i: float(y[col[i]]) for i in ids})
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return s.result(), times, cpu


def _session_seed(seed: int, d: int, i: int, draw: int) -> int:
    """The session seed of test model i on split d: draw 0 is the one session of a default run
    (``bench_adaptive_session``), draws 1..K-1 of ``--sessions K`` have a stream of their own."""
    if draw == 0:
        return derived_seed(seed, "bench_adaptive_session", d, i)
    return derived_seed(seed, "bench_adaptive_draw", d, i, draw)


def run_split(name: str, path: str, protocol: str, seed: int, dev_rep: int | None, budgets: tuple,
              opts: dict, draw: int = 0) -> dict:
    """Every method and budget on one split's test models (one task); ``draw`` numbers the session
    draw of ``--sessions`` (0: the default run's sessions, seeded as before)."""
    from benchmarks.peers import random_k_mae

    matrix = ResponseMatrix.read(path)
    Y, models, items = matrix.scores, matrix.models, list(matrix.items)
    train, test = protocols.train_test(protocol, Y, models, seed, dev_rep)
    digest = hashlib.sha256(np.ascontiguousarray(Y, dtype="<f8").tobytes()).hexdigest()[:10]
    cache = None if opts["cache"] is None else Path(opts["cache"])
    key = f"{name}-{digest}/{protocol}-s{seed}-{'test' if dev_rep is None else f'dev{dev_rep}'}-{opts['code']}"
    Yt = Y[test]
    truth = protocols.model_means(Yt)
    obs = ~np.isnan(Yt)
    n_eval = obs.sum(1)
    var_pop = np.array([np.nanvar(r, ddof=1) for r in Yt])  # S^2 of each model's results
    col = {iid: j for j, iid in enumerate(items)}
    est, fit_s = fit_cached(matrix, train, SESSION_K, seed, cache, key, opts.get("session_dims"))
    if opts.get("fits_only"):  # fill the cache only: no estimate is computed or shown
        for spec in budgets:
            n = resolve_budget(spec, len(items))
            if opts["fixed"] and n != SESSION_K:
                fit_cached(matrix, train, n, seed, cache, key)
        if opts.get("faq"):
            _faq_rows(name, Y, train, test, protocol, seed, dev_rep, budgets, opts, tune_only=True)
        return {"dataset": name, "protocol": protocol, "seed": seed, "dev_rep": dev_rep, "fits_only": True}
    anchor_cols = [col[a] for a in est.anchor_ids]
    ceiling = ceiling_ess(est, Yt, [col[i] for i in est.item_ids], opts["session"].get("mixing"))
    session = opts["session"]
    out = {"dataset": name, "protocol": protocol, "seed": seed, "dev_rep": dev_rep, "draw": draw, "n_items": len(items),
           "n_train": int(len(train)), "n_test": int(len(test)), "truth": truth.tolist(), "budgets": {},
           "ceiling_ess": ceiling.tolist(), "test_models": [str(models[i]) for i in test],
           "fit_seconds": fit_s}
    for spec in budgets:
        n = resolve_budget(spec, len(items))
        row: dict = {"n": n, "var_random": ((1 - n / n_eval) * var_pop / n).tolist(),
                     # FAQ's uniform reference: Bernoulli(n/N) sampling, Horvitz-Thompson mean (no centering)
                     "var_faq": ((1 - n / n_eval) * np.nanmean(Yt**2, axis=1) / n).tolist(),
                     "mae_random": random_k_mae(Yt, truth, n, seed=seed)}
        if opts["fixed"]:
            same = n == SESSION_K and opts.get("session_dims") is None
            fest = est if same else fit_cached(matrix, train, n, seed, cache, key)[0]
            res = fest.estimate(Yt[:, [col[a] for a in fest.anchor_ids]])
            row["fixed"] = {k: [float(r[k]) for r in res] for k in ("score", "ci_low", "ci_high")}
        for method in ("adaptive", "warm"):
            if method == "warm" and (not opts["warm"] or n <= SESSION_K):
                continue
            got: dict[str, list[float]] = {"score": [], "ci_low": [], "ci_high": [], "unclipped": []}
            times: list[float] = []
            for i in range(len(test)):
                sess_seed = _session_seed(seed, 0 if dev_rep is None else dev_rep + 1, i, draw)
                start = None
                if method == "warm":
                    ya = Yt[i, anchor_cols]
                    start = {a: float(v) for a, v in zip(est.anchor_ids, ya) if not np.isnan(v)}
                budget = n - (len(start) if start else 0)
                r, t, _ = run_session(est, Yt[i], items, budget, sess_seed, opts["batch"], session, start)
                for k in got:
                    got[k].append(float(r[k]))
                times += t
            row[method] = {**got, "ms_per_call": 1000 * float(np.median(times)) if times else float("nan")}
        out["budgets"][spec] = row
    if opts.get("faq"):
        hyper, per_budget = _faq_rows(name, Y, train, test, protocol, seed, dev_rep, budgets, opts, draw=draw)
        out["faq_hyper"] = hyper
        for spec, extra in per_budget.items():
            out["budgets"][spec].update(extra)
    return out


def _faq_rows(name: str, Y: np.ndarray, train: np.ndarray, test: np.ndarray, protocol: str, seed: int,
              dev_rep: int | None, budgets: tuple, opts: dict, tune_only: bool = False,
              draw: int = 0) -> tuple[dict, dict]:
    """FAQ (:mod:`benchmarks.faq`) on the split's test models at the comparison's budgets, and
    FAQ's uniform reference widths: ``(hyperparameters, {spec: {"faq": ..., "unif_width": ...}})``."""
    from benchmarks import faq
    from benchmarks.versus_faq import FAQ_BUDGETS

    specs = {spec: resolve_budget(spec, Y.shape[1]) for spec in budgets if spec in FAQ_BUDGETS}
    if not specs:
        return {}, {}
    d = 0 if dev_rep is None else dev_rep + 1
    sess_seed = _session_seed(seed, d, 0, draw)
    tune_seed = derived_seed(seed, "bench_faq_tune", d)
    cache = None if opts.get("faq_cache") is None else Path(opts["faq_cache"])
    faq.set_profile(quick=bool(opts.get("faq_quick")))
    res = faq.faq_split(name, Y[train], Y[test], protocol, tune_seed, specs, [sess_seed], cache=cache,
                        tune_only=tune_only)
    per = {spec: {"faq": {k: res["budgets"][spec][k] for k in ("score", "ci_low", "ci_high", "resampled")},
                  "unif_width": faq.uniform_reference(Y[test], n, [sess_seed])["width"].tolist()}
           for spec, n in specs.items() if spec in res["budgets"]}
    return res["hyper"], per


def ceiling_ess(est, Yt: np.ndarray, cols: list[int], mixing: float | None = None) -> np.ndarray:
    """Per test model, the effective sample size of one draw of the session's rule if the model's
    ability were known from ALL its results (the best an IRT predictor of this fit can do): the
    variance of one random item over ``sum c^2 (y - p)^2 / q - (theta - sum c p)^2`` with
    ``q = (1 - tau) c sqrt(p (1 - p)) / sum + tau c``, uniform weights over the evaluated items."""
    from tinybench_builder.model.irt import fit_abilities
    from tinybench_builder.adaptive import DEFAULT_MIXING

    tau = DEFAULT_MIXING if mixing is None else mixing
    Y = Yt[:, cols]
    b = est.b * (est.n_dims if est.design == "original" else 1.0)
    theta, _ = fit_abilities(Y, est.A, b, est.prior_mean, est.prior_cov)
    P = np.clip(1 / (1 + np.exp(-(theta @ est.A.T - b))), 1e-6, 1 - 1e-6)
    out = []
    for y, p in zip(Y, P):
        ok = ~np.isnan(y)
        y, p = y[ok], p[ok]
        c = np.full(y.size, 1.0 / y.size)
        h = c * np.sqrt(p * (1 - p))
        q = (1 - tau) * h / h.sum() + tau * c
        v = (c**2 * (y - p) ** 2 / q).sum() - (y.mean() - (c * p).sum()) ** 2
        out.append(y.var() / v if v > 0 else np.nan)
    return np.array(out)


def _stats(rows: list[dict], method: str, spec: str) -> dict | None:
    """Pooled over a dataset's seeds: MAE / random-k, ESS, coverage, width (None if absent)."""
    errs, var_r, var_f, cover, width, rand, times = [], [], [], [], [], [], []
    for r in rows:
        b = r["budgets"].get(spec)
        if b is None or (method != "random" and method not in b):
            return None
        truth = np.asarray(r["truth"])
        rand.append(b["mae_random"])
        var_r.append(np.asarray(b["var_random"]))
        var_f.append(np.asarray(b.get("var_faq", b["var_random"])))
        if method == "random":
            continue
        m = b[method]
        est = np.asarray(m["score"])
        errs.append(est - truth)
        lo, hi = np.asarray(m["ci_low"]), np.asarray(m["ci_high"])
        cover.append(protocols.covers(lo, truth, hi))
        width.append(hi - lo)
        if "ms_per_call" in m:
            times.append(m["ms_per_call"])
    rand_mae = float(np.mean(rand))
    out = {"n": rows[0]["budgets"][spec]["n"], "random_mae": rand_mae}
    if method == "random":
        return out
    e = np.concatenate(errs)
    out.update(ratio=float(np.mean(np.abs(e)) / rand_mae), ess=float(np.mean(np.concatenate(var_r)) / np.mean(e**2)),
               ess_faq=float(np.mean(np.concatenate(var_f)) / np.mean(e**2)),
               coverage=float(np.mean(np.concatenate(cover))), width=float(np.mean(np.concatenate(width))),
               bias=float(np.mean(e)), ms=float(np.median(times)) if times else float("nan"),
               ratio_sd=float(np.std([np.mean(np.abs(x)) / r for x, r in zip(errs, rand)], ddof=1)) if len(errs) > 1 else 0.0)
    return out


def _mean(st: dict, m: str, key: str) -> float:
    """Mean of ``key`` of method ``m`` over the datasets of one budget's stats."""
    v = [s[m][key] for s in st.values() if s[m] is not None]
    return float(np.mean(v)) if v else float("nan")


def _span(st: dict, m: str) -> str:
    v = [s[m]["coverage"] for s in st.values() if s[m] is not None]
    return f"{min(v):.0%}-{max(v):.0%}" if v else ""


def _fmt(v: float, d: int = 2) -> str:
    return "" if not np.isfinite(v) else f"{v:.{d}f}"


def _cell(x: dict | None, key: str, d: int = 2, pct: bool = False) -> str:
    return "" if x is None else (f"{x[key]:.0%}" if pct else f"{x[key]:.{d}f}")


def summarize(rows: list[dict], protocol: str, budgets: tuple) -> tuple[str, dict]:
    """Markdown tables of one protocol: a summary per budget and one table per dataset."""
    rows = [r for r in rows if r["protocol"] == protocol]
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    stats: dict[str, Any] = {spec: {name: {m: _stats([r for r in rows if r["dataset"] == name], m, spec) for m in METHODS}
                    for name in names} for spec in budgets}
    lines = [("| budget | items n | random-k MAE | fixed tiny | adaptive | tiny + adaptive | adaptive worst | ESS fixed "
              "| ESS adaptive | ESS adaptive (FAQ's reference) | ESS ceiling | coverage adaptive (min-max) "
              "| coverage fixed (min-max) | width adaptive | ms / call |"),
             "|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|---|---:|---:|"]
    summary: dict = {}
    per_ceiling = {name: float(np.nanmean(np.concatenate([r["ceiling_ess"] for r in rows if r["dataset"] == name])))
                   for name in names}
    ceiling = float(np.mean(list(per_ceiling.values()))) if per_ceiling else float("nan")
    for spec in budgets:
        st = stats[spec]
        ns = sorted({s["random"]["n"] for s in st.values()})
        ad = {n: s["adaptive"]["ratio"] for n, s in st.items() if s["adaptive"] is not None}
        worst = max(ad, key=lambda name: ad[name]) if ad else None
        summary[spec] = {m: {"ratio": _mean(st, m, "ratio"), "ess": _mean(st, m, "ess"), "ess_faq": _mean(st, m, "ess_faq"),
                             "coverage": _mean(st, m, "coverage"), "width": _mean(st, m, "width")}
                         for m in ("fixed", "adaptive", "warm")}
        summary[spec]["worst"] = (worst, ad[worst]) if worst else None
        summary[spec]["coverage_span"] = {m: [s[m]["coverage"] for s in st.values() if s[m] is not None]
                                          for m in ("fixed", "adaptive")}
        nlab = f"{ns[0]}" if len(ns) == 1 else f"{ns[0]}-{ns[-1]}"
        lines.append(f"| {spec} | {nlab} | {_mean(st, 'random', 'random_mae'):.4f} | {_fmt(_mean(st, 'fixed', 'ratio'))} | "
                     f"**{_fmt(_mean(st, 'adaptive', 'ratio'))}** | {_fmt(_mean(st, 'warm', 'ratio'))} | "
                     f"{worst} {ad[worst]:.2f} | {_fmt(_mean(st, 'fixed', 'ess'), 1)} | "
                     f"{_fmt(_mean(st, 'adaptive', 'ess'), 1)} | {_fmt(_mean(st, 'adaptive', 'ess_faq'), 1)} | "
                     f"{_fmt(ceiling, 1)} | "
                     f"{_span(st, 'adaptive')} | {_span(st, 'fixed')} | "
                     f"{_fmt(_mean(st, 'adaptive', 'width'), 3)} | {_fmt(_mean(st, 'adaptive', 'ms'))} |")
    tables = ["\n".join(lines)]
    for spec in budgets:
        t = [f"Budget {spec}: MAE / random-k (adaptive ± sd over seeds), ESS, coverage, width", "",
             ("| dataset | train/test | n | random-k MAE | fixed | adaptive | tiny + adaptive | ESS fixed | ESS adaptive "
              "| ESS ceiling | cov. fixed | cov. adaptive | width fixed | width adaptive | bias adaptive |"),
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for name, s in stats[spec].items():
            r0 = next(r for r in rows if r["dataset"] == name)
            f, a, w = s["fixed"], s["adaptive"], s["warm"]
            t.append(f"| {name} | {r0['n_train']}/{r0['n_test']} | {s['random']['n']} | {s['random']['random_mae']:.4f} | "
                     f"{_cell(f, 'ratio')} | **{_cell(a, 'ratio')}** ±{_cell(a, 'ratio_sd')} | {_cell(w, 'ratio')} | "
                     f"{_cell(f, 'ess', 1)} | {_cell(a, 'ess', 1)} | {per_ceiling[name]:.1f} | "
                     f"{_cell(f, 'coverage', pct=True)} | "
                     f"{_cell(a, 'coverage', pct=True)} | {_cell(f, 'width', 3)} | {_cell(a, 'width', 3)} | "
                     f"{_cell(a, 'bias', 4)} |")
        tables.append("\n".join(t))
    return "\n\n".join(tables), {"budgets": summary, "stats": stats, "ceiling_ess": per_ceiling}


def goals(protocol: str, summary: dict) -> list[str]:
    """The issue's goals, checked on a protocol's summary (budgets 50/100/200 = same items as random-k)."""
    out = []
    per = summary["stats"]
    target = 0.55 if protocol == "interpolation" else 0.65
    for spec, s in summary["budgets"].items():
        ratio = s["adaptive"]["ratio"]
        bad = [n for n, st in per[spec].items() if st["adaptive"] is not None and st["adaptive"]["ratio"] > 0.9]
        cov = {n: st["adaptive"]["coverage"] for n, st in per[spec].items() if st["adaptive"] is not None}
        off = [f"{n} {c:.0%}" for n, c in cov.items() if not 0.92 <= c <= 0.97]
        out.append(f"{spec}: mean MAE / random-k {ratio:.2f} (goal <= {target}: {'met' if ratio <= target else 'NOT met'}); "
                   f"<= 0.9 on every matrix: {'met' if not bad else 'NOT met: ' + ', '.join(bad)}; "
                   f"coverage 92-97%: {'met' if not off else 'NOT met: ' + ', '.join(off)}")
    if protocol == "extrapolation" and "10%" in summary["budgets"]:
        b = summary["budgets"]["10%"]["adaptive"]
        out.append(f"ESS at 10% of N: {b['ess']:.1f} against the mean of random items, {b['ess_faq']:.1f} against "
                   f"FAQ's reference (goal >= 5: {'met' if b['ess'] >= 5 else 'NOT met'} / "
                   f"{'met' if b['ess_faq'] >= 5 else 'NOT met'})")
    if "2.5%" in summary["budgets"]:
        big = [n for n, st in per["2.5%"].items() if st["random"]["n"] >= 100]
        out.append("ESS at 2.5% of N where that is >= 100 items: " + (", ".join(big) if big else
                   "no matrix here has 2.5% of N >= 100 items (N <= 1,987): not measurable on this data"))
    return out


def speed(n_items: int = 28_659, n_dims: int = 2, budget: int = 200, batches=(1, 10), seed: int = 0) -> list[str]:
    """Median time per ``next_items`` + ``record`` call at N items (simulated parameters)."""
    from scipy.special import expit

    from tinybench_builder.estimator import TinyEstimator

    rng = np.random.default_rng(seed)
    A = np.abs(rng.normal(0, 1, (n_items, n_dims))) * (1.2 / math.sqrt(n_dims)) + 0.1
    b = rng.normal(0, 1.5, n_items)
    ids = [f"item{j}" for j in range(n_items)]
    est = TinyEstimator(item_ids=ids, anchor_positions=list(range(0, n_items, n_items // 100))[:100],
                        anchor_weights=[0.01] * 100, A=A, b=b, balance=np.ones(n_items),
                        scenario_index=np.zeros(n_items, int), scenario_names=["s"],
                        strata=np.minimum(np.arange(n_items) // (n_items // 100), 99), prior_mean=np.zeros(n_dims),
                        prior_cov=np.eye(n_dims))
    y = (rng.random(n_items) < expit(rng.standard_normal(n_dims) @ A.T - b)).astype(float)
    lines = ["| N | D | batch | start | calls | median ms / call (next_items + record), wall | CPU | max wall ms |",
             "|---:|---:|---:|---|---:|---:|---:|---:|"]
    for start in (None, "tiny split (100)"):
        for batch in batches:
            st = {a: y[int(a[4:])] for a in est.anchor_ids} if start else None
            _, times, cpu_times = run_session(est, y, ids, budget, seed, batch, {}, st)
            ms, cpu = 1000 * np.array(times), 1000 * np.array(cpu_times)
            lines.append(f"| {n_items:,} | {n_dims} | {batch} | {start or 'none'} | {len(ms)} | {np.median(ms):.2f} "
                         f"| {np.median(cpu):.2f} | {ms.max():.2f} |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.adaptive", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    protocols.add_protocol_args(ap, DEFAULT_DATA)
    ap.add_argument("--budgets", nargs="+", default=list(BUDGETS), help="item counts or shares of N (default: %(default)s)")
    ap.add_argument("--batch", type=int, default=10, help="items per next_items call (default 10)")
    ap.add_argument("--sessions", type=int, default=1, metavar="K",
                    help="session draws per test model and split, for the adaptive session and FAQ (default 1): "
                         "K > 1 averages the error over K independent draws of the items (less noise in MSE "
                         "and ESS; the first draw is the default run's); '± sd' is then over seeds and draws")
    ap.add_argument("--mixing", type=float, default=None, help="session mixing (default: the session's)")
    ap.add_argument("--tempering", type=float, default=None, help="session tempering (default: the session's)")
    ap.add_argument("--prior-scale", type=float, default=None, help="session prior scale (default: the session's)")
    ap.add_argument("--calibrate", action="store_true", help="session calibrate=True")
    ap.add_argument("--session-dims", type=int, default=None, metavar="D",
                    help="fit the sessions' estimator with D IRT dimensions (default: the fit's own choice; "
                         "the fixed designs keep theirs)")
    ap.add_argument("--variance-floor", action="store_true", help="session variance_floor=True")
    ap.add_argument("--variance-prior", type=float, default=None, help="session variance_prior (pseudo-draws)")
    ap.add_argument("--no-fixed", action="store_true", help="skip the fixed designs (no fits beyond k = 100)")
    ap.add_argument("--no-warm", action="store_true", help="skip tiny + adaptive")
    ap.add_argument("--faq", action=argparse.BooleanOptionalAction, default=None,
                    help="run FAQ (benchmarks/faq.py) on the same splits at 2.5%%, 10%% and 100 items "
                         "(default: on, off with --dev)")
    ap.add_argument("--faq-cache", type=Path, default=None,
                    help="FAQ's hyperparameter and factor cache (default benchmarks/cache/faq)")
    ap.add_argument("--faq-quick", action="store_true",
                    help="a tiny FAQ tuning (1 K, 4 settings, 100 epochs) for smoke tests: never for reported numbers")
    ap.add_argument("--dev", action="store_true", help="development protocol: nested splits of training models only")
    ap.add_argument("--dev-reps", type=int, default=2, help="nested interpolation splits per seed in --dev (default 2)")
    ap.add_argument("--speed", action="store_true", help="only the N = 28,659 timing")
    ap.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE, help="fit cache (default benchmarks/cache/adaptive)")
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--fits-only", action="store_true",
                    help="only fit (and cache) the estimators of the splits: nothing is estimated or shown")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="parallel splits (default 2)")
    ap.add_argument("--json", type=Path, help="also write every split's per-model results as JSON")
    add_docs_arg(ap)
    args = ap.parse_args(argv)
    from benchmarks.docs_tables import Conditions

    conditions = Conditions()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    if args.speed:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):
            lines = speed(n_dims=2) + speed(n_dims=5)[2:]
            print(f"Speed, 1 BLAS thread, load average {load:.1f} at the start\n\n" + "\n".join(lines))
            if args.write_docs:  # inside the limit: the provenance line reports the 1 BLAS thread timed
                from benchmarks.docs_tables import write_section

                write_section("adaptive.speed", "\n".join(lines), conditions, title="Adaptive evaluation: speed",
                              module="adaptive")
        return 0
    for spec in args.budgets:
        try:
            resolve_budget(spec, 1000)
        except ValueError:
            ap.error(f"--budgets: {spec!r} is not an item count or a share like 2.5%")
    if args.sessions < 1:
        ap.error(f"--sessions: at least 1 session draw per model, got {args.sessions}")
    session = {k: v for k, v in (("mixing", args.mixing), ("tempering", args.tempering),
                                 ("prior_scale", args.prior_scale), ("calibrate", args.calibrate or None),
                                 ("variance_floor", args.variance_floor or None),
                                 ("variance_prior", args.variance_prior))
               if v is not None}
    from benchmarks import faq

    use_faq = (not args.dev) if args.faq is None else args.faq
    opts = {"fixed": not args.no_fixed, "warm": not args.no_warm, "batch": args.batch, "session": session,
            "cache": None if args.no_cache else str(args.cache_dir), "code": _code_digest(),
            "session_dims": args.session_dims,
            "fits_only": args.fits_only, "faq": use_faq, "faq_quick": args.faq_quick,
            "faq_cache": None if args.no_cache else str(args.faq_cache or faq.DEFAULT_CACHE)}
    tasks = []
    for name in args.datasets:
        path = args.data_dir / f"{name}.parquet"
        if not path.is_file():
            print(f"error: {path} not found (--data-dir)", file=sys.stderr)
            return 2
        for protocol in args.protocols:
            for seed in args.seeds:
                reps = [None] if not args.dev else list(range(args.dev_reps if protocol == "interpolation" else 1))
                tasks += [(name, str(path), protocol, seed, rep, tuple(args.budgets), opts, k)
                          for rep in reps for k in range(1 if args.fits_only else args.sessions)]
    rows = []
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        for i, row in enumerate(pool.map(_run_task, tasks), 1):
            if row.get("fits_only"):
                print(f"[{i}/{len(tasks)}] {row['dataset']} {row['protocol']} seed {row['seed']}: fitted", file=sys.stderr)
                continue
            rows.append(row)
            b = row["budgets"].get("100") or next(iter(row["budgets"].values()))
            mae = np.mean(np.abs(np.asarray(b["adaptive"]["score"]) - row["truth"]))
            print(f"[{i}/{len(tasks)}] {row['dataset']} {row['protocol']} seed {row['seed']}"
                  f"{'' if row['dev_rep'] is None else ' dev ' + str(row['dev_rep'])}"
                  f"{' draw ' + str(row['draw']) if args.sessions > 1 else ''}: adaptive MAE at n={b['n']} "
                  f"{mae:.4f} (random-k {b['mae_random']:.4f})", file=sys.stderr)
    if args.fits_only:
        return 0
    print(f"\n{'DEV protocol (training models only)' if args.dev else 'Protocol'}; seeds {args.seeds}; "
          f"{args.sessions} session draw(s) per model; batch "
          f"{args.batch}; session options {session or 'defaults'}; {time.perf_counter() - t0:.0f} s with {args.jobs} "
          f"process(es); load average {load:.1f} at the start\n")
    summaries = {}
    docs = []
    for protocol in args.protocols:
        table, summ = summarize(rows, protocol, tuple(args.budgets))
        summaries[protocol] = summ
        lines = goals(protocol, summ)
        print(f"### {protocol}\n\n{table}\n")
        for line in lines:
            print(f"- {line}")
        print()
        dev = "-dev" if args.dev else ""
        docs.append((f"adaptive{dev}-{protocol}", table + "\n\n" + "\n".join(f"- {x}" for x in lines),
                     f"Adaptive evaluation{' (development protocol)' if args.dev else ''}: {protocol}"))
        if use_faq:
            from benchmarks.versus_faq import goal_lines, tables

            text, comps = tables(rows, protocol, tuple(args.budgets))
            summ["faq"] = comps
            flines = goal_lines(comps)
            print(f"### {protocol}: the adaptive session against FAQ\n\n{text}\n")
            for line in flines:
                print(f"- {line}")
            print()
            docs.append((f"adaptive-vs-faq{dev}-{protocol}", text + "\n\n" + "\n".join(f"- {x}" for x in flines),
                         f"Adaptive evaluation against FAQ{' (development protocol)' if args.dev else ''}: {protocol}"))
    if args.write_docs:
        from benchmarks.docs_tables import write_section

        for section, markdown, title in docs:
            write_section(section, markdown, conditions, title=title, module="adaptive")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "summaries": summaries, "options": opts}, indent=1))
    return 0


def _run_task(task):
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        return run_split(*task)


if __name__ == "__main__":
    sys.exit(main())
