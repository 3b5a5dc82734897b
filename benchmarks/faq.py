"""FAQ (Wu, Nair & Candes 2026, "efficiently evaluating LLMs") as a peer of the adaptive benchmark.

The project's own implementation of FAQ's published algorithm, written from the paper and the
description of its public code (skbwu/efficiently-evaluating-llms: ``factor_models_cv.py``,
``analyzing_factor_models.py``, ``factor_models_final.py``, ``faq_val.py``,
``faq_val_analyzer.py``, ``faq_final.py``, ``baselines_all.py``); numpy only, run in-process by
:mod:`benchmarks.adaptive` on the same splits, budgets and test models as our session.

**Predictor.** A logistic factor model ``P(y_ij = 1) = sigmoid(u_i . v_j)`` (no intercept), fitted
on the training models' observed entries by full-batch AdamW (learning rate 1e-2, weight decay
``lambda``, 2,000 epochs, mean binary cross-entropy, standard normal initialisation, seed 858).
``K`` and ``lambda`` are chosen by FAQ's cross-validation: 5 folds over the *entries* of the
tuning models' matrix, the grid ``K in {8, 16, 32, 64}`` x ``lambda in {10, 1, ..., 1e-5}``,
the validation accuracy of ``p > 0.5``, and the one-standard-error rule (the smallest ``K``, then
the largest ``lambda``, whose mean accuracy is above the best one's mean minus its standard
deviation over the folds / sqrt(5)). Scores in [0, 1] that are not 0/1 (AlpacaEval 2.0) are fitted
as soft labels; their accuracy compares ``p > 0.5`` with ``y > 0.5``. Departure, for the 2-core
machine: ``lambda in {10, 1, 0.1}`` only, the three FAQ ever selected (its
``factor_model_selected_settings.csv``, 16 data settings); on the one split cross-validated with
the whole grid here (AlpacaEval 2.0, interpolation, seed 0) every ``lambda <= 0.01`` was at least
2.6 points of validation accuracy below the 1-SE cutoff.

**Session** (vectorised over models, seeds and settings). The new model's factor starts at the
training factors' mean with their covariance as prior; before every draw ``p = sigmoid(U V')``;
the draw probability mixes FAQ's two scores, the oracle-inspired ``h_o ~ sqrt(p (1 - p))`` and
the active-learning one ``h_a`` (softmax of ``log p(1-p) + 2 log|v' S (sum_j p(1-p) v_j / N)| -
log(1 + p(1-p) v' S v)``), ``h = ((1 - alpha_s) h_o + alpha_s h_a)^beta_s`` with
``alpha_s = max(0, 1 - (s + 1) / (rho n))`` and ``beta_s = beta0 min(1, (s + 1) / (gamma n))``,
then ``q = (1 - tau) h / sum h + tau / N``; one item is drawn **with replacement**; the increment
is ``phi_s = sum_j p_j + (z - p_I) / q_I``; the factor is updated by the rank-one Laplace step
``S -= w S v v' S / (1 + w v' S v)``, ``u += S (z - p_I) v`` (``w = p_I (1 - p_I)``). The
estimate is ``sum phi / (n N)``, its variance FAQ's ``[sum aipw^2 - sum_s (mean(z / q) -
sum_j p^(s))^2] / (n N^2)`` (clipped at 0), the interval ``estimate +- z_0.975 sqrt(v / n)``
with FAQ's clipping (``upper = max(.., 0)``, ``lower = min(.., 1)``).

**Tuning** (FAQ's ``faq_val.py``, on the training models only): the training models are split
80/20 by the protocol's own rule (interpolation: a random fifth; extrapolation: the strongest
fifth, as the test models are the strongest), the factor model is fitted on the 80% with the
cross-validated ``K, lambda``, and every setting of the grid ``beta0 in {.25, .5, .75, 1}``,
``rho in {0, .05, .25, .5, .75}``, ``gamma in {0, .05, .25, .5, .75}``, ``tau in {.05, .25, .5,
.75}`` (400) is run on the 20% with 5 seeds at each budget; the setting of smallest mean width
wins (FAQ's ``faq_val_analyzer.py``). One departure, for the 2-core machine: the search is by
successive halving (all 400 settings on the first seed, the 40 narrowest on all 5; the same
criterion, the mean width over the 5 seeds, picks among them), a fifth of the exhaustive
search's sessions; on the splits where both were run it picked the same setting (see
docs/ADAPTIVE.md). The final factor model is refitted on all training models.

**Uniform reference** (FAQ's ``baselines_all.py``, policy ``unif``, predictor zero): every item
is asked with probability ``n / N`` (Bernoulli), Horvitz-Thompson mean, variance
``sum xi (1 - pi) / pi^2 y^2 / N^2``, z interval clipped to [0, 1]. FAQ's ESS multiplier of a
method is ``(mean uniform width / mean method width)^2``.

**Cache.** The chosen hyperparameters of a split (``K, lambda`` with the cross-validation table,
the setting per budget with its tuning summary) are small JSON files
``benchmarks/cache/faq/<dataset>/<protocol>-<key>.json`` (committed: a rerun skips the
cross-validation and the grid, the expensive part), keyed by the training models' scores, the
protocol, the tuning split's seed and :data:`CODE_VERSION`; the final factors are ``.npz`` files
next to them (git-ignored, refitted in seconds). A lock file per split lets parallel tasks of
the same split (extrapolation's, whatever the seed) tune it once.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
from scipy.stats import norm

__all__ = ["FaqSetting", "GRID", "PROFILE", "set_profile", "fit_factors", "fit_factors_batch", "select_factors", "factor_prior", "faq_sessions", "tune_settings",
           "uniform_reference", "inner_split", "split_key", "tune_split", "faq_split", "CODE_VERSION", "DEFAULT_CACHE"]

#: bump when a fit, the tuning or the cache record changes meaning (the cache keys include it)
CODE_VERSION = 1
DEFAULT_CACHE = Path(__file__).resolve().parent / "cache" / "faq"

FACTOR_KS = (8, 16, 32, 64)
#: FAQ's grid is 10 ... 1e-5; it selected only 10, 1 and 0.1 (logs/factor_model_selected_settings.csv,
#: all 16 of its data settings), the ones kept here (see the module docstring)
FACTOR_LAMBDAS_FAQ = (1e1, 1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5)
FACTOR_LAMBDAS = (1e1, 1e0, 1e-1)
CV_FOLDS = 5
EPOCHS = 2000
LEARNING_RATE = 1e-2
FIT_SEED = 858
BETA0S = (0.25, 0.5, 0.75, 1.0)
RHOS = (0.0, 0.05, 0.25, 0.5, 0.75)
GAMMAS = (0.0, 0.05, 0.25, 0.5, 0.75)
TAUS = (0.05, 0.25, 0.5, 0.75)
TUNE_SEEDS = 5
#: settings that run on every tuning seed after all ran on the first (successive halving)
TUNE_KEEP = 40
VAL_SHARE = 0.2
Z95 = float(norm.ppf(0.975))


@dataclass(frozen=True)
class FaqSetting:
    """One point of FAQ's sampling grid."""

    beta0: float
    rho: float
    gamma: float
    tau: float


#: FAQ's grid of sampling settings (400)
GRID = tuple(FaqSetting(b, r, g, t) for r in RHOS for g in GAMMAS for b in BETA0S for t in TAUS)

#: what the tuning uses (FAQ's, above); :func:`set_profile` ``quick`` shrinks it for smoke tests only
PROFILE: dict[str, Any] = {}


def set_profile(quick: bool = False) -> None:
    """FAQ's tuning (default) or a tiny one for smoke tests (``quick``: K 8, lambda 1, 2 folds, 100
    epochs, 4 settings, 1 seed; never for reported numbers). Cache keys include the profile."""
    PROFILE.clear()
    if quick:
        PROFILE.update(ks=(8,), lambdas=(1.0,), folds=2, epochs=100, grid=GRID[::100], tune_seeds=1, keep=4,
                       quick=True)
    else:
        PROFILE.update(ks=FACTOR_KS, lambdas=FACTOR_LAMBDAS, folds=CV_FOLDS, epochs=EPOCHS, grid=GRID,
                       tune_seeds=TUNE_SEEDS, keep=TUNE_KEEP, quick=False)


set_profile()


def _sigmoid_(z: np.ndarray) -> np.ndarray:
    """In-place logistic function through tanh (several times faster than exp-based expit in float32)."""
    z *= 0.5
    np.tanh(z, out=z)
    z *= 0.5
    z += 0.5
    return z


# ----------------------------------------------------------------------------- the factor model

def fit_factors(Y: np.ndarray, K: int, lam: float, *, mask: np.ndarray | None = None, epochs: int | None = None,
                lr: float = LEARNING_RATE, seed: int = FIT_SEED) -> tuple[np.ndarray, np.ndarray]:
    """``(U, V)`` (float32) of ``sigmoid(U V')`` fitted to the entries ``mask`` of ``Y`` (default: the
    observed ones) by full-batch AdamW on the mean binary cross-entropy (PyTorch's AdamW: decoupled
    weight decay ``lam``, betas 0.9/0.999, eps 1e-8)."""
    U, V = fit_factors_batch(Y, K, [lam], None if mask is None else mask[None], epochs=epochs, lr=lr, seed=seed)
    return U[0], V[0]


def fit_factors_batch(Y: np.ndarray, K: int, lams: Sequence[float], masks: np.ndarray | None = None, *,
                      epochs: int | None = None, lr: float = LEARNING_RATE,
                      seed: int = FIT_SEED) -> tuple[np.ndarray, np.ndarray]:
    """Several fits of :func:`fit_factors` at once (one per weight decay ``lams[b]`` and entry mask
    ``masks[b]``), all from the same initialisation (FAQ re-seeds every fit with 858), as one
    batched computation: ``U`` (B, n, K), ``V`` (B, N, K)."""
    epochs = PROFILE["epochs"] if epochs is None else epochs
    Y = np.asarray(Y, dtype=np.float64)
    n, N = Y.shape
    B = len(lams)
    obs = ~np.isnan(Y)
    obs = np.broadcast_to(obs, (B, n, N)) if masks is None else (np.asarray(masks, dtype=bool) & obs)
    n_obs = np.maximum(obs.sum((1, 2)), 1).astype(np.float64)[:, None, None]
    # the gradient of the mean cross-entropy w.r.t. z: (sigmoid(z) - y) w = w/2 tanh(z/2) + (1/2 - y) w
    W2 = (0.5 * obs / n_obs).astype(np.float32)
    C = ((0.5 - np.where(obs, Y, 0.0)) * obs / n_obs).astype(np.float32)
    rng = np.random.default_rng(seed)
    init = rng.standard_normal(n * K + N * K).astype(np.float32)
    P = np.tile(init, (B, 1))
    U, V = P[:, :n * K].reshape(B, n, K), P[:, n * K:].reshape(B, N, K)
    g = np.zeros_like(P)
    gU, gV = g[:, :n * K].reshape(B, n, K), g[:, n * K:].reshape(B, N, K)
    m, v, tmp = np.zeros_like(P), np.zeros_like(P), np.zeros_like(P)
    Z = np.empty((B, n, N), dtype=np.float32)
    b1, b2, eps = 0.9, 0.999, 1e-8
    decay = (1.0 - lr * np.asarray(lams, dtype=np.float64)).astype(np.float32)[:, None]
    for t in range(1, epochs + 1):
        np.matmul(U, V.transpose(0, 2, 1), out=Z)
        Z *= 0.5
        np.tanh(Z, out=Z)
        Z *= W2
        Z += C
        np.matmul(Z, V, out=gU)
        np.matmul(Z.transpose(0, 2, 1), U, out=gV)
        P *= decay
        m *= b1
        m += (1 - b1) * g
        v *= b2
        np.multiply(g, g, out=tmp)
        tmp *= 1 - b2
        v += tmp
        np.sqrt(v, out=tmp)
        tmp *= np.float32(1.0 / math.sqrt(1 - b2 ** t))
        tmp += eps
        np.divide(m, tmp, out=tmp)
        tmp *= np.float32(lr / (1 - b1 ** t))
        P -= tmp
    return U.copy(), V.copy()


def _fold_masks(shape: tuple[int, int], folds: int, seed: int) -> list[np.ndarray]:
    """Validation masks of a shuffled k-fold split of the matrix's entries (FAQ: KFold over M1.flatten())."""
    size = shape[0] * shape[1]
    perm = np.random.default_rng(seed).permutation(size)
    out = []
    for part in np.array_split(perm, folds):
        m = np.zeros(size, dtype=bool)
        m[part] = True
        out.append(m.reshape(shape))
    return out


def select_factors(Y: np.ndarray, *, ks: Sequence[int] | None = None, lambdas: Sequence[float] | None = None,
                   folds: int | None = None, epochs: int | None = None, seed: int = FIT_SEED) -> dict:
    """FAQ's choice of ``K`` and ``lambda``: k-fold cross-validation over the entries, validation
    accuracy, one-standard-error rule towards the smallest K and the largest lambda (the grid,
    folds and epochs of :data:`PROFILE` unless given)."""
    ks = PROFILE["ks"] if ks is None else ks
    lambdas = PROFILE["lambdas"] if lambdas is None else lambdas
    folds = PROFILE["folds"] if folds is None else folds
    epochs = PROFILE["epochs"] if epochs is None else epochs
    Y = np.asarray(Y, dtype=np.float64)
    obs = ~np.isnan(Y)
    acc: dict[tuple[int, float], list[float]] = {}
    loss: dict[tuple[int, float], list[float]] = {}
    vals = _fold_masks(Y.shape, folds, seed)
    jobs = [(val, lam) for val in vals for lam in lambdas]
    # a few fits per batched computation (fewer numpy calls) while their arrays stay in the cache
    per = int(np.clip(300_000 // max(Y.size, 1), 1, 4))
    for K in ks:
        for start in range(0, len(jobs), per):
            part = jobs[start:start + per]
            U, V = fit_factors_batch(Y, K, [lam for _, lam in part], np.stack([obs & ~val for val, _ in part]),
                                     epochs=epochs, seed=seed)
            for b, (val, lam) in enumerate(part):
                va = obs & val
                yv = Y[va]
                z = (U[b] @ V[b].T)[va].astype(np.float64)
                acc.setdefault((K, lam), []).append(float(np.mean((z > 0) == (yv > 0.5))))
                loss.setdefault((K, lam), []).append(float(np.mean(np.logaddexp(0.0, z) - yv * z)))
    means = {key: float(np.mean(v)) for key, v in acc.items()}
    best = max(means, key=lambda key: (means[key], -key[0], key[1]))
    cutoff = means[best] - float(np.std(acc[best])) / math.sqrt(folds)
    chosen = min((key for key in means if means[key] > cutoff), key=lambda key: (key[0], -key[1]), default=best)
    return {"K": int(chosen[0]), "lambda": float(chosen[1]), "best": [int(best[0]), float(best[1])],
            "cutoff": cutoff, "cv": [{"K": int(k), "lambda": float(lam), "val_acc": means[(k, lam)],
                                      "val_loss": float(np.mean(loss[(k, lam)]))} for (k, lam) in means]}


def factor_prior(U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """FAQ's prior of a new model's factor: the training factors' mean and covariance."""
    U = np.asarray(U, dtype=np.float64)
    return U.mean(0), np.atleast_2d(np.cov(U.T))


# ----------------------------------------------------------------------------- the sessions

def faq_sessions(Y: np.ndarray, V: np.ndarray, mu0: np.ndarray, sigma0: np.ndarray, n_draws: int,
                 settings: Sequence[FaqSetting], seeds: Sequence[int], *, rows_per_chunk: int = 256) -> dict:
    """FAQ's sessions of every model of ``Y`` (NaN: not evaluated, outside its pool) for every
    setting and seed: ``{"score", "ci_low", "ci_high", "resampled"}`` arrays of shape
    (len(settings), len(seeds), n_models). Each (setting, seed, model) is one session of
    ``n_draws`` draws with replacement among the model's evaluated items; its random numbers
    depend on (seed, model) only, never on the chunking (the float32 products may differ in the
    last digits with the chunk's shape)."""
    Y = np.asarray(Y, dtype=np.float64)
    n_models = Y.shape[0]
    out = {k: np.full((len(settings), len(seeds), n_models), np.nan) for k in ("score", "ci_low", "ci_high", "resampled")}
    # chunks share (rho, gamma, beta0): the schedules alpha_s, beta_s are then scalars per step
    groups: dict[tuple[float, float, float], list[int]] = {}
    for i, st in enumerate(settings):
        groups.setdefault((st.rho, st.gamma, st.beta0), []).append(i)
    uniforms = {(s, m): np.random.default_rng([int(s), int(m), 1]).random(n_draws) for s in seeds for m in range(n_models)}
    for (rho, gamma, beta0), idx in groups.items():
        rows = [(i, si, m) for i in idx for si in range(len(seeds)) for m in range(n_models)]
        for start in range(0, len(rows), rows_per_chunk):
            chunk = rows[start:start + rows_per_chunk]
            model = np.array([m for _, _, m in chunk])
            tau = np.array([settings[i].tau for i, _, _ in chunk], dtype=np.float32)
            u = np.stack([uniforms[(seeds[si], m)] for _, si, m in chunk])
            res = _run_chunk(Y[model], V, mu0, sigma0, n_draws, rho, gamma, beta0, tau, u)
            for key, vals in res.items():
                for r, (i, si, m) in enumerate(chunk):
                    out[key][i, si, m] = vals[r]
    return out


def _run_chunk(Y: np.ndarray, V: np.ndarray, mu0: np.ndarray, sigma0: np.ndarray, n: int, rho: float, gamma: float,
               beta0: float, tau: np.ndarray, u: np.ndarray) -> dict:
    """FAQ's sequential loop for R sessions at once (one row of Y each), rank-one updates vectorised.

    The arrays are float32 and updated in place (R x N temporaries, a few passes per draw): run
    it on a few hundred rows at a time so that they stay in the cache."""
    R, N = Y.shape
    pool = ~np.isnan(Y)
    full = bool(pool.all())  # no masking passes when every model was evaluated on every item
    Yz = np.where(pool, Y, 0.0).astype(np.float32)
    poolf = pool.astype(np.float32)
    n_pool = pool.sum(1).astype(np.float64)
    floor = (tau / n_pool).astype(np.float32)[:, None] * (1.0 if full else poolf)
    keep = (1.0 - tau).astype(np.float32)[:, None]
    V = np.ascontiguousarray(V, dtype=np.float32)
    VT = np.ascontiguousarray(V.T)
    U = np.tile(np.asarray(mu0, dtype=np.float32), (R, 1))
    S = np.tile(np.asarray(sigma0, dtype=np.float32), (R, 1, 1))
    rows = np.arange(R)
    theta, aipw2, inner1 = np.zeros(R), np.zeros(R), np.zeros(R)
    inner2 = np.zeros((R, n))
    counts = np.zeros((R, N), dtype=np.int32)
    vsv = None  # v_j' S v_j of every item while the active-learning score is used (rank-one updated)
    p = np.empty((R, N), dtype=np.float32)
    pq = np.empty((R, N), dtype=np.float32)
    h = np.empty((R, N), dtype=np.float32)
    block = max(16, int(math.sqrt(N)))
    for s in range(n):
        np.matmul(U, VT, out=p)
        _sigmoid_(p)
        np.clip(p, 1e-12, 1.0 - 1e-12, out=p)
        np.subtract(1.0, p, out=pq)
        pq *= p
        if not full:
            pq *= poolf
        alpha = max(0.0, 1.0 - (s + 1.0) / (rho * n)) if rho != 0.0 else 0.0
        beta = beta0 * min((s + 1.0) / (gamma * n), 1.0) if gamma != 0.0 else beta0
        if alpha > 0.0:
            np.sqrt(pq, out=h)
            h /= h.sum(1, keepdims=True)
            if vsv is None:
                vsv = np.einsum("nk,rkl,nl->rn", V, S, V, optimize=True).astype(np.float32)
            grad = np.einsum("rkl,rl->rk", S, (pq @ V) / n_pool[:, None].astype(np.float32))
            # FAQ's softmax(log pq + 2 log|v' S grad| - log(1 + pq v' S v)), without the logs
            # (the same clamps: |v' S grad| and pq at least 1e-12); float64 against underflow
            ha = np.maximum(np.abs(grad @ VT), 1e-12).astype(np.float64) ** 2
            ha *= np.maximum(pq, 1e-12)
            ha /= 1.0 + pq * vsv
            if not full:
                ha *= poolf
            ha *= alpha / ha.sum(1, keepdims=True)
            h *= 1.0 - alpha
            h += ha
            if beta != 1.0:
                np.power(h, np.float32(beta), out=h)
        elif beta == 1.0:
            np.sqrt(pq, out=h)  # ((sqrt(pq) / sum)^beta, normalised below: only pq^(beta / 2) matters
        else:
            np.power(pq, np.float32(beta / 2.0), out=h)
        h *= keep / h.sum(1, keepdims=True)
        h += floor  # h is now q
        q = h
        I = _inverse_cdf(q, u[:, s], block)  # noqa: E741 - the drawn item, I_s as in the paper
        if not full:
            for r in np.flatnonzero(~pool[rows, I]):  # a zero-probability slot hit by rounding: the next pool item
                after = np.flatnonzero(pool[r, I[r]:])
                I[r] = I[r] + after[0] if after.size else np.flatnonzero(pool[r])[-1]
        counts[rows, I] += 1
        z = Yz[rows, I].astype(np.float64)
        pI = p[rows, I].astype(np.float64)
        qI = q[rows, I].astype(np.float64)
        P = (p if full else p * poolf).sum(1, dtype=np.float64)
        a = (z - pI) / qI
        theta += P + a
        aipw2 += a * a
        inner1 += z / qI
        inner2[:, s] = P
        # the rank-one Laplace update of the factor's posterior
        w = pq[rows, I]
        v = V[I]
        Sv = np.einsum("rkl,rl->rk", S, v)
        denom = 1.0 + w * np.einsum("rk,rk->r", v, Sv)
        if vsv is not None and alpha > 0.0:
            vsv -= (w / denom)[:, None] * (Sv @ VT) ** 2
        S -= (w / denom)[:, None, None] * np.einsum("rk,rl->rkl", Sv, Sv)
        S = 0.5 * (S + S.transpose(0, 2, 1))
        U += np.einsum("rkl,rl->rk", S, ((z - pI).astype(np.float32))[:, None] * v)
    est = theta / (n * n_pool)
    v_simple = aipw2 / (n * n_pool ** 2)
    v_minus = ((inner1[:, None] / n - inner2) ** 2).sum(1) / (n * n_pool ** 2)
    se = np.sqrt(np.maximum(v_simple - v_minus, 0.0) / n)
    upper = np.maximum(est + Z95 * se, 0.0)  # FAQ's clipping, as in its code
    lower = np.minimum(est - Z95 * se, 1.0)
    return {"score": est, "ci_low": lower, "ci_high": upper, "resampled": (counts > 1).sum(1).astype(np.float64)}


def _inverse_cdf(q: np.ndarray, u: np.ndarray, block: int) -> np.ndarray:
    """Per row r, the first index whose cumulative sum of ``q[r]`` reaches ``u[r] * sum(q[r])``: block
    sums first, then a cumulative sum inside one block per row (a full cumulative sum along the
    rows of a large matrix is the slowest step of a draw otherwise)."""
    R, N = q.shape
    nb = -(-N // block)
    pad = nb * block - N
    qb = np.pad(q, ((0, 0), (0, pad))) if pad else q
    sums = qb.reshape(R, nb, block).sum(2, dtype=np.float64)
    csum = np.cumsum(sums, 1)
    target = u * csum[:, -1]
    b = np.minimum((csum < target[:, None]).sum(1), nb - 1)
    before = np.where(b > 0, csum[np.arange(R), b - 1], 0.0)
    inner = np.cumsum(qb.reshape(R, nb, block)[np.arange(R), b].astype(np.float64), 1) + before[:, None]
    k = np.minimum((inner < target[:, None]).sum(1), block - 1)
    return np.minimum(b * block + k, N - 1)


def tune_settings(Y_val: np.ndarray, V: np.ndarray, mu0: np.ndarray, sigma0: np.ndarray, budgets: Iterable[int], *,
                  grid: Sequence[FaqSetting] | None = None, seeds: Sequence[int] | None = None,
                  keep: int | None = None) -> dict:
    """FAQ's choice of the sampling setting per budget: the smallest mean width over the
    validation models and seeds (``{n: {"setting": [...], "mean_width", "coverage", "top": [...]}}``).

    Successive halving (``keep``, default :data:`PROFILE`'s ``keep``: a tenth of the grid): every
    setting runs on the first seed, the ``keep`` narrowest run on all the seeds (the first one's
    sessions reused: same random numbers), and the narrowest mean over all seeds wins; ``keep`` =
    the grid's size is FAQ's exhaustive search."""
    grid = list(PROFILE["grid"] if grid is None else grid)
    seeds = list(range(PROFILE["tune_seeds"]) if seeds is None else seeds)
    keep = min(len(grid), PROFILE["keep"] if keep is None else keep)
    truth = np.nanmean(Y_val, 1)
    out = {}
    for n in budgets:
        first = faq_sessions(Y_val, V, mu0, sigma0, n, grid, seeds[:1])
        w1 = (first["ci_high"] - first["ci_low"]).mean((1, 2))
        short = np.sort(np.argsort(w1, kind="stable")[:keep])
        more = faq_sessions(Y_val, V, mu0, sigma0, n, [grid[i] for i in short], seeds[1:]) if len(seeds) > 1 else None
        width, cover = np.full(len(grid), np.inf), np.full(len(grid), np.nan)
        for j, i in enumerate(short):
            lo = np.concatenate([first["ci_low"][i]] + ([more["ci_low"][j]] if more else []))
            hi = np.concatenate([first["ci_high"][i]] + ([more["ci_high"][j]] if more else []))
            width[i] = float((hi - lo).mean())
            cover[i] = float(((lo <= truth) & (truth <= hi)).mean())
        order = np.argsort(width, kind="stable")
        out[int(n)] = {"setting": _setting_list(grid[order[0]]), "mean_width": float(width[order[0]]),
                       "coverage": float(cover[order[0]]), "searched": len(grid), "kept": int(keep),
                       "top": [{"setting": _setting_list(grid[i]), "mean_width": float(width[i]),
                                "coverage": float(cover[i])} for i in order[:5]]}
    return out


def _setting_list(st: FaqSetting) -> list[float]:
    return [st.beta0, st.rho, st.gamma, st.tau]


# ----------------------------------------------------------------------------- the uniform reference

def uniform_reference(Y: np.ndarray, n: int, seeds: Sequence[int], draws: int = 20) -> dict:
    """FAQ's uniform baseline per model: Bernoulli(n / N) sampling over the model's evaluated
    items, Horvitz-Thompson mean, z interval clipped to [0, 1]; ``{"width": (n_models,),
    "coverage": (n_models,)}``, means over ``draws`` runs per seed."""
    Y = np.asarray(Y, dtype=np.float64)
    pool = ~np.isnan(Y)
    N = pool.sum(1)
    Yz = np.where(pool, Y, 0.0)
    truth = Yz.sum(1) / N
    pi = np.minimum(n / N, 1.0)
    widths, covers = [], []
    for s in seeds:
        rng = np.random.default_rng([int(s), 7])
        for _ in range(draws):
            xi = (rng.random(Y.shape) < pi[:, None]) & pool
            est = (xi * Yz).sum(1) / (pi * N)
            var = (xi * (1 - pi[:, None]) / pi[:, None] ** 2 * Yz ** 2).sum(1) / N ** 2
            half = Z95 * np.sqrt(var)
            lo, hi = np.maximum(est - half, 0.0), np.minimum(est + half, 1.0)
            widths.append(hi - lo)
            covers.append((lo <= truth) & (truth <= hi))
    return {"width": np.mean(widths, 0), "coverage": np.mean(covers, 0)}


# ----------------------------------------------------------------------------- one split, cached

def inner_split(protocol: str, Y_train: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """FAQ's tuning split of the training models (rows of ``Y_train``): 80% to fit, 20% to tune on,
    by the protocol's own rule (interpolation: at random; extrapolation: the strongest fifth)."""
    n = Y_train.shape[0]
    n_val = max(2, int(round(VAL_SHARE * n)))
    if protocol == "extrapolation":
        means = np.nanmean(Y_train, 1)
        order = np.argsort(means, kind="stable")
    else:
        order = np.random.default_rng([int(seed), 30]).permutation(n)
        order = np.concatenate([order[n_val:], order[:n_val]])
    return np.sort(order[:n - n_val]), np.sort(order[n - n_val:])


def split_key(Y_train: np.ndarray, protocol: str, tune_seed: int | None) -> str:
    """The cache key of a split's tuning: the training models' scores, the protocol, the seed of the
    tuning split (interpolation only: extrapolation's is the same for every seed) and the code."""
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(np.where(np.isnan(Y_train), -1.0, Y_train), dtype="<f8").tobytes())
    h.update(f"{Y_train.shape}|{protocol}|{tune_seed}|v{CODE_VERSION}|{PROFILE['epochs']}|{PROFILE['ks']}|"
             f"{PROFILE['lambdas']}|{PROFILE['folds']}|{len(PROFILE['grid'])}|{PROFILE['tune_seeds']}|{PROFILE['keep']}|"
             f"{VAL_SHARE}".encode())
    return h.hexdigest()[:16]


class _Lock:
    """An exclusive lock file (fcntl): parallel tasks of the same split tune it once."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.fh: Any = None

    def __enter__(self) -> "_Lock":
        if self.path is not None:
            import fcntl

            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.fh = open(self.path, "w")
            fcntl.flock(self.fh, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc) -> None:
        if self.fh is not None:
            self.fh.close()


def _write_json(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    os.replace(tmp, path)


def tune_split(name: str, Y_train: np.ndarray, protocol: str, tune_seed: int, budgets: Sequence[int],
               cache: Path | None = DEFAULT_CACHE) -> dict:
    """FAQ's hyperparameters for one split (cached): ``K, lambda`` by cross-validation on the
    tuning split's 80%, the sampling setting per budget on its 20%."""
    seed = tune_seed if protocol == "interpolation" else None
    key = split_key(Y_train, protocol, seed)
    path = None if cache is None else cache / name / f"{protocol}-{key}.json"
    with _Lock(None if path is None else path.with_name(f".{path.stem}.lock")):
        rec = json.loads(path.read_text()) if path is not None and path.is_file() else None
        if rec is not None and rec.get("key") != key:
            rec = None
        missing = [int(n) for n in budgets if rec is None or str(int(n)) not in rec["settings"]]
        if rec is not None and not missing:
            return rec
        fit_rows, val_rows = inner_split(protocol, Y_train, 0 if seed is None else seed)
        factors = rec["factors"] if rec is not None else select_factors(Y_train[fit_rows])
        U, V = fit_factors(Y_train[fit_rows], factors["K"], factors["lambda"])
        mu0, s0 = factor_prior(U)
        tuned = tune_settings(Y_train[val_rows], V, mu0, s0, missing)
        rec = rec or {"key": key, "dataset": name, "protocol": protocol, "tune_seed": seed, "code_version": CODE_VERSION,
                      "n_train": int(Y_train.shape[0]), "n_fit": int(fit_rows.size), "n_val": int(val_rows.size),
                      "factors": factors, "settings": {}}
        rec["settings"].update({str(n): t for n, t in tuned.items()})
        if path is not None:
            _write_json(path, rec)
        return rec


def _final_factors(rec: dict, Y_train: np.ndarray, cache: Path | None, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The factor model of all training models with the split's ``K, lambda`` (cached as .npz)."""
    K, lam = rec["factors"]["K"], rec["factors"]["lambda"]
    if cache is None:
        return fit_factors(Y_train, K, lam)
    path = cache / name / f"{rec['protocol']}-{rec['key']}-final.npz"
    with _Lock(path.with_name(f".{path.stem}.lock")):
        if path.is_file():
            with np.load(path) as z:
                return z["U"], z["V"]
        U, V = fit_factors(Y_train, K, lam)
        tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp.npz")
        np.savez(tmp, U=U, V=V)
        os.replace(tmp, path)
        return U, V


def faq_split(name: str, Y_train: np.ndarray, Y_test: np.ndarray, protocol: str, tune_seed: int,
              budgets: dict[str, int], session_seeds: Sequence[int], cache: Path | None = DEFAULT_CACHE,
              tune_only: bool = False) -> dict:
    """FAQ on one split: tuned on ``Y_train`` only (:func:`tune_split`), refitted on all of it, run
    on every test model (rows of ``Y_test``, NaN = not evaluated) for every session seed.

    Returns ``{"hyper": {"K", "lambda", "settings": {spec: [beta0, rho, gamma, tau]}}, "budgets":
    {spec: {"score", "ci_low", "ci_high", "resampled"}}}`` (lists over session seeds x test
    models, seed-major); with ``tune_only`` only the caches are filled and ``budgets`` is empty.
    """
    rec = tune_split(name, Y_train, protocol, tune_seed, sorted(set(budgets.values())), cache)
    U, V = _final_factors(rec, Y_train, cache, name)
    out: dict = {"hyper": {"K": rec["factors"]["K"], "lambda": rec["factors"]["lambda"], "settings": {}},
                 "budgets": {}}
    mu0, s0 = factor_prior(U)
    for spec, n in budgets.items():
        st = FaqSetting(*rec["settings"][str(n)]["setting"])
        out["hyper"]["settings"][spec] = _setting_list(st)
        if tune_only:
            continue
        res = faq_sessions(Y_test, V, mu0, s0, n, [st], list(session_seeds))
        out["budgets"][spec] = {k: v[0].reshape(-1).tolist() for k, v in res.items()}
    return out
