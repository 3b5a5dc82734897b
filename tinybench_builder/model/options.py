"""Typed settings of a fit: :class:`FitOptions` (a frozen dataclass).

:class:`FitOptions` mirrors the keyword parameters of :func:`tinybench_builder.model.fitting.fit_estimator`
that are settings (not ``matrix``, ``n_anchors``, ``seed``, ``scenario_order``, ``progress``, ``keep_design`` or
``metadata``, which a build sets per estimator); ``fit_estimator(matrix, **options.as_kwargs())`` calls it. A
test keeps the fields and defaults in agreement with the signature.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

from tinybench_builder import params
from tinybench_builder.errors import BuildError

__all__ = ["FitOptions", "check_binarize"]


def check_binarize(value: Any) -> bool | float:
    """``binarize`` checked by its one rule (:func:`tinybench_builder.params.check_binarize`), a :class:`BuildError` if broken."""
    return params.check_binarize(value, error=BuildError)


@dataclass(frozen=True)
class FitOptions:
    """Settings of :func:`tinybench_builder.model.fitting.fit_estimator` (its defaults; see its docstring).

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
        # the shared parameters, by their one rule (tinybench_builder/params.py)
        params.DIMS.optional(self.n_dims, error=BuildError)
        params.DESIGN.check(self.design, error=BuildError)
        params.N_SEEDS.check(self.n_seeds, error=BuildError)
        check_binarize(self.binarize)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names, in field order."""
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
