"""Score matrices simulated from known IRT parameters (tests, demos, benchmarks)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit

from tinybench_builder.params import DIMS, SEED
from tinybench_builder.read.compact import CompactScores, row_chunks
from tinybench_builder.read.matrix import ResponseMatrix


def simulate_responses(
    n_models: int = 80,
    n_items: int = 2000,
    n_dims: int = 2,
    seed: int = 0,
    missing: float = 0.0,
    subscenarios: int = 0,
    soft: bool = False,
    probabilities: bool = True,
    holdout: int = 0,
) -> tuple[ResponseMatrix, dict]:
    """Draw 0/1 scores (or soft scores = the probabilities) from a 2PL model.

    Returns the matrix and the true parameters ``{"theta", "A", "b", "P"}`` (``"P"``, the
    (n_models, n_items) float64 probabilities, only with ``probabilities=True``). Item ids are
    ``<index>``, or ``sub<s>.<index within s>`` with subscenarios. The scores are drawn in
    blocks of models into compact storage (one byte per 0/1 score), the same numbers as one
    draw of the whole matrix. ``holdout``: that many more models from the same item parameters
    (new models to estimate, every item evaluated), in ``params["holdout"]`` (a
    :class:`ResponseMatrix`, models ``sim-new-model-<i>``) with their true full scores in
    ``params["holdout_truth"]``; drawn after everything else, so the matrix is the same with or
    without them.
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
    chunks = row_chunks(n_models, n_items)
    keep_p = probabilities or soft
    P_all = np.empty((n_models, n_items) if keep_p else (0, 0))
    values: np.ndarray = np.empty((n_models, n_items) if not soft else (0, 0), dtype=np.uint8)
    for sl in chunks:
        P = expit(theta[sl] @ A.T - b)
        if keep_p:
            P_all[sl] = P
        if not soft:  # the generator's uniforms in row-major order: the same draws as one call
            values[sl] = rng.random(P.shape) < P
    if soft:
        values = P_all.copy() if probabilities else P_all
    mask = None
    if missing:
        mask = np.empty((n_models, n_items), dtype=bool)
        for sl in chunks:
            mask[sl] = ~(rng.random((sl.stop - sl.start, n_items)) < missing)
        values[~mask] = 0
    scores = CompactScores(values, mask)
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
    params = {"theta": theta, "A": A, "b": b}
    if probabilities:
        params["P"] = P_all
    if holdout:
        theta_h = rng.standard_normal((int(holdout), n_dims))
        P_h = expit(theta_h @ A.T - b)
        Y_h = P_h.copy() if soft else (rng.random(P_h.shape) < P_h).astype(np.float64)
        names = [f"sim-new-model-{i:04d}" for i in range(int(holdout))]
        params.update(holdout=ResponseMatrix(Y_h, names, list(items), info), holdout_truth=Y_h.mean(1),
                      holdout_theta=theta_h)
    return ResponseMatrix(scores, models, items, info), params
