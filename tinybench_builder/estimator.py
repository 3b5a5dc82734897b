"""Estimate a model's full-benchmark score from its results on a tiny benchmark.

This file is standalone: it needs only numpy and scipy, and is uploaded as-is next to
the tiny dataset together with its side files::

    estimator.json          item ids, anchor ids, the chosen estimator and its calibration
    irt_parameters.npz      IRT item parameters, strata, anchor weights, regression weights (no pickle)

Usage::

    from estimator import TinyEstimator
    est = TinyEstimator.load("path/to/tinyMMLU")        # or TinyEstimator.from_hub(...)
    est.estimate([1, 0, 1, ...], version="1.0.0")      # k scores in est.anchor_ids order, made against 1.0.0
    est.estimate({"abstract_algebra.12": 1.0, ...})     # any subset of the anchors (or a full row), by item id
    est.estimate(matrix)                                 # 2-D: one result per row
    s = est.adaptive(budget=200, seed=0)                 # adaptive evaluation over ALL items (adaptive.py)

``version=`` declares the tiny dataset version (or design hash, :attr:`TinyEstimator.design_hash`)
the results were made against: results of another design are refused naming both versions; this
version and the earlier ones whose design it keeps (``metadata.re_estimates``) are accepted.

Each result maps ``score`` (the estimate to read) with ``ci_low``..``ci_high`` (its 95%
interval) and ``se``, the components ``irt`` (anchor-weighted mean), ``pirt``
(observed anchors plus IRT predictions for every other item) and ``gpirt`` (their
blend, as in tinyBenchmarks), ``n_answered`` and, for bundles of several benchmarks,
``scenarios`` with the same keys per benchmark.

How ``score`` is computed (for tiny benchmarks built with the stratified design):

* the anchors are a stratified random sample of the items (strata of equal weight along
  the items' easiness), so a *design-based* estimate exists that is unbiased for any
  model, whether or not the IRT model describes it: ``db`` = the IRT prediction of the
  full score plus the stratified mean of the residuals ``y_j - p_j`` on the anchors
  (augmented inverse-probability weighting); its standard error comes from the spread of
  the residuals within strata;
* a *model-based* estimate ``mb`` learned from the training models: a weighted mix of
  p-IRT and a ridge regression of the residual full score on the anchor results (weights
  and the mix chosen out-of-fold); its error ``sigma`` is measured out-of-fold;
* ``score = g * db + (1 - g) * mb`` with ``g = s2 / (s2 + se_db^2)`` and
  ``s2 = sigma^2 + kappa * d2``, where ``d2`` is the expected squared distance of the score
  outside the training models' score range (the score taken as ``N(db, se_db^2)``): models
  like the training ones get the sharper model-based estimate, models near or outside the
  edge of the range (typically newer, stronger ones) get the design-based one, and the
  interval widens accordingly. The model-based part of the interval is scaled so that
  out-of-fold intervals cover, on full runs and on partial ones (some anchors unanswered).

The ability ``theta`` is the MAP on the answered anchors with the training models'
abilities as a Gaussian prior; unseen items get the posterior-averaged probability
``sigmoid(m_j / sqrt(1 + pi/8 * a_j' S a_j))``. Tiny benchmarks built with the original
k-means design report ``score = gpirt``.

Estimators imported from the original release (``design == "original"``, ``tinybench-builder
import-original``) compute what the original ``tinyBenchmarks.evaluate`` computes, with its
numerics: theta by BFGS (numerical gradients, from 0, no prior) on the answered anchors, the
logit ``sum_d clip(a_jd theta_d - b_j, -30, 30)`` (``b`` is the original's per-dimension
difficulty ``B``), ``irt = sum w_i y_i`` over the anchors (re-weighted over the answered ones),
``pirt = l * mean(balance * y)[answered] + (1 - l) * mean(balance * p)[other items]`` with
``l = answered / N`` (``balance`` the original's weights, not normalised), ``score = gpirt``;
no interval (``ci_low``/``ci_high``/``se`` are NaN: the original has none).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import warnings
import zipfile
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
from scipy.special import expit, ndtr
from scipy.stats import norm

FORMAT = "tinybenchmarks-estimator"
SCHEMA_VERSION = 2
JSON_NAME = "estimator.json"
NPZ_NAME = "irt_parameters.npz"
MANIFEST_NAME = "manifest.json"
SIDE_FILES = (JSON_NAME, NPZ_NAME)
#: the standalone adaptive-evaluation session (:meth:`TinyEstimator.adaptive`), shipped next to this file
ADAPTIVE_NAME = "adaptive.py"
#: the API version of adaptive.py this file works with
ADAPTIVE_API = 1
#: Hub organisation of the released tiny benchmarks (the default source of :func:`evaluate`)
HUB_ORG = "tinyBenchmarks"
#: the original package's ``evaluate(y, bench)`` names -> tiny dataset repository
#: (kept equal to ``BenchmarkSpec.original_bench`` in tinybench_builder/benchmarks.py by a test)
ORIGINAL_BENCHMARKS = {
    "mmlu": "tinyMMLU", "arc": "tinyAI2_arc", "hellaswag": "tinyHellaswag", "winogrande": "tinyWinogrande",
    "truthfulqa": "tinyTruthfulQA", "gsm8k": "tinyGSM8k", "alpaca": "tinyAlpacaEval", "helm_lite": "tinyHELM",
    "lb": "tinyOpenLLMLeaderboard",
}
#: how ``score`` is formed: the composite of the design- and model-based estimates, or gp-IRT
METHODS = ("composite", "gpirt")
_NPZ_KEYS = ("A", "b", "balance", "scenario", "strata", "anchor_positions", "anchor_weights", "anchor_strata",
             "ridge_coef")
#: per-scenario settings and their defaults (what an estimator without calibration uses)
DEFAULT_PARAMS = {
    "method": "gpirt", "lambda": 0.5, "interval_scale": 1.0, "pirt_weight": 1.0, "sigma": 0.0,
    "range": [0.0, 1.0], "kappa": 16.0, "ridge_intercept": 0.0, "design_slope": 1.0,
    "sigma_partial": 0.0,
}
#: weight (in degrees of freedom) of the IRT model's per-draw variance in a stratum's design variance
MODEL_DOF = 1.0
_SQRT_2PI = math.sqrt(2.0 * math.pi)
# a sanity bound on stored parameters: |a|, |b| beyond this are corrupt, not fitted
_MAX_PARAM = 1e4


class TinyEstimator:
    """Full-score estimates (score with a 95% interval; irt, p-IRT, gp-IRT) from anchor results.

    Build one with :meth:`load` (a folder of side files) or :meth:`from_hub`; the
    builder creates them with the constructor and :meth:`save`.

    Parameters
    ----------
    item_ids : sequence of str (N,)
    anchor_positions : sequence of int (k,)
        Positions of the anchors in ``item_ids``, in the order a positional input follows.
    anchor_weights : sequence of float (k,)
        Weight of each anchor in the anchor-weighted mean (sum 1 per scenario).
    A, b : ndarray (N, D), (N,)
        IRT discriminations and difficulties.
    balance : ndarray (N,)
        Item weights of the full score (normalised per scenario here).
    scenario_index : ndarray (N,) of int; scenario_names : sequence of str (S,)
    strata : ndarray (N,) of int
        Stratum of every item (anchors sample the strata).
    anchor_strata : ndarray (k,) of int, optional
        Stratum of every anchor; default ``strata[anchor_positions]``.
    prior_mean, prior_cov : ndarray (D,), (D, D)
        Gaussian prior of theta (the training models' abilities).
    params : mapping scenario -> dict, optional
        Per-scenario settings (:data:`DEFAULT_PARAMS`): ``method`` ("composite" or
        "gpirt"), ``lambda`` (gp-IRT weight of irt), ``interval_scale``,
        ``pirt_weight`` (share of p-IRT in the model-based estimate), ``sigma`` (its
        out-of-fold error), ``range`` (training score range), ``kappa`` (penalty
        outside the range) and ``ridge_intercept``.
    ridge_coef : ndarray (k,), optional
        Ridge weight of each anchor in its scenario's regression (default 0).
    design : str
        How the anchors were chosen ("stratified", "kmeans", "original").
    confidence : float
    metadata : mapping, optional
        Free-form build information (benchmark name, version, validation table).
    """

    #: adaptive.py of the folder this estimator was loaded from (used when none sits next to this file)
    _adaptive_fallback: Path | None = None

    def __init__(
        self,
        item_ids: Sequence[str],
        anchor_positions: Sequence[int],
        anchor_weights: Sequence[float],
        A: np.ndarray,
        b: np.ndarray,
        balance: np.ndarray,
        scenario_index: np.ndarray,
        scenario_names: Sequence[str],
        strata: np.ndarray,
        prior_mean: np.ndarray,
        prior_cov: np.ndarray,
        params: Mapping[str, Mapping[str, Any]] | None = None,
        anchor_strata: np.ndarray | None = None,
        ridge_coef: np.ndarray | None = None,
        design: str = "stratified",
        confidence: float = 0.95,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self.item_ids = [str(i) for i in item_ids]
        N = len(self.item_ids)
        if N == 0:
            raise ValueError("no items")
        if len(set(self.item_ids)) != N:
            raise ValueError("item ids must be unique")
        self.A = np.atleast_2d(np.asarray(A, dtype=np.float64))
        self.b = np.asarray(b, dtype=np.float64).reshape(-1)
        if self.A.shape[0] != N or self.b.shape != (N,):
            raise ValueError(f"A must be ({N}, D) and b ({N},), got {self.A.shape} and {self.b.shape}")
        _check_finite("A", self.A, bound=_MAX_PARAM)
        _check_finite("b", self.b, bound=_MAX_PARAM)
        self.n_dims = self.A.shape[1]
        self.balance = np.asarray(balance, dtype=np.float64).reshape(-1)
        self.scenario_index = _as_int(scenario_index, "scenario_index").reshape(-1)
        self.strata = _as_int(strata, "strata").reshape(-1)
        for name, arr in (("balance", self.balance), ("scenario_index", self.scenario_index), ("strata", self.strata)):
            if arr.shape != (N,):
                raise ValueError(f"{name} must have shape ({N},), got {arr.shape}")
        _check_finite("balance", self.balance)
        if (self.balance <= 0).any():
            raise ValueError("balance weights must be positive")
        self.scenarios = [str(s) for s in scenario_names]
        if not self.scenarios or len(set(self.scenarios)) != len(self.scenarios):
            raise ValueError("scenario names must be non-empty and unique")
        if self.scenario_index.min() < 0 or self.scenario_index.max() >= len(self.scenarios):
            raise ValueError("scenario_index out of range of scenario_names")
        self.anchor_positions = _as_int(anchor_positions, "anchor_positions").reshape(-1)
        self.anchor_weights = np.asarray(anchor_weights, dtype=np.float64).reshape(-1)
        k = self.anchor_positions.shape[0]
        if k == 0:
            raise ValueError("no anchors")
        if self.anchor_weights.shape != (k,):
            raise ValueError(f"{k} anchors but {self.anchor_weights.shape[0]} anchor weights")
        _check_finite("anchor_weights", self.anchor_weights)
        if (self.anchor_weights < 0).any():
            raise ValueError("anchor weights must be non-negative")
        if self.anchor_positions.min() < 0 or self.anchor_positions.max() >= N:
            raise ValueError("anchor positions out of range")
        if len(set(self.anchor_positions.tolist())) != k:
            raise ValueError("anchor positions must be distinct")
        if self.strata.min() < 0:
            raise ValueError("strata must be non-negative")
        self.anchor_strata = (self.strata[self.anchor_positions] if anchor_strata is None
                              else _as_int(anchor_strata, "anchor_strata").reshape(-1))
        if self.anchor_strata.shape != (k,) or not np.array_equal(self.anchor_strata, self.strata[self.anchor_positions]):
            raise ValueError("anchor_strata must be the strata of the anchor positions")
        if set(np.unique(self.strata).tolist()) - set(self.anchor_strata.tolist()):
            raise ValueError("every stratum needs at least one anchor")
        # a stratum lies within one scenario
        first = np.zeros(self.strata.max() + 1, dtype=np.int64)
        first[self.strata] = self.scenario_index
        if not np.array_equal(first[self.strata], self.scenario_index):
            raise ValueError("a stratum spans several scenarios")
        self.ridge_coef = np.zeros(k) if ridge_coef is None else np.asarray(ridge_coef, dtype=np.float64).reshape(-1)
        if self.ridge_coef.shape != (k,):
            raise ValueError(f"ridge_coef must have shape ({k},), got {self.ridge_coef.shape}")
        _check_finite("ridge_coef", self.ridge_coef, bound=_MAX_PARAM)
        self.prior_mean = np.asarray(prior_mean, dtype=np.float64).reshape(-1)
        self.prior_cov = np.atleast_2d(np.asarray(prior_cov, dtype=np.float64))
        if self.prior_mean.shape != (self.n_dims,) or self.prior_cov.shape != (self.n_dims, self.n_dims):
            raise ValueError("prior mean/cov do not match the IRT dimension")
        _check_finite("prior mean", self.prior_mean, bound=_MAX_PARAM)
        _check_finite("prior cov", self.prior_cov, bound=_MAX_PARAM)
        if not np.allclose(self.prior_cov, self.prior_cov.T) or np.linalg.eigvalsh(self.prior_cov).min() <= 0:
            raise ValueError("prior cov must be symmetric positive definite")
        unknown = set(params or {}) - set(self.scenarios)
        if unknown:
            raise ValueError(f"params for unknown scenario(s) {sorted(unknown)}")
        self.params = {s: _check_params(s, (params or {}).get(s, {})) for s in self.scenarios}
        if design not in ("stratified", "kmeans", "original"):
            raise ValueError(f"unknown design {design!r}")
        self.design = design
        if not 0 < confidence < 1:
            raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
        self.confidence = float(confidence)
        self.metadata = dict(metadata or {})
        self._root: Path | None = None  # the folder (or Hub snapshot) it was loaded from: tiny_split() reads it
        self._source: tuple[str, str | None] | None = None  # (repo_id, commit) when loaded from the Hub
        self._hub_kwargs: dict = {}
        self._prepare()

    @property
    def lambdas(self) -> dict:
        """gp-IRT weight of ``irt`` per scenario."""
        return {s: p["lambda"] for s, p in self.params.items()}

    # ----------------------------------------------------------- derived data
    def _prepare(self) -> None:
        N, S, k = len(self.item_ids), len(self.scenarios), len(self.anchor_positions)
        self._designs = _known_designs(self.metadata)
        for d in self._designs:
            if d["anchor_ids"] is not None and set(d["anchor_ids"]) - set(self.item_ids):
                raise ValueError(f"metadata.re_estimates: version {d['version']} has anchors that are not items")
        self.anchor_ids = [self.item_ids[p] for p in self.anchor_positions]
        self._anchor_index = {a: i for i, a in enumerate(self.anchor_ids)}
        self._item_set = set(self.item_ids)
        self._prior_prec = np.linalg.inv(self.prior_cov)
        self._A_anchor = self.A[self.anchor_positions]
        self._b_anchor = self.b[self.anchor_positions]
        self._anchor_scenario = self.scenario_index[self.anchor_positions]
        # balance weights normalised per scenario (they define the full score)
        tot = np.bincount(self.scenario_index, weights=self.balance, minlength=S)
        self._w = self.balance / tot[self.scenario_index]
        self._w_anchor = self._w[self.anchor_positions]
        self._one_hot = np.zeros((N, S))
        self._one_hot[np.arange(N), self.scenario_index] = 1.0
        self._anchor_one_hot = self._one_hot[self.anchor_positions]
        self._scenario_items = [np.flatnonzero(self.scenario_index == s) for s in range(S)]
        self._scenario_anchors = [np.flatnonzero(self._anchor_scenario == s) for s in range(S)]
        # outer products a_j a_j' flattened: a_j' S a_j for all items is one product
        self._AA = np.einsum("jd,je->jde", self.A, self.A).reshape(N, -1)
        self._z = float(norm.ppf(0.5 + self.confidence / 2))
        # strata: relabelled 0..H-1; item sums per stratum through one reduceat
        _, self._item_h = np.unique(self.strata, return_inverse=True)
        self._anchor_h = self._item_h[self.anchor_positions]
        H = int(self._item_h.max()) + 1
        self._H = H
        self._W_h = np.bincount(self._item_h, weights=self._w, minlength=H)  # stratum mass
        self._N_h = np.bincount(self._item_h, minlength=H).astype(np.float64)
        self._n_h = np.bincount(self._anchor_h, minlength=H).astype(np.float64)  # anchors per stratum
        self._h_scenario = np.zeros(H, dtype=np.int64)
        self._h_scenario[self._item_h] = self.scenario_index
        self._h_one_hot = np.zeros((H, S))
        self._h_one_hot[np.arange(H), self._h_scenario] = 1.0
        self._anchor_h_one_hot = np.zeros((k, H))
        self._anchor_h_one_hot[np.arange(k), self._anchor_h] = 1.0
        self._order = np.argsort(self._item_h, kind="stable")
        self._starts = np.concatenate([[0], np.cumsum(np.bincount(self._item_h, minlength=H))[:-1]])
        # one anchor per stratum everywhere (k-means, original): no within-stratum spread
        self._single = bool((self._n_h <= 1).all())
        self._p = {key: np.array([self.params[s][key] for s in self.scenarios], dtype=np.float64)
                   for key in ("lambda", "interval_scale", "pirt_weight", "sigma", "kappa", "ridge_intercept",
                                "design_slope", "sigma_partial")}
        self._lo = np.array([self.params[s]["range"][0] for s in self.scenarios])
        self._hi = np.array([self.params[s]["range"][1] for s in self.scenarios])
        self._composite = np.array([self.params[s]["method"] == "composite" for s in self.scenarios])
        self._k_s = self._anchor_one_hot.sum(0)  # anchors per scenario

    # ------------------------------------------------------------------ I/O
    def irt_parameters(self) -> tuple[np.ndarray, np.ndarray]:
        """``(A, b)``: discriminations (N, D) and difficulties (N,), in ``item_ids`` order."""
        return self.A.copy(), self.b.copy()

    def save(self, path: str | os.PathLike) -> list[Path]:
        """Write the side files into folder ``path``; returns their paths."""
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        meta = {
            "format": FORMAT,
            "schema_version": SCHEMA_VERSION,
            "n_items": len(self.item_ids),
            "n_anchors": len(self.anchor_ids),
            "n_dims": self.n_dims,
            "design": self.design,
            "scenarios": self.scenarios,
            "params": self.params,
            "confidence": self.confidence,
            "ability_prior": {"mean": self.prior_mean.tolist(), "cov": self.prior_cov.tolist()},
            "anchor_ids": self.anchor_ids,
            "item_ids": self.item_ids,
            "metadata": self.metadata,
        }
        json_path = folder / JSON_NAME
        json_path.write_text(json.dumps(meta, indent=1, sort_keys=False, allow_nan=False) + "\n", encoding="utf-8")
        npz_path = folder / NPZ_NAME
        arrays = {
            "A": self.A, "b": self.b, "balance": self.balance, "scenario": self.scenario_index,
            "strata": self.strata, "anchor_positions": self.anchor_positions,
            "anchor_weights": self.anchor_weights, "anchor_strata": self.anchor_strata, "ridge_coef": self.ridge_coef,
        }
        _write_npz_deterministic(npz_path, arrays)
        return [json_path, npz_path]

    @classmethod
    def load(cls, path: str | os.PathLike) -> "TinyEstimator":
        """Read the side files from a folder (no pickle: loading runs no code).

        Every field and array is checked; a missing, malformed or implausible one raises
        ``ValueError`` naming the file and the field. Array sizes are checked against the
        item count *before* the arrays are read.
        """
        folder = Path(path)
        json_path, npz_path = folder / JSON_NAME, folder / NPZ_NAME
        for p in (json_path, npz_path):
            if not p.is_file():
                raise FileNotFoundError(f"{p} not found: is {folder} a tiny benchmark folder?")
        try:
            meta = json.loads(json_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise ValueError(f"{json_path}: not valid JSON ({exc})") from exc
        if not isinstance(meta, dict):
            raise ValueError(f"{json_path}: not a JSON object")
        if meta.get("format") != FORMAT:
            raise ValueError(f"{json_path}: not a tiny estimator file (format={meta.get('format')!r})")
        version = meta.get("schema_version", 0)
        if not isinstance(version, int) or version < 1:
            raise ValueError(f"{json_path}: field 'schema_version' must be a positive integer")
        if version > SCHEMA_VERSION:
            raise ValueError(
                f"{json_path}: schema version {version} is newer than this estimator "
                f"({SCHEMA_VERSION}); use the estimator.py shipped next to the data"
            )
        field = _FieldReader(json_path, meta)
        item_ids = field.str_list("item_ids")
        anchor_ids = field.str_list("anchor_ids")
        scenarios = field.str_list("scenarios")
        prior = field.get("ability_prior", dict)
        N, k = len(item_ids), len(anchor_ids)
        D = len(prior.get("mean", [])) if isinstance(prior.get("mean"), list) else 0
        if version == 1:
            shapes = {"A": (N, D), "b": (N,), "balance": (N,), "scenario": (N,), "cluster": (N,),
                      "anchor_positions": (k,), "anchor_weights": (k,)}
        else:
            shapes = {"A": (N, D), "b": (N,), "balance": (N,), "scenario": (N,), "strata": (N,),
                      "anchor_positions": (k,), "anchor_weights": (k,), "anchor_strata": (k,), "ridge_coef": (k,)}
        arr = _read_npz(npz_path, shapes)
        try:
            if version == 1:
                # schema 1: one anchor per cluster, gp-IRT only (score = gpirt)
                lambdas, scales = meta.get("lambdas") or {}, meta.get("interval_scale") or {}
                if not isinstance(lambdas, dict) or not isinstance(scales, dict):
                    raise ValueError("fields 'lambdas' and 'interval_scale' must be objects")
                params = {s: {"method": "gpirt", "lambda": lambdas.get(s, 0.5), "interval_scale": scales.get(s, 1.0)}
                          for s in scenarios}
                strata, anchor_strata, ridge, design = arr["cluster"], None, None, "kmeans"
            else:
                params = field.get("params", dict)
                strata, anchor_strata, ridge = arr["strata"], arr["anchor_strata"], arr["ridge_coef"]
                design = field.get("design", str)
            est = cls(
                item_ids=item_ids, anchor_positions=arr["anchor_positions"], anchor_weights=arr["anchor_weights"],
                A=arr["A"], b=arr["b"], balance=arr["balance"], scenario_index=arr["scenario"],
                scenario_names=scenarios, strata=strata, anchor_strata=anchor_strata, ridge_coef=ridge,
                prior_mean=prior.get("mean"), prior_cov=prior.get("cov"), params=params, design=design,
                confidence=meta.get("confidence", 0.95), metadata=meta.get("metadata"),
            )
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{folder}: invalid estimator side files: {exc}") from exc
        if est.anchor_ids != anchor_ids:
            raise ValueError(f"{json_path}: anchor_ids disagree with the anchor positions in {npz_path.name}")
        if not isinstance(est.metadata, dict):
            raise ValueError(f"{json_path}: field 'metadata' must be an object")
        # the dataset folder (its manifest lists the tiny splits): this one, or the parent of
        # a per-config estimator
        est._root = next((f for f in (folder, folder.parent) if (f / MANIFEST_NAME).is_file()), None)
        est._adaptive_fallback = folder / ADAPTIVE_NAME  # used only when no adaptive.py sits next to this file
        return est

    @classmethod
    def from_hub(
        cls,
        repo_id: str,
        revision: str | None = None,
        subfolder: str | None = None,
        cache_dir: str | None = None,
        token: str | bool | None = None,
    ) -> "TinyEstimator":
        """Download a released version's side files (cached) and load them.

        ``revision`` is a release tag (``"v1.0.0"``), a commit id or a branch (default
        ``main``); ``subfolder`` selects a per-config estimator (``"<config>"``) in
        benchmarks whose configs are fitted separately. ``manifest.json`` and the side
        files are fetched together from ONE commit (``snapshot_download`` resolves the
        revision once), and every side file is checked against the sha256 in that
        manifest: a mismatch, or a side file the manifest does not list, raises
        ``ValueError``. The files live in the Hugging Face
        cache, so once a revision has been downloaded this works offline
        (``HF_HUB_OFFLINE=1``); the hashes are checked again on every load.
        """
        from huggingface_hub import snapshot_download  # lazy: only this method needs it

        prefix = f"{subfolder.strip('/')}/" if subfolder else ""
        where = f"{repo_id}@{revision or 'main'}"
        snapshot = Path(snapshot_download(
            repo_id, repo_type="dataset", revision=revision, cache_dir=cache_dir, token=token,
            allow_patterns=sorted({MANIFEST_NAME, prefix + MANIFEST_NAME, ADAPTIVE_NAME,
                                   *(prefix + n for n in SIDE_FILES)}),
        ))
        folder = snapshot / prefix if prefix else snapshot
        # the release's manifest sits at the root (paths relative to the root); a subfolder
        # may carry its own (paths relative to the subfolder)
        if (snapshot / MANIFEST_NAME).is_file():
            manifest_path, key_prefix = snapshot / MANIFEST_NAME, prefix
        elif prefix and (folder / MANIFEST_NAME).is_file():
            manifest_path, key_prefix = folder / MANIFEST_NAME, ""
        else:
            raise ValueError(f"{where}: no {MANIFEST_NAME}: not a released tiny benchmark")
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{where}: {MANIFEST_NAME} is not valid JSON ({exc})") from exc
        expected = manifest.get("files") if isinstance(manifest, dict) else None
        if not isinstance(expected, dict):
            raise ValueError(f"{where}: {MANIFEST_NAME} has no \"files\" table")
        # the side files (required) and adaptive.py at the root (releases before it have none)
        checks = [(folder / n, key_prefix + n, prefix + n) for n in SIDE_FILES]
        code = snapshot / ADAPTIVE_NAME
        verified_code = key_prefix == prefix and code.is_file()  # only the root's manifest lists the root's code
        if verified_code:
            checks.append((code, ADAPTIVE_NAME, ADAPTIVE_NAME))
        for path, key, name in checks:
            if not path.is_file():
                raise FileNotFoundError(f"{where}: {name} is missing from the release")
            entry = expected.get(key)
            want = entry.get("sha256") if isinstance(entry, dict) else None
            if not want:
                raise ValueError(f"{where}: the manifest has no sha256 for {name}; refusing an unverified file")
            got = _sha256(path)
            if got != want:
                raise ValueError(
                    f"{where}: {name} has sha256 {got[:12]}..., the manifest says {str(want)[:12]}...; "
                    "refusing a modified or corrupt file"
                )
        est = cls.load(folder)
        est._root = snapshot
        # snapshot_download returns .../snapshots/<commit>: the rows are read from that commit
        commit = snapshot.name if re.fullmatch(r"[0-9a-f]{40}", snapshot.name) else revision
        est._source = (repo_id, commit)
        est._hub_kwargs = {k: v for k, v in (("cache_dir", cache_dir), ("token", token)) if v is not None}
        est._adaptive_fallback = code if verified_code else None
        return est

    # ------------------------------------------------------------- adaptive
    def adaptive(self, budget: int | None = None, target_halfwidth: float | None = None, seed: int = 0,
                 start: Mapping[str, Any] | None = None, **options: Any):
        """An adaptive evaluation session over ALL items of the benchmark (``AdaptiveSession`` of
        ``adaptive.py``: its docstring has the design and why the interval needs no IRT model).

        ``s.next_items(n)`` draws items with known probabilities, ``s.record({id: score})``
        records results (any order, any batch size), ``s.result()`` gives ``score``, ``ci_low``,
        ``ci_high``, ``se``, ``n_answered``, ``done``, ... ``budget``: items to ask;
        ``target_halfwidth``: stop once the interval is that narrow; ``start``: results already
        in hand (e.g. the tiny split's ``{anchor_id: score}``); ``options``: ``pool``,
        ``mixing``, ``min_draws``, ``confidence`` (see ``AdaptiveSession``).

        ``adaptive.py`` is the one next to this file; failing that, the one of the folder this
        estimator was loaded from (``from_hub`` checks its sha256 against the release manifest).
        It is imported only here: loading side files still runs no code.
        """
        module = _adaptive_module(self._adaptive_fallback)
        return module.AdaptiveSession.from_estimator(self, budget=budget, target_halfwidth=target_halfwidth,
                                                     seed=seed, start=start, **options)

    # ------------------------------------------------------------- estimate
    def estimate(self, scores: Any, version: str | None = None) -> dict | list[dict]:
        """Estimate the full-benchmark score.

        Parameters
        ----------
        scores
            * a sequence of k scores in ``anchor_ids`` order (NaN/None = not answered);
            * a mapping ``{item_id: score}`` over any subset of the anchors, or a full row
              (every anchor, any other items of the benchmark are ignored); a pandas Series
              whose index holds item ids is read by its labels;
            * a 2-D array (n, k): one model per row (returns a list of results); a
              pandas DataFrame is read by its column labels (item ids), anchors or full rows.

            Scores are numbers in [0, 1] (booleans accepted).
        version : str, optional
            The tiny dataset version (``"1.0.0"``) or design hash (:attr:`design_hash`, or
            its first 8+ characters) the results were made against. A positional vector
            cannot say where it came from: declaring it turns results of another design
            (other anchors, or another order) into a ``ValueError`` naming both versions
            instead of a silently wrong estimate. This version, and every earlier version
            whose design this one keeps (:meth:`known_designs`), are accepted.

        Returns
        -------
        dict (or list of dicts for 2-D input)
            ``score``, ``ci_low``, ``ci_high``, ``se``, ``irt``, ``pirt``, ``gpirt``,
            ``n_answered``, and ``scenarios`` (per-benchmark results) for bundles.
        """
        order = self.design_of(version) if version is not None else None
        Y, single = self._parse(scores, order)
        results = self._results(self.components(Y))
        return results[0] if single else results

    # ------------------------------------------------------------- versions
    @property
    def design_hash(self) -> str:
        """The design's identity: sha256 of the anchor ids, their order and strata
        (:func:`design_hash`). Results made against the same design are estimable."""
        return design_hash(self.anchor_ids, self.anchor_strata.tolist())

    @property
    def version(self) -> str | None:
        """The tiny dataset version this estimator belongs to (None for a ``tinybench-builder fit`` folder)."""
        v = self.metadata.get("version")
        return str(v) if v is not None else None

    def known_designs(self) -> list[dict]:
        """The designs whose results this estimator estimates: ``[{"version", "design_hash",
        "anchor_ids"}]``, this version first, then the earlier versions it re-estimates
        (``anchor_ids``: that version's positional order, None when it is this one's)."""
        own = {"version": self.version, "design_hash": self.design_hash, "anchor_ids": None}
        return [own, *self._designs]

    def design_of(self, declared: Any) -> list[str] | None:
        """The anchor order of the declared version or design hash (None: this estimator's
        own), or ``ValueError`` naming both versions when this estimator cannot estimate
        results made against it. ``estimate(..., version=)`` calls it; so do tools that read
        results by item id and only need the check."""
        if not isinstance(declared, str) or not declared.strip():
            raise ValueError(f"version must be a version string such as '1.0.0' or a design hash, got {declared!r}")
        text = declared.strip()
        is_hash = bool(re.fullmatch(r"[0-9a-fA-F]{8,64}", text))
        want = text.lower() if is_hash else text[1:] if text[:1] in "vV" and text[1:2].isdigit() else text
        for d in self.known_designs():
            if (d["design_hash"].startswith(want) if is_hash else d["version"] == want):
                return d["anchor_ids"]
        name = self.metadata.get("benchmark") or "this tiny benchmark"
        mine = f"{name} {self.version}" if self.version else name
        earlier = [d["version"] for d in self._designs if d["version"]]
        also = f" and those of {', '.join(earlier)} (same anchors)" if earlier else ""
        what = f"design {text}" if is_hash else f"{name} {want}"
        use = ("the estimator whose design hash that is" if is_hash
               else f"the estimator of {want} (TinyEstimator.from_hub(repo, revision=\"v{want}\"))")
        raise ValueError(
            f"results made against {what} cannot be estimated by {mine} (design {self.design_hash[:12]}): it "
            f"estimates results made against its own design{also}, and the anchors (or their order) of {what} "
            f"are not known to be those; estimate them with {use}")

    def tiny_split(self, config: str | None = None):
        """The rows of the tiny split this estimator was loaded with, as a pandas DataFrame
        (needs pandas and pyarrow): from the same folder or the same Hub commit as the side
        files, so rows and estimator are of one revision (:meth:`from_hub`)."""
        import pyarrow.parquet as pq

        root = getattr(self, "_root", None)
        if root is None:
            raise ValueError("this estimator was not loaded from a tiny dataset folder or the Hub")
        manifest_path = Path(root) / MANIFEST_NAME
        if self._source is not None and not manifest_path.is_file():
            raise ValueError(f"{self._source}: no {MANIFEST_NAME}")
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            configs = manifest["configs"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{root}: no tiny dataset manifest ({exc})") from exc
        name = config or next(iter(configs))
        if name not in configs:
            raise ValueError(f"no config {name!r}; configs: {', '.join(configs)}")
        rel = configs[name]["splits"][configs[name]["tiny_split"]]["path"]
        path = Path(root) / rel
        if self._source is not None:
            from huggingface_hub import hf_hub_download  # lazy: only the Hub needs it

            repo_id, commit = self._source
            path = Path(hf_hub_download(repo_id, rel, repo_type="dataset", revision=commit, **self._hub_kwargs))
        want = (manifest.get("files") or {}).get(rel, {}).get("sha256")
        if want and _sha256(path) != want:
            raise ValueError(f"{rel} does not match the sha256 in the manifest; refusing a modified file")
        return pq.read_table(path).to_pandas()

    def components(self, Y: np.ndarray) -> dict:
        """Per-scenario estimator parts for a (n, k) anchor matrix (NaN = unanswered).

        Returns arrays of shape (n, S): ``irt``, ``se_irt``, ``pirt``, ``se_pirt``,
        ``gpirt``, ``db``, ``se_db`` (design-based), ``ridge``, ``mb`` (model-based),
        ``score``, ``se`` (of ``score``, calibrated), ``weight_db`` (``g``),
        ``answered``; ``theta`` (n, D) and ``x`` (n, k), the anchor results with the
        unanswered ones predicted (the regression's input).
        """
        Y = np.asarray(Y, dtype=np.float64)
        if Y.ndim != 2 or Y.shape[1] != len(self.anchor_ids):
            raise ValueError(f"expected an (n, {len(self.anchor_ids)}) anchor matrix, got shape {Y.shape}")
        if self.design == "original":
            return self._original_components(Y)
        obs = ~np.isnan(Y)
        Yf = np.where(obs, Y, 0.0)
        # --- theta: MAP on the answered anchors (n x k: small for any n), Laplace covariance
        theta, cov = _map_abilities(Yf, obs, self._A_anchor, self._b_anchor, self.prior_mean, self._prior_prec)
        # the rest makes (n, N) arrays: blocks of rows keep them small for thousands of models
        parts = [self._item_components(Yf[sl], obs[sl], theta[sl], cov[sl])
                 for sl in _row_blocks(Y.shape[0], len(self.item_ids))]
        return parts[0] if len(parts) == 1 else {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}

    def _item_components(self, Yf: np.ndarray, obs: np.ndarray, theta: np.ndarray, cov: np.ndarray) -> dict:
        """:meth:`components` of some models given their abilities (every models x items array
        is made here)."""
        n, S = Yf.shape[0], len(self.scenarios)
        answered = (obs @ self._anchor_one_hot).astype(np.int64)
        # posterior-averaged P(correct): sigmoid(m / sqrt(1 + pi/8 a'Sa))
        q = cov.reshape(n, -1) @ self._AA.T  # (n, N)
        q *= np.pi / 8.0
        q += 1.0
        np.sqrt(q, out=q)
        P = theta @ self.A.T
        P -= self.b
        P /= q
        P = expit(P, out=P)
        V = q  # reuse the buffer: V = P (1 - P)
        np.multiply(P, 1.0 - P, out=V)
        Pa, Va = P[:, self.anchor_positions], V[:, self.anchor_positions]
        # --- pirt: sum over all items of w p, then the answered anchors' y replace their p
        wa_items = self._w_anchor * obs
        pirt = self._by_scenario(P * self._w) + (wa_items * (Yf - Pa)) @ self._anchor_one_hot
        wV = V * self._w
        bern = self._by_scenario(wV * self._w) - (wa_items * self._w_anchor * Va) @ self._anchor_one_hot
        theta_var = np.empty((n, S))
        for s in range(S):
            cols, acols = self._scenario_items[s], self._scenario_anchors[s]
            g = wV @ self.A if S == 1 else wV[:, cols] @ self.A[cols]
            g -= (wa_items[:, acols] * Va[:, acols]) @ self._A_anchor[acols]
            theta_var[:, s] = np.einsum("nd,nde,ne->n", g, cov, g)
        se_pirt = np.sqrt(np.maximum(bern, 0.0) + theta_var)
        # --- stratum means of the answered anchors and the population means of p
        Pbar_h = self._stratum_sums(P * self._w) / np.where(self._W_h > 0, self._W_h, 1.0)  # (n, H)
        u = self._w_anchor * obs  # Hajek weights within a stratum
        U_h = u @ self._anchor_h_one_hot
        seen_h = U_h > 0
        safe_U = np.where(seen_h, U_h, 1.0)
        ybar_h = (u * Yf) @ self._anchor_h_one_hot / safe_U
        xbar_h = (u * Pa) @ self._anchor_h_one_hot / safe_U
        mass_seen = (seen_h * self._W_h) @ self._h_one_hot
        irt = np.divide((seen_h * self._W_h * ybar_h) @ self._h_one_hot, mass_seen,
                        out=np.full((n, S), np.nan), where=mass_seen > 0)
        if self._single:
            se_irt = self._se_one_per_stratum(P, obs)
            db = (self._W_h * np.where(seen_h, ybar_h - xbar_h + Pbar_h, Pbar_h)) @ self._h_one_hot
            se_db = se_irt
        else:
            # per-draw variance the model expects in a stratum (used only when no stratum of
            # the scenario has two answered anchors to measure it)
            model_v = np.maximum(Pbar_h - Pbar_h**2, 0.0)
            se_irt = self._design_se(Yf, obs, u, U_h, ybar_h, model_v)
            db, se_db = self._design_estimate(Yf, obs, P, V, Pa, Pbar_h, u, U_h, seen_h, se_pirt)
        gpirt, gp_se = gp_blend(irt, pirt, se_irt, se_pirt, self._p["lambda"])
        # --- model-based: p-IRT mixed with a ridge regression of the residual full score
        X = np.where(obs, Yf, Pa)
        ridge = db + self._p["ridge_intercept"] + (X * self.ridge_coef) @ self._anchor_one_hot
        mb = self._p["pirt_weight"] * pirt + (1 - self._p["pirt_weight"]) * ridge
        sigma = partial_sigma(self._p["sigma"], self._p["sigma_partial"], answered, self._k_s)
        comp_score, comp_se, g = composite(db, se_db, mb, sigma, self._lo, self._hi, self._p["kappa"],
                                           self._p["interval_scale"])
        # a full score lies in [0, 1]; the regression's extrapolation may step outside
        score = np.clip(np.where(self._composite, comp_score, gpirt), 0.0, 1.0)
        se = np.where(self._composite, comp_se, gp_se * self._p["interval_scale"])
        weight_db = np.where(self._composite, g, np.nan)
        return {"x": X, "irt": irt, "se_irt": se_irt, "pirt": pirt, "se_pirt": se_pirt, "gpirt": gpirt, "db": db,
                "se_db": se_db, "ridge": ridge, "mb": mb, "score": score, "se": se, "weight_db": weight_db,
                "answered": answered, "theta": theta}

    def _by_scenario(self, X: np.ndarray) -> np.ndarray:
        """Per-scenario sums of the columns of X (n, N) -> (n, S)."""
        # a plain row sum for one scenario: a product with an (N, 1) operand can hit a slow
        # BLAS path depending on its strides
        return X.sum(1, keepdims=True) if len(self.scenarios) == 1 else X @ self._one_hot

    def _original_components(self, Y: np.ndarray) -> dict:
        """:meth:`components` of the original ``evaluate`` (module docstring), one model at a time
        with the original's operations, so that its numbers are reproduced to the last bit."""
        from scipy.optimize import minimize

        n, S, D = Y.shape[0], len(self.scenarios), self.n_dims
        a, b = self.A.T[None], self.b[None, None, :]  # the original's (1, D, N) and (1, 1, N)

        def curve(theta, cols):  # the original's item_curve
            return 1 / (1 + np.exp(-np.clip(a[:, :, cols] * theta - b[:, :, cols], -30, 30).sum(axis=1)))

        out = {k: np.full((n, S), np.nan) for k in ("irt", "pirt", "gpirt", "se", "db", "se_db", "ridge", "mb",
                                                     "weight_db", "se_irt", "se_pirt")}
        out.update(theta=np.zeros((n, D)), x=Y.copy(), answered=np.zeros((n, S), dtype=np.int64))
        for i, y in enumerate(Y):
            seen = np.flatnonzero(~np.isnan(y))
            pos, ys = self.anchor_positions[seen].tolist(), y[seen]

            def neg_log_like(x):
                p = curve(x.reshape(1, D, 1), pos).squeeze()
                return -np.sum(ys * np.log(p + 1e-10) + (1 - ys) * np.log(1 - p + 1e-10))

            theta = minimize(neg_log_like, np.zeros(D), method="BFGS").x[None, :, None]
            out["theta"][i] = theta[0, :, 0]
            p_all = curve(theta, slice(None))[0]
            out["x"][i, np.isnan(y)] = p_all[self.anchor_positions[np.isnan(y)]]
            for s in range(S):
                acols = np.intersect1d(self._scenario_anchors[s], seen)
                unseen = np.setdiff1d(self._scenario_items[s], self.anchor_positions[acols])
                w, ya = self.anchor_weights[acols], y[acols]
                lam = len(acols) / len(self._scenario_items[s])
                pirt = (1 - lam) * (self.balance * p_all)[unseen].mean()
                out["pirt"][i, s], out["answered"][i, s], out["gpirt"][i, s] = pirt, len(acols), pirt
                if len(acols) and w.sum() > 0:  # (a batch row may leave a scenario unanswered)
                    irt = (w * ya).sum() * (self.anchor_weights[self._scenario_anchors[s]].sum() / w.sum())
                    pirt = lam * (self.balance[self.anchor_positions[acols]] * ya).mean() + pirt
                    out["irt"][i, s], out["pirt"][i, s] = irt, pirt
                    out["gpirt"][i, s] = self._p["lambda"][s] * irt + (1 - self._p["lambda"][s]) * pirt
        out["score"] = out["gpirt"].copy()
        return out

    def _stratum_sums(self, X: np.ndarray) -> np.ndarray:
        """Per-stratum sums of the columns of X (n, N) -> (n, H)."""
        return np.add.reduceat(X[:, self._order], self._starts, axis=1)

    def _design_estimate(self, Yf, obs, P, V, Pa, Pbar_h, u, U_h, seen_h, se_pirt):
        """The design-based estimate ``db`` (n, S) and its standard error, for any answered subset.

        ``db = beta * sum_j w_j p_j + sum_h M_h * mean_h(y - beta p)`` over the answered
        anchors of each stratum (Hajek weights), with ``beta`` the scenario's
        ``design_slope`` (1: the IRT-corrected (AIPW) estimate, 0: the plain stratified mean;
        any fixed ``beta`` is unbiased under the design). A stratum without an answered anchor
        is collapsed into the nearest answered stratum of its scenario in easiness order (half
        to each when two are as near): ``M_h`` is the stratum's mass plus the mass it absorbs,
        so a partial run (``--limit``, a crashed job) still corrects the model's prediction of
        every item with residuals of similar items instead of trusting the model there.

        The variance is ``sum_h M_h^2 v_h / m_h (1 - m_h / N_g)`` plus, for every absorbed
        stratum, ``W_u^2 v_u`` (its own mean residual may differ from its neighbour's: counted as
        one draw). ``v_h``, the variance of one draw's residual, is the measured spread (strata
        with two answered anchors or more, ``m_h - 1`` degrees of freedom; pooled over the
        scenario for the others, one degree of freedom) averaged with what the IRT model
        expects, ``mean_h p(1-p) + (1 - beta)^2 var_h(p)``, worth :data:`MODEL_DOF` degrees of
        freedom: two answers that agree do not prove a stratum uniform (the measured spread is
        then 0), and with few answers the measured spread is mostly noise. A scenario with no
        answered anchor gets the model's p-IRT prediction and error.
        """
        n, H = Yf.shape[0], self._H
        beta_h = self._p["design_slope"][self._h_scenario]  # (H,)
        beta_a = beta_h[self._anchor_h]  # (k,)
        R = np.where(obs, Yf - beta_a * Pa, 0.0)
        safe_U = np.where(seen_h, U_h, 1.0)
        rbar_h = (u * R) @ self._anchor_h_one_hot / safe_U  # (n, H)
        # --- per-draw variances: measured (two answers or more), pooled, and the model's
        D = np.where(obs, R - rbar_h[:, self._anchor_h], 0.0)
        share = np.divide(u, U_h[:, self._anchor_h], out=np.zeros_like(u), where=obs)
        m = obs @ self._anchor_h_one_hot  # answered anchors per stratum
        spread = (share**2 * D**2) @ self._anchor_h_one_hot
        sum_share2 = share**2 @ self._anchor_h_one_hot
        with np.errstate(divide="ignore", invalid="ignore"):
            emp = np.where(m >= 2, m / np.maximum(m - 1, 1) * spread / np.where(sum_share2 > 0, sum_share2, 1.0),
                           np.nan)
        Wsafe = np.where(self._W_h > 0, self._W_h, 1.0)
        Vbar_h = self._stratum_sums(V * self._w) / Wsafe
        P2bar_h = self._stratum_sums(P * P * self._w) / Wsafe
        model_v = np.maximum(Vbar_h + (1 - beta_h) ** 2 * np.maximum(P2bar_h - Pbar_h**2, 0.0), 0.0)
        ok = np.isfinite(emp)
        wsum = (ok * self._W_h) @ self._h_one_hot
        pooled = np.divide((np.where(ok, emp, 0.0) * self._W_h) @ self._h_one_hot, wsum,
                           out=np.zeros_like(wsum), where=wsum > 0)
        pooled_h = np.where((wsum > 0)[:, self._h_scenario], pooled[:, self._h_scenario], model_v)
        per_draw = np.where(ok, emp, pooled_h)
        # the model's per-draw variance counts as MODEL_DOF degrees of freedom next to the measured
        # ones (m - 1 in a stratum of m answers; 1 for the pooled value): two answers that agree do
        # not prove a stratum uniform, and with few answers the measured spread is mostly noise
        dof = np.where(ok, m - 1, np.where((wsum > 0)[:, self._h_scenario], 1.0, 0.0))
        per_draw = (dof * per_draw + MODEL_DOF * model_v) / (dof + MODEL_DOF)
        # --- collapse unanswered strata into the nearest answered one of the scenario
        idx = np.arange(H)
        left = np.maximum.accumulate(np.where(seen_h, idx, -1), axis=1)
        right = np.minimum.accumulate(np.where(seen_h, idx, H)[:, ::-1], axis=1)[:, ::-1]
        hs = self._h_scenario
        okl = (left >= 0) & (hs[np.clip(left, 0, H - 1)] == hs)
        okr = (right < H) & (hs[np.clip(right, 0, H - 1)] == hs)
        dl, dr = idx - left, right - idx
        fl = np.where(okl & okr, np.where(dl < dr, 1.0, np.where(dl == dr, 0.5, 0.0)), okl.astype(np.float64))
        fr = np.where(okl & okr, 1.0 - fl, okr.astype(np.float64))
        unseen = ~seen_h
        rows = np.repeat(np.arange(n) * H, H).reshape(n, H)
        M = self._W_h * seen_h
        Ng = self._N_h * seen_h
        for f, nb in ((fl, left), (fr, right)):
            wgt = np.where(unseen, f, 0.0)
            tgt = (rows + np.clip(nb, 0, H - 1)).ravel()
            M = M + np.bincount(tgt, weights=(wgt * self._W_h).ravel(), minlength=n * H).reshape(n, H)
            Ng = Ng + np.bincount(tgt, weights=(wgt * self._N_h).ravel(), minlength=n * H).reshape(n, H)
        absorbed = unseen & ((fl + fr) > 0)
        none = (seen_h * self._W_h) @ self._h_one_hot <= 0  # (n, S): no answer in the scenario
        db = (beta_h * self._W_h * Pbar_h) @ self._h_one_hot + (M * np.where(seen_h, rbar_h, 0.0)) @ self._h_one_hot
        fpc = np.clip(1.0 - m / np.where(Ng > 0, Ng, 1.0), 0.0, 1.0)
        var = (np.where(seen_h, M**2 * per_draw / np.maximum(m, 1) * fpc, 0.0)
               + np.where(absorbed, self._W_h**2 * per_draw, 0.0)
               + np.where(unseen & ~absorbed, self._W_h**2 * model_v, 0.0)) @ self._h_one_hot
        model_db = (self._W_h * Pbar_h) @ self._h_one_hot
        db = np.where(none, model_db, db)
        se = np.where(none, se_pirt, np.sqrt(np.maximum(var, 0.0)))
        return db, se

    def _design_se(self, R, obs, u, U_h, rbar_h, model_v) -> np.ndarray:
        """Standard error (n, S) of the stratified mean of ``R`` over the anchors.

        Within stratum h the mean of ``m_h`` answered anchors has variance
        ``m/(m-1) * sum (u_j/U)^2 (r_j - rbar)^2`` (Hajek weights ``u``; the sample
        variance over ``m`` for equal weights), times ``1 - m/N_h``; the stratum
        contributes ``W_h^2`` times that. Strata with one answered anchor use the
        scenario's pooled per-draw variance; unanswered strata (their mass is predicted
        by the model) count as one draw with that variance. Without any stratum to pool
        from, the model's per-draw variance ``model_v`` (n, H) stands in.
        """
        D = np.where(obs, R - rbar_h[:, self._anchor_h], 0.0)
        share = np.divide(u, U_h[:, self._anchor_h], out=np.zeros_like(u), where=obs)
        m = obs @ self._anchor_h_one_hot  # answered anchors per stratum
        spread = (share**2 * D**2) @ self._anchor_h_one_hot
        with np.errstate(divide="ignore", invalid="ignore"):
            var_mean = np.where(m >= 2, m / np.maximum(m - 1, 1) * spread, np.nan)  # variance of the stratum mean
        per_draw = var_mean * m  # variance of one draw
        ok = np.isfinite(per_draw)
        wsum = (ok * self._W_h) @ self._h_one_hot
        pooled = np.divide((np.where(ok, per_draw, 0.0) * self._W_h) @ self._h_one_hot, wsum,
                           out=np.zeros_like(wsum), where=wsum > 0)  # (n, S)
        pooled_h = np.where((wsum > 0)[:, self._h_scenario], pooled[:, self._h_scenario], model_v)
        fpc = np.clip(1.0 - m / self._N_h, 0.0, 1.0)
        var_h = np.where(m >= 2, var_mean * fpc, np.where(m == 1, pooled_h * fpc, pooled_h))
        return np.sqrt(np.maximum((self._W_h**2 * var_h) @ self._h_one_hot, 0.0))

    def _se_one_per_stratum(self, P: np.ndarray, obs: np.ndarray) -> np.ndarray:
        """Model-based standard error of the anchor-weighted mean when each stratum has
        one anchor (k-means clusters): within cluster c the anchor stands for its members,
        variance ``mean_w[p] - mean_w[p]^2``; unanswered mass adds the spread of the
        cluster means."""
        S, n = len(self.scenarios), P.shape[0]
        mean_p = self._stratum_sums(P * self._w) / np.where(self._W_h > 0, self._W_h, 1.0)
        v_c = np.maximum(mean_p - mean_p**2, 0.0)[:, self._anchor_h]  # (n, k)
        mean_a = mean_p[:, self._anchor_h]
        out = np.empty((n, S))
        for s in range(S):
            m = self._scenario_anchors[s]
            aw = self.anchor_weights[m]
            W = aw * obs[:, m]
            tot = W.sum(1, keepdims=True)
            Wn = np.divide(W, tot, out=np.zeros_like(W), where=tot > 0)
            var = (Wn**2 * v_c[:, m]).sum(1)
            miss = 1.0 - tot[:, 0] / aw.sum()
            mu = (aw * mean_a[:, m]).sum(1) / aw.sum()
            spread = (aw * (mean_a[:, m] - mu[:, None]) ** 2).sum(1) / aw.sum()
            out[:, s] = np.sqrt(var + miss**2 * spread)
        return out

    def _results(self, comp: dict) -> list[dict]:
        S = len(self.scenarios)
        out = []
        for i in range(comp["score"].shape[0]):
            per = {name: _pack(comp, i, s, self._z) for s, name in enumerate(self.scenarios)}
            if S == 1:
                res = per[self.scenarios[0]]
            else:
                # bundle: the headline is the mean over benchmarks (Open LLM Leaderboard average)
                irt = comp["irt"][i]
                head = {"irt": float(np.nanmean(irt)) if not np.isnan(irt).all() else float("nan"),
                        "pirt": float(comp["pirt"][i].mean()), "gpirt": float(comp["gpirt"][i].mean()),
                        "score": float(comp["score"][i].mean()),
                        "se": math.sqrt(float((comp["se"][i] ** 2).sum())) / S,
                        "n_answered": int(comp["answered"][i].sum())}
                res = _with_interval(head, self._z)
                res["scenarios"] = per
            out.append(res)
        return out

    # -------------------------------------------------------------- parsing
    def _parse(self, scores: Any, order: Sequence[str] | None = None) -> tuple[np.ndarray, bool]:
        """Scores as a (n, k) matrix in ``anchor_ids`` order; ``order``: the anchor order of
        an earlier design this one re-estimates (positional input follows it)."""
        k = len(self.anchor_ids) if order is None else len(order)
        labelled = _labelled(scores)
        if labelled is not None:
            kind, value = labelled
            if kind == "series":
                scores = value
            else:  # a frame: columns are item ids, one model per row
                cols = value[0]
                self._warn_unused(self.check_items(cols), len(cols), stacklevel=4)  # the caller of estimate
                rows = [self._row_of(dict(zip(cols, r)), checked=True) for r in value[1]]
                if not rows:
                    raise ValueError("no scores given")
                return np.vstack(rows), False
        if isinstance(scores, Mapping):
            row = self._row_of(scores)
            Y, single = row[None, :], True
        else:
            if isinstance(scores, (str, bytes)):
                raise ValueError("scores must be numbers, got text")
            try:
                arr = np.asarray(scores, dtype=object)
            except Exception as exc:  # ragged input
                raise ValueError(f"cannot read scores as an array: {exc}") from exc
            if arr.ndim == 1:
                single = True
                arr = arr[None, :]
            elif arr.ndim == 2:
                single = False
            else:
                raise ValueError(
                    f"scores must be 1-D (one model) or 2-D (one model per row), got {arr.ndim} dimensions"
                )
            if arr.shape[1] != k:
                raise ValueError(f"expected {k} scores (one per anchor, in anchor_ids order), got {arr.shape[1]}")
            Y = np.empty(arr.shape, dtype=np.float64)
            for idx, v in np.ndenumerate(arr):
                Y[idx] = _to_score(v, f"position {idx[-1]}")
            if order is not None:  # an earlier design's order: place each column by its anchor id
                at = {a: i for i, a in enumerate(order)}
                placed = np.full((len(Y), len(self.anchor_ids)), np.nan)
                for j, a in enumerate(self.anchor_ids):
                    if a in at:
                        placed[:, j] = Y[:, at[a]]
                Y = placed
        if Y.shape[0] == 0:
            raise ValueError("no scores given")
        # one model with nothing answered is a mistake; in a batch such a row gets the
        # population (prior) prediction, irt = NaN and a correspondingly wide interval
        if single and np.isnan(Y).all():
            raise ValueError("no anchor is answered: give at least one score")
        return Y, single

    def match_labels(self, keys: Sequence[Any]) -> tuple[list[str], list[str], list[str]]:
        """Item-id labels ``keys`` (a table's columns, a mapping's keys) sorted out, each in their
        order: ``(anchors, other items of the benchmark, labels that are not items)``."""
        anchors: list[str] = []
        others: list[str] = []
        unknown: list[str] = []
        for key in map(str, keys):
            (anchors if key in self._anchor_index else others if key in self._item_set else unknown).append(key)
        return anchors, others, unknown

    def check_items(self, keys: Sequence[str]) -> list[str]:
        """``ValueError`` unless results labelled by the item ids ``keys`` can be estimated; returns
        the labels that are not used. The rule (``estimate`` and ``tinybench-builder estimate`` alike):
        the anchors among the labels are read, any subset of them (a partial run) or all (a full
        row); every other label (an item that is not an anchor, a name that is not an item) is not
        used, and when anchors are missing ``estimate`` names them in a warning. Labels without a
        single anchor are refused: another benchmark, item ids in another form, results of another
        version's tiny split. No label at all is left to the caller ("no anchor is answered")."""
        k = len(self.anchor_ids)
        anchors, others, unknown = self.match_labels(keys)
        if anchors or not (others or unknown):
            return [str(key) for key in keys if str(key) not in self._anchor_index]
        name = self.metadata.get("benchmark") or "this tiny benchmark"
        mine = f"{name} {self.version}" if self.version else name
        if unknown:
            raise ValueError(f"unknown item id {unknown[0]!r}" + (
                f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else "") +
                f": not an item of {mine}, and none of its {k} anchors is given (a model name belongs in the "
                "index, not in a column; results of another version's tiny split are estimated by the estimator "
                "of that version)")
        raise ValueError(
            f"item {others[0]!r} is not one of the {k} anchors of {mine} (design {self.design_hash[:12]}), and "
            f"none of the anchors is given (e.g. {self.anchor_ids[0]!r}): the scores name {len(others)} other "
            "item(s) of the benchmark. Results of another version's tiny split? Estimate them with the "
            "estimator of that version")

    def _warn_unused(self, unused: Sequence[str], n_labels: int, stacklevel: int) -> None:
        """Name the labels a partial run's estimate does not use (a full row says nothing)."""
        given = n_labels - len(unused)
        if not unused or given >= len(self.anchor_ids):
            return
        shown = ", ".join(repr(u) for u in unused[:3]) + (", ..." if len(unused) > 3 else "")
        warnings.warn(f"{len(unused)} label(s) are not used ({shown}: not anchors); the estimate uses the {given} of "
                      f"the {len(self.anchor_ids)} anchors given (a partial run)", UserWarning, stacklevel=stacklevel)

    def _row_of(self, scores: Mapping, checked: bool = False) -> np.ndarray:
        if not checked:
            self._warn_unused(self.check_items(list(scores)), len(scores), stacklevel=5)
        row = np.full(len(self.anchor_ids), np.nan)
        for key, val in scores.items():
            idx = self._anchor_index.get(str(key))
            if idx is not None:
                row[idx] = _to_score(val, str(key))
        return row


def design_hash(anchor_ids: Sequence[str], anchor_strata: Sequence[int]) -> str:
    """The identity of a tiny benchmark's design: sha256 (hex) of its anchor ids in their
    order (the tiny split's rows, the positional input) and the stratum of each.

    Two versions with the same hash have the same rows in the same order: results logged
    against one are results of the other.
    """
    ids = [str(a) for a in anchor_ids]
    strata = [int(h) for h in anchor_strata]
    if len(ids) != len(strata):
        raise ValueError(f"{len(ids)} anchor ids but {len(strata)} strata")
    text = json.dumps({"anchor_ids": ids, "anchor_strata": strata}, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _known_designs(meta: Mapping[str, Any]) -> list[dict]:
    """``metadata["re_estimates"]``, checked: earlier versions whose results this estimator estimates."""
    value = meta.get("re_estimates") or []
    if not isinstance(value, list):
        raise ValueError("metadata.re_estimates must be a list")
    out = []
    for i, d in enumerate(value):
        where = f"metadata.re_estimates[{i}]"
        if not isinstance(d, Mapping):
            raise ValueError(f"{where} must be an object")
        v, h, ids = d.get("version"), d.get("design_hash"), d.get("anchor_ids")
        if v is not None and (not isinstance(v, str) or not v):
            raise ValueError(f"{where}.version must be a version string or null")
        if not isinstance(h, str) or not re.fullmatch(r"[0-9a-f]{64}", h):
            raise ValueError(f"{where}.design_hash must be a sha256 hex digest")
        if ids is not None and (not isinstance(ids, list) or not all(isinstance(a, str) for a in ids)
                                or len(set(ids)) != len(ids)):
            raise ValueError(f"{where}.anchor_ids must be a list of distinct item ids")
        out.append({"version": v, "design_hash": h, "anchor_ids": list(ids) if ids is not None else None})
    return out


def evaluate(y: Any, benchmark: str, source: str | os.PathLike | None = None, revision: str | None = None) -> dict:
    """The original tinyBenchmarks API: ``evaluate(y, bench) -> {scenario: {"irt", "pirt", "gpirt"}}``.

    Parameters
    ----------
    y : sequence or mapping
        Scores in the tiny dataset's row order (bundles: the configs' tiny splits
        concatenated in config order), or ``{item_id: score}``.
    benchmark : str
        A tiny benchmark name (``"tinyMMLU"``) or the original's short name (``"mmlu"``,
        ``"arc"``, ``"lb"``, ``"helm_lite"``, ``"alpaca"``...).
    source : path or Hub repo id, optional
        Where the side files are: a folder, or a dataset repo. Default: the folder of this
        file when it holds that benchmark's side files, else ``tinyBenchmarks/<name>``.
    revision : str, optional
        Hub revision (a release tag such as ``"v1.0.0"``) when reading from the Hub.

    Returns
    -------
    dict
        ``{key: {"score", "ci_low", "ci_high", "irt", "pirt", "gpirt"}}``, one key per scenario, named
        as the original package names them (``"mmlu"``, ``"truthfulqa"``, ``"alpaca_v2"``...).
    """
    name = ORIGINAL_BENCHMARKS.get(benchmark, benchmark)
    if source is None:
        here = Path(__file__).resolve().parent
        local = here / JSON_NAME
        if local.is_file() and json.loads(local.read_text(encoding="utf-8")).get("metadata", {}).get("benchmark") == name:
            source = here
        else:
            source = f"{HUB_ORG}/{name}"
    if Path(source).is_dir():
        est = TinyEstimator.load(source)
    else:
        est = TinyEstimator.from_hub(str(source), revision=revision)
    if est.metadata.get("benchmark", name) != name:
        raise ValueError(f"{source} holds {est.metadata['benchmark']!r}, not {name!r}")
    res = est.estimate(y)
    if isinstance(res, list):
        raise ValueError("evaluate takes one model's scores; use TinyEstimator.estimate for several")
    keys = est.metadata.get("original_scenarios") or {}
    per = res["scenarios"] if "scenarios" in res else {est.scenarios[0]: res}
    fields = ("score", "ci_low", "ci_high", "irt", "pirt", "gpirt")
    return {keys.get(s, s): {f: r[f] for f in fields} for s, r in per.items()}


def gp_blend(irt, pirt, se_irt, se_pirt, lam) -> tuple[np.ndarray, np.ndarray]:
    """gp-IRT ``lam * irt + (1 - lam) * pirt`` and its unscaled standard error (the two errors
    added, as if fully correlated); where nothing was answered (irt NaN) it is p-IRT."""
    none = np.isnan(irt)
    gp = np.where(none, pirt, lam * np.nan_to_num(irt) + (1 - lam) * pirt)
    se = np.where(none, se_pirt, lam * np.nan_to_num(se_irt) + (1 - lam) * se_pirt)
    return gp, se


def partial_sigma(sigma, growth, answered, n_anchors) -> np.ndarray:
    """The model-based estimate's error with ``answered`` of ``n_anchors`` anchors answered:
    ``sqrt(sigma^2 + growth^2 (n_anchors / answered - 1))`` (``sigma`` with all answered; 1, no
    information on a [0, 1] score, with none)."""
    answered = np.asarray(answered, dtype=np.float64)
    extra = np.maximum(np.asarray(n_anchors, dtype=np.float64) / np.maximum(answered, 1.0) - 1.0, 0.0)
    out = np.sqrt(np.asarray(sigma, dtype=np.float64) ** 2 + np.asarray(growth, dtype=np.float64) ** 2 * extra)
    return np.where(answered > 0, np.minimum(out, 1.0), 1.0)


def composite(db, se_db, mb, sigma, lo, hi, kappa, interval_scale) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The composite score, its standard error and the weight ``g`` of the design-based estimate.

    ``g = s2 / (s2 + se_db^2)`` with ``s2 = sigma^2 + kappa d2``, where ``d2`` is the expected
    squared distance of the score outside the training range ``[lo, hi]`` when it is
    ``N(db, se_db^2)`` (:func:`outside_distance2`): a model whose design-based estimate lies near
    the edge of the range, or is uncertain, may well lie outside it, and the model-based
    estimate, learned inside the range, loses weight smoothly instead of at the edge. The
    design-based error is honest by construction; the model-based one is scaled by
    ``interval_scale``, calibrated so that out-of-fold intervals cover (full and partial runs).
    """
    s2 = sigma**2 + kappa * outside_distance2(db, se_db, lo, hi)
    v_db = se_db**2
    g = np.divide(s2, s2 + v_db, out=np.ones_like(s2), where=(s2 + v_db) > 0)
    score = g * db + (1 - g) * mb
    se = g * se_db + (1 - g) * np.sqrt(s2) * interval_scale
    return score, se, g


def outside_distance2(mu, sd, lo, hi) -> np.ndarray:
    """``E[(X - hi)_+^2 + (lo - X)_+^2]`` for ``X ~ N(mu, sd^2)``: the expected squared distance of
    X outside ``[lo, hi]`` (the plain squared distance of ``mu`` when ``sd`` is 0)."""
    sd = np.maximum(sd, 1e-12)
    out = np.zeros(np.broadcast(mu, sd, lo, hi).shape)
    for d in (mu - hi, lo - mu):
        r = d / sd
        # scipy.special's ndtr and the density by hand: scipy.stats' norm costs ~1 ms a call here
        out = out + (d**2 + sd**2) * ndtr(r) + d * sd * np.exp(-0.5 * r * r) / _SQRT_2PI
    return np.maximum(out, 0.0)


def _pack(comp: dict, i: int, s: int, z: float) -> dict:
    res = {"score": float(comp["score"][i, s]), "se": float(comp["se"][i, s]),
           "irt": float(comp["irt"][i, s]), "pirt": float(comp["pirt"][i, s]), "gpirt": float(comp["gpirt"][i, s]),
           "n_answered": int(comp["answered"][i, s])}
    return _with_interval(res, z)


def _with_interval(res: dict, z: float) -> dict:
    half = z * res["se"]
    if math.isnan(half):  # no interval (an estimator imported from the original release)
        out = {"score": res["score"], "ci_low": float("nan"), "ci_high": float("nan")}
    else:
        out = {"score": res["score"], "ci_low": float(max(0.0, res["score"] - half)),
               "ci_high": float(min(1.0, res["score"] + half))}
    out.update({k: v for k, v in res.items() if k != "score"})
    return out


def _labelled(scores: Any):
    """pandas input read by its labels: ("series", {label: value}) or ("frame", (columns, rows)).

    A Series or DataFrame whose index/columns are a plain RangeIndex carries no item ids
    and is read by position like any sequence or array.
    """
    mod = type(scores).__module__ or ""
    if not mod.startswith("pandas"):
        return None
    name = type(scores).__name__
    if name == "Series":
        if type(scores.index).__name__ == "RangeIndex":
            return None
        return "series", {str(k): v for k, v in scores.items()}
    if name == "DataFrame":
        if type(scores.columns).__name__ == "RangeIndex":
            return None
        cols = [str(c) for c in scores.columns]
        if len(set(cols)) != len(cols):
            raise ValueError("duplicate column names in the scores frame")
        return "frame", (cols, scores.itertuples(index=False, name=None))
    return None


def _to_score(v: Any, where: str) -> float:
    if v is None:
        return float("nan")
    if isinstance(v, (str, bytes)):
        raise ValueError(f"score at {where} is text ({v!r}); scores must be numbers in [0, 1]")
    if isinstance(v, (bool, np.bool_)):
        return float(v)
    if isinstance(v, (complex, np.complexfloating)):
        raise ValueError(f"score at {where} is a complex number ({v!r})")
    if isinstance(v, (list, tuple, np.ndarray, Mapping)):
        raise ValueError(f"score at {where} is a sequence: rows must all have one score per anchor")
    try:
        x = float(v)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"score at {where} is not a number: {v!r}") from exc
    if math.isnan(x):
        return x
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"score at {where} is {x!r}; scores must be in [0, 1]")
    return x


def _as_int(values: Any, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "f" and np.isfinite(arr).all() and (arr == np.round(arr)).all() and np.abs(arr).max(initial=0) < 2**53:
        return arr.astype(np.int64)
    raise ValueError(f"{name} must be integers")


def _check_finite(name: str, arr: np.ndarray, bound: float | None = None) -> None:
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} has NaN or infinite values")
    if bound is not None and arr.size and np.abs(arr).max() > bound:
        raise ValueError(f"{name} has implausibly large values (|x| > {bound:g})")


def _check_params(scenario: str, given: Any) -> dict:
    """One scenario's settings, defaults filled in, each checked."""
    if not isinstance(given, Mapping):
        raise ValueError(f"params[{scenario!r}] must be an object")
    unknown = set(given) - set(DEFAULT_PARAMS)
    if unknown:
        raise ValueError(f"params[{scenario!r}] has unknown field(s) {sorted(unknown)}")
    p = {**DEFAULT_PARAMS, **dict(given)}
    where = f"params[{scenario!r}]"
    if p["method"] not in METHODS:
        raise ValueError(f"{where}.method must be one of {METHODS}, got {p['method']!r}")
    for key, lo, hi in (("lambda", 0.0, 1.0), ("pirt_weight", 0.0, 1.0), ("interval_scale", 1e-6, 1e3),
                        ("sigma", 0.0, 1.0), ("kappa", 0.0, 1e6), ("ridge_intercept", -1.0, 1.0),
                        ("design_slope", 0.0, 1.0), ("sigma_partial", 0.0, 1.0)):
        v = p[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not lo <= v <= hi:
            raise ValueError(f"{where}.{key} must be a number in [{lo:g}, {hi:g}], got {v!r}")
        p[key] = float(v)
    r = p["range"]
    if (not isinstance(r, (list, tuple)) or len(r) != 2
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in r)
            or not 0.0 <= r[0] <= r[1] <= 1.0):
        raise ValueError(f"{where}.range must be [low, high] within [0, 1], got {r!r}")
    p["range"] = [float(r[0]), float(r[1])]
    return p


class _FieldReader:
    """Typed access to estimator.json fields with errors that name the file and field."""

    def __init__(self, path: Path, meta: dict) -> None:
        self.path, self.meta = path, meta

    def get(self, key: str, kind: type):
        if key not in self.meta:
            raise ValueError(f"{self.path}: missing field {key!r}")
        value = self.meta[key]
        if not isinstance(value, kind):
            raise ValueError(f"{self.path}: field {key!r} must be a {kind.__name__}")
        return value

    def str_list(self, key: str) -> list[str]:
        value = self.get(key, list)
        if not all(isinstance(v, str) for v in value):
            raise ValueError(f"{self.path}: field {key!r} must be a list of strings")
        if len(set(value)) != len(value):
            raise ValueError(f"{self.path}: field {key!r} has duplicates")
        return value


def _read_npz(path: Path, shapes: Mapping[str, tuple]) -> dict:
    """Arrays of an npz with the expected shapes, checked from the headers before reading.

    A truncated or non-zip file, a pickled (object) array, a missing or extra-large array
    raise ``ValueError`` naming the file and the array.
    """
    out = {}
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            for key, shape in shapes.items():
                member = f"{key}.npy"
                if member not in names:
                    raise ValueError(f"{path}: missing array {key!r}")
                with zf.open(member) as fh:
                    version = np.lib.format.read_magic(fh)
                    header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                              else np.lib.format.read_array_header_2_0)(fh)
                    got, _, dtype = header
                    if dtype.hasobject or dtype.kind not in "biuf":
                        raise ValueError(f"{path}: array {key!r} has dtype {dtype}, expected numbers")
                    if tuple(got) != tuple(shape):
                        raise ValueError(f"{path}: array {key!r} has shape {tuple(got)}, expected {tuple(shape)}")
                    data = fh.read(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize + 1)
                    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
                    if len(data) != expected:
                        raise ValueError(f"{path}: array {key!r} is truncated")
                    order = "F" if header[1] else "C"
                    out[key] = np.frombuffer(data, dtype=dtype).reshape(shape, order=order).copy()
    except (zipfile.BadZipFile, EOFError, OSError, KeyError) as exc:
        raise ValueError(f"{path}: not a readable npz file ({exc})") from exc
    except ValueError as exc:
        if str(exc).startswith(str(path)):
            raise
        raise ValueError(f"{path}: not a readable npz file ({exc})") from exc
    return out


#: elements of one block of a models x items array in :meth:`TinyEstimator.components` (32 MiB)
_BLOCK_ELEMENTS = 1 << 22


def _row_blocks(n: int, width: int) -> list[slice]:
    """Blocks of about ``_BLOCK_ELEMENTS // width`` rows, starting at multiples of 192, none of
    one row (unless n == 1): BLAS gives every row the same bits as in one product over all
    rows (one-row products, and groups of rows that start off its kernels' groups of 4, 8,
    12 or 16, take other code)."""
    rows = max(192, (_BLOCK_ELEMENTS // max(width, 1)) // 192 * 192)
    out = [slice(s, min(s + rows, n)) for s in range(0, n, rows)]
    if len(out) > 1 and out[-1].stop - out[-1].start == 1:
        out[-2:] = [slice(out[-2].start, n)]
    return out or [slice(0, 0)]


def _map_abilities(Yf, obs, A, b, mean, prec, n_newton: int = 25):
    """Vectorised damped Newton for the MAP ability of each row; Laplace covariance."""
    n, D = Yf.shape[0], A.shape[1]
    W = obs.astype(np.float64)
    theta = np.tile(mean, (n, 1))

    def neg_post(th):
        Z = th @ A.T - b
        d = th - mean
        return -(W * (Yf * Z - np.logaddexp(0.0, Z))).sum(1) + 0.5 * np.einsum("nd,de,ne->n", d, prec, d)

    f = neg_post(theta)
    for _ in range(n_newton):
        P = expit(theta @ A.T - b)
        grad = (W * (P - Yf)) @ A + (theta - mean) @ prec
        H = np.einsum("nj,jd,je->nde", W * P * (1 - P), A, A) + prec
        step = np.linalg.solve(H, grad[..., None])[..., 0]
        t = np.ones(n)
        for _ in range(30):
            cand = theta - t[:, None] * step
            fc = neg_post(cand)
            worse = fc > f + 1e-12
            if not worse.any():
                break
            t = np.where(worse, 0.5 * t, t)
        theta, f = cand, np.minimum(fc, f)
        if float(np.abs(t[:, None] * step).max()) < 1e-7:
            break
    P = expit(theta @ A.T - b)
    H = np.einsum("nj,jd,je->nde", W * P * (1 - P), A, A) + prec
    return theta, np.linalg.inv(H)


_ADAPTIVE_MODULES: dict = {}


def _adaptive_module(fallback: Path | None = None):
    """``adaptive.py`` as a module: the file next to this one, else ``fallback``; cached by path and
    content, its ``API_VERSION`` checked."""
    import importlib.util
    import sys

    here = Path(__file__).resolve().with_name(ADAPTIVE_NAME)
    path = here if here.is_file() else (Path(fallback) if fallback is not None and Path(fallback).is_file() else None)
    if path is None:
        raise FileNotFoundError(
            f"{ADAPTIVE_NAME} not found next to {Path(__file__).name} (or in the estimator's folder): it ships with "
            "every tiny benchmark release built since it exists; download it next to estimator.py")
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size)  # hash a file once; a changed file is hashed (and loaded) again
    digest = _ADAPTIVE_MODULES.get(key) or _sha256(path)
    _ADAPTIVE_MODULES[key] = digest
    module = _ADAPTIVE_MODULES.get(digest)
    if module is None:  # the same file imported already (tinybench_builder.adaptive in the package): the same classes
        for m in list(sys.modules.values()):
            file = getattr(m, "__file__", None)
            if file and str(file).endswith(ADAPTIVE_NAME) and Path(file).resolve() == path.resolve():
                module = m
                break
    if module is None:
        name = f"_tinybench_adaptive_{digest[:16]}"  # one module per content, whichever folder holds it
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"{path}: cannot be imported as a module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        no_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__ in a release folder
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        finally:
            sys.dont_write_bytecode = no_bytecode
    _ADAPTIVE_MODULES[digest] = module
    if getattr(module, "API_VERSION", None) != ADAPTIVE_API:
        raise ValueError(f"{path}: API version {getattr(module, 'API_VERSION', None)!r}, this estimator needs "
                         f"{ADAPTIVE_API}: use the estimator.py and adaptive.py of the same release")
    return module


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _write_npz_deterministic(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """``np.savez`` with fixed zip timestamps, so identical inputs give identical bytes."""
    import io
    import zipfile

    tmp = Path(str(path) + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key in sorted(arrays):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(arrays[key]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, buf.getvalue())
    os.replace(tmp, path)
