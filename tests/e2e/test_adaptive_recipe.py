"""docs/adaptive_lm_eval.py, the lm-evaluation-harness recipe of adaptive evaluation, run against a
stand-in ``lm_eval`` package (the real one is not a test dependency; the recipe was run with
lm-eval 0.4.13 and its dummy model, docs/ADAPTIVE.md): it maps the pool task's doc ids to the
estimator's items, reads the configured filter and metric, and the exact score of the answers it was given."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.layout import config_item_ids, read_manifest, verify_manifest
from helpers.builds import ROOT, built

STUB = {
    "lm_eval/__init__.py": '''
        import json, os

        CALLS = []

        def simple_evaluate(model, tasks, task_manager, samples, log_samples, bootstrap_iters, cache_requests):
            assert log_samples and bootstrap_iters == 0 and cache_requests is False
            answers = json.load(open(os.environ["STUB_ANSWERS"]))
            out = {}
            for t in tasks:
                rows = samples[t]
                assert rows == sorted(set(rows)) and rows, rows  # lm-eval's rules for samples=
                recs = []
                for r in rows:
                    y = answers[t][str(r)]
                    for filt, v in (("flexible-extract", 1 - y), ("strict-match", y)):  # two filters, as GSM8K
                        recs.append({"doc_id": r, "filter": filt, "acc": v, "acc_norm": v, "exact_match": v})
                out[t] = recs
            CALLS.append(samples)
            return {"samples": out, "results": {}}
    ''',
    "lm_eval/api/__init__.py": "",
    "lm_eval/api/registry.py": '''
        class _LM:
            @classmethod
            def create_from_arg_string(cls, arg):
                return cls()

        def get_model(name):
            return _LM
    ''',
    "lm_eval/tasks/__init__.py": '''
        class TaskManager:
            def __init__(self, include_defaults=True, include_path=None):
                assert include_defaults is False and include_path
    ''',
}


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.getbasetemp() / "builds"


@pytest.mark.parametrize("name", ["tinyGSM8k", "tinyOpenLLMLeaderboard"])
def test_recipe_maps_doc_ids_to_items_and_reads_the_right_filter(name, root, tmp_path):
    folder = built(root, name)
    manifest = read_manifest(folder)
    est = TinyEstimator.load(folder)
    rng = np.random.default_rng(0)
    answers, truth = {}, {}
    for info in manifest["configs"].values():
        task = info["harness_task"] + "_pool"
        items = config_item_ids(est, info["scenario"])
        y = (rng.random(len(items)) < 0.6).astype(int)
        answers[task] = {str(j): int(v) for j, v in enumerate(y)}
        truth.update(dict(zip(items, y.astype(float))))
    for rel, text in STUB.items():
        p = tmp_path / "stub" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    (tmp_path / "answers.json").write_text(json.dumps(answers))
    env = {"PYTHONPATH": str(tmp_path / "stub"), "STUB_ANSWERS": str(tmp_path / "answers.json"), "PATH": "/usr/bin"}
    budget, batch = 30, 7
    run = subprocess.run([sys.executable, str(ROOT / "docs" / "adaptive_lm_eval.py"), str(folder), "--model", "dummy",
                          "--budget", str(budget), "--batch", str(batch)], capture_output=True, text=True,
                         env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert verify_manifest(folder) == []  # the recipe left nothing in the release folder (no __pycache__)
    result = json.loads(run.stdout[run.stdout.index("{"):])
    # the same session in process, answered by item id: the same draws and the same results only if
    # every doc id was mapped to its item and the strict-match record was read
    s = est.adaptive(budget=budget, seed=0)
    while not s.done:
        s.record({i: truth[i] for i in s.next_items(batch)})
    assert result == json.loads(json.dumps(s.result()))
    assert result["done"] and result["n_asked"] == budget
