"""From a response matrix to a calibrated :class:`~tinybench_builder.estimator.TinyEstimator`.

The steps (all on the *training* models given; the models a user will later score are
never seen here):

1. put the matrix in its canonical order (models by name, items by scenario and id) and
   run single-threaded BLAS, so that the same data gives the same tiny benchmark whatever
   the file layout, the row/column order or the machine's thread count;
2. choose the IRT dimension (held-out log-loss, :meth:`IRTModel.select_dims`);
3. draw the anchors: a stratified random sample along the items' easiness
   (:func:`~tinybench_builder.model.anchors.stratified_anchors`; ``design="kmeans"`` is the original
   method, k-means on the IRT parameters, kept for comparison);
4. cross-fitting: for each fold of models, fit the IRT model and the regression on the
   other folds and estimate the held-out fold from its anchor results;
5. calibrate on these out-of-fold estimates: gp-IRT's lambda, the mix of p-IRT and the
   regression in the model-based estimate, its error ``sigma`` and the interval scale;
6. fit the IRT model and the regression once more on all training models: the shipped
   estimator.

:func:`tinybench_builder.model.report.validation_report` measures every component (random-k, irt,
p-IRT, gp-IRT, the design- and model-based estimates and the final score), rank correlation and
interval coverage on the out-of-fold estimates, i.e. on models that neither fit saw.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from tinybench_builder import __version__
from tinybench_builder.errors import BuildError
from tinybench_builder.model.anchors import AnchorSet, balance_weights, cluster_anchors, stratified_anchors
from tinybench_builder.model.calibrate import choose_lambda, interval_scale, model_part_scale
from tinybench_builder.model.design import fixed_design, re_estimates
from tinybench_builder.estimator import TinyEstimator, gp_blend
from tinybench_builder.model.irt import IRTModel
from tinybench_builder.model.memory import keep_freed_blocks
from tinybench_builder.model.partial import fit_growth, partial_components, partial_masks
from tinybench_builder.model.report import chosen_estimator, dense_rows, oof_arrays, true_scores, validation_report
from tinybench_builder.progress import bar
from tinybench_builder.params import ANCHORS, DESIGN, DIMS, N_SEEDS, SEED, check_binarize, derived_seed
from tinybench_builder.read import CompactScores, ResponseMatrix, row_chunks

MIN_MODELS = 6
#: regularisation path of the anchor regression (scikit-learn's RidgeCV, efficient LOO)
RIDGE_ALPHAS = tuple(np.logspace(-3, 3, 13))
#: weight of p-IRT in the model-based estimate: chosen on this grid out-of-fold
MIX_GRID = tuple(np.round(np.linspace(0.0, 1.0, 11), 2))
#: the model-based error's growth outside the training score range (s2 = sigma^2 + kappa d^2);
#: chosen on the development protocol (nested splits of training models only)
DEFAULT_KAPPA = 16.0
#: slope of the model's prediction in the design-based estimate (``design_slope``): 0.5 averages
#: the IRT-corrected (AIPW) estimate with the plain stratified mean (any fixed slope is unbiased
#: under the design); chosen on the development protocol
DESIGN_SLOPE = 0.5


@dataclass
class FitResult:
    """The shipped estimator, its anchors (positions in the *input* matrix's item order),
    the final IRT fit (on the canonical matrix) and the validation report."""

    estimator: TinyEstimator
    anchors: AnchorSet
    irt: IRTModel
    report: dict = field(default_factory=dict)


@dataclass
class _Problem:
    """The canonical training data and what every step shares."""

    Y: CompactScores  # 0/1 scores as bytes (soft ones exactly), the mask apart: never a float copy
    items: list
    balance: np.ndarray
    scen: np.ndarray
    scen_idx: np.ndarray
    scen_names: list
    k: int
    design: str
    n_seeds: int
    irt_kwargs: dict
    #: a kept design's items then the IRT-only ones (a benchmark that grew): what the IRT model is
    #: fitted on; None: ``Y``
    Y_irt: CompactScores | None = None
    #: the anchors of a kept design (:func:`tinybench_builder.model.design.fixed_design`): never drawn again
    fixed: AnchorSet | None = None

    @property
    def S(self) -> int:
        return len(self.scen_names)

    def irt_input(self, rows: np.ndarray | None = None) -> CompactScores:
        """What the IRT model is fitted on (rows of it: a view): the design's items, then the
        IRT-only ones."""
        Y = self.Y if self.Y_irt is None else self.Y_irt
        return Y if rows is None else Y.view(rows)


def _estimator(pb: _Problem, irt: IRTModel, anchors: AnchorSet, params=None, ridge_coef=None,
               metadata=None) -> TinyEstimator:
    mean, cov = irt.ability_prior()
    if params is None and pb.design == "stratified":
        params = {name: {"design_slope": DESIGN_SLOPE} for name in pb.scen_names}
    N = len(pb.items)  # an IRT fit may hold IRT-only items after the design's: not in the estimator
    return TinyEstimator(
        item_ids=pb.items, anchor_positions=anchors.positions, anchor_weights=anchors.weights,  # type: ignore[arg-type]  # arrays: any array-like
        A=irt.discrimination_[:N], b=irt.difficulty_[:N], balance=pb.balance, scenario_index=pb.scen_idx,
        scenario_names=pb.scen_names, strata=anchors.labels, prior_mean=mean, prior_cov=cov,
        params=params, ridge_coef=ridge_coef, design=pb.design, metadata=metadata,
    )


def _select_kmeans(pb: _Problem, irt: IRTModel, Y: np.ndarray | CompactScores, rng: np.random.Generator,
                   max_models: int = 100) -> tuple[AnchorSet, list[float]]:
    """The original design: k-means anchors for several seeds, the one that best estimates
    the fitted models (in-sample MAE of ``(irt + pirt) / 2``) kept."""
    emb = np.hstack([irt.discrimination_, irt.difficulty_[:, None]])
    rows = np.arange(Y.shape[0])
    if len(rows) > max_models:
        rows = np.sort(rng.choice(rows, max_models, replace=False))
    Y = dense_rows(Y, rows)  # at most max_models rows
    truth = true_scores(Y, pb.balance, pb.scen_idx, pb.S)
    best, best_mae, maes = None, np.inf, []
    for _ in range(pb.n_seeds):
        anchors = cluster_anchors(emb, pb.k, pb.balance, pb.scen, seed=int(rng.integers(2**31)))
        comp = _estimator(pb, irt, anchors).components(Y[:, anchors.positions])
        mae = float(np.nanmean(np.abs(0.5 * (comp["irt"] + comp["pirt"]) - truth)))
        maes.append(mae)
        # a strictly better criterion by more than float noise: ties keep the earlier seed
        if mae < best_mae - 1e-12:
            best, best_mae = anchors, mae
    assert best is not None  # n_seeds >= 1 and a finite MAE
    return best, maes


def _fit_ridge(pb: _Problem, comp: dict, truth: np.ndarray, anchors: AnchorSet) -> tuple[np.ndarray, np.ndarray]:
    """Per scenario, ridge regression of ``truth - db`` on the scenario's anchor inputs.

    Returns the coefficient of every anchor (k,) and the intercepts (S,). Shrinking to
    zero means shrinking to the design-based estimate (not to the training mean), so the
    regression stays close to unbiased for models unlike the training ones.
    """
    from sklearn.linear_model import RidgeCV

    coef = np.zeros(anchors.k)
    intercept = np.zeros(pb.S)
    anchor_scen = pb.scen_idx[anchors.positions]
    for s in range(pb.S):
        cols = np.flatnonzero(anchor_scen == s)
        target = truth[:, s] - comp["db"][:, s]
        ok = np.isfinite(target)
        if ok.sum() < 3:
            continue
        model = RidgeCV(alphas=RIDGE_ALPHAS).fit(comp["x"][ok][:, cols], target[ok])
        coef[cols] = model.coef_
        intercept[s] = float(model.intercept_)
    return coef, np.clip(intercept, -1.0, 1.0)


def _with_ridge(est: TinyEstimator, coef: np.ndarray, intercept: np.ndarray) -> TinyEstimator:
    """``est`` with the regression's anchor coefficients (k,) and per-scenario intercepts (S,)."""
    params = {name: {**est.params[name], "ridge_intercept": float(intercept[s])} for s, name in enumerate(est.scenarios)}
    return est.replace(ridge_coef=np.asarray(coef, dtype=np.float64), params=params)


def _calibrated(est: TinyEstimator, params: Mapping[str, Mapping], metadata: Mapping | None = None) -> TinyEstimator:
    """``est`` with the calibration ``params`` of some scenarios (their fitted ridge intercepts kept) and,
    when given, ``metadata``; a value that is not finite is a :class:`BuildError` naming it."""
    new = {name: {**p, **params.get(name, {}), "ridge_intercept": p["ridge_intercept"]} for name, p in est.params.items()}
    bad = [f"{key} of {scen}" for scen, p in new.items() for key in _non_finite_settings(p)]
    if bad:
        _refuse_non_finite(bad)
    return est.replace(params=new, **({} if metadata is None else {"metadata": metadata}))


def _fit_once(pb: _Problem, Y: CompactScores, truth: np.ndarray, rows: np.ndarray, n_dims: int,
              rng: np.random.Generator, anchors: AnchorSet | None, irt: IRTModel | None = None):
    """IRT (+ k-means anchors) + regression on ``Y[rows]`` (full scores ``truth[rows]``): an
    uncalibrated estimator. The rows are a view (indices), not a copy."""
    Y_rows = Y.view(rows)
    if irt is None:
        irt = IRTModel(n_dims=n_dims, **pb.irt_kwargs).fit(pb.irt_input(rows))
    extra = {}
    if anchors is None:
        anchors, extra["seed_mae"] = _select_kmeans(pb, irt, Y_rows, rng)
    est = _estimator(pb, irt, anchors)
    comp = est.components(Y_rows.dense(cols=anchors.positions))
    est = _with_ridge(est, *_fit_ridge(pb, comp, truth[rows], anchors))
    return est, anchors, irt, extra


def fit_estimator(
    matrix: ResponseMatrix,
    n_anchors: int = 100,
    seed: int = 0,
    n_dims: int | None = None,
    design: str = "stratified",
    n_seeds: int = 10,
    n_folds: int | None = None,
    validation_fraction: float = 0.2,
    binarize: bool | float = False,
    irt_params: dict | None = None,
    kappa: float = DEFAULT_KAPPA,
    scenario_order: list | None = None,
    progress: bool = True,
    metadata: dict | None = None,
    subscenario_weights: Mapping[str, float] | None = None,
    keep_design: TinyEstimator | None = None,
) -> FitResult:
    """Fit IRT, draw anchors, fit the regression, calibrate; returns the estimator and a report.

    Parameters
    ----------
    matrix : ResponseMatrix
        Training models x items.
    n_anchors : int
        k, the size of the tiny benchmark (split evenly over scenarios).
    seed : int
        Seed of the anchor draw, the folds and the IRT initialisation.
    n_dims : int, optional
        IRT dimension; chosen by validation when None (once, on all training models).
    design : {"stratified", "kmeans"}
        "stratified" (default): a stratified random sample along the items' easiness,
        drawn once; ``score`` is the composite of the design-based estimate (unbiased for
        any model) and the model-based one. "kmeans": the original tinyBenchmarks anchors
        (k-means on the IRT parameters, the best of ``n_seeds`` seeds on the training
        models, re-chosen in every fold); ``score`` is gp-IRT.
    n_seeds : int
        k-means seeds tried (``design="kmeans"`` only).
    n_folds : int, optional
        Cross-fitting folds; default 5 below 150 models (every model is held out once),
        else 1 (a single ``validation_fraction`` hold-out, enough models and cheaper).
    binarize : bool or float
        Passed to :class:`IRTModel` (soft labels by default).
    irt_params : dict, optional
        Extra :class:`IRTModel` parameters (priors, ``max_iter``, ``tol``).
    kappa : float
        How fast the model-based estimate loses weight outside the training models' score
        range (``s2 = sigma^2 + kappa * d^2``).
    scenario_order : list of str, optional
        Order of the scenarios in the estimator and its anchors (bundles: the configs'
        order); default sorted names.
    subscenario_weights : mapping, optional
        Relative weight of each subscenario label in its scenario's full score (what the
        estimator estimates and the validation measures); default: every subscenario counts
        equally (:func:`tinybench_builder.model.anchors.balance_weights`).
    keep_design : TinyEstimator, optional
        An update of this estimator (a new version of its tiny benchmark): its design is kept
        as it is (the item set and its order, the anchor ids and their order, the strata, the
        anchor weights and balance weights: the estimator's design arrays come out identical)
        and the IRT model, the regression and the calibration are fitted again on
        ``matrix`` (:func:`tinybench_builder.model.design.fixed_design`). Every item of the design needs
        responses in ``matrix``; its other items (a benchmark that grew) join the IRT fit only.
        A scenario the design lacks (a bundle that gained a config) is
        :func:`tinybench_builder.model.extend.extend_estimator`'s. ``n_anchors``, ``design``,
        ``scenario_order`` and ``subscenario_weights`` are then the kept design's.
    """
    from threadpoolctl import threadpool_limits

    n, N = matrix.shape
    if n < MIN_MODELS:
        raise ValueError(f"need at least {MIN_MODELS} models to fit and validate, got {n}")
    n_anchors = ANCHORS.check(n_anchors, "n_anchors")
    seed = SEED.check(seed)
    n_dims = DIMS.optional(n_dims)
    DESIGN.check(design)
    N_SEEDS.check(n_seeds)
    if not 0 < validation_fraction < 1:
        raise ValueError(f"validation_fraction must be in (0, 1), got {validation_fraction!r}")
    if not (isinstance(kappa, (int, float)) and np.isfinite(kappa) and kappa >= 0):
        raise ValueError(f"kappa must be a non-negative number, got {kappa!r}")
    if n_folds is None:
        n_folds = 5 if n < 150 else 1
    if isinstance(n_folds, bool) or int(n_folds) != n_folds or not 1 <= n_folds <= n // 2:
        raise ValueError(f"n_folds must be an integer between 1 and {n // 2}, got {n_folds!r}")
    if n_anchors > N and keep_design is None:  # a kept design has its own anchors (n_anchors is ignored)
        raise ValueError(f"cannot pick {n_anchors} anchors from {N} items")
    check_binarize(binarize)
    problem = data_problem(matrix)
    if problem:  # before the slow fit, not as a NaN after it
        raise BuildError(f"the scores cannot be fitted: {problem}")
    irt_kwargs = dict(binarize=binarize, random_state=seed, **(irt_params or {}))
    if keep_design is not None:
        pb, rows_in, cols_in = _kept_problem(matrix, keep_design, n_seeds, irt_kwargs)
    else:
        pb, rows_in, cols_in = _fresh_problem(matrix, scenario_order, subscenario_weights, n_anchors, design,
                                              n_seeds, irt_kwargs)
    # one BLAS/OpenMP thread: results then do not depend on the machine's thread count
    # (and on 2 cores single-threaded BLAS was also the faster); the blocks of rows that the
    # fit frees are reused instead of being handed back to the kernel (system time)
    with threadpool_limits(limits=1), keep_freed_blocks():
        result = _fit(pb, n_dims, int(n_folds), validation_fraction, seed, float(kappa), progress, metadata,
                      binarize, [matrix.models[i] for i in rows_in])
    bad = non_finite(result.estimator)
    if bad:
        _refuse_non_finite(bad)
    if keep_design is not None:
        est = result.estimator
        result.estimator = est.replace(metadata={**est.metadata, "re_estimates": re_estimates(keep_design, est)})
        result.report["kept_design"] = {"version": keep_design.version, "design_hash": keep_design.design_hash,
                                        "irt_only_items": int(len(cols_in) - len(pb.items))}
    # anchors as positions of the caller's matrix (the estimator itself holds item ids); items
    # outside the design (IRT-only) have no stratum (-1)
    a = result.anchors
    labels = np.full(matrix.shape[1], -1, dtype=np.int64)
    labels[cols_in[: len(pb.items)]] = a.labels
    result.anchors = AnchorSet(cols_in[a.positions], a.weights, labels, a.method, a.seed, a.strata)
    return result


def _kept_problem(matrix: ResponseMatrix, keep_design: TinyEstimator, n_seeds: int, irt_kwargs: dict):
    """The training problem of an update that keeps ``keep_design``'s design (:func:`fixed_design`), the
    rows (models) and the columns (the design's items, then the IRT-only ones) it takes from ``matrix``."""
    kept = fixed_design(keep_design, matrix)
    rows_in, cols_in = kept.rows, np.concatenate([kept.design_cols, kept.extra_cols])
    pb = _Problem(
        Y=matrix.compact.take(rows_in, kept.design_cols), items=list(keep_design.item_ids),
        balance=keep_design.balance.copy(), scen=kept.scenarios, scen_idx=keep_design.scenario_index.copy(),
        scen_names=list(keep_design.scenarios), k=len(keep_design.anchor_ids), design=keep_design.design,
        n_seeds=int(n_seeds), irt_kwargs=irt_kwargs, fixed=kept.anchors,
        Y_irt=matrix.compact.take(rows_in, cols_in) if kept.extra_cols.size else None,
    )
    return pb, rows_in, cols_in


def _fresh_problem(matrix: ResponseMatrix, scenario_order, subscenario_weights, n_anchors: int, design: str,
                   n_seeds: int, irt_kwargs: dict):
    """The training problem of a new design: the matrix in its canonical order (the same tiny benchmark
    from any layout of the same data), with the rows and columns it takes from ``matrix``."""
    rows_in, cols_in = matrix.canonical_order(scenario_order)
    # the canonical matrix as a compact copy (bytes for 0/1 scores): the only copy of the scores
    Y = matrix.compact.take(rows_in, cols_in)
    scen = matrix.scenarios()[cols_in].astype(str)
    scen_names = [str(s) for s in scenario_order] if scenario_order is not None else sorted(set(scen))
    scen_names = [str(s) for s in scen_names if s in set(scen)]
    pb = _Problem(
        Y=Y, items=[matrix.items[j] for j in cols_in],
        balance=balance_weights(scen, matrix.subscenarios()[cols_in], subscenario_weights),
        scen=scen,
        scen_idx=np.array([scen_names.index(s) for s in scen]), scen_names=scen_names, k=int(n_anchors),
        design=design, n_seeds=int(n_seeds), irt_kwargs=irt_kwargs,
    )
    return pb, rows_in, cols_in

def data_problem(matrix: ResponseMatrix, max_names: int = 5) -> str | None:
    """What makes ``matrix`` impossible to fit, in words, or None (cheap: one pass over the scores).

    A model without any score has no ability to fit; a matrix whose scores never differ between
    models on any item (a constant matrix above all) gives the IRT model nothing to fit: both
    used to fail only after the whole fit, as a NaN in a JSON file.
    """
    n, N = matrix.shape
    answered = np.zeros(n, dtype=np.int64)
    first, constant = None, True
    lo, hi = np.full(N, np.inf), np.full(N, -np.inf)
    for sl in row_chunks(n, N):  # blocks of rows: no float copy of a big (compact) matrix
        Y = matrix.score_rows(sl)
        obs = ~np.isnan(Y)
        answered[sl] = obs.sum(axis=1)
        values = Y[obs]
        if values.size:
            first = values[0] if first is None else first
            constant = constant and bool((values == first).all())
        lo = np.minimum(lo, np.where(obs, Y, np.inf).min(axis=0))
        hi = np.maximum(hi, np.where(obs, Y, -np.inf).max(axis=0))
    empty = np.flatnonzero(answered == 0)
    if empty.size:
        names = ", ".join(str(matrix.models[i]) for i in empty[:max_names])
        more = f" and {empty.size - max_names} more" if empty.size > max_names else ""
        return (f"{empty.size} model(s) have no scores at all (every item empty): {names}{more}; remove them from "
                "the table or give their scores")
    if first is not None and constant:
        return (f"every score in the matrix is {first:g}: nothing tells the models or the items apart (is it "
                "the right metric or column?)")
    if not (hi > lo).any():
        return ("no item's score differs between the models (each item has one score for every model that "
                "answered it), so the items cannot tell the models apart")
    return None


def non_finite(est: TinyEstimator) -> list[str]:
    """The estimator's fields that hold NaN or an infinity (empty: all finite)."""
    bad = [name for name in ("A", "b", "prior_mean", "prior_cov", "ridge_coef", "anchor_weights")
           if getattr(est, name, None) is not None and not np.isfinite(np.asarray(getattr(est, name), float)).all()]
    return bad + [f"{key} of {scen}" for scen, params in est.params.items() for key in _non_finite_settings(params)]


def _non_finite_settings(params: Mapping) -> list[str]:
    """The keys of one scenario's settings whose value (or a number in it) is NaN or an infinity."""
    out = []
    for key, value in params.items():
        flat = np.asarray(value, dtype=object).ravel().tolist() if isinstance(value, (list, tuple)) else [value]
        if any(isinstance(v, float) and not np.isfinite(v) for v in flat):
            out.append(key)
    return out


def _refuse_non_finite(bad: list[str]) -> None:
    raise BuildError(f"the fit gave values that are not finite ({', '.join(bad[:5])}): these scores do not "
                     "determine the IRT model (too few scores, or items that hardly differ between models)")


def _fit(pb: _Problem, n_dims, n_folds, validation_fraction, seed, kappa, progress, metadata, binarize,
         models) -> FitResult:
    Y, S = pb.Y, pb.S
    n, N = Y.shape
    rng = np.random.default_rng(seed)
    steps = bar(total=n_folds + 3, desc="fit", enabled=progress)
    # --- 2. the IRT dimension, once
    dims_scores: dict = {}
    if n_dims is None:
        steps.set_postfix_str("choosing the IRT dimension")
        n_dims, dims_scores = IRTModel(**pb.irt_kwargs).select_dims(pb.irt_input())
    steps.update()
    # --- 3. the anchors of the stratified design: drawn once, before any fit uses them
    anchors = pb.fixed
    if anchors is None and pb.design == "stratified":
        counts = Y.col_counts()
        easiness = np.where(counts > 0, Y.col_sums() / np.maximum(counts, 1), 0.5)
        anchors = stratified_anchors(easiness, pb.k, pb.balance, pb.scen, seed=seed)
    # --- 4. out-of-fold estimates
    truth_all = true_scores(Y, pb.balance, pb.scen_idx, S)
    perm = rng.permutation(n)
    if n_folds == 1:
        n_val = max(2, int(round(validation_fraction * n)))
        folds = [np.sort(perm[:n_val])]
    else:
        folds = [np.sort(f) for f in np.array_split(perm, n_folds)]
    keys = ("irt", "se_irt", "pirt", "se_pirt", "db", "se_db", "ridge", "answered")
    oof = {key: np.full((n, S), np.nan) for key in keys}
    part: dict = {key: [] for key in keys + ("model",)}
    held = np.zeros(n, dtype=bool)
    fold_irt = None
    for r, val in enumerate(folds):
        steps.set_postfix_str(f"fold {r + 1}/{len(folds)}")
        train = np.setdiff1d(np.arange(n), val)
        est_r, anchors_r, fold_irt, _ = _fit_once(pb, Y, truth_all, train, n_dims, rng, anchors)
        comp = est_r.components(Y.dense(val, anchors_r.positions))
        for key in keys:
            oof[key][val] = comp[key]
        if pb.design == "stratified":  # the same models on partial runs (tinybench_builder.model.partial)
            masks, owner = partial_masks(pb.scen_idx[anchors_r.positions], len(val),
                                         derived_seed(seed, "partial_masks", r))
            pc = partial_components(est_r, Y.dense(val, anchors_r.positions), masks, owner, keys)
            for key in keys:
                part[key].append(pc[key])
            part["model"].append(val[owner])
        held[val] = True
        steps.update()
    rows = np.flatnonzero(held)
    truth = truth_all[rows]
    oof = {key: v[rows] for key, v in oof.items()}
    joined = {key: np.concatenate(v) for key, v in part.items()} if part["model"] else None
    part_truth = truth_all[joined["model"]] if joined is not None else None
    k_s = np.bincount(pb.scen_idx[anchors.positions] if anchors is not None else np.zeros(0, int), minlength=S)
    if anchors is not None:
        oof["n_anchors"] = k_s.astype(np.float64)
    # --- 5. calibration on the out-of-fold estimates
    steps.set_postfix_str("calibration")
    params = {name: _calibrate(oof, truth, s, len(rows), pb.design, kappa, truth_all[:, s], joined, part_truth,
                               float(k_s[s]))
              for s, name in enumerate(pb.scen_names)}
    report = validation_report(Y.view(rows), truth, oof, params, pb, pb.k, seed)
    report["oof"] = oof_arrays(oof, truth, params, pb.scen_names, [models[i] for i in rows])
    steps.update()
    # --- 6. the shipped estimator: the same procedure on every training model
    steps.set_postfix_str(f"final fit on {n} models x {N} items")
    irt = fold_irt.refit(pb.irt_input()) if len(folds) == 1 and fold_irt is not None else None  # one hold-out: warm start from its fit
    est, anchors, irt, extra = _fit_once(pb, Y, truth_all, np.arange(n), n_dims, rng, anchors, irt=irt)
    steps.update()
    steps.close()
    report.update(
        n_models=n, n_items=N, training_models=list(models), n_folds=len(folds), n_validation_models=int(len(rows)), n_dims=int(n_dims),
        dims_scores={str(k): v for k, v in dims_scores.items()}, design=pb.design, kappa=kappa,
        params={k: dict(v) for k, v in params.items()},
        **({"seed_mae": extra["seed_mae"], "chosen_seed": int(anchors.seed)} if "seed_mae" in extra else {}),
    )
    meta = {
        "builder_version": __version__, "n_anchors": int(pb.k), "seed": int(seed), "n_dims": int(n_dims),
        "n_training_models": int(n), "binarize": binarize, "design": pb.design,
        "chosen_estimator": chosen_estimator(report),
        "validation": {k: v for k, v in report.items() if k in ("table", "n_validation_models", "n_folds")},
        **(metadata or {}),
    }
    return FitResult(_calibrated(est, params, meta), anchors, irt, report)


def _calibrate(oof: dict, truth: np.ndarray, s: int, n_models: int, design: str, kappa: float,
               all_truth: np.ndarray, part: dict | None = None, part_truth: np.ndarray | None = None,
               n_anchors: float = 0.0) -> dict:
    """One scenario's settings from its out-of-fold estimates.

    * ``lambda``: gp-IRT's weight of irt (MAE-best on a grid, the original);
    * ``pirt_weight``: share of p-IRT in the model-based estimate (MAE-best on a grid);
    * ``sigma``: root-mean-square error of the model-based estimate;
    * ``sigma_partial``: how that error grows on the partial runs (:func:`fit_growth`);
    * ``range``: the training models' score range (all of them);
    * ``interval_scale``: the factor on the model-based error (composite) or on gp-IRT's
      error such that the out-of-fold 95% intervals cover, widened by Student's t.
    """
    t = truth[:, s]
    ok = np.isfinite(t)
    get = {key: v[ok, s] for key, v in oof.items() if key != "n_anchors"}
    t = t[ok]
    lam = choose_lambda(get["irt"], get["pirt"], t) if ok.any() else 0.5
    finite = all_truth[np.isfinite(all_truth)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    out = {"lambda": lam, "range": [max(lo, 0.0), min(hi, 1.0)], "kappa": kappa}
    if design == "kmeans":
        gp, se = gp_blend(get["irt"], get["pirt"], get["se_irt"], get["se_pirt"], lam)
        out.update(method="gpirt", interval_scale=interval_scale(gp, se, t, n_models=n_models))
        return out
    a = float(MIX_GRID[int(np.argmin([np.mean(np.abs(a * get["pirt"] + (1 - a) * get["ridge"] - t))
                                       for a in MIX_GRID]))])
    mb = a * get["pirt"] + (1 - a) * get["ridge"]
    sigma = float(np.sqrt(np.mean((mb - t) ** 2))) if t.size else 0.0
    out.update(method="composite", pirt_weight=a, sigma=min(sigma, 1.0), design_slope=DESIGN_SLOPE)
    sets = [(get, t)]
    if part is not None and part_truth is not None:
        pt = part_truth[:, s]
        pok = np.isfinite(pt) & (part["answered"][:, s] > 0)
        pget = {key: v[pok, s] for key, v in part.items() if key != "model"}
        pt = pt[pok]
        pmb = a * pget["pirt"] + (1 - a) * pget["ridge"]
        out["sigma_partial"] = fit_growth((pmb - pt) ** 2, pget["answered"], n_anchors, min(sigma, 1.0))
        sets.append((pget, pt))
    out["interval_scale"] = model_part_scale(sets, a, out, n_models, n_anchors)
    return out
