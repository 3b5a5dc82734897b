"""Typed settings of a build: :class:`BuildOptions` (a frozen dataclass holding a :class:`FitOptions`).

::

    options = BuildOptions(anchors=100, seed=0, version="1.0.0", fit=FitOptions(n_dims=1, n_seeds=2))
    build_benchmark("tinyMMLU", responses, content, options, out="build/tinyMMLU")
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from builder import params
from builder.errors import BuildError
from builder.model import FitOptions
from builder.params import ITEM_ORDERS

__all__ = ["BuildOptions", "ITEM_ORDERS", "check_repo_id"]



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
        Dataset version written to the manifest and the card: ``MAJOR.MINOR.PATCH``
        (:func:`builder.params.check_version`; a leading ``v`` is dropped).
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
        # the shared parameters, by their one rule (builder/params.py)
        object.__setattr__(self, "version", params.check_version(self.version, error=BuildError))
        params.ANCHORS.optional(self.anchors, error=BuildError)
        params.ITEM_ORDER.check(self.item_order, error=BuildError)
        params.SEED.check(self.seed, error=BuildError)
        if not isinstance(self.fit, FitOptions):
            raise BuildError(f"fit must be a FitOptions (builder.model.options), got {type(self.fit).__name__}")
        if self.repo_id is not None:
            check_repo_id(self.repo_id, "repo_id")
        if self.tag is not None and not (isinstance(self.tag, str) and self.tag.startswith("v")
                                         and params.check_version(self.tag, error=BuildError) == self.tag[1:]):
            raise BuildError(f"tag must look like v1.2.0, got {self.tag!r}")

    def anchors_for(self, default: int) -> int:
        """Anchors per config: the option, else ``default`` (the benchmark's)."""
        return params.ANCHORS.check(self.anchors if self.anchors is not None else default, error=BuildError)

    def repo_id_for(self, name: str) -> str:
        """The Hub repository shown in the card: ``repo_id``, else ``tinyBenchmarks/<name>``, checked."""
        return check_repo_id(self.repo_id or f"tinyBenchmarks/{name}", "the repository id")

    def tag_for(self) -> str:
        return self.tag or f"v{self.version}"
