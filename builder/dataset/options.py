"""Typed settings of a build: :class:`BuildOptions` (a frozen dataclass holding a :class:`FitOptions`).

::

    options = BuildOptions(anchors=100, seed=0, version="1.0.0", fit=FitOptions(n_dims=1, n_seeds=2))
    build_benchmark("tinyMMLU", responses, content, options, out="build/tinyMMLU")
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from builder.errors import BuildError
from builder.model import FitOptions

__all__ = ["BuildOptions", "ITEM_ORDERS", "check_repo_id"]

#: how response item ids index the content rows (:func:`builder.dataset.content.remap_item_order`)
ITEM_ORDERS = ("upstream", "harness_v1")
_VERSION_RE = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]*")


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


@dataclass(frozen=True)
class BuildOptions:
    """Settings of one build (:func:`builder.dataset.build.build_benchmark`).

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
        Settings of :func:`builder.model.fitting.fit_estimator`.
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
            raise BuildError(f"fit must be a FitOptions (builder.model.options), got {type(self.fit).__name__}")
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
