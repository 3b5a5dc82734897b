"""tinybench_builder.dataset.harness_tasks: `build` writes the lm-evaluation-harness task files of the tiny dataset
(lm_eval/<task>.yaml, pinned to the release tag), and the functions they name reproduce the
harness requests of the rows."""

from __future__ import annotations

import hashlib
import importlib.util
import json

import numpy as np
import pytest
import yaml

from tinybench_builder.registry import prompts
from tinybench_builder.registry.benchmarks import get_benchmark
from tinybench_builder.dataset.harness_tasks import (ANCHOR_MEAN, HARNESS_DIR, LM_EVAL_TINY_TASKS, TASK_SUFFIX, task_files,
                                                     utils_file, utils_module)
from tinybench_builder.layout import read_manifest, verify_manifest
from helpers.builds import built, read_split, split_rows


class _Loader(yaml.SafeLoader):
    """yaml with lm-eval's ``!function`` tag (kept as the text)."""


_Loader.add_constructor("!function", lambda loader, node: ("function", loader.construct_scalar(node)))


def _load(folder, rel):
    return yaml.load((folder / rel).read_text(encoding="utf-8"), Loader=_Loader)


def _module(folder):
    """The name of the folder's lm-eval functions module (one per release: ``tiny_utils_<id>``)."""
    man = read_manifest(folder)
    return utils_module(man["repo_id"], man["tag"])


def _utils(folder):
    rel = utils_file(read_manifest(folder)["harness_tasks"])
    assert rel == f"{HARNESS_DIR}/{_module(folder)}.py"
    spec = importlib.util.spec_from_file_location("tiny_utils_test", folder / rel)
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
            # never the name of one of lm-eval's own tasks: ours carry a suffix; theirs are still read
            assert c["harness_task"] == c["harness_builtin_task"] + TASK_SUFFIX
            assert c["harness_task"] not in LM_EVAL_TINY_TASKS and c["harness_builtin_task"] in LM_EVAL_TINY_TASKS
            assert (task["dataset_path"], task["dataset_kwargs"]) == (man["repo_id"], {"revision": man["tag"]})
            assert task["test_split"] == c["tiny_split"] and task["num_fewshot"] == 0
            # the table shows the estimate and its interval (our aggregation) and the plain anchor mean
            module = _module(folder)
            assert task["metric_list"] == [
                {"metric": "score", "aggregation": ("function", f"{module}.agg_score"), "higher_is_better": True},
                {"metric": "score_ci_low", "aggregation": ("function", f"{module}.agg_ci_low"),
                 "higher_is_better": True},
                {"metric": "score_ci_high", "aggregation": ("function", f"{module}.agg_ci_high"),
                 "higher_is_better": True},
                {"metric": ANCHOR_MEAN, "aggregation": "mean", "higher_is_better": True}]
            fn = task["process_results"][1].split(".", 1)[1]
            assert callable(getattr(_utils(folder), fn))
    assert not (builds["tinyAlpacaEval"] / HARNESS_DIR).exists()  # no harness task
    group = _load(builds["tinyOpenLLMLeaderboard"], f"{HARNESS_DIR}/tinyOpenLLMLeaderboard.yaml")
    assert group["group"] == "tinyOpenLLMLeaderboard" and len(group["task"]) == 6
    assert all(t.endswith(TASK_SUFFIX) for t in group["task"])
    mmlu = _load(builds["tinyMMLU"], f"{HARNESS_DIR}/tinyMMLU_tb.yaml")
    assert mmlu["doc_to_text"] == "{{input_formatted}}" and mmlu["doc_to_choice"] == ["A", "B", "C", "D"]
    assert mmlu["dataset_name"] == "all" and mmlu["doc_to_target"] == "answer"
    gsm = _load(builds["tinyGSM8k"], f"{HARNESS_DIR}/tinyGSM8k_tb.yaml")
    assert gsm["output_type"] == "generate_until"
    assert [f["name"] for f in gsm["filter_list"]] == ["strict-match", "flexible-extract"]
    assert _utils(builds["tinyGSM8k"]).TASKS["tinyGSM8k_tb"]["match"]["regexes_to_ignore"] == [
        ",", "\\$", "(?s).*#### ", "\\.$"]


def test_winogrande_functions_give_the_harness_requests(builds):
    folder = builds["tinyWinogrande"]
    task = _load(folder, f"{HARNESS_DIR}/tinyWinogrande_tb.yaml")
    assert task["doc_to_choice"] == ("function", f"{_module(folder)}.winogrande_choices")
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

    from tinybench_builder.registry.specs import spec_from_mapping

    spec = spec_from_mapping({"name": "tinyX", "license": "mit", "citation": "@misc{x, title={X}}",
                              "prompt": "Q: {{ question }}\nA:",
                              "harness": {"output_type": "generate_until", "doc_to_target": "{{ answer }}",
                                          "metric": "exact_match", "until": ["\n"]}})
    config = dataclasses.replace(spec.configs[0])
    files = task_files(spec, {config.name: {"tiny_split": "test"}}, "me/tinyX", "v2.0.0", "2.0.0")
    assert list(files) == [f"{HARNESS_DIR}/tinyX.yaml", f"{HARNESS_DIR}/{utils_module('me/tinyX', 'v2.0.0')}.py"]
    task = yaml.load(files[f"{HARNESS_DIR}/tinyX.yaml"], Loader=_Loader)
    assert task["task"] == "tinyX" and task["dataset_path"] == "me/tinyX" and task["dataset_name"] == "default"
    assert task["doc_to_text"] == "{{input_formatted}}" and task["doc_to_target"] == "{{ answer }}"
    assert task["generation_kwargs"]["until"] == ["\n"]
    assert [m["metric"] for m in task["metric_list"]] == ["score", "score_ci_low", "score_ci_high", ANCHOR_MEAN]
    # no [harness] table: no task file
    plain = spec_from_mapping({"name": "tinyY", "license": "mit", "citation": "@misc{y, title={Y}}"})
    assert task_files(plain, {"default": {"tiny_split": "test"}}, "me/tinyY", "v1.0.0", "1.0.0") == {}
    assert json.loads(json.dumps(get_benchmark("tinyMMLU").configs[0].harness_metric)) == "acc_norm"


def _mc_results(doc, choices, pick, rng):
    """lm-eval's multiple_choice results: (log-likelihood, is_greedy) per choice, ``pick`` the most likely."""
    lls = -rng.uniform(5.0, 9.0, len(choices))
    lls[pick] = -1.0
    return [(float(x), bool(i == pick)) for i, x in enumerate(lls)]


def _run_task(folder, task, rows, rng):
    """What lm-eval gives the task's functions: process_results on every row (doc), a random choice."""
    utils = _utils(folder)
    cfg = utils.TASKS[task]
    fn = getattr(utils, f"process_results_{task}")
    out = []
    for doc in rows:
        if cfg["scoring"] == "exact_match":
            results = [rng.choice([doc["answer"].split("#### ")[-1], "12345"])]
        else:
            choices = utils._choices(cfg, doc)
            results = _mc_results(doc, choices, int(rng.integers(len(choices))), rng)
        out.append(fn(doc, results))
    return utils, out


@pytest.mark.parametrize("name, config, split", [("tinyMMLU", "all", "test"), ("tinyGSM8k", "main", "test"),
                                                 ("tinyWinogrande", "winogrande_xl", "validation"),
                                                 ("tinyAI2_arc", "ARC-Challenge", "test")])
def test_the_aggregation_is_the_estimate_of_the_answered_rows_in_any_order(builds, name, config, split):
    """lm-eval's table shows `score`: the release's estimator on the rows answered, whatever their order
    (data-parallel runs interleave them) and however many (`--limit`)."""
    from tinybench_builder.estimator import TinyEstimator

    folder = builds[name]
    task = read_manifest(folder)["configs"][config]["harness_task"]
    rows = split_rows(folder, config, split)
    rng = np.random.default_rng(0)
    utils, per_row = _run_task(folder, task, rows, rng)
    est = TinyEstimator.load(folder)
    anchors = est.anchor_ids
    assert [r["score"][1] for r in per_row] == anchors  # row r is anchor r
    truth = {a: r["anchor_mean"] for a, r in zip(anchors, per_row)}
    want = est.estimate(truth)
    items = [r["score"] for r in per_row]
    order = rng.permutation(len(items))
    for agg, key in ((utils.agg_score, "score"), (utils.agg_ci_low, "ci_low"), (utils.agg_ci_high, "ci_high")):
        assert agg([items[i] for i in order]) == pytest.approx(want[key], abs=1e-12)
        assert isinstance(agg(items), float)
    # the first rows (lm_eval --limit 3): the estimate of those, with its (wider) interval
    part = est.estimate(dict(list(truth.items())[:3]))
    assert part["se"] > want["se"]
    for agg, key in ((utils.agg_score, "score"), (utils.agg_ci_low, "ci_low"), (utils.agg_ci_high, "ci_high")):
        assert agg(items[:3]) == pytest.approx(part[key], abs=1e-12)
    # values logged as JSON lists (samples_*.jsonl) aggregate the same
    assert utils.agg_score([list(it) for it in items]) == pytest.approx(want["score"], abs=1e-12)
    with pytest.raises(ValueError, match="two different results"):
        utils.agg_score(items + [(task, anchors[0], 1.0 - items[0][2])])
    fn = getattr(utils, f"process_results_{task}")
    with pytest.raises(ValueError, match="not a row of this tiny dataset"):
        fn({k: (v + " (edited)" if isinstance(v, str) else v) for k, v in rows[0].items()}, [(-1.0, True)] * 4)


def test_a_bundle_task_reports_its_own_benchmark(builds):
    from tinybench_builder.estimator import TinyEstimator

    folder = builds["tinyOpenLLMLeaderboard"]
    man = read_manifest(folder)
    c = man["configs"]["mmlu"]
    rows = split_rows(folder, "mmlu", c["tiny_split"])
    utils, per_row = _run_task(folder, c["harness_task"], rows, np.random.default_rng(1))
    est = TinyEstimator.load(folder)
    want = est.estimate({r["score"][1]: r["anchor_mean"] for r in per_row})["scenarios"][c["scenario"]]
    assert utils.agg_score([r["score"] for r in per_row]) == pytest.approx(want["score"], abs=1e-12)


def test_logged_samples_aggregate_as_builder_estimate_reads_them(builds, tmp_path):
    """The per-row values lm-eval logs (samples_<task>.jsonl) give the same score through the task's
    aggregation as through `tinybench-builder estimate` on those logs."""
    from tinybench_builder.estimate.harness_logs import estimate_from_logs
    from helpers.sources import write_lm_eval_run

    folder = builds["tinyMMLU"]
    task = read_manifest(folder)["configs"]["all"]["harness_task"]
    rows = split_rows(folder, "all", "test")
    rng = np.random.default_rng(3)
    utils, per_row = _run_task(folder, task, rows, rng)
    keep = rng.permutation(len(rows))[:len(rows) // 2 + 1]  # a partial run, out of order
    recs = []
    for i in keep:
        doc = rows[i]
        rec = {"doc_id": int(i), "doc": doc, "target": str(doc["answer"]), "arguments": {}, "resps": [],
               "filtered_resps": [], "filter": "none", "metrics": list(per_row[i])}
        rec.update(json.loads(json.dumps(per_row[i])))  # tuples are logged as lists
        recs.append(rec)
    write_lm_eval_run(tmp_path / "logs", "org/model", {task: recs})
    frame, notes = estimate_from_logs(folder, tmp_path / "logs")
    assert frame["n_answered"][0] == len(keep) < len(rows), notes
    logged = [r["score"] for r in recs]
    assert utils.agg_score(logged) == pytest.approx(frame["score"][0], abs=1e-12)
    assert utils.agg_ci_low(logged) == pytest.approx(frame["ci_low"][0], abs=1e-12)


def test_task_names_never_replace_lm_evals_own(tmp_path, monkeypatch):
    """A custom task named like one of lm-eval's is refused, saying how to choose another; with lm-eval
    installed, every name it has is checked."""
    import sys
    import types

    from tinybench_builder.errors import BuildError
    from tinybench_builder.dataset.harness_tasks import check_task_names
    from tinybench_builder.registry.specs import SpecError, spec_from_mapping

    base = {"name": "tinyX", "license": "mit", "citation": "@misc{x, title={X}}", "prompt": "{{ q }}"}
    with pytest.raises(SpecError, match=r"'tinyGSM8k' is one of lm-evaluation-harness's own tasks.*task = "):
        spec_from_mapping({**base, "harness": {"task": "tinyGSM8k", "doc_to_target": "a", "doc_to_choice": ["x"]}})
    with pytest.raises(SpecError, match="metric of a multiple_choice task must be one of acc, acc_norm"):
        spec_from_mapping({**base, "harness": {"doc_to_target": "a", "doc_to_choice": ["x"], "metric": "f1"}})
    check_task_names(["tinyX"])  # lm-eval is not installed here: the static list only
    fake = types.ModuleType("lm_eval.tasks")

    class TaskManager:
        all_tasks = ["mmlu", "arc_easy"]

    fake.TaskManager = TaskManager
    monkeypatch.setitem(sys.modules, "lm_eval", types.ModuleType("lm_eval"))
    monkeypatch.setitem(sys.modules, "lm_eval.tasks", fake)
    with pytest.raises(BuildError, match="already has a task named 'mmlu'"):
        check_task_names(["mmlu", "tinyX"])
    check_task_names(["tinyX"])
    check_task_names(["mmlu"], installed=False)


LM_EVAL_PYTHON = __import__("os").environ.get("TINYBENCH_LM_EVAL_PYTHON")


@pytest.mark.slow
@pytest.mark.skipif(not LM_EVAL_PYTHON, reason="set TINYBENCH_LM_EVAL_PYTHON to a Python with lm-evaluation-harness")
def test_rows_are_scored_as_lm_eval_scores_them(builds, tmp_path):
    """lm-eval itself runs every registered task file on the built rows (read from the folder's parquet),
    once as written (our process_results: `anchor_mean`) and once with lm-eval's own scoring (its acc /
    acc_norm / exact_match of the same requests, with a model whose answers depend only on the request):
    every row gets the same value, under every filter."""
    import subprocess

    include = tmp_path / "tasks"
    include.mkdir()
    pairs = {}
    for name, folder in builds.items():
        man = read_manifest(folder)
        for config, c in man["configs"].items():
            if not c.get("harness_task") or c["harness_task"] in pairs:  # (the bundle repeats the names)
                continue
            text = (folder / HARNESS_DIR / f"{c['harness_task']}.yaml").read_text()
            split = c["splits"][c["tiny_split"]]["path"]
            sub = include / f"{name}_{config}"
            sub.mkdir()
            module = _module(folder)
            (sub / f"{module}.py").write_text((folder / HARNESS_DIR / f"{module}.py").read_text()
                                              .replace("ROOT = HERE.parent", f"ROOT = Path({str(folder)!r})"))
            local = (f"dataset_path: parquet\ndataset_name: null\n"
                     f"dataset_kwargs: {json.dumps({'data_files': {c['tiny_split']: str(folder / split)}})}\n")
            # the Hub dataset lines go, with the indented lines of the dataset_kwargs block (PyYAML writes
            # it as a block: `dataset_kwargs:` then `  revision: ...`)
            kept, skipping = [], False
            for line in text.splitlines():
                if skipping and line.startswith(" "):
                    continue
                skipping = line.startswith("dataset_kwargs:")
                if not line.startswith(("dataset_path:", "dataset_name:", "dataset_kwargs:")):
                    kept.append(line)
            ours = "\n".join(kept)
            (sub / "ours.yaml").write_text(local + ours + "\n")
            # lm-eval's own scoring of the same requests: no process_results, its metrics
            cfg = _utils(folder).TASKS[c["harness_task"]]
            metric = {"metric": cfg["metric"], "aggregation": "mean", "higher_is_better": True, **cfg.get("match", {})}
            ref_lines, in_metrics = [], False
            for line in ours.splitlines():
                if in_metrics and line.startswith(("  ", "- ")):  # the metric list's items (PyYAML: "- ...")
                    continue
                in_metrics = line.startswith("metric_list:")
                if line.startswith("task:"):
                    line = f"task: ref_{c['harness_task']}"
                elif in_metrics:
                    line = "metric_list:\n  - " + json.dumps(metric)
                if not line.startswith("process_results:"):
                    ref_lines.append(line)
            ref = local + "\n".join(ref_lines) + "\n"
            if cfg["scoring"] == "function":  # the task's own process_results (TruthfulQA mc2, ...)
                ref += f"process_results: !function {module}.{cfg['function']}\n"
            (sub / "ref.yaml").write_text(ref)
            pairs[c["harness_task"]] = cfg["metric"]
    script = tmp_path / "run.py"
    script.write_text(_DETERMINISTIC_RUN)
    proc = subprocess.run([LM_EVAL_PYTHON, str(script), str(include), json.dumps(sorted(pairs))],
                          env={**__import__("os").environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"},
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    for task, metric in pairs.items():
        ours = {key: r[ANCHOR_MEAN] for key, r in got["samples"][task].items()}
        ref = {key: float(r[metric]) for key, r in got["samples"][f"ref_{task}"].items()}
        assert ours.keys() == ref.keys() and ours == pytest.approx(ref), task
        assert 0 < np.mean(list(ours.values())) < 1, task  # both outcomes occur: the comparison means something
        assert {"score", "score_ci_low", "score_ci_high", ANCHOR_MEAN} <= set(got["table"][task]), task


#: run in lm-eval's Python: the tasks (ours and the reference copies) with a model whose answers are a
#: function of the request (the dummy model's are random, so two tasks would not see the same answers)
_DETERMINISTIC_RUN = r"""
import hashlib, json, re, sys
from lm_eval import simple_evaluate
from lm_eval.api.model import LM
from lm_eval.tasks import TaskManager


def h(*parts):
    return int(hashlib.sha256("\x00".join(map(str, parts)).encode()).hexdigest()[:8], 16) / 2**32


class Deterministic(LM):
    def loglikelihood(self, requests, disable_tqdm=False):
        return [(-5 * h(*r.args), h(*r.args) > 0.6) for r in requests]

    def loglikelihood_rolling(self, requests, disable_tqdm=False):
        return [-h(*r.args) for r in requests]

    def generate_until(self, requests, disable_tqdm=False):
        out = []
        for r in requests:
            asked = re.findall(r"what is (\d+) plus (\d+)", r.args[0])  # the last question is the row's
            right = int(asked[-1][0]) + int(asked[-1][1]) if asked else 0
            out.append(f"So it is {right}. #### {right}" if h(r.args[0]) > 0.5 else f"It is {right + 1}, or 3.")
        return out


include, tasks = sys.argv[1], json.loads(sys.argv[2])
res = simple_evaluate(model=Deterministic(), tasks=tasks + ["ref_" + t for t in tasks],
                      task_manager=TaskManager(include_path=include), log_samples=True, bootstrap_iters=0)
samples = {t: {f"{r['doc_id']}|{r.get('filter', 'none')}": {k: v for k, v in r.items() if isinstance(v, (int, float))}
               for r in recs} for t, recs in res["samples"].items()}
table = {t: sorted({k.split(",")[0] for k in v if "," in k}) for t, v in res["results"].items()}
print(json.dumps({"samples": samples, "table": table}))
"""


def test_the_functions_module_finds_its_release_through_a_link(builds, tmp_path):
    """In the Hub cache every file is a symbolic link into ``blobs/``: the module's release folder is the
    snapshot holding the link (its estimator.py and side files), not the folder of the blob."""
    folder = builds["tinyMMLU"]
    rel = utils_file(read_manifest(folder)["harness_tasks"])
    blobs, snapshot = tmp_path / "blobs", tmp_path / "snapshots" / "0123abcd"
    blobs.mkdir()
    (snapshot / "lm_eval").mkdir(parents=True)
    for f in (rel, "estimator.py", "estimator.json", "irt_parameters.npz", "manifest.json"):
        blob = blobs / hashlib.sha256(f.encode()).hexdigest()
        blob.write_bytes((folder / f).read_bytes())
        (snapshot / f).symlink_to(blob)
    spec = importlib.util.spec_from_file_location("tiny_utils_linked", snapshot / rel)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.ROOT == snapshot and mod._release_root("") == snapshot  # no download: the snapshot's own files
    est = mod._estimator("")
    assert list(est.anchor_ids) == read_split(folder, "all", "test")["item_id"].tolist()
    # the estimator is loaded without writing bytecode (the module's own is the command's affair:
    # PYTHONDONTWRITEBYTECODE=1, tests/e2e/test_harness_downloads.py)
    assert not (snapshot / "__pycache__").exists()
