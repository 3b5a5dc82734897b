"""builder.dataset.harness_tasks: `build` writes the lm-evaluation-harness task files of the tiny dataset
(lm_eval/<task>.yaml, pinned to the release tag), and the functions they name reproduce the
harness requests of the rows."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest
import yaml

from builder.registry import prompts
from builder.registry.benchmarks import get_benchmark
from builder.dataset.harness_tasks import HARNESS_DIR, UTILS_MODULE, task_files
from builder.layout import read_manifest, verify_manifest
from helpers.builds import built, read_split


class _Loader(yaml.SafeLoader):
    """yaml with lm-eval's ``!function`` tag (kept as the text)."""


_Loader.add_constructor("!function", lambda loader, node: ("function", loader.construct_scalar(node)))


def _load(folder, rel):
    return yaml.load((folder / rel).read_text(encoding="utf-8"), Loader=_Loader)


def _utils(folder):
    spec = importlib.util.spec_from_file_location("tiny_utils_test", folder / HARNESS_DIR / f"{UTILS_MODULE}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    root = tmp_path_factory.getbasetemp() / "builds"
    return {name: built(root, name) for name in ("tinyMMLU", "tinyWinogrande", "tinyHellaswag", "tinyTruthfulQA",
                                                  "tinyGSM8k", "tinyAI2_arc", "tinyAlpacaEval",
                                                  "tinyOpenLLMLeaderboard")}


def test_every_task_file_is_listed_pinned_and_names_the_manifest_task(builds):
    for folder in builds.values():
        man = read_manifest(folder)
        assert verify_manifest(folder) == []
        files = man.get("harness_tasks", [])
        assert files == sorted(p.relative_to(folder).as_posix() for p in (folder / HARNESS_DIR).rglob("*")
                               if p.is_file()) if files else not (folder / HARNESS_DIR).exists()
        for c in man["configs"].values():
            if not c["harness_task"]:
                continue
            task = _load(folder, f"{HARNESS_DIR}/{c['harness_task']}.yaml")
            assert task["task"] == c["harness_task"]
            assert (task["dataset_path"], task["dataset_kwargs"]) == (man["repo_id"], {"revision": man["tag"]})
            assert task["test_split"] == c["tiny_split"] and task["num_fewshot"] == 0
            metrics = {m["metric"] for m in task["metric_list"]}
            assert c["harness_metric"] in metrics  # what `builder estimate` reads is logged
    assert not (builds["tinyAlpacaEval"] / HARNESS_DIR).exists()  # no harness task
    group = _load(builds["tinyOpenLLMLeaderboard"], f"{HARNESS_DIR}/tinyOpenLLMLeaderboard.yaml")
    assert group["group"] == "tinyOpenLLMLeaderboard" and len(group["task"]) == 6
    mmlu = _load(builds["tinyMMLU"], f"{HARNESS_DIR}/tinyMMLU.yaml")
    assert mmlu["doc_to_text"] == "{{input_formatted}}" and mmlu["doc_to_choice"] == ["A", "B", "C", "D"]
    assert mmlu["dataset_name"] == "all" and mmlu["doc_to_target"] == "answer"
    gsm = _load(builds["tinyGSM8k"], f"{HARNESS_DIR}/tinyGSM8k.yaml")
    assert gsm["output_type"] == "generate_until"
    assert [f["name"] for f in gsm["filter_list"]] == ["strict-match", "flexible-extract"]
    assert gsm["metric_list"][0]["regexes_to_ignore"] == [",", "\\$", "(?s).*#### ", "\\.$"]


def test_winogrande_functions_give_the_harness_requests(builds):
    folder = builds["tinyWinogrande"]
    task = _load(folder, f"{HARNESS_DIR}/tinyWinogrande.yaml")
    assert task["doc_to_choice"] == ("function", f"{UTILS_MODULE}.winogrande_choices")
    utils = _utils(folder)
    for row in read_split(folder, "winogrande_xl", "validation").to_dict("records"):
        contexts, continuation = prompts.winogrande_requests(row["input_formatted"], row)
        assert utils.winogrande_choices(row) == contexts
        assert " " + utils.winogrande_target(row) == continuation
        assert utils.winogrande_choices(row)[utils.winogrande_gold(row)] == row["input_formatted"]


def test_hellaswag_and_truthfulqa_functions(builds):
    utils = _utils(builds["tinyHellaswag"])
    for row in read_split(builds["tinyHellaswag"], "default", "validation").to_dict("records"):
        assert utils.hellaswag_choices(row) == [prompts.hellaswag_preprocess(e) for e in row["endings"]]
    assert utils.hellaswag_choices({"endings": ["a [title] b", " c  [x] d "]}) == ["a. b", "c  d"]  # one pass of "  "
    utils = _utils(builds["tinyTruthfulQA"])
    doc = {"mc2_targets": {"choices": ["t1", "t2", "f1"], "labels": [1, 1, 0]}}
    got = utils.truthfulqa_mc2(doc, [(np.log(0.2), False), (np.log(0.3), False), (np.log(0.5), True)])
    assert got == {"acc": pytest.approx(0.5)}


def test_custom_task_from_the_spec(tmp_path):
    """A custom benchmark's [harness] table becomes its task file (and its manifest task)."""
    import dataclasses

    from builder.registry.specs import spec_from_mapping

    spec = spec_from_mapping({"name": "tinyX", "license": "mit", "citation": "@misc{x, title={X}}",
                              "prompt": "Q: {{ question }}\nA:",
                              "harness": {"output_type": "generate_until", "doc_to_target": "{{ answer }}",
                                          "metric": "exact_match", "until": ["\n"]}})
    config = dataclasses.replace(spec.configs[0])
    files = task_files(spec, {config.name: {"tiny_split": "test"}}, "me/tinyX", "v2.0.0", "2.0.0")
    assert list(files) == [f"{HARNESS_DIR}/tinyX.yaml"]
    task = yaml.safe_load(files[f"{HARNESS_DIR}/tinyX.yaml"])
    assert task["task"] == "tinyX" and task["dataset_path"] == "me/tinyX" and task["dataset_name"] == "default"
    assert task["doc_to_text"] == "{{input_formatted}}" and task["doc_to_target"] == "{{ answer }}"
    assert task["generation_kwargs"]["until"] == ["\n"]
    assert task["metric_list"] == [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": True}]
    # no [harness] table: no task file
    plain = spec_from_mapping({"name": "tinyY", "license": "mit", "citation": "@misc{y, title={Y}}"})
    assert task_files(plain, {"default": {"tiny_split": "test"}}, "me/tinyY", "v1.0.0", "1.0.0") == {}
    assert json.loads(json.dumps(get_benchmark("tinyMMLU").configs[0].harness_metric)) == "acc_norm"
