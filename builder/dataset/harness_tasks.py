"""lm-evaluation-harness task files of a tiny dataset: ``build`` writes them into ``lm_eval/``.

::

    lm_eval --model hf --model_args pretrained=<model> --include_path DIR/lm_eval --tasks tinyWMDP_bio \
        --log_samples --output_path results/
    python -m builder estimate DIR results/

One ``<task>.yaml`` per config that has a harness task (and ``<task>_pool.yaml``, the same task over the
``pool`` split: every item, for adaptive evaluation), written as lm-eval's own
``lm_eval/tasks/tinyBenchmarks/*.yaml`` are: the dataset is the folder's Hub repository pinned
to its release tag (``dataset_kwargs: {revision: ...}``), the tiny split is the test split, and
the per-row metrics are plain means (``builder estimate`` turns the logged per-row results into
the full-score estimate, matching every record to its row by document). A bundle also gets a
group file named after the benchmark.

The prompt is the row's ``input_formatted`` (zero-shot: it holds the in-context examples), so a
model sees exactly what the estimator was fitted on. The choices and targets follow lm-eval's
tasks: MMLU ``A``-``D``, ARC the answer texts, HellaSwag the cleaned endings, Winogrande partial
evaluation (the prompt's final correct option replaced by each option, one shared
continuation), TruthfulQA mc2, GSM8K generation with lm-eval's ``exact_match`` and its
``strict-match``/``flexible-extract`` filters. A custom benchmark's task comes from the
``[harness]`` table of its spec (:mod:`builder.registry.specs`). Functions that a template cannot express
are in ``lm_eval/tiny_utils.py`` (``!function tiny_utils.<name>``), written with the tasks.

lm-eval (0.4.x) indexes its own tasks before ``--include_path``: for the names lm-eval already
has (tinyMMLU, tinyArc, ...), its built-in task wins, and reads the same repository unpinned;
``lm_eval.tasks.TaskManager(include_path=..., include_defaults=False)`` runs these files from
Python. A custom benchmark's name is its own.

:func:`task_files` returns ``{relative path: text}``; the text is deterministic (keys in a fixed
order, JSON-style values, which YAML reads as they are).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from builder.registry import BenchmarkSpec, ConfigSpec
from builder.layout import HARNESS_DIR

__all__ = ["HARNESS_DIR", "UTILS_MODULE", "POOL_SUFFIX", "task_files", "task_settings", "UTILS_SOURCE"]

UTILS_MODULE = "tiny_utils"
#: the task over a config's pool split (every item; adaptive evaluation): ``<task>_pool``
POOL_SUFFIX = "_pool"
_MEAN = {"aggregation": "mean", "higher_is_better": True}


class _Function(str):
    """A YAML value written as is: ``!function tiny_utils.<name>``."""


def _fn(name: str) -> _Function:
    return _Function(f"!function {UTILS_MODULE}.{name}")


#: lm-eval's GSM8K scoring (tasks/gsm8k/gsm8k.yaml, tinyBenchmarks/tinyGSM8k.yaml)
_GSM8K = {
    "output_type": "generate_until",
    "doc_to_text": "{{input_formatted}}",
    "doc_to_target": "{{answer}}",
    "generation_kwargs": {"until": ["Question:", "</s>", "<|im_end|>"], "do_sample": False, "temperature": 0.0},
    "metric_list": [{"metric": "exact_match", **_MEAN, "ignore_case": True, "ignore_punctuation": False,
                     "regexes_to_ignore": [",", "\\$", "(?s).*#### ", "\\.$"]}],
    "filter_list": [
        {"name": "strict-match", "filter": [{"function": "regex", "regex_pattern": "#### (\\-?[0-9\\.\\,]+)"},
                                            {"function": "take_first"}]},
        {"name": "flexible-extract", "filter": [{"function": "regex", "group_select": -1,
                                                 "regex_pattern": "(-?[$0-9.,]{2,})|(-?[0-9]+)"},
                                                {"function": "take_first"}]},
    ],
}
_ACC = [{"metric": "acc", **_MEAN}, {"metric": "acc_norm", **_MEAN}]
#: the task settings of each registered renderer (everything but the dataset and the name)
_BY_RENDERER: dict[str, dict[str, Any]] = {
    "mmlu": {"output_type": "multiple_choice", "doc_to_text": "{{input_formatted}}",
             "doc_to_choice": ["A", "B", "C", "D"], "doc_to_target": "answer", "metric_list": _ACC},
    "arc": {"output_type": "multiple_choice", "doc_to_text": "{{input_formatted}}",
            "doc_to_choice": "{{choices.text}}", "doc_to_target": "{{choices.label.index(answerKey)}}",
            "metric_list": _ACC},
    "hellaswag": {"output_type": "multiple_choice", "doc_to_text": "{{input_formatted}}",
                  "doc_to_choice": _fn("hellaswag_choices"), "doc_to_target": "{{label}}", "metric_list": _ACC},
    "winogrande": {"output_type": "multiple_choice", "doc_to_text": _fn("winogrande_gold"),
                   "doc_to_choice": _fn("winogrande_choices"), "doc_to_target": _fn("winogrande_target"),
                   "metric_list": _ACC},
    "truthfulqa": {"output_type": "multiple_choice", "doc_to_text": "{{input_formatted}}",
                   "doc_to_choice": "{{mc2_targets.choices}}", "doc_to_target": 0,
                   "process_results": _fn("truthfulqa_mc2"), "metric_list": [{"metric": "acc", **_MEAN}]},
    "gsm8k": _GSM8K,
}

#: ``lm_eval/tiny_utils.py``: the functions the tasks name (standalone: numpy only)
UTILS_SOURCE = '''\
"""Functions of the lm-evaluation-harness tasks of this tiny dataset (written by tinybench-builder)."""

import re

import numpy as np


def _clean(text):
    # lm-eval's HellaSwag preprocessing (tasks/hellaswag/utils.py)
    text = text.strip()
    text = text.replace(" [title]", ". ")
    text = re.sub("\\\\[.*?\\\\]", "", text)
    return text.replace("  ", " ")


def hellaswag_choices(doc):
    """The four endings, cleaned as lm-eval's HellaSwag cleans them."""
    return [_clean(e) for e in doc["endings"]]


def _gold_option(doc):
    return doc["option" + str(doc["answer"]).strip()]


def winogrande_gold(doc):
    """Partial evaluation: the index of the correct context (lm-eval then scores every context)."""
    return {"1": 0, "2": 1}[str(doc["answer"]).strip()]


def winogrande_choices(doc):
    """input_formatted ends with the correct option: the same prompt ending with each option."""
    prompt, gold = doc["input_formatted"], _gold_option(doc)
    if not prompt.endswith(gold):
        raise ValueError("input_formatted does not end with the correct option")
    prefix = prompt[: len(prompt) - len(gold)]
    return [prefix + doc["option1"], prefix + doc["option2"]]


def winogrande_target(doc):
    """The shared continuation: the sentence after the blank."""
    sentence = doc["sentence"]
    return sentence[sentence.index("_") + 1:].strip()


def truthfulqa_mc2(doc, results):
    """TruthfulQA mc2: the normalised probability of the true answers (labels 1 before labels 0)."""
    lls = np.array([r[0] for r in results], dtype=float)
    first_false = list(doc["mc2_targets"]["labels"]).index(0)
    p = np.exp(lls)
    return {"acc": float(p[:first_false].sum() / p.sum())}
'''

_ORDER = ("task", "dataset_path", "dataset_name", "dataset_kwargs", "test_split", "output_type", "num_fewshot",
          "doc_to_text", "doc_to_choice", "doc_to_target", "process_results", "generation_kwargs", "metric_list",
          "filter_list", "metadata")


def task_settings(config: ConfigSpec) -> dict[str, Any] | None:
    """The task settings of a config (output type, prompt, choices, target, metrics); None when
    the config has no harness task or no way to prompt a model from its rows."""
    if not config.harness_task:
        return None
    if config.harness_config:  # a custom benchmark's [harness] table
        h = dict(config.harness_config)
        out: dict[str, Any] = {"output_type": h["output_type"], "doc_to_text": h["doc_to_text"]}
        if "doc_to_choice" in h:
            out["doc_to_choice"] = h["doc_to_choice"]
        out["doc_to_target"] = h["doc_to_target"]
        if h["output_type"] == "generate_until":
            out["generation_kwargs"] = {"until": list(h.get("until") or ["\n\n"]), "do_sample": False,
                                        "temperature": 0.0}
        out["metric_list"] = [{"metric": config.harness_metric, **_MEAN}]
        return out
    settings = _BY_RENDERER.get(config.renderer or "")
    return None if settings is None else dict(settings)


def _value(v: Any) -> str:
    if isinstance(v, _Function):
        return str(v)
    return json.dumps(v, ensure_ascii=False)


def _yaml(fields: Mapping[str, Any]) -> str:
    lines = []
    for key in [k for k in _ORDER if k in fields] + [k for k in fields if k not in _ORDER]:
        value = fields[key]
        if isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
            lines.append(f"{key}:")
            lines += [f"  - {_value(x)}" for x in value]
        else:
            lines.append(f"{key}: {_value(value)}")
    return "\n".join(lines) + "\n"


def task_files(spec: BenchmarkSpec, configs: Mapping[str, Mapping[str, Any]], repo_id: str, tag: str,
               version: str) -> dict[str, str]:
    """``{path in the folder: text}`` of the task files of ``spec`` (module docstring).

    ``configs`` is the manifest's ``configs`` table (the configs built, their tiny splits).
    Empty when no config has a harness task (tinyAlpacaEval, tinyHELM).
    """
    out: dict[str, str] = {}
    tasks, uses_utils = [], False
    for c in spec.configs:
        if c.name not in configs:
            continue
        settings = task_settings(c)
        if settings is None:
            continue
        fields = {"task": c.harness_task, "dataset_path": repo_id, "dataset_name": c.name,
                  "dataset_kwargs": {"revision": tag}, "test_split": configs[c.name]["tiny_split"],
                  "num_fewshot": 0, **settings,
                  "metadata": {"version": 1.0, "dataset_version": version,
                               "source": "written by tinybench-builder; estimate with `python -m builder estimate`"}}
        uses_utils |= any(isinstance(v, _Function) for v in settings.values())
        out[f"{HARNESS_DIR}/{c.harness_task}.yaml"] = _yaml(fields)
        tasks.append(c.harness_task)
        pool = configs[c.name].get("pool_split")
        if pool:  # every item: what adaptive evaluation asks from, a batch at a time (--samples / samples=)
            out[f"{HARNESS_DIR}/{c.harness_task}{POOL_SUFFIX}.yaml"] = _yaml({
                **fields, "task": c.harness_task + POOL_SUFFIX, "test_split": pool,
                "metadata": {**fields["metadata"], "source": "written by tinybench-builder; every item of the "
                             "estimator (the pool split): evaluate the items an adaptive session asks for with "
                             "--samples (docs/ADAPTIVE.md)"}})
    if len(tasks) > 1:  # a bundle: the group of its tasks
        out[f"{HARNESS_DIR}/{spec.name}.yaml"] = (f"group: {_value(spec.name)}\ntask:\n"
                                                  + "".join(f"  - {_value(t)}\n" for t in tasks)
                                                  + f"metadata: {_value({'version': 1.0, 'dataset_version': version})}\n")
    if uses_utils:
        out[f"{HARNESS_DIR}/{UTILS_MODULE}.py"] = UTILS_SOURCE
    return out
