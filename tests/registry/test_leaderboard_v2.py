"""The Open LLM Leaderboard v2 tiny benchmarks (tinybench_builder.registry.leaderboard_v2, prompts_v2).

The fixtures are details written by the leaderboard's own lm-eval fork (tests/data/leaderboard_v2,
scripts/leaderboard_v2_fixtures.py): their records are checked field by field against
docs/SOURCE_FORMATS.md (sections 2.2 and 3.3, lm-eval 0.4.3), their prompts against the renderers,
and every v2 benchmark, and the bundle, is built from them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess

import numpy as np
import pandas as pd
import pytest

from tinybench_builder.dataset import BuildOptions, build_benchmark
from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.registry import get_benchmark, normalization, render_split
from tinybench_builder.registry.leaderboard_v2 import BBH_CHANCE, GPQA_SUBSETS, MATH_HARD_SUBJECTS, MUSR_CHANCE, MUSR_SUBTASKS
from tinybench_builder.registry.prompts import render_arc
from tinybench_builder.registry.prompts_v2 import V2_RENDERERS, bbh_subtasks
from helpers.leaderboard_v2 import CONTENT, content_rows, metric_keys, results, samples, write_details
from helpers.sources import SHARED_DATA

TASKS = sorted(samples())
#: the lm-eval 0.4.3 record (SOURCE_FORMATS.md 3.3): no ``filter``/``metrics`` keys (those came in 0.4.7)
RECORD_KEYS = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "doc_hash", "prompt_hash",
               "target_hash"}
#: the ``doc`` fields of SOURCE_FORMATS.md 2.2 per task family
DOC_FIELDS = {"leaderboard_bbh": {"input", "target"},
              "leaderboard_gpqa": {"Question", "choice1", "choice2", "choice3", "choice4", "answer"},
              "leaderboard_math": {"problem", "solution", "answer"},
              "leaderboard_musr": {"narrative", "question", "choices", "answer_choice"},
              "leaderboard_mmlu_pro": {"question", "options", "answer", "category"},
              "leaderboard_ifeval": {"prompt", "instruction_id_list", "kwargs"},
              "leaderboard_arc_challenge": {"question", "choices", "answerKey"}}
#: the leaderboard's lower bounds (its "Scores normalization" documentation: 1 / number of choices)
LEADERBOARD_BBH_CHOICES = {
    "sports_understanding": 2, "tracking_shuffled_objects_three_objects": 3, "navigate": 2, "snarks": 2,
    "date_understanding": 6, "reasoning_about_colored_objects": 18, "object_counting": 19,
    "logical_deduction_seven_objects": 7, "geometric_shapes": 11, "web_of_lies": 2, "movie_recommendation": 6,
    "logical_deduction_five_objects": 5, "salient_translation_error_detection": 6, "disambiguation_qa": 3,
    "temporal_sequences": 4, "hyperbaton": 2, "logical_deduction_three_objects": 3, "causal_judgement": 2,
    "formal_fallacies": 2, "tracking_shuffled_objects_seven_objects": 7, "ruin_names": 6, "penguins_in_a_table": 5,
    "boolean_expressions": 2, "tracking_shuffled_objects_five_objects": 5}


def _family(task: str) -> str:
    return next(k for k in DOC_FIELDS if task == k or task.startswith(k + "_"))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ------------------------------------------------------------------ the fixtures are v2 details
def test_fixtures_cover_every_leaderboard_task():
    expected = {f"leaderboard_bbh_{s}" for s in bbh_subtasks()} | {f"leaderboard_math_{s}_hard" for s in MATH_HARD_SUBJECTS} \
        | {f"leaderboard_gpqa_{s}" for s in GPQA_SUBSETS} | {f"leaderboard_musr_{s}" for s in MUSR_SUBTASKS} \
        | {"leaderboard_ifeval", "leaderboard_mmlu_pro", "leaderboard_arc_challenge"}
    assert set(TASKS) == expected and len(expected) == 40  # 24 + 7 + 3 + 3 + 3
    groups = {g for r in results().values() for g in r.get("group_subtasks", {})}
    assert {"leaderboard_bbh", "leaderboard_gpqa", "leaderboard_math_hard", "leaderboard_musr"} <= groups


@pytest.mark.parametrize("task", TASKS)
def test_fixture_records_have_the_v2_details_fields(task):
    ts, recs = samples()[task]
    metrics = set(metric_keys(task))
    assert [r["doc_id"] for r in recs] == list(range(len(recs)))
    for r in recs:
        assert set(r) == RECORD_KEYS | metrics
        assert DOC_FIELDS[_family(task)] <= set(r["doc"])
        args = r["arguments"]
        assert list(args) == [f"gen_args_{i}" for i in range(len(args))]
        assert all(set(a) == {"arg_0", "arg_1"} for a in args.values())
        assert len({a["arg_0"] for a in args.values()}) == 1  # one prompt per document (SOURCE_FORMATS 2.2)
        assert all(isinstance(x, str) for resp in r["resps"] for x in np.ravel(np.array(resp, dtype=object)))
        # the hashes as SOURCE_FORMATS.md 3.3 defines them
        assert r["doc_hash"] == _sha(json.dumps(r["doc"], indent=2, ensure_ascii=False))
        assert r["prompt_hash"] == _sha(args["gen_args_0"]["arg_0"])
        assert r["target_hash"] == _sha(str(r["target"]))
    if _family(task) == "leaderboard_musr":
        assert all(isinstance(r["doc"]["choices"], str) and r["doc"]["choices"].startswith("[") for r in recs)
    if task == "leaderboard_ifeval":
        assert all(isinstance(r["inst_level_strict_acc"], list) for r in recs)
    assert results()[ts]["n-samples"][task]["original"] == len(recs)


def _render(task: str, doc: dict) -> str:
    if task.startswith("leaderboard_bbh_"):
        return V2_RENDERERS["lb2_bbh"]({**doc, "subscenario": task.removeprefix("leaderboard_bbh_")})
    if task == "leaderboard_mmlu_pro":
        return V2_RENDERERS["lb2_mmlu_pro"](doc, content_rows("mmlu_pro_validation")[:5])
    if task == "leaderboard_arc_challenge":
        return render_arc(doc, content_rows("arc_train")[:25])
    family = {"leaderboard_math": "lb2_math", "leaderboard_gpqa": "lb2_gpqa", "leaderboard_musr": "lb2_musr",
              "leaderboard_ifeval": "lb2_ifeval"}[_family(task)]
    return V2_RENDERERS[family](doc)


@pytest.mark.parametrize("task", TASKS)
def test_renderers_give_the_leaderboard_prompts(task):
    """Byte for byte the prompt the leaderboard's code logged (``arguments.gen_args_0.arg_0``)."""
    for r in samples()[task][1]:
        assert _render(task, r["doc"]) == r["arguments"]["gen_args_0"]["arg_0"], (task, r["doc_id"])


def test_prompt_details():
    """The quirks the renderers reproduce, seen in the leaderboard's own prompts."""
    bbh = samples()["leaderboard_bbh_boolean_expressions"][1][0]["arguments"]["gen_args_0"]["arg_0"]
    assert bbh.startswith("Evaluate the result of a random Boolean expression.Q: ")  # Jinja drops the newline
    gpqa = samples()["leaderboard_gpqa_main"][1][0]
    assert gpqa["arguments"]["gen_args_0"]["arg_0"].endswith("Answer: ")
    assert gpqa["arguments"]["gen_args_0"]["arg_1"] == " (A)"  # the continuation: "Answer:  (A)"
    musr = samples()["leaderboard_musr_murder_mysteries"][1][0]["arguments"]["gen_args_0"]["arg_0"]
    assert "\n\n1 - Alice\n2 - Bob\n\nAnswer:" in musr
    with pytest.raises(ValueError, match="shuffled"):
        V2_RENDERERS["lb2_gpqa"]({"Question": "q?", "Correct Answer": "a"})


# ------------------------------------------------------------------ weights and normalisation
def test_chance_levels_are_the_leaderboards():
    assert {s: round(1 / c) for s, c in BBH_CHANCE.items()} == LEADERBOARD_BBH_CHOICES
    assert MUSR_CHANCE == pytest.approx({"murder_mysteries": 0.5, "object_placements": 0.2, "team_allocation": 1 / 3})
    chance = {n: get_benchmark(n).configs[0].chance for n in ("tinyIFEval", "tinyMATHHard", "tinyGPQA", "tinyMMLUPro",
                                                              "tinyArcChallengeV2")}
    assert chance == {"tinyIFEval": 0.0, "tinyMATHHard": 0.0, "tinyGPQA": 0.25, "tinyMMLUPro": 0.1,
                      "tinyArcChallengeV2": None}


@pytest.mark.parametrize("name, chance", [("tinyBBH", BBH_CHANCE), ("tinyMuSR", MUSR_CHANCE)])
def test_normalisation_map_gives_the_leaderboards_mean_of_normalised_subtasks(name, chance):
    rng = np.random.default_rng(0)
    config = get_benchmark(name).configs[0]
    norm = normalization(config)
    inv = {s: 1 / (1 - c) for s, c in chance.items()}
    w = {s: v / sum(inv.values()) for s, v in inv.items()}
    for _ in range(20):
        raw = {s: c + (1 - c) * rng.random() for s, c in chance.items()}  # above chance: nothing clipped
        leaderboard = np.mean([100 * (raw[s] - c) / (1 - c) for s, c in chance.items()])
        score = sum(w[s] * raw[s] for s in chance)  # what the estimator estimates
        assert 100 * max(0.0, (score - norm["offset"]) * norm["scale"]) == pytest.approx(leaderboard)


def test_single_chance_normalisation():
    gpqa = normalization(get_benchmark("tinyGPQA").configs[0])
    assert 100 * (0.6 - gpqa["offset"]) * gpqa["scale"] == pytest.approx(46.6667, abs=1e-4)  # the docs' example
    assert normalization(get_benchmark("tinyArcChallengeV2").configs[0]) is None


# ------------------------------------------------------------------ builds from v2 details
@pytest.fixture(scope="module")
def details(tmp_path_factory):
    root = tmp_path_factory.mktemp("v2") / "details"
    write_details(root, n_models=12, seed=0)
    return root


FEW = {"tinyMMLUPro": {"validation": str(CONTENT / "mmlu_pro_validation.jsonl")},
       "tinyArcChallengeV2": {"train": str(CONTENT / "arc_train.jsonl")}}
SINGLES = ["tinyIFEval", "tinyBBH", "tinyMATHHard", "tinyGPQA", "tinyMuSR", "tinyMMLUPro", "tinyArcChallengeV2"]


@pytest.mark.parametrize("name", SINGLES)
def test_build_from_v2_details(name, details, tmp_path):
    out = build_benchmark(name, str(details), FEW.get(name), BuildOptions(version="1.0.0", anchors=4),
                          out=tmp_path / name, progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    spec = get_benchmark(name)
    config = spec.configs[0]
    info = manifest["configs"][config.name]
    assert manifest["prompt_check"][config.name]["differ"] == 0
    assert manifest["prompt_check"][config.name]["checked"] == manifest["estimators"][0]["n_items"]
    assert "content_missing" not in manifest
    rows = pd.read_parquet(out / info["splits"]["test"]["path"])
    # the registry's columns after the item_id column every split gets (issue 20.4): the estimator's ids
    assert list(rows.columns) == ["item_id", *config.columns] and len(rows) == 4
    # every row: its input_formatted is the prompt the leaderboard's code logged for that document
    est = TinyEstimator.load(out)
    for anchor, row in zip(est.anchor_ids, rows.to_dict("records")):
        sub, _, doc_id = anchor.rpartition(".")
        task = config.source_task + (f"_{sub}" if sub else "")
        rec = next(r for r in samples()[task][1] if r["doc_id"] == int(doc_id))
        assert row["input_formatted"] == rec["arguments"]["gen_args_0"]["arg_0"]
        assert int(row["doc_id"]) == rec["doc_id"] and row.get("subscenario", sub) == sub
        assert row["item_id"] == anchor
    assert f"lm_eval/{config.harness_task}.yaml" in manifest["harness_tasks"]
    _every_named_function_is_defined(out / "lm_eval")
    norm = normalization(config, {a.rpartition(".")[0] for a in est.item_ids})
    assert est.metadata.get("normalization", {}).get(config.scenario) == norm
    assert info.get("normalization") == norm
    card = (out / "README.md").read_text()
    assert "## Metric and normalisation" in card and f"`score` estimates the mean `{config.metric}`" in card


def _every_named_function_is_defined(tasks) -> set[str]:
    """Each ``!function tiny_utils_<id>.NAME`` of the task files (PyYAML may quote it) is a function of
    tiny_utils_<id>.py, the release's one functions module: lm-eval fails on the first one that is not."""
    [module] = list(tasks.glob("tiny_utils_*.py"))
    named = {m.group(1) for f in tasks.glob("*.yaml")
             for m in re.finditer(rf"!function '?{module.stem}\.(\w+)", f.read_text())}
    if named:
        # functions defined with def, or bound at module level (process_results_<task> = _processor(...))
        defined = set(re.findall(r"^(?:def (\w+)\(|(\w+) = _processor\()", module.read_text(), flags=re.M))
        defined = {a or b for a, b in defined}
        assert named <= defined, named - defined
    return named


def test_the_bundles_tasks_find_every_function_they_name(details, tmp_path):
    content = {"mmlu_pro/validation": FEW["tinyMMLUPro"]["validation"],
               "arc_challenge/train": FEW["tinyArcChallengeV2"]["train"]}
    out = build_benchmark("tinyOpenLLMLeaderboardV2", str(details), content, BuildOptions(version="1.0.0", anchors=4),
                          out=tmp_path / "bundle", progress=False)
    assert "bbh_choices" in _every_named_function_is_defined(out / "lm_eval")
    # IFEval's and MATH's lm-eval scoring runs inside our process_results (the row's value tagged with its
    # anchor id): the functions module must hold it
    [module] = list((out / "lm_eval").glob("tiny_utils_*.py"))
    defined = set(re.findall(r"^def (\w+)\(", module.read_text(), flags=re.M))
    assert {"ifeval_results", "math_results"} <= defined


@pytest.mark.parametrize("name, weighting", [("tinyBBH", "chance"), ("tinyMATHHard", "size"), ("tinyGPQA", "size"),
                                             ("tinyMuSR", "chance")])
def test_subtasks_are_weighted_as_the_leaderboard_weighs_them(name, weighting, details, tmp_path):
    out = build_benchmark(name, str(details), None, BuildOptions(version="1.0.0", anchors=4),
                          out=tmp_path / name, progress=False)
    est = TinyEstimator.load(out)
    subs = np.array([i.rpartition(".")[0] for i in est.item_ids])
    share = {s: est.balance[subs == s].sum() / est.balance.sum() for s in dict.fromkeys(subs)}
    count = {s: int((subs == s).sum()) for s in share}
    if weighting == "size":  # every item the same
        assert np.allclose(est.balance, est.balance[0])
    else:
        chance = get_benchmark(name).configs[0].chance
        inv = {s: 1 / (1 - chance[s]) for s in share}
        assert share == pytest.approx({s: v / sum(inv.values()) for s, v in inv.items()})
        assert all(np.allclose(est.balance[subs == s], est.balance[subs == s][0]) for s in share)
    assert sum(count.values()) == len(est.item_ids)


def test_bundle_from_v2_details(details, tmp_path):
    content = {"mmlu_pro/validation": FEW["tinyMMLUPro"]["validation"],
               "arc_challenge/train": FEW["tinyArcChallengeV2"]["train"]}
    out = build_benchmark("tinyOpenLLMLeaderboardV2", str(details), content, BuildOptions(version="1.0.0", anchors=4),
                          out=tmp_path / "bundle", progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    spec = get_benchmark("tinyOpenLLMLeaderboardV2")
    assert list(manifest["configs"]) == [c.name for c in spec.configs] == \
        ["ifeval", "bbh", "math_hard", "gpqa", "musr", "mmlu_pro", "arc_challenge"]
    assert all(v["differ"] == 0 and v["checked"] > 0 for v in manifest["prompt_check"].values())
    est = TinyEstimator.load(out)
    assert est.scenarios == [c.scenario for c in spec.configs] and len(est.anchor_ids) == 28
    assert set(est.metadata["normalization"]) == {"ifeval", "bbh", "math_hard", "gpqa", "musr", "mmlu_pro"}
    assert "lm_eval/tinyOpenLLMLeaderboardV2.yaml" in manifest["harness_tasks"]
    for s in est.scenarios:  # each scenario's balance weights sum to one share
        assert est.balance[est.scenario_index == est.scenarios.index(s)].sum() > 0


def test_a_chat_template_prompt_is_reported_not_hidden(details, tmp_path):
    """Details logged with a chat template hold other prompts: the build says how many differ."""
    for f in details.rglob("samples_leaderboard_musr_team_allocation_*.jsonl"):
        recs = [json.loads(line) for line in f.read_text().splitlines()]
        for r in recs:
            for a in r["arguments"].values():
                a["arg_0"] = "<|user|>\n" + a["arg_0"] + "<|assistant|>\n"
        f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    out = build_benchmark("tinyMuSR", str(details), None, BuildOptions(version="1.0.0", anchors=4),
                          out=tmp_path / "musr", progress=False)
    check = json.loads((out / "manifest.json").read_text())["prompt_check"]["default"]
    assert (check["checked"], check["differ"]) == (9, 3) and check["first_difference"]["at"] == 0


def test_harness_prompts_of_the_rows_are_the_rendered_ones():
    """render_split (the build's path) gives the same prompts as the renderers on whole splits."""
    config = get_benchmark("tinyMMLUPro").configs[0]
    docs = [r["doc"] for r in samples()["leaderboard_mmlu_pro"][1]]
    got = render_split(config, docs, {"validation": content_rows("mmlu_pro_validation")})
    assert got == [r["arguments"]["gen_args_0"]["arg_0"] for r in samples()["leaderboard_mmlu_pro"][1]]


# ------------------------------------------------------------------ the generated lm-eval tasks
def _local_dataset(task_yaml: str, folder) -> str:
    """The task file with its Hub dataset replaced by the local folder: ``dataset_path`` points at it and the
    ``dataset_kwargs`` block (the pinned revision, a Hub notion) goes, with its indented lines. Line-based, so that
    lm-eval's ``!function`` tags stay as written."""
    lines, skipping = [], False
    for line in task_yaml.splitlines():
        if skipping and line.startswith(" "):
            continue
        skipping = line.startswith("dataset_kwargs:")
        if skipping:
            continue
        lines.append(f"dataset_path: {json.dumps(str(folder))}" if line.startswith("dataset_path:") else line)
    return "\n".join(lines) + "\n"


@pytest.mark.skipif(not os.environ.get("TINYBENCH_LM_EVAL_PYTHON"), reason="set TINYBENCH_LM_EVAL_PYTHON to a python with lm-eval[ifeval,math]")
def test_lm_eval_runs_the_generated_tasks_with_the_leaderboards_requests(details, tmp_path):
    """lm-eval (``$TINYBENCH_LM_EVAL_PYTHON``, e.g. 0.4.13) runs the bundle's task files on the built folder and
    sends, for every row, the requests the leaderboard's code sent (context and continuations or
    generation settings), byte for byte."""
    content = {"mmlu_pro/validation": FEW["tinyMMLUPro"]["validation"],
               "arc_challenge/train": FEW["tinyArcChallengeV2"]["train"]}
    out = build_benchmark("tinyOpenLLMLeaderboardV2", str(details), content, BuildOptions(version="1.0.0", anchors=4),
                          out=tmp_path / "bundle", progress=False)
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for f in (out / "lm_eval").iterdir():  # the released folder, read locally instead of from the Hub
        text = f.read_text()
        if f.suffix == ".yaml":
            text = _local_dataset(text, out)
        elif f.name.startswith("tiny_utils_"):  # its estimator: the built folder's (not a download of the release)
            text = text.replace("ROOT = HERE.parent", f"ROOT = Path({str(out)!r})")
        (tasks / f.name).write_text(text)
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    run = subprocess.run([os.environ["TINYBENCH_LM_EVAL_PYTHON"], "-m", "lm_eval", "--model", "dummy", "--tasks",
                          "tinyOpenLLMLeaderboardV2", "--include_path", str(tasks), "--output_path", str(tmp_path / "o"),
                          "--log_samples"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stderr[-3000:]
    leader = {"tinyBBH": "leaderboard_bbh_{sub}", "tinyGPQA": "leaderboard_gpqa_{sub}", "tinyMuSR": "leaderboard_musr_{sub}",
              "tinyMATHHard": "leaderboard_math_{sub}", "tinyIFEval": "leaderboard_ifeval",
              "tinyMMLUPro": "leaderboard_mmlu_pro", "tinyArcChallengeV2": "leaderboard_arc_challenge"}
    n = 0
    for f in (tmp_path / "o").rglob("samples_tiny*.jsonl"):
        task = next(t for t in leader if f.name.startswith(f"samples_{t}_"))
        for line in f.read_text().splitlines():
            rec = json.loads(line)
            doc = rec["doc"]
            mine = next(r for r in samples()[leader[task].format(sub=doc.get("subscenario", ""))][1]
                        if r["doc_id"] == doc["doc_id"])
            assert [(a["arg_0"], a["arg_1"]) for a in rec["arguments"].values()] == \
                [(a["arg_0"], a["arg_1"]) for a in mine["arguments"].values()]
            n += 1
    assert n == 28


# ------------------------------------------------------------------ the real v2 matrices
@pytest.mark.realdata
@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="../shared/data is not available")
@pytest.mark.parametrize("name, matrix, n_models, n_items", [("tinyIFEval", "oll_v2_ifeval", 429, 541),
                                                             ("tinyArcChallengeV2", "oll_v2_arc_challenge", 212, 1172)])
def test_real_v2_matrices_build_ids_only(name, matrix, n_models, n_items, tmp_path):
    out = build_benchmark(name, str(SHARED_DATA / "responses" / f"{matrix}.parquet"), None,
                          BuildOptions(version="1.0.0"), out=tmp_path / name, progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    config = get_benchmark(name).configs[0]
    assert manifest["content_missing"] == [config.name] and "harness_tasks" not in manifest
    assert manifest["estimators"][0]["n_models"] == n_models and manifest["estimators"][0]["n_items"] == n_items
    rows = pd.read_parquet(out / manifest["configs"][config.name]["splits"]["test"]["path"])
    assert list(rows.columns) == ["item_id", "doc_id"] and len(rows) == 100  # item_id: every split's (issue 20.4)
    assert list(rows["item_id"]) == [str(v) for v in rows["doc_id"]] == TinyEstimator.load(out).anchor_ids
    card = (out / "README.md").read_text()
    assert "The examples' text is not included." in card and "`doc_id`" in card and "lm_eval --model" not in card
    assert "input_formatted` is the complete prompt" not in card
