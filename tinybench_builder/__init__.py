"""Build, estimate and publish tiny versions of LLM benchmarks.

Data flows one way, one folder of the package per stage::

    read/      evaluation outputs      -> ResponseMatrix (models x items)
    model/     ResponseMatrix          -> IRT fit, anchors, regression, calibration (TinyEstimator)
    registry/  what each tiny benchmark is (configs, prompts), your own spec files
    dataset/   responses + content     -> a Hub-ready tiny dataset folder (data, side files, card)
    release/   a release config        -> validated folders, one commit + tag per Hub repository
    estimate/  score tables, lm-eval logs of a tiny task -> estimated full scores

over a small kernel that every stage may use: ``estimator.py`` and ``adaptive.py`` (standalone,
uploaded next to the data: the estimator and its adaptive-evaluation session), ``layout.py`` (the folder format), ``files.py`` (atomic outputs) and ``errors.py``.
``cli/`` is the command line; the benchmark scripts are outside the package (``benchmarks/``).

The names below are the public API; each is loaded on first use, so ``import tinybench_builder`` (and
``from tinybench_builder.estimator import TinyEstimator``) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: public name -> the module that defines it
_API = {
    "TinybenchError": "tinybench_builder.errors",
    "BuildError": "tinybench_builder.errors",
    "TinyEstimator": "tinybench_builder.estimator",
    "AdaptiveSession": "tinybench_builder.adaptive",
    "ResponseMatrix": "tinybench_builder.read",
    "ingest": "tinybench_builder.read",
    "simulate_responses": "tinybench_builder.read",
    "fit_estimator": "tinybench_builder.model",
    "FitOptions": "tinybench_builder.model",
    "REGISTRY": "tinybench_builder.registry",
    "get_benchmark": "tinybench_builder.registry",
    "load_spec_file": "tinybench_builder.registry",
    "BuildOptions": "tinybench_builder.dataset",
    "build_benchmark": "tinybench_builder.dataset",
    "import_original": "tinybench_builder.dataset",
    "load_config": "tinybench_builder.release",
    "run_release": "tinybench_builder.release",
    "estimate_table": "tinybench_builder.estimate",
    "estimate_from_logs": "tinybench_builder.estimate",
    "run_adaptive": "tinybench_builder.estimate",
}

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    """Load a public name on first use (PEP 562)."""
    if name in _API:
        value = getattr(importlib.import_module(_API[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tinybench_builder' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
