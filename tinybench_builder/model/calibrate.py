"""gp-IRT lambda and interval calibration on held-out (validation) training models.

Inputs are the estimator's parts on validation models (:meth:`TinyEstimator.components`)
and their true full scores; outputs are one lambda and one interval scale per scenario.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm
from scipy.stats import t as t_dist

from tinybench_builder.estimator import Calibration, DesignBased, ModelBased, composite, partial_sigma

LAMBDA_GRID = np.round(np.linspace(0.0, 1.0, 21), 2)


def choose_lambda(irt: np.ndarray, pirt: np.ndarray, truth: np.ndarray, grid: np.ndarray = LAMBDA_GRID) -> float:
    """The lambda of ``lambda * irt + (1 - lambda) * pirt`` with the lowest mean absolute error.

    Parameters
    ----------
    irt, pirt, truth : ndarray (n,)
        Estimates and true scores of validation models (pooled over anchor sets).
    """
    irt, pirt, truth = (np.asarray(x, dtype=np.float64).ravel() for x in (irt, pirt, truth))
    if not irt.shape == pirt.shape == truth.shape:
        raise ValueError(f"irt, pirt and truth must have one shape, got {irt.shape}, {pirt.shape}, {truth.shape}")
    ok = ~(np.isnan(irt) | np.isnan(pirt) | np.isnan(truth))
    if not ok.any():
        raise ValueError("no validation model with both estimates and a true score")
    errs = [np.abs(lam * irt[ok] + (1 - lam) * pirt[ok] - truth[ok]).mean() for lam in grid]
    return float(grid[int(np.argmin(errs))])


def interval_scale(
    estimate: np.ndarray, se: np.ndarray, truth: np.ndarray, confidence: float = 0.95, n_models: int | None = None
) -> float:
    """Factor c such that ``estimate ± z * c * se`` covers the validation truths.

    ``c`` is the larger of the root-mean-square standardized error (right for Gaussian
    errors) and the ``confidence`` quantile of the absolute standardized errors divided
    by z (guards against heavy tails). With fewer than 10 validation points the RMS
    alone is used: a quantile of so few points is mostly noise. The result is widened
    by ``t_{n_models} / z``: with the scale estimated from ``n_models`` models, a
    Student-t interval is the honest predictive interval.
    """
    estimate, se, truth = (np.asarray(x, dtype=np.float64).ravel() for x in (estimate, se, truth))
    ok = ~(np.isnan(estimate) | np.isnan(se) | np.isnan(truth)) & (se > 0)
    if ok.sum() < 2:
        return 1.0
    zstat = (estimate[ok] - truth[ok]) / se[ok]
    c = float(np.sqrt(np.mean(zstat**2)))
    z = norm.ppf(0.5 + confidence / 2)
    if ok.sum() >= 10:
        c = max(c, float(np.quantile(np.abs(zstat), confidence)) / z)
    # the scale itself is estimated from few models: widen by Student's t quantile
    # (a predictive interval), with the number of distinct validation models as dof
    dof = max(int(n_models if n_models is not None else ok.sum()), 1)
    return c * float(t_dist.ppf(0.5 + confidence / 2, dof)) / z


def coverage(estimate, half_width, truth) -> float:
    """Share of ``truth`` inside ``estimate ± half_width``."""
    estimate, half_width, truth = (np.asarray(x, dtype=np.float64) for x in (estimate, half_width, truth))
    return float(np.mean(np.abs(estimate - truth) <= half_width))


def model_part_scale(sets, a: float, p: dict, n_models, n_anchors, confidence: float = 0.95) -> float:
    """The factor c on the model-based error part such that the composite's intervals cover
    ``confidence`` of the out-of-fold truths in every set of estimates (full runs; partial
    runs) (smallest such c on a grid, at least 0.25), widened by Student's t for the number of
    models it was measured on."""
    z = norm.ppf(0.5 + confidence / 2)
    grid = np.exp(np.linspace(np.log(0.25), np.log(20.0), 250))
    c = float(grid[-1])
    for cand in grid:
        good = True
        for get, truth in sets:
            mb = a * get["pirt"] + (1 - a) * get["ridge"]
            score, se, _ = scenario_composite(get["db"], get["se_db"], mb, p, cand, get["answered"], n_anchors)
            if np.mean(np.abs(np.clip(score, 0.0, 1.0) - truth) <= z * se) < confidence:
                good = False
                break
        if good:
            c = float(cand)
            break
    dof = max(int(n_models), 1)
    return c * float(t_dist.ppf(0.5 + confidence / 2, dof)) / z


def scenario_composite(db, se_db, mb, p: dict, scale: float, answered=None, n_anchors: float = 0.0):
    """:func:`~tinybench_builder.estimator.composite` (score, se, weight of ``db``) of one scenario's
    out-of-fold parts with its settings ``p`` and the model-based error scaled by ``scale``; with
    ``answered``, the model-based error grown for partial runs (of ``n_anchors`` anchors)."""
    sigma = p["sigma"] if answered is None else partial_sigma(p["sigma"], p.get("sigma_partial", 0.0), answered,
                                                              n_anchors)
    return composite(DesignBased(db, se_db), ModelBased(mb, sigma),
                     Calibration(lo=p["range"][0], hi=p["range"][1], kappa=p["kappa"], interval_scale=scale))
