"""Typed settings of a build: :class:`FitOptions` and :class:`BuildOptions` (frozen dataclasses).

::

    options = BuildOptions(anchors=100, seed=0, version="1.0.0", fit=FitOptions(n_dims=1, n_seeds=2))
    build_benchmark("tinyMMLU", responses, content, options, out="build/tinyMMLU")

:class:`FitOptions` mirrors the keyword parameters of :func:`builder.fitting.fit_estimator`
that are settings (not ``matrix``, ``n_anchors``, ``seed``, ``scenario_order``, ``progress`` or
``metadata``, which a build sets per estimator); ``fit_estimator(matrix, **options.as_kwargs())`` calls it. A
test keeps the fields and defaults in agreement with the signature.

This module imports nothing of the package but the IRT model's own check of ``binarize``.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

__all__ = ["BuildError", "FitOptions", "BuildOptions", "ITEM_ORDERS", "check_repo_id", "check_binarize"]

#: how response item ids index the content rows (:func:`builder.content.remap_item_order`)
ITEM_ORDERS = ("upstream", "harness_v1")
_VERSION_RE = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]*")


class BuildError(ValueError):
    """Inputs or settings that cannot make a tiny dataset (mismatched ids, missing columns...)."""


def check_repo_id(repo_id: Any, what: str = "repo_id") -> str:
    """``repo_id`` if the Hub accepts it as a dataset repository ``owner/name``, else BuildError.

    Checked with huggingface_hub's own validator (``validate_repo_id``: characters, length, no
    ``--`` or ``..``, no trailing ``.git``...), plus the owner part a dataset repository needs.
    """
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    if not isinstance(repo_id, str):
        raise BuildError(f"{what} must be text like owner/name, got {type(repo_id).__name__}")
    try:
        validate_repo_id(repo_id)
    except HFValidationError as exc:
        raise BuildError(f"{what} {repo_id!r} is not a valid Hub repository id: {str(exc).split(': ')[0]}") from None
    if repo_id.count("/") != 1:
        raise BuildError(f"{what} {repo_id!r} must be owner/name")
    return repo_id


def check_binarize(value: Any) -> bool | float:
    """``binarize``: False (soft scores), True (the mean-preserving threshold) or a threshold
    strictly between 0 and 1 (any other number makes every score 0, or every score 1)."""
    from .irt import check_binarize as check  # the rule lives where binarize is used

    try:
        return check(value)
    except ValueError:
        raise BuildError(f"binarize must be true/false or a threshold strictly between 0 and 1, got {value!r}") from None


@dataclass(frozen=True)
class FitOptions:
    """Settings of :func:`builder.fitting.fit_estimator` (its defaults; see its docstring).

    ``irt_params`` is kept read-only; :meth:`as_kwargs` hands ``fit_estimator`` a copy.
    """

    n_dims: int | None = None
    design: str = "stratified"
    n_seeds: int = 10
    n_folds: int | None = None
    validation_fraction: float = 0.2
    binarize: bool | float = False
    irt_params: Mapping[str, Any] | None = None
    kappa: float = 16.0

    #: the options every manifest records (``parameters``), in this order
    RECORDED = ("n_dims", "design", "n_seeds", "n_folds", "validation_fraction", "binarize", "irt_params", "kappa")

    def __post_init__(self) -> None:
        if self.irt_params is not None:
            object.__setattr__(self, "irt_params", MappingProxyType(dict(self.irt_params)))
        check_binarize(self.binarize)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any] | None) -> "FitOptions":
        """``{"n_dims": 1, ...}`` -> FitOptions; an unknown name is a :class:`BuildError`."""
        values = dict(values or {})
        bad = [k for k in values if k not in cls.names()]
        if bad:
            raise BuildError(f"unknown fit option(s) {', '.join(bad)}; known: {', '.join(cls.names())}")
        return cls(**values)

    def as_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of ``fit_estimator`` (plain values, ``irt_params`` a dict)."""
        out = {name: getattr(self, name) for name in self.names()}
        if out["irt_params"] is not None:
            out["irt_params"] = dict(out["irt_params"])
        return out

    def record(self) -> dict[str, Any]:
        """The options as the manifest records them: every :data:`RECORDED` option, then any
        other option that differs from its default (older manifests had only those)."""
        values = self.as_kwargs()
        out = {name: values[name] for name in self.RECORDED}
        defaults = FitOptions()
        for name in self.names():
            if name not in out and getattr(self, name) != getattr(defaults, name):
                out[name] = values[name]
        return out


@dataclass(frozen=True)
class BuildOptions:
    """Settings of one build (:func:`builder.dataset.build_benchmark`).

    Parameters
    ----------
    anchors : int, optional
        Anchors per config (a bundle's estimator gets k x its configs). None: the benchmark's.
    seed : int
        Seed of the fit; the same inputs and seed give a byte-identical folder.
    version : str
        Dataset version written to the manifest and the card.
    repo_id, tag : str, optional
        Hub repository and release tag shown in the card's usage (default
        ``tinyBenchmarks/<name>`` and ``v<version>``).
    item_order : {"upstream", "harness_v1"}
        How the response item ids index the content: upstream row ids, or row positions in
        the v0.3 harness evaluation order (Open LLM Leaderboard v1 details).
    fit : FitOptions
        Settings of :func:`builder.fitting.fit_estimator`.
    """

    anchors: int | None = None
    seed: int = 0
    version: str = "0.0.0"
    repo_id: str | None = None
    tag: str | None = None
    item_order: str = "upstream"
    fit: FitOptions = field(default_factory=FitOptions)

    def __post_init__(self) -> None:
        if not _VERSION_RE.fullmatch(str(self.version)):
            raise BuildError(f"version must look like 1.2.0, got {self.version!r}")
        if self.anchors is not None and int(self.anchors) < 1:
            raise BuildError(f"anchors must be positive, got {int(self.anchors)}")
        if self.item_order not in ITEM_ORDERS:
            raise BuildError(f"item_order must be one of {ITEM_ORDERS}, got {self.item_order!r}")
        if not isinstance(self.fit, FitOptions):
            raise BuildError(f"fit must be a FitOptions (builder.config), got {type(self.fit).__name__}")
        if self.repo_id is not None:
            check_repo_id(self.repo_id, "repo_id")
        if self.tag is not None and not _VERSION_RE.fullmatch(str(self.tag)):
            raise BuildError(f"tag must look like v1.2.0, got {self.tag!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed < 2**32:
            raise BuildError(f"seed must be an integer from 0 to 2**32 - 1, got {self.seed!r}")

    def anchors_for(self, default: int) -> int:
        """Anchors per config: the option, else ``default`` (the benchmark's)."""
        k = int(self.anchors if self.anchors is not None else default)
        if k < 1:
            raise BuildError(f"anchors must be positive, got {k}")
        return k

    def repo_id_for(self, name: str) -> str:
        """The Hub repository shown in the card: ``repo_id``, else ``tinyBenchmarks/<name>``, checked."""
        return check_repo_id(self.repo_id or f"tinyBenchmarks/{name}", "the repository id")

    def tag_for(self) -> str:
        return self.tag or f"v{self.version}"
