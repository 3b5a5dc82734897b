"""tinybench_builder.dataset.lighteval_tasks: every build with lm-eval tasks and content gets ``lighteval/tiny_tasks.py``,
lighteval 0.13.0's custom-task format. Here the module is loaded with stand-ins for the few lighteval
classes it names (recording what it is given), so that its documents can be checked against the
lm-eval tasks' requests row by row, fast; the real lighteval runs it in tests/e2e/test_harness_downloads.py
and below (``TINYBENCH_LIGHTEVAL_PYTHON``)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from tinybench_builder.dataset.harness_tasks import utils_file
from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.layout import LIGHTEVAL_TASKS, config_anchor_ids, config_item_ids, read_manifest, verify_manifest
from helpers.builds import built, split_rows

NAMES = ("tinyMMLU", "tinyWinogrande", "tinyHellaswag", "tinyTruthfulQA", "tinyGSM8k", "tinyAI2_arc",
         "tinyOpenLLMLeaderboard", "tinyAlpacaEval")


class _Recorded:
    """A lighteval class's stand-in: keeps its arguments."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs
        self.__dict__.update(kwargs)


def _stand_ins() -> dict[str, types.ModuleType]:
    """Stand-ins for the lighteval modules the task module imports."""
    mods = {}

    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        mods[name] = m

    for pkg in ("lighteval", "lighteval.metrics", "lighteval.metrics.utils", "lighteval.tasks"):
        module(pkg)
    module("lighteval.metrics.metrics_corpus", CorpusLevelComputation=type("CorpusLevelComputation", (), {}))
    module("lighteval.metrics.metrics_sample", SampleLevelComputation=type("SampleLevelComputation", (), {}),
           AccGoldLikelihood=_Recorded, ExactMatches=_Recorded, LoglikelihoodAcc=_Recorded)
    module("lighteval.metrics.normalizations", LogProbCharNorm=_Recorded, gsm8k_normalizer=lambda s: s)
    module("lighteval.metrics.utils.metric_utils", CorpusLevelMetricGrouping=_Recorded, SampleLevelMetric=_Recorded)
    module("lighteval.tasks.lighteval_task", LightevalTaskConfig=_Recorded)
    module("lighteval.tasks.requests", Doc=_Recorded,
           SamplingMethod=types.SimpleNamespace(GENERATIVE="GENERATIVE", LOGPROBS="LOGPROBS"))
    return mods


def _load(path: Path, name: str = "tiny_tasks_test"):
    """The task module at ``path``, with the stand-ins of lighteval."""
    saved = {k: sys.modules.get(k) for k in _stand_ins()}
    sys.modules.update(_stand_ins())
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


def _lm_eval_utils(folder: Path):
    spec = importlib.util.spec_from_file_location("tiny_utils_ref", folder / utils_file(read_manifest(folder)["harness_tasks"]))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rows(folder: Path, config: str, split: str) -> list[dict]:
    return [{**r, "__index": i, "__few_shots": False} for i, r in enumerate(split_rows(folder, config, split))]


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    root = tmp_path_factory.getbasetemp() / "builds"
    return {name: built(root, name) for name in NAMES}


def test_every_build_with_lm_eval_tasks_has_its_lighteval_tasks(builds):
    for name, folder in builds.items():
        man = read_manifest(folder)
        assert verify_manifest(folder) == []
        if not man.get("harness_tasks"):
            assert "lighteval_tasks" not in man and not (folder / "lighteval").exists(), name
            continue
        assert man["lighteval_tasks"] == [LIGHTEVAL_TASKS]
        mod = _load(folder / LIGHTEVAL_TASKS)
        tasks = [c["harness_task"] for c in man["configs"].values()]
        assert sorted(t.name for t in mod.TASKS_TABLE) == sorted(tasks + [f"{t}_pool" for t in tasks])
        for cfg in mod.TASKS_TABLE:
            config = next(n for n, c in man["configs"].items() if cfg.name in (c["harness_task"], c["harness_task"] + "_pool"))
            split = "pool" if cfg.name.endswith("_pool") else man["configs"][config]["tiny_split"]
            # the rows of this folder, one commit with its estimator; the config and split of the lm-eval task
            assert (cfg.hf_repo, cfg.hf_subset, cfg.hf_revision) == (str(folder), config, None)
            assert cfg.evaluation_splits == [split] and cfg.few_shots_split is None
        if name == "tinyAI2_arc":  # the card shows the lighteval block
            card = (folder / "README.md").read_text()
            assert "### lighteval" in card and f'--custom-tasks "$path/{LIGHTEVAL_TASKS}"' in card


def test_documents_are_the_lm_eval_tasks_requests(builds):
    """Each row's document asks what the lm-eval task asks: the same prompt and the choices with lm-eval's
    delimiter (lighteval scores choice given query), the same gold; Winogrande in lighteval's form, whose
    query + choice is lm-eval's context + continuation; every document carries its anchor id."""
    kinds = set()
    for name in ("tinyMMLU", "tinyWinogrande", "tinyHellaswag", "tinyTruthfulQA", "tinyGSM8k", "tinyAI2_arc",
                 "tinyOpenLLMLeaderboard"):
        folder = builds[name]
        man = read_manifest(folder)
        mod, ref = _load(folder / LIGHTEVAL_TASKS), _lm_eval_utils(folder)
        est = TinyEstimator.load(folder)
        for config, c in man["configs"].items():
            task = c["harness_task"]
            cfg, lm = mod.TASKS[task], ref.TASKS[task]
            kinds.add(cfg["kind"])
            prompt = next(t for t in mod.TASKS_TABLE if t.name == task).prompt_function
            anchors = config_anchor_ids(est, c["scenario"])
            for r, row in enumerate(_rows(folder, config, c["tiny_split"])):
                doc = prompt(row, f"{task}|0")
                assert doc.specific["item_id"] == anchors[r] and doc.specific["design"] == man["design"]["configs"][config]
                if cfg["kind"] == "winogrande":
                    contexts, continuation = ref._choices(lm, row), " " + ref._target(lm, row)
                    assert [doc.query + ch for ch in doc.choices] == [ctx + continuation for ctx in contexts]
                    assert doc.gold_index == ref._resolve(lm["gold"], row)
                    continue
                assert doc.query == row["input_formatted"]
                if cfg["kind"] == "choice":
                    choices = ref._choices(lm, row)
                    assert doc.choices == [" " + ch for ch in choices]
                    lls = [(-1.0 if i == doc.gold_index else -9.0, False) for i in range(len(choices))]
                    assert ref._score(lm, row, lls) == 1.0  # lm-eval's scoring agrees on the gold
                elif cfg["kind"] == "mc2":
                    mc1, mc2 = row["mc1_targets"], row["mc2_targets"]
                    assert doc.choices == [" " + ch for ch in mc1["choices"] + mc2["choices"]]
                    assert doc.specific["len_mc1"] == len(mc1["choices"])
                    assert doc.gold_index == [i for i, x in enumerate(mc1["labels"] + mc2["labels"]) if x == 1]
                elif cfg["kind"] == "gsm8k":
                    assert doc.choices == [" " + row["answer"]] and cfg["until"] == ["Question:", "</s>", "<|im_end|>"]
    assert kinds == {"choice", "winogrande", "mc2", "gsm8k"}


def test_the_estimate_is_the_release_estimate_of_the_rows_answered_in_any_order(builds):
    folder = builds["tinyGSM8k"]
    man = read_manifest(folder)
    mod = _load(folder / LIGHTEVAL_TASKS)
    task = man["configs"]["main"]["harness_task"]
    est = TinyEstimator.load(folder)
    rng = np.random.default_rng(0)
    values = (rng.random(len(est.anchor_ids)) < 0.5).astype(float)
    items = [{"item": a, "value": float(v)} for a, v in zip(est.anchor_ids, values)]
    [metric] = next(t for t in mod.TASKS_TABLE if t.name == task).metrics
    estimate = metric.corpus_level_fn["score"]
    for subset in (items, [items[i] for i in rng.permutation(len(items))[:4]]):
        want = est.estimate({it["item"]: it["value"] for it in subset})
        got = estimate.compute_corpus(list(reversed(subset)))
        assert got == {"score": want["score"], "score_ci_low": want["ci_low"], "score_ci_high": want["ci_high"]}
    with pytest.raises(ValueError, match="two different results"):
        estimate.compute_corpus(items + [{"item": items[0]["item"], "value": 1.0 - items[0]["value"]}])
    # another release's rows are refused, naming the cause (the row -> anchor table of this release, by the
    # row's key column: its item id)
    row = _rows(folder, "main", "test")[0]
    prompt = next(t for t in mod.TASKS_TABLE if t.name == task).prompt_function
    key = mod.TASKS[task]["key"]
    with pytest.raises(ValueError, match="not a row of this tiny dataset.*another release"):
        prompt({**row, key: f"{row[key]} of another release"}, task)


def test_the_pool_task_tags_rows_with_their_items_and_evaluates_chosen_rows(builds, monkeypatch):
    folder = builds["tinyOpenLLMLeaderboard"]
    man = read_manifest(folder)
    mod = _load(folder / LIGHTEVAL_TASKS)
    est = TinyEstimator.load(folder)
    c = man["configs"]["mmlu"]
    pool = next(t for t in mod.TASKS_TABLE if t.name == c["harness_task"] + "_pool")
    rows = _rows(folder, "mmlu", "pool")
    assert [pool.prompt_function(r).specific["item_id"] for r in rows] == config_item_ids(est, c["scenario"])
    mod.select_rows(pool.name, [1, 3])
    assert [r["__index"] for r in rows if pool.prompt_function(r) is not None] == [1, 3]
    mod.select_rows(pool.name, None)
    monkeypatch.setenv("TINYBENCH_POOL_ROWS", f"other_pool=0;{pool.name}=2,4")
    assert [r["__index"] for r in rows if pool.prompt_function(r) is not None] == [2, 4]


def test_used_alone_the_tasks_read_the_repository_at_the_tag(builds, tmp_path):
    folder = builds["tinyMMLU"]
    man = read_manifest(folder)
    alone = tmp_path / "tiny_tasks.py"
    shutil.copy(folder / LIGHTEVAL_TASKS, alone)
    mod = _load(alone, "tiny_tasks_alone")
    assert {(t.hf_repo, t.hf_revision) for t in mod.TASKS_TABLE} == {(man["repo_id"], man["tag"])}


LIGHTEVAL_PYTHON = os.environ.get("TINYBENCH_LIGHTEVAL_PYTHON")


@pytest.mark.slow
@pytest.mark.skipif(not LIGHTEVAL_PYTHON, reason="set TINYBENCH_LIGHTEVAL_PYTHON to a Python with lighteval 0.13.0 "
                                                 "(CONTRIBUTING.md)")
def test_lighteval_scores_the_bundles_rows_with_the_benchmarks_metrics(builds, tmp_path):
    """The real lighteval (``lighteval custom`` with the stand-in model of tests/helpers/lighteval_model.py) runs
    the six tasks of the tinyOpenLLMLeaderboard build: each row's value is the benchmark's metric of the
    logged log-likelihoods or generation (recomputed here from the details), each task's score is the
    release's estimate of its rows, and `estimate` on the details gives the same numbers."""
    from tinybench_builder.estimate.harness_logs import estimate_from_logs
    import pandas as pd

    folder = builds["tinyOpenLLMLeaderboard"]
    man = read_manifest(folder)
    helpers = Path(__file__).resolve().parents[1] / "helpers"
    tasks = [c["harness_task"] for c in man["configs"].values()]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env.update(PYTHONPATH=str(helpers / "lighteval_site"), HOME=str(tmp_path / "home"), HF_HOME=str(tmp_path / "hf"),
               HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([str(Path(LIGHTEVAL_PYTHON).with_name("lighteval")), "custom", "stand-in",
                           str(helpers / "lighteval_model.py"), ",".join(f"{t}|0" for t in tasks),
                           "--custom-tasks", str(folder / LIGHTEVAL_TASKS), "--output-dir", str(tmp_path / "out"),
                           "--save-details"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [res] = list((tmp_path / "out").rglob("results_*.json"))
    results = json.loads(res.read_text())["results"]
    est = TinyEstimator.load(folder)
    for c in man["configs"].values():
        task = c["harness_task"]
        [details] = list((tmp_path / "out").rglob(f"details_{task}|0_*.parquet"))
        recs = pd.read_parquet(details).to_dict("records")
        assert len(recs) == len(config_anchor_ids(est, c["scenario"]))
        for rec in recs:
            doc, resp, value = rec["doc"], rec["model_response"], rec["metric"]["anchor_mean"]
            lls = np.asarray(resp["logprobs"], dtype=float)
            if c["renderer"] == "gsm8k":
                want = float(resp["text"][0].split("#### ")[-1] == doc["choices"][0].split("#### ")[-1].strip())
            elif c["renderer"] == "truthfulqa":
                n1 = doc["specific"]["len_mc1"]
                p = np.exp(lls[n1:])
                n_true = sum(1 for g in doc["gold_index"][1:] if g >= n1)
                want = float(p[:n_true].sum() / p.sum())
            else:
                if c["harness_metric"] == "acc_norm":
                    lls = lls / np.array([len(ch) - 1 if ch.startswith(" ") else len(ch) for ch in doc["choices"]])
                gold = np.atleast_1d(doc["gold_index"])
                want = float(int(np.argmax(lls)) in set(gold.tolist()))
            assert value == pytest.approx(want), (task, doc["query"][:60])
        # a task's estimate is of its own rows (the bundle's estimator, this config's anchors answered)
        scores = est.estimate({r["doc"]["specific"]["item_id"]: r["metric"]["anchor_mean"] for r in recs})
        mine = scores["scenarios"][c["scenario"]]
        assert results[f"{task}|0"]["score"] == pytest.approx(mine["score"], abs=1e-12)
        frame, _ = estimate_from_logs(folder, tmp_path / "out", task=task)
        assert frame[f"{c['scenario']}.score"][0] == results[f"{task}|0"]["score"]
    assert 0 < np.mean([results[f"{t}|0"]["anchor_mean"] for t in tasks]) < 1


def test_the_leaderboard_v2_bundle_documents(tmp_path):
    """The v2 bundle's tasks: BBH's continuations per subtask and MMLU-Pro's letters (as lm-eval's), IFEval's
    instructions for lighteval's checks, MATH-hard's answer as the gold to extract."""
    from tinybench_builder.dataset import BuildOptions, build_benchmark
    from helpers.leaderboard_v2 import CONTENT, write_details

    write_details(tmp_path / "details", n_models=12, seed=0)
    content = {"mmlu_pro/validation": str(CONTENT / "mmlu_pro_validation.jsonl"),
               "arc_challenge/train": str(CONTENT / "arc_train.jsonl")}
    folder = build_benchmark("tinyOpenLLMLeaderboardV2", str(tmp_path / "details"), content,
                             BuildOptions(version="1.0.0", anchors=4), out=tmp_path / "bundle", progress=False)
    man = read_manifest(folder)
    mod, ref = _load(folder / LIGHTEVAL_TASKS), _lm_eval_utils(folder)
    kinds = {}
    for config, c in man["configs"].items():
        task = c["harness_task"]
        cfg, lm = mod.TASKS[task], ref.TASKS[task]
        kinds[c["renderer"]] = cfg["kind"]
        prompt = next(t for t in mod.TASKS_TABLE if t.name == task).prompt_function
        for row in _rows(folder, config, c["tiny_split"]):
            doc = prompt(row, f"{task}|0")
            assert doc.query == row["input_formatted"]
            if cfg["kind"] == "choice":
                assert doc.choices == [" " + ch for ch in ref._choices(lm, row)]
            elif cfg["kind"] == "ifeval":
                assert doc.specific["instructions_id_list"] == list(row["instruction_id_list"]) and doc.choices == [""]
                assert len(doc.specific["kwargs"]) == len(row["instruction_id_list"])
            elif cfg["kind"] == "math":
                assert doc.choices == [f"${row['answer']}$"]
                assert (cfg["until"], cfg["max_tokens"]) == (["Problem:"], 1024)
    assert kinds == {"lb2_ifeval": "ifeval", "lb2_bbh": "choice", "lb2_math": "math", "lb2_gpqa": "choice",
                     "lb2_musr": "choice", "lb2_mmlu_pro": "choice", "arc": "choice"}
    card = (folder / "README.md").read_text()
    assert '"lm-eval[hf,ifeval,math]"' in card and "numpy scipy langdetect" in card
