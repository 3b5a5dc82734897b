"""What a registry entry is: :class:`BenchmarkSpec` (a tiny dataset) and its :class:`ConfigSpec` s.

The spec files (:mod:`tinybench_builder.registry.specs`: the registered benchmarks' files under
``registry/registered/`` and a user's own) are read into these frozen dataclasses; the rest of
the package reads only them. :func:`validate_spec` is the consistency check every entry passes,
whoever wrote it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tinybench_builder.layout import name_problem
from tinybench_builder.params import ANCHORS

__all__ = ["ConfigSpec", "BenchmarkSpec", "validate_spec", "size_category", "SIZE_CATEGORIES", "SAMPLERS",
           "FULL_SPLIT_SAMPLERS", "CONTENT_FROM", "WEIGHTINGS"]

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
        The lm-evaluation-harness task settings of a spec's ``[harness]`` table (``output_type``,
        ``doc_to_text``, ``doc_to_choice``, ``doc_to_target``, ``until``; :mod:`tinybench_builder.registry.specs`).
        None for a config whose task is its renderer's (every registered benchmark's): the task is written
        from the renderer's settings (:mod:`tinybench_builder.dataset.harness_tasks`).
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
        For a user's benchmark (a spec file of their own, :mod:`tinybench_builder.registry.specs`), the file's
        checked keys: the manifest keeps them so a built folder describes its own benchmark. None for a
        registered benchmark, whose spec file ships with the package.
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


#: samplers of the tiny split's in-context examples (``ConfigSpec.fewshot_sampler``; :mod:`.prompts` draws them)
SAMPLERS = ("first_n", "harness_v1")
#: samplers of the full splits' in-context examples (``ConfigSpec.full_split_sampler``)
FULL_SPLIT_SAMPLERS = ("first_n", "fixed")
#: where a config's content comes from (``ConfigSpec.content_from``)
CONTENT_FROM = ("upstream", "source", "local")
#: how a config weighs its subscenarios (``ConfigSpec.subscenario_weighting``)
WEIGHTINGS = ("equal", "size", "chance")


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
                         ("harness task names", [c.harness_task for c in spec.configs if c.harness_task]),
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
        if c.fewshot_sampler not in SAMPLERS:
            out.append(f"{where}: unknown few-shot sampler {c.fewshot_sampler!r}")
        if c.full_split_sampler not in FULL_SPLIT_SAMPLERS:
            out.append(f"{where}: unknown full-split sampler {c.full_split_sampler!r}")
        if (c.renderer == "template") != bool(c.prompt_template):
            out.append(f"{where}: a prompt template goes with renderer 'template'")
        if c.renderer == "template" and c.num_fewshot:
            out.append(f"{where}: a prompt template holds its own examples (num_fewshot must be 0)")
        if c.fewshot_group and c.fewshot_group not in c.columns:
            out.append(f"{where}: few-shot group column {c.fewshot_group!r} not in columns")
        if c.content_from not in CONTENT_FROM:
            out.append(f"{where}: content_from must be one of {CONTENT_FROM}")
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
        if c.subscenario_weighting not in WEIGHTINGS:
            out.append(f"{where}: subscenario_weighting must be one of {WEIGHTINGS}")
        chances = list(c.chance.values()) if isinstance(c.chance, dict) else [] if c.chance is None else [c.chance]
        if not all(isinstance(x, (int, float)) and 0 <= x < 1 for x in chances):
            out.append(f"{where}: chance values must be in [0, 1)")
        if c.subscenario_weighting == "chance" and not isinstance(c.chance, dict):
            out.append(f"{where}: subscenario_weighting 'chance' needs a chance per subscenario")
    return out
