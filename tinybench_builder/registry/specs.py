"""Spec files: the one format of a tiny benchmark, a user's own and every registered one.

A spec file is a TOML file. Every registered benchmark (tinyMMLU ... tinyOpenLLMLeaderboardV2) is
one, shipped with the package in ``tinybench_builder/registry/registered/`` (their order is
``index.toml``'s, their BibTeX ``citations.bib``), and read by the same loader as yours, with the
same checks; :class:`SpecError` names the file and the key of any problem. ``specs/tinyWMDP_bio.toml``
is a user's example::

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

One config or several
---------------------
A benchmark has one Hub config or several (a *bundle*, fitted with one IRT model across them).
With one, its keys (below) may stand at the top of the file, as above. With several, each is a
table ``[configs.NAME]`` (NAME is the Hub config name); config keys at the top of the file are
then the defaults of every config table (``split = "test"`` once for all), and a table's own keys
win. ``from`` in a config table (``"tinyMMLU"``, or ``"tinyHELM/gsm"`` for one config of several)
starts from that registered benchmark's config, the table's keys replacing its keys (a
``[harness]`` table key by key): ``tinyOpenLLMLeaderboard.toml`` is six such tables.

Benchmark keys
--------------
``name`` (required; letters, digits, ``_ . -``; not a registered benchmark's name for your own),
``pretty_name`` (default ``name``), ``license`` (required: the Hub licence id; ``other`` with
``license_notes``), ``license_notes`` (per-source licence text for the card), ``citation``
(required: BibTeX text, or a list of keys of the shipped ``citations.bib``, joined in order),
``description`` (a paragraph for the card), ``task_categories``, ``task_ids`` (Hub metadata lists),
``anchors`` (per config, default 100), ``configs`` (the config tables), ``original_bench``
(registered benchmarks only: the ``bench`` of the original ``tinyBenchmarks.evaluate(y, bench)``).

Config keys
-----------
* Names: ``config`` (the one config's Hub name, top level only; default ``default``),
  ``scenario`` (the estimator's name for it; default ``source_task``), ``source_task`` (the task
  ``tinybench-builder ingest`` reads from evaluation outputs; default the config's own name: the
  benchmark's at the top level, NAME in a table), ``metric`` (what the responses hold, default
  ``acc``), ``license`` (in a config table only: the config's source licence when a bundle
  mixes sources).
* Splits and rows: ``split`` (the tiny split, default ``test``), ``full_splits`` (splits carried
  whole, e.g. few-shot material), ``split_sizes`` (their expected rows), ``eval_size`` (rows of the
  full upstream split the anchors come from), ``columns`` (the rows' columns; default every
  content column; ``input_formatted`` goes last when the config renders a prompt),
  ``item_id_first`` (default true: ``columns`` gets the item id column first when it does not
  list it; false keeps the list as written, as the registered benchmarks whose rows keep the
  upstream schema), ``item_id_column`` (the content column matching the response matrix's item
  ids, default ``item_id``), ``class_labels`` (column -> its ClassLabel names).
* Content: ``content_from`` (``local``: your files, given with ``--content``; ``upstream``: a Hub
  dataset; ``source``: the evaluation outputs themselves, e.g. HELM runs; default ``upstream``
  with an ``upstream``, else ``local``), ``upstream`` / ``upstream_config`` (the Hub dataset),
  ``upstream_splits`` (our split -> its split; default the same names) or ``upstream_split`` (the
  tiny split's only).
* Prompt: ``prompt`` (a jinja2 template rendering ``input_formatted`` from a row, rendered in a
  sandbox), or ``renderer`` (a registered renderer by name: ``mmlu``, ``arc``, ``hellaswag``,
  ``winogrande``, ``truthfulqa``, ``gsm8k``, ``lb2_ifeval``, ``lb2_bbh``, ``lb2_math``,
  ``lb2_gpqa``, ``lb2_musr``, ``lb2_mmlu_pro``: :data:`~tinybench_builder.registry.prompts.RENDERERS`), with
  ``num_fewshot``, ``fewshot_split`` (one of ``full_splits``), ``fewshot_sampler`` (``first_n``,
  ``harness_v1``), ``fewshot_seed`` (default 42), ``full_split_sampler`` (``fixed``, ``first_n``),
  ``full_split_seed`` (default 1234), ``fewshot_group`` (a column a row and its shots share).
* Scores: ``subscenario_weighting`` (``equal``, ``size`` or ``chance``: how the full score weighs
  the subscenarios), ``chance`` (the random baseline of the leaderboard's normalised score: a
  number in [0, 1), or a table subscenario -> number).
* Original names (registered benchmarks only): ``original_scenario``, ``legacy_scenarios``.
* ``harness``, a ``[harness]`` table: the lm-evaluation-harness task ``build`` writes. ``task`` (default the
  benchmark's name; with several configs ``<name>_<config>``), ``metric`` (the per-sample metric
  its logs hold), ``metric_alternatives`` (metrics read, in order, when the logs lack it) and
  either the task settings ``output_type`` (``multiple_choice``, ``generate_until``,
  ``loglikelihood``), ``doc_to_text`` (default ``{{input_formatted}}`` when the config renders a
  prompt), ``doc_to_choice``, ``doc_to_target``, ``until`` (stop strings of ``generate_until``),
  or, with a ``renderer`` and none of these, the task of that renderer (as lm-eval's own task of
  that benchmark scores it; ``metric`` is then required).

A spec is untrusted input, as a dataset is: ``config``, ``split`` and the harness ``task`` become
file and folder names of the build, so they must be plain names (letters, digits, ``_ . -``; a
split also follows datasets' rule); a path separator, ``..``, an absolute path or a control
character is a :class:`SpecError` when the file is loaded, before anything is written. The
``prompt`` renders in jinja2's sandbox; loading tags and ``_`` attributes are refused in it and
in the ``[harness]`` templates (:func:`tinybench_builder.registry.prompts.template_problems`).
A task name that is one of lm-eval's own tiny tasks is refused in your spec (the registered
benchmarks' tasks are written with a suffix, :mod:`tinybench_builder.dataset.harness_tasks`).

Starting from a registered benchmark
------------------------------------
A registered file is a spec you can copy (:func:`registered_spec_path` gives its path) and change:
give it your ``name``, delete the ``original_bench``, ``original_scenario`` and
``legacy_scenarios`` lines (the original tinyBenchmarks package's names, refused in your spec),
and give each ``[harness]`` table a ``task`` of your own (or delete the line: the default is your
benchmark's name); it then builds as the registered one does (``tests/registry/test_registry_files.py``).
For one config of a registered benchmark inside a spec of yours, ``from`` (above) is shorter.

:func:`load_spec_file` reads and checks your file into a
:class:`~tinybench_builder.registry.entries.BenchmarkSpec`; :func:`load_registered` reads the
registered ones. The spec travels with what is built from it: the manifest keeps your file's
mapping (:func:`spec_from_mapping` reads it back), so a built folder's card can be re-rendered and
its logs estimated without the file.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Mapping, overload

from tinybench_builder.errors import SpecError
from tinybench_builder.layout import name_problem
from tinybench_builder.params import ANCHORS, SEED
from tinybench_builder.registry.citations import BIBLIOGRAPHY, bibliography
from tinybench_builder.registry.entries import (
    CONTENT_FROM, FULL_SPLIT_SAMPLERS, SAMPLERS, WEIGHTINGS, BenchmarkSpec, ConfigSpec, validate_spec,
)
from tinybench_builder.registry.prompts import RENDERERS, TEMPLATE_RENDERER, template_problems

__all__ = ["SpecError", "load_spec_file", "spec_from_mapping", "load_registered", "registered_names",
           "registered_spec_path",
           "REGISTERED_DIR", "HARNESS_OUTPUT_TYPES", "HARNESS_METRICS", "LM_EVAL_TINY_TASKS", "BENCHMARK_KEYS",
           "CONFIG_KEYS", "HARNESS_KEYS", "REGISTERED_ONLY_KEYS"]

#: the spec files of the registered benchmarks (package data), ``index.toml`` listing them in order
REGISTERED_DIR = Path(__file__).with_name("registered")
_INDEX = "index.toml"
HARNESS_OUTPUT_TYPES = ("multiple_choice", "generate_until", "loglikelihood")
#: the per-row metrics the task files score a row by (as lm-eval does), per output type
HARNESS_METRICS = {"multiple_choice": ("acc", "acc_norm"), "loglikelihood": ("acc",),
                   "generate_until": ("exact_match",)}
#: lm-eval's own tiny tasks and group (0.4.x, ``lm_eval/tasks/tinyBenchmarks``): a task of ours with one
#: of these names would replace lm-eval's (silently before lm-eval 0.4.12)
LM_EVAL_TINY_TASKS = ("tinyArc", "tinyBenchmarks", "tinyGSM8k", "tinyHellaswag", "tinyMMLU", "tinyTruthfulQA",
                      "tinyTruthfulQA_mc1", "tinyWinogrande")
_NAME_RE = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}$")
_INPUT = "input_formatted"

#: keys of the benchmark (top level only)
BENCHMARK_KEYS = frozenset({"name", "pretty_name", "license", "license_notes", "citation", "description",
                            "task_categories", "task_ids", "anchors", "original_bench", "configs"})
#: keys of a config: at the top level (the one config, or every table's defaults) or in a ``[configs.NAME]`` table
CONFIG_KEYS = frozenset({
    "scenario", "source_task", "metric", "split", "full_splits", "split_sizes", "eval_size", "columns",
    "item_id_first", "item_id_column", "class_labels", "content_from", "upstream", "upstream_config",
    "upstream_splits", "upstream_split", "prompt", "renderer", "num_fewshot", "fewshot_split", "fewshot_sampler",
    "fewshot_seed", "full_split_sampler", "full_split_seed", "fewshot_group", "subscenario_weighting", "chance",
    "original_scenario", "legacy_scenarios", "harness"})
#: config keys of a ``[configs.NAME]`` table only (``license`` at the top level is the benchmark's)
_TABLE_ONLY_KEYS = frozenset({"from", "license"})
#: keys about the original tinyBenchmarks package's names: meaningful for the registered benchmarks only
REGISTERED_ONLY_KEYS = frozenset({"original_bench", "original_scenario", "legacy_scenarios"})
HARNESS_KEYS = frozenset({"task", "output_type", "doc_to_text", "doc_to_choice", "doc_to_target", "metric", "until",
                          "metric_alternatives"})
_HARNESS_SETTINGS = ("output_type", "doc_to_text", "doc_to_choice", "doc_to_target", "until")


# ------------------------------------------------------------------------------ values
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


def _int(data: Mapping, key: str, where: str, default: int | None, low: int = 0) -> int | None:
    if key not in data:
        return default
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise SpecError(f"{where}: {key} must be an integer of at least {low}, got {value!r}")
    return value


def _bool(data: Mapping, key: str, where: str, default: bool) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise SpecError(f"{where}: {key} must be true or false, got {value!r}")
    return value


def _choice(data: Mapping, key: str, where: str, choices: tuple[str, ...], default: str) -> str:
    value = _str(data, key, where, default=default)
    if value not in choices:
        raise SpecError(f"{where}: {key} must be one of {', '.join(choices)}, got {value!r}")
    return value


def _table(data: Mapping, key: str, where: str) -> dict:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise SpecError(f"{where}: {key} must be a table, got {value!r}")
    return dict(value)


def _probability(value: Any, what: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise SpecError(f"{where}: {what} must be a number in [0, 1), got {value!r}")
    return float(value)


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


# ------------------------------------------------------------------------------ [harness]
def _harness(data: Any, task: str, renderer: str | None, renders: bool, where: str,
             registered: bool) -> tuple[str, str, dict | None, tuple[str, ...]]:
    """(task, metric, the task's settings or None for the renderer's, metric alternatives) of ``[harness]``."""
    where = f"{where}: [harness]"
    if not isinstance(data, dict):
        raise SpecError(f"{where} must be a table")
    bad = sorted(set(data) - HARNESS_KEYS)
    if bad:
        raise SpecError(f"{where}: unknown key(s) {bad} (known: {sorted(HARNESS_KEYS)})")
    task = _str(data, "task", where, default=task)
    _plain(task, "task", where)  # lm_eval/<task>.yaml
    if task in LM_EVAL_TINY_TASKS and not registered:
        raise SpecError(f"{where}: task {task!r} is one of lm-evaluation-harness's own tasks (lm-eval would run "
                        "one of the two without saying which); choose another with task = \"<name>\"")
    alternatives = _str_list(data, "metric_alternatives", where)
    if renderer is not None and not any(k in data for k in _HARNESS_SETTINGS):
        # the renderer's task: lm-eval's own task of that benchmark (tinybench_builder.dataset.harness_tasks)
        metric = _str(data, "metric", where, required=True)
        return task, metric, None, alternatives
    output_type = _str(data, "output_type", where, default="multiple_choice")
    if output_type not in HARNESS_OUTPUT_TYPES:
        raise SpecError(f"{where}: output_type must be one of {', '.join(HARNESS_OUTPUT_TYPES)}, got {output_type!r}")
    allowed = HARNESS_METRICS[output_type]
    metric = _str(data, "metric", where, default=allowed[0])
    for m in (metric, *alternatives):
        if m not in allowed:
            raise SpecError(f"{where}: metric of a {output_type} task must be one of {', '.join(allowed)}, got {m!r}")
    doc_to_text = _str(data, "doc_to_text", where, default="{{input_formatted}}" if renders else None)
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
    return task, metric, settings, alternatives


# ------------------------------------------------------------------------------ one config
def _columns(m: Mapping, id_col: str, renders: bool, where: str) -> tuple[str, ...]:
    """The config's columns: as listed, the item id column first (unless ``item_id_first = false``),
    ``input_formatted`` last when the config renders a prompt; empty: every content column."""
    columns = _str_list(m, "columns", where)
    if not columns:
        return ()
    columns = tuple(c for c in columns if c != _INPUT)
    if _bool(m, "item_id_first", where, default=True) and id_col not in columns:
        columns = (id_col, *columns)  # the rows carry their item id
    return (*columns, _INPUT) if renders else columns


def _upstream_splits(m: Mapping, upstream: str, splits: tuple[str, ...], where: str) -> dict[str, str]:
    """Our split -> the upstream dataset's split: ``upstream_splits``, else the same names (the tiny
    split's from ``upstream_split``); none without an upstream dataset."""
    if "upstream_splits" in m:
        if "upstream_split" in m:
            raise SpecError(f"{where}: give upstream_splits or upstream_split, not both")
        table = _table(m, "upstream_splits", where)
        for ours, theirs in table.items():
            if not isinstance(theirs, str) or not theirs:
                raise SpecError(f"{where}: upstream_splits.{ours} must be a split name, got {theirs!r}")
        return table
    if not upstream:
        return {}
    out = {s: s for s in splits}
    out[splits[0]] = _str(m, "upstream_split", where, default=splits[0])
    return out


def _sizes(m: Mapping, where: str) -> dict[str, int]:
    table = _table(m, "split_sizes", where)
    for split in table:
        _int(table, split, f"{where}: split_sizes", None)
    return table


def _class_labels(m: Mapping, where: str) -> dict[str, tuple[str, ...]]:
    table = _table(m, "class_labels", where)
    return {column: _str_list(table, column, f"{where}: class_labels") for column in table}


def _chance(m: Mapping, where: str) -> float | dict | None:
    value = m.get("chance")
    if value is None:
        return None
    if isinstance(value, Mapping):
        return {s: _probability(v, f"chance.{s}", where) for s, v in value.items()}
    return _probability(value, "chance", where)


def _config(m: Mapping, name: str, own: str, task: str, where: str, registered: bool) -> ConfigSpec:
    """A :class:`ConfigSpec` from a config's keys (module docstring): ``name`` its Hub name, ``own``
    the default of its source task, ``task`` the default of its harness task."""
    split = _plain(_str(m, "split", where, default="test"), "split", where, split=True)  # <config>/<split>-...
    full_splits = tuple(_plain(s, "full_splits", where, split=True) for s in _str_list(m, "full_splits", where))
    prompt = _str(m, "prompt", where)
    if prompt is not None:
        _template(prompt, "prompt", where)
    renderer = _str(m, "renderer", where)
    if renderer is not None:
        if prompt is not None:
            raise SpecError(f"{where}: give a prompt (your template) or a renderer (a registered one), not both")
        if renderer not in RENDERERS:
            raise SpecError(f"{where}: unknown renderer {renderer!r} (known: {', '.join(RENDERERS)}); "
                            "a prompt of your own is a jinja2 `prompt`")
    id_col = _str(m, "item_id_column", where, default="item_id")
    upstream = _str(m, "upstream", where, default="")
    source_task = _str(m, "source_task", where, default=own)
    harness: tuple[str | None, str | None, dict | None, tuple[str, ...]] = (None, None, None, ())
    if "harness" in m:
        harness = _harness(m["harness"], task, renderer, prompt is not None or renderer is not None, where, registered)
    return ConfigSpec(
        name=name, scenario=_str(m, "scenario", where, default=source_task), tiny_split=split, full_splits=full_splits,
        columns=_columns(m, id_col, prompt is not None or renderer is not None, where),
        upstream=upstream, upstream_config=_str(m, "upstream_config", where),
        upstream_splits=_upstream_splits(m, upstream, (split, *full_splits), where),
        source_task=source_task, metric=_str(m, "metric", where, default="acc"),
        renderer=TEMPLATE_RENDERER if prompt is not None else renderer,
        harness_task=harness[0], harness_metric=harness[1], harness_config=harness[2],
        harness_metric_alternatives=harness[3],
        num_fewshot=_int(m, "num_fewshot", where, 0) or 0, fewshot_split=_str(m, "fewshot_split", where),
        fewshot_sampler=_choice(m, "fewshot_sampler", where, SAMPLERS, "first_n"),
        fewshot_seed=SEED.check(m.get("fewshot_seed", 42), f"{where}: fewshot_seed", error=SpecError),
        full_split_sampler=_choice(m, "full_split_sampler", where, FULL_SPLIT_SAMPLERS, "fixed"),
        full_split_seed=SEED.check(m.get("full_split_seed", 1234), f"{where}: full_split_seed", error=SpecError),
        fewshot_group=_str(m, "fewshot_group", where), eval_size=_int(m, "eval_size", where, None, low=1),
        split_sizes=_sizes(m, where), class_labels=_class_labels(m, where),
        content_from=_choice(m, "content_from", where, CONTENT_FROM, "upstream" if upstream else "local"),
        item_id_column=id_col, prompt_template=prompt, license=_str(m, "license", where),
        original_scenario=_str(m, "original_scenario", where), legacy_scenarios=_str_list(m, "legacy_scenarios", where),
        subscenario_weighting=_choice(m, "subscenario_weighting", where, WEIGHTINGS, "equal"), chance=_chance(m, where),
    )


# ------------------------------------------------------------------------------ the configs of a file
def _config_tables(data: Mapping, where: str, resolve: bool = True) -> list[tuple[str, dict, str]]:
    """``(config name, its keys, where)`` of each config of a spec mapping: the top-level keys (one
    config), or each ``[configs.NAME]`` table over the config it copies (``from``) over the top-level
    defaults. ``resolve=False`` leaves ``from`` unresolved (a copied config must not copy another)."""
    defaults = {k: v for k, v in data.items() if k in CONFIG_KEYS}
    if "configs" not in data:
        name = _plain(_str(data, "config", where, default="default"), "config", where)  # a folder of the build
        return [(name, defaults, where)]
    if "config" in data:
        raise SpecError(f"{where}: config names the one config of a spec without [configs] tables; "
                        "with them, each table's name is its config's")
    tables = data["configs"]
    if not isinstance(tables, Mapping) or not tables or not all(isinstance(t, Mapping) for t in tables.values()):
        raise SpecError(f"{where}: configs must hold one table per config ([configs.NAME])")
    out = []
    for name, table in tables.items():
        at = f"{where}: [configs.{name}]"
        _plain(name, "config name", at)
        bad = sorted(set(table) - CONFIG_KEYS - _TABLE_ONLY_KEYS)
        if bad:
            raise SpecError(f"{at}: unknown key(s) {bad} (known: {sorted(CONFIG_KEYS | _TABLE_ONLY_KEYS)})")
        base = _copied_config(_str(table, "from", at, required=True), at) if resolve and "from" in table else {}
        own = {k: v for k, v in table.items() if not (resolve and k == "from")}
        keys = {**defaults, **base, **own}
        if isinstance(base.get("harness"), Mapping) and isinstance(own.get("harness"), Mapping):
            keys["harness"] = {**base["harness"], **own["harness"]}  # a [harness] table updates the copied one
        out.append((name, keys, at))
    return out


def _copied_config(ref: str, where: str) -> dict:
    """The keys of the registered config ``ref`` (``"tinyMMLU"``: its one config; ``"tinyHELM/gsm"``)."""
    bench, _, config = ref.partition("/")
    files = _registered_files()
    if bench not in files:
        raise SpecError(f"{where}: from = {ref!r}: no registered benchmark {bench!r} "
                        f"(registered: {', '.join(files)})")
    path, source = files[bench]
    configs = {c: keys for c, keys, _ in _config_tables(source, str(path), resolve=False)}
    if not config and len(configs) != 1:
        raise SpecError(f"{where}: from = {ref!r}: {bench} has {len(configs)} configs; name one: "
                        + ", ".join(f"\"{bench}/{c}\"" for c in configs))
    config = config or next(iter(configs))
    if config not in configs:
        raise SpecError(f"{where}: from = {ref!r}: {bench} has no config {config!r} (configs: {', '.join(configs)})")
    if "from" in configs[config]:
        raise SpecError(f"{where}: from = {ref!r}: that config is a copy itself; name the config it copies")
    return configs[config]


# ------------------------------------------------------------------------------ a spec
def _citation(data: Mapping, where: str) -> str:
    """The BibTeX of ``citation``: the text given, or the entries of ``citations.bib`` its keys name."""
    value = data.get("citation")
    if value is None:
        raise SpecError(f"{where}: missing citation = \"...\" (BibTeX, or a list of keys of the shipped citations.bib)")
    if isinstance(value, list):
        keys = _str_list(data, "citation", where)
        bib = bibliography()
        unknown = [k for k in keys if k not in bib]
        if not keys or unknown:
            raise SpecError(f"{where}: citation: {unknown or 'no keys'} not in {BIBLIOGRAPHY.name} "
                            f"(tinybench_builder/registry/registered/); give the BibTeX text instead")
        return "\n".join(bib[k] for k in keys)
    citation = _str(data, "citation", where, required=True)
    if "@" not in citation or "{" not in citation:
        raise SpecError(f"{where}: citation must be a BibTeX entry (@article{{...}})")
    return citation


def _refuse_registered_only(data: Mapping[str, Any], where: str) -> None:
    """A SpecError when your spec writes a key of :data:`REGISTERED_ONLY_KEYS` (a copied config may carry them)."""
    tables = data.get("configs")
    places: list[tuple[str, Any]] = [(where, data)]
    if isinstance(tables, Mapping):
        places += [(f"{where}: [configs.{n}]", table) for n, table in tables.items()]
    for at, keys in places:
        only = sorted(REGISTERED_ONLY_KEYS & set(keys if isinstance(keys, Mapping) else ()))
        if only:
            raise SpecError(f"{at}: {', '.join(only)}: the original tinyBenchmarks names are for the "
                            "registered benchmarks only (in a copy of a registered file: delete the line)")


def _spec(data: Mapping[str, Any], where: str, registered: bool) -> BenchmarkSpec:
    """A checked :class:`BenchmarkSpec` from the keys of a spec file; ``registered``: a file of the registry."""
    if not isinstance(data, Mapping):
        raise SpecError(f"{where}: a spec is a TOML table of keys")
    known = BENCHMARK_KEYS | CONFIG_KEYS | {"config"}
    bad = sorted(set(data) - known)
    if bad:
        raise SpecError(f"{where}: unknown key(s) {bad} (known: {sorted(known)})")
    name = _str(data, "name", where, required=True)
    if not _NAME_RE.fullmatch(name):  # fullmatch: "$" alone lets a trailing newline through
        raise SpecError(f"{where}: name must be letters, digits, _ . - (a Hub repository name), got {name!r}")
    if not registered:
        if name in registered_names():
            raise SpecError(f"{where}: {name!r} is a registered tiny benchmark; build it by name, or rename the spec")
        _refuse_registered_only(data, where)
    license_ = _str(data, "license", where, required=True)
    citation = _citation(data, where)
    anchors = ANCHORS.check(data.get("anchors", 100), f"{where}: anchors", error=SpecError)
    tables = _config_tables(data, where)
    configs = []
    for config_name, keys, at in tables:
        own, task = (name, name) if "configs" not in data else (config_name, name if len(tables) == 1
                                                                 else f"{name}_{config_name}")
        configs.append(_config(keys, config_name, own, task, at, registered))
    spec = BenchmarkSpec(
        name=name, pretty_name=_str(data, "pretty_name", where, default=name), configs=tuple(configs),
        license=license_, task_categories=_str_list(data, "task_categories", where),
        task_ids=_str_list(data, "task_ids", where), source_citation=citation,
        description=_str(data, "description", where, default=""), anchors=anchors, joint=len(configs) > 1,
        license_notes=_str(data, "license_notes", where, default=""),
        original_bench=_str(data, "original_bench", where),
        custom=None if registered else _plain_values(data),
    )
    problems = validate_spec(spec)
    if problems:
        raise SpecError(f"{where}: " + "; ".join(problems))
    return spec


def spec_from_mapping(data: Mapping[str, Any], where: str = "spec") -> BenchmarkSpec:
    """A checked :class:`BenchmarkSpec` from the keys of your spec file (module docstring)."""
    return _spec(data, where, registered=False)


def _read_toml(path: Path) -> dict:
    try:
        import tomllib  # Python >= 3.11
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[no-redef,unused-ignore]
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise SpecError(f"spec file {path} not found") from None
    except IsADirectoryError:
        raise SpecError(f"spec {path} is a folder, not a TOML file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SpecError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise SpecError(f"{path}: not a benchmark spec (nested too deeply)") from None


def load_spec_file(path: str | os.PathLike) -> BenchmarkSpec:
    """Read and check your spec file (TOML, module docstring); :class:`SpecError` on any problem."""
    path = Path(path)
    return spec_from_mapping(_read_toml(path), str(path))


# ------------------------------------------------------------------------------ the registered files
@lru_cache(maxsize=1)
def _registered_files() -> dict[str, tuple[Path, dict]]:
    """Name -> (its spec file, the file's keys) of every registered benchmark, in ``index.toml``'s order."""
    index_path = REGISTERED_DIR / _INDEX
    names = _str_list(_read_toml(index_path), "benchmarks", str(index_path))
    on_disk = {p.stem for p in REGISTERED_DIR.glob("*.toml")} - {Path(_INDEX).stem}
    if set(names) != on_disk:
        raise SpecError(f"{index_path}: benchmarks must list every spec file of {REGISTERED_DIR} "
                        f"(not listed: {sorted(on_disk - set(names))}; no file: {sorted(set(names) - on_disk)})")
    out = {}
    for name in names:
        path = REGISTERED_DIR / f"{name}.toml"
        data = _read_toml(path)
        if data.get("name") != name:
            raise SpecError(f"{path}: name must be the file's name, {name!r}")
        out[name] = (path, data)
    return out


def registered_names() -> tuple[str, ...]:
    """The registered benchmarks' names, in registration order (``registered/index.toml``)."""
    return tuple(_registered_files())


def registered_spec_path(name: str) -> Path:
    """The spec file of the registered benchmark ``name`` (in the installed package): a spec to
    copy and change (module docstring, *Starting from a registered benchmark*)."""
    files = _registered_files()
    if name not in files:
        raise SpecError(f"{name!r} is not a registered tiny benchmark (registered: {', '.join(files)})")
    return files[name][0]


def load_registered() -> list[BenchmarkSpec]:
    """Every registered benchmark, read from its spec file by the loader of yours, in registration order."""
    return [_spec(data, str(path), registered=True) for path, data in _registered_files().values()]
