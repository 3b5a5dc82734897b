"""Out-of-fold partial runs: what calibrates the estimate when only some anchors are answered.

A model is often scored on part of a tiny benchmark: ``lm_eval --limit n`` answers the first
n rows, a crashed job some of them. The model-based estimate loses precision as answers drop,
and so must its interval. During cross-fitting each held-out model is therefore also
estimated from subsets of its anchor results (per scenario: n = a fraction of the
scenario's anchors, one random subset and the first n in anchor order, the tiny split's
row order); :func:`fit_growth` fits how the model-based error grows with k / n, and the
interval scale is calibrated on these rows too (:mod:`tinybench_builder.model.fitting`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["PARTIAL_FRACTIONS", "partial_masks", "partial_components", "fit_growth"]

#: answered fractions of the out-of-fold partial runs
PARTIAL_FRACTIONS = (0.05, 0.1, 0.25, 0.5, 0.75)
_CELLS = 4_000_000  # rows x items per components() call: bounds its (rows, items) work arrays (~32 MB each)


def partial_masks(anchor_scenario: np.ndarray, n_models: int, seed: int,
                  fractions=PARTIAL_FRACTIONS) -> tuple[np.ndarray, np.ndarray]:
    """Answered-anchor masks of the partial runs and the model each belongs to.

    For every model, fraction f and scenario s (``k_s`` anchors): ``max(1, round(f k_s))``
    anchors answered, once drawn at random and once the first ones in anchor order.
    Returns ``(masks (m, k) bool, model (m,) int)``.
    """
    anchor_scenario = np.asarray(anchor_scenario)
    k = anchor_scenario.shape[0]
    groups = [np.flatnonzero(anchor_scenario == s) for s in np.unique(anchor_scenario)]
    rng = np.random.default_rng([int(seed), 15])
    masks, owner = [], []
    for i in range(n_models):
        for f in fractions:
            rand, first = np.zeros(k, dtype=bool), np.zeros(k, dtype=bool)
            for cols in groups:
                n = max(1, int(round(f * cols.size)))
                rand[rng.choice(cols, n, replace=False)] = True
                first[cols[:n]] = True
            masks += [rand, first]
            owner += [i, i]
    return np.array(masks, dtype=bool).reshape(-1, k), np.array(owner, dtype=np.int64)


def partial_components(est, Ya: np.ndarray, masks: np.ndarray, owner: np.ndarray, keys) -> dict:
    """``est.components`` of the partial runs (the anchors outside each mask unanswered)."""
    out: dict = {key: [] for key in keys}
    chunk = max(16, _CELLS // max(len(est.item_ids), 1))
    for start in range(0, masks.shape[0], chunk):
        sl = slice(start, start + chunk)
        rows = np.where(masks[sl], Ya[owner[sl]], np.nan)
        comp = est.components(rows)
        for key in keys:
            out[key].append(comp[key])
    return {key: np.concatenate(v) for key, v in out.items()}


def fit_growth(err2: np.ndarray, answered: np.ndarray, n_anchors: float, sigma: float) -> float:
    """``growth`` of ``sigma_n^2 = sigma^2 + growth^2 (k / n - 1)`` by least squares on the
    partial runs' squared errors ``err2`` (n = ``answered``), never negative."""
    x = n_anchors / np.maximum(np.asarray(answered, dtype=np.float64), 1.0) - 1.0
    y = np.asarray(err2, dtype=np.float64) - sigma**2
    ok = np.isfinite(y) & (x > 0)
    if not ok.any():
        return 0.0
    g2 = float(np.sum(x[ok] * y[ok]) / np.sum(x[ok] ** 2))
    return float(min(np.sqrt(max(g2, 0.0)), 1.0))
