"""The registry: one place that knows every tiny benchmark.

Each :class:`BenchmarkSpec` says where the tiny dataset lives on the Hub, its configs
and splits, its columns, how ``input_formatted`` is rendered (:mod:`tinybench_builder.registry.prompts`),
which upstream dataset gives the content, which source task/metric the readers use,
its licence and citation. Every entry is a spec file, in the format users write
(:mod:`tinybench_builder.registry.specs`), shipped in ``registry/registered/`` and read when this
module is imported: adding a benchmark is adding a file there (and its name to ``index.toml``);
no module branches on benchmark names.

Entries
-------
=======================  =========================================  ======  ===================
benchmark                configs (scenario)                         joint   original ``bench``
=======================  =========================================  ======  ===================
tinyMMLU                 all (mmlu)                                 no      ``mmlu``
tinyAI2_arc              ARC-Challenge (arc)                        no      ``arc``
tinyHellaswag            default (hellaswag)                        no      ``hellaswag``
tinyWinogrande           winogrande_xl (winogrande)                 no      ``winogrande``
tinyTruthfulQA           multiple_choice (truthfulqa)               no      ``truthfulqa``
tinyGSM8k                main (gsm8k)                               no      ``gsm8k``
tinyAlpacaEval           default (alpaca_eval)                      no      ``alpaca``
tinyHELM                 10 HELM Lite run groups                    yes     ``helm_lite``
tinyOpenLLMLeaderboard   truthfulqa, gsm8k, winogrande, arc,        yes     ``lb``
                         hellaswag, mmlu
=======================  =========================================  ======  ===================

Original tinyBenchmarks mapping
-------------------------------
The original package's ``tinyBenchmarks.evaluate(y, bench)`` (felipemaiapolo/tinyBenchmarks,
``tinyBenchmarks/__init__.py``) accepts ``bench`` in ``['lb', 'mmlu', 'helm_lite', 'alpaca']``
plus the single leaderboard scenarios ``['truthfulqa', 'gsm8k', 'winogrande', 'arc',
'hellaswag']`` and returns ``{scenario_key: {'irt', 'pirt', 'gpirt'}}``.
:attr:`BenchmarkSpec.original_bench` is that ``bench`` value and
:attr:`ConfigSpec.original_scenario` the ``scenario_key`` of the output. Notes for a faithful
``evaluate``:

* The single leaderboard scenarios are **not** separate IRT models: they use the ``'lb'`` model
  (and its anchors ``seen_examples[100*k : 100*(k+1)]``, k = the scenario's position in the
  ``'lb'`` ``scenarios_position`` keys) and return only their own key. ``'mmlu'`` is a separate
  model fitted on MMLU alone (tinyMMLU); the ``'lb'`` bundle has its own ``'mmlu'`` scenario.
* The released ``tinyBenchmarks.pkl`` ``'lb'`` keys are, in order, ``truthfulqa, gsm8k,
  winogrande, arc, hellaswag, mmlu`` (output shown in felipemaiapolo/efficbench
  ``tinyBenchmarks.ipynb``; lm-eval's ``tinyBenchmarks/agg_functions.py`` and lighteval's
  ``tiny_benchmarks.py`` call ``evaluate(y, 'truthfulqa')`` and read ``['truthfulqa']``). The
  tutorial pickles and the early README used ``harness_truthfulqa_mc_0`` for the first key
  (kept as :attr:`ConfigSpec.legacy_scenarios`).
* ``'helm_lite'`` keys (efficbench ``utils.py::helm_lite_scenarios``, in ``y`` order):
  ``commonsense:dataset=openbookqa,method=multiple_choice_joint,``, ``gsm:``, ``med_qa:``,
  ``legalbench``, ``math``, ``mmlu``, ``narrative_qa:``, ``natural_qa:mode=closedbook,``,
  ``natural_qa:mode=openbook_longans,``, ``wmt_14``. ``'alpaca'`` has the one key ``alpaca_v2``.
* Configs of a bundle are listed in the original ``y`` order, so the concatenation of the
  configs' tiny splits is the original input vector (600 for ``lb``, 1000 for ``helm_lite``).
"""

from __future__ import annotations

from tinybench_builder.registry.citations import POLO2024_BIBTEX  # noqa: F401 - kept importable from here (it lived here)
from tinybench_builder.registry.entries import (  # noqa: F401 - the entry types, importable from here (they lived here)
    SIZE_CATEGORIES, BenchmarkSpec, ConfigSpec, size_category, validate_spec,
)
from tinybench_builder.registry.specs import load_registered

__all__ = ["REGISTRY", "BenchmarkSpec", "ConfigSpec", "register", "get_benchmark", "list_benchmarks",
           "get_by_original", "validate_spec", "size_category", "LEADERBOARD_CONFIGS", "HELM_CONFIGS"]

REGISTRY: dict[str, BenchmarkSpec] = {}


def register(spec: BenchmarkSpec) -> BenchmarkSpec:
    """Add ``spec`` to :data:`REGISTRY` (ValueError if its name is taken or it is inconsistent)."""
    if spec.name in REGISTRY:
        raise ValueError(f"benchmark {spec.name!r} is already registered")
    problems = validate_spec(spec)
    if problems:
        raise ValueError(f"benchmark {spec.name!r} is inconsistent: " + "; ".join(problems))
    REGISTRY[spec.name] = spec
    return spec


def get_benchmark(name: str) -> BenchmarkSpec:
    """The registered benchmark ``name`` (ValueError listing the known ones otherwise)."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown tiny benchmark {name!r}; known: {', '.join(sorted(REGISTRY))}") from None


def list_benchmarks() -> list[str]:
    """Names of the registered benchmarks, in registration order."""
    return list(REGISTRY)


def get_by_original(bench: str) -> BenchmarkSpec:
    """The benchmark the original ``tinyBenchmarks.evaluate(y, bench)`` call corresponds to."""
    for spec in REGISTRY.values():
        if spec.original_bench == bench:
            return spec
    known = sorted(s.original_bench for s in REGISTRY.values() if s.original_bench)
    raise ValueError(f"no tiny benchmark for original bench {bench!r}; known: {', '.join(known)}")


for _spec in load_registered():  # the spec files of registry/registered/, in index.toml's order
    register(_spec)

# the configs by their old names (they were Python literals here)
MMLU_CONFIG = REGISTRY["tinyMMLU"].configs[0]
ARC_CONFIG = REGISTRY["tinyAI2_arc"].configs[0]
HELLASWAG_CONFIG = REGISTRY["tinyHellaswag"].configs[0]
WINOGRANDE_CONFIG = REGISTRY["tinyWinogrande"].configs[0]
TRUTHFULQA_CONFIG = REGISTRY["tinyTruthfulQA"].configs[0]
GSM8K_CONFIG = REGISTRY["tinyGSM8k"].configs[0]
#: the leaderboard configs in the original ``'lb'`` order (truthfulqa, gsm8k, winogrande, arc, hellaswag, mmlu)
LEADERBOARD_CONFIGS = (TRUTHFULQA_CONFIG, GSM8K_CONFIG, WINOGRANDE_CONFIG, ARC_CONFIG, HELLASWAG_CONFIG, MMLU_CONFIG)
#: tinyHELM's configs, in the original ``'helm_lite'`` order
HELM_CONFIGS = REGISTRY["tinyHELM"].configs
