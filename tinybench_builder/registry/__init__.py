"""Stage 3, registry: what each tiny benchmark is, and your own benchmark's spec file.

:data:`REGISTRY` holds a :class:`BenchmarkSpec` per tiny benchmark (Hub configs, splits, columns,
the harness prompt that renders ``input_formatted``, upstream content, source tasks, metrics,
licence, citation); :mod:`tinybench_builder.registry.prompts` renders the prompts byte for byte as the
harness does (:mod:`tinybench_builder.registry.prompts_v2` the Open LLM Leaderboard v2's, whose entries,
metrics and normalisation are in :mod:`tinybench_builder.registry.leaderboard_v2`); :func:`load_spec_file`
turns a spec file (TOML) into a :class:`BenchmarkSpec`. The registered benchmarks are spec files too,
in the same format (``registry/registered/*.toml``), read by the same loader
(:mod:`tinybench_builder.registry.specs`) when the registry is imported.
"""

from tinybench_builder.registry.benchmarks import (
    POLO2024_BIBTEX, REGISTRY, BenchmarkSpec, ConfigSpec, get_benchmark, get_by_original, size_category,
)
from tinybench_builder.registry.prompts import FULL_SPLIT_RENDERERS, harness_v1_order, render_split
from tinybench_builder.registry.leaderboard_v2 import normalization, subscenario_weights
from tinybench_builder.registry.prompts_v2 import bbh_choices, bbh_subtasks
from tinybench_builder.registry.specs import (
    HARNESS_METRICS, LM_EVAL_TINY_TASKS, SpecError, load_spec_file, registered_names, registered_spec_path,
    spec_from_mapping,
)

__all__ = [
    "REGISTRY", "BenchmarkSpec", "ConfigSpec", "get_benchmark", "get_by_original", "size_category", "POLO2024_BIBTEX",
    "FULL_SPLIT_RENDERERS", "render_split", "harness_v1_order",
    "normalization", "subscenario_weights", "bbh_choices", "bbh_subtasks",
    "SpecError", "load_spec_file", "spec_from_mapping", "registered_names", "registered_spec_path",
    "HARNESS_METRICS", "LM_EVAL_TINY_TASKS",
]
