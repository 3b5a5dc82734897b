"""Small source trees for the engine tests of ``ingest`` (local pool vs Dask), in the on-disk
formats of SOURCE_FORMATS.md, with the cases that give reader notes: superseded runs, partial
runs, old MMLU prompts. Values are invented; every writer returns the folder to ingest.

Kept apart from fixtures_sources.py (the reader tests' helpers) on purpose: these trees are
built to exercise the map/reduce, not one reader's corner cases.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

TS_OLD = "2024-01-10T10-00-00.000000"
TS_NEW = "2024-02-20T10-00-00.000000"
V1_ARC = "harness|arc:challenge|25"
V1_GSM8K = "harness|gsm8k|5"
V1_ANATOMY = "harness|hendrycksTest-anatomy|5"


def _scores(seed: int, n: int) -> np.ndarray:
    return (np.random.default_rng(seed).random(n) < 0.6).astype(float)


# --------------------------------------------------------------------------- lm-eval
def _lm_record(doc_id: int, score: float) -> dict:
    q = f"Question {doc_id}?"
    return {"doc_id": doc_id, "doc": {"question": q, "choices": ["a", "b"], "answer": doc_id % 2},
            "target": doc_id % 2, "arguments": [[q, " a"], [q, " b"]], "resps": [[["-1.0", "False"]]] * 2,
            "filtered_resps": [["-1.0", "False"]] * 2, "acc": score}


def _lm_results(model: str, tasks: dict[str, int], limit: int | None = None) -> dict:
    return {"results": {t: {"alias": t, "acc,none": 0.5} for t in tasks},
            "configs": {t: {"task": t} for t in tasks}, "versions": {t: 1.0 for t in tasks},
            "config": {"model": "hf", "model_args": f"pretrained={model}", "limit": limit},
            "group_subtasks": {t: [] for t in tasks},
            "n-samples": {t: {"original": n, "effective": n if limit is None else min(n, limit)} for t, n in tasks.items()},
            "model_name": model, "model_name_sanitized": model.replace("/", "__")}


def write_lm_eval_tree(root: Path, n_models: int = 8, docs: int = 40) -> Path:
    """``root/<org>__m<k>/`` lm-eval 0.4.3+ output of two tasks. Model 0 has two runs of
    ``wmdp_bio`` (superseded-run note), model 1 a ``--limit`` run (partial-run note), model 2
    misses ``wmdp_cyber`` (partial coverage)."""
    for k in range(n_models):
        d = root / f"org__m{k}"
        d.mkdir(parents=True, exist_ok=True)
        n_bio = docs // 2 if k == 1 else docs
        tasks = {"wmdp_bio": docs} if k == 2 else {"wmdp_bio": docs, "wmdp_cyber": docs // 2}
        limit = docs // 2 if k == 1 else None
        runs = [(TS_OLD, 1), (TS_NEW, 2)] if k == 0 else [(TS_NEW, 0)]
        for ts, salt in runs:
            (d / f"results_{ts}.json").write_text(json.dumps(_lm_results(f"org/m{k}", tasks, limit)))
            for task, n in tasks.items():
                n = min(n, n_bio) if task == "wmdp_bio" else n
                s = _scores(1000 * k + 10 * salt + len(task), n)
                lines = [json.dumps(_lm_record(i, float(s[i]))) for i in range(n)]
                (d / f"samples_{task}_{ts}.jsonl").write_text("\n".join(lines) + "\n")
    return root


# --------------------------------------------------------------------------- Open LLM Leaderboard v1
def v1_parquet_bytes(scores, metric: str = "acc_norm") -> bytes:
    """One details parquet (``example``, ``choices`` and a ``metrics`` struct), as bytes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = len(scores)
    metrics = pa.StructArray.from_arrays([pa.array(np.asarray(scores, float)), pa.array(np.ones(n))],
                                         names=[metric, "acc" if metric != "acc" else "acc_norm"])
    table = pa.table({"example": [f"Question {i}?" for i in range(n)], "choices": [["x", "y"]] * n, "metrics": metrics})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def v1_repo_files(k: int) -> dict[str, bytes]:
    """The files of model k's details repo, by path in the repo (``<ts>/details_...parquet``,
    ``results_<ts>.json``). Model 0: two ARC runs (superseded), model 1: a partial ARC run,
    model 2: an MMLU run with the old prompt (skipped, noted), model 4: a partial newest ARC
    run over a complete older one (the older one is used)."""
    files: dict[str, bytes] = {}

    def add(task: str, ts: str, scores, metric: str) -> None:
        files[f"{ts}/details_{task}_{ts}.parquet"] = v1_parquet_bytes(scores, metric)

    def results(ts: str, mmlu_version: int = 1) -> None:
        files[f"results_{ts}.json"] = json.dumps({
            "config_general": {"model_name": f"org/v{k}"}, "results": {"all": {"acc": 0.5}},
            "versions": {"all": 0, "harness|hendrycksTest-abstract_algebra|5": mmlu_version}}).encode()

    arc_rows = 300 if k in (1, 4) else 1172
    add(V1_ARC, TS_NEW, _scores(7 * k, arc_rows), "acc_norm")
    add(V1_GSM8K, TS_NEW, _scores(7 * k + 1, 1319), "acc")
    results(TS_NEW)
    if k in (0, 4):
        add(V1_ARC, TS_OLD, _scores(99 + k, 1172), "acc_norm")
        results(TS_OLD)
    if k == 2:
        add(V1_ANATOMY, TS_OLD, _scores(5, 135), "acc")
        results(TS_OLD, mmlu_version=0)
    return files


def write_v1_tree(root: Path, n_models: int = 6) -> Path:
    """``root/details_org__v<k>/`` laid out like the Hub repos of :func:`v1_repo_files`."""
    for k in range(n_models):
        d = root / f"details_org__v{k}"
        for rel, data in v1_repo_files(k).items():
            (d / rel).parent.mkdir(parents=True, exist_ok=True)
            (d / rel).write_bytes(data)
    return root


# --------------------------------------------------------------------------- HELM
def _helm_stat(name: str, value: float) -> dict:
    return {"name": {"name": name, "split": "test"}, "count": 1, "sum": value, "sum_squared": value,
            "min": value, "max": value, "mean": value, "variance": 0.0, "stddev": 0.0}


def write_helm_tree(root: Path, n_models: int = 5, instances: int = 12) -> Path:
    """``root/runs/v1/<run>/`` HELM Lite MMLU runs of two subjects per model (instance ids are
    strings: the item order is the order of first appearance, model by model). Model 0 lacks
    two instances, which so come last; model 3 has a second suite with a newer run of one subject
    (superseded-run note)."""
    suite = root / "runs" / "v1"
    for k in range(n_models):
        model = f"org/h{k}"
        for subject in ("anatomy", "virology"):
            ids = [f"id{(7 * j) % 97}" for j in range(instances)]
            if k == 0:
                ids = ids[2:]
            name = f"mmlu:subject={subject},method=multiple_choice_joint,model={model.replace('/', '_')}"
            for where, salt in [(suite, 0)] + ([(root / "runs" / "v2", 1)] if k == 3 and subject == "virology" else []):
                d = where / name
                d.mkdir(parents=True, exist_ok=True)
                s = _scores(31 * k + len(subject) + salt, len(ids))
                spec = {"name": name, "scenario_spec": {"class_name": "helm.benchmark.scenarios.mmlu_scenario.MMLUScenario",
                                                        "args": {"subject": subject}},
                        "adapter_spec": {"method": "multiple_choice_joint", "model": model}, "metric_specs": [],
                        "groups": ["mmlu"]}
                (d / "run_spec.json").write_text(json.dumps(spec))
                (d / "per_instance_stats.json").write_text(json.dumps(
                    [{"instance_id": i, "train_trial_index": 0, "stats": [_helm_stat("exact_match", float(v))]}
                     for i, v in zip(ids, s)]))
                (d / "instances.json").write_text(json.dumps(
                    [{"id": i, "input": {"text": f"{subject} question {i}"}, "references": [], "split": "test"}
                     for i in ids]))
    return root / "runs"
