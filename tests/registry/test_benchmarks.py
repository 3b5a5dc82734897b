"""The registry (tinybench_builder.registry.benchmarks): every entry consistent, cross-checked against the readers,
the prompt renderers and the original tinyBenchmarks names."""

import dataclasses

import pytest

from tinybench_builder.registry import benchmarks as bm
from tinybench_builder.registry import prompts
from tinybench_builder.registry.benchmarks import (REGISTRY, BenchmarkSpec, ConfigSpec, get_benchmark, get_by_original,
                                list_benchmarks, register, size_category, validate_spec)
from tinybench_builder.read.sources.helm import LITE_MAIN
from tinybench_builder.read.sources.open_llm_leaderboard import V1_TASKS

EXPECTED = {"tinyMMLU", "tinyAI2_arc", "tinyHellaswag", "tinyWinogrande", "tinyTruthfulQA", "tinyGSM8k",
            "tinyAlpacaEval", "tinyHELM", "tinyOpenLLMLeaderboard",
            # the Open LLM Leaderboard v2 (tinybench_builder.registry.leaderboard_v2; tests/registry/test_leaderboard_v2.py)
            "tinyIFEval", "tinyBBH", "tinyMATHHard", "tinyGPQA", "tinyMuSR", "tinyMMLUPro", "tinyArcChallengeV2",
            "tinyOpenLLMLeaderboardV2"}
#: entries with an original tinyBenchmarks counterpart (``tinyBenchmarks.evaluate(y, bench)``)
ORIGINAL = [s for s in (REGISTRY[n] for n in sorted(REGISTRY)) if s.original_bench]
ALL = [REGISTRY[n] for n in sorted(REGISTRY)]
CONFIGS = [(s, c) for s in ALL for c in s.configs]
HUB_LICENSES = {"mit", "apache-2.0", "cc-by-4.0", "cc-by-sa-4.0", "cc-by-2.0", "cc-by-nc-4.0", "cc-by-sa-3.0", "other"}
HUB_TASKS = {"question-answering", "multiple-choice", "text-generation", "translation"}


def test_all_entries_registered():
    assert set(REGISTRY) == EXPECTED
    assert list_benchmarks()[0] == "tinyMMLU"


@pytest.mark.parametrize("spec", ALL, ids=lambda s: s.name)
def test_entry_is_consistent(spec):
    assert validate_spec(spec) == []
    assert spec.license in HUB_LICENSES
    assert set(spec.task_categories) <= HUB_TASKS and spec.task_categories
    assert spec.source_citation.lstrip().startswith("@") and spec.source_citation.count("{") == spec.source_citation.count("}")
    assert spec.description and spec.pretty_name
    assert spec.original_bench or spec.name in EXPECTED - {s.name for s in ORIGINAL}
    assert (len(spec.configs) > 1) == spec.joint
    assert len({c.scenario for c in spec.configs}) == len(spec.configs)   # unique within a bundle
    assert len({c.name for c in spec.configs}) == len(spec.configs)
    if spec.license == "other":
        assert spec.license_notes and all(c.license for c in spec.configs)


@pytest.mark.parametrize("spec, c", CONFIGS, ids=lambda x: getattr(x, "name", ""))
def test_config_is_consistent(spec, c):
    assert c.tiny_split not in c.full_splits
    assert c.splits[0] == c.tiny_split
    if c.renderer is not None:
        assert c.renderer in prompts.RENDERERS
        assert c.columns[-1] == "input_formatted"
    assert c.fewshot_sampler in prompts.SAMPLERS
    if c.num_fewshot:
        assert c.fewshot_split in c.full_splits and c.renderer
    if c.content_from == "upstream":
        assert c.upstream and set(c.upstream_splits) == set(c.splits)
    assert c.original_scenario or not spec.original_bench
    if c.harness_task:
        assert c.harness_metric


def test_leaderboard_configs_match_the_v1_reader_and_harness():
    v1 = {t.scenario: t for t in V1_TASKS}
    harness = {"arc": "tinyArc", "hellaswag": "tinyHellaswag", "mmlu": "tinyMMLU", "truthfulqa": "tinyTruthfulQA",
               "winogrande": "tinyWinogrande", "gsm8k": "tinyGSM8k"}
    shots = {"arc": 25, "hellaswag": 10, "mmlu": 5, "truthfulqa": 0, "winogrande": 5, "gsm8k": 5}
    for c in bm.LEADERBOARD_CONFIGS:
        assert c.source_task in v1 and c.metric == v1[c.source_task].metric
        if v1[c.source_task].rows is not None:
            assert c.eval_size == v1[c.source_task].rows
        assert c.harness_task == harness[c.scenario]
        assert c.num_fewshot == shots[c.scenario]
        assert c.renderer == c.scenario
    assert bm.MMLU_CONFIG.eval_size == 14042 and bm.MMLU_CONFIG.fewshot_sampler == "first_n"
    assert sum(c.eval_size for c in bm.LEADERBOARD_CONFIGS) == 28659     # lb.pickle width


def test_hub_layout_of_the_original_tiny_datasets():
    """Configs, splits and columns as published (docs/SOURCE_FORMATS.md section 7.1)."""
    layout = {
        "tinyMMLU": ("all", "test", ("dev",), ("question", "subject", "choices", "answer", "input_formatted")),
        "tinyAI2_arc": ("ARC-Challenge", "test", ("train", "validation"),
                        ("id", "question", "choices", "answerKey", "input_formatted")),
        "tinyHellaswag": ("default", "validation", ("train", "test"),
                          ("ind", "activity_label", "ctx_a", "ctx_b", "ctx", "endings", "source_id", "split",
                           "split_type", "label", "input_formatted")),
        "tinyWinogrande": ("winogrande_xl", "validation", ("train", "test"),
                           ("sentence", "option1", "option2", "answer", "input_formatted")),
        "tinyTruthfulQA": ("multiple_choice", "validation", (),
                           ("question", "mc1_targets", "mc2_targets", "input_formatted")),
        "tinyGSM8k": ("main", "test", ("train",), ("question", "answer", "input_formatted")),
    }
    for name, (config, tiny, full, columns) in layout.items():
        c = get_benchmark(name).config(config)
        assert (c.tiny_split, c.full_splits, c.columns) == (tiny, full, columns)
    assert get_benchmark("tinyMMLU").config("all").class_labels == {"answer": ("A", "B", "C", "D")}
    assert get_benchmark("tinyMMLU").size_category == "n<1K"
    assert get_benchmark("tinyHellaswag").size_category == "10K<n<100K"


def test_helm_configs_match_the_helm_reader():
    helm = get_benchmark("tinyHELM")
    assert {c.scenario for c in helm.configs} == set(LITE_MAIN)
    for c in helm.configs:
        assert c.source_task == c.scenario and c.metric == LITE_MAIN[c.scenario][0]
        assert c.content_from == "source" and c.renderer is None
    assert helm.anchors * len(helm.configs) == 1000
    # the original helm_lite y order: OpenbookQA, GSM, MedQA, LegalBench, MATH, MMLU, NarrativeQA,
    # NaturalQA (closed), NaturalQA (open), WMT14
    assert [c.original_scenario for c in helm.configs] == [
        "commonsense:dataset=openbookqa,method=multiple_choice_joint,", "gsm:", "med_qa:", "legalbench", "math",
        "mmlu", "narrative_qa:", "natural_qa:mode=closedbook,", "natural_qa:mode=openbook_longans,", "wmt_14"]


def test_open_llm_leaderboard_bundle():
    lb = get_benchmark("tinyOpenLLMLeaderboard")
    assert lb.joint and lb.original_bench == "lb"
    assert lb.scenarios == ["truthfulqa", "gsm8k", "winogrande", "arc", "hellaswag", "mmlu"]
    assert [c.name for c in lb.configs] == lb.scenarios
    assert lb.anchors * len(lb.configs) == 600
    assert lb.scenario_config("harness_truthfulqa_mc_0").scenario == "truthfulqa"   # tutorial-era name
    for c in lb.configs:
        single = next(s for s in ALL if not s.joint and s.configs[0].scenario == c.scenario)
        assert dataclasses.replace(c, name=single.configs[0].name) == single.configs[0]
    assert {c.license for c in lb.configs} == {"apache-2.0", "mit", "cc-by-2.0", "cc-by-sa-4.0"}


def test_original_evaluate_mapping():
    """Every ``bench`` the original evaluate(y, bench) accepts maps to one entry; its output keys are
    the entries' original_scenario values."""
    benches = ["lb", "mmlu", "helm_lite", "alpaca", "truthfulqa", "gsm8k", "winogrande", "arc", "hellaswag"]
    assert sorted(s.original_bench for s in ORIGINAL) == sorted(benches)
    assert len(ORIGINAL) == 9  # the v2 entries have no original counterpart
    for b in ["truthfulqa", "gsm8k", "winogrande", "arc", "hellaswag"]:
        spec = get_by_original(b)
        assert spec.original_scenarios == {b: b}
        lb = get_by_original("lb")
        assert lb.scenario_config(b).original_scenario == b
    assert get_by_original("mmlu").name == "tinyMMLU"
    assert get_by_original("alpaca").original_scenarios == {"alpaca_eval": "alpaca_v2"}
    with pytest.raises(ValueError, match="known: .*helm_lite"):
        get_by_original("nope")


def test_get_benchmark_error_lists_names():
    with pytest.raises(ValueError) as err:
        get_benchmark("tinyNothing")
    msg = str(err.value)
    assert "tinyNothing" in msg and all(n in msg for n in EXPECTED)
    with pytest.raises(KeyError, match="ARC-Challenge"):
        get_benchmark("tinyAI2_arc").config("ARC-Easy")
    with pytest.raises(KeyError, match="scenarios"):
        get_benchmark("tinyHELM").scenario_config("drop")


def test_register_rejects_duplicates_and_inconsistent_entries():
    spec = get_benchmark("tinyGSM8k")
    with pytest.raises(ValueError, match="already registered"):
        register(spec)
    c = spec.configs[0]
    bad = [
        dataclasses.replace(c, full_splits=("train", "test")),               # tiny split repeated
        dataclasses.replace(c, fewshot_split="dev"),                         # not a full split
        dataclasses.replace(c, columns=("question", "answer")),              # renderer without column
        dataclasses.replace(c, columns=("input_formatted", "question")),     # not last
        dataclasses.replace(c, upstream_splits={"test": "test"}),            # train unmapped
        dataclasses.replace(c, fewshot_sampler="shuffle"),
        dataclasses.replace(c, eval_size=50),
    ]
    for b in bad:
        s = dataclasses.replace(spec, name="tinyBad", configs=(b,))
        assert validate_spec(s), b
        with pytest.raises(ValueError, match="inconsistent"):
            register(s)
    two = dataclasses.replace(spec, name="tinyBad", configs=(c, dataclasses.replace(c, name="other")), joint=True)
    assert any("duplicate scenario" in p for p in validate_spec(two))
    assert any("joint=False" in p for p in validate_spec(dataclasses.replace(two, joint=False)))
    assert "tinyBad" not in REGISTRY


def test_size_category():
    assert [size_category(n) for n in (0, 999, 1000, 50008, 101849)] == [
        "n<1K", "n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M"]


def test_existing_contract_fields_kept():
    """The original dataclass fields and their order are unchanged (fields were only added)."""
    names = [f.name for f in dataclasses.fields(ConfigSpec)]
    assert names[:12] == ["name", "scenario", "tiny_split", "full_splits", "columns", "upstream", "upstream_config",
                          "upstream_splits", "source_task", "metric", "renderer", "harness_task"]
    names = [f.name for f in dataclasses.fields(BenchmarkSpec)]
    assert names[:9] == ["name", "pretty_name", "configs", "license", "task_categories", "source_citation",
                         "description", "anchors", "joint"]
    alpaca = get_benchmark("tinyAlpacaEval").configs[0]
    assert (alpaca.source_task, alpaca.metric, alpaca.renderer) == ("weighted_alpaca_eval_gpt4_turbo", "preference", None)
