"""Multidimensional two-parameter logistic (2PL) IRT, fitted by MAP.

Model: for model (subject) ``i`` and item ``j``::

    P(y_ij = 1) = sigmoid(theta_i . a_j - b_j)

with abilities ``theta_i`` in R^D, discriminations ``a_j`` in R^D and difficulties
``b_j``. Scores that are not 0/1 (AlpacaEval preferences, TruthfulQA mc2) enter the
Bernoulli log-likelihood as soft labels; ``binarize`` reproduces the original
threshold binarisation instead.

Priors (Gaussian, i.e. L2 penalties on the MAP objective)::

    theta_i ~ N(0, prior_theta^2 I)    a_j ~ N(0, prior_a^2 I)    b_j ~ N(0, prior_b^2)

The defaults (1, 1, 3) keep discriminations moderate when few models are available
while leaving difficulties almost free. The objective is minimised jointly with
scipy's L-BFGS-B and analytic gradients. The scores stay in compact storage
(:class:`~tinybench_builder.read.compact.CompactScores`: one byte per 0/1 score, soft scores exactly,
a separate mask; a fold's models are a view) and every models x items computation reads them
in blocks: a few rows as float32 for the objective (accumulated in float64), blocks of items
for the Newton steps, blocks of 192 models for the abilities, so that no models x items float
array is made for a big matrix. The blocks change no bit of the result (see
:func:`~tinybench_builder.read.compact.row_chunks`).

Identifiability: the likelihood is invariant under theta -> theta R, a -> a R for any
orthogonal R, and under theta -> c theta, a -> a / c. The priors fix the scale; the
rotation is irrelevant to everything downstream (predictions, k-means distances on
``a`` and the anchor choice are rotation invariant). New subjects are scored with the
*empirical* distribution of the fitted abilities as their prior (:meth:`IRTModel.ability_prior`),
because the MAP scale of theta need not be the unit scale of ``prior_theta``.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
from scipy import optimize
from scipy.special import expit

from tinybench_builder.params import DIMS, check_binarize
from tinybench_builder.read import CompactScores, row_chunks

DEFAULT_DIMS_GRID = (1, 2, 3, 5)


def _validate_scores(Y, name: str = "responses") -> CompactScores:
    """The scores as :class:`CompactScores` (checked: 2-D, at least 2 x 2, in [0, 1]); a
    CompactScores (a :class:`ResponseMatrix`'s, checked when it was read) is used as it is."""
    if isinstance(Y, CompactScores):
        if Y.shape[0] < 2 or Y.shape[1] < 2:
            raise ValueError(f"{name} needs at least 2 models and 2 items, got shape {Y.shape}")
        if Y.n_obs == 0:
            raise ValueError(f"{name} has no evaluated entry")
        return Y
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim != 2:
        raise ValueError(f"{name} must be 2-D (models x items), got shape {Y.shape}")
    if Y.shape[0] < 2 or Y.shape[1] < 2:
        raise ValueError(f"{name} needs at least 2 models and 2 items, got shape {Y.shape}")
    any_obs = False
    for sl in row_chunks(*Y.shape):
        blk = Y[sl]
        fin = blk[~np.isnan(blk)]
        if np.isinf(fin).any() or (fin.size and (fin.min() < 0 or fin.max() > 1)):
            raise ValueError(f"{name} must be in [0, 1] (NaN = not evaluated)")
        any_obs = any_obs or fin.size > 0
    if not any_obs:
        raise ValueError(f"{name} has no evaluated entry")
    return CompactScores.from_dense(Y)


def binarize_scores(Y: np.ndarray, threshold: float | None = None) -> np.ndarray:
    """Threshold soft scores to 0/1 as the original tinyBenchmarks did.

    With ``threshold=None`` the threshold is chosen (as in the original tutorial) so
    that the binarised matrix keeps the mean of the soft one. Values already 0/1 and
    NaN are kept.
    """
    if threshold is not None:
        check_binarize(float(threshold))
    Y = np.asarray(Y, dtype=np.float64)
    obs = ~np.isnan(Y)
    if threshold is None:
        threshold = _mean_preserving_threshold(Y[obs])
    out = np.where(obs, (Y >= threshold).astype(np.float64), np.nan)
    return out


def _mean_preserving_threshold(vals: np.ndarray) -> float:
    # quantile that preserves the overall mean: fraction of ones = mean
    return float(np.quantile(vals, 1.0 - vals.mean())) if vals.size else 0.5


def _binarize_store(Y: CompactScores, threshold: float | None = None) -> CompactScores:
    """:func:`binarize_scores` on compact scores (the same 0/1 values and mask)."""
    if threshold is None:
        threshold = _mean_preserving_threshold(Y.observed_values())  # one float64 copy of the scores
    return Y.binarized(threshold)


_BLOCK_ELEMENTS = 1 << 17  # ~0.5 MB of float32 per block: the temporaries stay in cache
#: item count above which the fit starts from a fit on a random item subset
_STAGE_ITEMS = 4000
#: items used to compare IRT dimensions on big matrices
_DIMS_ITEMS = 2000
_N_THREADS = max(1, min(4, os.cpu_count() or 1))


def _threads():
    """A thread pool for the blocks of the objective and the Newton steps (None: one thread).
    numpy and BLAS release the GIL; every block's numbers are the same in any thread."""
    return ThreadPoolExecutor(_N_THREADS) if _N_THREADS > 1 else nullcontext()


@dataclass
class _Data:
    """Responses prepared for the objective: the compact store (one byte per 0/1 score; a view
    for a fold's models), read in blocks of a few rows as float32 with NaN -> 0 and the mask."""

    store: CompactScores  # (n, N)
    n_obs: int
    col_sum: np.ndarray  # (N,) float64, sum over models of the float32 scores

    @classmethod
    def from_scores(cls, Y: CompactScores) -> "_Data":
        return cls(Y, Y.n_obs, Y.col_sums(via=np.float32))

    def blocks(self) -> list[slice]:
        n, N = self.store.shape
        rows = max(1, _BLOCK_ELEMENTS // max(N, 1))
        return [slice(r, min(r + rows, n)) for r in range(0, n, rows)]

    def block(self, sl: slice, cols=None) -> tuple[np.ndarray, np.ndarray | None]:
        """float32 scores (NaN -> 0) and bool mask (None: all evaluated) of rows ``sl``."""
        return self.store.block(sl, cols)


def _softplus_and_sigmoid(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``softplus(Z)`` and ``sigmoid(Z)``, overwriting Z.

    softplus(Z) = max(Z, 0) + log(1 + exp(-|Z|)); sigmoid(Z) = 1/2 + sign(Z) (sigmoid(|Z|) - 1/2).
    Written with float32 ufuncs that numpy vectorises (exp, log, reciprocal, copysign);
    ``log1p``, ``logaddexp`` and ``np.where`` are several times slower on big matrices.
    """
    S = np.abs(Z)
    np.negative(S, out=S)
    np.exp(S, out=S)
    S += 1.0
    L = np.log(S)
    np.reciprocal(S, out=S)
    S -= 0.5
    np.copysign(S, Z, out=S)
    S += 0.5
    np.maximum(Z, 0, out=Z)
    L += Z
    return L, S


def _sigmoid(Z: np.ndarray) -> np.ndarray:
    """``sigmoid(Z)``: the second result of :func:`_softplus_and_sigmoid` (the same operations,
    the same bits), without the softplus; Z is left as it is."""
    S = np.abs(Z)
    np.negative(S, out=S)
    np.exp(S, out=S)
    S += 1.0
    np.reciprocal(S, out=S)
    S -= 0.5
    np.copysign(S, Z, out=S)
    S += 0.5
    return S


def _objective_blocks(theta32, A32, b32, data: _Data, pool):
    """Sum of the NLL and its gradients, computed block by block (in threads).

    Returns (nll, grad_theta (n, D), grad_A (N, D), grad_b (N,)).
    """
    n, D = theta32.shape
    g_theta = np.empty((n, D), dtype=np.float32)

    def work(sl: slice):
        t = theta32[sl]
        Z = t @ A32.T
        Z -= b32
        L, R = _softplus_and_sigmoid(Z)
        Yb, Mb = data.block(sl)
        R -= Yb
        if Mb is not None:
            L *= Mb
            R *= Mb
        nll = float(L.sum(dtype=np.float64))
        # the -Y.Z part of the NLL, through one product instead of one more pass
        nll -= float((t * (Yb @ A32)).sum(dtype=np.float64))
        g_theta[sl] = R @ A32
        return nll, R.T @ t, R.sum(axis=0, dtype=np.float64)

    parts = list(pool.map(work, data.blocks())) if pool is not None else [work(s) for s in data.blocks()]
    nll = sum(p[0] for p in parts) + float(data.col_sum @ b32.astype(np.float64))
    g_A = np.sum([p[1] for p in parts], axis=0, dtype=np.float64)
    g_b = -np.sum([p[2] for p in parts], axis=0)
    return nll, g_theta.astype(np.float64), g_A, g_b


def _fit_items_newton(
    data: _Data, theta: np.ndarray, A: np.ndarray, b: np.ndarray, sa2: float, sb2: float, n_iter: int = 8,
    pool=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Item parameters for fixed abilities: one ridge logistic regression per item.

    Vectorised Newton steps over all items at once; the per-item (D+1)x(D+1) Hessians
    come from one matrix product with the abilities' outer products. The items are taken in
    blocks of columns (in threads): the models x items temporaries stay a few MiB, and each
    item's numbers are those of one pass over all items.
    """
    n, D = theta.shape
    N = data.store.shape[1]
    X = np.hstack([theta, -np.ones((n, 1))]).astype(np.float32)  # logit = X @ [a; b]
    XX = np.einsum("id,ie->ide", X, X).reshape(n, -1).astype(np.float32)
    prior = np.diag(np.r_[np.full(D, 1.0 / sa2), 1.0 / sb2])
    W_par = np.hstack([A, b[:, None]])  # (N, D+1)
    chunks = row_chunks(N, n)  # blocks of items (the same rule as blocks of rows)
    rows = slice(0, n)

    def step_of(c: slice):
        Yc, Mc = data.block(rows, c)
        W_c = W_par[c]
        Z = X @ W_c.T.astype(np.float32)
        P = _sigmoid(Z)
        Wt = P * (1.0 - P)
        R = P - Yc
        if Mc is not None:
            Wt *= Mc
            R *= Mc
        grad = (R.T @ X).astype(np.float64) + W_c @ prior
        H = (Wt.T @ XX).astype(np.float64).reshape(-1, D + 1, D + 1) + prior
        step = np.linalg.solve(H, grad[..., None])[..., 0]
        # a trust limit keeps the first steps sane for items every model gets right
        norm = np.linalg.norm(step, axis=1, keepdims=True)
        step *= np.minimum(1.0, 2.0 / np.maximum(norm, 1e-12))
        return step, norm

    for _ in range(n_iter):
        parts = list(pool.map(step_of, chunks)) if pool is not None else [step_of(c) for c in chunks]
        step = np.concatenate([p[0] for p in parts])
        norm = np.concatenate([p[1] for p in parts])
        W_par = W_par - step
        if norm.max() < 1e-4:
            break
    return W_par[:, :D].copy(), W_par[:, D].copy()


class IRTModel:
    """Multidimensional 2PL IRT fitted by MAP (scikit-learn style).

    Parameters
    ----------
    n_dims : int or None
        Dimension D of abilities and discriminations. ``None`` chooses it from
        ``dims_grid`` by validation on held-out models (see :meth:`fit`).
    dims_grid : tuple of int
        Candidate dimensions when ``n_dims`` is None.
    prior_theta, prior_a, prior_b : float
        Standard deviations of the Gaussian priors on abilities, discriminations and
        difficulties.
    binarize : bool or float
        False: soft labels (default). True: threshold as the original (mean-preserving
        threshold); a float: that threshold.
    max_iter : int
        L-BFGS iterations.
    tol : float
        Relative tolerance on the objective (scipy ``ftol``).
    validation_fraction : float
        Share of models held out when choosing ``n_dims``.
    dims_theta_items : int
        When choosing ``n_dims``, each held-out model's ability is fitted on this many
        random items and scored on the rest (as a tiny benchmark will be used).
    random_state : int
        Seed; the fit is deterministic for a seed.

    Attributes
    ----------
    ability_ : ndarray (n_models, D)
    discrimination_ : ndarray (n_items, D)
    difficulty_ : ndarray (n_items,)
    n_dims_ : int
    dims_scores_ : dict
        Held-out log-loss per candidate dimension (when chosen by validation).
    n_iter_ : int
    """

    def __init__(
        self,
        n_dims: int | None = None,
        dims_grid: tuple[int, ...] = DEFAULT_DIMS_GRID,
        prior_theta: float = 1.0,
        prior_a: float = 1.0,
        prior_b: float = 3.0,
        binarize: bool | float = False,
        max_iter: int = 500,
        tol: float = 1e-6,
        validation_fraction: float = 0.2,
        dims_theta_items: int = 100,
        random_state: int = 0,
    ) -> None:
        self.n_dims = n_dims
        self.dims_grid = dims_grid
        self.prior_theta = prior_theta
        self.prior_a = prior_a
        self.prior_b = prior_b
        self.binarize = binarize
        self.max_iter = max_iter
        self.tol = tol
        self.validation_fraction = validation_fraction
        self.dims_theta_items = dims_theta_items
        self.random_state = random_state

    # ------------------------------------------------------------ validation
    def _check_params(self) -> None:
        DIMS.optional(self.n_dims)
        if not self.dims_grid or any(int(d) != d or d < 1 for d in self.dims_grid):
            raise ValueError(f"dims_grid must be positive integers, got {self.dims_grid!r}")
        for name in ("prior_theta", "prior_a", "prior_b", "tol"):
            v = getattr(self, name)
            if not np.isfinite(v) or v <= 0:
                raise ValueError(f"{name} must be a positive number, got {v!r}")
        if int(self.max_iter) != self.max_iter or self.max_iter < 1:
            raise ValueError(f"max_iter must be a positive integer, got {self.max_iter!r}")
        if not 0 < self.validation_fraction < 1:
            raise ValueError(f"validation_fraction must be in (0, 1), got {self.validation_fraction!r}")
        check_binarize(self.binarize)

    def _prepare(self, Y) -> CompactScores:
        """The checked (and binarised) scores, compact: 0/1 as bytes, soft scores exactly."""
        Y = _validate_scores(Y)
        if self.binarize is True:
            Y = _binarize_store(Y)
        elif self.binarize is not False:
            Y = _binarize_store(Y, float(self.binarize))
        return Y

    # ------------------------------------------------------------------ fit
    def fit(self, Y) -> "IRTModel":
        """Fit on a (n_models, n_items) score matrix; NaN = not evaluated.

        ``Y`` is a float array or :class:`~tinybench_builder.read.compact.CompactScores` (what
        :attr:`ResponseMatrix.compact` gives: the fit then never makes a float copy of the
        whole matrix; a view on some rows is read in place).

        When ``n_dims`` is None, each D of ``dims_grid`` is fitted on
        ``1 - validation_fraction`` of the models; for each held-out model, theta is
        fitted on ``dims_theta_items`` random items and the Bernoulli log-loss is
        measured on the others (3 draws). The D with the lowest held-out loss is
        refitted on all models.
        """
        self._check_params()
        Y = self._prepare(Y)
        rng = np.random.default_rng(self.random_state)
        if self.n_dims is None:
            self.n_dims_, self.dims_scores_ = self._select_dims(Y, rng)
        else:
            self.n_dims_, self.dims_scores_ = int(self.n_dims), {}
        theta, A, b, n_iter = self._fit_map(Y, self.n_dims_, rng)
        self.ability_, self.discrimination_, self.difficulty_, self.n_iter_ = theta, A, b, n_iter
        return self

    def select_dims(self, Y) -> tuple[int, dict]:
        """The dimension ``fit`` would choose, and the held-out loss of each candidate."""
        self._check_params()
        return self._select_dims(self._prepare(Y), np.random.default_rng(self.random_state))

    def _select_dims(self, Y: CompactScores, rng: np.random.Generator) -> tuple[int, dict]:
        if Y.shape[1] > _DIMS_ITEMS:
            # a random item subset is enough to compare dimensions, and much cheaper
            Y = Y.take(cols=np.sort(rng.choice(Y.shape[1], _DIMS_ITEMS, replace=False)))
        n = Y.shape[0]
        n_val = int(round(self.validation_fraction * n))
        if n_val < 2 or n - n_val < 2:
            return int(min(self.dims_grid)), {}
        perm = rng.permutation(n)
        val, train = np.sort(perm[:n_val]), np.sort(perm[n_val:])
        Yv = Y.dense(val)
        N = Y.shape[1]
        # As in deployment, theta comes from few items (``dims_theta_items`` random ones,
        # several draws) and must predict all the others: this favours the dimension
        # that generalises from a tiny benchmark, not the one that fits best with
        # thousands of items per model.
        k_fit = min(int(self.dims_theta_items), N // 2)
        splits = []
        for _ in range(3):
            pick = np.zeros(Yv.shape, dtype=bool)
            for i in range(Yv.shape[0]):
                pick[i, rng.choice(N, k_fit, replace=False)] = True
            splits.append((np.where(pick, Yv, np.nan), np.where(~pick, Yv, np.nan)))
        scores = {}
        for d in sorted(set(int(x) for x in self.dims_grid)):
            theta, A, b, _ = self._fit_map(Y.view(train), d, np.random.default_rng(rng.integers(2**32)))
            mean, cov = empirical_prior(theta)
            losses = []
            for fit_part, test_part in splits:
                th_v, _ = fit_abilities(fit_part, A, b, mean, cov, with_cov=False)
                losses.append(_mean_log_loss(test_part, expit(th_v @ A.T - b)))
            scores[d] = float(np.mean(losses))
        best = min(scores, key=lambda d: scores[d])
        return best, scores

    def _init(self, Y: CompactScores, D: int, rng: np.random.Generator, svd: bool = True):
        n, N = Y.shape
        cnt = Y.col_counts()
        item_mean = np.where(cnt > 0, Y.col_sums() / np.maximum(cnt, 1), 0.5)
        p = np.clip(item_mean, 0.02, 0.98)
        b = -np.log(p / (1 - p))
        if not svd:
            return None, None, b
        # (only for at most _STAGE_ITEMS items: bigger matrices start from a subset's fit)
        Yd = Y.dense()
        R = np.where(~np.isnan(Yd), Yd - p, 0.0)
        del Yd
        # truncated SVD of the centred residuals gives a sensible start for theta and a
        from sklearn.utils.extmath import randomized_svd

        k = min(D, min(n, N) - 1) if min(n, N) > 1 else 1
        U, S, Vt = randomized_svd(R, n_components=max(k, 1), random_state=int(rng.integers(2**31)))
        theta = np.zeros((n, D))
        A = np.zeros((N, D))
        theta[:, :k] = U[:, :k] * np.sqrt(n)
        # residual scale -> logit scale: dp/dz = p(1-p) ~ 0.2 on average
        A[:, :k] = (Vt[:k].T * S[:k] / np.sqrt(n)) / np.maximum(p * (1 - p), 0.05)[:, None]
        A = np.clip(A, -3 * self.prior_a, 3 * self.prior_a)
        theta += 0.01 * rng.standard_normal(theta.shape)
        A += 0.01 * rng.standard_normal(A.shape)
        return theta, A, b

    def _fit_map(self, Y: CompactScores, D: int, rng: np.random.Generator, init=None):
        n, N = Y.shape
        data = _Data.from_scores(Y)
        if init is None and N > _STAGE_ITEMS:
            # Big matrices: abilities from a random subset of items (cheap), then every
            # item's parameters by Newton given those abilities, then a joint polish.
            # Starts the joint L-BFGS close to the optimum: ~3x fewer passes at 28k items.
            sub = np.sort(rng.choice(N, _STAGE_ITEMS, replace=False))
            theta0, _, _, _ = self._fit_map(Y.take(cols=sub), D, rng)
            _, _, b_start = self._init(Y, 1, rng, svd=False)
            with _threads() as pool:
                A0, b0 = _fit_items_newton(
                    data, theta0, np.zeros((N, D)), b_start, self.prior_a**2, self.prior_b**2, pool=pool
                )
        else:
            theta0, A0, b0 = init if init is not None else self._init(Y, D, rng)
        st2, sa2, sb2 = self.prior_theta**2, self.prior_a**2, self.prior_b**2
        scale = 1.0 / max(data.n_obs, 1)  # mean loss: keeps L-BFGS tolerances size-free

        def unpack(x):
            theta = x[: n * D].reshape(n, D)
            A = x[n * D : n * D + N * D].reshape(N, D)
            b = x[n * D + N * D :]
            return theta, A, b

        def f(x):
            theta, A, b = unpack(x)
            nll, g_theta, g_A, g_b = _objective_blocks(
                theta.astype(np.float32), A.astype(np.float32), b.astype(np.float32), data, pool
            )
            prior = 0.5 * ((theta**2).sum() / st2 + (A**2).sum() / sa2 + (b**2).sum() / sb2)
            g = np.concatenate([(g_theta + theta / st2).ravel(), (g_A + A / sa2).ravel(), g_b + b / sb2])
            return (nll + prior) * scale, g * scale

        x0 = np.concatenate([theta0.ravel(), A0.ravel(), b0])
        with _threads() as pool:
            res = optimize.minimize(
                f, x0, jac=True, method="L-BFGS-B",
                options={"maxiter": int(self.max_iter), "ftol": self.tol, "gtol": 1e-9, "maxcor": 10},
            )
        theta, A, b = unpack(res.x)
        return theta.copy(), A.copy(), b.copy(), int(res.nit)

    # ------------------------------------------------------------- inference
    def _check_fitted(self) -> None:
        if not hasattr(self, "difficulty_"):
            raise ValueError("this IRTModel is not fitted yet; call fit() first")

    def ability_prior(self) -> tuple[np.ndarray, np.ndarray]:
        """Mean and covariance of the fitted abilities (the prior for new models)."""
        self._check_fitted()
        return empirical_prior(self.ability_)

    def predict_proba(self, theta: np.ndarray | None = None) -> np.ndarray:
        """P(correct) for abilities ``theta`` (n, D) (default: the fitted ones)."""
        self._check_fitted()
        theta = self.ability_ if theta is None else np.atleast_2d(np.asarray(theta, float))
        if theta.shape[1] != self.n_dims_:
            raise ValueError(f"theta must have {self.n_dims_} columns, got shape {theta.shape}")
        return expit(theta @ self.discrimination_.T - self.difficulty_)

    def transform(self, Y: np.ndarray) -> np.ndarray:
        """MAP abilities of new models from their (partial) scores, shape (n, D)."""
        self._check_fitted()
        Y = np.atleast_2d(np.asarray(Y, dtype=np.float64))
        if Y.shape[1] != self.difficulty_.shape[0]:
            raise ValueError(f"expected {self.difficulty_.shape[0]} item columns, got {Y.shape[1]}")
        mean, cov = self.ability_prior()
        theta, _ = fit_abilities(Y, self.discrimination_, self.difficulty_, mean, cov, with_cov=False)
        return theta

    def refit(self, Y) -> "IRTModel":
        """Refit on ``Y`` (same items, possibly more models), warm-started from this fit."""
        self._check_fitted()
        Y = self._prepare(Y)
        if Y.shape[1] != self.difficulty_.shape[0]:
            raise ValueError(f"expected {self.difficulty_.shape[0]} item columns, got {Y.shape[1]}")
        mean, cov = self.ability_prior()
        # only a starting point for the joint fit: a few Newton steps are plenty
        with _threads() as pool:
            theta0, _ = fit_abilities(Y, self.discrimination_, self.difficulty_, mean, cov, n_newton=6, pool=pool,
                                      with_cov=False)
        rng = np.random.default_rng(self.random_state)
        theta, A, b, n_iter = self._fit_map(
            Y, self.n_dims_, rng, init=(theta0, self.discrimination_.copy(), self.difficulty_.copy())
        )
        self.ability_, self.discrimination_, self.difficulty_, self.n_iter_ = theta, A, b, n_iter
        return self


def _mean_log_loss(Y: np.ndarray, P: np.ndarray) -> float:
    obs = ~np.isnan(Y)
    P = np.clip(P, 1e-6, 1 - 1e-6)
    y = Y[obs]
    p = P[obs]
    return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())


def empirical_prior(theta: np.ndarray, ridge: float = 1e-3) -> tuple[np.ndarray, np.ndarray]:
    """Mean and (ridge-regularised) covariance of a set of abilities."""
    theta = np.atleast_2d(theta)
    mean = theta.mean(axis=0)
    D = theta.shape[1]
    if theta.shape[0] > 1:
        cov = np.atleast_2d(np.cov(theta, rowvar=False))
    else:
        cov = np.eye(D)
    cov = cov + ridge * max(np.trace(cov) / D, 1e-6) * np.eye(D)
    return mean, cov


def fit_abilities(
    Y,
    A: np.ndarray,
    b: np.ndarray,
    prior_mean: np.ndarray,
    prior_cov: np.ndarray,
    n_newton: int = 30,
    tol: float = 1e-6,
    max_step: float = 1.0,
    pool=None,
    with_cov: bool = True,
) -> tuple[np.ndarray, np.ndarray | None]:
    """MAP abilities of several models at once, with their posterior covariances.

    Newton steps on the strictly concave log-posterior, vectorised over models; each
    step is capped at ``max_step`` in norm (a trust region), which is enough for
    convergence here and avoids evaluating the objective over all items. The Hessians
    are one matrix product with the items' flattened outer products ``a_j a_j'``.
    The models are taken in blocks of rows (:func:`~tinybench_builder.read.compact.row_chunks`; in
    the threads of ``pool`` if given), so that the models x items temporaries stay small;
    every model gets the numbers of one pass over all models.

    Parameters
    ----------
    Y : ndarray (n, N) or CompactScores
        Scores in [0, 1]; NaN = not observed (ignored).
    A : ndarray (N, D); b : ndarray (N,)
    prior_mean : ndarray (D,); prior_cov : ndarray (D, D)

    Returns
    -------
    theta : ndarray (n, D)
    cov : ndarray (n, D, D), or None with ``with_cov=False`` (a pass over every score saved)
        Inverse Hessian of the negative log-posterior at the MAP (Laplace approximation).
    """
    store = Y if isinstance(Y, CompactScores) else None
    if store is None:
        Y = np.atleast_2d(Y)
    n, N = Y.shape
    D = A.shape[1]
    P_inv = np.linalg.inv(prior_cov)
    AA = np.einsum("jd,je->jde", A, A).reshape(A.shape[0], D * D)
    theta = np.tile(np.asarray(prior_mean, dtype=np.float64), (n, 1))
    chunks = row_chunks(n, N)

    def rows_of(sl: slice):
        """(scores with NaN -> 0, float weights or None when all are observed) of rows sl."""
        if store is not None:
            Yf, mask = store.block(sl, dtype=np.float64)
            return Yf, (None if mask is None else mask.astype(np.float64))
        obs = ~np.isnan(Y[sl])
        return np.where(obs, Y[sl], 0.0), (obs.astype(np.float64) if not obs.all() else None)

    cached = [rows_of(sl) for sl in chunks] if len(chunks) == 1 else None

    def grad_hess(th, Yf, W):
        P = th @ A.T  # in place below: the same numbers as expit(th @ A.T - b), fewer big temporaries
        P -= b
        expit(P, out=P)
        R = P - Yf
        Wp = 1.0 - P
        Wp *= P  # = P * (1 - P): a product is the same either way round
        if W is not None:
            R *= W
            Wp *= W
        grad = R @ A + (th - prior_mean) @ P_inv
        H = (Wp @ AA).reshape(th.shape[0], D, D) + P_inv
        return grad, H

    def newton_step(c: int):
        sl = chunks[c]
        grad, H = grad_hess(theta[sl], *(cached[c] if cached is not None else rows_of(sl)))
        step = np.linalg.solve(H, grad[..., None])[..., 0]
        norm = np.linalg.norm(step, axis=1, keepdims=True)
        step *= np.minimum(1.0, max_step / np.maximum(norm, 1e-300))
        theta[sl] = theta[sl] - step
        return float(norm.max()) if norm.size else 0.0

    def run(fn):
        idx = range(len(chunks))
        return list(pool.map(fn, idx)) if pool is not None and len(chunks) > 1 else [fn(c) for c in idx]

    for _ in range(n_newton):
        if max(run(newton_step)) < tol:
            break

    def covariance(c: int):
        sl = chunks[c]
        _, H = grad_hess(theta[sl], *(cached[c] if cached is not None else rows_of(sl)))
        return np.linalg.inv(H)

    if not with_cov:
        return theta, None
    return theta, np.concatenate(run(covariance)) if n else np.zeros((0, D, D))
