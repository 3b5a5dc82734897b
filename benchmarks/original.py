"""The ORIGINAL tinyBenchmarks per-model estimation path, re-implemented as a speed baseline.

Mirrors, step for step and with the same numerical choices, ``evaluate()`` together with
``fit_theta()``, ``item_curve()`` and ``sigmoid()`` of ``tinyBenchmarks/__init__.py`` in
the repository felipemaiapolo/tinyBenchmarks (Maia Polo et al. 2024, "tinyBenchmarks:
evaluating LLMs with fewer examples"; the same formulas are in ``tutorials/utils.py``
(``item_curve``) and ``tutorials/irt.py`` (``estimate_ability_parameters``)). Written
from reading that code, not copied. What one call of :func:`original_estimate` does,
as one call of the original ``evaluate()`` does for one model:

1. ``y_full``: zeros of length N with the anchor results written in by a Python loop
   over ``enumerate(seen_examples)``;
2. theta: ``scipy.optimize.minimize(neg_log_like, zeros(D), method="BFGS")`` with no
   ``jac`` (scipy then differentiates numerically, D + 1 likelihood evaluations per
   gradient); the negative log-likelihood indexes ``y_full``, ``A`` and ``B`` with the
   Python list of seen items *inside* the objective on every evaluation, and uses
   ``log(P + eps)`` / ``log(1 - P + eps)`` with ``eps = 1e-10``;
3. ``item_curve(theta, a, b) = sigmoid(clip(a * theta - b, -30, 30).sum(axis=1))`` with
   ``A`` of shape (1, D, N) and ``B`` of shape (1, 1, N) -- note that the difficulty is
   subtracted inside the per-dimension sum, so it enters D times (``a.theta - D b``),
   and the clip is per dimension; both kept as in the original (the modified py-irt
   fork the original trained with uses the same ``sum_d(a_d theta_d - b)`` logit, see
   :mod:`benchmarks.pyirt_baseline`). :func:`to_original_params` converts our
   ``(N, D)`` / ``(N,)`` parameters so that the logits agree;
4. the unseen list ``[i for i in range(N) if i not in seen_examples]`` with
   ``seen_examples`` a Python list (O(N k) list membership);
5. the per-scenario lists ``[s for s in seen if s in scenario_positions]`` and
   ``[s for s in unseen if s in scenario_positions]`` with the scenario's positions a
   Python list (O(N^2 / 2) comparisons for a scenario of N items; the original does this
   for every scenario on every call; ``scenario_lists=False`` skips this step, which
   leaves the lists and results unchanged for the single scenario here);
6. ``irt = sum(anchor_weights * y[seen])``; ``pirt = l * mean((w * y)[seen]) +
   (1 - l) * mean((w * P)[unseen])`` with ``l = k / N``; ``gpirt = lambd * irt +
   (1 - lambd) * pirt``.

Deviations (none changes the arithmetic of one scenario):

* one scenario per call, covering all N items of ``A``/``B`` (the original loops over
  the scenarios of a bundle, each with its own anchors and lambda, sharing one theta);
* the original's ``number_of_examples`` is a hard-coded 100 (anchors per scenario); here
  ``k = len(anchor_positions)``, the same number whenever k = 100;
* the parameters come as arguments instead of being unpickled from
  ``tinyBenchmarks.pkl`` on every call, and ``balance_weights`` is given instead of being
  rebuilt (the original rebuilds it each call, and because of its indentation only the
  last subscenario of each scenario gets a weight; pass the weights you want);
* ``balance_weights`` follows the original's convention: mean 1 over the scenario's
  items (``N_sce / (n_sub * n_i)``), ones when there are no subscenarios (``None``).

Measured here (2 shared cores, simulated D = 2 parameters, k = 100 anchors): ~0.017 s per
call at N = 1273; at N = 28659 ~6 s per call with ``scenario_lists=True`` (~5.95 s of it
the scenario lists, ~0.06 s the unseen list, ~0.01 s the BFGS fit) and ~0.05 s with
``scenario_lists=False``; the same results either way.

Differences to our :class:`tinybench_builder.estimator.TinyEstimator` are intended (posterior-
averaged probabilities, an ability prior, a calibrated lambda), so the numbers differ
slightly; this module only serves timing comparisons (``benchmarks.speed``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy.optimize import minimize

#: the original's constant in ``log(P + eps)``
EPS = 1e-10


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def original_item_curve(theta: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """P(correct) as the original computes it: theta (1, D, 1), a (1, D, n), b (1, 1, n) -> (1, n)."""
    return _sigmoid(np.clip(a * theta - b, -30, 30).sum(axis=1))


def original_fit_theta(y_full: np.ndarray, seen_examples: list, A: np.ndarray, B: np.ndarray,
                       eps: float = EPS) -> np.ndarray:
    """Ability by BFGS with numerical gradients from zeros; returns shape (1, D, 1)."""
    D = A.shape[1]

    def neg_log_like(x):
        # indexing with the Python list on every evaluation, as the original does
        P = original_item_curve(x.reshape(1, D, 1), A[:, :, seen_examples], B[:, :, seen_examples]).squeeze()
        ys = y_full[seen_examples]
        return -np.sum(ys * np.log(P + eps) + (1 - ys) * np.log(1 - P + eps))

    return minimize(neg_log_like, np.zeros(D), method="BFGS").x[None, :, None]


def original_estimate(
    y_anchor: Sequence[float],
    anchor_positions: Sequence[int],
    anchor_weights: Sequence[float],
    A: np.ndarray,
    B: np.ndarray,
    balance_weights: np.ndarray | None,
    lambd: float,
    *,
    scenario_lists: bool = True,
) -> dict:
    """irt / p-IRT / gp-IRT of one model the way the original ``evaluate()`` computes them.

    Parameters
    ----------
    y_anchor : (k,) scores of the model on the anchors, in ``anchor_positions`` order
    anchor_positions : (k,) item indices (0..N-1) of the anchors
    anchor_weights : (k,) the original's ``examples_weights`` (sum to 1)
    A : (1, D, N) discriminations; B : (1, 1, N) difficulties (original shapes,
        see :func:`to_original_params`)
    balance_weights : (N,) mean-1 item weights, or None for ones
    lambd : the gp-IRT weight of ``irt``
    scenario_lists : True (default) does step 5 of the module doc as the original does
        (``s in positions`` over a Python list of the scenario's N positions: ~N^2/2
        comparisons, about 6 s per call at N = 28659 on this machine, which dominates the
        call); False skips it (the scenario is all N items, so the lists are unchanged)
        and times the rest alone. The results are identical.

    Returns ``{"irt", "pirt", "gpirt"}`` as floats.
    """
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    if A.ndim != 3 or A.shape[0] != 1 or B.shape != (1, 1, A.shape[2]):
        raise ValueError(f"A must be (1, D, N) and B (1, 1, N), got {A.shape} and {B.shape}")
    N = A.shape[2]
    seen_examples = [int(j) for j in anchor_positions]  # a Python list, as in the original
    y_input = np.asarray(y_anchor, dtype=np.float64)
    if y_input.shape != (len(seen_examples),):
        raise ValueError(f"y_anchor must have one score per anchor ({len(seen_examples)}), got {y_input.shape}")
    weights = np.asarray(anchor_weights, dtype=np.float64)
    balance = np.ones(N) if balance_weights is None else np.asarray(balance_weights, dtype=np.float64)
    scenario_positions = list(range(N))  # the single scenario's positions, a Python list

    # 1. y over all items, anchors written in one by one
    y = np.zeros(N)
    for i, j in enumerate(seen_examples):
        y[j] = y_input[i]

    # 2. ability by BFGS with finite-difference gradients
    theta = original_fit_theta(y, seen_examples, A, B)

    # 4. unseen items by list membership
    unseen_examples = [i for i in range(N) if i not in seen_examples]

    # 5. the scenario's seen / unseen items, again by list membership
    N_sce = len(scenario_positions)
    if scenario_lists:
        seen_sce = [s for s in seen_examples if s in scenario_positions]
        unseen_sce = [s for s in unseen_examples if s in scenario_positions]
    else:
        seen_sce, unseen_sce = seen_examples, unseen_examples

    # 6. the three estimates
    data_part = ((balance * y)[seen_sce]).mean()
    irt_part = (balance * original_item_curve(theta.reshape(1, A.shape[1], 1), A, B))[0, [unseen_sce]].mean()
    pirt_lambd = len(seen_examples) / N_sce
    irt = (weights * y[seen_sce]).sum()
    pirt = pirt_lambd * data_part + (1 - pirt_lambd) * irt_part
    gpirt = lambd * irt + (1 - lambd) * pirt
    return {"irt": float(irt), "pirt": float(pirt), "gpirt": float(gpirt)}


def original_estimate_many(Y_anchor: np.ndarray, anchor_positions, anchor_weights, A, B,
                           balance_weights, lambd: float, *, scenario_lists: bool = True) -> list[dict]:
    """One :func:`original_estimate` call per row of ``Y_anchor`` (models x k), as the
    original is used (one ``evaluate()`` per model)."""
    return [original_estimate(row, anchor_positions, anchor_weights, A, B, balance_weights, lambd,
                              scenario_lists=scenario_lists)
            for row in np.asarray(Y_anchor, dtype=np.float64)]


def to_original_params(discrimination: np.ndarray, difficulty: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Our item parameters (``A`` (N, D), ``b`` (N,), logit ``theta.a - b``) in the
    original's shapes: ``A`` (1, D, N) and ``B`` (1, 1, N) with ``B = b / D``, since the
    original's logit is ``sum_d (a_d theta_d - B)`` (equal logits up to the per-dimension
    clip at +-30)."""
    a = np.asarray(discrimination, dtype=np.float64)
    b = np.asarray(difficulty, dtype=np.float64)
    if a.ndim == 1:
        a = a[:, None]
    D = a.shape[1]
    return a.T[None, :, :].copy(), (b / D)[None, None, :].copy()


def original_balance_weights(N: int, subscenario_positions: dict | None = None) -> np.ndarray:
    """Mean-1 balance weights ``N / (n_sub * n_i)`` per subscenario (the *intended*
    formula of the original; its ``evaluate()`` assigns them to the last subscenario only)."""
    w = np.ones(N)
    if subscenario_positions:
        n_sub = len(subscenario_positions)
        for pos in subscenario_positions.values():
            w[list(pos)] = N / (n_sub * len(pos))
    return w
