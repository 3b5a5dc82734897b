"""Score matrices simulated from known IRT parameters (tests, demos, benchmarks)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit

from builder.params import DIMS, SEED
from builder.read.matrix import ResponseMatrix


def simulate_responses(
    n_models: int = 80,
    n_items: int = 2000,
    n_dims: int = 2,
    seed: int = 0,
    missing: float = 0.0,
    subscenarios: int = 0,
    soft: bool = False,
    holdout: int = 0,
) -> tuple[ResponseMatrix, dict]:
    """Draw 0/1 scores (or soft scores = the probabilities) from a 2PL model.

    Returns the matrix and the true parameters ``{"theta", "A", "b", "P"}``. Item ids are
    ``<index>``, or ``sub<s>.<index within s>`` with subscenarios. ``holdout``: that many more
    models from the same item parameters (new models to estimate, every item evaluated), in
    ``params["holdout"]`` (a :class:`ResponseMatrix`, models ``sim-new-model-<i>``) with their
    true full scores in ``params["holdout_truth"]``; drawn after everything else, so the
    matrix is the same with or without them.
    """
    if n_models < 1 or n_items < 1:
        raise ValueError("n_models and n_items must be positive")
    n_dims = DIMS.check(n_dims)
    seed = SEED.check(seed)
    if isinstance(holdout, bool) or int(holdout) != holdout or holdout < 0:
        raise ValueError(f"holdout must be a non-negative integer, got {holdout!r}")
    if not 0 <= missing < 1:
        raise ValueError(f"missing must be in [0, 1), got {missing!r}")
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal((n_models, n_dims))
    A = np.abs(rng.normal(0.0, 1.0, (n_items, n_dims))) * (1.2 / np.sqrt(n_dims)) + 0.1
    b = rng.normal(0.0, 1.5, n_items)
    P = expit(theta @ A.T - b)
    Y = P.copy() if soft else (rng.random(P.shape) < P).astype(np.float64)
    if missing:
        Y[rng.random(Y.shape) < missing] = np.nan
    if subscenarios:
        sub = np.sort(rng.integers(0, subscenarios, n_items))
        counters: dict[int, int] = {}
        items = []
        for s in sub:
            items.append(f"sub{s}.{counters.get(s, 0)}")
            counters[s] = counters.get(s, 0) + 1
        info = pd.DataFrame({"subscenario": [f"sub{s}" for s in sub]}, index=items)
    else:
        items = [str(j) for j in range(n_items)]
        info = None
    models = [f"sim-model-{i:04d}" for i in range(n_models)]
    params = {"theta": theta, "A": A, "b": b, "P": P}
    if holdout:
        theta_h = rng.standard_normal((int(holdout), n_dims))
        P_h = expit(theta_h @ A.T - b)
        Y_h = P_h.copy() if soft else (rng.random(P_h.shape) < P_h).astype(np.float64)
        names = [f"sim-new-model-{i:04d}" for i in range(int(holdout))]
        params.update(holdout=ResponseMatrix(Y_h, names, list(items), info), holdout_truth=Y_h.mean(1),
                      holdout_theta=theta_h)
    return ResponseMatrix(Y, models, items, info), params
