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

How this file is organised (one file, split by job; the sections follow in this order):

1. :class:`Design` -- what a fit produced, immutable: the items, anchors, strata, weights, IRT
   parameters, ability prior, calibration (``params``) and metadata, checked when it is made;
   ``design.replace(...)`` derives a changed one (checked again). Its arrays are read-only and
   its ``params`` and ``metadata`` cannot be changed in place.
2. The side files: :func:`read_side_files` (folder -> :class:`Design`, every field checked, no
   pickle), :func:`write_side_files` (byte-identical for identical designs) and
   :func:`check_release_files` (a downloaded release's files against its manifest's sha256).
3. The estimate, as functions on small typed records: the abilities (:func:`_map_abilities`),
   the IRT predictions (:class:`Predictions`), p-IRT, the answers' stratum means
   (:class:`StratumMeans`), the design-based part (:class:`DesignBased`), the model-based part
   (:class:`ModelBased`) and their :func:`composite` (:class:`Composite`). The per-draw variance
   of a stratum (measured, pooled over the scenario, or the model's) is computed in one place,
   :func:`_draw_variance`, for the standard errors of ``irt`` and of ``db``.
4. The results (dicts), the parsing of the scores given, the versions (:func:`design_hash`,
   the earlier designs an estimator re-estimates) and the original release's numerics.
5. :class:`TinyEstimator` -- the facade: load, save, from_hub, estimate, adaptive, the version
   and design checks, tiny_split; :meth:`TinyEstimator.replace` derives a changed estimator.

**Where the interval is computed**: :func:`composite` gives the score and its standard error
from the design- and model-based parts (``se``; the interval is ``score -+ z se``, clipped to
[0, 1]); it is the one function to change. :func:`final_estimate` picks it (calibrated
estimators) or gp-IRT's error times ``interval_scale`` (the original k-means design) per
scenario. The builder's calibration of ``interval_scale`` and its validation report call the
same two functions (``tinybench_builder/model/calibrate.py`` and ``fitting.py``), so a change
there is calibrated and validated as it will be shipped.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import os
import re
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping, NamedTuple, Sequence

import numpy as np
from scipy.special import expit, ndtr
from scipy.stats import norm

__all__ = [
    "TinyEstimator", "Design", "read_side_files", "write_side_files", "check_release_files", "evaluate",
    "design_hash", "DesignBased", "ModelBased", "Calibration", "Composite", "composite", "final_estimate",
    "gp_blend", "partial_sigma", "outside_distance2", "FORMAT", "SCHEMA_VERSION", "JSON_NAME", "NPZ_NAME",
    "MANIFEST_NAME", "SIDE_FILES", "ADAPTIVE_NAME", "ADAPTIVE_API", "HUB_ORG", "ORIGINAL_BENCHMARKS", "METHODS",
    "DEFAULT_PARAMS", "MODEL_DOF",
]

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
#: the anchor-design methods a Design may hold
_DESIGNS = ("stratified", "kmeans", "original")
#: the numeric per-scenario settings, as (S,) vectors in the estimate
_VECTOR_PARAMS = ("lambda", "interval_scale", "pirt_weight", "sigma", "kappa", "ridge_intercept", "design_slope",
                  "sigma_partial")


# =====================================================================================================
# 1. The design: what a fit produced, immutable
# =====================================================================================================

class _FrozenDict(dict):
    """A dict that cannot be changed in place (a design's ``params`` and ``metadata``): it reads,
    copies (``dict(x)``, ``{**x}``), compares and writes as JSON like any dict."""

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a Design's params and metadata are read-only: derive a changed one with "
                        "replace(params=...) or replace(metadata=...)")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self):  # copy and pickle rebuild it from a plain dict (not item by item)
        return (_FrozenDict, (dict(self),))


class _FrozenList(list):
    """A list that cannot be changed in place (ids, a setting's range, lists in metadata): it reads,
    compares (``== [...]``) and writes as JSON like any list."""

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a Design's lists are read-only: derive a changed design with replace(...)")

    __setitem__ = __delitem__ = __iadd__ = __imul__ = append = extend = insert = pop = remove = clear = \
        sort = reverse = _refuse

    def __reduce__(self):
        return (_FrozenList, (list(self),))


def _frozen(value: Any) -> Any:
    """``value`` with every mapping and list (or tuple) inside it made read-only."""
    if isinstance(value, (_FrozenDict, _FrozenList)):
        return value
    if isinstance(value, Mapping):
        return _FrozenDict({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return _FrozenList(_frozen(v) for v in value)
    return value


def _read_only(arr: np.ndarray) -> np.ndarray:
    """A read-only view of ``arr``: the same memory layout, so every product gives the same bits."""
    view = arr.view()
    view.flags.writeable = False
    return view


@dataclass(frozen=True, eq=False)
class Design:
    """What a fit produced: the items, the anchors, the strata, the weights, the IRT parameters,
    the ability prior and the calibration. Immutable and checked when made (``ValueError`` naming
    the field); :meth:`replace` derives a changed one. The side files hold exactly this
    (:func:`read_side_files`, :func:`write_side_files`); :class:`TinyEstimator` estimates with it.

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
        Item weights of the full score (normalised per scenario in the estimate).
    scenario_index : ndarray (N,) of int; scenario_names : sequence of str (S,)
    strata : ndarray (N,) of int
        Stratum of every item (anchors sample the strata).
    prior_mean, prior_cov : ndarray (D,), (D, D)
        Gaussian prior of theta (the training models' abilities).
    params : mapping scenario -> dict, optional
        Per-scenario settings (:data:`DEFAULT_PARAMS`): ``method`` ("composite" or
        "gpirt"), ``lambda`` (gp-IRT weight of irt), ``interval_scale``,
        ``pirt_weight`` (share of p-IRT in the model-based estimate), ``sigma`` (its
        out-of-fold error), ``sigma_partial`` (its growth on partial runs), ``range``
        (training score range), ``kappa`` (penalty outside the range), ``ridge_intercept``
        and ``design_slope`` (the IRT prediction's slope in the design-based estimate).
    anchor_strata : ndarray (k,) of int, optional
        Stratum of every anchor; default ``strata[anchor_positions]``.
    ridge_coef : ndarray (k,), optional
        Ridge weight of each anchor in its scenario's regression (default 0).
    design : str
        How the anchors were chosen ("stratified", "kmeans", "original").
    confidence : float
    metadata : mapping, optional
        Free-form build information (benchmark name, version, validation table); its
        ``re_estimates`` lists the earlier designs whose results this one estimates.

    The arrays are kept as given (read-only views, no copy, the same memory layout: the estimate's
    products then give the same bits as on the caller's arrays).
    """

    item_ids: Sequence[str]
    anchor_positions: np.ndarray
    anchor_weights: np.ndarray
    A: np.ndarray
    b: np.ndarray
    balance: np.ndarray
    scenario_index: np.ndarray
    scenario_names: Sequence[str]
    strata: np.ndarray
    prior_mean: np.ndarray
    prior_cov: np.ndarray
    params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    anchor_strata: Any = None
    ridge_coef: Any = None
    design: str = "stratified"
    confidence: float = 0.95
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # frozen: the checked, normalised values are set once, here (the anchors are checked against the items)
        for check in (_checked_items, _checked_anchors):
            for name, value in check(self).items():
                object.__setattr__(self, name, value)

    def replace(self, **changes: Any) -> "Design":
        """A copy with ``changes`` (field=value) applied, checked as a new design is (``ValueError``).

        ``replace(ridge_coef=coef)``, ``replace(params={**d.params, name: {...}})``,
        ``replace(metadata={**d.metadata, "re_estimates": [...]})``: ``params`` and ``metadata``
        are replaced whole. ``anchor_strata`` follows ``anchor_positions`` and ``strata``: give
        it again when changing those."""
        return dataclasses.replace(self, **changes)

    def __reduce__(self):  # pickle and copy make it again through the checks (read-only arrays again)
        return (Design, tuple(getattr(self, f.name) for f in dataclasses.fields(self)))

    def __repr__(self) -> str:
        return (f"Design({len(self.item_ids)} items, {len(self.anchor_positions)} anchors, D = {self.n_dims}, "
                f"scenarios {list(self.scenario_names)}, design={self.design!r}, version={self.version!r})")

    @property
    def scenarios(self) -> list[str]:
        """The scenario names (``scenario_names``)."""
        return self.scenario_names  # type: ignore[return-value]  # a read-only list

    @property
    def n_dims(self) -> int:
        """The IRT dimension D."""
        return int(self.A.shape[1])

    @functools.cached_property
    def anchor_ids(self) -> list[str]:
        """The anchors' item ids, in the order a positional input follows."""
        return _FrozenList(self.item_ids[p] for p in self.anchor_positions)

    @functools.cached_property
    def design_hash(self) -> str:
        """sha256 of the anchor ids, their order and strata (:func:`design_hash`)."""
        return design_hash(self.anchor_ids, self.anchor_strata.tolist())

    @property
    def version(self) -> str | None:
        """The tiny dataset version (``metadata["version"]``; None for a ``tinybench-builder fit`` folder)."""
        v = self.metadata.get("version")
        return str(v) if v is not None else None

    def known_designs(self) -> list[dict]:
        """The designs whose results this one estimates: ``[{"version", "design_hash", "anchor_ids"}]``,
        this one first, then the earlier versions it re-estimates (``metadata.re_estimates``;
        ``anchor_ids``: that version's positional order, None when it is this one's)."""
        own = _FrozenDict({"version": self.version, "design_hash": self.design_hash, "anchor_ids": None})
        return [own, *_known_designs(self.metadata)]


def _checked_items(d: Design) -> dict[str, Any]:
    """The items' fields of ``d`` checked and normalised: ids, IRT parameters, weights, scenarios, strata."""
    item_ids = _FrozenList(str(i) for i in d.item_ids)
    N = len(item_ids)
    if N == 0:
        raise ValueError("no items")
    if len(set(item_ids)) != N:
        raise ValueError("item ids must be unique")
    A = np.atleast_2d(np.asarray(d.A, dtype=np.float64))
    b = np.asarray(d.b, dtype=np.float64).reshape(-1)
    if A.shape[0] != N or b.shape != (N,):
        raise ValueError(f"A must be ({N}, D) and b ({N},), got {A.shape} and {b.shape}")
    _check_finite("A", A, bound=_MAX_PARAM)
    _check_finite("b", b, bound=_MAX_PARAM)
    balance = np.asarray(d.balance, dtype=np.float64).reshape(-1)
    scenario_index = _as_int(d.scenario_index, "scenario_index").reshape(-1)
    strata = _as_int(d.strata, "strata").reshape(-1)
    for name, arr in (("balance", balance), ("scenario_index", scenario_index), ("strata", strata)):
        if arr.shape != (N,):
            raise ValueError(f"{name} must have shape ({N},), got {arr.shape}")
    _check_finite("balance", balance)
    if (balance <= 0).any():
        raise ValueError("balance weights must be positive")
    scenarios = _FrozenList(str(s) for s in d.scenario_names)
    if not scenarios or len(set(scenarios)) != len(scenarios):
        raise ValueError("scenario names must be non-empty and unique")
    if scenario_index.min() < 0 or scenario_index.max() >= len(scenarios):
        raise ValueError("scenario_index out of range of scenario_names")
    if strata.min() < 0:
        raise ValueError("strata must be non-negative")
    # a stratum lies within one scenario
    first = np.zeros(strata.max() + 1, dtype=np.int64)
    first[strata] = scenario_index
    if not np.array_equal(first[strata], scenario_index):
        raise ValueError("a stratum spans several scenarios")
    arrays = {"A": A, "b": b, "balance": balance, "scenario_index": scenario_index, "strata": strata}
    return {"item_ids": item_ids, "scenario_names": scenarios, **{k: _read_only(v) for k, v in arrays.items()}}


def _checked_anchors(d: Design) -> dict[str, Any]:
    """The anchors' fields of ``d`` checked (given the checked items' fields, already set), and the
    prior, the settings, the design method, the confidence and the metadata."""
    N, strata, n_dims = len(d.item_ids), d.strata, d.A.shape[1]
    anchor_positions = _as_int(d.anchor_positions, "anchor_positions").reshape(-1)
    anchor_weights = np.asarray(d.anchor_weights, dtype=np.float64).reshape(-1)
    k = anchor_positions.shape[0]
    if k == 0:
        raise ValueError("no anchors")
    if anchor_weights.shape != (k,):
        raise ValueError(f"{k} anchors but {anchor_weights.shape[0]} anchor weights")
    _check_finite("anchor_weights", anchor_weights)
    if (anchor_weights < 0).any():
        raise ValueError("anchor weights must be non-negative")
    if anchor_positions.min() < 0 or anchor_positions.max() >= N:
        raise ValueError("anchor positions out of range")
    if len(set(anchor_positions.tolist())) != k:
        raise ValueError("anchor positions must be distinct")
    anchor_strata = (strata[anchor_positions] if d.anchor_strata is None
                     else _as_int(d.anchor_strata, "anchor_strata").reshape(-1))
    if anchor_strata.shape != (k,) or not np.array_equal(anchor_strata, strata[anchor_positions]):
        raise ValueError("anchor_strata must be the strata of the anchor positions")
    if set(np.unique(strata).tolist()) - set(anchor_strata.tolist()):
        raise ValueError("every stratum needs at least one anchor")
    ridge_coef = np.zeros(k) if d.ridge_coef is None else np.asarray(d.ridge_coef, dtype=np.float64).reshape(-1)
    if ridge_coef.shape != (k,):
        raise ValueError(f"ridge_coef must have shape ({k},), got {ridge_coef.shape}")
    _check_finite("ridge_coef", ridge_coef, bound=_MAX_PARAM)
    prior_mean = np.asarray(d.prior_mean, dtype=np.float64).reshape(-1)
    prior_cov = np.atleast_2d(np.asarray(d.prior_cov, dtype=np.float64))
    if prior_mean.shape != (n_dims,) or prior_cov.shape != (n_dims, n_dims):
        raise ValueError("prior mean/cov do not match the IRT dimension")
    _check_finite("prior mean", prior_mean, bound=_MAX_PARAM)
    _check_finite("prior cov", prior_cov, bound=_MAX_PARAM)
    if not np.allclose(prior_cov, prior_cov.T) or np.linalg.eigvalsh(prior_cov).min() <= 0:
        raise ValueError("prior cov must be symmetric positive definite")
    unknown = set(d.params or {}) - set(d.scenario_names)
    if unknown:
        raise ValueError(f"params for unknown scenario(s) {sorted(unknown)}")
    params = _frozen({s: _check_params(s, (d.params or {}).get(s, {})) for s in d.scenario_names})
    if d.design not in _DESIGNS:
        raise ValueError(f"unknown design {d.design!r}")
    if not 0 < d.confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {d.confidence!r}")
    if d.metadata is not None and not isinstance(d.metadata, Mapping):
        raise ValueError("metadata must be an object (a mapping)")
    metadata = _frozen(dict(d.metadata or {}))
    for known in _known_designs(metadata):
        if known["anchor_ids"] is not None and set(known["anchor_ids"]) - set(d.item_ids):
            raise ValueError(f"metadata.re_estimates: version {known['version']} has anchors that are not items")
    arrays = {"anchor_positions": anchor_positions, "anchor_weights": anchor_weights, "anchor_strata": anchor_strata,
              "ridge_coef": ridge_coef, "prior_mean": prior_mean, "prior_cov": prior_cov}
    return {**{key: _read_only(v) for key, v in arrays.items()}, "params": params, "confidence": float(d.confidence),
            "metadata": metadata}


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


# =====================================================================================================
# 2. The side files: read (checked, no pickle), write (deterministic), check a release's hashes
# =====================================================================================================

def read_side_files(path: str | os.PathLike) -> Design:
    """The :class:`Design` in the side files of folder ``path`` (no pickle: reading runs no code).

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
    field_of = _FieldReader(json_path, meta)
    item_ids = field_of.str_list("item_ids")
    anchor_ids = field_of.str_list("anchor_ids")
    scenarios = field_of.str_list("scenarios")
    prior = field_of.get("ability_prior", dict)
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
            params = field_of.get("params", dict)
            strata, anchor_strata, ridge = arr["strata"], arr["anchor_strata"], arr["ridge_coef"]
            design = field_of.get("design", str)
        out = Design(
            item_ids=item_ids, anchor_positions=arr["anchor_positions"], anchor_weights=arr["anchor_weights"],
            A=arr["A"], b=arr["b"], balance=arr["balance"], scenario_index=arr["scenario"],
            scenario_names=scenarios, strata=strata, anchor_strata=anchor_strata, ridge_coef=ridge,
            prior_mean=prior.get("mean"), prior_cov=prior.get("cov"), params=params, design=design,
            confidence=meta.get("confidence", 0.95), metadata=meta.get("metadata") or {},
        )
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{folder}: invalid estimator side files: {exc}") from exc
    if out.anchor_ids != anchor_ids:
        raise ValueError(f"{json_path}: anchor_ids disagree with the anchor positions in {npz_path.name}")
    return out


def write_side_files(design: Design, path: str | os.PathLike) -> list[Path]:
    """Write ``design``'s side files into folder ``path`` (made if needed); returns their paths.
    Identical designs give identical bytes (fixed zip timestamps, a fixed field order)."""
    d = design
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    meta = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "n_items": len(d.item_ids),
        "n_anchors": len(d.anchor_ids),
        "n_dims": d.n_dims,
        "design": d.design,
        "scenarios": d.scenarios,
        "params": d.params,
        "confidence": d.confidence,
        "ability_prior": {"mean": d.prior_mean.tolist(), "cov": d.prior_cov.tolist()},
        "anchor_ids": d.anchor_ids,
        "item_ids": d.item_ids,
        "metadata": d.metadata,
    }
    json_path = folder / JSON_NAME
    json_path.write_text(json.dumps(meta, indent=1, sort_keys=False, allow_nan=False) + "\n", encoding="utf-8")
    npz_path = folder / NPZ_NAME
    arrays = {
        "A": d.A, "b": d.b, "balance": d.balance, "scenario": d.scenario_index,
        "strata": d.strata, "anchor_positions": d.anchor_positions,
        "anchor_weights": d.anchor_weights, "anchor_strata": d.anchor_strata, "ridge_coef": d.ridge_coef,
    }
    _write_npz_deterministic(npz_path, arrays)
    return [json_path, npz_path]


def check_release_files(snapshot: Path, prefix: str, where: str) -> Path | None:
    """Check a downloaded release's side files (in ``snapshot/prefix``) and its ``adaptive.py``
    against the sha256 of its ``manifest.json``; returns the verified ``adaptive.py`` (None when the
    release has none, or when only a subfolder's own manifest lists the side files).

    The release's manifest sits at the root (paths relative to the root); a subfolder may carry
    its own (paths relative to the subfolder). ``ValueError`` (``FileNotFoundError`` for a missing
    file) for a file the manifest does not list, a mismatch, or no manifest.
    """
    folder = snapshot / prefix if prefix else snapshot
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
    return code if verified_code else None


class _FieldReader:
    """Typed access to estimator.json fields with errors that name the file and field."""

    def __init__(self, path: Path, meta: dict) -> None:
        self.path, self.meta = path, meta

    def get(self, key: str, kind: type) -> Any:
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
                    order: Literal["C", "F"] = "F" if header[1] else "C"
                    out[key] = np.frombuffer(data, dtype=dtype).reshape(shape, order=order).copy()
    except (zipfile.BadZipFile, EOFError, OSError, KeyError) as exc:
        raise ValueError(f"{path}: not a readable npz file ({exc})") from exc
    except ValueError as exc:
        if str(exc).startswith(str(path)):
            raise
        raise ValueError(f"{path}: not a readable npz file ({exc})") from exc
    return out


def _write_npz_deterministic(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """``np.savez`` with fixed zip timestamps, so identical inputs give identical bytes."""
    import io

    tmp = Path(str(path) + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key in sorted(arrays):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(arrays[key]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, buf.getvalue())
    os.replace(tmp, path)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# =====================================================================================================
# 3. The estimate: functions on small typed records
# =====================================================================================================

@dataclass(frozen=True, eq=False)
class _Prepared:
    """What every estimate with one :class:`Design` uses, made once (:func:`_prepare`): the
    weights normalised per scenario, the maps item -> scenario and item -> stratum (one-hot, for
    products), the strata relabelled 0..H-1 with their masses, the settings as (S,) vectors."""

    design: Design
    anchor_index: dict       # anchor id -> position in anchor_ids
    item_set: frozenset
    prior_prec: np.ndarray   # (D, D) the prior's precision
    A_anchor: np.ndarray     # (k, D)
    b_anchor: np.ndarray     # (k,)
    w: np.ndarray            # (N,) balance weights normalised per scenario (they define the full score)
    w_anchor: np.ndarray     # (k,)
    one_hot: np.ndarray      # (N, S) item -> scenario
    anchor_one_hot: np.ndarray  # (k, S)
    scenario_items: list     # per scenario: its item positions
    scenario_anchors: list   # per scenario: its anchors' positions in anchor_ids
    AA: np.ndarray           # (N, D*D) a_j a_j' flattened: a_j' S a_j for all items is one product
    z: float                 # the interval's normal quantile
    H: int                   # strata
    item_h: np.ndarray       # (N,) stratum 0..H-1 of every item
    anchor_h: np.ndarray     # (k,)
    W_h: np.ndarray          # (H,) stratum mass
    N_h: np.ndarray          # (H,) items per stratum
    h_scenario: np.ndarray   # (H,) scenario of every stratum
    h_one_hot: np.ndarray    # (H, S)
    anchor_h_one_hot: np.ndarray  # (k, H)
    order: np.ndarray        # items sorted by stratum: item sums per stratum through one reduceat
    starts: np.ndarray
    single: bool             # one anchor per stratum everywhere (k-means, original): no within-stratum spread
    p: dict                  # the numeric settings (_VECTOR_PARAMS) as (S,) vectors
    calibration: "Calibration"
    is_composite: np.ndarray  # (S,) bool: score is the composite (else gp-IRT)
    k_s: np.ndarray          # (S,) anchors per scenario


def _prepare(d: Design) -> _Prepared:
    """The :class:`_Prepared` arrays of ``d``."""
    N, S, k = len(d.item_ids), len(d.scenarios), len(d.anchor_positions)
    anchor_scenario = d.scenario_index[d.anchor_positions]
    tot = np.bincount(d.scenario_index, weights=d.balance, minlength=S)
    w = d.balance / tot[d.scenario_index]
    one_hot = np.zeros((N, S))
    one_hot[np.arange(N), d.scenario_index] = 1.0
    _, item_h = np.unique(d.strata, return_inverse=True)
    anchor_h = item_h[d.anchor_positions]
    H = int(item_h.max()) + 1
    h_scenario = np.zeros(H, dtype=np.int64)
    h_scenario[item_h] = d.scenario_index
    h_one_hot = np.zeros((H, S))
    h_one_hot[np.arange(H), h_scenario] = 1.0
    anchor_h_one_hot = np.zeros((k, H))
    anchor_h_one_hot[np.arange(k), anchor_h] = 1.0
    n_h = np.bincount(anchor_h, minlength=H).astype(np.float64)  # anchors per stratum
    p = {key: np.array([d.params[s][key] for s in d.scenarios], dtype=np.float64) for key in _VECTOR_PARAMS}
    lo = np.array([d.params[s]["range"][0] for s in d.scenarios])
    hi = np.array([d.params[s]["range"][1] for s in d.scenarios])
    anchor_one_hot = one_hot[d.anchor_positions]
    return _Prepared(
        design=d, anchor_index={a: i for i, a in enumerate(d.anchor_ids)}, item_set=frozenset(d.item_ids),
        prior_prec=np.linalg.inv(d.prior_cov), A_anchor=d.A[d.anchor_positions], b_anchor=d.b[d.anchor_positions],
        w=w, w_anchor=w[d.anchor_positions], one_hot=one_hot, anchor_one_hot=anchor_one_hot,
        scenario_items=[np.flatnonzero(d.scenario_index == s) for s in range(S)],
        scenario_anchors=[np.flatnonzero(anchor_scenario == s) for s in range(S)],
        AA=np.einsum("jd,je->jde", d.A, d.A).reshape(N, -1), z=float(norm.ppf(0.5 + d.confidence / 2)),
        H=H, item_h=item_h, anchor_h=anchor_h, W_h=np.bincount(item_h, weights=w, minlength=H),
        N_h=np.bincount(item_h, minlength=H).astype(np.float64), h_scenario=h_scenario, h_one_hot=h_one_hot,
        anchor_h_one_hot=anchor_h_one_hot, order=np.argsort(item_h, kind="stable"),
        starts=np.concatenate([[0], np.cumsum(np.bincount(item_h, minlength=H))[:-1]]),
        single=bool((n_h <= 1).all()), p=p,
        calibration=Calibration(lo=lo, hi=hi, kappa=p["kappa"], interval_scale=p["interval_scale"]),
        is_composite=np.array([d.params[s]["method"] == "composite" for s in d.scenarios]),
        k_s=anchor_one_hot.sum(0),
    )


class Answers(NamedTuple):
    """Anchor results of some models: ``Yf`` (n, k) with the unanswered ones 0, ``obs`` the answered mask."""

    Yf: np.ndarray
    obs: np.ndarray


class Predictions(NamedTuple):
    """The IRT model's posterior-averaged P(correct) of every item, ``P`` (n, N), its Bernoulli variance
    ``V = P (1 - P)``, and both at the anchors (``Pa``, ``Va``: (n, k))."""

    P: np.ndarray
    V: np.ndarray
    Pa: np.ndarray
    Va: np.ndarray


class StratumMeans(NamedTuple):
    """Per stratum (n, H): the Hajek weights' sums of the answered anchors (``u``, (n, k), the item
    weights of the answered anchors), their mean answer ``ybar_h`` and prediction ``xbar_h``, the
    population mean prediction ``Pbar_h``; ``seen_h``: the stratum has an answer."""

    u: np.ndarray
    U_h: np.ndarray
    seen_h: np.ndarray
    safe_U: np.ndarray
    ybar_h: np.ndarray
    xbar_h: np.ndarray
    Pbar_h: np.ndarray


class DesignBased(NamedTuple):
    """The design-based estimate (n, S), unbiased under the anchor draw whatever the IRT model, and its
    standard error."""

    estimate: np.ndarray
    se: np.ndarray


class ModelBased(NamedTuple):
    """The model-based estimate (n, S): p-IRT mixed with the ridge regression, and its error ``sigma``
    (measured out of fold, grown for partial runs: :func:`partial_sigma`)."""

    estimate: Any
    sigma: Any


class Calibration(NamedTuple):
    """A composite's settings (floats for one scenario, or (S,) vectors): the training models' score
    range ``[lo, hi]``, the penalty ``kappa`` outside it and the scale of the model-based error."""

    lo: Any
    hi: Any
    kappa: Any
    interval_scale: Any


class Composite(NamedTuple):
    """The score, its standard error and the weight ``g`` of the design-based estimate in it
    (NaN where the score is not a composite: gp-IRT scenarios)."""

    score: np.ndarray
    se: np.ndarray
    weight_db: np.ndarray


class _DrawVariance(NamedTuple):
    """Per stratum (n, H): answered anchors ``m``; the measured variance of the stratum's mean
    ``var_mean`` and of one draw ``per_draw`` (NaN below two answers; ``ok`` where finite); the
    stand-in where nothing is measured, ``pooled`` (the scenario's measured strata, mass-weighted, or
    the model's where it has none); ``has_pool``: the scenario has a measured stratum."""

    m: np.ndarray
    var_mean: np.ndarray
    per_draw: np.ndarray
    ok: np.ndarray
    pooled: np.ndarray
    has_pool: np.ndarray


def _components(pp: _Prepared, Y: Any) -> dict:
    """:meth:`TinyEstimator.components`: every part of the estimate for an (n, k) anchor matrix."""
    d = pp.design
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim != 2 or Y.shape[1] != len(d.anchor_ids):
        raise ValueError(f"expected an (n, {len(d.anchor_ids)}) anchor matrix, got shape {Y.shape}")
    if d.design == "original":
        return _original_components(pp, Y)
    obs = ~np.isnan(Y)
    Yf = np.where(obs, Y, 0.0)
    # --- theta: MAP on the answered anchors (n x k: small for any n), Laplace covariance
    theta, cov = _map_abilities(Yf, obs, pp.A_anchor, pp.b_anchor, d.prior_mean, pp.prior_prec)
    # the rest makes (n, N) arrays: blocks of rows keep them small for thousands of models
    parts = [_item_components(pp, Answers(Yf[sl], obs[sl]), theta[sl], cov[sl])
             for sl in _row_blocks(Y.shape[0], len(d.item_ids))]
    return parts[0] if len(parts) == 1 else {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}


def _item_components(pp: _Prepared, ans: Answers, theta: np.ndarray, cov: np.ndarray) -> dict:
    """:func:`_components` of some models given their abilities (every models x items array is made here)."""
    answered = (ans.obs @ pp.anchor_one_hot).astype(np.int64)
    pred = _predictions(pp, theta, cov)
    u = pp.w_anchor * ans.obs  # the answered anchors' item weights: p-IRT's and the strata's Hajek weights
    pirt, se_pirt = _pirt(pp, ans, pred, u, cov)
    means = _stratum_means(pp, ans, pred, u)
    irt = _irt(pp, means)
    if pp.single:
        se_irt = _one_per_stratum_se(pp, means.Pbar_h, ans.obs)
        db = DesignBased((pp.W_h * np.where(means.seen_h, means.ybar_h - means.xbar_h + means.Pbar_h, means.Pbar_h))
                         @ pp.h_one_hot, se_irt)
    else:
        # per-draw variance the model expects in a stratum (used only when no stratum of
        # the scenario has two answered anchors to measure it)
        model_v = np.maximum(means.Pbar_h - means.Pbar_h**2, 0.0)
        se_irt = _irt_se(pp, ans, means, model_v)
        db = _design_based(pp, ans, pred, means, se_pirt)
    gpirt, gp_se = gp_blend(irt, pirt, se_irt, se_pirt, pp.p["lambda"])
    mb, ridge, X = _model_based(pp, ans, pred, db, pirt, answered)
    out = final_estimate(pp.is_composite, composite(db, mb, pp.calibration), gpirt, gp_se, pp.p["interval_scale"])
    return {"x": X, "irt": irt, "se_irt": se_irt, "pirt": pirt, "se_pirt": se_pirt, "gpirt": gpirt,
            "db": db.estimate, "se_db": db.se, "ridge": ridge, "mb": mb.estimate, "score": out.score, "se": out.se,
            "weight_db": out.weight_db, "answered": answered, "theta": theta}


def _predictions(pp: _Prepared, theta: np.ndarray, cov: np.ndarray) -> Predictions:
    """Posterior-averaged P(correct): ``sigmoid(m / sqrt(1 + pi/8 a'Sa))`` for every item, in place
    in two (n, N) buffers."""
    d = pp.design
    n = theta.shape[0]
    q = cov.reshape(n, -1) @ pp.AA.T  # (n, N)
    q *= np.pi / 8.0
    q += 1.0
    np.sqrt(q, out=q)
    P = theta @ d.A.T
    P -= d.b
    P /= q
    P = expit(P, out=P)
    V = q  # reuse the buffer: V = P (1 - P)
    np.multiply(P, 1.0 - P, out=V)
    return Predictions(P, V, P[:, d.anchor_positions], V[:, d.anchor_positions])


def _pirt(pp: _Prepared, ans: Answers, pred: Predictions, u: np.ndarray, cov: np.ndarray):
    """p-IRT (n, S): the sum over all items of ``w p``, the answered anchors' ``y`` replacing their ``p``;
    its standard error: the Bernoulli noise of the predicted items and the ability's uncertainty."""
    d, S = pp.design, len(pp.design.scenarios)
    n = ans.Yf.shape[0]
    pirt = _by_scenario(pp, pred.P * pp.w) + (u * (ans.Yf - pred.Pa)) @ pp.anchor_one_hot
    wV = pred.V * pp.w
    bern = _by_scenario(pp, wV * pp.w) - (u * pp.w_anchor * pred.Va) @ pp.anchor_one_hot
    theta_var = np.empty((n, S))
    for s in range(S):
        cols, acols = pp.scenario_items[s], pp.scenario_anchors[s]
        g = wV @ d.A if S == 1 else wV[:, cols] @ d.A[cols]
        g -= (u[:, acols] * pred.Va[:, acols]) @ pp.A_anchor[acols]
        theta_var[:, s] = np.einsum("nd,nde,ne->n", g, cov, g)
    return pirt, np.sqrt(np.maximum(bern, 0.0) + theta_var)


def _stratum_means(pp: _Prepared, ans: Answers, pred: Predictions, u: np.ndarray) -> StratumMeans:
    """The answered anchors' means per stratum (Hajek weights ``u``) and the population means of ``p``."""
    Pbar_h = _stratum_sums(pp, pred.P * pp.w) / np.where(pp.W_h > 0, pp.W_h, 1.0)  # (n, H)
    U_h = u @ pp.anchor_h_one_hot
    seen_h = U_h > 0
    safe_U = np.where(seen_h, U_h, 1.0)
    ybar_h = (u * ans.Yf) @ pp.anchor_h_one_hot / safe_U
    xbar_h = (u * pred.Pa) @ pp.anchor_h_one_hot / safe_U
    return StratumMeans(u, U_h, seen_h, safe_U, ybar_h, xbar_h, Pbar_h)


def _irt(pp: _Prepared, means: StratumMeans) -> np.ndarray:
    """``irt`` (n, S): the stratified mean of the answers over the answered strata (NaN: none answered)."""
    n, S = means.U_h.shape[0], len(pp.design.scenarios)
    mass_seen = (means.seen_h * pp.W_h) @ pp.h_one_hot
    return np.divide((means.seen_h * pp.W_h * means.ybar_h) @ pp.h_one_hot, mass_seen,
                     out=np.full((n, S), np.nan), where=mass_seen > 0)


def _draw_variance(pp: _Prepared, R: np.ndarray, obs: np.ndarray, means: StratumMeans, rbar_h: np.ndarray,
                   model_v: np.ndarray, per_draw: Literal["count", "kish"]) -> _DrawVariance:
    """THE variance of one draw of the residuals ``R`` (n, k) in each stratum: measured, pooled or the model's.

    Within stratum h the Hajek mean of ``m_h`` answered anchors (weights ``u``, mean ``rbar_h``)
    has variance ``var_mean = m/(m-1) * sum (u_j/U)^2 (r_j - rbar)^2`` (the sample variance over
    ``m`` for equal weights), measured where ``m_h >= 2``. One draw's variance is that times the
    answers' count (``per_draw="count"``: ``m var_mean``, the standard error of ``irt``) or divided
    by ``sum (u_j/U)^2`` (``"kish"``: Kish's effective count, the design-based estimate's); the two
    agree for equal weights. Where a stratum has fewer than two answers, the scenario's measured
    strata pooled by mass stand in, or ``model_v`` (n, H), the model's, where it has none.
    """
    D = np.where(obs, R - rbar_h[:, pp.anchor_h], 0.0)
    share = np.divide(means.u, means.U_h[:, pp.anchor_h], out=np.zeros_like(means.u), where=obs)
    m = obs @ pp.anchor_h_one_hot  # answered anchors per stratum
    spread = (share**2 * D**2) @ pp.anchor_h_one_hot
    with np.errstate(divide="ignore", invalid="ignore"):
        var_mean = np.where(m >= 2, m / np.maximum(m - 1, 1) * spread, np.nan)  # variance of the stratum mean
        if per_draw == "kish":
            sum_share2 = share**2 @ pp.anchor_h_one_hot
            one = var_mean / np.where(sum_share2 > 0, sum_share2, 1.0)
        else:
            one = var_mean * m
    ok = np.isfinite(one)
    wsum = (ok * pp.W_h) @ pp.h_one_hot
    pooled = np.divide((np.where(ok, one, 0.0) * pp.W_h) @ pp.h_one_hot, wsum,
                       out=np.zeros_like(wsum), where=wsum > 0)  # (n, S)
    has_pool = (wsum > 0)[:, pp.h_scenario]
    return _DrawVariance(m, var_mean, one, ok, np.where(has_pool, pooled[:, pp.h_scenario], model_v), has_pool)


def _irt_se(pp: _Prepared, ans: Answers, means: StratumMeans, model_v: np.ndarray) -> np.ndarray:
    """Standard error (n, S) of ``irt``, the stratified mean of the answers.

    Stratum h contributes ``W_h^2`` times the variance of its mean, ``var_mean (1 - m/N_h)``
    (:func:`_draw_variance`); strata with one answered anchor use the pooled per-draw variance
    (times the same correction); unanswered strata (their mass is predicted by the model) count
    as one draw with that variance.
    """
    v = _draw_variance(pp, ans.Yf, ans.obs, means, means.ybar_h, model_v, "count")
    fpc = np.clip(1.0 - v.m / pp.N_h, 0.0, 1.0)
    var_h = np.where(v.m >= 2, v.var_mean * fpc, np.where(v.m == 1, v.pooled * fpc, v.pooled))
    return np.sqrt(np.maximum((pp.W_h**2 * var_h) @ pp.h_one_hot, 0.0))


def _design_based(pp: _Prepared, ans: Answers, pred: Predictions, means: StratumMeans,
                  se_pirt: np.ndarray) -> DesignBased:
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
    scenario for the others, one degree of freedom: :func:`_draw_variance`) averaged with what
    the IRT model expects, ``mean_h p(1-p) + (1 - beta)^2 var_h(p)``, worth :data:`MODEL_DOF`
    degrees of freedom: two answers that agree do not prove a stratum uniform (the measured
    spread is then 0), and with few answers the measured spread is mostly noise. A scenario
    with no answered anchor gets the model's p-IRT prediction and error.
    """
    seen_h, W_h, h_one_hot = means.seen_h, pp.W_h, pp.h_one_hot
    beta_h = pp.p["design_slope"][pp.h_scenario]  # (H,)
    beta_a = beta_h[pp.anchor_h]  # (k,)
    R = np.where(ans.obs, ans.Yf - beta_a * pred.Pa, 0.0)
    rbar_h = (means.u * R) @ pp.anchor_h_one_hot / means.safe_U  # (n, H)
    # --- per-draw variances: measured (two answers or more), pooled, and the model's
    Wsafe = np.where(W_h > 0, W_h, 1.0)
    Vbar_h = _stratum_sums(pp, pred.V * pp.w) / Wsafe
    P2bar_h = _stratum_sums(pp, pred.P * pred.P * pp.w) / Wsafe
    model_v = np.maximum(Vbar_h + (1 - beta_h) ** 2 * np.maximum(P2bar_h - means.Pbar_h**2, 0.0), 0.0)
    v = _draw_variance(pp, R, ans.obs, means, rbar_h, model_v, "kish")
    per_draw = np.where(v.ok, v.per_draw, v.pooled)
    # the model's per-draw variance counts as MODEL_DOF degrees of freedom next to the measured
    # ones (m - 1 in a stratum of m answers; 1 for the pooled value): two answers that agree do
    # not prove a stratum uniform, and with few answers the measured spread is mostly noise
    dof = np.where(v.ok, v.m - 1, np.where(v.has_pool, 1.0, 0.0))
    per_draw = (dof * per_draw + MODEL_DOF * model_v) / (dof + MODEL_DOF)
    M, Ng, absorbed = _collapse_unanswered(pp, seen_h)
    unseen = ~seen_h
    none = (seen_h * W_h) @ h_one_hot <= 0  # (n, S): no answer in the scenario
    db = (beta_h * W_h * means.Pbar_h) @ h_one_hot + (M * np.where(seen_h, rbar_h, 0.0)) @ h_one_hot
    fpc = np.clip(1.0 - v.m / np.where(Ng > 0, Ng, 1.0), 0.0, 1.0)
    var = (np.where(seen_h, M**2 * per_draw / np.maximum(v.m, 1) * fpc, 0.0)
           + np.where(absorbed, W_h**2 * per_draw, 0.0)
           + np.where(unseen & ~absorbed, W_h**2 * model_v, 0.0)) @ h_one_hot
    model_db = (W_h * means.Pbar_h) @ h_one_hot
    return DesignBased(np.where(none, model_db, db), np.where(none, se_pirt, np.sqrt(np.maximum(var, 0.0))))


def _collapse_unanswered(pp: _Prepared, seen_h: np.ndarray):
    """Each unanswered stratum's mass (and item count) moved to the nearest answered stratum of its
    scenario in easiness order (half to each when two are as near): ``(M, Ng, absorbed)``, the masses
    and item counts (n, H) the answered strata stand for, and which unanswered strata were absorbed."""
    n, H = seen_h.shape
    idx = np.arange(H)
    left = np.maximum.accumulate(np.where(seen_h, idx, -1), axis=1)
    right = np.minimum.accumulate(np.where(seen_h, idx, H)[:, ::-1], axis=1)[:, ::-1]
    hs = pp.h_scenario
    okl = (left >= 0) & (hs[np.clip(left, 0, H - 1)] == hs)
    okr = (right < H) & (hs[np.clip(right, 0, H - 1)] == hs)
    dl, dr = idx - left, right - idx
    fl = np.where(okl & okr, np.where(dl < dr, 1.0, np.where(dl == dr, 0.5, 0.0)), okl.astype(np.float64))
    fr = np.where(okl & okr, 1.0 - fl, okr.astype(np.float64))
    unseen = ~seen_h
    rows = np.repeat(np.arange(n) * H, H).reshape(n, H)
    M = pp.W_h * seen_h
    Ng = pp.N_h * seen_h
    for f, nb in ((fl, left), (fr, right)):
        wgt = np.where(unseen, f, 0.0)
        tgt = (rows + np.clip(nb, 0, H - 1)).ravel()
        M = M + np.bincount(tgt, weights=(wgt * pp.W_h).ravel(), minlength=n * H).reshape(n, H)
        Ng = Ng + np.bincount(tgt, weights=(wgt * pp.N_h).ravel(), minlength=n * H).reshape(n, H)
    return M, Ng, unseen & ((fl + fr) > 0)


def _one_per_stratum_se(pp: _Prepared, mean_p: np.ndarray, obs: np.ndarray) -> np.ndarray:
    """Model-based standard error of the anchor-weighted mean when each stratum has
    one anchor (k-means clusters): within cluster c the anchor stands for its members,
    variance ``mean_w[p] - mean_w[p]^2`` (``mean_p``: the strata's mean predictions, (n, H));
    unanswered mass adds the spread of the cluster means."""
    d = pp.design
    S, n = len(d.scenarios), mean_p.shape[0]
    v_c = np.maximum(mean_p - mean_p**2, 0.0)[:, pp.anchor_h]  # (n, k)
    mean_a = mean_p[:, pp.anchor_h]
    out = np.empty((n, S))
    for s in range(S):
        m = pp.scenario_anchors[s]
        aw = d.anchor_weights[m]
        W = aw * obs[:, m]
        tot = W.sum(1, keepdims=True)
        Wn = np.divide(W, tot, out=np.zeros_like(W), where=tot > 0)
        var = (Wn**2 * v_c[:, m]).sum(1)
        miss = 1.0 - tot[:, 0] / aw.sum()
        mu = (aw * mean_a[:, m]).sum(1) / aw.sum()
        spread = (aw * (mean_a[:, m] - mu[:, None]) ** 2).sum(1) / aw.sum()
        out[:, s] = np.sqrt(var + miss**2 * spread)
    return out


def _model_based(pp: _Prepared, ans: Answers, pred: Predictions, db: DesignBased, pirt: np.ndarray,
                 answered: np.ndarray):
    """The model-based estimate: p-IRT mixed with a ridge regression of the residual full score on the
    anchor results (the unanswered ones predicted, ``x``); returns ``(ModelBased, ridge, x)``."""
    X = np.where(ans.obs, ans.Yf, pred.Pa)
    ridge = db.estimate + pp.p["ridge_intercept"] + (X * pp.design.ridge_coef) @ pp.anchor_one_hot
    mb = pp.p["pirt_weight"] * pirt + (1 - pp.p["pirt_weight"]) * ridge
    return ModelBased(mb, partial_sigma(pp.p["sigma"], pp.p["sigma_partial"], answered, pp.k_s)), ridge, X


def _by_scenario(pp: _Prepared, X: np.ndarray) -> np.ndarray:
    """Per-scenario sums of the columns of X (n, N) -> (n, S)."""
    # a plain row sum for one scenario: a product with an (N, 1) operand can hit a slow
    # BLAS path depending on its strides
    return X.sum(1, keepdims=True) if len(pp.design.scenarios) == 1 else X @ pp.one_hot


def _stratum_sums(pp: _Prepared, X: np.ndarray) -> np.ndarray:
    """Per-stratum sums of the columns of X (n, N) -> (n, H)."""
    return np.add.reduceat(X[:, pp.order], pp.starts, axis=1)


def composite(db: DesignBased, mb: ModelBased, cal: Calibration) -> Composite:
    """The composite score, its standard error and the weight ``g`` of the design-based estimate:
    **the one place where the interval of a calibrated estimator is computed** (``score -+ z se``).

    ``g = s2 / (s2 + se_db^2)`` with ``s2 = sigma^2 + kappa d2``, where ``d2`` is the expected
    squared distance of the score outside the training range ``[lo, hi]`` when it is
    ``N(db, se_db^2)`` (:func:`outside_distance2`): a model whose design-based estimate lies near
    the edge of the range, or is uncertain, may well lie outside it, and the model-based
    estimate, learned inside the range, loses weight smoothly instead of at the edge. The
    design-based error is honest by construction; the model-based one is scaled by
    ``interval_scale``, calibrated so that out-of-fold intervals cover (full and partial runs).
    The estimator, the builder's calibration of ``interval_scale`` and its validation report all
    call this function.
    """
    s2 = mb.sigma**2 + cal.kappa * outside_distance2(db.estimate, db.se, cal.lo, cal.hi)
    v_db = db.se**2
    g = np.divide(s2, s2 + v_db, out=np.ones_like(s2), where=(s2 + v_db) > 0)
    score = g * db.estimate + (1 - g) * mb.estimate
    se = g * db.se + (1 - g) * np.sqrt(s2) * cal.interval_scale
    return Composite(score, se, g)


def final_estimate(is_composite: Any, comp: Composite, gpirt: Any, gp_se: Any, interval_scale: Any) -> Composite:
    """The reported score and standard error per scenario: the :func:`composite` where the scenario's
    method is "composite" (``is_composite``: (S,) bools or one bool), gp-IRT with its error times
    ``interval_scale`` elsewhere (the original k-means design); the score clipped to [0, 1]."""
    # a full score lies in [0, 1]; the regression's extrapolation may step outside
    score = np.clip(np.where(is_composite, comp.score, gpirt), 0.0, 1.0)
    se = np.where(is_composite, comp.se, gp_se * interval_scale)
    return Composite(score, se, np.where(is_composite, comp.weight_db, np.nan))


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
    n = Yf.shape[0]
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


# =====================================================================================================
# 4. Results, parsing the scores given, versions, the original release's numerics
# =====================================================================================================

def _results(pp: _Prepared, comp: dict) -> list[dict]:
    """One result dict per model (per scenario, and the mean over a bundle's scenarios)."""
    scenarios = pp.design.scenarios
    S = len(scenarios)
    out = []
    for i in range(comp["score"].shape[0]):
        per = {name: _pack(comp, i, s, pp.z) for s, name in enumerate(scenarios)}
        if S == 1:
            res = per[scenarios[0]]
        else:
            # bundle: the headline is the mean over benchmarks (Open LLM Leaderboard average)
            irt = comp["irt"][i]
            head = {"irt": float(np.nanmean(irt)) if not np.isnan(irt).all() else float("nan"),
                    "pirt": float(comp["pirt"][i].mean()), "gpirt": float(comp["gpirt"][i].mean()),
                    "score": float(comp["score"][i].mean()),
                    "se": math.sqrt(float((comp["se"][i] ** 2).sum())) / S,
                    "n_answered": int(comp["answered"][i].sum())}
            res = _with_interval(head, pp.z)
            res["scenarios"] = per
        out.append(res)
    return out


def _pack(comp: dict, i: int, s: int, z: float) -> dict:
    res = {"score": float(comp["score"][i, s]), "se": float(comp["se"][i, s]),
           "irt": float(comp["irt"][i, s]), "pirt": float(comp["pirt"][i, s]), "gpirt": float(comp["gpirt"][i, s]),
           "n_answered": int(comp["answered"][i, s])}
    return _with_interval(res, z)


def _with_interval(res: dict, z: float) -> dict:
    """``res`` with ``ci_low``, ``ci_high``: ``score -+ z se`` clipped to [0, 1] (NaN without an error)."""
    half = z * res["se"]
    if math.isnan(half):  # no interval (an estimator imported from the original release)
        out = {"score": res["score"], "ci_low": float("nan"), "ci_high": float("nan")}
    else:
        out = {"score": res["score"], "ci_low": float(max(0.0, res["score"] - half)),
               "ci_high": float(min(1.0, res["score"] + half))}
    out.update({k: v for k, v in res.items() if k != "score"})
    return out


def _parse(pp: _Prepared, scores: Any, order: Sequence[str] | None = None) -> tuple[np.ndarray, bool]:
    """Scores as a (n, k) matrix in ``anchor_ids`` order, and whether one model was given; ``order``: the
    anchor order of an earlier design this one re-estimates (positional input follows it)."""
    anchor_ids = pp.design.anchor_ids
    k = len(anchor_ids) if order is None else len(order)
    labelled = _labelled(scores)
    if labelled is not None:
        kind, value = labelled
        if kind == "series":
            scores = value
        else:  # a frame: columns are item ids, one model per row
            cols = value[0]
            _warn_unused(pp, _check_labels(pp, cols), len(cols), stacklevel=4)  # the caller of estimate
            rows = [_row_of(pp, dict(zip(cols, r)), checked=True) for r in value[1]]
            if not rows:
                raise ValueError("no scores given")
            return np.vstack(rows), False
    if isinstance(scores, Mapping):
        Y, single = _row_of(pp, scores)[None, :], True
    else:
        Y, single = _positional(scores, k)
        if order is not None:  # an earlier design's order: place each column by its anchor id
            at = {a: i for i, a in enumerate(order)}
            placed = np.full((len(Y), len(anchor_ids)), np.nan)
            for j, a in enumerate(anchor_ids):
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


def _positional(scores: Any, k: int) -> tuple[np.ndarray, bool]:
    """A sequence (one model) or a 2-D array (one model per row) of ``k`` scores each, checked."""
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
    return Y, single


def _match_labels(pp: _Prepared, keys: Sequence[Any]) -> tuple[list[str], list[str], list[str]]:
    """:meth:`TinyEstimator.match_labels`."""
    anchors: list[str] = []
    others: list[str] = []
    unknown: list[str] = []
    for key in map(str, keys):
        (anchors if key in pp.anchor_index else others if key in pp.item_set else unknown).append(key)
    return anchors, others, unknown


def _check_labels(pp: _Prepared, keys: Sequence[str]) -> list[str]:
    """:meth:`TinyEstimator.check_items`."""
    d = pp.design
    k = len(d.anchor_ids)
    anchors, others, unknown = _match_labels(pp, keys)
    if anchors or not (others or unknown):
        return [str(key) for key in keys if str(key) not in pp.anchor_index]
    name = d.metadata.get("benchmark") or "this tiny benchmark"
    mine = f"{name} {d.version}" if d.version else name
    if unknown:
        raise ValueError(f"unknown item id {unknown[0]!r}" + (
            f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else "") +
            f": not an item of {mine}, and none of its {k} anchors is given (a model name belongs in the "
            "index, not in a column; results of another version's tiny split are estimated by the estimator "
            "of that version)")
    raise ValueError(
        f"item {others[0]!r} is not one of the {k} anchors of {mine} (design {d.design_hash[:12]}), and "
        f"none of the anchors is given (e.g. {d.anchor_ids[0]!r}): the scores name {len(others)} other "
        "item(s) of the benchmark. Results of another version's tiny split? Estimate them with the "
        "estimator of that version")


def _warn_unused(pp: _Prepared, unused: Sequence[str], n_labels: int, stacklevel: int) -> None:
    """Name the labels a partial run's estimate does not use (a full row says nothing)."""
    given = n_labels - len(unused)
    k = len(pp.design.anchor_ids)
    if not unused or given >= k:
        return
    shown = ", ".join(repr(u) for u in unused[:3]) + (", ..." if len(unused) > 3 else "")
    warnings.warn(f"{len(unused)} label(s) are not used ({shown}: not anchors); the estimate uses the {given} of "
                  f"the {k} anchors given (a partial run)", UserWarning, stacklevel=stacklevel)


def _row_of(pp: _Prepared, scores: Mapping, checked: bool = False) -> np.ndarray:
    """One model's ``{item_id: score}`` as a row in ``anchor_ids`` order (NaN: not given)."""
    if not checked:
        _warn_unused(pp, _check_labels(pp, list(scores)), len(scores), stacklevel=5)
    row = np.full(len(pp.design.anchor_ids), np.nan)
    for key, val in scores.items():
        idx = pp.anchor_index.get(str(key))
        if idx is not None:
            row[idx] = _to_score(val, str(key))
    return row


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
        out.append(_frozen({"version": v, "design_hash": h, "anchor_ids": list(ids) if ids is not None else None}))
    return out


def _design_of(d: Design, declared: Any) -> list[str] | None:
    """:meth:`TinyEstimator.design_of`."""
    if not isinstance(declared, str) or not declared.strip():
        raise ValueError(f"version must be a version string such as '1.0.0' or a design hash, got {declared!r}")
    text = declared.strip()
    is_hash = bool(re.fullmatch(r"[0-9a-fA-F]{8,64}", text))
    want = text.lower() if is_hash else text[1:] if text[:1] in "vV" and text[1:2].isdigit() else text
    known = d.known_designs()
    for k in known:
        if (k["design_hash"].startswith(want) if is_hash else k["version"] == want):
            return k["anchor_ids"]
    name = d.metadata.get("benchmark") or "this tiny benchmark"
    mine = f"{name} {d.version}" if d.version else name
    earlier = [k["version"] for k in known[1:] if k["version"]]
    also = f" and those of {', '.join(earlier)} (same anchors)" if earlier else ""
    what = f"design {text}" if is_hash else f"{name} {want}"
    use = ("the estimator whose design hash that is" if is_hash
           else f"the estimator of {want} (TinyEstimator.from_hub(repo, revision=\"v{want}\"))")
    raise ValueError(
        f"results made against {what} cannot be estimated by {mine} (design {d.design_hash[:12]}): it "
        f"estimates results made against its own design{also}, and the anchors (or their order) of {what} "
        f"are not known to be those; estimate them with {use}")


def _original_components(pp: _Prepared, Y: np.ndarray) -> dict:
    """:func:`_components` of the original ``evaluate`` (module docstring), one model at a time
    with the original's operations, so that its numbers are reproduced to the last bit."""
    from scipy.optimize import minimize

    d = pp.design
    n, S, D = Y.shape[0], len(d.scenarios), d.n_dims
    a, b = d.A.T[None], d.b[None, None, :]  # the original's (1, D, N) and (1, 1, N)

    def curve(theta, cols):  # the original's item_curve
        return 1 / (1 + np.exp(-np.clip(a[:, :, cols] * theta - b[:, :, cols], -30, 30).sum(axis=1)))

    def neg_log_like(x, pos, ys):
        p = curve(x.reshape(1, D, 1), pos).squeeze()
        return -np.sum(ys * np.log(p + 1e-10) + (1 - ys) * np.log(1 - p + 1e-10))

    out = {k: np.full((n, S), np.nan) for k in ("irt", "pirt", "gpirt", "se", "db", "se_db", "ridge", "mb",
                                                 "weight_db", "se_irt", "se_pirt")}
    out.update(theta=np.zeros((n, D)), x=Y.copy(), answered=np.zeros((n, S), dtype=np.int64))
    for i, y in enumerate(Y):
        seen = np.flatnonzero(~np.isnan(y))
        pos, ys = d.anchor_positions[seen].tolist(), y[seen]
        theta = minimize(neg_log_like, np.zeros(D), args=(pos, ys), method="BFGS").x[None, :, None]
        out["theta"][i] = theta[0, :, 0]
        p_all = curve(theta, slice(None))[0]
        out["x"][i, np.isnan(y)] = p_all[d.anchor_positions[np.isnan(y)]]
        for s in range(S):
            acols = np.intersect1d(pp.scenario_anchors[s], seen)
            unseen = np.setdiff1d(pp.scenario_items[s], d.anchor_positions[acols])
            w, ya = d.anchor_weights[acols], y[acols]
            lam = len(acols) / len(pp.scenario_items[s])
            pirt = (1 - lam) * (d.balance * p_all)[unseen].mean()
            out["pirt"][i, s], out["answered"][i, s], out["gpirt"][i, s] = pirt, len(acols), pirt
            if len(acols) and w.sum() > 0:  # (a batch row may leave a scenario unanswered)
                irt = (w * ya).sum() * (d.anchor_weights[pp.scenario_anchors[s]].sum() / w.sum())
                pirt = lam * (d.balance[d.anchor_positions[acols]] * ya).mean() + pirt
                out["irt"][i, s], out["pirt"][i, s] = irt, pirt
                out["gpirt"][i, s] = pp.p["lambda"][s] * irt + (1 - pp.p["lambda"][s]) * pirt
    out["score"] = out["gpirt"].copy()
    return out


# =====================================================================================================
# 5. The facade
# =====================================================================================================

class TinyEstimator:
    """Full-score estimates (score with a 95% interval; irt, p-IRT, gp-IRT) from anchor results.

    Build one with :meth:`load` (a folder of side files) or :meth:`from_hub`; the
    builder makes them with the constructor (the fields of :class:`Design`, which says what
    each is) or :meth:`from_design`, and writes them with :meth:`save`. An estimator does not
    change: its fields are read-only views of its :class:`Design` (:meth:`to_design`), and
    :meth:`replace` derives a changed estimator (``est.replace(metadata={...})``).
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
        self._use(Design(
            item_ids, anchor_positions, anchor_weights, A, b, balance, scenario_index,  # type: ignore[arg-type]
            scenario_names, strata, prior_mean, prior_cov, params or {}, anchor_strata, ridge_coef, design,
            confidence, metadata or {}))

    def _use(self, design: Design) -> None:
        self._design = design
        self._prep = _prepare(design)
        self._root: Path | None = None  # the folder (or Hub snapshot) it was loaded from: tiny_split() reads it
        self._source: tuple[str, str | None] | None = None  # (repo_id, commit) when loaded from the Hub
        self._hub_kwargs: dict = {}

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_"):
            fields = [f.name for f in dataclasses.fields(Design)]
            how = (f"derive a changed estimator with est.replace({name}=...)" if name in fields
                   else f"derive a changed estimator with est.replace(...) (the fields of Design: {', '.join(fields)})")
            raise AttributeError(f"TinyEstimator.{name} is read-only: {how}")
        object.__setattr__(self, name, value)

    @classmethod
    def from_design(cls, design: Design) -> "TinyEstimator":
        """The estimator of ``design``."""
        est = cls.__new__(cls)
        est._use(design)
        return est

    def to_design(self) -> Design:
        """This estimator's :class:`Design` (immutable: the object itself)."""
        return self._design

    def replace(self, **changes: Any) -> "TinyEstimator":
        """A new estimator with ``changes`` (fields of :class:`Design`) applied, checked again:
        ``est.replace(ridge_coef=coef, params={...}, metadata={...})`` (:meth:`Design.replace`)."""
        return type(self).from_design(self._design.replace(**changes))

    def __repr__(self) -> str:
        return f"TinyEstimator({self._design!r})"

    # -------------------------------------------------------- the design's fields (read-only)
    @property
    def item_ids(self) -> list[str]:
        """The benchmark's item ids (N), in the order of the IRT parameters (read-only)."""
        return self._design.item_ids  # type: ignore[return-value]  # a read-only list

    @property
    def anchor_ids(self) -> list[str]:
        """The anchors' item ids, in the order a positional input follows."""
        return self._design.anchor_ids

    @property
    def anchor_positions(self) -> np.ndarray:
        """Positions of the anchors in ``item_ids`` (k,), in ``anchor_ids`` order."""
        return self._design.anchor_positions

    @property
    def anchor_weights(self) -> np.ndarray:
        """Weight of each anchor in the anchor-weighted mean ``irt`` (sum 1 per scenario)."""
        return self._design.anchor_weights

    @property
    def A(self) -> np.ndarray:
        """IRT discriminations (N, D), in ``item_ids`` order (read-only)."""
        return self._design.A

    @property
    def b(self) -> np.ndarray:
        """IRT difficulties (N,), in ``item_ids`` order (read-only)."""
        return self._design.b

    @property
    def balance(self) -> np.ndarray:
        """Item weights of the full score (N,), normalised per scenario in the estimate."""
        return self._design.balance

    @property
    def scenario_index(self) -> np.ndarray:
        """The scenario of every item (N,): positions in :attr:`scenarios`."""
        return self._design.scenario_index

    @property
    def scenarios(self) -> list[str]:
        """The scenario names (S,): a bundle's configs, or ``["all"]``."""
        return self._design.scenarios

    @property
    def strata(self) -> np.ndarray:
        """The stratum of every item (N,): the anchors sample the strata."""
        return self._design.strata

    @property
    def anchor_strata(self) -> np.ndarray:
        """The stratum of every anchor (k,)."""
        return self._design.anchor_strata

    @property
    def ridge_coef(self) -> np.ndarray:
        """Ridge weight of each anchor (k,) in its scenario's regression."""
        return self._design.ridge_coef

    @property
    def prior_mean(self) -> np.ndarray:
        """Mean of the Gaussian ability prior (D,): the training models'."""
        return self._design.prior_mean

    @property
    def prior_cov(self) -> np.ndarray:
        """Covariance of the Gaussian ability prior (D, D)."""
        return self._design.prior_cov

    @property
    def params(self) -> Mapping[str, Mapping[str, Any]]:
        """Per-scenario settings (read-only; :data:`DEFAULT_PARAMS` filled in)."""
        return self._design.params

    @property
    def design(self) -> str:
        """How the anchors were chosen ("stratified", "kmeans", "original")."""
        return self._design.design

    @property
    def confidence(self) -> float:
        """The interval's confidence level (0.95 by default: ``score -+ z se``, z = 1.96)."""
        return self._design.confidence

    @property
    def metadata(self) -> Mapping[str, Any]:
        """Free-form build information (read-only)."""
        return self._design.metadata

    @property
    def n_dims(self) -> int:
        """The IRT dimension D."""
        return self._design.n_dims

    @property
    def lambdas(self) -> dict:
        """gp-IRT weight of ``irt`` per scenario."""
        return {s: p["lambda"] for s, p in self.params.items()}

    # ------------------------------------------------------------------ I/O
    def irt_parameters(self) -> tuple[np.ndarray, np.ndarray]:
        """``(A, b)``: discriminations (N, D) and difficulties (N,), in ``item_ids`` order."""
        return self.A.copy(), self.b.copy()

    def save(self, path: str | os.PathLike) -> list[Path]:
        """Write the side files into folder ``path``; returns their paths (:func:`write_side_files`)."""
        return write_side_files(self._design, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "TinyEstimator":
        """Read the side files from a folder (no pickle: loading runs no code).

        Every field and array is checked; a missing, malformed or implausible one raises
        ``ValueError`` naming the file and the field. Array sizes are checked against the
        item count *before* the arrays are read (:func:`read_side_files`).
        """
        folder = Path(path)
        est = cls.from_design(read_side_files(folder))
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
        manifest (:func:`check_release_files`): a mismatch, or a side file the manifest does
        not list, raises ``ValueError``. The files live in the Hugging Face
        cache, so once a revision has been downloaded this works offline
        (``HF_HUB_OFFLINE=1``); the hashes are checked again on every load.
        """
        from huggingface_hub import snapshot_download  # lazy: only this method needs it

        prefix = f"{subfolder.strip('/')}/" if subfolder else ""
        snapshot = Path(snapshot_download(
            repo_id, repo_type="dataset", revision=revision, cache_dir=cache_dir, token=token,
            allow_patterns=sorted({MANIFEST_NAME, prefix + MANIFEST_NAME, ADAPTIVE_NAME,
                                   *(prefix + n for n in SIDE_FILES)}),
        ))
        code = check_release_files(snapshot, prefix, f"{repo_id}@{revision or 'main'}")
        est = cls.load(snapshot / prefix if prefix else snapshot)
        est._root = snapshot
        # snapshot_download returns .../snapshots/<commit>: the rows are read from that commit
        commit = snapshot.name if re.fullmatch(r"[0-9a-f]{40}", snapshot.name) else revision
        est._source = (repo_id, commit)
        est._hub_kwargs = {k: v for k, v in (("cache_dir", cache_dir), ("token", token)) if v is not None}
        est._adaptive_fallback = code
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
        Y, single = _parse(self._prep, scores, order)
        results = _results(self._prep, self.components(Y))
        return results[0] if single else results

    def components(self, Y: np.ndarray) -> dict:
        """Per-scenario estimator parts for a (n, k) anchor matrix (NaN = unanswered).

        Returns arrays of shape (n, S): ``irt``, ``se_irt``, ``pirt``, ``se_pirt``,
        ``gpirt``, ``db``, ``se_db`` (design-based), ``ridge``, ``mb`` (model-based),
        ``score``, ``se`` (of ``score``, calibrated), ``weight_db`` (``g``),
        ``answered``; ``theta`` (n, D) and ``x`` (n, k), the anchor results with the
        unanswered ones predicted (the regression's input).
        """
        return _components(self._prep, Y)

    def match_labels(self, keys: Sequence[Any]) -> tuple[list[str], list[str], list[str]]:
        """Item-id labels ``keys`` (a table's columns, a mapping's keys) sorted out, each in their
        order: ``(anchors, other items of the benchmark, labels that are not items)``."""
        return _match_labels(self._prep, keys)

    def check_items(self, keys: Sequence[str]) -> list[str]:
        """``ValueError`` unless results labelled by the item ids ``keys`` can be estimated; returns
        the labels that are not used. The rule (``estimate`` and ``tinybench-builder estimate`` alike):
        the anchors among the labels are read, any subset of them (a partial run) or all (a full
        row); every other label (an item that is not an anchor, a name that is not an item) is not
        used, and when anchors are missing ``estimate`` names them in a warning. Labels without a
        single anchor are refused: another benchmark, item ids in another form, results of another
        version's tiny split. No label at all is left to the caller ("no anchor is answered")."""
        return _check_labels(self._prep, keys)

    # ------------------------------------------------------------- versions
    @property
    def design_hash(self) -> str:
        """The design's identity: sha256 of the anchor ids, their order and strata
        (:func:`design_hash`). Results made against the same design are estimable."""
        return self._design.design_hash

    @property
    def version(self) -> str | None:
        """The tiny dataset version this estimator belongs to (None for a ``tinybench-builder fit`` folder)."""
        return self._design.version

    def known_designs(self) -> list[dict]:
        """The designs whose results this estimator estimates: ``[{"version", "design_hash",
        "anchor_ids"}]``, this version first, then the earlier versions it re-estimates
        (``anchor_ids``: that version's positional order, None when it is this one's)."""
        return self._design.known_designs()

    def design_of(self, declared: Any) -> list[str] | None:
        """The anchor order of the declared version or design hash (None: this estimator's
        own), or ``ValueError`` naming both versions when this estimator cannot estimate
        results made against it. ``estimate(..., version=)`` calls it; so do tools that read
        results by item id and only need the check."""
        return _design_of(self._design, declared)

    def tiny_split(self, config: str | None = None):
        """The rows of the tiny split this estimator was loaded with, as a pandas DataFrame
        (needs pandas and pyarrow): from the same folder or the same Hub commit as the side
        files, so rows and estimator are of one revision (:meth:`from_hub`)."""
        import pyarrow.parquet as pq

        root = self._root
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
