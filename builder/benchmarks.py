"""The registry: one place that knows every tiny benchmark.

Each :class:`BenchmarkSpec` says where the tiny dataset lives on the Hub, its configs
and splits, its columns, how ``input_formatted`` is rendered (:mod:`builder.prompts`),
which upstream dataset gives the content, which source task/metric the readers use,
its licence and citation. Adding a benchmark (a Leaderboard v2 set, a user's own) is
adding an entry here; no other module branches on benchmark names.
"""

from __future__ import annotations

from dataclasses import dataclass, field

POLO2024_BIBTEX = """@article{polo2024tinybenchmarks,
  title={tinyBenchmarks: evaluating LLMs with fewer examples},
  author={Maia Polo, Felipe and Weber, Lucas and Choshen, Leshem and Sun, Yuekai and Xu, Gongjun and Yurochkin, Mikhail},
  journal={arXiv preprint arXiv:2402.14992},
  year={2024}
}"""


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
        Columns of every split, in order (``input_formatted`` last when rendered).
    upstream : str
        Default upstream Hub dataset id for the content (``cais/mmlu``...).
    upstream_config : str or None
        Config of the upstream dataset.
    upstream_splits : dict
        Our split name -> the upstream split it comes from (``{"test": "test", "dev": "dev"}``).
    source_task : str
        Task name the readers (``builder ingest --task``) use for the responses.
    metric : str
        Per-example metric the responses hold (acc, acc_norm, mc2, exact_match, preference...).
    renderer : str or None
        Name of the ``input_formatted`` renderer in :mod:`builder.prompts` (None: no column).
    harness_task : str or None
        lm-evaluation-harness task name whose logs ``builder estimate`` reads.
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
        Licence of the source benchmark (Hub licence id, e.g. ``mit``, ``apache-2.0``).
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

    def config(self, name: str) -> ConfigSpec:
        for c in self.configs:
            if c.name == name:
                return c
        raise KeyError(f"{self.name} has no config {name!r} (configs: {[c.name for c in self.configs]})")


REGISTRY: dict[str, BenchmarkSpec] = {}


def register(spec: BenchmarkSpec) -> BenchmarkSpec:
    if spec.name in REGISTRY:
        raise ValueError(f"benchmark {spec.name!r} is already registered")
    REGISTRY[spec.name] = spec
    return spec


def get_benchmark(name: str) -> BenchmarkSpec:
    """The registered benchmark ``name`` (ValueError listing the known ones otherwise)."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown tiny benchmark {name!r}; known: {', '.join(sorted(REGISTRY))}") from None


# --------------------------------------------------------------------- entries
register(BenchmarkSpec(
    name="tinyAlpacaEval",
    pretty_name="tinyAlpacaEval",
    configs=(ConfigSpec(
        name="default", scenario="alpaca_eval", tiny_split="test",
        columns=("instruction", "output", "generator", "dataset"),
        upstream="tatsu-lab/alpaca_eval", upstream_config="alpaca_eval_gpt4_baseline",
        upstream_splits={"test": "eval"},
        source_task="weighted_alpaca_eval_gpt4_turbo", metric="preference",
    ),),
    license="cc-by-nc-4.0",
    task_categories=("text-generation",),
    source_citation="""@misc{alpaca_eval,
  author = {Xuechen Li and Tianyi Zhang and Yann Dubois and Rohan Taori and Ishaan Gulrajani and Carlos Guestrin and Percy Liang and Tatsunori B. Hashimoto},
  title = {AlpacaEval: An Automatic Evaluator of Instruction-following Models},
  year = {2023},
  publisher = {GitHub},
  howpublished = {\\url{https://github.com/tatsu-lab/alpaca_eval}}
}""",
    description="100 AlpacaEval 2.0 instructions chosen so that a model's win rate against the "
                "GPT-4 Turbo reference on them estimates its win rate on all 805.",
))
