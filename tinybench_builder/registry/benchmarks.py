"""The registry: one place that knows every tiny benchmark.

Each :class:`BenchmarkSpec` says where the tiny dataset lives on the Hub, its configs
and splits, its columns, how ``input_formatted`` is rendered (:mod:`tinybench_builder.registry.prompts`),
which upstream dataset gives the content, which source task/metric the readers use,
its licence and citation. Adding a benchmark (a Leaderboard v2 set, a user's own) is
adding an entry here; no other module branches on benchmark names.

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

import dataclasses
from dataclasses import dataclass, field

from tinybench_builder.layout import name_problem
from tinybench_builder.params import ANCHORS
from tinybench_builder.registry.citations import (
    ALPACA_EVAL_BIBTEX, ARC_BIBTEX, GSM8K_BIBTEX, HELLASWAG_BIBTEX, HELM_BIBTEX, MMLU_BIBTEX, OPEN_LLM_LEADERBOARD_BIBTEX,
    TRUTHFULQA_BIBTEX, WINOGRANDE_BIBTEX,
)
from tinybench_builder.registry.citations import POLO2024_BIBTEX  # noqa: F401 - kept importable from here (it lived here)

#: Hub ``size_categories`` buckets (upper bound exclusive)
SIZE_CATEGORIES = (
    (1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
)


def size_category(n: int) -> str:
    """The Hub ``size_categories`` value for a dataset of ``n`` rows."""
    for bound, name in SIZE_CATEGORIES:
        if n < bound:
            return name
    return "n>10M"


@dataclass(frozen=True)
class ConfigSpec:
    """One Hub config of a tiny dataset (e.g. tinyMMLU's ``all``).

    Attributes
    ----------
    name : str
        Config name on the Hub (``all``, ``ARC-Challenge``, ``default``...).
    scenario : str
        Scenario name inside the estimator (one per config; a bundle has several).
    tiny_split : str
        Split holding the k anchors, in ``TinyEstimator.anchor_ids`` order.
    full_splits : tuple of str
        Other splits carried in full (few-shot examples), e.g. ``("dev",)``.
    columns : tuple of str
        Columns of every split, in order (``input_formatted`` last when rendered). Empty for a
        custom benchmark (``content_from="local"``) that keeps every content column, its item id
        column first: the build fills them in from the content.
    upstream : str
        Default upstream Hub dataset id for the content (``cais/mmlu``...); empty when the
        content comes from the evaluation source itself (``content_from="source"``).
    upstream_config : str or None
        Config of the upstream dataset.
    upstream_splits : dict
        Our split name -> the upstream split it comes from (``{"test": "test", "dev": "dev"}``).
    source_task : str
        Task name the readers (``tinybench-builder ingest --task``) use for the responses.
    metric : str
        Per-example metric the responses hold (acc, acc_norm, mc2, exact_match, preference...).
    renderer : str or None
        Name of the ``input_formatted`` renderer in :mod:`tinybench_builder.registry.prompts` (None: no column;
        ``"template"``: the jinja2 ``prompt_template`` of a custom benchmark).
    harness_task : str or None
        lm-evaluation-harness task name whose logs ``tinybench-builder estimate`` reads.
    harness_metric : str or None
        Per-sample metric key in those logs (``acc_norm`` for tinyArc...).
    harness_config : mapping or None
        A custom benchmark's lm-evaluation-harness task settings (``output_type``, ``doc_to_text``,
        ``doc_to_choice``, ``doc_to_target``, ``until``; :mod:`tinybench_builder.registry.specs`). Registered
        benchmarks' tasks are written from their renderer (:mod:`tinybench_builder.dataset.harness_tasks`).
    harness_metric_alternatives : tuple of str
        Metrics read, in order, when the logs lack ``harness_metric`` (lm-eval logs only the
        metrics a task lists: its tinyMMLU/tinyWinogrande tasks listed ``acc_norm``, their later
        versions ``acc`` only). tinyMMLU's ``acc`` equals ``acc_norm`` (one-letter choices);
        tinyWinogrande's is the leaderboard's own metric (lm-eval's ``acc_norm`` divides by the
        lengths of the two partial contexts).
    num_fewshot : int
        In-context examples in ``input_formatted`` (0: none).
    fewshot_split : str or None
        Split (one of ``full_splits``) the examples are drawn from.
    fewshot_sampler : str
        Sampler of the tiny split: ``first_n`` or ``harness_v1`` (:data:`tinybench_builder.registry.prompts.SAMPLERS`).
    fewshot_seed : int
        Seed of the ``harness_v1`` sampler (the v0.3 harness used 42).
    full_split_sampler : str
        Sampler of the full splits: ``fixed`` (the same shots for every row) or ``first_n``
        (:data:`tinybench_builder.registry.prompts.FULL_SPLIT_SAMPLERS`), as the published datasets rendered them.
    full_split_seed : int
        Seed of the ``fixed`` sampler (lm-evaluation-harness 0.4's 1234).
    fewshot_group : str or None
        Column whose value a row and its shots share (MMLU: ``subject``).
    eval_size : int or None
        Rows of the full upstream split the anchors are drawn from (14042 for MMLU ``test``);
        ``harness_v1`` sampling needs it.
    split_sizes : dict
        Expected row counts of the ``full_splits``.
    class_labels : dict
        Column -> ClassLabel names (tinyMMLU's ``answer``: A-D), for the dataset features.
    content_from : str
        ``upstream`` (rows of the upstream Hub dataset), ``source`` (the item content the
        reader gives, e.g. HELM ``instances.json``) or ``local`` (content given with
        ``--content``, no upstream default: custom benchmarks).
    item_id_column : str
        Content column holding the response matrix's item ids (``item_id`` in ``../shared/data``).
    prompt_template : str or None
        jinja2 template of ``input_formatted`` when ``renderer == "template"``.
    license : str or None
        Licence of this config's source when a benchmark mixes sources (bundles); None: the
        benchmark's licence.
    original_scenario : str or None
        Key of this scenario in the original ``tinyBenchmarks.evaluate`` output.
    legacy_scenarios : tuple of str
        Other names the scenario had in original material (tutorial pickles).
    subscenario_weighting : {"equal", "size", "chance"}
        How the config's full score (what the estimator estimates) weighs its subscenarios:
        ``equal``, every subscenario counts the same (MMLU's subjects, as the original
        tinyBenchmarks); ``size``, every item counts the same (lm-eval's ``weight_by_size``
        groups: the Open LLM Leaderboard v2's MATH-hard and GPQA); ``chance``, subscenario ``k``
        weighs ``1 / (1 - chance[k])``, the weight of its accuracy in the leaderboard's mean of
        normalised subtask scores (BBH, MuSR; :mod:`tinybench_builder.registry.leaderboard_v2`).
    chance : float or dict or None
        The leaderboard's random baseline (the lower bound of its normalisation) for the config,
        or per subscenario; None: the leaderboard reports no normalised score.
    """

    name: str
    scenario: str
    tiny_split: str
    full_splits: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    upstream: str = ""
    upstream_config: str | None = None
    upstream_splits: dict = field(default_factory=dict)
    source_task: str = ""
    metric: str = "acc"
    renderer: str | None = None
    harness_task: str | None = None
    harness_metric: str | None = None
    harness_metric_alternatives: tuple[str, ...] = ()
    harness_config: dict | None = None
    num_fewshot: int = 0
    fewshot_split: str | None = None
    fewshot_sampler: str = "first_n"
    fewshot_seed: int = 42
    full_split_sampler: str = "fixed"
    full_split_seed: int = 1234
    fewshot_group: str | None = None
    eval_size: int | None = None
    split_sizes: dict = field(default_factory=dict)
    class_labels: dict = field(default_factory=dict)
    content_from: str = "upstream"
    item_id_column: str = "item_id"
    prompt_template: str | None = None
    license: str | None = None
    original_scenario: str | None = None
    legacy_scenarios: tuple[str, ...] = ()
    subscenario_weighting: str = "equal"
    chance: float | dict | None = None

    @property
    def splits(self) -> tuple[str, ...]:
        """All splits: the tiny split first, then the full ones."""
        return (self.tiny_split, *self.full_splits)


@dataclass(frozen=True)
class BenchmarkSpec:
    """A tiny benchmark: one Hub dataset repository.

    Attributes
    ----------
    name : str
        Registry key and repository name (``tinyMMLU``).
    pretty_name : str
    configs : tuple of ConfigSpec
    license : str
        Licence of the source benchmark (Hub licence id, e.g. ``mit``, ``apache-2.0``;
        ``other`` for bundles of differently licensed sources, see ``license_notes``).
    task_categories : tuple of str
        Hub task categories.
    source_citation : str
        BibTeX of the source benchmark(s).
    description : str
        One paragraph for the card.
    anchors : int
        Default number of anchors per config.
    joint : bool
        True for a bundle fitted with one theta across its configs (tinyOpenLLMLeaderboard).
    task_ids : tuple of str
        Hub task ids (``multiple-choice-qa``...).
    license_notes : str
        Per-source licence details for the card (bundles, ``other``).
    original_bench : str or None
        The ``bench`` argument of the original ``tinyBenchmarks.evaluate(y, bench)``.
    custom : mapping or None
        For a benchmark described by a spec file (:mod:`tinybench_builder.registry.specs`), the file's checked keys;
        the manifest keeps them so a built folder describes its own benchmark.
    """

    name: str
    pretty_name: str
    configs: tuple[ConfigSpec, ...]
    license: str
    task_categories: tuple[str, ...]
    source_citation: str
    description: str = ""
    anchors: int = 100
    joint: bool = False
    task_ids: tuple[str, ...] = ()
    license_notes: str = ""
    original_bench: str | None = None
    custom: dict | None = None

    def config(self, name: str) -> ConfigSpec:
        for c in self.configs:
            if c.name == name:
                return c
        raise KeyError(f"{self.name} has no config {name!r} (configs: {[c.name for c in self.configs]})")

    def scenario_config(self, scenario: str) -> ConfigSpec:
        """The config whose ``scenario`` (or ``original_scenario``/legacy name) is ``scenario``."""
        for c in self.configs:
            if scenario in (c.scenario, c.original_scenario, *c.legacy_scenarios):
                return c
        raise KeyError(f"{self.name} has no scenario {scenario!r} (scenarios: {self.scenarios})")

    @property
    def scenarios(self) -> list[str]:
        return [c.scenario for c in self.configs]

    @property
    def original_scenarios(self) -> dict[str, str | None]:
        """Our scenario -> its key in the original ``evaluate`` output."""
        return {c.scenario: c.original_scenario for c in self.configs}

    @property
    def num_rows(self) -> int:
        """Expected rows over all configs and splits (tiny splits hold ``anchors`` rows)."""
        return sum(self.anchors + sum(c.split_sizes.get(s, 0) for s in c.full_splits) for c in self.configs)

    @property
    def size_category(self) -> str:
        return size_category(self.num_rows)

    @property
    def source_datasets(self) -> tuple[str, ...]:
        """Upstream Hub datasets, in config order, without repeats."""
        return tuple(dict.fromkeys(c.upstream for c in self.configs if c.upstream))


REGISTRY: dict[str, BenchmarkSpec] = {}


def register(spec: BenchmarkSpec) -> BenchmarkSpec:
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


_SAMPLERS = ("first_n", "harness_v1")
_FULL_SPLIT_SAMPLERS = ("first_n", "fixed")
_CONTENT_FROM = ("upstream", "source", "local")
_WEIGHTINGS = ("equal", "size", "chance")


def validate_spec(spec: BenchmarkSpec) -> list[str]:
    """Consistency problems of an entry (empty list: fine); the tests check its renderer names."""
    out: list[str] = []
    if not spec.configs:
        out.append("no configs")
    out.extend(filter(None, [ANCHORS.problem(spec.anchors)]))
    if len(spec.configs) > 1 and not spec.joint:
        out.append("several configs but joint=False")
    for what, values in (("config names", [c.name for c in spec.configs]),
                         ("scenario names", [c.scenario for c in spec.configs]),
                         ("original scenario keys", [c.original_scenario for c in spec.configs if c.original_scenario])):
        dup = sorted({v for v in values if values.count(v) > 1})
        if dup:
            out.append(f"duplicate {what}: {dup}")
    for c in spec.configs:
        where = f"config {c.name!r:.120}"
        out.extend(filter(None, [name_problem(c.name, "config name"), name_problem(c.harness_task or "x", "task name"),
                                 *(name_problem(s, f"{where}: split", True) for s in (c.tiny_split, *c.full_splits))]))
        if c.tiny_split in c.full_splits:
            out.append(f"{where}: tiny split {c.tiny_split!r} also listed in full_splits")
        if len(set(c.full_splits)) != len(c.full_splits):
            out.append(f"{where}: repeated full split")
        resolved = bool(c.columns)  # a custom benchmark's (content_from="local") come from the content
        if len(set(c.columns)) != len(c.columns) or not (resolved or c.content_from == "local"):
            out.append(f"{where}: columns empty or repeated")
        if resolved and (c.renderer is not None) != ("input_formatted" in c.columns):
            out.append(f"{where}: input_formatted column and renderer must come together")
        if resolved and c.renderer is not None and c.columns[-1] != "input_formatted":
            out.append(f"{where}: input_formatted must be the last column")
        if c.num_fewshot < 0:
            out.append(f"{where}: num_fewshot < 0")
        if c.num_fewshot > 0 and c.fewshot_split not in c.full_splits:
            out.append(f"{where}: few-shot split {c.fewshot_split!r} is not a full split")
        if c.fewshot_sampler not in _SAMPLERS:
            out.append(f"{where}: unknown few-shot sampler {c.fewshot_sampler!r}")
        if c.full_split_sampler not in _FULL_SPLIT_SAMPLERS:
            out.append(f"{where}: unknown full-split sampler {c.full_split_sampler!r}")
        if (c.renderer == "template") != bool(c.prompt_template):
            out.append(f"{where}: a prompt template goes with renderer 'template'")
        if c.renderer == "template" and c.num_fewshot:
            out.append(f"{where}: a prompt template holds its own examples (num_fewshot must be 0)")
        if c.fewshot_group and c.fewshot_group not in c.columns:
            out.append(f"{where}: few-shot group column {c.fewshot_group!r} not in columns")
        if c.content_from not in _CONTENT_FROM:
            out.append(f"{where}: content_from must be one of {_CONTENT_FROM}")
        if c.content_from == "upstream":
            if not c.upstream:
                out.append(f"{where}: upstream dataset missing")
            missing = [s for s in c.splits if s not in c.upstream_splits]
            if missing:
                out.append(f"{where}: no upstream split for {missing}")
        extra = [s for s in c.upstream_splits if s not in c.splits]
        if extra:
            out.append(f"{where}: upstream_splits for unknown splits {extra}")
        extra = [s for s in c.split_sizes if s not in c.full_splits]
        if extra:
            out.append(f"{where}: split_sizes for non-full splits {extra}")
        bad = [k for k in c.class_labels if k not in c.columns]
        if bad:
            out.append(f"{where}: class_labels for unknown columns {bad}")
        if not c.source_task or not c.metric:
            out.append(f"{where}: source_task and metric are required")
        if c.harness_task and not c.harness_metric:
            out.append(f"{where}: harness_task without harness_metric")
        if not c.item_id_column:
            out.append(f"{where}: item_id_column is empty")
        if c.eval_size is not None and c.eval_size < spec.anchors:
            out.append(f"{where}: eval_size {c.eval_size} < anchors {spec.anchors}")
        if c.subscenario_weighting not in _WEIGHTINGS:
            out.append(f"{where}: subscenario_weighting must be one of {_WEIGHTINGS}")
        chances = list(c.chance.values()) if isinstance(c.chance, dict) else [] if c.chance is None else [c.chance]
        if not all(isinstance(x, (int, float)) and 0 <= x < 1 for x in chances):
            out.append(f"{where}: chance values must be in [0, 1)")
        if c.subscenario_weighting == "chance" and not isinstance(c.chance, dict):
            out.append(f"{where}: subscenario_weighting 'chance' needs a chance per subscenario")
    return out


# -------------------------------------------- Open LLM Leaderboard (v1) configs
# Source task/metric: the leaderboard v1 details reader (tinybench_builder.read.sources.open_llm_leaderboard
# V1_TASKS: arc|hellaswag|mmlu|truthfulqa|winogrande|gsm8k and the leaderboard's headline
# metric). Harness task/metric: lm-eval ``lm_eval/tasks/tinyBenchmarks/*.yaml``.
MMLU_CONFIG = ConfigSpec(
    name="all", scenario="mmlu", tiny_split="test", full_splits=("dev",),
    columns=("question", "subject", "choices", "answer", "input_formatted"),
    upstream="cais/mmlu", upstream_config="all", upstream_splits={"test": "test", "dev": "dev"},
    source_task="mmlu", metric="acc",
    renderer="mmlu", harness_task="tinyMMLU", harness_metric="acc_norm", harness_metric_alternatives=("acc",),
    num_fewshot=5, fewshot_split="dev", fewshot_sampler="first_n", full_split_sampler="first_n",
    fewshot_group="subject",
    eval_size=14042, split_sizes={"dev": 285}, class_labels={"answer": ("A", "B", "C", "D")},
    license="mit", original_scenario="mmlu",
)

ARC_CONFIG = ConfigSpec(
    name="ARC-Challenge", scenario="arc", tiny_split="test", full_splits=("train", "validation"),
    columns=("id", "question", "choices", "answerKey", "input_formatted"),
    upstream="allenai/ai2_arc", upstream_config="ARC-Challenge",
    upstream_splits={"test": "test", "train": "train", "validation": "validation"},
    source_task="arc", metric="acc_norm",
    renderer="arc", harness_task="tinyArc", harness_metric="acc_norm",
    num_fewshot=25, fewshot_split="train", fewshot_sampler="harness_v1",
    eval_size=1172, split_sizes={"train": 1119, "validation": 299},
    license="cc-by-sa-4.0", original_scenario="arc",
)

HELLASWAG_CONFIG = ConfigSpec(
    name="default", scenario="hellaswag", tiny_split="validation", full_splits=("train", "test"),
    columns=("ind", "activity_label", "ctx_a", "ctx_b", "ctx", "endings", "source_id", "split",
             "split_type", "label", "input_formatted"),
    upstream="Rowan/hellaswag", upstream_config=None,
    upstream_splits={"validation": "validation", "train": "train", "test": "test"},
    source_task="hellaswag", metric="acc_norm",
    renderer="hellaswag", harness_task="tinyHellaswag", harness_metric="acc_norm",
    num_fewshot=10, fewshot_split="train", fewshot_sampler="harness_v1",
    eval_size=10042, split_sizes={"train": 39905, "test": 10003},
    license="mit", original_scenario="hellaswag",
)

WINOGRANDE_CONFIG = ConfigSpec(
    name="winogrande_xl", scenario="winogrande", tiny_split="validation", full_splits=("train", "test"),
    columns=("sentence", "option1", "option2", "answer", "input_formatted"),
    upstream="allenai/winogrande", upstream_config="winogrande_xl",
    upstream_splits={"validation": "validation", "train": "train", "test": "test"},
    source_task="winogrande", metric="acc",
    renderer="winogrande", harness_task="tinyWinogrande", harness_metric="acc_norm",
    harness_metric_alternatives=("acc",),
    num_fewshot=5, fewshot_split="train", fewshot_sampler="harness_v1",
    eval_size=1267, split_sizes={"train": 40398, "test": 1767},
    license="cc-by-2.0", original_scenario="winogrande",
)

TRUTHFULQA_CONFIG = ConfigSpec(
    name="multiple_choice", scenario="truthfulqa", tiny_split="validation",
    columns=("question", "mc1_targets", "mc2_targets", "input_formatted"),
    upstream="truthfulqa/truthful_qa", upstream_config="multiple_choice",
    upstream_splits={"validation": "validation"},
    source_task="truthfulqa", metric="mc2",
    renderer="truthfulqa", harness_task="tinyTruthfulQA", harness_metric="acc",
    num_fewshot=0, eval_size=817,
    license="apache-2.0", original_scenario="truthfulqa", legacy_scenarios=("harness_truthfulqa_mc_0",),
)

GSM8K_CONFIG = ConfigSpec(
    name="main", scenario="gsm8k", tiny_split="test", full_splits=("train",),
    columns=("question", "answer", "input_formatted"),
    upstream="openai/gsm8k", upstream_config="main", upstream_splits={"test": "test", "train": "train"},
    source_task="gsm8k", metric="acc",
    renderer="gsm8k", harness_task="tinyGSM8k", harness_metric="exact_match",
    num_fewshot=5, fewshot_split="train", fewshot_sampler="harness_v1",
    eval_size=1319, split_sizes={"train": 7473},
    license="mit", original_scenario="gsm8k",
)

#: the leaderboard configs in the original ``'lb'`` order (truthfulqa, gsm8k, winogrande, arc, hellaswag, mmlu)
LEADERBOARD_CONFIGS = (TRUTHFULQA_CONFIG, GSM8K_CONFIG, WINOGRANDE_CONFIG, ARC_CONFIG, HELLASWAG_CONFIG, MMLU_CONFIG)

_TINY_CARD = ("{n} {what} chosen with IRT (anchor points) so that a model's score on them, with the "
              "tinyBenchmarks estimators, estimates its score on all {total} of {bench}. "
              "`input_formatted` holds the Open LLM Leaderboard (lm-evaluation-harness v0.3) prompt{shots}.")


# --------------------------------------------------------------------- entries
register(BenchmarkSpec(
    name="tinyMMLU", pretty_name="tinyMMLU", configs=(MMLU_CONFIG,),
    license="mit", task_categories=("question-answering",), task_ids=("multiple-choice-qa",),
    source_citation=MMLU_BIBTEX, original_bench="mmlu",
    description=_TINY_CARD.format(n=100, what="MMLU test questions", total="14,042", bench="MMLU",
                                  shots=" with the subject's first five `dev` questions as examples "
                                        "(the `dev` split, 285 rows, is included)"),
))

register(BenchmarkSpec(
    name="tinyAI2_arc", pretty_name="tinyArc", configs=(ARC_CONFIG,),
    license="cc-by-sa-4.0", task_categories=("question-answering",),
    task_ids=("open-domain-qa", "multiple-choice-qa"),
    source_citation=ARC_BIBTEX, original_bench="arc",
    description=_TINY_CARD.format(n=100, what="ARC-Challenge test questions", total="1,172", bench="ARC-Challenge",
                                  shots=" with 25 examples drawn from `train` (harness seed 42)"),
))

register(BenchmarkSpec(
    name="tinyHellaswag", pretty_name="tinyHellaswag", configs=(HELLASWAG_CONFIG,),
    license="mit", task_categories=("multiple-choice",), task_ids=("multiple-choice-qa",),
    source_citation=HELLASWAG_BIBTEX, original_bench="hellaswag",
    description=_TINY_CARD.format(n=100, what="HellaSwag validation contexts", total="10,042", bench="HellaSwag",
                                  shots=" with 10 examples drawn from `train` (harness seed 42)"),
))

register(BenchmarkSpec(
    name="tinyWinogrande", pretty_name="tinyWinogrande", configs=(WINOGRANDE_CONFIG,),
    license="cc-by-2.0", task_categories=("multiple-choice",), task_ids=("multiple-choice-qa",),
    source_citation=WINOGRANDE_BIBTEX, original_bench="winogrande",
    description=_TINY_CARD.format(n=100, what="Winogrande (XL) validation sentences", total="1,267",
                                  bench="Winogrande",
                                  shots=" for partial evaluation: 5 `train` examples with the correct option "
                                        "filled in, then the sentence up to the blank and the correct option "
                                        "(replace that option by each option to score it)"),
))

register(BenchmarkSpec(
    name="tinyTruthfulQA", pretty_name="tinyTruthfulQA", configs=(TRUTHFULQA_CONFIG,),
    license="apache-2.0", task_categories=("multiple-choice", "text-generation", "question-answering"),
    task_ids=("multiple-choice-qa", "language-modeling", "open-domain-qa"),
    source_citation=TRUTHFULQA_BIBTEX, original_bench="truthfulqa",
    description=_TINY_CARD.format(n=100, what="TruthfulQA multiple-choice questions", total="817",
                                  bench="TruthfulQA", shots=" (zero-shot, after the fixed six-question QA preamble)"),
))

register(BenchmarkSpec(
    name="tinyGSM8k", pretty_name="tinyGSM8k", configs=(GSM8K_CONFIG,),
    license="mit", task_categories=("text-generation",), task_ids=(),
    source_citation=GSM8K_BIBTEX, original_bench="gsm8k",
    description=_TINY_CARD.format(n=100, what="GSM8K test problems", total="1,319", bench="GSM8K",
                                  shots=" with 5 worked examples drawn from `train` (harness seed 42)"),
))

register(BenchmarkSpec(
    name="tinyAlpacaEval",
    pretty_name="tinyAlpacaEval",
    configs=(ConfigSpec(
        name="default", scenario="alpaca_eval", tiny_split="test",
        columns=("instruction", "output", "generator", "dataset"),
        upstream="tatsu-lab/alpaca_eval", upstream_config="alpaca_eval_gpt4_baseline",
        upstream_splits={"test": "eval"},
        source_task="weighted_alpaca_eval_gpt4_turbo", metric="preference",
        eval_size=805, original_scenario="alpaca_v2",
    ),),
    license="cc-by-nc-4.0",
    task_categories=("text-generation",),
    source_citation=ALPACA_EVAL_BIBTEX,
    original_bench="alpaca",
    description="100 AlpacaEval 2.0 instructions chosen so that a model's win rate against the "
                "GPT-4 Turbo reference on them estimates its win rate on all 805.",
))


# ------------------------------------------------------------------ HELM Lite
# Run groups and main metrics: tinybench_builder.read.sources.helm.LITE_MAIN (schema_lite.yaml). Configs in the
# original 'helm_lite' order (efficbench utils.py::helm_lite_scenarios). Content comes from the
# runs' instances.json through the HELM reader (columns as it gives them), not from a Hub dataset.
_HELM_COLUMNS = ("instance_id", "subscenario", "question", "references", "answer")


def _helm(group: str, metric: str, original: str, license: str) -> ConfigSpec:
    return ConfigSpec(name=group, scenario=group, tiny_split="test", columns=_HELM_COLUMNS,
                      source_task=group, metric=metric, content_from="source",
                      license=license, original_scenario=original)


HELM_CONFIGS = (
    _helm("openbookqa", "exact_match", "commonsense:dataset=openbookqa,method=multiple_choice_joint,", "apache-2.0"),
    _helm("gsm", "final_number_exact_match", "gsm:", "mit"),
    _helm("med_qa", "quasi_exact_match", "med_qa:", "other"),
    _helm("legalbench", "quasi_exact_match", "legalbench", "other"),
    _helm("math_chain_of_thought", "math_equiv_chain_of_thought", "math", "mit"),
    _helm("mmlu", "exact_match", "mmlu", "mit"),
    _helm("narrative_qa", "f1_score", "narrative_qa:", "apache-2.0"),
    _helm("natural_qa_closedbook", "f1_score", "natural_qa:mode=closedbook,", "cc-by-sa-3.0"),
    _helm("natural_qa_openbook_longans", "f1_score", "natural_qa:mode=openbook_longans,", "cc-by-sa-3.0"),
    _helm("wmt_14", "bleu_4", "wmt_14", "other"),
)

register(BenchmarkSpec(
    name="tinyHELM", pretty_name="tinyHELM (HELM Lite)", configs=HELM_CONFIGS, joint=True,
    license="other",
    license_notes=(
        "Each config keeps the licence of its source: OpenbookQA Apache-2.0; GSM8K MIT; MedQA "
        "(jind11/MedQA; licence as stated there); LegalBench subsets (abercrombie, corporate_lobbying, "
        "function_of_decision_section, proa, international_citizenship_questions) each under their own "
        "licence, see the LegalBench repository; MATH MIT; MMLU MIT; NarrativeQA Apache-2.0; "
        "NaturalQuestions CC BY-SA 3.0; WMT14 news test sets for research use under the WMT terms. "
        "Instances and prompts as run by HELM (crfm-helm, Apache-2.0)."
    ),
    task_categories=("question-answering", "text-generation", "translation"),
    source_citation=HELM_BIBTEX, original_bench="helm_lite",
    description="100 instances from each HELM Lite scenario of the bundle (ten in all: 1,000 instances), chosen "
                "with one IRT model fitted across the scenarios on the HELM Lite leaderboard's results, so that "
                "a model's HELM Lite scores are estimated from these instances jointly, scenario by scenario. "
                "Content is taken from the HELM run instances (input text, references) when the build reads "
                "the runs; the prompt a model sees depends on the HELM adapter of its run.",
))

register(BenchmarkSpec(
    name="tinyOpenLLMLeaderboard", pretty_name="tinyOpenLLMLeaderboard",
    configs=tuple(dataclasses.replace(c, name=c.scenario) for c in LEADERBOARD_CONFIGS), joint=True,
    license="other",
    license_notes=("Each config keeps the licence of its source: TruthfulQA Apache-2.0; GSM8K MIT; "
                   "Winogrande CC BY 2.0; ARC CC BY-SA 4.0; HellaSwag MIT; MMLU MIT."),
    task_categories=("question-answering", "multiple-choice", "text-generation"),
    task_ids=("multiple-choice-qa", "open-domain-qa"),
    source_citation="\n".join((OPEN_LLM_LEADERBOARD_BIBTEX, TRUTHFULQA_BIBTEX, GSM8K_BIBTEX, WINOGRANDE_BIBTEX,
                               ARC_BIBTEX, HELLASWAG_BIBTEX, MMLU_BIBTEX)),
    original_bench="lb",
    description="The six Open LLM Leaderboard (v1) benchmarks, 100 examples each (600 in all), chosen with "
                "one IRT model fitted across them, so that the whole leaderboard, and each benchmark, is "
                "estimated from one ability shared by all six. `input_formatted` holds the leaderboard's "
                "lm-evaluation-harness prompt with its in-context examples.",
))
