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
order, written by PyYAML; lm-eval's ``!function`` tag for the functions of ``tiny_utils.py``).
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

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
    # the Open LLM Leaderboard v2 (builder.registry.prompts_v2; lm-eval's lm_eval/tasks/leaderboard)
    "lb2_ifeval": {"output_type": "generate_until", "doc_to_text": "{{input_formatted}}", "doc_to_target": 0,
                   "process_results": _fn("ifeval_results"),
                   "generation_kwargs": {"until": [], "do_sample": False, "temperature": 0.0, "max_gen_toks": 1280},
                   "metric_list": [{"metric": "prompt_level_strict_acc", **_MEAN}]},
    "lb2_bbh": {"output_type": "multiple_choice", "doc_to_text": "{{input_formatted}}",
                "doc_to_choice": _fn("bbh_choices"), "doc_to_target": "{{target}}", "metric_list": _ACC},
    "lb2_math": {"output_type": "generate_until", "doc_to_text": "{{input_formatted}}", "doc_to_target": "{{answer}}",
                 "process_results": _fn("math_results"),
                 "generation_kwargs": {"until": ["Problem:"], "do_sample": False, "temperature": 0.0,
                                       "max_gen_toks": 1024},
                 "metric_list": [{"metric": "exact_match", **_MEAN}]},
    "lb2_gpqa": {"output_type": "multiple_choice", "doc_to_text": "{{input_formatted}}",
                 "doc_to_choice": ["(A)", "(B)", "(C)", "(D)"], "doc_to_target": "answer", "metric_list": _ACC},
    "lb2_musr": {"output_type": "multiple_choice", "doc_to_text": "{{input_formatted}}",
                 "doc_to_choice": "{{choices}}", "doc_to_target": "{{answer_choice}}", "metric_list": _ACC},
    "lb2_mmlu_pro": {"output_type": "multiple_choice", "doc_to_text": "{{input_formatted}}",
                     "doc_to_choice": _fn("mmlu_pro_choices"), "doc_to_target": "answer", "metric_list": _ACC},
}
#: the functions of ``tiny_utils.py`` each v2 task names come from :data:`V2_UTILS_SOURCE`
_V2_FUNCTIONS = ("bbh_choices", "mmlu_pro_choices", "ifeval_results", "math_results")

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



def _v2_utils_source() -> str:
    from builder.registry import bbh_choices, bbh_subtasks

    choices = json.dumps({sub: bbh_choices(sub) for sub in bbh_subtasks()}, ensure_ascii=False, indent=1)
    return """

# ---- the Open LLM Leaderboard v2 tasks (lm-eval's lm_eval/tasks/leaderboard)
#: each BBH subtask's continuations (its task's doc_to_choice); a row's subtask is its subscenario
_BBH_CHOICES = """ + choices + '''


def bbh_choices(doc):
    """The continuations of the row's BBH subtask."""
    return _BBH_CHOICES[doc["subscenario"]]


def mmlu_pro_choices(doc):
    """One letter per option (the leaderboard task's utils.doc_to_choice)."""
    return [chr(ord("A") + i) for i in range(len(doc["options"]))]


def ifeval_results(doc, results):
    """Prompt-level strict accuracy, by lm-eval's own IFEval checks (pip install "lm-eval[ifeval]")."""
    from lm_eval.tasks.leaderboard.ifeval import utils as ifeval

    return {"prompt_level_strict_acc": ifeval.process_results(doc, results)["prompt_level_strict_acc"]}


def math_results(doc, results):
    """Exact match as the leaderboard scored MATH-hard: lm-eval's original answer check
    (process_result_v1; its exact_match_original) (pip install "lm-eval[math]")."""
    from lm_eval.tasks.leaderboard.math import utils as math_hard

    original = getattr(math_hard, "process_result_v1", None)
    if original is not None:
        return {"exact_match": int(original(doc, results[0]))}
    return {"exact_match": int(math_hard.process_results(doc, results)["exact_match"])}
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


def _dumper() -> type:
    """PyYAML's safe dumper that writes a :class:`_Function` as lm-eval's ``!function`` tag."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def function(dumper: yaml.SafeDumper, value: _Function) -> yaml.Node:
        return dumper.represent_scalar("!function", str(value).removeprefix("!function "))

    Dumper.add_representer(_Function, function)
    return Dumper


def _yaml(fields: Mapping[str, Any], order: Sequence[str] = _ORDER) -> str:
    """The task as YAML (PyYAML): keys in ``order``, then the others; no line wrapping."""
    import yaml

    ordered = {k: fields[k] for k in [k for k in order if k in fields] + [k for k in fields if k not in order]}
    return yaml.dump(ordered, Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=1 << 16,
                     default_flow_style=False)


def _functions_in(value: Any) -> set[str]:
    """The ``!function`` values anywhere in a task's settings (top level, metric lists, filters)."""
    if isinstance(value, _Function):
        return {str(value)}
    if isinstance(value, Mapping):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return set().union(*(_functions_in(v) for v in value)) if value else set()
    return set()


def task_files(spec: BenchmarkSpec, configs: Mapping[str, Mapping[str, Any]], repo_id: str, tag: str,
               version: str, design: Mapping[str, Any] | None = None) -> dict[str, str]:
    """``{path in the folder: text}`` of the task files of ``spec`` (module docstring).

    ``configs`` is the manifest's ``configs`` table (the configs built, their tiny splits).
    ``design``: the manifest's ``design`` table; each task's ``metadata.design`` is its config's
    design hash, which lm-eval copies into its results file, so ``builder estimate`` can tell
    which design a run was made against. Empty when no config has a harness task
    (tinyAlpacaEval, tinyHELM).
    """
    out: dict[str, str] = {}
    tasks: list[str] = []
    used: set[str] = set()  # the tiny_utils functions the task files name
    for c in spec.configs:
        if c.name not in configs:
            continue
        settings = task_settings(c)
        if settings is None or not c.harness_task:  # (task_settings is None without a harness task)
            continue
        fields = {"task": c.harness_task, "dataset_path": repo_id, "dataset_name": c.name,
                  "dataset_kwargs": {"revision": tag}, "test_split": configs[c.name]["tiny_split"],
                  "num_fewshot": 0, **settings,
                  "metadata": {"version": 1.0, "dataset_version": version,
                               **({"design": design["configs"][c.name]} if design and c.name in
                                  design.get("configs", {}) else {}),
                               "source": "written by tinybench-builder; estimate with `python -m builder estimate`"}}
        used |= _functions_in(settings)
        out[f"{HARNESS_DIR}/{c.harness_task}.yaml"] = _yaml(fields)
        tasks.append(c.harness_task)
        pool = configs[c.name].get("pool_split")
        if pool and c.harness_task:  # every item: what adaptive evaluation asks from, a batch at a time (--samples / samples=)
            out[f"{HARNESS_DIR}/{c.harness_task}{POOL_SUFFIX}.yaml"] = _yaml({
                **fields, "task": c.harness_task + POOL_SUFFIX, "test_split": pool,
                "metadata": {**fields["metadata"], "source": "written by tinybench-builder; every item of the "
                             "estimator (the pool split): evaluate the items an adaptive session asks for with "
                             "--samples (docs/ADAPTIVE.md)"}})
    if len(tasks) > 1:  # a bundle: the group of its tasks
        out[f"{HARNESS_DIR}/{spec.name}.yaml"] = _yaml({"group": spec.name, "task": tasks,
                                                        "metadata": {"version": 1.0, "dataset_version": version}},
                                                       order=())
    if used:
        # decided on the values, not on the YAML text: PyYAML quotes a tagged scalar (!function 'tiny_utils.x')
        v2 = any(str(_fn(name)) in used for name in _V2_FUNCTIONS)
        out[f"{HARNESS_DIR}/{UTILS_MODULE}.py"] = UTILS_SOURCE + (_v2_utils_source() if v2 else "")
    return out
