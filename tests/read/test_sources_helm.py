"""HELM run folders reader."""

from __future__ import annotations

import numpy as np
import pytest

from tinybench_builder.read.sources import SourceError, helm
from helpers.sources import helm_stat, write_helm_run

PERT = {"name": "robustness", "robustness": True, "fairness": False, "computed_on": "perturbed"}


def _mmlu_run(suite, subject, model, values, extra_stats=True, instances=True):
    per_instance = []
    for k, v in enumerate(values):
        stats = [helm_stat("exact_match", v)]
        if extra_stats:
            stats += [helm_stat("num_prompt_tokens", 612.0), helm_stat("exact_match", 1 - v, split="valid"),
                      helm_stat("exact_match", 0.0, perturbation=PERT)]
        per_instance.append({"instance_id": f"id{k}", "train_trial_index": 0, "stats": stats})
    # a perturbed copy of the first instance: must be ignored
    per_instance.append({"instance_id": "id0", "perturbation": PERT, "train_trial_index": 0,
                         "stats": [helm_stat("exact_match", 1 - values[0])]})
    inst = [{"input": {"text": f"{subject} question {k}"}, "references": [
        {"output": {"text": "right"}, "tags": ["correct"]}, {"output": {"text": "wrong"}, "tags": []}],
        "split": "test", "id": f"id{k}"} for k in range(len(values))] if instances else None
    name = f"mmlu:subject={subject},method=multiple_choice_joint,model={model.replace('/', '_')}"
    return write_helm_run(suite, name, model, ["mmlu"], {"subject": subject}, per_instance, inst)


def test_mmlu_runs_main_metric_subscenario_ids(tmp_path):
    suite = tmp_path / "runs" / "v1.0.0"
    _mmlu_run(suite, "anatomy", "openai/gpt-4", [1.0, 0.0])
    _mmlu_run(suite, "abstract_algebra", "openai/gpt-4", [0.0, 1.0, 1.0])
    _mmlu_run(suite, "anatomy", "meta/llama", [0.0, 0.0], instances=False)
    m = helm.read(tmp_path / "runs")
    assert m.models == ["openai/gpt-4", "meta/llama"]
    assert m.items == ["abstract_algebra.id0", "abstract_algebra.id1", "abstract_algebra.id2", "anatomy.id0", "anatomy.id1"]
    np.testing.assert_array_equal(m.scores[0], [0, 1, 1, 1, 0])
    np.testing.assert_array_equal(m.scores[1], [np.nan, np.nan, np.nan, 0, 0])
    assert m.item_info.loc["anatomy.id1", "question"] == "anatomy question 1"
    assert m.item_info.loc["anatomy.id1", "answer"] == "right"
    assert list(m.subscenarios())[:1] == ["abstract_algebra"]


def test_groups_without_subscenario_and_task_choice(tmp_path):
    suite = tmp_path / "v1.0.0"
    write_helm_run(suite, "gsm:model=m", "org/m", ["gsm"], {},
                   [{"instance_id": f"id{k}", "train_trial_index": 0,
                     "stats": [helm_stat("final_number_exact_match", float(k % 2)), helm_stat("exact_match", 0.0)]}
                    for k in range(3)])
    write_helm_run(suite, "natural_qa:mode=closedbook,model=m", "org/m", ["natural_qa_closedbook"], {"mode": "closedbook"},
                   [{"instance_id": "id7", "train_trial_index": 0,
                     "stats": [helm_stat("f1_score", 0.4, split="valid"), helm_stat("f1_score", 0.9, split="test")]}])
    m = helm.read(suite, task="gsm")
    assert m.items == ["id0", "id1", "id2"]
    np.testing.assert_array_equal(m.scores[0], [0, 1, 0])
    m = helm.read(suite, task="natural_qa_closedbook")
    np.testing.assert_allclose(m.scores[0], [0.4])  # main split is 'valid'
    m = helm.read(suite)
    assert m.items == ["natural_qa_closedbook.id7", "gsm.id0", "gsm.id1", "gsm.id2"]
    m = helm.read(suite, task="gsm", metric="exact_match")
    np.testing.assert_array_equal(m.scores[0], [0, 0, 0])
    with pytest.raises(SourceError, match="no HELM runs for task 'mmlu'"):
        helm.read(suite, task="mmlu")


def test_run_group_from_name_and_trials_averaged(tmp_path):
    suite = tmp_path / "s"
    write_helm_run(suite, "math:subject=algebra,level=1,use_chain_of_thought=True,model=m", "org/m", [],
                   {"subject": "algebra", "level": "1", "use_chain_of_thought": True},
                   [{"instance_id": "id1", "train_trial_index": t,
                     "stats": [helm_stat("math_equiv_chain_of_thought", float(t))]} for t in range(2)])
    m = helm.read(suite)
    assert m.items == ["algebra_1.id1"]
    np.testing.assert_allclose(m.scores[0], [0.5])
    assert any("train trials" in n for n in m.notes)


def test_bad_input(tmp_path):
    suite = tmp_path / "s"
    d = _mmlu_run(suite, "anatomy", "org/m", [1.0])
    (d / "per_instance_stats.json").write_text('[{"instance_id": "id0", "stats": [')
    with pytest.raises(SourceError, match="per_instance_stats.json: line 1"):
        helm.read(suite)
    d2 = write_helm_run(tmp_path / "t", "wmt_14:language_pair=de-en,model=m", "org/m", ["wmt_14"], {"language_pair": "de-en"},
                        [{"instance_id": "id0", "train_trial_index": 0, "stats": [helm_stat("bleu_1", 0.3)]}])
    with pytest.raises(SourceError, match="no per-instance stat 'bleu_4' on split 'test'; stats there: bleu_1"):
        helm.read(d2)
    write_helm_run(tmp_path / "u", "foo:model=m", "org/m", ["foo"], {}, [])
    with pytest.raises(SourceError, match="not a HELM Lite scenario"):
        helm.read(tmp_path / "u")


def test_conflicting_duplicate_instances(tmp_path):
    suite = tmp_path / "s"
    def entry(v):
        return {"instance_id": "id0", "train_trial_index": 0, "stats": [helm_stat("final_number_exact_match", v)]}

    write_helm_run(suite, "gsm:model=m", "org/m", ["gsm"], {}, [entry(1.0), entry(1.0)])
    assert helm.read(suite).shape == (1, 1)  # identical duplicates are harmless
    write_helm_run(suite, "gsm:model=m", "org/m", ["gsm"], {}, [entry(1.0), entry(0.0)])
    with pytest.raises(SourceError, match="entry 1: conflicting duplicate for instance id0"):
        helm.read(suite)
