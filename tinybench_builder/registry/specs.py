"""Your own tiny benchmark: a small TOML file that describes a benchmark the registry does not have.

::

    name = "tinyWMDP_bio"                 # the dataset's (and repository's) name
    pretty_name = "tinyWMDP-bio"
    license = "mit"                       # Hub licence id of the source benchmark
    citation = '''@article{li2024wmdp, ...}'''   # BibTeX of the source benchmark
    item_id_column = "item_id"            # content column matching the response matrix's item ids
    split = "test"                        # the tiny split's name (default "test")
    prompt = '''{{ question.strip() }}
    A. {{ choices[0] }} ...
    Answer:'''                            # optional jinja2 template: input_formatted from a content row

    [harness]                             # optional: the lm-evaluation-harness task `build` writes
    output_type = "multiple_choice"       # or "generate_until"
    doc_to_choice = ["A", "B", "C", "D"]
    doc_to_target = "answer"
    metric = "acc"

Optional top-level keys: ``description`` (a paragraph for the card), ``task_categories``,
``task_ids``, ``anchors`` (default 100), ``config`` (the Hub config name, default ``default``),
``scenario`` (the estimator's name for it; default ``source_task`` or ``name``),
``source_task`` (the task ``tinybench-builder ingest`` reads from evaluation outputs), ``metric`` (what the
responses hold, default ``acc``), ``columns`` (the columns of the rows, default every content
column, the item id column first), ``upstream`` / ``upstream_config`` / ``upstream_split`` (a
Hub dataset to take the content from when ``--content`` does not give it). ``[harness]`` keys:
``task`` (default ``name``), ``output_type``, ``doc_to_text`` (default ``{{input_formatted}}``
with a prompt), ``doc_to_choice``, ``doc_to_target``, ``metric`` (default ``acc``),
``until`` (stop strings of ``generate_until``).

A spec is untrusted input, as a dataset is: ``config``, ``split`` and the harness ``task`` become
file and folder names of the build, so they must be plain names (letters, digits, ``_ . -``; a
split also follows datasets' rule); a path separator, ``..``, an absolute path or a control
character is a :class:`SpecError` when the file is loaded, before anything is written. The
``prompt`` renders in jinja2's sandbox; loading tags and ``_`` attributes are refused in it and
in the ``[harness]`` templates (:func:`tinybench_builder.registry.prompts.template_problems`).

:func:`load_spec_file` reads and checks a file into a :class:`~tinybench_builder.registry.benchmarks.BenchmarkSpec`
(one config, fitted alone); every problem is a :class:`SpecError` naming the file and the key.
The spec travels with what is built from it: the manifest keeps the checked mapping
(:func:`spec_from_mapping` reads it back), so a built folder's card can be re-rendered and its
logs estimated without the file.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal, Mapping, overload

from tinybench_builder.errors import SpecError
from tinybench_builder.layout import name_problem
from tinybench_builder.params import ANCHORS
from tinybench_builder.registry.benchmarks import REGISTRY, BenchmarkSpec, ConfigSpec, validate_spec
from tinybench_builder.registry.prompts import template_problems

__all__ = ["SpecError", "load_spec_file", "spec_from_mapping", "HARNESS_OUTPUT_TYPES", "HARNESS_METRICS",
           "LM_EVAL_TINY_TASKS"]

HARNESS_OUTPUT_TYPES = ("multiple_choice", "generate_until", "loglikelihood")
#: the per-row metrics the task files score a row by (as lm-eval does), per output type
HARNESS_METRICS = {"multiple_choice": ("acc", "acc_norm"), "loglikelihood": ("acc",),
                   "generate_until": ("exact_match",)}
#: lm-eval's own tiny tasks and group (0.4.x, ``lm_eval/tasks/tinyBenchmarks``): a task of ours with one
#: of these names would replace lm-eval's (silently before lm-eval 0.4.12)
LM_EVAL_TINY_TASKS = ("tinyArc", "tinyBenchmarks", "tinyGSM8k", "tinyHellaswag", "tinyMMLU", "tinyTruthfulQA",
                      "tinyTruthfulQA_mc1", "tinyWinogrande")
_NAME_RE = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}$")


@overload
def _str(data: Mapping, key: str, where: str, default: str, required: bool = False) -> str: ...
@overload
def _str(data: Mapping, key: str, where: str, default: None = None, *, required: Literal[True]) -> str: ...
@overload
def _str(data: Mapping, key: str, where: str, default: None = None, required: bool = False) -> str | None: ...
def _str(data: Mapping, key: str, where: str, default: str | None = None, required: bool = False) -> str | None:
    if key not in data:
        if required:
            raise SpecError(f"{where}: missing {key} = \"...\"")
        return default
    value = data[key]
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"{where}: {key} must be a non-empty string, got {value!r}")
    return value


def _str_list(data: Mapping, key: str, where: str) -> tuple[str, ...]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise SpecError(f"{where}: {key} must be a list of strings, got {value!r}")
    if len(set(value)) != len(value):
        raise SpecError(f"{where}: {key} has repeated entries")
    return tuple(value)


_TOP_KEYS = {"name", "pretty_name", "license", "citation", "item_id_column", "split", "prompt", "description",
             "task_categories", "task_ids", "anchors", "config", "scenario", "source_task", "metric", "columns",
             "upstream", "upstream_config", "upstream_split", "harness"}
_HARNESS_KEYS = {"task", "output_type", "doc_to_text", "doc_to_choice", "doc_to_target", "metric", "until"}


def _harness(data: Any, name: str, has_prompt: bool, where: str) -> tuple[str, str, dict]:
    """(task, metric, the task's settings) of the ``[harness]`` table."""
    where = f"{where}: [harness]"
    if not isinstance(data, dict):
        raise SpecError(f"{where} must be a table")
    bad = sorted(set(data) - _HARNESS_KEYS)
    if bad:
        raise SpecError(f"{where}: unknown key(s) {bad} (known: {sorted(_HARNESS_KEYS)})")
    task = _str(data, "task", where, default=name)
    _plain(task, "task", where)  # lm_eval/<task>.yaml
    if task in LM_EVAL_TINY_TASKS:
        raise SpecError(f"{where}: task {task!r} is one of lm-evaluation-harness's own tasks (lm-eval would run "
                        "one of the two without saying which); choose another with task = \"<name>\"")
    output_type = _str(data, "output_type", where, default="multiple_choice")
    if output_type not in HARNESS_OUTPUT_TYPES:
        raise SpecError(f"{where}: output_type must be one of {', '.join(HARNESS_OUTPUT_TYPES)}, got {output_type!r}")
    allowed = HARNESS_METRICS[output_type]
    metric = _str(data, "metric", where, default=allowed[0])
    if metric not in allowed:
        raise SpecError(f"{where}: metric of a {output_type} task must be one of {', '.join(allowed)}, got {metric!r}")
    doc_to_text = _str(data, "doc_to_text", where, default="{{input_formatted}}" if has_prompt else None)
    if doc_to_text is None:
        raise SpecError(f"{where}: doc_to_text is required without a prompt template")
    # lm-eval renders these (with its own, unsandboxed jinja2) wherever the task runs: same rule as the prompt
    for key in ("doc_to_text", "doc_to_choice", "doc_to_target"):
        if isinstance(data.get(key), str):
            _template(data[key], key, where)
    settings: dict[str, Any] = {"output_type": output_type, "doc_to_text": doc_to_text}
    choice = data.get("doc_to_choice")
    if output_type == "multiple_choice":
        if choice is None:
            raise SpecError(f"{where}: doc_to_choice (a list, or a template/column naming one) is required "
                            "for multiple_choice")
        if not (isinstance(choice, str) and choice) and not (
                isinstance(choice, list) and choice and all(isinstance(c, str) for c in choice)):
            raise SpecError(f"{where}: doc_to_choice must be a list of strings or a template, got {choice!r}")
        settings["doc_to_choice"] = choice
    elif choice is not None:
        raise SpecError(f"{where}: doc_to_choice is for output_type multiple_choice")
    target = data.get("doc_to_target")
    if target is None:
        raise SpecError(f"{where}: doc_to_target (a column, a template or an index) is required")
    if not isinstance(target, (str, int)) or isinstance(target, bool):
        raise SpecError(f"{where}: doc_to_target must be a column name, a template or an integer, got {target!r}")
    settings["doc_to_target"] = target
    if "until" in data:
        if output_type != "generate_until":
            raise SpecError(f"{where}: until is for output_type generate_until")
        settings["until"] = list(_str_list(data, "until", where))
    return task, metric, settings


def spec_from_mapping(data: Mapping[str, Any], where: str = "spec") -> BenchmarkSpec:
    """A checked :class:`BenchmarkSpec` from the keys of a spec file (module docstring)."""
    if not isinstance(data, Mapping):
        raise SpecError(f"{where}: a spec is a TOML table of keys")
    bad = sorted(set(data) - _TOP_KEYS)
    if bad:
        raise SpecError(f"{where}: unknown key(s) {bad} (known: {sorted(_TOP_KEYS)})")
    name = _str(data, "name", where, required=True)
    if not _NAME_RE.fullmatch(name):  # fullmatch: "$" alone lets a trailing newline through
        raise SpecError(f"{where}: name must be letters, digits, _ . - (a Hub repository name), got {name!r}")
    if name in REGISTRY:
        raise SpecError(f"{where}: {name!r} is a registered tiny benchmark; build it by name, or rename the spec")
    license_ = _str(data, "license", where, required=True)
    citation = _str(data, "citation", where, required=True)
    if "@" not in citation or "{" not in citation:
        raise SpecError(f"{where}: citation must be a BibTeX entry (@article{{...}})")
    id_col = _str(data, "item_id_column", where, default="item_id")
    split = _plain(_str(data, "split", where, default="test"), "split", where, split=True)  # <config>/<split>-...
    config_name = _plain(_str(data, "config", where, default="default"), "config", where)  # a folder of the build
    prompt = _str(data, "prompt", where)
    if prompt is not None:
        _template(prompt, "prompt", where)
    anchors = ANCHORS.check(data.get("anchors", 100), f"{where}: anchors", error=SpecError)
    columns = _str_list(data, "columns", where)
    if columns:
        columns = tuple(c for c in columns if c != "input_formatted")
        if id_col not in columns:
            columns = (id_col, *columns)  # the rows carry their item id
        if prompt is not None:
            columns = (*columns, "input_formatted")
    source_task = _str(data, "source_task", where, default="")
    upstream = _str(data, "upstream", where, default="")
    harness_task, harness_metric, harness_config = None, None, None
    if "harness" in data:
        harness_task, harness_metric, harness_config = _harness(data["harness"], name, prompt is not None, where)
    config = ConfigSpec(
        name=config_name,
        scenario=_str(data, "scenario", where, default=source_task or name),
        tiny_split=split, columns=columns,
        upstream=upstream, upstream_config=_str(data, "upstream_config", where),
        upstream_splits={split: _str(data, "upstream_split", where, default=split)} if upstream else {},
        source_task=source_task or name, metric=_str(data, "metric", where, default="acc"),
        renderer="template" if prompt is not None else None, prompt_template=prompt,
        harness_task=harness_task, harness_metric=harness_metric, harness_config=harness_config,
        content_from="upstream" if upstream else "local", item_id_column=id_col,
    )
    spec = BenchmarkSpec(
        name=name, pretty_name=_str(data, "pretty_name", where, default=name), configs=(config,),
        license=license_, task_categories=_str_list(data, "task_categories", where),
        task_ids=_str_list(data, "task_ids", where), source_citation=citation,
        description=_str(data, "description", where, default=""), anchors=anchors,
        custom=_plain_values(data),
    )
    problems = validate_spec(spec)
    if problems:
        raise SpecError(f"{where}: " + "; ".join(problems))
    return spec


def _template(text: str, key: str, where: str) -> None:
    """A SpecError unless ``text`` is a jinja2 template that reaches nothing but its row."""
    problems = template_problems(text)
    if problems:
        raise SpecError(f"{where}: {key}: " + "; ".join(problems))


def _plain(value: str, key: str, where: str, split: bool = False) -> str:
    """``value`` when it is a plain name (it becomes a file or folder name of the build), else a SpecError."""
    problem = name_problem(value, key, split=split)
    if problem:
        raise SpecError(f"{where}: {problem}")
    return value


def _plain_values(data: Mapping) -> dict:
    """The spec's keys as plain JSON values (TOML gives only these types), in file order."""
    return {k: (_plain_values(v) if isinstance(v, Mapping) else list(v) if isinstance(v, (list, tuple)) else v)
            for k, v in data.items()}


def load_spec_file(path: str | os.PathLike) -> BenchmarkSpec:
    """Read and check a spec file (TOML, module docstring); :class:`SpecError` on any problem."""
    try:
        import tomllib  # Python >= 3.11
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[no-redef,unused-ignore]
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise SpecError(f"spec file {path} not found") from None
    except IsADirectoryError:
        raise SpecError(f"spec {path} is a folder, not a TOML file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SpecError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise SpecError(f"{path}: not a benchmark spec (nested too deeply)") from None
    return spec_from_mapping(data, str(path))
