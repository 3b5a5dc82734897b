"""Hand-made fixtures in the exact on-disk formats of docs SOURCE_FORMATS.md (for the reader tests).

Every writer takes a target folder (a pytest ``tmp_path``) and writes small files; values
are invented.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"  # next to the repository


# --------------------------------------------------------------------------- lm-eval
def lm_record(doc_id: int, score: float, metric: str = "acc", *, version: str = "0.4.3",
              filter: str | None = None, extra: dict | None = None, question: str | None = None) -> dict:
    """One samples record as written by lm-eval ``version`` (``"0.4.0"``, ``"0.4.3"``, ``"0.4.7"``)."""
    q = question or f"Question {doc_id}?"
    doc = {"question": q, "choices": ["a", "b", "c", "d"], "answer": doc_id % 4}
    ctx = f"The following are multiple choice questions (with answers).\n{q}\nAnswer:"
    new = version >= "0.4.3"
    if new:
        arguments: Any = {f"gen_args_{i}": {"arg_0": ctx, "arg_1": f" {c}"} for i, c in enumerate("ABCD")}
        resps: Any = [[["-1.5", "False"]] for _ in range(4)]
        filtered: Any = [["-1.5", "False"] for _ in range(4)]
    else:
        arguments = [[ctx, f" {c}"] for c in "ABCD"]
        resps = [[[-1.5, False]] for _ in range(4)]
        filtered = [[-1.5, False] for _ in range(4)]
    target: Any = doc_id % 4
    if version >= "0.4.4":
        target = str(target)
    rec: dict[str, Any] = {"doc_id": doc_id, "doc": doc, "target": target, "arguments": arguments,
                           "resps": resps, "filtered_resps": filtered}
    if new:
        rec["doc_hash"] = hashlib.sha256(json.dumps(doc).encode()).hexdigest()
        rec["prompt_hash"] = hashlib.sha256(ctx.encode()).hexdigest()
        rec["target_hash"] = hashlib.sha256(str(target).encode()).hexdigest()
    if version >= "0.4.7":
        rec["filter"] = filter or "none"
        rec["metrics"] = [metric]
    rec[metric] = score
    if extra:
        rec.update(extra)
    return rec


def lm_results(model: str, tasks: dict[str, int], *, model_args: str | None = None, limit: Any = None,
               filters: dict[str, list[str]] | None = None, group_subtasks: dict | None = None,
               metric: str = "acc", legacy: bool = False) -> dict:
    """A results json; ``tasks`` maps task -> number of documents (n-samples)."""
    model_args = model_args or f"pretrained={model},dtype=bfloat16"
    results = {}
    configs = {}
    for t in tasks:
        fl = (filters or {}).get(t, ["none"])
        results[t] = {"alias": t}
        for f in fl:
            results[t][f"{metric},{f}"] = 0.5
            results[t][f"{metric}_stderr,{f}"] = "N/A"
        configs[t] = {"task": t, "num_fewshot": 0,
                      "filter_list": [{"name": f, "filter": []} for f in fl] if filters and t in filters else None}
        if configs[t]["filter_list"] is None:
            del configs[t]["filter_list"]
    out: dict[str, Any] = {"results": results, "configs": configs, "versions": {t: 1.0 for t in tasks},
                           "n-shot": {t: 0 for t in tasks},
                           "config": {"model": "hf", "model_args": model_args, "batch_size": "8", "limit": limit},
                           "git_hash": "abc1234"}
    if not legacy:
        out["group_subtasks"] = group_subtasks if group_subtasks is not None else {t: [] for t in tasks}
        out["n-samples"] = {t: {"original": n, "effective": n if limit is None else min(n, int(limit))}
                            for t, n in tasks.items()}
        out["model_name"] = model
        out["model_name_sanitized"] = model.replace("/", "__")
    return out


def write_jsonl(path: Path, records: Iterable[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


def write_lm_eval_run(root: Path, model: str, task_records: dict[str, list[dict]], ts: str = "2024-07-08T08-27-46.579882",
                      results: dict | None = None, ext: str = ".jsonl") -> Path:
    """v0.4.3+ layout: ``root/<model sanitized>/results_<ts>.json`` + ``samples_<task>_<ts>.jsonl``."""
    d = root / model.replace("/", "__")
    d.mkdir(parents=True, exist_ok=True)
    if results is None:
        results = lm_results(model, {t: len({r["doc_id"] for r in recs}) for t, recs in task_records.items()})
    if results is not False:
        (d / f"results_{ts}.json").write_text(json.dumps(results, indent=2))
    for task, recs in task_records.items():
        write_jsonl(d / f"samples_{task}_{ts}{ext}", recs)
    return d


def write_lm_eval_legacy(d: Path, model_args: str, task_records: dict[str, list[dict]], results: dict | None = None) -> Path:
    """v0.4.0-0.4.2 layout: ``d/results.json`` + ``d/<sanitized model_args>_<task>.jsonl`` (a JSON array)."""
    import re

    d.mkdir(parents=True, exist_ok=True)
    if results is not False:
        model = dict(p.split("=", 1) for p in model_args.split(",")).get("pretrained", "m")
        res = results or lm_results(model, {t: len(r) for t, r in task_records.items()}, model_args=model_args, legacy=True)
        (d / "results.json").write_text(json.dumps(res, indent=2))
    for task, recs in task_records.items():
        name = "{}_{}".format(re.sub("/|=", "__", model_args), task)
        (d / f"{name}.jsonl").write_text(json.dumps(recs, indent=2, ensure_ascii=False), encoding="utf-8")
    return d


# --------------------------------------------------------------------------- lighteval details
LIGHTEVAL_TS = "2026-12-02T02-18-32.638333"


def lighteval_record(doc_id: int, metrics: dict[str, Any], *, query: str | None = None, specific: dict | None = None,
                     choices: Sequence[str] = (" A", " B", " C", " D"), gold: int = 0, task: str = "task|0") -> dict:
    """One row of a lighteval 0.13.0 details file: its ``doc``, ``metric`` and ``model_response`` structs."""
    return {"doc": {"query": query if query is not None else f"Question {doc_id}?\nAnswer:", "choices": list(choices),
                    "gold_index": gold, "instruction": None, "specific": specific, "id": str(doc_id), "task_name": task,
                    "fewshot_samples": [], "sampling_methods": ["LOGPROBS"], "use_logits": False, "num_samples": 1},
            "metric": dict(metrics),
            "model_response": {"input": None, "text": [], "logprobs": [-1.0 - i for i in range(len(choices))],
                               "argmax_logits_eq_gold": [False] * len(choices), "truncated_tokens_count": 0}}


def write_lighteval_run(root: Path, model: str, task_records: dict[str, list[dict]], ts: str = LIGHTEVAL_TS,
                        results: dict | None = None) -> Path:
    """lighteval's ``--output-dir`` layout: ``root/results/<model>/results_<ts>.json`` and
    ``root/details/<model>/<ts>/details_<task>|<shots>_<ts>.parquet`` (``task_records`` keys are
    ``<task>|<shots>``). Returns the details folder of the run."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    res_dir = root / "results" / model
    res_dir.mkdir(parents=True, exist_ok=True)
    if results is not False:
        out = results or {"config_general": {"model_name": model, "max_samples": None},
                          "results": {t: {} for t in task_records}, "config_tasks": {t: {} for t in task_records}}
        (res_dir / f"results_{ts}.json").write_text(json.dumps(out, indent=2))
    d = root / "details" / model / ts
    d.mkdir(parents=True, exist_ok=True)
    for task, recs in task_records.items():
        pq.write_table(pa.Table.from_pylist(recs), d / f"details_{task}_{ts}.parquet")
    return d


# --------------------------------------------------------------------------- OLL v1 details
def write_v1_details(model_dir: Path, task_name: str, ts: str, scores: Sequence[float], *, layout: str = "struct",
                     metric: str = "acc", other: dict[str, Sequence[float]] | None = None, content: bool = True) -> Path:
    """``model_dir/<ts>/details_<task_name>_<ts>.parquet`` with one of the three score layouts:
    ``struct`` (a ``metrics`` struct), ``flat`` (a ``metrics.<m>`` column) or ``top`` (``<m>`` column)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = len(scores)
    metrics = {metric: list(map(float, scores))}
    for k, v in (other or {}).items():
        metrics[k] = list(map(float, v))
    cols: dict[str, Any] = {}
    if content:
        cols["example"] = [f"Question {i}?" for i in range(n)]
        cols["full_prompt"] = [f"shots...\nQuestion {i}?\nAnswer:" for i in range(n)]
        cols["choices"] = [["x", "y"] for _ in range(n)]
        cols["gold_index"] = [[i % 2] for i in range(n)]
        cols["predictions"] = [[-1.0, -2.0] for _ in range(n)]
    if layout == "struct":
        cols["metrics"] = pa.array([{k: v[i] for k, v in metrics.items()} for i in range(n)])
    elif layout == "flat":
        for k, v in metrics.items():
            cols[f"metrics.{k}"] = v
    elif layout == "top":
        for k, v in metrics.items():
            cols[k] = v
    else:
        raise ValueError(layout)
    path = model_dir / ts / f"details_{task_name}_{ts}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(cols), path)
    return path


def write_v1_results(model_dir: Path, ts: str, model: str, mmlu_version: int = 1) -> Path:
    data = {"config_general": {"model_name": model, "model_sha": "abc"},
            "results": {"all": {"acc": 0.5}},
            "versions": {"all": 0, "harness|hendrycksTest-abstract_algebra|5": mmlu_version}}
    path = model_dir / f"results_{ts}.json"
    model_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


# --------------------------------------------------------------------------- AlpacaEval
def alpaca_annotations(model: str, instructions: Sequence[str], preferences: Sequence[Any],
                       annotator: str = "weighted_alpaca_eval_gpt4_turbo") -> list[dict]:
    out = []
    for i, (ins, p) in enumerate(zip(instructions, preferences)):
        out.append({"instruction": ins, "output_1": f"baseline answer {i}", "generator_1": "gpt4_1106_preview",
                    "dataset": ["helpful_base", "koala", "oasst", "selfinstruct", "vicuna"][i % 5],
                    "output_2": f"{model} answer {i}", "generator_2": model, "annotator": annotator,
                    "preference": p, "price_per_example": 0.01, "time_per_example": 0.4,
                    "raw_completion": {"logprobs": {"content": [{"token": "m", "logprob": -0.3,
                                                                 "top_logprobs": [{"token": "m", "logprob": -0.3}]}]},
                                       "text": "m"}})
    return out


def write_alpaca(root: Path, model: str, annotations: list[dict], annotator: str = "weighted_alpaca_eval_gpt4_turbo") -> Path:
    d = root / model / annotator
    d.mkdir(parents=True, exist_ok=True)
    (d / "annotations.json").write_text(json.dumps(annotations, indent=2))
    (root / model / "model_outputs.json").write_text(
        json.dumps([{"dataset": a["dataset"], "instruction": a["instruction"], "output": a["output_2"], "generator": model}
                    for a in annotations]))
    return d / "annotations.json"


# --------------------------------------------------------------------------- HELM
def helm_stat(name: str, value: float, split: str = "test", perturbation: dict | None = None) -> dict:
    mn: dict[str, Any] = {"name": name, "split": split}
    if perturbation:
        mn["perturbation"] = perturbation
    return {"name": mn, "count": 1, "sum": value, "sum_squared": value * value, "min": value, "max": value,
            "mean": value, "variance": 0.0, "stddev": 0.0}


def write_helm_run(suite_dir: Path, run_name: str, model: str, groups: list[str], scenario_args: dict,
                   per_instance: list[dict], instances: list[dict] | None = None) -> Path:
    d = suite_dir / run_name
    d.mkdir(parents=True, exist_ok=True)
    spec = {"name": run_name,
            "scenario_spec": {"class_name": "helm.benchmark.scenarios.x.XScenario", "args": scenario_args},
            "adapter_spec": {"method": "multiple_choice_joint", "model": model, "model_deployment": model,
                             "max_train_instances": 5, "num_train_trials": 1},
            "metric_specs": [], "groups": groups}
    (d / "run_spec.json").write_text(json.dumps(spec, indent=2))
    (d / "per_instance_stats.json").write_text(json.dumps(per_instance, indent=2))
    if instances is not None:
        (d / "instances.json").write_text(json.dumps(instances, indent=2))
    return d


# --------------------------------------------------------------------------- legacy pickle
def write_legacy_pickle(path: Path, models: list[str], data: dict[str, np.ndarray], protocol: int = 4) -> Path:
    obj = {"models": models, "data": {k: {"correctness": v} for k, v in data.items()}}
    path.write_bytes(pickle.dumps(obj, protocol=protocol))
    return path


class _Evil:
    def __init__(self, target: str):
        self.target = target

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.target}",))


def write_malicious_pickle(path: Path, marker: Path) -> Path:
    """A pickle that would run ``touch marker`` through os.system when loaded unsafely."""
    obj = {"models": ["m"], "data": {"x": {"correctness": _Evil(str(marker))}}}
    path.write_bytes(pickle.dumps(obj))
    return path
