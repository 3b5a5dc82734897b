"""lm-evaluation-harness task files of a tiny dataset: ``build`` writes them into ``lm_eval/``.

::

    path=$(hf download OWNER/tinyWMDP_bio --repo-type dataset --revision v1.0.0 --quiet)
    PYTHONPATH="$path/lm_eval" PYTHONDONTWRITEBYTECODE=1 lm_eval --model hf --model_args pretrained=<model> \
        --include_path "$path/lm_eval" --tasks tinyWMDP_bio --log_samples --output_path results/
    python -m tinybench_builder estimate "$path" results/

**A downloaded release.** In the Hub cache (``hf download`` without ``--local-dir``) the files
are symbolic links into ``blobs/``; lm-eval 0.4.13 resolves a task file's link and looks for the
functions module beside the blob, then imports it by name: ``PYTHONPATH`` names the snapshot's
``lm_eval/``. The module, ``tiny_utils_<id>.py`` (:func:`utils_module`), is named after the
release, so two releases in one run never share one. ``PYTHONDONTWRITEBYTECODE=1`` keeps Python
from writing ``lm_eval/__pycache__/`` into the release (a module cannot stop its own bytecode being
written; the estimator it loads is loaded without writing any). With ``--local-dir`` (real files)
the same command works, ``PYTHONPATH`` unused.

One ``<task>.yaml`` per config that has a harness task (and ``<task>_pool.yaml``, the same task over the
``pool`` split: every item, for adaptive evaluation), written as lm-eval's own
``lm_eval/tasks/tinyBenchmarks/*.yaml`` are: the dataset is the folder's Hub repository pinned
to its release tag (``dataset_kwargs: {revision: ...}``), the tiny split is the test split. A
bundle also gets a group file named after the benchmark.

**What lm-eval's results table shows.** Every task reports ``score``, the estimated
full-benchmark score, with ``score_ci_low``..``score_ci_high``, its 95% interval, computed by
the estimator shipped in the same release folder (``estimator.py`` and its side files next to
``lm_eval/``; downloaded from the repository at the same tag when the task files are used
alone), and ``anchor_mean``, the plain mean of the answered rows' metric (not an estimate of the
full score). ``lm_eval/tiny_utils_<id>.py`` holds the functions: ``process_results`` scores each row
as lm-eval scores it (acc / acc_norm of the choices' log-likelihoods, TruthfulQA mc2, GSM8K's
exact match with lm-eval's options) and tags the value with the row's anchor id, so that the
aggregation never depends on the order of the results (data-parallel runs interleave them,
``--samples`` reorders them); any subset of rows (``--limit n``) gives an estimate with an
interval that widens accordingly. ``python -m tinybench_builder estimate DIR results/`` on the logs gives
the same numbers.

**Task names.** lm-eval indexes its own tasks first and lets a task of ``--include_path`` with
the same name replace one of them (with a one-line warning since 0.4.12, silently before). The
registered tiny benchmarks are therefore written under names lm-eval does not use: lm-eval's own
tiny task name with the suffix :data:`TASK_SUFFIX` (``tinyMMLU_tb``, ``tinyGSM8k_tb``, ...);
``tinybench-builder estimate`` reads the logs of both ours and lm-eval's own task. A custom benchmark's task
is the ``[harness] task`` of its spec (default its name); a name lm-eval already has is refused
with a message saying how to choose another (:func:`check_task_names`: lm-eval's tiny tasks
always, every task, group and tag of lm-eval when it is installed where ``build`` runs).

The prompt is the row's ``input_formatted`` (zero-shot: it holds the in-context examples), so a
model sees exactly what the estimator was fitted on. The choices and targets follow lm-eval's
tasks: MMLU ``A``-``D``, ARC the answer texts, HellaSwag the cleaned endings, Winogrande partial
evaluation (the prompt's final correct option replaced by each option, one shared
continuation), TruthfulQA mc2, GSM8K generation with lm-eval's ``exact_match`` and its
``strict-match``/``flexible-extract`` filters. A custom benchmark's task comes from the
``[harness]`` table of its spec (:mod:`tinybench_builder.registry.specs`).

:func:`task_files` returns ``{relative path: text}``; the text is deterministic (keys in a fixed
order, written by PyYAML; lm-eval's ``!function`` tag for the functions of ``tiny_utils.py``).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Mapping, Sequence

from tinybench_builder.errors import BuildError
from tinybench_builder.registry import LM_EVAL_TINY_TASKS, BenchmarkSpec, ConfigSpec
from tinybench_builder.layout import HARNESS_DIR
from tinybench_builder.dataset.task_code import (DOC_FUNCTIONS, IMPORTS, LM_EVAL_AGGREGATION, LM_EVAL_PROCESSOR,
                                                 LM_EVAL_SCORING, RELEASE_ESTIMATE, ROW_ITEMS, UTILS_DOCSTRING,
                                                 V2_LM_EVAL_SCORING, v2_choices_source)

__all__ = ["HARNESS_DIR", "UTILS_MODULE", "TASK_SUFFIX", "LM_EVAL_TINY_TASKS", "ANCHOR_MEAN", "POOL_SUFFIX",
           "task_files", "task_settings", "task_name", "row_keys", "check_task_names", "UTILS_SOURCE", "utils_module",
           "utils_file"]

#: the prefix of the functions module's name: ``tiny_utils_<id>`` (:func:`utils_module`)
UTILS_MODULE = "tiny_utils"
#: suffix of the task names of the registered tiny benchmarks (lm-eval has tasks named like them)
TASK_SUFFIX = "_tb"
#: the per-row metric of our task files: the plain value of the row (what `tinybench-builder estimate` reads)
ANCHOR_MEAN = "anchor_mean"
#: the task over a config's pool split (every item; adaptive evaluation): ``<task>_pool``
POOL_SUFFIX = "_pool"
_MEAN = {"aggregation": "mean", "higher_is_better": True}


class _Function(str):
    """A YAML value written as is: ``!function tiny_utils.<name>``."""


def _fn(name: str) -> _Function:
    return _Function(f"!function {UTILS_MODULE}.{name}")


def utils_module(repo_id: str, tag: str) -> str:
    """The name of the functions module of the release ``repo_id`` at ``tag``: ``tiny_utils_<12 hex>``, the
    sha256 of ``repo_id@tag``.

    One name per release, so that two releases evaluated in one lm-eval run never share a module: in
    the Hub cache lm-eval imports it by name from ``PYTHONPATH`` (it resolves the task file's symbolic
    link into ``blobs/``, where the module is not), and Python keeps one module per name. Under a
    shared name the second release's tasks would run with the first one's rows table and estimator
    (two versions of one benchmark: refused as "another release's rows", or, with a kept design,
    estimated by the wrong version).
    """
    return f"{UTILS_MODULE}_{hashlib.sha256(f'{repo_id}@{tag}'.encode('utf-8')).hexdigest()[:12]}"


def utils_file(files: Sequence[str]) -> str | None:
    """The functions module among a folder's task files (the manifest's ``harness_tasks``), or None."""
    return next((f for f in files if f.startswith(f"{HARNESS_DIR}/{UTILS_MODULE}") and f.endswith(".py")), None)


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
#: the task settings of each registered renderer (everything but the dataset and the name), with the
#: scoring of lm-eval's own task (``process_results``, ``metric_list``): what ``tiny_utils._score``
#: reproduces for each row (the written task file has ours instead, :func:`task_files`)
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
    # the Open LLM Leaderboard v2 (tinybench_builder.registry.prompts_v2; lm-eval's lm_eval/tasks/leaderboard)
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
#: the functions of the v2 tasks (:func:`tinybench_builder.dataset.task_code.v2_choices_source` and its scoring)
_V2_FUNCTIONS = ("bbh_choices", "mmlu_pro_choices", "ifeval_results", "math_results")

#: ``lm_eval/tiny_utils_<id>.py`` (the part that does not depend on the dataset; the tasks' table follows)
UTILS_SOURCE = (UTILS_DOCSTRING + IMPORTS + DOC_FUNCTIONS + LM_EVAL_SCORING + ROW_ITEMS + LM_EVAL_PROCESSOR
                + RELEASE_ESTIMATE + LM_EVAL_AGGREGATION)


_ORDER = ("task", "dataset_path", "dataset_name", "dataset_kwargs", "test_split", "output_type", "num_fewshot",
          "doc_to_text", "doc_to_choice", "doc_to_target", "process_results", "generation_kwargs", "metric_list",
          "filter_list", "metadata")


def task_name(config: ConfigSpec) -> str | None:
    """The name of the task file of a config: its ``harness_task``, with :data:`TASK_SUFFIX` when that is
    one of lm-eval's own tiny tasks (tinyMMLU -> tinyMMLU_tb: a registered benchmark whose lm-eval task
    has that name; a custom benchmark's is refused earlier, :mod:`tinybench_builder.registry.specs`)."""
    if not config.harness_task:
        return None
    clash = not config.harness_config and config.harness_task in LM_EVAL_TINY_TASKS
    return config.harness_task + TASK_SUFFIX if clash else config.harness_task


def check_task_names(names: Sequence[str], *, installed: bool = True) -> None:
    """Refuse task names lm-eval already has (:class:`BuildError` saying how to choose another).

    lm-eval's tiny tasks are always checked; with ``installed``, every task, group and tag of
    the lm-eval importable here too (``lm_eval.tasks.TaskManager``: a few seconds).
    """
    clash = sorted(set(names) & set(LM_EVAL_TINY_TASKS))
    if not clash and installed and names:
        try:
            from lm_eval.tasks import TaskManager  # optional: only where lm-eval is installed
        except Exception:  # noqa: BLE001 - not installed (or broken): the static list above only
            TaskManager = None
        if TaskManager is not None:
            clash = sorted(set(names) & set(TaskManager().all_tasks))
    if clash:
        raise BuildError(
            f"lm-evaluation-harness already has a task named {', '.join(map(repr, clash))}: with --include_path, "
            "lm-eval would run one of the two without saying which; give the task another name with "
            "`task = \"<name>\"` in the spec's [harness] table")


def row_keys(rows: Sequence[Mapping[str, Any]], preferred: str | None = None) -> tuple[str, list[str]]:
    """The column that tells the rows of a tiny split apart (``preferred``, the item id column, when
    it does) and the hash of each row's value in it: what ``tiny_utils`` maps a document to its row by."""
    if not rows:
        raise BuildError("the tiny split has no rows")
    cols = [c for c in rows[0] if all(isinstance(r.get(c), str) for r in rows)
            or all(isinstance(r.get(c), int) and not isinstance(r.get(c), bool) for r in rows)]
    if preferred in cols:
        cols.remove(preferred)
        cols.insert(0, preferred)
    for c in cols:
        values = [str(r[c]) for r in rows]
        if len(set(values)) == len(values):
            return c, [hashlib.sha256(v.encode("utf-8")).hexdigest()[:16] for v in values]
    raise BuildError("no text column tells the rows of the tiny split apart: the lm-eval task cannot map its "
                     "results to the anchors")


def task_settings(config: ConfigSpec) -> dict[str, Any] | None:
    """The task settings of a config (output type, prompt, choices, target); None when the config has
    no harness task or no way to prompt a model from its rows."""
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


def _spec_of(value: Any) -> list:
    """How ``tiny_utils._resolve`` reads a doc_to_* value: ["function", name], ["list", [...]],
    ["int", i] or ["template", text] (a column name or a jinja template, as lm-eval reads it)."""
    if isinstance(value, _Function):
        return ["function", value.split(".", 1)[1]]
    if isinstance(value, list):
        return ["list", list(value)]
    if isinstance(value, int) and not isinstance(value, bool):
        return ["int", value]
    return ["template", str(value)]


def _scoring(config: ConfigSpec, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The ``TASKS`` entry's scoring part: how lm-eval's own task would score a row (its
    ``process_results`` function, or its default for the output type and ``metric_list``), and
    which of its metrics is the row's value (the config's ``harness_metric``)."""
    out: dict[str, Any] = {"metric": config.harness_metric}
    kind = settings["output_type"]
    if isinstance(settings.get("process_results"), _Function):
        out["scoring"] = "function"
        out["function"] = settings["process_results"].split(".", 1)[1]
        return out
    out["scoring"] = {"multiple_choice": "choice", "generate_until": "exact_match", "loglikelihood": "loglikelihood"}[kind]
    if out["scoring"] == "exact_match":
        metric: dict = next((m for m in settings.get("metric_list", []) if m["metric"] == "exact_match"), {})
        match = {k: metric[k] for k in ("regexes_to_ignore", "ignore_case", "ignore_punctuation") if k in metric}
        if match:
            out["match"] = match
    if out["scoring"] in ("choice", "exact_match"):
        out["target"] = _spec_of(settings["doc_to_target"])
    if out["scoring"] == "choice":
        out["choices"] = _spec_of(settings["doc_to_choice"])
        if isinstance(settings.get("doc_to_text"), _Function):  # partial evaluation: the gold context
            out["gold"] = _spec_of(settings["doc_to_text"])
    return out


def _dumper(module: str = UTILS_MODULE) -> type:
    """PyYAML's safe dumper that writes a :class:`_Function` as lm-eval's ``!function`` tag, naming the
    release's functions module ``module``."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def function(dumper: yaml.SafeDumper, value: _Function) -> yaml.Node:
        name = str(value).removeprefix(f"!function {UTILS_MODULE}.")
        return dumper.represent_scalar("!function", f"{module}.{name}")

    Dumper.add_representer(_Function, function)
    return Dumper


def _yaml(fields: Mapping[str, Any], order: Sequence[str] = _ORDER, module: str = UTILS_MODULE) -> str:
    """The task as YAML (PyYAML): keys in ``order``, then the others; no line wrapping."""
    import yaml

    ordered = {k: fields[k] for k in [k for k in order if k in fields] + [k for k in fields if k not in order]}
    return yaml.dump(ordered, Dumper=_dumper(module), sort_keys=False, allow_unicode=True, width=1 << 16,
                     default_flow_style=False)


def _metric_list() -> list[dict[str, Any]]:
    return [{"metric": "score", "aggregation": _fn("agg_score"), "higher_is_better": True},
            {"metric": "score_ci_low", "aggregation": _fn("agg_ci_low"), "higher_is_better": True},
            {"metric": "score_ci_high", "aggregation": _fn("agg_ci_high"), "higher_is_better": True},
            {"metric": ANCHOR_MEAN, **_MEAN}]


def _identifier(task: str) -> str:
    return re.sub(r"\W", "_", task)


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
               version: str, rows: Mapping[str, tuple[str, Sequence[str], Sequence[str]]] | None = None,
               design: Mapping[str, Any] | None = None) -> dict[str, str]:
    """``{path in the folder: text}`` of the task files of ``spec`` (module docstring).

    ``configs`` is the manifest's ``configs`` table (the configs built, their tiny splits,
    estimators and scenarios); ``rows`` maps a config to ``(key column, row keys, anchor ids)`` of
    its tiny split (:func:`row_keys`; row r is anchor r), what ``tiny_utils`` maps a document to its
    anchor by (without it the tasks cannot map results and the table is left empty: tests only).
    ``design``: the manifest's ``design`` table; each task's ``metadata.design`` is its config's
    design hash, which lm-eval copies into its results file, so ``tinybench-builder estimate`` can tell
    which design a run was made against. Empty when no config has a harness task
    (tinyAlpacaEval, tinyHELM).
    """
    out: dict[str, str] = {}
    tasks: list[str] = []
    table: dict = {}
    used: set[str] = set()  # the tiny_utils functions the task settings name
    module = utils_module(repo_id, tag)
    for c in spec.configs:
        if c.name not in configs:
            continue
        settings = task_settings(c)
        name = task_name(c)
        if settings is None or name is None:
            continue
        used |= _functions_in(settings)
        fields = {"task": name, "dataset_path": repo_id, "dataset_name": c.name,
                  "dataset_kwargs": {"revision": tag}, "test_split": configs[c.name]["tiny_split"],
                  "num_fewshot": 0, **settings,
                  # our scoring: lm-eval's, tagged with the row's anchor id; the estimate as the aggregation
                  "process_results": _fn(f"process_results_{_identifier(name)}"), "metric_list": _metric_list(),
                  "metadata": {"version": 2.0, "dataset_version": version,
                               **({"design": design["configs"][c.name]} if design and c.name in
                                  design.get("configs", {}) else {}),
                               "source": "written by tinybench-builder: score = the full-score estimate of the "
                                         "release's estimator, anchor_mean = the plain mean of the rows"}}
        out[f"{HARNESS_DIR}/{name}.yaml"] = _yaml(fields, module=module)
        tasks.append(name)
        key, keys, anchors = (rows or {}).get(c.name, ("", [], []))
        table[name] = {"estimator": configs[c.name].get("estimator", ""),
                       "scenario": configs[c.name].get("scenario", c.scenario), **_scoring(c, settings),
                       "key": key, "ids": dict(zip(keys, anchors))}
        pool = configs[c.name].get("pool_split")
        if pool:  # every item: what adaptive evaluation asks from, a batch at a time (--samples / samples=)
            # lm-eval's own per-row metrics (the adaptive recipe reads the config's harness_metric per
            # sample), not the estimate of the tiny split's aggregation
            out[f"{HARNESS_DIR}/{name}{POOL_SUFFIX}.yaml"] = _yaml({
                **{k: v for k, v in fields.items() if k not in ("process_results", "metric_list")}, **settings,
                "task": name + POOL_SUFFIX, "test_split": pool,
                "metadata": {**fields["metadata"], "source": "written by tinybench-builder; every item of the "
                             "estimator (the pool split): evaluate the items an adaptive session asks for with "
                             "--samples (docs/ADAPTIVE.md)"}}, module=module)
    if len(tasks) > 1:  # a bundle: the group of its tasks
        out[f"{HARNESS_DIR}/{spec.name}.yaml"] = _yaml({"group": spec.name, "task": tasks,
                                                        "metadata": {"version": 2.0, "dataset_version": version}},
                                                       order=())
    if tasks:
        # decided on the values, not on the YAML text: PyYAML quotes a tagged scalar (!function 'tiny_utils.x')
        v2 = any(str(_fn(name)) in used for name in _V2_FUNCTIONS)
        out[f"{HARNESS_DIR}/{module}.py"] = (
            UTILS_SOURCE + (v2_choices_source() + V2_LM_EVAL_SCORING if v2 else "")
            + "\n\n# ----------------------------------------------------------------- this release\n"
            f"REPO_ID = {json.dumps(repo_id)}\nREVISION = {json.dumps(tag)}\n"
            "#: per task: the estimator (subfolder of the release) and scenario, how a row is scored, and the\n"
            "#: row -> anchor id table (sha256 of the row's `key` column, first 16 hex digits)\n"
            f"TASKS = json.loads({json.dumps(json.dumps(table, ensure_ascii=False, sort_keys=True, indent=1))})\n"
            + "".join(f"process_results_{_identifier(t)} = _processor({json.dumps(t)})\n" for t in tasks))
    return out
