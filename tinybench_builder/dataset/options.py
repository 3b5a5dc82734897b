"""Typed settings of a build: :class:`BuildOptions` (a frozen dataclass holding a :class:`FitOptions`).

::

    options = BuildOptions(anchors=100, seed=0, version="1.0.0", fit=FitOptions(n_dims=1, n_seeds=2))
    build_benchmark("tinyMMLU", responses, content, options, out="build/tinyMMLU")
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from tinybench_builder import params
from tinybench_builder.errors import BuildError
from tinybench_builder.model import FitOptions
from tinybench_builder.hub_requests import bound_hub_requests
from tinybench_builder.params import ITEM_ORDERS

__all__ = ["BuildOptions", "ITEM_ORDERS", "check_repo_id", "hub_id_problem", "own_namespace", "LOCAL_NAMESPACE"]

#: the namespace of a build that names no repository and has no Hub login: a local build, not
#: published (``release --push`` refuses it); never another organisation's namespace
LOCAL_NAMESPACE = "local"


def own_namespace() -> str | None:
    """The Hub namespace of the configured token (``whoami``), or None: no token, ``HF_HUB_OFFLINE``,
    or the Hub does not answer. Never a default organisation: a repository id is given, or yours."""
    import os

    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        return None
    from huggingface_hub import constants, get_token

    token = get_token()
    return _whoami_name(token, constants.ENDPOINT) if token else None


@functools.lru_cache(maxsize=8)
def _whoami_name(token: str, endpoint: str) -> str | None:
    """One ``whoami`` per token and endpoint (a build asks for the namespace more than once)."""
    bound_hub_requests()  # a Hub that never answers: no namespace known, after the bound, not a hang
    try:
        from huggingface_hub import whoami

        name = whoami(token=token).get("name")
    except Exception:  # noqa: BLE001 - no answer, a bad token: no namespace of yours known
        return None
    return name if isinstance(name, str) and name else None



def hub_id_problem(value: Any, what: str, slashes: tuple[int, ...] = (1,)) -> str | None:
    """What the Hub refuses in ``value`` as a repository id (``slashes=(1,)``: ``owner/name``), a
    user or organisation name (``(0,)``) or either (``(0, 1)``), or None.

    huggingface_hub's own validator (``validate_repo_id``: characters, length, no ``--`` or
    ``..``, no trailing ``.git``...) decides, plus a whole-string rule (its pattern lets a
    trailing newline through) and the number of ``/``: the project keeps no regex of its own.
    """
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    if not isinstance(value, str):
        return f"{what} must be text like owner/name, got {type(value).__name__}"
    try:
        validate_repo_id(value)
    except HFValidationError as exc:
        return f"{what} {value!r} is not a valid Hub repository id: {str(exc).split(': ')[0]}"
    if value != value.strip() or any(not ch.isprintable() for ch in value):
        return f"{what} {value!r} is not a valid Hub repository id: spaces or control characters"
    if value.count("/") not in slashes:
        return f"{what} {value!r} must be " + ("owner/name" if slashes == (1,) else "a Hub user or organization name"
                                               if slashes == (0,) else "name or owner/name")
    return None


def check_repo_id(repo_id: Any, what: str = "repo_id") -> str:
    """``repo_id`` if the Hub accepts it as a dataset repository ``owner/name``, else BuildError
    (:func:`hub_id_problem`)."""
    problem = hub_id_problem(repo_id, what)
    if problem:
        raise BuildError(problem)
    return repo_id


@dataclass(frozen=True)
class BuildOptions:
    """Settings of one build (:func:`tinybench_builder.dataset.build.build_benchmark`).

    Parameters
    ----------
    anchors : int, optional
        Anchors per config (a bundle's estimator gets k x its configs). None: the benchmark's.
    seed : int
        Seed of the fit; the same inputs and seed give a byte-identical folder.
    version : str
        Dataset version written to the manifest and the card: ``MAJOR.MINOR.PATCH``
        (:func:`tinybench_builder.params.check_version`; a leading ``v`` is dropped).
    repo_id, tag : str, optional
        Hub repository and release tag shown in the card's usage and the lm-eval task files
        (default: ``<your namespace>/<name>``, the namespace of the configured Hub token, or
        ``local/<name>`` without one: :meth:`repo_id_for`; and ``v<version>``).
    item_order : {"upstream", "harness_v1"}
        How the response item ids index the content: upstream row ids, or row positions in
        the v0.3 harness evaluation order (Open LLM Leaderboard v1 details).
    fit : FitOptions
        Settings of :func:`tinybench_builder.model.fitting.fit_estimator`.
    """

    anchors: int | None = None
    seed: int = 0
    version: str = "0.0.0"
    repo_id: str | None = None
    tag: str | None = None
    item_order: str = "upstream"
    fit: FitOptions = field(default_factory=FitOptions)

    def __post_init__(self) -> None:
        # the shared parameters, by their one rule (tinybench_builder/params.py)
        object.__setattr__(self, "version", params.check_version(self.version, error=BuildError))
        params.ANCHORS.optional(self.anchors, error=BuildError)
        params.ITEM_ORDER.check(self.item_order, error=BuildError)
        params.SEED.check(self.seed, error=BuildError)
        if not isinstance(self.fit, FitOptions):
            raise BuildError(f"fit must be a FitOptions (tinybench_builder.model.options), got {type(self.fit).__name__}")
        if self.repo_id is not None:
            check_repo_id(self.repo_id, "repo_id")
        if self.tag is not None and not (isinstance(self.tag, str) and self.tag.startswith("v")
                                         and params.check_version(self.tag, error=BuildError) == self.tag[1:]):
            raise BuildError(f"tag must look like v1.2.0, got {self.tag!r}")

    def anchors_for(self, default: int) -> int:
        """Anchors per config: the option, else ``default`` (the benchmark's)."""
        return params.ANCHORS.check(self.anchors if self.anchors is not None else default, error=BuildError)

    def repo_id_for(self, name: str) -> str:
        """The Hub repository shown in the card: ``repo_id``, else ``<namespace>/<name>`` with the
        namespace of the configured Hub token (:func:`own_namespace`), else :data:`LOCAL_NAMESPACE`
        (a local build, to publish with ``release``); checked. Never another organisation's."""
        return check_repo_id(self.repo_id or f"{own_namespace() or LOCAL_NAMESPACE}/{name}", "the repository id")

    def tag_for(self) -> str:
        """The release tag of the build (the manifest's ``tag``): ``tag``, else ``v<version>``."""
        return self.tag or f"v{self.version}"
