"""The validation report: what the fit measures on its held-out (out-of-fold) training models.

:func:`true_scores` are the full scores the estimates are compared with; :func:`scored` computes the
final score and its standard error from the out-of-fold parts exactly as the shipped estimator does
(:func:`tinybench_builder.estimator.final_estimate`); :func:`validation_report` gives, per scenario,
the MAE of random-k and of every component, the rank correlation and the interval's coverage;
:func:`chosen_estimator` says in ``estimator.json`` what ``score`` is and why; :func:`oof_arrays`
keeps the per-model estimates for plots; :func:`report_markdown` writes the table.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm, spearmanr

from tinybench_builder.estimator import (
    Calibration, DesignBased, ModelBased, composite, final_estimate, gp_blend, partial_sigma,
)
from tinybench_builder.model.anchors import random_anchors
from tinybench_builder.model.calibrate import coverage
from tinybench_builder.params import derived_seed
from tinybench_builder.read import CompactScores, row_chunks

__all__ = ["true_scores", "dense_rows", "scored", "random_baseline", "validation_report", "chosen_estimator",
           "oof_arrays", "report_markdown"]


def true_scores(Y, balance: np.ndarray, scenario_index: np.ndarray, n_scenarios: int) -> np.ndarray:
    """Full scores (n, S): balance-weighted mean over each model's evaluated items.

    ``Y``: a float matrix (NaN = not evaluated) or :class:`CompactScores`; taken in blocks of
    rows (each model's mean is its own row's)."""
    n, N = Y.shape
    out = np.empty((n, n_scenarios))
    for sl in row_chunks(n, N):
        Yb = dense_rows(Y, sl)
        obs = ~np.isnan(Yb)
        Yf = np.where(obs, Yb, 0.0)
        for s in range(n_scenarios):
            m = scenario_index == s
            w = balance[m] * obs[:, m]
            tot = w.sum(1)
            out[sl, s] = np.where(tot > 0, (w * Yf[:, m]).sum(1) / np.where(tot > 0, tot, 1), np.nan)
    return out


def dense_rows(Y, rows, cols=None) -> np.ndarray:
    """Float64 scores (NaN = not evaluated) of ``rows`` (x ``cols``) of a float matrix or of
    :class:`CompactScores`."""
    if isinstance(Y, CompactScores):
        return Y.dense(rows, cols)
    Y = np.asarray(Y, dtype=np.float64)
    return Y[rows] if cols is None else Y[rows][:, cols]


def _mb(oof: dict, s: int, p: dict) -> np.ndarray:
    """The model-based estimate of scenario ``s`` (out-of-fold), as the estimator mixes it."""
    return p["pirt_weight"] * oof["pirt"][:, s] + (1 - p["pirt_weight"]) * oof["ridge"][:, s]


def scored(oof: dict, params: dict, scen_names) -> tuple[np.ndarray, np.ndarray]:
    """The final score (n, S) and its standard error, computed as the shipped estimator computes them:
    the same :func:`~tinybench_builder.estimator.composite` and
    :func:`~tinybench_builder.estimator.final_estimate` on the out-of-fold parts (``oof``), with the
    model-based error grown for partial runs when ``oof`` says how many anchors each scenario has."""
    ps = [params[name] for name in scen_names]

    def vec(key: str, default: float = 0.0) -> np.ndarray:  # one setting of every scenario, as the estimator's
        return np.array([p.get(key, default) for p in ps], dtype=np.float64)

    gp, gp_se = gp_blend(oof["irt"], oof["pirt"], oof["se_irt"], oof["se_pirt"], vec("lambda"))
    a = vec("pirt_weight", 1.0)  # gp-IRT scenarios have no model-based part: their composite is not used
    mb = a * oof["pirt"] + (1 - a) * oof["ridge"]
    sigma = (partial_sigma(vec("sigma"), vec("sigma_partial"), oof["answered"], oof["n_anchors"])
             if "n_anchors" in oof else vec("sigma"))
    cal = Calibration(lo=np.array([p["range"][0] for p in ps]), hi=np.array([p["range"][1] for p in ps]),
                      kappa=vec("kappa"), interval_scale=vec("interval_scale"))
    comp = composite(DesignBased(oof["db"], oof["se_db"]), ModelBased(mb, sigma), cal)
    out = final_estimate(np.array([p["method"] == "composite" for p in ps]), comp, gp, gp_se, vec("interval_scale"))
    return out.score, out.se


def random_baseline(Y, truth: np.ndarray, balance, scen, k: int, seed: int, draws: int = 50) -> np.ndarray:
    """MAE per scenario of the balance-weighted mean of k random items (mean over draws).

    ``Y``: a float matrix (NaN = not evaluated) or :class:`CompactScores`; only the drawn
    items' columns are read."""
    scen_names = list(dict.fromkeys(scen))
    n = Y.shape[0]
    rng = np.random.default_rng(derived_seed(seed, "random_baseline"))
    errs = np.zeros(len(scen_names))
    for _ in range(draws):
        a = random_anchors(k, balance, scen, seed=int(rng.integers(2**31)))
        for s, name in enumerate(scen_names):
            m = np.array([scen[p] == name for p in a.positions])
            pos = a.positions[m]
            Yp = dense_rows(Y, slice(0, n), pos)
            obs = ~np.isnan(Yp)
            w = balance[pos] * obs
            est = (w * np.where(obs, Yp, 0.0)).sum(1) / np.maximum(w.sum(1), 1e-12)
            errs[s] += np.nanmean(np.abs(est - truth[:, s])) / draws
    return errs


def validation_report(Yv, truth, oof, params, pb, k, seed) -> dict:
    """MAE of random-k and of every component, Spearman and coverage of the score, per scenario."""
    z = norm.ppf(0.975)
    rand = random_baseline(Yv, truth, pb.balance, pb.scen, k, seed)
    # random_baseline orders scenarios by first appearance; map to ours
    rand_by = dict(zip(dict.fromkeys(pb.scen), rand))
    score, se = scored(oof, params, pb.scen_names)
    rows = []
    for s, name in enumerate(pb.scen_names):
        # the models evaluated on this scenario (a bundle's sources may cover different models)
        ok = np.isfinite(truth[:, s])
        t = truth[ok, s]
        p = params[name]
        gp, _ = gp_blend(oof["irt"][ok, s], oof["pirt"][ok, s], oof["se_irt"][ok, s], oof["se_pirt"][ok, s],
                         p["lambda"])

        def mae(x, t=t):
            return float(np.nanmean(np.abs(x - t)))

        rho = spearmanr(score[ok, s], t).statistic if len(t) > 2 and np.std(t) > 0 else float("nan")
        row = {"scenario": name, "models": int(len(t)), "random": float(rand_by[name]),
               "irt": mae(oof["irt"][ok, s]), "pirt": mae(oof["pirt"][ok, s]), "gpirt": mae(gp),
               "db": mae(oof["db"][ok, s]), "score": mae(score[ok, s]), "spearman": float(rho),
               "coverage": coverage(score[ok, s], z * se[ok, s], t), "ci_width": float(np.mean(2 * z * se[ok, s])),
               "method": p["method"], "lambda": p["lambda"], "interval_scale": p["interval_scale"]}
        if p["method"] == "composite":
            row["mb"] = mae(_mb(oof, s, p)[ok])
            row["pirt_weight"] = p["pirt_weight"]
        rows.append(row)
    return {"table": rows}


def chosen_estimator(report: dict) -> dict:
    """What ``score`` is and why, for ``estimator.json``: the method per scenario with its
    out-of-fold MAE next to every component's (and random-k's)."""
    out = {}
    for r in report.get("table", []):
        keys = [k for k in ("random", "irt", "pirt", "gpirt", "db", "mb", "score") if k in r]
        out[r["scenario"]] = {
            "method": r["method"],
            "why": ("composite of the design-based estimate (unbiased for any model) and the model-based one, "
                    "weighted by their errors; out-of-fold MAE below" if r["method"] == "composite"
                    else "gp-IRT (the original method's anchors); out-of-fold MAE below"),
            "oof_mae": {k: r[k] for k in keys}, "oof_coverage": r["coverage"],
            "validation_models": r["models"],
        }
    return out


def oof_arrays(oof, truth, params, scen_names, models) -> dict:
    """Out-of-fold per-model estimates for plots: lists (models x scenarios), NaN as None.

    ``{"scenarios", "models", "truth", "score", "ci_low", "ci_high"}``, computed as the
    shipped estimator does.
    """
    score, se = scored(oof, params, scen_names)
    half = norm.ppf(0.975) * se

    def rows(a):
        return [[None if not np.isfinite(v) else float(v) for v in r] for r in np.asarray(a, dtype=np.float64)]

    return {
        "scenarios": list(scen_names), "models": list(models), "truth": rows(truth), "score": rows(score),
        "ci_low": rows(np.clip(score - half, 0.0, 1.0)), "ci_high": rows(np.clip(score + half, 0.0, 1.0)),
    }


def report_markdown(report: dict) -> str:
    """The validation table as Markdown."""
    folds = report.get("n_folds", 1)
    how = f"{folds}-fold cross-fitting" if folds > 1 else "a held-out split"
    lines = [
        (f"Validation on {report.get('n_validation_models', '?')} training models, each estimated by "
         f"{how}: the IRT fit and the regression never saw it (IRT dimension D = {report.get('n_dims', '?')}). "
         "MAE of the full-score estimate (score: the estimate to read; irt, p-IRT, gp-IRT: the tinyBenchmarks "
         "components); Spearman rank correlation and coverage of the 95% interval of the score."),
        "",
        "| scenario | models | random-k | irt | p-IRT | gp-IRT | score | Spearman | coverage |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report["table"]:
        score = r.get("score", r.get("gpirt"))
        lines.append(
            f"| {r['scenario']} | {r['models']} | {r['random']:.4f} | {r['irt']:.4f} | {r['pirt']:.4f} | "
            f"{r['gpirt']:.4f} | {score:.4f} | {r['spearman']:.3f} | {r['coverage']:.0%} |"
        )
    lines.append("")
    lines.append(
        "The same estimates chose the blend weights and the interval scale (a few numbers per scenario), "
        "so these numbers are slightly optimistic; random-k is the mean of 50 draws of k items."
    )
    return "\n".join(lines) + "\n"
