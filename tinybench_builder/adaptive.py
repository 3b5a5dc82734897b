"""Adaptive evaluation: ask each model the items that tell most about it, with an interval that holds.

This file is standalone (numpy and scipy only, nothing of the package) and is shipped next to
``estimator.py`` in every tiny benchmark folder. It is used through the estimator::

    from estimator import TinyEstimator
    est = TinyEstimator.load("path/to/tinyMMLU")          # or TinyEstimator.from_hub(...)
    s = est.adaptive(budget=200, seed=0)                  # start={...}: results already in hand
    while not s.done:
        ids = s.next_items(10)                            # ids among ALL N items of the benchmark
        s.record({i: evaluate(i) for i in ids})           # scores in [0, 1], any order, any batch size
    s.result()                                            # {'score', 'ci_low', 'ci_high', 'se', ...}

How it works (the design and why the interval needs no IRT model to hold)
------------------------------------------------------------------------
The target is the model's full score ``theta = sum_j c_j y_j`` over the N items (``c`` the
benchmark's weights: balance weights normalised per scenario, averaged over the scenarios of a
bundle), where ``y_j`` is the model's fixed result on item j. The only randomness is which
items the session asks.

* **Draws with known probabilities, from the past only.** Before each batch the session fits
  the model's ability by MAP on every result known so far (the training models' abilities as
  prior) and predicts every item, ``f_j`` (the posterior-averaged IRT probability). Items are
  then drawn one after another, without replacement, with probability
  ``q_j = (1 - tau) h_j / sum h + tau c_j / sum c`` over the items not yet asked, where
  ``h_j = c_j sqrt(f_j (1 - f_j))`` (the predicted spread of the residual ``y_j - f_j``: the
  variance-minimising rule when the predictions are right) and ``tau`` (:data:`DEFAULT_MIXING`)
  mixes in the weights so that every item keeps a floor ``tau c_j / sum c``. ``q`` depends on
  the results recorded before the draw, never on the result of the item drawn.
* **Estimate.** Draw ``d`` (item ``i``) gives the increment
  ``phi_d = sum_{j known before d} c_j y_j + sum_{j not asked before d} c_j f_j + c_i (y_i - f_i) / q_i``
  (known items count with their result, the others with their prediction, plus the
  inverse-probability-weighted residual of the drawn item: sequential augmented IPW, the
  sampling-without-replacement form of Des Raj 1956). Whatever ``f`` is, ``E[phi_d | past] =
  theta`` exactly, so ``M_T = sum_d (phi_d - theta)`` is a martingale and the estimate, the mean
  of the ``phi_d``, is unbiased for every model, however wrong the IRT model is for it. The IRT
  model only decides how small the variance is.
* **Interval.** The increments are martingale differences, bounded because ``c_i / q_i <= 1 /
  tau``. Their cross products have mean zero, so ``V = sum_d (phi_d - mean)^2 / (T (T - 1))`` is
  an exactly unbiased estimate of the estimate's variance at a fixed number of draws T, under any
  adaptive rule; the interval is ``mean +- t_{T-1} sqrt(V)``, justified by the martingale central
  limit theorem (Hall & Heyde 1980; its conditions: bounded increments, here by the floor, and a
  stable average conditional variance). It is the theory of active inference (Zrnic & Candes
  2024) and FAQ (Wu, Nair & Candes 2026) in its without-replacement form: sampling *with*
  replacement would make the increments i.i.d.-like but re-ask items whose residual is already
  known; without replacement, a known item's residual is exactly zero and its probability is
  set to zero, which keeps the conditional mean exact. Nothing in the validity argument uses
  the IRT model; it uses only that ``q`` is computed before each draw and has the floor.
  By default (``variance_prior``, :data:`DEFAULT_VARIANCE_PRIOR`) the per-draw variance is the
  empirical one shrunk towards the IRT model's expected per-draw variance by 5 pseudo-draws,
  with t at ``T - 1 + 5`` degrees of freedom: at 10-50 draws the empirical variance of skewed
  increments (low scores, soft scores) is often too small; from a few hundred draws on the prior
  is negligible (still consistent: the empirical part dominates).
* **Batches.** ``next_items(n)`` draws n items one after another from the same prediction (a
  draw only needs the identities of the earlier draws, not their results), so a GPU can
  evaluate them together; each draw keeps its own increment. ``record`` accepts results in any
  order: an increment enters the estimate once its draw and every earlier draw are recorded.
* **Warm start.** ``start`` (results already in hand, e.g. the tiny split's) are known items
  from the outset: they count with their results, inform the first prediction and are never
  asked again. How they were chosen does not matter (the remaining sum is a fixed number given
  them).
* **Skips.** ``record({item: None})`` (or :meth:`AdaptiveSession.skip`) says an asked item has
  no result (the harness failed on it, the model cannot take it). The item is never asked again
  and the session asks another one instead: the budget counts the draws *with* a result, and at
  most ``max_skips`` skips are taken (default: the budget; :data:`DEFAULT_MAX_SKIPS` without one),
  so every answer pattern ends, a model that answers nothing included (its result has no score,
  and ``note`` says why). A skipped draw stays a draw of the design: it was drawn with its
  probability ``q``, and what it reveals, "no result", is a value like any other. With ``R`` the
  items that have a result, the target becomes the score over ``R``,
  ``theta_R = sum_R c_j y_j / sum_R c_j`` (per scenario): a ratio of two fixed totals, the
  numerator ``sum_j c_j y_j [j in R]`` and the denominator ``sum_j c_j [j in R]``. Each is
  estimated by its own sequential AIPW martingale over *all* the draws, skipped ones included
  (the prediction of an unasked item is ``r f_j`` and ``r``, with ``r`` the share of the earlier
  draws that had a result), so **each total is exactly unbiased** and the reported score is
  their ratio, consistent with a delta-method interval (the usual ratio estimator: bias of
  order 1/T). This holds whenever ``R`` does not depend on the session's draws: a result that is
  missing for a reason of the item and the model (a fixed set), or at random given the item (each
  item's result missing with some probability independently of the draws, "missing at random
  given the item": then conditionally on which items would fail if asked). What is *not*
  estimated without bias is the score over the whole pool: a skipped item's result is never
  imputed. Inclusion probabilities: an item is drawn at draw d with probability ``q_d(j)``
  whether it turns out to have a result or not, and the answered draws are not a sample with
  known probabilities by themselves (their conditional probabilities ``q_d(j) / q_d(R)`` involve
  the unknown ``R``): that is why the skipped draws stay in both martingales. Without a skip the
  denominator's increments are exactly 1 and the session is the one above, bit for bit.
* **Stopping.** ``budget`` (a fixed number of draws) gives the interval above.
  ``target_halfwidth`` stops as soon as the half-width reaches it, after at least
  ``min_draws`` draws: a data-dependent stop, for which the fixed-T interval is asymptotically
  valid (Chow & Robbins 1965) but not exact; prefer a budget when the interval matters.

Determinism: the same estimator, arguments, seed and sequence of ``next_items``/``record`` calls
(with the same results) give the same items, bit for bit (a crashed run can be replayed from
its log).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
from scipy.special import expit
from scipy.stats import t as student_t

#: the version of this file's API; ``estimator.py`` checks it when it loads the file
API_VERSION = 1
#: share of the draw probability spread by the benchmark's weights (the floor; chosen on the
#: development protocol of ``python -m benchmarks.adaptive --dev``)
DEFAULT_MIXING = 0.2
#: exponent of the predicted residual variance in the draw rule (1: its square root)
DEFAULT_TEMPERING = 1.0
#: factor on the ability prior's covariance
DEFAULT_PRIOR_SCALE = 1.0
#: pseudo-draws of the IRT model's per-draw variance in the interval's variance (chosen on the
#: development protocol: it lifts the coverage at the smallest budgets, where the increments' own
#: variance is too noisy and too often small, at little cost in width elsewhere)
DEFAULT_VARIANCE_PRIOR = 5.0
#: draws before ``target_halfwidth`` may stop the session
DEFAULT_MIN_DRAWS = 30
#: skips (asked items without a result) after which a session without a budget stops asking
#: (with a budget, the budget is the default)
DEFAULT_MAX_SKIPS = 100
_EPS = 1e-6

__all__ = ["AdaptiveSession", "API_VERSION", "DEFAULT_MIXING", "DEFAULT_TEMPERING", "DEFAULT_PRIOR_SCALE",
           "DEFAULT_MIN_DRAWS", "DEFAULT_MAX_SKIPS", "DEFAULT_VARIANCE_PRIOR"]


class AdaptiveSession:
    """One model's adaptive evaluation over every item of a benchmark (module docstring).

    Build it with ``TinyEstimator.adaptive`` (or :meth:`from_estimator`); the constructor takes
    plain arrays.

    Parameters
    ----------
    item_ids : sequence of str (N,)
    A, b : ndarray (N, D), (N,)
        IRT discriminations and difficulties: ``P(correct) = sigmoid(theta . a_j - b_j)``.
    weights : ndarray (N,)
        Positive item weights of the full score; normalised here to sum to 1 per scenario.
    scenario_index : ndarray (N,) of int; scenario_names : sequence of str
        A bundle's headline score is the mean of its scenarios' scores.
    prior_mean, prior_cov : ndarray (D,), (D, D)
        Gaussian prior of the ability (the training models').
    budget : int, optional
        Items to ask with a result (not counting ``start``; a skipped item is replaced). At
        least one of ``budget`` and ``target_halfwidth``; without a budget the session may ask
        every item.
    target_halfwidth : float, optional
        Stop once the interval's half-width is at most this (after ``min_draws`` draws).
    seed : int
        Seed of the draws.
    start : mapping item id -> score, optional
        Results already in hand (the tiny split's, a previous run's).
    pool : sequence of item ids, optional
        Restrict the session to these items (default: all N). The estimate is then the score
        over them (weights renormalised per scenario); every scenario needs an item.
    mixing : float
        ``tau`` in (0, 1]: the share of the draw probability spread by the weights (the floor).
    tempering : float
        ``beta`` in [0, 2]: ``h_j = c_j (f_j (1 - f_j))^(beta / 2)`` (1: the predicted residual
        spread; 0: the weights alone, i.e. plain weighted sampling).
    prior_scale : float
        Multiplies the ability prior's covariance (> 1 lets the prediction leave the training
        models' range faster).
    calibrate : bool
        Recalibrate the predictions' logits (``alpha + beta z``) on the recorded draws, each
        against the prediction it had when it was drawn.
    variance_floor : bool
        Never report a standard error below the one the IRT model expects (each draw's variance
        if the results were Bernoulli with the predicted probabilities): guards small samples whose
        residuals happen to look small; it can only widen the interval.
    variance_prior : float
        ``nu`` >= 0: the per-draw variance of the interval is the empirical one shrunk towards the
        one the IRT model expects, ``(nu V_model + (T - 1) V_emp) / (nu + T - 1)``, with Student's t
        at ``T - 1 + nu`` degrees of freedom (0: the empirical variance alone; default
        :data:`DEFAULT_VARIANCE_PRIOR`).
    min_draws : int
        Draws before ``target_halfwidth`` may stop the session.
    confidence : float
        Level of the interval.
    offset_scale : float
        Multiplies ``b`` in the logit (the original release's D-dimensional difficulty: D).
    max_skips : int, optional
        Skips (asked items recorded without a result) after which the session stops asking
        (default: the budget; :data:`DEFAULT_MAX_SKIPS` without a budget).
    """

    def __init__(
        self,
        item_ids: Sequence[str],
        A: np.ndarray,
        b: np.ndarray,
        weights: np.ndarray,
        scenario_index: np.ndarray,
        scenario_names: Sequence[str],
        prior_mean: np.ndarray,
        prior_cov: np.ndarray,
        *,
        budget: int | None = None,
        target_halfwidth: float | None = None,
        seed: int = 0,
        start: Mapping[str, Any] | None = None,
        pool: Sequence[str] | None = None,
        mixing: float = DEFAULT_MIXING,
        tempering: float = DEFAULT_TEMPERING,
        prior_scale: float = DEFAULT_PRIOR_SCALE,
        calibrate: bool = False,
        variance_floor: bool = False,
        variance_prior: float = DEFAULT_VARIANCE_PRIOR,
        min_draws: int = DEFAULT_MIN_DRAWS,
        confidence: float = 0.95,
        offset_scale: float = 1.0,
        max_skips: int | None = None,
    ) -> None:
        self._check_options(budget, target_halfwidth, mixing, tempering, prior_scale, calibrate, variance_floor,
                            min_draws, confidence, seed, max_skips)
        if isinstance(variance_prior, bool) or not isinstance(variance_prior, (int, float)) or not 0 <= variance_prior <= 1e4:
            raise ValueError(f"variance_prior must be a number of pseudo-draws in [0, 1e4], got {variance_prior!r}")
        self.variance_prior = float(variance_prior)
        A, b, w, scen = self._check_items(item_ids, A, b, weights, scenario_index, scenario_names, offset_scale)
        self._set_pool(pool, A, b, w, scen)
        self._set_prior(prior_mean, prior_cov)
        self._init_state()
        self._set_start(start)

    def _check_options(self, budget, target_halfwidth, mixing, tempering, prior_scale, calibrate, variance_floor,
                       min_draws, confidence, seed, max_skips) -> None:
        """Check and store the scalar options (and start the seed's random stream)."""
        self.budget = _check_count("budget", budget)
        if target_halfwidth is not None:
            if isinstance(target_halfwidth, bool) or not isinstance(target_halfwidth, (int, float)) \
                    or not math.isfinite(target_halfwidth) or not 0 < target_halfwidth < 1:
                raise ValueError(f"target_halfwidth must be a number in (0, 1), got {target_halfwidth!r}")
            target_halfwidth = float(target_halfwidth)
        self.target_halfwidth = target_halfwidth
        if self.budget is None and target_halfwidth is None:
            raise ValueError("give a budget (items to ask) or a target_halfwidth (or both)")
        if isinstance(mixing, bool) or not isinstance(mixing, (int, float)) or not 0 < mixing <= 1:
            raise ValueError(f"mixing must be a number in (0, 1], got {mixing!r}")
        self.mixing = float(mixing)
        for name, v, lo, hi in (("tempering", tempering, 0.0, 2.0), ("prior_scale", prior_scale, 1e-3, 1e3)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
                raise ValueError(f"{name} must be a number in [{lo:g}, {hi:g}], got {v!r}")
        self.tempering, self.prior_scale = float(tempering), float(prior_scale)
        self.calibrate = bool(calibrate)
        self.variance_floor = bool(variance_floor)
        self.min_draws = _check_count("min_draws", min_draws) or 2
        skips = _check_count("max_skips", max_skips)
        #: skips after which the session stops asking (the budget, or DEFAULT_MAX_SKIPS without one)
        self.max_skips = skips if skips is not None else (self.budget if self.budget is not None else DEFAULT_MAX_SKIPS)
        if not 0 < confidence < 1:
            raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
        self.confidence = float(confidence)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        self.seed = int(seed)
        self._rng = np.random.default_rng(self.seed)

    def _check_items(self, item_ids, A, b, weights, scenario_index, scenario_names, offset_scale):
        """The item ids, IRT parameters, weights and scenarios, checked: ``(A, b, w, scen)`` as arrays."""
        self.item_ids = [str(i) for i in item_ids]
        N = len(self.item_ids)
        self._index = {iid: j for j, iid in enumerate(self.item_ids)}
        if len(self._index) != N or N == 0:
            raise ValueError("item ids must be non-empty and unique")
        A = np.atleast_2d(np.asarray(A, dtype=np.float64))
        b = np.asarray(b, dtype=np.float64).reshape(-1) * float(offset_scale)
        if A.shape[0] != N or b.shape != (N,):
            raise ValueError(f"A must be ({N}, D) and b ({N},), got {A.shape} and {b.shape}")
        w = np.asarray(weights, dtype=np.float64).reshape(-1)
        scen = np.asarray(scenario_index).reshape(-1).astype(np.int64)
        self.scenarios = [str(s) for s in scenario_names]
        S = len(self.scenarios)
        if w.shape != (N,) or scen.shape != (N,) or not np.isfinite(w).all() or (w <= 0).any():
            raise ValueError("weights must be N positive numbers and scenario_index N integers")
        if S == 0 or scen.min() < 0 or scen.max() >= S:
            raise ValueError("scenario_index out of range of scenario_names")
        return A, b, w, scen

    def _set_pool(self, pool, A, b, w, scen) -> None:
        """The pool and its weights: ``c_s`` (per scenario, sums to 1 in s) and ``c`` (the headline)."""
        N, S = len(self.item_ids), len(self.scenarios)
        in_pool = np.ones(N, dtype=bool)
        if pool is not None:
            if isinstance(pool, (str, bytes)):
                raise ValueError("pool must be a sequence of item ids")
            in_pool[:] = False
            in_pool[[self._position(p, "pool") for p in pool]] = True
        mass = np.bincount(scen[in_pool], weights=w[in_pool], minlength=S)
        empty = [self.scenarios[s] for s in range(S) if mass[s] <= 0]
        if empty:
            raise ValueError(f"the pool has no item of scenario(s) {', '.join(empty)}")
        self._pos = np.flatnonzero(in_pool)  # pool positions among the N items
        n = self._pos.size
        self._local = {self.item_ids[j]: k for k, j in enumerate(self._pos)}
        self._A, self._b = A[self._pos], b[self._pos]
        self._scen = scen[self._pos]
        self._cs = w[self._pos] / mass[self._scen]  # weight within its scenario
        self._c = self._cs / S  # weight in the headline score
        self._AA = np.einsum("jd,je->jde", self._A, self._A).reshape(n, -1)

    def _set_prior(self, prior_mean, prior_cov) -> None:
        """The ability prior (scaled by ``prior_scale``): the starting point of every fit."""
        D = self._A.shape[1]
        self._mean = np.asarray(prior_mean, dtype=np.float64).reshape(-1)
        cov = np.atleast_2d(np.asarray(prior_cov, dtype=np.float64)) * self.prior_scale
        if self._mean.shape != (D,) or cov.shape != (D, D):
            raise ValueError("prior mean/cov do not match the IRT dimension")
        self._prec = np.linalg.inv(cov)
        self._theta = self._mean.copy()
        self._cov = cov.copy()

    def _init_state(self) -> None:
        """State: known results (start + recorded), skips, the draws in order (arrays grown as needed)."""
        n, S = self._pos.size, len(self.scenarios)
        self._y = np.full(n, np.nan)  # results known (NaN: not known, or no result: see _skipped)
        self._skipped = np.zeros(n, dtype=bool)  # asked, recorded without a result
        self._n_skipped = 0
        self._start = np.zeros(n, dtype=bool)
        self._n_fit = -1  # results the current prediction was fitted on
        self._f: np.ndarray | None = None  # the current prediction (refitted when results come)
        self._T = 0  # draws so far
        cap = min(n, self.budget) if self.budget is not None else min(n, 1024)
        self._dk = np.zeros(cap, dtype=np.int64)  # local position of each draw
        self._dq = np.zeros(cap)  # probability of each draw
        self._dfd = np.zeros(cap)  # prediction of the drawn item at its draw
        self._dz = np.zeros(cap)  # its IRT logit before any recalibration
        self._dF = np.zeros((cap, S))  # sum over the items not asked before the draw of c_s f, per scenario
        self._dV = np.zeros((cap, S + 1))  # the draw's variance under the model (per scenario, headline)
        self._cache: tuple | None = None  # (n recorded, increments)
        self._stopped = False
        self._n_recorded = 0  # draws recorded: with a result or skipped

    def _set_start(self, start) -> None:
        """Results already in hand: known from the outset, never asked (NaN/None entries are ignored)."""
        if start:
            if not isinstance(start, Mapping):
                raise ValueError("start must map item ids to scores")
            for key, val in start.items():
                k = self._local_position(key, "start")
                self._y[k] = _score(val, str(key))
            self._start = ~np.isnan(self._y)
        self._start_idx = np.flatnonzero(self._start)
        self._known_start = np.bincount(self._scen, weights=np.where(self._start, self._cs * np.nan_to_num(self._y), 0.0),
                                        minlength=len(self.scenarios))

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_estimator(cls, est, **kwargs) -> "AdaptiveSession":
        """A session over the items of a ``TinyEstimator`` (its IRT parameters, weights and prior)."""
        return cls(est.item_ids, est.A, est.b, est.balance, est.scenario_index, est.scenarios, est.prior_mean,
                   est.prior_cov, confidence=kwargs.pop("confidence", est.confidence),
                   offset_scale=est.n_dims if est.design == "original" else 1.0, **kwargs)

    # ----------------------------------------------------------------- the loop
    @property
    def n_drawn(self) -> int:
        """Items asked so far (recorded or pending)."""
        return self._T

    @property
    def pending(self) -> list[str]:
        """Items asked whose result (or skip) is not recorded yet, in draw order."""
        k = self._dk[:self._T]
        return [self.item_ids[self._pos[j]] for j in k[np.isnan(self._y[k]) & ~self._skipped[k]]]

    @property
    def n_skipped(self) -> int:
        """Asked items recorded without a result (:meth:`skip`, or ``None`` in :meth:`record`)."""
        return self._n_skipped

    @property
    def done(self) -> bool:
        """True once no item is left to ask and every asked item is recorded (with a result or
        skipped): the budget is spent, the target half-width is reached, every item of the pool
        is known or skipped, or ``max_skips`` items were skipped. Every answer pattern gets here:
        each draw takes an item out of the pool, and a skip is never asked again."""
        return self._remaining() == 0 and self._n_recorded == self._T

    def next_items(self, n: int = 1) -> list[str]:
        """Draw up to ``n`` items to evaluate next (fewer when the budget or the pool runs out;
        ``[]`` once nothing is left to ask). May be called again before the previous items are
        recorded: the draws then use the results recorded so far."""
        count = _check_count("n", n)
        if count is None or count < 1:
            raise ValueError("n must be a positive integer")
        n = min(count, self._remaining())
        if n == 0:
            return []
        f = self._prediction()
        asked = self._asked_positions()
        n_avail = f.size - asked.size
        # the two components of q over the items not asked yet: h (the predicted residual spread)
        # and c (the weights, the floor); q = (1 - tau) h / H + tau c / C, renormalised after each
        # draw by drawing a component, then an item of it, and redrawing items taken in this batch
        h, c = self._hbase.copy(), self._c.copy()
        h[asked] = 0.0
        c[asked] = 0.0
        cum_h, cum_c = np.cumsum(h), np.cumsum(c)
        H, C = float(cum_h[-1]), float(cum_c[-1])
        F = self._Fall - np.bincount(self._scen[asked], weights=self._cf[asked], minlength=len(self.scenarios))
        # the variance of one draw if the predictions were right (y_j ~ Bernoulli(f_j)):
        # sum c^2 f (1 - f) (1 / q - 1) over the items not asked, per scenario and for the headline
        q0 = (1 - self.mixing) * h / H + self.mixing * c / C
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where(q0 > 0, f * (1 - f) * (1.0 / q0 - 1.0), 0.0)
        Vd = np.append(np.bincount(self._scen, weights=self._cs**2 * g, minlength=len(self.scenarios)),
                       float((self._c**2 * g).sum()))
        self._grow(self._T + n)
        out = []
        taken: set[int] = set()
        for _ in range(n):
            if len(taken) >= n_avail:
                break
            k = self._draw(cum_h, cum_c, H, C, h, c, taken)
            d = self._T
            self._dk[d], self._dq[d], self._dfd[d] = k, (1 - self.mixing) * h[k] / H + self.mixing * c[k] / C, f[k]
            self._dz[d] = self._zraw[k]
            self._dF[d] = F
            self._dV[d] = Vd
            F[self._scen[k]] -= self._cs[k] * f[k]
            H -= h[k]
            C -= c[k]
            taken.add(k)
            self._T += 1
            out.append(self.item_ids[self._pos[k]])
        return out

    def _draw(self, cum_h, cum_c, H, C, h, c, taken) -> int:
        """One item from q = (1 - tau) h / H + tau c / C over the items not taken (H, C: their masses)."""
        for _ in range(64):
            use_h = H > 0 and self._rng.random() >= self.mixing
            cum, w = (cum_h, h) if use_h else (cum_c, c)
            k = int(np.searchsorted(cum, self._rng.random() * cum[-1], side="right"))
            if k < w.size and w[k] > 0 and k not in taken:
                return k
        # many redraws (the batch took most of the remaining mass): draw from the masses left
        left = np.ones(h.size, dtype=bool)
        left[list(taken)] = False
        use_h = H > 0 and self._rng.random() >= self.mixing
        w = np.where(left, h if use_h else c, 0.0)
        cum = np.cumsum(w)
        k = int(np.searchsorted(cum, self._rng.random() * cum[-1], side="right"))
        return min(k, int(np.flatnonzero(w > 0)[-1]))

    def _grow(self, size: int) -> None:
        if size <= self._dk.size:
            return
        cap = max(size, 2 * self._dk.size)
        for name in ("_dk", "_dq", "_dfd", "_dz", "_dF", "_dV"):
            old = getattr(self, name)
            new = np.zeros((cap, *old.shape[1:]), dtype=old.dtype)
            new[:old.shape[0]] = old
            setattr(self, name, new)

    def record(self, results: Mapping[str, Any]) -> dict:
        """Record results ``{item_id: score}`` (scores in [0, 1]) of asked items; returns :meth:`result`.

        Any order and any subset of the pending items; recording an item again with the same
        score is a no-op. An item this session did not ask is refused (pass results you already
        have as ``start``): the estimate's validity rests on knowing why each item was asked.

        ``None`` (or NaN) records **no result** for the item, as :meth:`skip` does: the item is
        never asked again and does not count in the budget, so the session asks another one
        instead. The estimate is then of the score over the items that have a result (module
        docstring, *Skips*).
        """
        if not isinstance(results, Mapping):
            if type(results).__name__ == "Series" and type(results).__module__.startswith("pandas"):
                results = {str(k): v for k, v in results.items()}
            else:
                raise ValueError("record takes a mapping {item_id: score}")
        parsed = {}
        drawn = set(self._dk[:self._T].tolist())
        for key, val in results.items():
            k = self._local_position(key, "record")
            y = _score(val, str(key))
            if k not in drawn:
                raise ValueError(f"item {key!r} was not asked by this session"
                                 + (" (it is a start result)" if self._start[k] else "")
                                 + ": record only the items next_items returned")
            if self._skipped[k] and not math.isnan(y):
                raise ValueError(f"item {key!r} was already recorded without a result (skipped), now {y!r}")
            if not np.isnan(self._y[k]) and self._y[k] != y:
                now = "no result" if math.isnan(y) else repr(y)
                raise ValueError(f"item {key!r} was already recorded with score {float(self._y[k])!r}, now {now}")
            parsed[k] = y
        for k, y in parsed.items():
            if np.isnan(self._y[k]) and not self._skipped[k]:
                self._n_recorded += 1
                if math.isnan(y):
                    self._skipped[k] = True
                    self._n_skipped += 1
            if not math.isnan(y):
                self._y[k] = y
        return self.result()

    def skip(self, items: Sequence[str]) -> dict:
        """Record that asked ``items`` have no result (the model could not be evaluated on them):
        ``record({item: None, ...})``. The session asks other items instead; returns :meth:`result`."""
        if isinstance(items, (str, bytes)):
            items = [items]
        return self.record({i: None for i in items})

    # ----------------------------------------------------------------- the estimate
    def result(self) -> dict:
        """The estimate so far.

        ``score`` with ``ci_low``..``ci_high`` (the interval at ``confidence``) and ``se``;
        ``n_answered`` (results known: start + recorded), ``n_asked`` (items drawn),
        ``n_skipped`` (asked items recorded without a result), ``n_used`` (draws in the
        estimate: the recorded prefix of the draws), ``pending``, ``budget``, ``done``,
        ``prediction`` (the IRT model's own full-score prediction, for comparison only), ``note``
        (None, or why the estimate is not of the whole pool or is missing: skips) and, for
        bundles, ``scenarios`` with the same keys per scenario. Before two draws are recorded
        there is no interval (NaN); with no answered item there is no score (NaN, and a note).
        """
        per, head, T = self._estimates()
        S = len(self.scenarios)
        quant = self._quantile(T)
        pred = self._predicted_scores()

        def pack(score_se, extra):
            score, se = score_se
            half = quant * se if se > 0 else (0.0 if se == 0 else float("nan"))
            # a full score lies in [0, 1]: the estimate is clipped there (``unclipped``: the
            # design-based mean of the increments itself, exactly unbiased)
            out = {"score": float(min(max(score, 0.0), 1.0)) if math.isfinite(score) else score,
                   "ci_low": float(max(0.0, score - half)) if math.isfinite(half) else float("nan"),
                   "ci_high": float(min(1.0, score + half)) if math.isfinite(half) else float("nan"),
                   "se": se, "unclipped": float(score)}
            out.update(extra)
            return out

        res = pack(head, {"n_answered": self._n_answered(), "n_asked": self.n_drawn, "n_used": T,
                          "pending": self._T - self._n_recorded, "n_skipped": self._n_skipped,
                          "budget": self.budget, "done": self.done, "prediction": float(pred.mean()),
                          "method": "adaptive", "note": self._note(not math.isfinite(head[0]))})
        if S > 1:
            res["scenarios"] = {
                name: pack(per[s], {"n_answered": int(((~np.isnan(self._y)) & (self._scen == s)).sum()),
                                    "prediction": float(pred[s])})
                for s, name in enumerate(self.scenarios)}
        return res

    def _estimates(self) -> tuple[list[tuple[float, float]], tuple[float, float], int]:
        """``(per-scenario (score, se), headline (score, se), T)`` from the recorded prefix."""
        phi, T = self._increments()  # (T, S)
        S = len(self.scenarios)
        n_answered = self._n_answered()
        nan = float("nan")
        if n_answered + self._n_skipped == self._y.size:  # every item of the pool is known or skipped: exact
            if self._n_skipped:  # the score over the items with a result
                ok = ~np.isnan(self._y)
                mass = np.bincount(self._scen[ok], weights=self._cs[ok], minlength=S)
                tot = np.bincount(self._scen[ok], weights=self._cs[ok] * self._y[ok], minlength=S)
                exact = np.where(mass > 0, tot / np.where(mass > 0, mass, 1.0), nan)
            else:
                exact = np.array([(self._cs * np.where(self._scen == s, self._y, 0.0)).sum() for s in range(S)])
            se_exact = [0.0 if math.isfinite(v) else nan for v in exact]
            return ([(float(exact[s]), se_exact[s]) for s in range(S)],
                    (float(exact.mean()), 0.0 if math.isfinite(exact.mean()) else nan), T)
        if n_answered == 0 and self._n_skipped:  # nothing answered: no estimate (the note says why)
            return [(nan, nan)] * S, (nan, nan), T
        if T == 0:
            pred = self._predicted_scores()
            return [(float(pred[s]), nan) for s in range(S)], (float(pred.mean()), nan), T
        est = phi.mean(0)
        se = phi.std(0, ddof=1) / math.sqrt(T) if T > 1 else np.full(S, np.nan)
        head_phi = phi.mean(1)
        head_se = self._head_se(head_phi, T) if T > 1 else nan
        if self.variance_prior > 0 and T > 1:  # shrunk towards the model's per-draw variance (nu pseudo-draws)
            nu, model = self.variance_prior, self._dV[:T].mean(0)
            se = np.sqrt((nu * model[:S] + (T - 1) * phi.var(0, ddof=1)) / (nu + T - 1) / T)
        if self.variance_floor and T > 1:  # never below what the model expects (a floor only widens)
            floor = np.sqrt(self._dV[:T].sum(0)) / T
            se = np.maximum(se, floor[:S])
            head_se = max(head_se, float(floor[S]))
        return [(float(est[s]), float(se[s])) for s in range(S)], (float(head_phi.mean()), head_se), T

    def _head_se(self, head_phi: np.ndarray, T: int) -> float:
        """The headline's standard error from its T increments (with the variance prior, if any)."""
        emp = float(head_phi.var(ddof=1))
        if self.variance_prior > 0:
            nu = self.variance_prior
            emp = (nu * float(self._dV[:T, -1].mean()) + (T - 1) * emp) / (nu + T - 1)
        return math.sqrt(emp / T)

    def _n_answered(self) -> int:
        """Results known: start + recorded (skips excluded)."""
        return self._start_idx.size + self._n_recorded - self._n_skipped

    def _note(self, no_score: bool) -> str | None:
        """What the estimate is of when items were skipped (None without skips)."""
        if not self._n_skipped:
            return None
        stop = (f"; the session stopped asking after max_skips = {self.max_skips} skips"
                if self._n_skipped >= self.max_skips else "")
        if self._n_answered() == 0:
            return f"no result: every asked item ({self._n_skipped}) was skipped, so there is no estimate{stop}"
        if no_score:
            return (f"no result: {self._n_skipped} asked item(s) had no result (skipped), too many for the "
                    f"{self._n_answered()} results to estimate the score over the items that have one{stop}")
        return (f"{self._n_skipped} asked item(s) had no result (skipped): the estimate is of the score over the "
                f"items that have a result{stop}")

    def history(self) -> list[dict]:
        """One record per draw, in draw order: ``item``, ``probability`` (of its draw),
        ``prediction`` (of its result at the draw), ``score`` (None while pending or skipped),
        ``skipped`` and ``phi`` (its increment of the headline score, linearised with skips; None
        until it and every earlier draw are recorded)."""
        phi, T = self._increments()
        out = []
        for d in range(self._T):
            k = int(self._dk[d])
            y = self._y[k]
            out.append({"item": self.item_ids[self._pos[k]], "probability": float(self._dq[d]),
                        "prediction": float(self._dfd[d]), "score": None if np.isnan(y) else float(y),
                        "skipped": bool(self._skipped[k]),
                        "phi": float(phi[d].mean()) if d < T and math.isfinite(float(phi[d].mean())) else None})
        return out

    # ----------------------------------------------------------------- internals
    def _remaining(self) -> int:
        """Items the session may still ask."""
        if self._stopped or (self._n_skipped > 0 and self._n_skipped >= self.max_skips):
            return 0
        left = self._y.size - self._start_idx.size - self._T
        if self.budget is not None:  # the budget counts the draws with a result (or pending): a skip is replaced
            left = min(left, self.budget - (self.n_drawn - self._n_skipped))
        if left > 0 and self.target_halfwidth is not None:
            phi, T = self._increments()
            if T >= max(self.min_draws, 2) and T == self.n_drawn:
                half = self._quantile(T) * self._head_se(phi.mean(1), T)
                if half <= self.target_halfwidth:
                    self._stopped = True
                    return 0
        return max(left, 0)

    def _increments(self) -> tuple[np.ndarray, int]:
        """The increments (T, S) of the recorded prefix of the draws (module docstring); cached."""
        S = len(self.scenarios)
        if self._cache is not None and self._cache[0] == self._n_recorded:
            return self._cache[1], self._cache[1].shape[0]
        k = self._dk[:self._T]
        y = self._y[k]
        missing = np.flatnonzero(np.isnan(y) & ~self._skipped[k])
        T = int(missing[0]) if missing.size else k.size
        k, y = k[:T], y[:T]
        if self._skipped[k].any():
            phi = self._ratio_increments(k, y)
            self._cache = (self._n_recorded, phi)
            return phi, T
        sc = self._scen[k]
        rows = np.arange(T)
        contrib = np.zeros((T, S))
        contrib[rows, sc] = self._cs[k] * y  # c_s y of each draw, in its scenario
        known = self._known_start + np.cumsum(contrib, 0) - contrib  # known before draw d
        phi = known + self._dF[:T]
        phi[rows, sc] += self._cs[k] * (y - self._dfd[:T]) / self._dq[:T]
        self._cache = (self._n_recorded, phi)
        return phi, T

    def _ratio_increments(self, k: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Increments (T, S) when some draws were skipped: the score over the items with a result
        is a ratio of two totals, ``sum c y [has a result]`` and ``sum c [has a result]``, each
        estimated by its own martingale (module docstring, *Skips*); the returned rows are the
        ratio plus each draw's linearised increment (their mean is the ratio, their spread its
        delta-method variance)."""
        T, S = k.size, len(self.scenarios)
        rows, sc, cs, q = np.arange(T), self._scen[k], self._cs[k], self._dq[:T]
        has = (~self._skipped[k]).astype(np.float64)
        yv = np.where(has > 0, y, 0.0)
        # r: the predicted chance that an item not asked yet has a result, from the draws before
        # (the answered share, one answered draw as prior): known before the draw, as f is
        r = (1.0 + np.cumsum(has) - has) / (1.0 + rows)
        num, den, asked = np.zeros((T, S)), np.zeros((T, S)), np.zeros((T, S))
        num[rows, sc], den[rows, sc], asked[rows, sc] = cs * yv, cs * has, cs
        start_mass = np.bincount(self._scen, weights=np.where(self._start, self._cs, 0.0), minlength=S)
        unasked = 1.0 - start_mass - (np.cumsum(asked, 0) - asked)  # weight of the items not asked before d
        N = self._known_start + np.cumsum(num, 0) - num + r[:, None] * self._dF[:T]
        Dn = start_mass + np.cumsum(den, 0) - den + r[:, None] * unasked
        N[rows, sc] += cs * (yv - r * self._dfd[:T]) / q
        Dn[rows, sc] += cs * (has - r) / q
        n_bar, d_bar = N.mean(0), Dn.mean(0)
        answered = np.bincount(self._scen[self._known_positions()], minlength=S) > 0
        ok = answered & (d_bar > 0)
        theta = np.where(ok, n_bar / np.where(ok, d_bar, 1.0), np.nan)
        return theta + (N - theta * Dn) / np.where(ok, d_bar, 1.0)

    def _quantile(self, T: int) -> float:
        """Student's t quantile of the interval for T increments (NaN below 2)."""
        if T < 2:
            return float("nan")
        return _t_quantile(0.5 + self.confidence / 2, T - 1 + self.variance_prior)

    def _asked_positions(self) -> np.ndarray:
        """Local positions of the start items and of every draw."""
        return np.concatenate([self._start_idx, self._dk[:self._T]])

    def _known_positions(self) -> np.ndarray:
        """Local positions of every known result (start + recorded)."""
        k = self._dk[:self._T]
        return np.concatenate([self._start_idx, k[~np.isnan(self._y[k])]])

    def _prediction(self) -> np.ndarray:
        """Posterior-averaged IRT probability of every pool item, refitted on every known result
        (with what the draws and the estimate need of it: the draw weights h, c_s f and its sums)."""
        n_known = self._n_answered()
        if self._f is None or n_known != self._n_fit:
            idx = self._known_positions()
            self._theta, self._cov, z = self._fit_logits(idx, self._theta)
            self._zraw = z
            if self.calibrate:
                z = self._calibrated(z)
            f = expit(z)
            spread = np.clip(f * (1.0 - f), _EPS, None)
            spread = np.sqrt(spread) if self.tempering == 1.0 else spread ** (self.tempering / 2.0)
            self._f, self._hbase, self._cf = f, self._c * spread, self._cs * f
            self._Fall = np.bincount(self._scen, weights=self._cf, minlength=len(self.scenarios))
            self._n_fit = n_known
        assert self._f is not None
        return self._f

    def _fit_logits(self, idx: np.ndarray, theta0: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(theta, cov, z)``: the MAP ability on the known results ``idx`` and every pool item's
        posterior-averaged IRT logit."""
        theta, cov = _map_ability(self._A[idx], self._b[idx], self._y[idx], self._mean, self._prec, theta0)
        m = self._A @ theta - self._b
        s2 = self._AA @ cov.reshape(-1)
        return theta, cov, m / np.sqrt(1.0 + np.pi / 8.0 * s2)

    def _calibrated(self, z: np.ndarray) -> np.ndarray:
        """``alpha + beta z``: the logits recalibrated on the draws recorded so far, each against the
        raw logit it had at its draw (out-of-sample for the ability fit), MAP with priors
        alpha ~ N(0, 1), beta ~ N(1, 0.5^2); unchanged before 20 recorded draws."""
        T = self._T
        k = self._dk[:T]
        ok = ~np.isnan(self._y[k])
        if ok.sum() < 20:
            return z
        x, y = self._dz[:T][ok], self._y[k][ok]
        X = np.column_stack([np.ones_like(x), x])
        w = np.array([0.0, 1.0])
        prior_prec, prior_mean = np.diag([1.0, 4.0]), np.array([0.0, 1.0])
        for _ in range(20):
            p = expit(X @ w)
            grad = X.T @ (p - y) + prior_prec @ (w - prior_mean)
            H = (X * (p * (1 - p))[:, None]).T @ X + prior_prec
            step = np.linalg.solve(H, grad)
            w = w - step
            if np.abs(step).max() < 1e-8:
                break
        return w[0] + w[1] * z

    def _predicted_scores(self) -> np.ndarray:
        """(S,): known results plus predictions of the other items (the IRT model's estimate)."""
        self._prediction()
        k = self._known_positions()
        pred = self._Fall + np.bincount(self._scen[k], weights=self._cs[k] * self._y[k] - self._cf[k],
                                        minlength=len(self.scenarios))
        if not self._n_skipped:
            return pred
        sk = np.flatnonzero(self._skipped)  # the score over the items with a result: skipped ones leave it
        S = len(self.scenarios)
        num = pred - np.bincount(self._scen[sk], weights=self._cf[sk], minlength=S)
        den = 1.0 - np.bincount(self._scen[sk], weights=self._cs[sk], minlength=S)
        return np.where(den > 1e-12, num / np.where(den > 1e-12, den, 1.0), np.nan)

    def _position(self, key: Any, where: str) -> int:
        j = self._index.get(str(key))
        if j is None:
            raise ValueError(f"{where}: unknown item id {key!r}")
        return j

    def _local_position(self, key: Any, where: str) -> int:
        k = self._local.get(str(key))
        if k is None:
            self._position(key, where)
            raise ValueError(f"{where}: item {key!r} is not in this session's pool")
        return k


_T_QUANTILES: dict = {}


def _t_quantile(p: float, dof: float) -> float:
    key = (p, dof)
    if key not in _T_QUANTILES:
        _T_QUANTILES[key] = float(student_t.ppf(p, dof))
    return _T_QUANTILES[key]


def _map_ability(A, b, y, mean, prec, theta0, n_newton: int = 50):
    """MAP ability on the known results (soft labels allowed) and its Laplace covariance."""
    theta = np.array(theta0, dtype=np.float64)

    def neg_post(th):
        z = A @ th - b
        d = th - mean
        return float(-(y * z - np.logaddexp(0.0, z)).sum() + 0.5 * d @ prec @ d)

    f = neg_post(theta)
    for _ in range(n_newton):
        p = expit(A @ theta - b)
        grad = A.T @ (p - y) + prec @ (theta - mean)
        H = (A * (p * (1 - p))[:, None]).T @ A + prec
        step = np.linalg.solve(H, grad)
        t = 1.0
        for _ in range(30):
            cand = theta - t * step
            fc = neg_post(cand)
            if fc <= f + 1e-12:
                break
            t *= 0.5
        else:
            break
        theta, f = cand, fc
        if float(np.abs(t * step).max()) < 1e-7:
            break
    p = expit(A @ theta - b)
    H = (A * (p * (1 - p))[:, None]).T @ A + prec
    return theta, np.linalg.inv(H)


def _check_count(name: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def _score(v: Any, where: str) -> float:
    if v is None:
        return float("nan")
    if isinstance(v, (str, bytes)) or isinstance(v, (complex, np.complexfloating)):
        raise ValueError(f"score of {where!r} must be a number in [0, 1], got {v!r}")
    try:
        x = float(v)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"score of {where!r} is not a number: {v!r}") from exc
    if not math.isnan(x) and not 0.0 <= x <= 1.0:
        raise ValueError(f"score of {where!r} is {x!r}; scores must be in [0, 1]")
    return x
