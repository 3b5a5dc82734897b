"""lm-evaluation-harness --log_samples reader: every 0.4.x layout and quirk, bad input."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tinybench_builder.read.sources import SourceError, lm_eval
from helpers.sources import lm_record, lm_results, write_jsonl, write_lm_eval_legacy, write_lm_eval_run

TS1 = "2024-07-08T08-27-46.579882"
TS2 = "2024-07-09T10-00-00.000001"


def test_v043_layout_strings_unsorted_and_model_name(tmp_path):
    order = [0, 4, 8, 1, 5, 9, 2, 6, 3, 7]  # multi-GPU ranks concatenated
    recs = [lm_record(i, str(float(i % 2)), version="0.4.3") for i in order]
    write_lm_eval_run(tmp_path, "org/model-a", {"wmdp_bio": recs}, TS1)
    recs_b = [lm_record(i, float(i < 3), version="0.4.3") for i in range(10)]
    write_lm_eval_run(tmp_path, "org/model-b", {"wmdp_bio": recs_b}, TS1)
    m = lm_eval.read(tmp_path)
    assert m.models == ["org/model-a", "org/model-b"]
    assert m.items == [str(i) for i in range(10)]
    np.testing.assert_array_equal(m.scores[0], [i % 2 for i in range(10)])
    np.testing.assert_array_equal(m.scores[1], [float(i < 3) for i in range(10)])
    assert m.item_info.loc["3", "question"] == "Question 3?"
    assert m.item_info.loc["3", "prompt"].endswith("Question 3?\nAnswer:")
    assert set(m.item_info["scenario"]) == {"wmdp_bio"}
    assert m.notes == []


def test_model_name_from_pretrained_beats_folder(tmp_path):
    recs = [lm_record(i, 1.0) for i in range(3)]
    d = write_lm_eval_run(tmp_path, "folder/name", {"t": recs}, TS1,
                          results=lm_results("x", {"t": 3}, model_args="pretrained=real/model,dtype=float16"))
    assert lm_eval.read(d).models == ["real/model"]


def test_model_name_from_folder_without_results(tmp_path):
    write_lm_eval_run(tmp_path, "01-ai/Yi-1.5-6B", {"t": [lm_record(i, 1.0) for i in range(3)]}, TS1, results=False)
    assert lm_eval.read(tmp_path).models == ["01-ai/Yi-1.5-6B"]


def test_legacy_v040_json_array_layout(tmp_path):
    recs = [lm_record(i, float(i % 3 == 0), version="0.4.0") for i in (2, 0, 1, 3)]
    d = write_lm_eval_legacy(tmp_path / "out", "pretrained=EleutherAI/pythia-160m,dtype=float32", {"hellaswag": recs},
                             results=lm_results("EleutherAI/pythia-160m", {"hellaswag": 4}, legacy=True,
                                                model_args="pretrained=EleutherAI/pythia-160m,dtype=float32",
                                                metric="acc_norm"))
    # the samples file really is a pretty-printed JSON array
    f = next(d.glob("*.jsonl"))
    assert f.name == "pretrained__EleutherAI__pythia-160m,dtype__float32_hellaswag.jsonl"
    assert f.read_text().startswith("[\n")
    # hellaswag defaults to acc_norm; these records only have acc -> used, with a note
    m = lm_eval.read(d)
    assert any("no 'acc_norm'" in n for n in m.notes)
    m = lm_eval.read(d, metric="acc")
    assert m.models == ["EleutherAI/pythia-160m"]
    np.testing.assert_array_equal(m.scores[0], [1, 0, 0, 1])
    assert m.item_info.loc["0", "prompt"].endswith("Question 0?\nAnswer:")


def test_legacy_without_results_guesses_task(tmp_path):
    recs = [lm_record(i, 1.0, version="0.4.0") for i in range(2)]
    d = write_lm_eval_legacy(tmp_path / "out", "pretrained=org/m", {"wmdp_bio": recs}, results=False)
    m = lm_eval.read(d)
    assert m.models == ["org/m"] and m.shape == (1, 2)
    assert any("guessed" in n for n in m.notes)


def test_group_task_mmlu_subjects(tmp_path):
    subjects = {"abstract_algebra": 3, "anatomy": 2}
    task_records = {f"mmlu_{s}": [lm_record(i, float(i == 0)) for i in range(n)] for s, n in subjects.items()}
    gs = {"mmlu": ["mmlu_stem"], "mmlu_stem": [f"mmlu_{s}" for s in subjects]}
    write_lm_eval_run(tmp_path, "org/m", task_records, TS1,
                      results=lm_results("org/m", {f"mmlu_{s}": n for s, n in subjects.items()}, group_subtasks=gs))
    for task in ("mmlu", None):
        m = lm_eval.read(tmp_path, task=task)
        assert m.items == ["abstract_algebra.0", "abstract_algebra.1", "abstract_algebra.2", "anatomy.0", "anatomy.1"]
        assert list(m.subscenarios()) == ["abstract_algebra"] * 3 + ["anatomy"] * 2
        assert set(m.item_info["scenario"]) == {"mmlu"}
    # a single subject as the task
    m = lm_eval.read(tmp_path, task="mmlu_anatomy")
    assert m.items == ["0", "1"]


def test_group_by_prefix_without_group_info(tmp_path):
    task_records = {f"mmlu_{s}": [lm_record(i, 1.0) for i in range(2)] for s in ("a", "b")}
    write_lm_eval_run(tmp_path, "org/m", task_records, TS1, results=False)
    m = lm_eval.read(tmp_path, task="mmlu")
    assert m.items == ["a.0", "a.1", "b.0", "b.1"]
    # without --task: two unrelated tasks -> <task>.<doc_id>
    m = lm_eval.read(tmp_path)
    assert m.items == ["mmlu_a.0", "mmlu_a.1", "mmlu_b.0", "mmlu_b.1"]


def test_filters_v047_gsm8k_defaults_to_strict_match(tmp_path):
    recs = []
    for f, vals in (("strict-match", [1, 0, 0]), ("flexible-extract", [1, 1, 0])):
        recs += [lm_record(i, float(v), "exact_match", version="0.4.7", filter=f) for i, v in enumerate(vals)]
    write_lm_eval_run(tmp_path, "org/m", {"gsm8k": recs}, TS1,
                      results=lm_results("org/m", {"gsm8k": 3}, metric="exact_match",
                                         filters={"gsm8k": ["strict-match", "flexible-extract"]}))
    m = lm_eval.read(tmp_path)
    np.testing.assert_array_equal(m.scores[0], [1, 0, 0])
    assert any("strict-match" in n for n in m.notes)
    m = lm_eval.read(tmp_path, filter="flexible-extract")
    np.testing.assert_array_equal(m.scores[0], [1, 1, 0])
    with pytest.raises(SourceError, match="no filter 'nope'.*strict-match"):
        lm_eval.read(tmp_path, filter="nope")


def test_filters_before_047_told_apart_by_order(tmp_path):
    strict = [lm_record(i, float(v), "exact_match", version="0.4.4") for i, v in enumerate([0, 0, 1])]
    flexible = [lm_record(i, float(v), "exact_match", version="0.4.4") for i, v in enumerate([1, 1, 1])]
    write_lm_eval_run(tmp_path, "org/m", {"gsm8k": strict + flexible}, TS1,
                      results=lm_results("org/m", {"gsm8k": 3}, metric="exact_match",
                                         filters={"gsm8k": ["strict-match", "flexible-extract"]}))
    np.testing.assert_array_equal(lm_eval.read(tmp_path).scores[0], [0, 0, 1])
    np.testing.assert_array_equal(lm_eval.read(tmp_path, filter="flexible-extract").scores[0], [1, 1, 1])


def test_metric_defaults_and_override(tmp_path):
    arc = [lm_record(i, 0.0, "acc", extra={"acc_norm": 1.0}) for i in range(2)]
    tqa = [lm_record(i, 0.25 * (i + 1), "acc") for i in range(2)]
    write_lm_eval_run(tmp_path, "org/m", {"arc_challenge": arc, "truthfulqa_mc2": tqa}, TS1)
    m = lm_eval.read(tmp_path, task="arc_challenge")
    np.testing.assert_array_equal(m.scores[0], [1.0, 1.0])  # acc_norm, as the leaderboard
    m = lm_eval.read(tmp_path, task="arc_challenge", metric="acc")
    np.testing.assert_array_equal(m.scores[0], [0.0, 0.0])
    m = lm_eval.read(tmp_path, task="truthfulqa_mc2")
    np.testing.assert_allclose(m.scores[0], [0.25, 0.5])  # mc2 acc is continuous
    m = lm_eval.read(tmp_path)
    assert m.items == ["arc_challenge.0", "arc_challenge.1", "truthfulqa_mc2.0", "truthfulqa_mc2.1"]
    with pytest.raises(SourceError, match="no metric 'f1'.*acc"):
        lm_eval.read(tmp_path, task="arc_challenge", metric="f1")


def test_several_runs_newest_wins(tmp_path):
    write_lm_eval_run(tmp_path, "org/m", {"t": [lm_record(i, 0.0) for i in range(3)]}, TS1)
    write_lm_eval_run(tmp_path, "org/m", {"t": [lm_record(i, 1.0) for i in range(3)]}, TS2)
    m = lm_eval.read(tmp_path)
    assert m.models == ["org/m"]
    np.testing.assert_array_equal(m.scores[0], [1, 1, 1])
    assert any("newest" in n and TS2 in n and TS1 in n for n in m.notes)


def test_partial_limit_run_reported_and_padded(tmp_path):
    write_lm_eval_run(tmp_path, "org/full", {"t": [lm_record(i, 1.0) for i in range(6)]}, TS1)
    write_lm_eval_run(tmp_path, "org/part", {"t": [lm_record(i, 0.0) for i in range(3)]}, TS1,
                      results=lm_results("org/part", {"t": 6}, limit=3))
    m = lm_eval.read(tmp_path)
    assert m.shape == (2, 6)
    assert np.isnan(m.scores[1, 3:]).all()
    assert any("org/part" in n and "partial run: 3 of 6" in n and "limit=3" in n for n in m.notes)
    assert m.summary()["partial_models"] == ["org/part"]
    # alone, the partial model still spans the full task (n-samples original)
    m = lm_eval.read(tmp_path / "org__part")
    assert m.shape == (1, 6)


def test_v2_leaderboard_json_extension_and_defaults(tmp_path):
    root = tmp_path / "EleutherAI__pythia-1b-details"
    bbh = {f"leaderboard_bbh_{s}": [lm_record(i, 0.0, "acc", extra={"acc_norm": float(i % 2)}) for i in range(2)]
           for s in ("boolean_expressions", "navigate")}
    ifeval = [lm_record(i, True, "prompt_level_strict_acc", extra={"inst_level_strict_acc": [True, False]})
              for i in range(2)]
    gs = {"leaderboard_bbh": list(bbh), "leaderboard_ifeval": []}
    write_lm_eval_run(root, "EleutherAI/pythia-1b", {**bbh, "leaderboard_ifeval": ifeval}, "2024-06-16T22-34-46.256992",
                      results=lm_results("EleutherAI/pythia-1b", {**{t: 2 for t in bbh}, "leaderboard_ifeval": 2},
                                         group_subtasks=gs), ext=".json")
    m = lm_eval.read(root, task="leaderboard_bbh")
    assert m.models == ["EleutherAI/pythia-1b"]
    assert m.items == ["boolean_expressions.0", "boolean_expressions.1", "navigate.0", "navigate.1"]
    np.testing.assert_array_equal(m.scores[0], [0, 1, 0, 1])  # acc_norm
    m = lm_eval.read(root, task="leaderboard_ifeval")
    np.testing.assert_array_equal(m.scores[0], [1, 1])  # bool prompt_level_strict_acc
    m = lm_eval.read(root, task="leaderboard_ifeval", metric="inst_level_strict_acc")
    np.testing.assert_array_equal(m.scores[0], [0.5, 0.5])  # list of bools -> mean
    from tinybench_builder.read.sources import open_llm_leaderboard

    assert open_llm_leaderboard.read_v2(root, task="leaderboard_bbh").shape == (1, 4)


# --------------------------------------------------------------------------- bad input
def test_truncated_jsonl_names_file_and_line(tmp_path):
    d = write_lm_eval_run(tmp_path, "org/m", {"t": [lm_record(i, 1.0) for i in range(4)]}, TS1)
    f = d / f"samples_t_{TS1}.jsonl"
    raw = f.read_bytes()
    f.write_bytes(raw[: len(raw) - 40])  # cut inside the last record
    with pytest.raises(SourceError) as err:
        lm_eval.read(tmp_path)
    assert str(f) in str(err.value) and "line 4" in str(err.value)


def test_truncated_json_array_names_file(tmp_path):
    d = write_lm_eval_legacy(tmp_path / "out", "pretrained=org/m", {"t": [lm_record(i, 1.0, version="0.4.0") for i in range(3)]})
    f = next(d.glob("*.jsonl"))
    f.write_text(f.read_text()[:-30])
    with pytest.raises(SourceError, match=r"_t\.jsonl: line \d+"):
        lm_eval.read(d)


def test_corrupt_results_json(tmp_path):
    d = write_lm_eval_run(tmp_path, "org/m", {"t": [lm_record(i, 1.0) for i in range(2)]}, TS1)
    (d / f"results_{TS1}.json").write_text('{"results": {')
    with pytest.raises(SourceError, match=f"results_{TS1}.json: line 1"):
        lm_eval.read(tmp_path)


def test_conflicting_duplicate_records_are_an_error(tmp_path):
    recs = [lm_record(0, 1.0, version="0.4.7"), lm_record(1, 1.0, version="0.4.7"), lm_record(0, 0.0, version="0.4.7")]
    write_lm_eval_run(tmp_path, "org/m", {"t": recs}, TS1)
    with pytest.raises(SourceError, match="line 3: conflicting duplicate record for doc_id 0"):
        lm_eval.read(tmp_path)


def test_repeated_documents_with_one_filter_must_agree(tmp_path):
    recs = [lm_record(0, 1.0), lm_record(1, 1.0), lm_record(0, 1.0)]  # appended twice, identical: fine
    write_lm_eval_run(tmp_path, "org/m", {"t": recs}, TS1)
    assert lm_eval.read(tmp_path).shape == (1, 2)
    recs[2] = lm_record(0, 0.0)
    write_lm_eval_run(tmp_path, "org/m", {"t": recs}, TS1)
    with pytest.raises(SourceError, match="conflicting duplicate"):
        lm_eval.read(tmp_path)


def test_bad_values_and_records(tmp_path):
    write_lm_eval_run(tmp_path, "org/m", {"t": [lm_record(0, "abc")]}, TS1)
    with pytest.raises(SourceError, match="line 1: acc value 'abc' is not a number"):
        lm_eval.read(tmp_path)
    d = tmp_path / "org__m"
    write_jsonl(d / f"samples_t_{TS1}.jsonl", [{"acc": 1.0}])
    with pytest.raises(SourceError, match="line 1: record without 'doc_id'"):
        lm_eval.read(tmp_path)
    write_jsonl(d / f"samples_t_{TS1}.jsonl", [lm_record(0, 3.0)])
    with pytest.raises(SourceError, match=r"outside \[0, 1\]"):
        lm_eval.read(tmp_path)


def test_task_not_found_lists_tasks(tmp_path):
    write_lm_eval_run(tmp_path, "org/m", {"wmdp_bio": [lm_record(0, 1.0)]}, TS1)
    with pytest.raises(SourceError, match="no samples for task 'gsm8k'; found: wmdp_bio"):
        lm_eval.read(tmp_path, task="gsm8k")


def test_helpers():
    assert lm_eval.split_samples_name(f"samples_mmlu_abstract_algebra_{TS1}.jsonl") == ("mmlu_abstract_algebra", TS1)
    assert lm_eval.split_samples_name("samples_x.jsonl") is None
    assert lm_eval.model_name_from_results({"config": {"model_args": {"pretrained": "a/b"}}}) == "a/b"
    assert lm_eval.model_name_from_results({"config": {"model_args": "model=gpt-4o"}}) == "gpt-4o"
    assert lm_eval.default_metric("gsm8k_cot") == "exact_match"
    assert lm_eval.default_metric("hellaswag") == "acc_norm"
    assert lm_eval.default_metric("mmlu_anatomy") is None
    assert math.isnan(json.loads("NaN"))


def test_models_without_the_task_give_no_row(tmp_path):
    write_lm_eval_run(tmp_path, "org/a", {"wmdp_bio": [lm_record(0, 1.0)]}, TS1)
    write_lm_eval_run(tmp_path, "org/b", {"wmdp_cyber": [lm_record(0, 1.0)]}, TS1)
    assert lm_eval.read(tmp_path, task="wmdp_bio").models == ["org/a"]
