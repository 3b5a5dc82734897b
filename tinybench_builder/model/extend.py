"""Grow a bundle by a config without re-evaluating: fixed-parameter calibration of the new items.

:func:`extend_estimator` adds to ``previous`` (a bundle's joint estimator) the scenarios of a
matrix that it lacks, e.g. tinyHELM built from four of its scenarios, then the fifth added
(``build --update-from`` calls it when the responses hold a config the previous version lacks). As Habba et al. (2026, "Growing Pains") extend a suite:

1. everything ``previous`` holds is kept as it is: its items, anchors (ids and order), strata,
   anchor and balance weights, IRT parameters, ability prior, regression and calibration.
   Results on its configs (logged against the previous version) give the same estimates;
2. each model's ability is its MAP on *all* its results on the kept items, with the kept item
   parameters and prior (:func:`tinybench_builder.model.irt.fit_abilities`);
3. the new scenario's items are calibrated against those abilities held fixed: one ridge
   logistic regression per item (the IRT model's priors on ``a`` and ``b``), so their
   parameters are on the kept scale;
4. the new scenario's anchors are a stratified random sample of its items
   (:func:`~tinybench_builder.model.anchors.stratified_anchors`, the draw a fresh build makes), appended
   after the kept anchors (a positional input of the previous version is a prefix);
5. its regression and calibration come from cross-fitting over the models that have results
   on both the kept and the new items, as :func:`tinybench_builder.model.fitting.fit_estimator` does
   (the new items' parameters refitted in every fold); the shipped estimator uses all of them.

The validation report's rows of the kept scenarios are the previous version's (their
estimator did not change); the new scenario's rows are out of fold.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from scipy.special import expit
from tqdm.auto import tqdm

from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.model import fitting
from tinybench_builder.model.anchors import AnchorSet, balance_weights, stratified_anchors
from tinybench_builder.model.design import re_estimates
from tinybench_builder.model.irt import binarize_scores, fit_abilities
from tinybench_builder.model.report import chosen_estimator, oof_arrays, true_scores, validation_report
from tinybench_builder.read import ResponseMatrix

__all__ = ["extend_estimator", "calibrate_items"]


class _FixedIRT:
    """What the estimator needs of an IRT fit (item parameters, the ability prior), held fixed."""

    def __init__(self, A: np.ndarray, b: np.ndarray, mean: np.ndarray, cov: np.ndarray) -> None:
        self.discrimination_, self.difficulty_ = A, b
        self._prior = (mean, cov)
        self.n_dims_ = A.shape[1]

    def ability_prior(self) -> tuple[np.ndarray, np.ndarray]:
        return self._prior


def _prepared(Y: np.ndarray, binarize) -> np.ndarray:
    """Scores as the IRT fit reads them (soft labels, or binarised as ``binarize`` says)."""
    if binarize is True:
        return binarize_scores(Y)
    if binarize is not False and binarize is not None:
        return binarize_scores(Y, float(binarize))
    return Y


def calibrate_items(Y: np.ndarray, theta: np.ndarray, prior_a: float = 1.0, prior_b: float = 3.0,
                    n_iter: int = 50, tol: float = 1e-8) -> tuple[np.ndarray, np.ndarray]:
    """Item parameters ``(A, b)`` for abilities ``theta`` held fixed (fixed-parameter calibration).

    One ridge logistic regression per item, ``P(y_ij) = sigmoid(theta_i . a_j - b_j)`` with the
    IRT model's Gaussian priors on ``a`` (sd ``prior_a``) and ``b`` (sd ``prior_b``), by damped
    Newton steps vectorised over items; NaN = not evaluated; soft scores are soft labels.
    """
    Y = np.asarray(Y, dtype=np.float64)
    theta = np.asarray(theta, dtype=np.float64)
    n, N = Y.shape
    D = theta.shape[1]
    obs = ~np.isnan(Y)
    W = obs.astype(np.float64)
    Yf = np.where(obs, Y, 0.0)
    X = np.hstack([theta, -np.ones((n, 1))])  # logit = X @ [a; b]
    XX = np.einsum("id,ie->ide", X, X).reshape(n, -1)
    prior = np.diag(np.r_[np.full(D, 1.0 / prior_a**2), 1.0 / prior_b**2])
    mean = np.where(obs.any(0), Yf.sum(0) / np.maximum(W.sum(0), 1), 0.5)
    p0 = np.clip(mean, 0.02, 0.98)
    par = np.hstack([np.zeros((N, D)), -np.log(p0 / (1 - p0))[:, None]])  # (N, D+1)
    for _ in range(int(n_iter)):
        P = expit(X @ par.T)
        grad = ((P - Yf) * W).T @ X + par @ prior
        H = ((P * (1 - P)) * W).T @ XX
        H = H.reshape(N, D + 1, D + 1) + prior
        step = np.linalg.solve(H, grad[..., None])[..., 0]
        norm = np.linalg.norm(step, axis=1, keepdims=True)
        step *= np.minimum(1.0, 2.0 / np.maximum(norm, 1e-12))  # a trust limit for items all get right
        par -= step
        if float(norm.max(initial=0.0)) < tol:
            break
    return par[:, :D].copy(), par[:, D].copy()


def _columns(matrix: ResponseMatrix, previous: TinyEstimator, new_scenarios, scenario_order):
    """Positions in ``matrix`` of the kept items (previous order) and of the new scenarios' items
    (canonical order), and the scenario order of the extended estimator."""
    pos = {item: j for j, item in enumerate(matrix.items)}
    missing = [i for i in previous.item_ids if i not in pos]
    if missing:
        raise ValueError(
            f"the responses lack {len(missing)} of the {len(previous.item_ids)} items of the design being kept "
            f"(e.g. {missing[0]!r}): a version that extends a bundle keeps its configs' items")
    old_cols = np.array([pos[i] for i in previous.item_ids], dtype=np.int64)
    scen = matrix.scenarios().astype(str)
    order = [str(s) for s in scenario_order] if scenario_order is not None else [*previous.scenarios,
                                                                                  *sorted(new_scenarios)]
    order = [s for s in order if s in set(previous.scenarios) | set(new_scenarios)]
    _, canon = matrix.canonical_order([*order, *sorted(set(scen) - set(order))])
    new_cols = np.array([j for j in canon if scen[j] in set(new_scenarios)], dtype=np.int64)
    ignored = int(np.isin(scen, previous.scenarios).sum() - old_cols.size)
    return old_cols, new_cols, order, ignored


def extend_estimator(previous: TinyEstimator, matrix: ResponseMatrix, *, n_anchors: int, seed: int = 0,
                     n_folds: int | None = None, validation_fraction: float = 0.2, binarize: bool | float = False,
                     irt_params: dict | None = None, kappa: float = 16.0, scenario_order=None,
                     progress: bool = False, metadata: dict | None = None, **_ignored):
    """``previous`` with the scenarios ``new_scenarios`` of ``matrix`` added (module docstring).

    ``n_anchors`` is the extended estimator's total (``k`` per scenario, as a build asks for):
    the new scenarios get ``n_anchors // (scenarios)`` each. The keyword arguments are
    :func:`~tinybench_builder.model.fitting.fit_estimator`'s (the settings that do not apply to a kept
    design, such as ``n_dims`` or ``design``, are ignored). Returns a
    :class:`tinybench_builder.model.fitting.FitResult`.
    """
    from threadpoolctl import threadpool_limits

    new_scenarios = sorted(set(matrix.scenarios().astype(str)) - set(previous.scenarios))
    if not new_scenarios:
        raise ValueError("the responses hold no scenario the design lacks: refit it with "
                         "fit_estimator(keep_design=...)")
    irt_kwargs = dict(binarize=binarize, random_state=seed, **(irt_params or {}))
    if previous.design != "stratified":
        raise ValueError(f"only a stratified design can be extended by a config (this one is {previous.design!r})")
    old_cols, new_cols, order, ignored = _columns(matrix, previous, new_scenarios, scenario_order)
    rows = np.array(sorted(range(len(matrix.models)), key=lambda i: matrix.models[i]), dtype=np.int64)
    models = [matrix.models[i] for i in rows]
    binarize = irt_kwargs.get("binarize", False)
    Y_old = np.ascontiguousarray(matrix.compact.dense(rows, old_cols), dtype=np.float64)
    Y_new = np.ascontiguousarray(matrix.compact.dense(rows, new_cols), dtype=np.float64)
    # the models that tie the new items to the kept scale: results on both
    both = np.flatnonzero(~np.isnan(Y_old).all(1) & ~np.isnan(Y_new).all(1))
    if both.size < fitting.MIN_MODELS:
        raise ValueError(f"only {both.size} models have results on both the kept configs and the new one(s) "
                         f"{', '.join(new_scenarios)}; the new items' calibration needs at least {fitting.MIN_MODELS}")
    with threadpool_limits(limits=1):
        ext = _extension(previous, matrix, Y_old[both], Y_new[both], new_cols, order, new_scenarios, n_anchors, seed,
                         binarize, irt_kwargs)
        oof, folds, hr = _out_of_fold(ext, n_folds, validation_fraction, seed, progress)
        truth = ext.truth_all[hr]
        k_s = np.bincount(np.asarray(ext.pb.scen_idx)[ext.anchors.positions], minlength=len(order))  # anchors per scenario
        oof["n_anchors"] = k_s.astype(np.float64)
        params = dict(ext.old_params)
        for s in ext.new_s:
            params[order[s]] = fitting._calibrate(oof, truth, s, len(hr), "stratified", float(kappa),
                                                  ext.truth_all[:, s], n_anchors=float(k_s[s]))
        new_names = [order[s] for s in ext.new_s]
        est = fitting._calibrated(ext.fitted(np.arange(ext.n)), {name: params[name] for name in new_names})
        report = _report(ext, oof, truth, params, hr, seed, [models[both[i]] for i in hr])
        report.update(n_models=int(ext.n), n_items=int(len(ext.pb.items)), n_folds=len(folds),
                      n_validation_models=int(len(hr)), n_dims=int(previous.n_dims), design="stratified",
                      kappa=float(kappa), params={k: dict(v) for k, v in params.items()},
                      extended={"version": previous.version, "design_hash": previous.design_hash,
                                "new_scenarios": new_names, "calibration_models": int(ext.n),
                                "ignored_items": ignored})
    meta = dict(previous.metadata)
    meta.update(metadata or {})
    meta.update(n_anchors=int(ext.pb.k), n_training_models=int(ext.n), chosen_estimator=chosen_estimator(report),
                validation={k: v for k, v in report.items() if k in ("table", "n_validation_models", "n_folds")},
                extended_from={"version": previous.version, "design_hash": previous.design_hash,
                               "new_scenarios": new_names})
    est = est.replace(metadata={**meta, "re_estimates": re_estimates(previous, est)})
    positions = np.concatenate([old_cols, new_cols])
    labels = np.full(matrix.shape[1], -1, dtype=np.int64)
    labels[positions] = ext.anchors.labels
    result_anchors = AnchorSet(positions[ext.anchors.positions], ext.anchors.weights, labels, "stratified", seed,
                               ext.anchors.strata)
    irt = _FixedIRT(est.A, est.b, previous.prior_mean, previous.prior_cov)
    return fitting.FitResult(est, result_anchors, cast(Any, irt), report)


@dataclass
class _Extension:
    """What every fit of the extended estimator shares: the kept estimator (``previous``), the models
    with results on both the kept and the new items (their scores ``Y``, kept items first, and the new
    items' as the IRT fit reads them, ``Yn``), their abilities on the kept items, the extended problem
    and its anchors (the kept ones, then the new scenarios'), their true full scores."""

    previous: TinyEstimator
    Y: np.ndarray
    Yn: np.ndarray
    theta: np.ndarray
    pb: Any
    anchors: AnchorSet
    order: list
    new_s: list
    old_params: dict
    truth_all: np.ndarray
    prior_a: float
    prior_b: float

    @property
    def n(self) -> int:
        return int(self.Y.shape[0])

    def fitted(self, train: np.ndarray) -> TinyEstimator:
        """The extended estimator with the new items calibrated on ``train`` (rows of ``Y``), the
        new scenarios' regression fitted there, the kept parts as they were."""
        prev = self.previous
        A_new, b_new = calibrate_items(self.Yn[train], self.theta[train], self.prior_a, self.prior_b)
        irt = _FixedIRT(np.vstack([prev.A, A_new]), np.concatenate([prev.b, b_new]), prev.prior_mean, prev.prior_cov)
        est = fitting._estimator(self.pb, cast(Any, irt), self.anchors, params={**self.old_params})
        comp = est.components(self.Y[train][:, self.anchors.positions])
        coef, intercept = fitting._fit_ridge(self.pb, comp, self.truth_all[train], self.anchors)
        old_ridge = dict(zip(prev.anchor_ids, prev.ridge_coef))
        keep = np.array([old_ridge.get(a) is not None for a in est.anchor_ids])
        coef = np.where(keep, [old_ridge.get(a, 0.0) for a in est.anchor_ids], coef)
        for s, name in enumerate(self.order):
            if s not in self.new_s:
                intercept[s] = self.old_params[name]["ridge_intercept"]
        return fitting._with_ridge(est, coef, intercept)


def _extension(previous: TinyEstimator, matrix: ResponseMatrix, Y_old: np.ndarray, Y_new: np.ndarray,
               new_cols: np.ndarray, order: list, new_scenarios: list, n_anchors: int, seed: int, binarize,
               irt_kwargs: dict) -> _Extension:
    """The extended problem on the models with results on both (``Y_old``, ``Y_new``: their scores on the
    kept and on the new items): abilities on the kept items, the new scenarios' anchors drawn."""
    mean, cov = previous.prior_mean, previous.prior_cov
    theta, _ = fit_abilities(_prepared(Y_old, binarize), previous.A, previous.b, mean, cov)
    # --- the extended problem: kept items first (their order), then the new ones
    scen_new = matrix.scenarios().astype(str)[new_cols]
    items_new = [matrix.items[j] for j in new_cols]
    subs_new = matrix.select_items(new_cols).subscenarios()
    old_names = np.array(previous.scenarios, dtype=object)[previous.scenario_index].astype(str)
    scen = np.concatenate([old_names, scen_new])
    idx = np.array([order.index(s) for s in scen])
    balance = np.concatenate([previous.balance, balance_weights(scen_new, subs_new)])
    k_each = int(n_anchors) // len(order)
    obs = ~np.isnan(Y_new)
    easiness = np.where(obs.any(0), np.where(obs, Y_new, 0.0).sum(0) / np.maximum(obs.sum(0), 1), 0.5)
    n_old = len(previous.item_ids)
    drawn = stratified_anchors(easiness, k_each * len(new_scenarios), balance[n_old:], scen_new, seed=seed)
    offset = int(previous.strata.max()) + 1
    anchors = AnchorSet(np.concatenate([previous.anchor_positions, drawn.positions + n_old]),
                        np.concatenate([previous.anchor_weights, drawn.weights]),
                        np.concatenate([previous.strata, drawn.labels + offset]), "stratified", seed,
                        np.concatenate([previous.anchor_strata, np.asarray(drawn.strata) + offset]))
    Y = np.hstack([Y_old, Y_new])
    pb = fitting._Problem(Y=cast(Any, Y), items=[*previous.item_ids, *items_new], balance=balance, scen=scen,
                          scen_idx=idx, scen_names=order, k=anchors.k, design="stratified", n_seeds=1,
                          irt_kwargs=irt_kwargs)
    return _Extension(
        previous=previous, Y=Y, Yn=_prepared(Y_new, binarize), theta=theta, pb=pb, anchors=anchors, order=order,
        new_s=[order.index(s) for s in new_scenarios],
        old_params={s: dict(previous.params[s]) for s in previous.scenarios},
        truth_all=true_scores(Y, balance, idx, len(order)),
        prior_a=irt_kwargs.get("prior_a", 1.0), prior_b=irt_kwargs.get("prior_b", 3.0),
    )


def _out_of_fold(ext: _Extension, n_folds: int | None, validation_fraction: float, seed: int, progress: bool):
    """Cross-fitting over the models of ``ext``: the out-of-fold components, the folds and the held-out rows."""
    n = ext.n
    if n_folds is None:
        n_folds = 5 if n < 150 else 1
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    folds = ([np.sort(perm[:max(2, int(round(validation_fraction * n)))])] if n_folds == 1
             else [np.sort(f) for f in np.array_split(perm, int(n_folds))])
    keys = ("irt", "se_irt", "pirt", "se_pirt", "db", "se_db", "ridge", "answered")
    oof = {key: np.full((n, len(ext.order)), np.nan) for key in keys}
    held = np.zeros(n, dtype=bool)
    for val in tqdm(folds, desc="extend", disable=not progress, file=sys.stderr):
        est_r = ext.fitted(np.setdiff1d(np.arange(n), val))
        comp = est_r.components(ext.Y[val][:, ext.anchors.positions])
        for key in keys:
            oof[key][val] = comp[key]
        held[val] = True
    hr = np.flatnonzero(held)
    return {key: v[hr] for key, v in oof.items()}, folds, hr


def _report(ext: _Extension, oof: dict, truth: np.ndarray, params: dict, hr: np.ndarray, seed: int,
            models: list) -> dict:
    """The validation report: the kept scenarios' rows are the previous version's (their estimator did
    not change), the new scenarios' rows and out-of-fold arrays are measured here."""
    previous, order, pb = ext.previous, ext.order, ext.pb
    report = validation_report(ext.Y[hr], truth, oof, params, pb, pb.k, seed)
    kept_rows = {r["scenario"]: r for r in (previous.metadata.get("validation") or {}).get("table", [])}
    table = []
    for r in report["table"]:
        if r["scenario"] in previous.scenarios:
            if r["scenario"] in kept_rows:
                table.append({**kept_rows[r["scenario"]], "kept_from": previous.version})
        else:
            table.append(r)
    report["table"] = table
    new_names = [order[s] for s in ext.new_s]
    oof_cols = [order.index(s) for s in new_names]
    report["oof"] = oof_arrays({key: v[..., oof_cols] for key, v in oof.items()}, truth[:, oof_cols],
                                       params, new_names, models)
    return report
