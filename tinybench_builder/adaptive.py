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

Structure: :class:`AdaptiveSession` is a facade (the public API and the stopping rules) over
small parts with one job and their own data each: ``_Pool`` (the items and their weights),
``_Results`` (what is known: start, recorded results, skips), ``_Draws`` (the draw log),
``_Predictor`` (the ability fit and the IRT prediction), ``_Sampler`` (the draw rule) and
``_Estimate`` (the increments, the estimate and its variance).

Determinism: the same estimator, arguments, seed and sequence of ``next_items``/``record`` calls
(with the same results) give the same items, bit for bit (a crashed run can be replayed from
its log).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, NamedTuple, Sequence

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


class _Options(NamedTuple):
    """The session's scalar options, checked (:func:`_check_options`). A named tuple, not a
    dataclass: ``dataclass`` needs the module in ``sys.modules``, and a user may import this
    file by its path without registering it."""

    budget: int | None
    target_halfwidth: float | None
    mixing: float
    tempering: float
    prior_scale: float
    calibrate: bool
    variance_floor: bool
    variance_prior: float
    min_draws: int
    max_skips: int
    confidence: float
    seed: int


def _check_options(budget, target_halfwidth, mixing, tempering, prior_scale, calibrate, variance_floor,
                   variance_prior, min_draws, confidence, seed, max_skips) -> _Options:
    """The scalar options of :class:`AdaptiveSession`, checked (its docstring says what each means)."""
    budget = _check_count("budget", budget)
    if target_halfwidth is not None:
        if isinstance(target_halfwidth, bool) or not isinstance(target_halfwidth, (int, float)) \
                or not math.isfinite(target_halfwidth) or not 0 < target_halfwidth < 1:
            raise ValueError(f"target_halfwidth must be a number in (0, 1), got {target_halfwidth!r}")
        target_halfwidth = float(target_halfwidth)
    if budget is None and target_halfwidth is None:
        raise ValueError("give a budget (items to ask) or a target_halfwidth (or both)")
    if isinstance(mixing, bool) or not isinstance(mixing, (int, float)) or not 0 < mixing <= 1:
        raise ValueError(f"mixing must be a number in (0, 1], got {mixing!r}")
    for name, v, lo, hi in (("tempering", tempering, 0.0, 2.0), ("prior_scale", prior_scale, 1e-3, 1e3)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
            raise ValueError(f"{name} must be a number in [{lo:g}, {hi:g}], got {v!r}")
    min_draws = _check_count("min_draws", min_draws) or 2
    skips = _check_count("max_skips", max_skips)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if isinstance(variance_prior, bool) or not isinstance(variance_prior, (int, float)) or not 0 <= variance_prior <= 1e4:
        raise ValueError(f"variance_prior must be a number of pseudo-draws in [0, 1e4], got {variance_prior!r}")
    return _Options(
        budget=budget, target_halfwidth=target_halfwidth, mixing=float(mixing), tempering=float(tempering),
        prior_scale=float(prior_scale), calibrate=bool(calibrate), variance_floor=bool(variance_floor),
        variance_prior=float(variance_prior), min_draws=min_draws,
        # skips after which the session stops asking: the budget, or DEFAULT_MAX_SKIPS without one
        max_skips=skips if skips is not None else (budget if budget is not None else DEFAULT_MAX_SKIPS),
        confidence=float(confidence), seed=int(seed))


class _Pool:
    """The items of the session, fixed once built: ids, IRT parameters, weights and scenarios, checked,
    restricted to the pool (positions ``k`` of the other classes are *local*: among the pool's items).

    ``cs`` is each item's weight within its scenario (summing to 1 in each), ``c = cs / S`` its
    weight in the headline score."""

    def __init__(self, item_ids, A, b, weights, scenario_index, scenario_names, offset_scale, pool) -> None:
        self.item_ids = [str(i) for i in item_ids]
        N = len(self.item_ids)
        self.index = {iid: j for j, iid in enumerate(self.item_ids)}
        if len(self.index) != N or N == 0:
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
        self._restrict(pool, A, b, w, scen)

    def _restrict(self, pool, A, b, w, scen) -> None:
        """The pool and its weights: ``cs`` (per scenario, sums to 1 in s) and ``c`` (the headline)."""
        N, S = len(self.item_ids), len(self.scenarios)
        in_pool = np.ones(N, dtype=bool)
        if pool is not None:
            if isinstance(pool, (str, bytes)):
                raise ValueError("pool must be a sequence of item ids")
            in_pool[:] = False
            in_pool[[self.position(p, "pool") for p in pool]] = True
        mass = np.bincount(scen[in_pool], weights=w[in_pool], minlength=S)
        empty = [self.scenarios[s] for s in range(S) if mass[s] <= 0]
        if empty:
            raise ValueError(f"the pool has no item of scenario(s) {', '.join(empty)}")
        self.pos = np.flatnonzero(in_pool)  # pool positions among the N items
        self.size = n = self.pos.size
        self.local = {self.item_ids[j]: k for k, j in enumerate(self.pos)}
        self.A, self.b = A[self.pos], b[self.pos]
        self.scen = scen[self.pos]
        self.cs = w[self.pos] / mass[self.scen]  # weight within its scenario
        self.c = self.cs / S  # weight in the headline score
        self.AA = np.einsum("jd,je->jde", self.A, self.A).reshape(n, -1)  # a a' of each item, for the logit's spread

    def item(self, k: int) -> str:
        """The id of the pool item at local position ``k``."""
        return self.item_ids[self.pos[k]]

    def position(self, key: Any, where: str) -> int:
        """Position of item ``key`` among all N items (ValueError naming ``where`` if unknown)."""
        j = self.index.get(str(key))
        if j is None:
            raise ValueError(f"{where}: unknown item id {key!r}")
        return j

    def local_position(self, key: Any, where: str) -> int:
        """Local position of item ``key`` (ValueError if unknown or outside the pool)."""
        k = self.local.get(str(key))
        if k is None:
            self.position(key, where)
            raise ValueError(f"{where}: item {key!r} is not in this session's pool")
        return k


class _Draws:
    """The draws in order, with what the estimate needs of each, fixed at its draw (arrays grown
    as needed): its item, its probability, its item's prediction and raw logit, the predicted
    total of the items not asked before it, and its variance under the model."""

    _ARRAYS = ("dk", "dq", "dfd", "dz", "dF", "dV")

    def __init__(self, cap: int, S: int) -> None:
        self.T = 0  # draws so far
        self.dk = np.zeros(cap, dtype=np.int64)  # local position of each draw
        self.dq = np.zeros(cap)  # probability of each draw
        self.dfd = np.zeros(cap)  # prediction of the drawn item at its draw
        self.dz = np.zeros(cap)  # its IRT logit before any recalibration
        self.dF = np.zeros((cap, S))  # sum over the items not asked before the draw of c_s f, per scenario
        self.dV = np.zeros((cap, S + 1))  # the draw's variance under the model (per scenario, headline)

    @property
    def drawn(self) -> np.ndarray:
        """Local positions of the draws, in draw order."""
        return self.dk[:self.T]

    def grow(self, size: int) -> None:
        """Room for ``size`` draws."""
        if size <= self.dk.size:
            return
        cap = max(size, 2 * self.dk.size)
        for name in self._ARRAYS:
            old = getattr(self, name)
            new = np.zeros((cap, *old.shape[1:]), dtype=old.dtype)
            new[:old.shape[0]] = old
            setattr(self, name, new)

    def add(self, k: int, q: float, fd: float, z: float, F: np.ndarray, V: np.ndarray) -> None:
        """Append a draw (after :meth:`grow`); ``F`` and ``V`` are copied."""
        d = self.T
        self.dk[d], self.dq[d], self.dfd[d] = k, q, fd
        self.dz[d] = z
        self.dF[d] = F
        self.dV[d] = V
        self.T += 1


class _Results:
    """What is known of the model: the start results (never asked) and the recorded draws, with a
    result or skipped (recorded without one)."""

    def __init__(self, pool: _Pool, start: Mapping[str, Any] | None) -> None:
        n, S = pool.size, len(pool.scenarios)
        self.y = np.full(n, np.nan)  # results known (NaN: not known, or no result: see skipped)
        self.skipped = np.zeros(n, dtype=bool)  # asked, recorded without a result
        self.n_skipped = 0
        self.n_recorded = 0  # draws recorded: with a result or skipped
        self.start = np.zeros(n, dtype=bool)
        # results already in hand: known from the outset, never asked (NaN/None entries are ignored)
        if start:
            if not isinstance(start, Mapping):
                raise ValueError("start must map item ids to scores")
            for key, val in start.items():
                k = pool.local_position(key, "start")
                self.y[k] = _score(val, str(key))
            self.start = ~np.isnan(self.y)
        self.start_idx = np.flatnonzero(self.start)
        self.known_start = np.bincount(pool.scen, weights=np.where(self.start, pool.cs * np.nan_to_num(self.y), 0.0),
                                       minlength=S)

    def n_answered(self) -> int:
        """Results known: start + recorded (skips excluded)."""
        return self.start_idx.size + self.n_recorded - self.n_skipped

    def known_positions(self, drawn: np.ndarray) -> np.ndarray:
        """Local positions of every known result (start + recorded) given the draws ``drawn``."""
        return np.concatenate([self.start_idx, drawn[~np.isnan(self.y[drawn])]])

    def pending(self, drawn: np.ndarray) -> np.ndarray:
        """Local positions of the draws not recorded yet, in draw order."""
        return drawn[np.isnan(self.y[drawn]) & ~self.skipped[drawn]]

    def check(self, results: Mapping[str, Any], pool: _Pool, drawn: np.ndarray) -> dict[int, float]:
        """``{local position: score (NaN: no result)}`` of ``results``, refused unless every item
        was drawn and none contradicts what was recorded before (:meth:`AdaptiveSession.record`)."""
        parsed = {}
        was_drawn = set(drawn.tolist())
        for key, val in results.items():
            k = pool.local_position(key, "record")
            y = _score(val, str(key))
            if k not in was_drawn:
                raise ValueError(f"item {key!r} was not asked by this session"
                                 + (" (it is a start result)" if self.start[k] else "")
                                 + ": record only the items next_items returned")
            if self.skipped[k] and not math.isnan(y):
                raise ValueError(f"item {key!r} was already recorded without a result (skipped), now {y!r}")
            if not np.isnan(self.y[k]) and self.y[k] != y:
                now = "no result" if math.isnan(y) else repr(y)
                raise ValueError(f"item {key!r} was already recorded with score {float(self.y[k])!r}, now {now}")
            parsed[k] = y
        return parsed

    def add(self, parsed: Mapping[int, float]) -> None:
        """Record checked results (:meth:`check`); recording an item again is a no-op."""
        for k, y in parsed.items():
            if np.isnan(self.y[k]) and not self.skipped[k]:
                self.n_recorded += 1
                if math.isnan(y):
                    self.skipped[k] = True
                    self.n_skipped += 1
            if not math.isnan(y):
                self.y[k] = y


class _Predictor:
    """The IRT predictor: the model's ability fitted by MAP on every known result (the ability
    prior scaled by ``prior_scale``), every pool item's posterior-averaged probability ``f``, and
    what the draws and the estimate need of it (the draw weights ``h``, ``cs f`` and its sums).
    It refits only when the number of known results changed, from the previous fit."""

    def __init__(self, pool: _Pool, prior_mean, prior_cov, *, prior_scale: float, tempering: float,
                 calibrate: bool) -> None:
        self._pool = pool
        self.tempering, self.calibrate = tempering, calibrate
        D = pool.A.shape[1]
        self._mean = np.asarray(prior_mean, dtype=np.float64).reshape(-1)
        cov = np.atleast_2d(np.asarray(prior_cov, dtype=np.float64)) * prior_scale
        if self._mean.shape != (D,) or cov.shape != (D, D):
            raise ValueError("prior mean/cov do not match the IRT dimension")
        self._prec = np.linalg.inv(cov)
        self.theta = self._mean.copy()  # the starting point of every fit: the previous one
        self.cov = cov.copy()
        self._n_fit = -1  # results the current prediction was fitted on
        self.f: np.ndarray | None = None  # the current prediction (refitted when results come)
        # of the current prediction: the raw logits (before recalibration), the draw weights h, cs f, its sum per scenario
        self.zraw: np.ndarray = np.zeros(0)
        self.hbase: np.ndarray = np.zeros(0)
        self.cf: np.ndarray = np.zeros(0)
        self.Fall: np.ndarray = np.zeros(0)

    def update(self, results: _Results, draws: _Draws) -> np.ndarray:
        """Posterior-averaged IRT probability of every pool item, refitted on every known result."""
        n_known = results.n_answered()
        if self.f is None or n_known != self._n_fit:
            pool = self._pool
            idx = results.known_positions(draws.drawn)
            self.theta, self.cov, z = self._fit_logits(idx, results.y[idx], self.theta)
            self.zraw = z
            if self.calibrate:
                z = self._calibrated(z, results, draws)
            f = expit(z)
            spread = np.clip(f * (1.0 - f), _EPS, None)
            spread = np.sqrt(spread) if self.tempering == 1.0 else spread ** (self.tempering / 2.0)
            self.f, self.hbase, self.cf = f, pool.c * spread, pool.cs * f
            self.Fall = np.bincount(pool.scen, weights=self.cf, minlength=len(pool.scenarios))
            self._n_fit = n_known
        assert self.f is not None
        return self.f

    def _fit_logits(self, idx: np.ndarray, y: np.ndarray, theta0: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(theta, cov, z)``: the MAP ability on the known results ``y`` of items ``idx`` and every
        pool item's posterior-averaged IRT logit."""
        pool = self._pool
        theta, cov = _map_ability(pool.A[idx], pool.b[idx], y, self._mean, self._prec, theta0)
        m = pool.A @ theta - pool.b
        s2 = pool.AA @ cov.reshape(-1)
        return theta, cov, m / np.sqrt(1.0 + np.pi / 8.0 * s2)

    @staticmethod
    def _calibrated(z: np.ndarray, results: _Results, draws: _Draws) -> np.ndarray:
        """``alpha + beta z``: the logits recalibrated on the draws recorded so far, each against the
        raw logit it had at its draw (out-of-sample for the ability fit), MAP with priors
        alpha ~ N(0, 1), beta ~ N(1, 0.5^2); unchanged before 20 recorded draws."""
        T = draws.T
        k = draws.drawn
        ok = ~np.isnan(results.y[k])
        if ok.sum() < 20:
            return z
        x, y = draws.dz[:T][ok], results.y[k][ok]
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

    def predicted_scores(self, results: _Results, draws: _Draws) -> np.ndarray:
        """(S,): known results plus predictions of the other items (the IRT model's estimate)."""
        self.update(results, draws)
        pool = self._pool
        S = len(pool.scenarios)
        k = results.known_positions(draws.drawn)
        pred = self.Fall + np.bincount(pool.scen[k], weights=pool.cs[k] * results.y[k] - self.cf[k], minlength=S)
        if not results.n_skipped:
            return pred
        sk = np.flatnonzero(results.skipped)  # the score over the items with a result: skipped ones leave it
        num = pred - np.bincount(pool.scen[sk], weights=self.cf[sk], minlength=S)
        den = 1.0 - np.bincount(pool.scen[sk], weights=pool.cs[sk], minlength=S)
        return np.where(den > 1e-12, num / np.where(den > 1e-12, den, 1.0), np.nan)


class _Sampler:
    """The sampling design: items drawn one after another without replacement from
    ``q = (1 - tau) h / H + tau c / C`` over the items not asked yet (module docstring), from the
    seed's random stream; each draw is logged in :class:`_Draws` with its probability."""

    def __init__(self, mixing: float, seed: int) -> None:
        self.mixing = mixing
        self._rng = np.random.default_rng(seed)

    def draw(self, n: int, pool: _Pool, predictor: _Predictor, asked: np.ndarray, draws: _Draws) -> list[int]:
        """Draw up to ``n`` items (local positions) from the current prediction ``predictor.f``, none of
        ``asked``, and log them."""
        f = predictor.f
        assert f is not None
        tau = self.mixing
        n_avail = f.size - asked.size
        # the two components of q over the items not asked yet: h (the predicted residual spread)
        # and c (the weights, the floor); q = (1 - tau) h / H + tau c / C, renormalised after each
        # draw by drawing a component, then an item of it, and redrawing items taken in this batch
        h, c = predictor.hbase.copy(), pool.c.copy()
        h[asked] = 0.0
        c[asked] = 0.0
        cum_h, cum_c = np.cumsum(h), np.cumsum(c)
        H, C = float(cum_h[-1]), float(cum_c[-1])
        F = predictor.Fall - np.bincount(pool.scen[asked], weights=predictor.cf[asked], minlength=len(pool.scenarios))
        # the variance of one draw if the predictions were right (y_j ~ Bernoulli(f_j)):
        # sum c^2 f (1 - f) (1 / q - 1) over the items not asked, per scenario and for the headline
        q0 = (1 - tau) * h / H + tau * c / C
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where(q0 > 0, f * (1 - f) * (1.0 / q0 - 1.0), 0.0)
        Vd = np.append(np.bincount(pool.scen, weights=pool.cs**2 * g, minlength=len(pool.scenarios)),
                       float((pool.c**2 * g).sum()))
        draws.grow(draws.T + n)
        out: list[int] = []
        taken: set[int] = set()
        for _ in range(n):
            if len(taken) >= n_avail:
                break
            k = self._one(cum_h, cum_c, H, C, h, c, taken)
            draws.add(k, (1 - tau) * h[k] / H + tau * c[k] / C, f[k], predictor.zraw[k], F, Vd)
            F[pool.scen[k]] -= pool.cs[k] * f[k]
            H -= h[k]
            C -= c[k]
            taken.add(k)
            out.append(k)
        return out

    def _one(self, cum_h, cum_c, H, C, h, c, taken) -> int:
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


class _Estimate:
    """The estimate and its variance from the recorded prefix of the draws: the increments (cached
    by the number of recorded draws), each scenario's and the headline's ``(score, se)``, and the
    interval's t quantile (module docstring, *Estimate*, *Interval* and *Skips*)."""

    def __init__(self, pool: _Pool, results: _Results, draws: _Draws, *, variance_prior: float,
                 variance_floor: bool, confidence: float) -> None:
        self._pool, self._results, self._draws = pool, results, draws
        self.variance_prior, self.variance_floor, self.confidence = variance_prior, variance_floor, confidence
        self._cache: tuple | None = None  # (n recorded, increments)

    def increments(self) -> tuple[np.ndarray, int]:
        """The increments (T, S) of the recorded prefix of the draws (module docstring); cached."""
        pool, res, dr = self._pool, self._results, self._draws
        S = len(pool.scenarios)
        if self._cache is not None and self._cache[0] == res.n_recorded:
            return self._cache[1], self._cache[1].shape[0]
        k = dr.drawn
        y = res.y[k]
        missing = np.flatnonzero(np.isnan(y) & ~res.skipped[k])
        T = int(missing[0]) if missing.size else k.size
        k, y = k[:T], y[:T]
        if res.skipped[k].any():
            phi = self._ratio_increments(k, y)
            self._cache = (res.n_recorded, phi)
            return phi, T
        sc = pool.scen[k]
        rows = np.arange(T)
        contrib = np.zeros((T, S))
        contrib[rows, sc] = pool.cs[k] * y  # c_s y of each draw, in its scenario
        known = res.known_start + np.cumsum(contrib, 0) - contrib  # known before draw d
        phi = known + dr.dF[:T]
        phi[rows, sc] += pool.cs[k] * (y - dr.dfd[:T]) / dr.dq[:T]
        self._cache = (res.n_recorded, phi)
        return phi, T

    def _ratio_increments(self, k: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Increments (T, S) when some draws were skipped: the score over the items with a result
        is a ratio of two totals, ``sum c y [has a result]`` and ``sum c [has a result]``, each
        estimated by its own martingale (module docstring, *Skips*); the returned rows are the
        ratio plus each draw's linearised increment (their mean is the ratio, their spread its
        delta-method variance)."""
        pool, res, dr = self._pool, self._results, self._draws
        T, S = k.size, len(pool.scenarios)
        rows, sc, cs, q = np.arange(T), pool.scen[k], pool.cs[k], dr.dq[:T]
        has = (~res.skipped[k]).astype(np.float64)
        yv = np.where(has > 0, y, 0.0)
        # r: the predicted chance that an item not asked yet has a result, from the draws before
        # (the answered share, one answered draw as prior): known before the draw, as f is
        r = (1.0 + np.cumsum(has) - has) / (1.0 + rows)
        num, den, asked = np.zeros((T, S)), np.zeros((T, S)), np.zeros((T, S))
        num[rows, sc], den[rows, sc], asked[rows, sc] = cs * yv, cs * has, cs
        start_mass = np.bincount(pool.scen, weights=np.where(res.start, pool.cs, 0.0), minlength=S)
        unasked = 1.0 - start_mass - (np.cumsum(asked, 0) - asked)  # weight of the items not asked before d
        N = res.known_start + np.cumsum(num, 0) - num + r[:, None] * dr.dF[:T]
        Dn = start_mass + np.cumsum(den, 0) - den + r[:, None] * unasked
        N[rows, sc] += cs * (yv - r * dr.dfd[:T]) / q
        Dn[rows, sc] += cs * (has - r) / q
        n_bar, d_bar = N.mean(0), Dn.mean(0)
        answered = np.bincount(pool.scen[res.known_positions(dr.drawn)], minlength=S) > 0
        ok = answered & (d_bar > 0)
        theta = np.where(ok, n_bar / np.where(ok, d_bar, 1.0), np.nan)
        return theta + (N - theta * Dn) / np.where(ok, d_bar, 1.0)

    def estimates(self, predicted_scores: Callable[[], np.ndarray]
                  ) -> tuple[list[tuple[float, float]], tuple[float, float], int]:
        """``(per-scenario (score, se), headline (score, se), T)`` from the recorded prefix
        (``predicted_scores``: the IRT model's, used before any draw is recorded)."""
        pool, res, dV = self._pool, self._results, self._draws.dV
        phi, T = self.increments()  # (T, S)
        S = len(pool.scenarios)
        n_answered = res.n_answered()
        nan = float("nan")
        if n_answered + res.n_skipped == res.y.size:  # every item of the pool is known or skipped: exact
            if res.n_skipped:  # the score over the items with a result
                ok = ~np.isnan(res.y)
                mass = np.bincount(pool.scen[ok], weights=pool.cs[ok], minlength=S)
                tot = np.bincount(pool.scen[ok], weights=pool.cs[ok] * res.y[ok], minlength=S)
                exact = np.where(mass > 0, tot / np.where(mass > 0, mass, 1.0), nan)
            else:
                exact = np.array([(pool.cs * np.where(pool.scen == s, res.y, 0.0)).sum() for s in range(S)])
            se_exact = [0.0 if math.isfinite(v) else nan for v in exact]
            return ([(float(exact[s]), se_exact[s]) for s in range(S)],
                    (float(exact.mean()), 0.0 if math.isfinite(exact.mean()) else nan), T)
        if n_answered == 0 and res.n_skipped:  # nothing answered: no estimate (the note says why)
            return [(nan, nan)] * S, (nan, nan), T
        if T == 0:
            pred = predicted_scores()
            return [(float(pred[s]), nan) for s in range(S)], (float(pred.mean()), nan), T
        est = phi.mean(0)
        se = phi.std(0, ddof=1) / math.sqrt(T) if T > 1 else np.full(S, np.nan)
        head_phi = phi.mean(1)
        head_se = self.head_se(head_phi, T) if T > 1 else nan
        if self.variance_prior > 0 and T > 1:  # shrunk towards the model's per-draw variance (nu pseudo-draws)
            nu, model = self.variance_prior, dV[:T].mean(0)
            se = np.sqrt((nu * model[:S] + (T - 1) * phi.var(0, ddof=1)) / (nu + T - 1) / T)
        if self.variance_floor and T > 1:  # never below what the model expects (a floor only widens)
            floor = np.sqrt(dV[:T].sum(0)) / T
            se = np.maximum(se, floor[:S])
            head_se = max(head_se, float(floor[S]))
        return [(float(est[s]), float(se[s])) for s in range(S)], (float(head_phi.mean()), head_se), T

    def head_se(self, head_phi: np.ndarray, T: int) -> float:
        """The headline's standard error from its T increments (with the variance prior, if any)."""
        emp = float(head_phi.var(ddof=1))
        if self.variance_prior > 0:
            nu = self.variance_prior
            emp = (nu * float(self._draws.dV[:T, -1].mean()) + (T - 1) * emp) / (nu + T - 1)
        return math.sqrt(emp / T)

    def quantile(self, T: int) -> float:
        """Student's t quantile of the interval for T increments (NaN below 2)."""
        if T < 2:
            return float("nan")
        return _t_quantile(0.5 + self.confidence / 2, T - 1 + self.variance_prior)


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
        o = _check_options(budget, target_halfwidth, mixing, tempering, prior_scale, calibrate, variance_floor,
                           variance_prior, min_draws, confidence, seed, max_skips)
        # the options, as public attributes (read them; the parts below hold their own copies)
        self.budget, self.target_halfwidth, self.seed = o.budget, o.target_halfwidth, o.seed
        self.mixing, self.tempering, self.prior_scale = o.mixing, o.tempering, o.prior_scale
        self.calibrate, self.variance_floor, self.variance_prior = o.calibrate, o.variance_floor, o.variance_prior
        self.min_draws, self.confidence = o.min_draws, o.confidence
        #: skips after which the session stops asking (the budget, or DEFAULT_MAX_SKIPS without one)
        self.max_skips = o.max_skips
        self._pool = _Pool(item_ids, A, b, weights, scenario_index, scenario_names, offset_scale, pool)
        self.item_ids, self.scenarios = self._pool.item_ids, self._pool.scenarios
        self._predictor = _Predictor(self._pool, prior_mean, prior_cov, prior_scale=o.prior_scale,
                                     tempering=o.tempering, calibrate=o.calibrate)
        n = self._pool.size
        self._draws = _Draws(min(n, o.budget) if o.budget is not None else min(n, 1024), len(self.scenarios))
        self._results = _Results(self._pool, start)
        self._sampler = _Sampler(o.mixing, o.seed)
        self._estimate = _Estimate(self._pool, self._results, self._draws, variance_prior=o.variance_prior,
                                   variance_floor=o.variance_floor, confidence=o.confidence)
        self._stopped = False  # the target half-width was reached

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
        return self._draws.T

    @property
    def pending(self) -> list[str]:
        """Items asked whose result (or skip) is not recorded yet, in draw order."""
        return [self._pool.item(k) for k in self._results.pending(self._draws.drawn)]

    @property
    def n_skipped(self) -> int:
        """Asked items recorded without a result (:meth:`skip`, or ``None`` in :meth:`record`)."""
        return self._results.n_skipped

    @property
    def done(self) -> bool:
        """True once no item is left to ask and every asked item is recorded (with a result or
        skipped): the budget is spent, the target half-width is reached, every item of the pool
        is known or skipped, or ``max_skips`` items were skipped. Every answer pattern gets here:
        each draw takes an item out of the pool, and a skip is never asked again."""
        return self._remaining() == 0 and self._results.n_recorded == self._draws.T

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
        self._prediction()
        asked = np.concatenate([self._results.start_idx, self._draws.drawn])  # start items and every draw
        return [self._pool.item(k) for k in self._sampler.draw(n, self._pool, self._predictor, asked, self._draws)]

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
        self._results.add(self._results.check(results, self._pool, self._draws.drawn))
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
        per, head, T = self._estimate.estimates(self._predicted_scores)
        S = len(self.scenarios)
        quant = self._estimate.quantile(T)
        pred = self._predicted_scores()
        res = self._results

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

        out = pack(head, {"n_answered": res.n_answered(), "n_asked": self.n_drawn, "n_used": T,
                          "pending": self._draws.T - res.n_recorded, "n_skipped": res.n_skipped,
                          "budget": self.budget, "done": self.done, "prediction": float(pred.mean()),
                          "method": "adaptive", "note": self._note(not math.isfinite(head[0]))})
        if S > 1:
            scen = self._pool.scen
            out["scenarios"] = {
                name: pack(per[s], {"n_answered": int(((~np.isnan(res.y)) & (scen == s)).sum()),
                                    "prediction": float(pred[s])})
                for s, name in enumerate(self.scenarios)}
        return out

    def _note(self, no_score: bool) -> str | None:
        """What the estimate is of when items were skipped (None without skips)."""
        n_skipped, n_answered = self._results.n_skipped, self._results.n_answered()
        if not n_skipped:
            return None
        stop = (f"; the session stopped asking after max_skips = {self.max_skips} skips"
                if n_skipped >= self.max_skips else "")
        if n_answered == 0:
            return f"no result: every asked item ({n_skipped}) was skipped, so there is no estimate{stop}"
        if no_score:
            return (f"no result: {n_skipped} asked item(s) had no result (skipped), too many for the "
                    f"{n_answered} results to estimate the score over the items that have one{stop}")
        return (f"{n_skipped} asked item(s) had no result (skipped): the estimate is of the score over the "
                f"items that have a result{stop}")

    def history(self) -> list[dict]:
        """One record per draw, in draw order: ``item``, ``probability`` (of its draw),
        ``prediction`` (of its result at the draw), ``score`` (None while pending or skipped),
        ``skipped`` and ``phi`` (its increment of the headline score, linearised with skips; None
        until it and every earlier draw are recorded)."""
        phi, T = self._estimate.increments()
        dr, res = self._draws, self._results
        out = []
        for d in range(dr.T):
            k = int(dr.dk[d])
            y = res.y[k]
            out.append({"item": self._pool.item(k), "probability": float(dr.dq[d]),
                        "prediction": float(dr.dfd[d]), "score": None if np.isnan(y) else float(y),
                        "skipped": bool(res.skipped[k]),
                        "phi": float(phi[d].mean()) if d < T and math.isfinite(float(phi[d].mean())) else None})
        return out

    # ----------------------------------------------------------------- internals
    def _remaining(self) -> int:
        """Items the session may still ask (the stopping rules: budget, pool, max_skips, target_halfwidth)."""
        res = self._results
        if self._stopped or (res.n_skipped > 0 and res.n_skipped >= self.max_skips):
            return 0
        left = res.y.size - res.start_idx.size - self._draws.T
        if self.budget is not None:  # the budget counts the draws with a result (or pending): a skip is replaced
            left = min(left, self.budget - (self.n_drawn - res.n_skipped))
        if left > 0 and self.target_halfwidth is not None:
            phi, T = self._estimate.increments()
            if T >= max(self.min_draws, 2) and T == self.n_drawn:
                half = self._estimate.quantile(T) * self._estimate.head_se(phi.mean(1), T)
                if half <= self.target_halfwidth:
                    self._stopped = True
                    return 0
        return max(left, 0)

    def _prediction(self) -> np.ndarray:
        """Posterior-averaged IRT probability of every pool item, refitted on every known result."""
        return self._predictor.update(self._results, self._draws)

    def _predicted_scores(self) -> np.ndarray:
        """(S,): known results plus predictions of the other items (the IRT model's estimate)."""
        return self._predictor.predicted_scores(self._results, self._draws)


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
