"""From a response matrix to a calibrated :class:`~builder.estimator.TinyEstimator`.

The steps (all on the *training* models given; the models a user will later score are
never seen here):

1. choose the IRT dimension (held-out log-loss, :meth:`IRTModel.select_dims`);
2. cross-fitting: for each fold of models, run the whole anchor procedure (IRT fit,
   k-means anchors for several seeds, keep the seed that estimates the fitted models
   best) on the other folds and estimate the held-out fold from its anchor results;
3. choose gp-IRT's lambda and the interval scale per scenario on these out-of-fold
   estimates;
4. run the procedure once more on all training models: the shipped estimator.

:func:`validation_report` measures random-k, irt, p-IRT, gp-IRT, rank correlation and
interval coverage on the out-of-fold estimates, i.e. on models that neither the IRT fit
nor the anchor choice saw.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import spearmanr
from tqdm.auto import tqdm

from . import __version__
from .anchors import AnchorSet, balance_weights, cluster_anchors, random_anchors
from .calibrate import choose_lambda, coverage, interval_scale
from .estimator import TinyEstimator, blend
from .irt import IRTModel
from .matrix import ResponseMatrix

MIN_MODELS = 6


@dataclass
class FitResult:
    estimator: TinyEstimator
    anchors: AnchorSet
    irt: IRTModel
    report: dict = field(default_factory=dict)


def true_scores(Y: np.ndarray, balance: np.ndarray, scenario_index: np.ndarray, n_scenarios: int) -> np.ndarray:
    """Full scores (n, S): balance-weighted mean over each model's evaluated items."""
    obs = ~np.isnan(Y)
    Yf = np.where(obs, Y, 0.0)
    out = np.empty((Y.shape[0], n_scenarios))
    for s in range(n_scenarios):
        m = scenario_index == s
        w = balance[m] * obs[:, m]
        tot = w.sum(1)
        out[:, s] = np.where(tot > 0, (w * Yf[:, m]).sum(1) / np.where(tot > 0, tot, 1), np.nan)
    return out


def _estimator_from(irt: IRTModel, anchors: AnchorSet, matrix: ResponseMatrix, balance, scen_idx, scen_names,
                    lambdas=None, scales=None, metadata=None, precision=None) -> TinyEstimator:
    mean, cov = irt.ability_prior()
    return TinyEstimator(
        item_ids=matrix.items, anchor_positions=anchors.positions, anchor_weights=anchors.weights,
        A=irt.discrimination_, b=irt.difficulty_, balance=balance, scenario_index=scen_idx,
        scenario_names=scen_names, cluster=anchors.labels, prior_mean=mean, prior_cov=cov,
        lambdas=lambdas, interval_scale=scales, metadata=metadata, precision_weights=precision,
    )


def _select_anchors(irt: IRTModel, Y: np.ndarray, matrix, balance, scen, scen_idx, scen_names,
                    n_anchors: int, n_seeds: int, embedding: str, rng: np.random.Generator,
                    max_models: int = 100) -> tuple[AnchorSet, list[float]]:
    """k-means anchors for several seeds; keep the one that estimates the fitted models best.

    The criterion is the in-sample MAE of ``(irt + pirt) / 2`` over the models the IRT
    was fitted on (at most ``max_models`` of them). Being in-sample, it is optimistic in
    level, but it ranks anchor sets on every training model instead of a handful of
    held-out ones; the held-out folds then measure the whole procedure honestly.
    """
    emb = item_embeddings(irt, embedding)
    rows = np.arange(Y.shape[0])
    if len(rows) > max_models:
        rows = np.sort(rng.choice(rows, max_models, replace=False))
    truth = true_scores(Y[rows], balance, scen_idx, len(scen_names))
    best, best_mae, maes = None, np.inf, []
    for _ in range(n_seeds):
        anchors = cluster_anchors(emb, n_anchors, balance, scen, seed=int(rng.integers(2**31)))
        comp = _estimator_from(irt, anchors, matrix, balance, scen_idx, scen_names).components(
            Y[rows][:, anchors.positions])
        mae = float(np.nanmean(np.abs(0.5 * (comp["irt"] + comp["pirt"]) - truth)))
        maes.append(mae)
        if mae < best_mae:
            best, best_mae = anchors, mae
    return best, maes


def fit_estimator(
    matrix: ResponseMatrix,
    n_anchors: int = 100,
    seed: int = 0,
    n_dims: int | None = None,
    n_seeds: int = 10,
    n_folds: int | None = None,
    validation_fraction: float = 0.2,
    binarize: bool | float = False,
    irt_params: dict | None = None,
    embedding: str = "irt",
    blend_mode: str = "lambda",
    progress: bool = True,
    metadata: dict | None = None,
) -> FitResult:
    """Fit IRT, select anchors, calibrate; returns the estimator and a validation report.

    Procedure ``P(models)``: fit the IRT model, cluster the item embeddings with
    ``n_seeds`` k-means seeds, keep the anchor set that best estimates those models.

    * Calibration: the training models are split into ``n_folds`` folds (or one
      held-out ``validation_fraction`` when ``n_folds == 1``); ``P`` runs on the other
      folds and estimates the held-out ones. gp-IRT's lambda and the interval scale are
      chosen on these out-of-fold estimates, which also make the validation report.
    * Final: ``P`` on all training models gives the shipped IRT parameters and anchors.

    Parameters
    ----------
    matrix : ResponseMatrix
        Training models x items.
    n_anchors : int
        k, the size of the tiny benchmark (split evenly over scenarios).
    seed : int
        Seed of the folds, the IRT initialisation and the k-means seeds.
    n_dims : int, optional
        IRT dimension; chosen by validation when None (once, on all training models).
    n_seeds : int
        k-means seeds tried in each run of ``P``.
    n_folds : int, optional
        Cross-fitting folds; default 5 below 150 models (every model is held out once),
        else 1 (a single ``validation_fraction`` hold-out, enough models and cheaper).
    binarize : bool or float
        Passed to :class:`IRTModel` (soft labels by default).
    irt_params : dict, optional
        Extra :class:`IRTModel` parameters (priors, ``max_iter``, ``tol``).
    embedding : {"irt", "profile"}
        Item embedding for k-means (:func:`item_embeddings`).
    blend_mode : {"lambda", "precision", "auto"}
        How gp-IRT mixes irt and p-IRT (:func:`calibrate_blend`). "lambda" (default) is the
        original one-weight gp-IRT; "auto" keeps whichever of the two has the lower
        out-of-fold MAE (no better than "lambda" on our development data, so not the default).
    """
    Y = matrix.scores
    n, N = Y.shape
    if n < MIN_MODELS:
        raise ValueError(f"need at least {MIN_MODELS} models to fit and validate, got {n}")
    if int(n_seeds) != n_seeds or n_seeds < 1:
        raise ValueError(f"n_seeds must be a positive integer, got {n_seeds!r}")
    if not 0 < validation_fraction < 1:
        raise ValueError(f"validation_fraction must be in (0, 1), got {validation_fraction!r}")
    if n_folds is None:
        n_folds = 5 if n < 150 else 1
    if int(n_folds) != n_folds or not 1 <= n_folds <= n // 2:
        raise ValueError(f"n_folds must be an integer between 1 and {n // 2}, got {n_folds!r}")
    if blend_mode not in BLEND_MODES:
        raise ValueError(f"blend_mode must be one of {BLEND_MODES}, got {blend_mode!r}")
    if embedding not in EMBEDDINGS:
        raise ValueError(f"embedding must be one of {EMBEDDINGS}, got {embedding!r}")
    scen = matrix.scenarios().astype(str)
    scen_names = list(dict.fromkeys(scen))
    scen_idx = np.array([scen_names.index(s) for s in scen])
    balance = balance_weights(scen, matrix.subscenarios())
    if n_anchors > N:
        raise ValueError(f"cannot pick {n_anchors} anchors from {N} items")
    S = len(scen_names)
    rng = np.random.default_rng(seed)
    irt_kwargs = dict(binarize=binarize, random_state=seed, **(irt_params or {}))
    common = (matrix, balance, scen, scen_idx, scen_names, n_anchors, n_seeds, embedding)

    steps = tqdm(total=n_folds + 3, desc="fit", disable=not progress, file=sys.stderr)
    # --- 1. the IRT dimension, once
    dims_scores: dict = {}
    if n_dims is None:
        steps.set_postfix_str("choosing the IRT dimension")
        n_dims, dims_scores = IRTModel(**irt_kwargs).select_dims(Y)
    steps.update()

    # --- 2. out-of-fold estimates of the whole procedure
    perm = rng.permutation(n)
    if n_folds == 1:
        n_val = max(2, int(round(validation_fraction * n)))
        folds = [np.sort(perm[:n_val])]
    else:
        folds = [np.sort(f) for f in np.array_split(perm, n_folds)]
    oof = {key: np.full((n, S), np.nan) for key in ("irt", "pirt", "se_irt", "se_pirt")}
    held = np.zeros(n, dtype=bool)
    for r, val in enumerate(folds):
        steps.set_postfix_str(f"fold {r + 1}/{len(folds)}")
        train = np.setdiff1d(np.arange(n), val)
        irt_r = IRTModel(n_dims=n_dims, **irt_kwargs).fit(Y[train])
        anchors_r, _ = _select_anchors(irt_r, Y[train], *common, rng)
        est_r = _estimator_from(irt_r, anchors_r, matrix, balance, scen_idx, scen_names)
        comp = est_r.components(Y[val][:, anchors_r.positions])
        for key in oof:
            oof[key][val] = comp[key]
        held[val] = True
        steps.update()
    rows = np.flatnonzero(held)
    truth = true_scores(Y[rows], balance, scen_idx, S)
    oof = {key: v[rows] for key, v in oof.items()}

    # --- 3. gp-IRT's blend and interval scale per scenario, on the out-of-fold estimates
    steps.set_postfix_str("calibration")
    calib = {name: calibrate_blend(oof, truth, s, len(rows), blend_mode)
             for s, name in enumerate(scen_names)}
    lambdas = {k: v["lambda"] for k, v in calib.items()}
    scales = {k: v["interval_scale"] for k, v in calib.items()}
    precision = {k: v["precision"] for k, v in calib.items() if v["precision"] is not None}
    report = validation_report(Y[rows], truth, oof, calib, balance, scen, scen_names, n_anchors, seed)
    report["oof"] = oof_arrays(oof, truth, calib, scen_names, [matrix.models[i] for i in rows])
    steps.update()

    # --- 4. the shipped estimator: the same procedure on every training model
    steps.set_postfix_str(f"final IRT on {n} models x {N} items")
    if len(folds) == 1:
        # one hold-out: the fold's fit already used 80% of the models; warm-start from it
        irt = irt_r.refit(Y)
    else:
        irt = IRTModel(n_dims=n_dims, **irt_kwargs).fit(Y)
    anchors, seed_maes = _select_anchors(irt, Y, *common, rng)
    steps.update()
    steps.close()
    report.update(
        n_models=n, n_items=N, n_folds=len(folds), n_validation_models=int(len(rows)),
        n_dims=int(n_dims), dims_scores={str(k): v for k, v in dims_scores.items()},
        seed_mae=seed_maes, chosen_seed=int(anchors.seed), lambdas=lambdas, interval_scale=scales,
        precision_weights=precision, blend={k: v["mode"] for k, v in calib.items()},
    )
    meta = {
        "builder_version": __version__, "n_anchors": int(n_anchors), "seed": int(seed),
        "n_dims": int(n_dims), "n_training_models": int(n), "binarize": binarize, "embedding": embedding,
        "validation": {k: v for k, v in report.items() if k in ("table", "n_validation_models", "n_folds")},
        **(metadata or {}),
    }
    estimator = _estimator_from(irt, anchors, matrix, balance, scen_idx, scen_names, lambdas, scales, meta,
                                precision)
    return FitResult(estimator, anchors, irt, report)


EMBEDDINGS = ("irt", "profile")


def item_embeddings(irt: IRTModel, kind: str = "irt") -> np.ndarray:
    """Item embeddings for k-means.

    ``"irt"``: ``[a_j, b_j]`` (the original method). ``"profile"``: the item's predicted
    P(correct) for every fitted model, so that items which behave alike across models
    share a cluster (rotation-free and bounded, unlike extreme difficulties).
    """
    if kind == "irt":
        return np.hstack([irt.discrimination_, irt.difficulty_[:, None]])
    if kind == "profile":
        return irt.predict_proba().T
    raise ValueError(f"embedding must be one of {EMBEDDINGS}, got {kind!r}")


def random_baseline(Y: np.ndarray, truth: np.ndarray, balance, scen, k: int, seed: int, draws: int = 50) -> np.ndarray:
    """MAE per scenario of the balance-weighted mean of k random items (mean over draws)."""
    scen_names = list(dict.fromkeys(scen))
    obs = ~np.isnan(Y)
    Yf = np.where(obs, Y, 0.0)
    rng = np.random.default_rng(seed + 7919)
    errs = np.zeros(len(scen_names))
    for _ in range(draws):
        a = random_anchors(k, balance, scen, seed=int(rng.integers(2**31)))
        for s, name in enumerate(scen_names):
            m = np.array([scen[p] == name for p in a.positions])
            pos = a.positions[m]
            w = balance[pos] * obs[:, pos]
            est = (w * Yf[:, pos]).sum(1) / np.maximum(w.sum(1), 1e-12)
            errs[s] += np.nanmean(np.abs(est - truth[:, s])) / draws
    return errs


BLEND_MODES = ("auto", "lambda", "precision")


def calibrate_blend(oof: dict, truth: np.ndarray, s: int, n_models: int, mode: str = "auto") -> dict:
    """gp-IRT's blend and interval scale for scenario ``s`` from out-of-fold estimates.

    * "lambda": one weight for all models, the MAE-best on the grid (the original gp-IRT);
    * "precision": per-model inverse-variance weights from the two standard errors, each
      scaled by its root-mean-square standardized out-of-fold error;
    * "auto": the one of the two with the lower out-of-fold MAE.

    Returns ``{"mode", "lambda", "precision", "interval_scale", "mae"}``.
    """
    irt, pirt, t = oof["irt"][:, s], oof["pirt"][:, s], truth[:, s]
    se_i, se_p = oof["se_irt"][:, s], oof["se_pirt"][:, s]
    options = {}
    if mode in ("auto", "lambda"):
        lam = choose_lambda(irt, pirt, t)
        options["lambda"] = (lam, None)
    if mode in ("auto", "precision"):
        ok_i = np.isfinite(irt) & (se_i > 0)
        c_i = float(np.sqrt(np.mean(((irt[ok_i] - t[ok_i]) / se_i[ok_i]) ** 2))) if ok_i.any() else 1.0
        c_p = float(np.sqrt(np.mean(((pirt - t) / np.maximum(se_p, 1e-12)) ** 2)))
        options["precision"] = (0.5, (c_i, c_p))
    best = None
    for name, (lam, prec) in options.items():
        gp, se, lam_i = blend(irt, pirt, se_i, se_p, lam, prec)
        mae = float(np.nanmean(np.abs(gp - t)))
        if best is None or mae < best["mae"]:
            best = {"mode": name, "lambda": lam if prec is None else float(np.nanmean(lam_i)),
                    "precision": prec, "mae": mae, "gp": gp, "se": se}
    best["interval_scale"] = interval_scale(best.pop("gp"), best.pop("se"), t, n_models=n_models)
    return best


def _calibrated(oof: dict, calib: dict, scen_names) -> tuple[np.ndarray, np.ndarray]:
    """gp-IRT (n, S) and its scaled standard error, as the shipped estimator computes them."""
    gp, se = np.empty_like(oof["pirt"]), np.empty_like(oof["pirt"])
    for s, name in enumerate(scen_names):
        c = calib[name]
        gp[:, s], se[:, s], _ = blend(oof["irt"][:, s], oof["pirt"][:, s], oof["se_irt"][:, s],
                                      oof["se_pirt"][:, s], c["lambda"], c["precision"])
        se[:, s] *= c["interval_scale"]
    return gp, se


def validation_report(Yv, truth, comp, calib, balance, scen, scen_names, k, seed) -> dict:
    """Random-k / irt / p-IRT / gp-IRT MAE, Spearman and coverage per scenario."""
    from scipy.stats import norm

    z = norm.ppf(0.975)
    rand = random_baseline(Yv, truth, balance, scen, k, seed)
    gp_all, se_all = _calibrated(comp, calib, scen_names)
    rows = []
    for s, name in enumerate(scen_names):
        irt, pirt, t = comp["irt"][:, s], comp["pirt"][:, s], truth[:, s]
        gp, se = gp_all[:, s], se_all[:, s]
        rho = spearmanr(gp, t).statistic if len(t) > 2 and np.std(t) > 0 else float("nan")
        rows.append({
            "scenario": name, "models": int(len(t)),
            "random": float(rand[s]), "irt": float(np.nanmean(np.abs(irt - t))),
            "pirt": float(np.mean(np.abs(pirt - t))), "gpirt": float(np.mean(np.abs(gp - t))),
            "spearman": float(rho), "coverage": coverage(gp, z * se, t),
            "lambda": calib[name]["lambda"], "blend": calib[name]["mode"],
            "interval_scale": calib[name]["interval_scale"],
        })
    return {"table": rows}


def oof_arrays(comp, truth, calib, scen_names, models) -> dict:
    """Out-of-fold per-model estimates for plots: lists (models x scenarios), NaN as None.

    ``{"scenarios", "models", "truth", "gpirt", "ci_low", "ci_high"}``; gp-IRT and its 95%
    interval are computed as the shipped estimator does (calibrated blend and scale).
    """
    from scipy.stats import norm

    gp, se = _calibrated(comp, calib, scen_names)
    half = norm.ppf(0.975) * se

    def rows(a):
        return [[None if not np.isfinite(v) else float(v) for v in r] for r in np.asarray(a, dtype=np.float64)]

    return {
        "scenarios": list(scen_names), "models": list(models), "truth": rows(truth), "gpirt": rows(gp),
        "ci_low": rows(np.clip(gp - half, 0.0, 1.0)), "ci_high": rows(np.clip(gp + half, 0.0, 1.0)),
    }


def report_markdown(report: dict) -> str:
    """The validation table as Markdown."""
    folds = report.get("n_folds", 1)
    how = f"{folds}-fold cross-fitting" if folds > 1 else "a held-out split"
    lines = [
        f"Validation on {report.get('n_validation_models', '?')} training models, each estimated by "
        f"{how}: the IRT fit and the anchor choice never saw it (IRT dimension D = {report.get('n_dims', '?')}). "
        "MAE of the full-score estimate; Spearman rank correlation; coverage of the 95% interval.",
        "",
        "| scenario | models | random-k | irt | p-IRT | gp-IRT | Spearman (gp-IRT) | coverage | lambda |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report["table"]:
        blend_txt = (f"{r['lambda']:.2f}" if r.get("blend", "lambda") == "lambda"
                     else f"per model (mean {r['lambda']:.2f})")
        lines.append(
            f"| {r['scenario']} | {r['models']} | {r['random']:.4f} | {r['irt']:.4f} | {r['pirt']:.4f} | "
            f"{r['gpirt']:.4f} | {r['spearman']:.3f} | {r['coverage']:.0%} | {blend_txt} |"
        )
    lines.append("")
    lines.append(
        "The same estimates chose lambda and the interval scale (one number each per scenario), "
        "so gp-IRT and coverage are slightly optimistic here; random-k is the mean of 50 draws of k items."
    )
    return "\n".join(lines) + "\n"
