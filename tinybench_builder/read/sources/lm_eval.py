"""lm-evaluation-harness ``--log_samples`` output (every v0.4.x layout).

Layouts (SOURCE_FORMATS.md section 3):

* v0.4.0 - v0.4.2: ``DIR/results.json`` and ``DIR/<model_args sanitized>_<task>.jsonl`` where
  the ``.jsonl`` file is really a pretty-printed JSON *array*;
* v0.4.3+: ``DIR/<model_sanitized>/results_<ts>.json`` and ``samples_<task>_<ts>.jsonl``
  (one JSON object per line; values may be strings such as ``"1.0"``). The Open LLM
  Leaderboard v2 details use the same files (early ones with a ``.json`` extension).

Rules:

* group tasks (``mmlu``) have one samples file per leaf subtask (``mmlu_<subject>``), giving
  item ids ``<subject>.<doc_id>``; a single task gives ``<doc_id>``; several unrelated tasks
  give ``<task>.<doc_id>``;
* a document appears once per filter: the ``filter`` key (>= 0.4.7) tells them apart, else
  their order (all records of the first filter, then the second ...). GSM8K defaults to
  ``strict-match``; ``filter=`` picks another;
* documents are sorted by ``doc_id`` (multi-GPU runs interleave ranks);
* several runs of one model: the newest timestamp wins per task (reported in the notes);
* the model name comes from ``config.model_args`` (``pretrained=``) of the results file, else
  from the folder name with ``__`` read as ``/``;
* the metric defaults per task (``acc``; ``acc_norm`` for ARC/HellaSwag; ``exact_match`` for
  GSM8K; mc2's ``acc`` for truthfulqa_mc2 ...), ``metric=`` overrides.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tinybench_builder.read.sources import SourceError
from tinybench_builder.inputs import doc_index, iter_records, read_json, walk_files
from tinybench_builder.read.sources._common import Block, ModelPart, Options, Unit, map_units, to_float
from tinybench_builder.read.sources.reduce import assemble

TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[-:]\d{2}[-:]\d{2}(?:\.\d+)?$")

#: (regex on the leaf task name, default per-example metric); first match wins
DEFAULT_METRICS: list[tuple[str, str]] = [
    (r"^leaderboard_ifeval$", "prompt_level_strict_acc"),
    (r"^leaderboard_math_", "exact_match"),
    (r"^leaderboard_mmlu_pro$", "acc"),
    (r"^leaderboard_(bbh|gpqa|musr)", "acc_norm"),
    (r"^tinyTruthfulQA", "acc"),
    (r"^tinyGSM8k", "exact_match"),
    (r"^tiny", "acc_norm"),
    (r"^truthfulqa_mc[12]$", "acc"),
    (r"gsm8k", "exact_match"),
    (r"^(arc_challenge|arc_easy|arc)$", "acc_norm"),
    (r"^hellaswag$", "acc_norm"),
]
#: (regex on the leaf task name, default filter when records carry several)
DEFAULT_FILTERS: list[tuple[str, str]] = [(r"gsm8k|GSM8k", "strict-match")]
#: fields of ``doc`` that hold the question text, first present wins
QUESTION_FIELDS = ("question", "query", "input", "problem", "prompt", "sentence", "instruction", "ctx")
_NON_METRIC_KEYS = {
    "doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "doc_hash", "prompt_hash",
    "target_hash", "filter", "metrics",
}


# --------------------------------------------------------------------------- file names
def split_samples_name(name: str) -> tuple[str, str] | None:
    """``samples_<task>_<ts>.jsonl`` (or ``.json``) -> ``(task, ts)``; None if not one."""
    if name.endswith(".jsonl"):
        stem = name[:-6]
    elif name.endswith(".json"):
        stem = name[:-5]
    else:
        return None
    if not stem.startswith("samples_"):
        return None
    task, _, ts = stem[len("samples_"):].rpartition("_")
    if not task or not TS_RE.match(ts):
        return None
    return task, ts


def results_ts(name: str) -> str:
    stem = name[:-5] if name.endswith(".json") else name
    _, _, ts = stem.rpartition("_")
    return ts if TS_RE.match(ts) else ""


def norm_ts(ts: str) -> str:
    return ts.replace(":", "-")


def sanitize_model_args(model_args: str) -> str:
    """The v0.4.0-0.4.2 samples file prefix: ``re.sub('/|=', '__', model_args)``."""
    return re.sub("/|=", "__", model_args)


def parse_model_args(model_args: Any) -> dict[str, str]:
    if isinstance(model_args, dict):
        return {str(k): str(v) for k, v in model_args.items()}
    out: dict[str, str] = {}
    for piece in str(model_args or "").split(","):
        key, sep, value = piece.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def model_name_from_results(results: dict) -> str | None:
    """``pretrained=`` (or ``model=``) of ``config.model_args``, else ``model_name``."""
    cfg = results.get("config") or {}
    args = parse_model_args(cfg.get("model_args"))
    for key in ("pretrained", "model", "path", "engine"):
        if args.get(key):
            return args[key]
    name = results.get("model_name")
    return str(name) if name else None


#: the ``model_args`` keys lm-eval names its runs by, in its order (``GeneralConfigTracker._get_model_name``)
LM_EVAL_NAME_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")


def model_named_in_results(results: dict) -> str | None:
    """The model a results file names, as lm-eval names the run: its ``model_args``' ``peft``, ``delta``,
    ``pretrained``, ``model``, ``path`` or ``engine`` (lm-eval's order; its ``model_name``), else the
    model type ``config.model`` (``dummy``, or the class of a model object): never the random id
    lm-eval puts in ``model_name`` (and the output folder's name) for a model without arguments."""
    cfg = results.get("config") or {}
    args = parse_model_args(cfg.get("model_args"))
    for key in LM_EVAL_NAME_KEYS:
        if args.get(key):
            return args[key]
    model = cfg.get("model")
    if isinstance(model, str) and model:
        return model
    name = results.get("model_name")
    return str(name) if name else None


def model_name_from_folder(name: str) -> str:
    """``01-ai__Yi-1.5-6B`` -> ``01-ai/Yi-1.5-6B`` (also strips a ``-details`` suffix)."""
    if name.endswith("-details"):
        name = name[: -len("-details")]
    return name.replace("__", "/")


def _model_from_legacy_prefix(prefix: str) -> str:
    """``pretrained__EleutherAI__pythia-160m,dtype__float32`` -> ``EleutherAI/pythia-160m``."""
    pieces = prefix.split(",")
    for piece in pieces:
        key, sep, value = piece.partition("__")
        if sep and key in ("pretrained", "model", "path", "engine"):
            return value.replace("__", "/")
    return prefix.replace("__", "/")


def default_metric(task: str) -> str | None:
    for pattern, metric in DEFAULT_METRICS:
        if re.search(pattern, task):
            return metric
    return None


def default_filter(task: str) -> str | None:
    for pattern, name in DEFAULT_FILTERS:
        if re.search(pattern, task):
            return name
    return None


# --------------------------------------------------------------------------- results json
def is_results(data: Any) -> bool:
    return isinstance(data, dict) and "results" in data and any(k in data for k in ("config", "configs", "versions"))


def _filter_names(results: dict | None, task: str) -> list[str]:
    """Filter names of ``task`` in evaluation order (config filter_list, else result keys)."""
    if not results:
        return []
    cfg = (results.get("configs") or {}).get(task) or {}
    names = [f.get("name") for f in cfg.get("filter_list") or [] if isinstance(f, dict) and f.get("name")]
    if names:
        return [str(n) for n in names]
    out: list[str] = []
    for key in (results.get("results") or {}).get(task) or {}:
        metric, sep, filt = str(key).partition(",")
        if sep and not metric.endswith("_stderr") and filt not in out:
            out.append(filt)
    return out


def _result_metrics(results: dict | None, task: str) -> list[str]:
    out: list[str] = []
    for key in ((results or {}).get("results") or {}).get(task) or {}:
        metric, _, _ = str(key).partition(",")
        if metric != "alias" and not metric.endswith("_stderr") and metric not in out:
            out.append(metric)
    return out


def _group_parents(all_results: list[dict]) -> dict[str, str]:
    """leaf task -> its parent group, from ``group_subtasks`` (>=0.4.3) or configs' ``group``."""
    parent: dict[str, str] = {}
    for res in all_results:
        if "group_subtasks" in res:  # authoritative (>= 0.4.3)
            for group, subs in (res.get("group_subtasks") or {}).items():
                for sub in subs or []:
                    if sub != group:
                        parent.setdefault(str(sub), str(group))
            continue
        # before 0.4.3 a config's ``group`` may be a mere tag; trust it only when the group
        # itself was reported (the user ran the group)
        reported = set(res.get("results") or {}) | set(res.get("groups") or {})
        for task, cfg in (res.get("configs") or {}).items():
            group = (cfg or {}).get("group") if isinstance(cfg, dict) else None
            if isinstance(group, list):
                group = group[0] if group else None
            if group and group != task and group in reported:
                parent.setdefault(str(task), str(group))
    return parent


def _ancestors(task: str, parent: dict[str, str]) -> list[str]:
    out, seen = [], {task}
    while task in parent and parent[task] not in seen:
        task = parent[task]
        seen.add(task)
        out.append(task)
    return out


def _strip(leaf: str, group: str) -> str:
    return leaf[len(group) + 1:] if leaf.startswith(group + "_") else leaf


def resolve_task(leaf: str, task: str | None, parent: dict[str, str]) -> tuple[str, str] | None:
    """(scenario, subscenario) of a leaf task file, or None when ``task`` does not select it."""
    ancestors = _ancestors(leaf, parent)
    if task is None:
        if ancestors:
            top = ancestors[-1]
            return top, _strip(leaf, top)
        return leaf, ""
    if leaf == task:
        return task, ""
    if task in ancestors or leaf.startswith(task + "_"):
        return task, _strip(leaf, task)
    return None


# --------------------------------------------------------------------------- scan
def scan(path: str | Path, options: Options | None = None) -> list[Unit]:
    """One unit per folder holding samples files (a folder may hold several models)."""
    options = options or Options()
    path = Path(path)
    if not path.exists():
        raise SourceError(f"{path}: no such file or folder")
    only: list[str] | None = None
    if path.is_file():
        only = [path.name]
        dirs = [path.parent]
    else:
        found: dict[Path, None] = {}
        for f in walk_files(path):
            if split_samples_name(f.name) or (f.suffix == ".jsonl" and not f.name.startswith("samples_")):
                found.setdefault(f.parent, None)
        dirs = list(found)
    return [
        Unit("lm_eval", str(d), model_name_from_folder(d.name), {"dir": str(d), "only": only}, options)
        for d in dirs
    ]


def read(path: str | Path, task: str | None = None, metric: str | None = None, filter: str | None = None,
         workers: int | None = None):
    """Read lm-eval ``--log_samples`` output (a folder of model folders, one folder, or one file)."""
    units = scan(path, Options(task=task, metric=metric, filter=filter))
    if units:
        units[0].want_content = True
    parts = map_units(units, workers=workers)
    _check_found(parts, task, path)
    return assemble(parts)


def _check_found(parts: list[ModelPart], task: str | None, source: Any) -> None:
    if not any(p.blocks for p in parts):
        avail = sorted({t for p in parts for t in p.available})
        if task and avail:
            raise SourceError(f"{source}: no samples for task {task!r}; found: {', '.join(avail)}")
        raise SourceError(f"{source}: no lm-eval samples files found")


# --------------------------------------------------------------------------- read one folder
def read_unit(unit: Unit) -> list[ModelPart]:
    d = Path(unit.payload["dir"])
    only = unit.payload.get("only")
    opts = unit.options
    names = sorted(p.name for p in d.iterdir() if p.is_file() and not p.name.startswith("."))
    if only:
        names = [n for n in names if n in only] + [
            n for n in names if n not in only and n.endswith(".json") and not split_samples_name(n)
        ]

    results: dict[str, dict] = {}  # ts ("" for results.json) -> results json
    samples: list[tuple[str, str, Path]] = []  # (task, ts, path)
    legacy: list[Path] = []
    for n in names:
        parsed = split_samples_name(n)
        if parsed:
            samples.append((parsed[0], norm_ts(parsed[1]), d / n))
        elif n.endswith(".jsonl"):
            legacy.append(d / n)
        elif n.endswith(".json"):
            if n.startswith("results"):
                data = read_json(d / n)
            else:  # --output_path ending in .json names the results file freely
                try:
                    data = read_json(d / n)
                except SourceError:
                    continue
            if is_results(data):
                results[norm_ts(results_ts(n))] = data
    if only:  # a single samples file was named: keep only it
        samples = [s for s in samples if s[2].name in only]
        legacy = [p for p in legacy if p.name in only]

    folder_model = model_name_from_folder(d.name)
    # model name per results timestamp
    ts_model = {ts: (model_name_from_results(r) or folder_model) for ts, r in results.items()}
    newest_results = results[max(results)] if results else None
    default_model = (model_name_from_results(newest_results) if newest_results else None) or folder_model

    # entries: model -> task -> list[(ts, path, results json)]
    runs: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    notes: dict[str, list[str]] = defaultdict(list)
    for task, ts, p in samples:
        res = results.get(ts)
        model = ts_model.get(ts, default_model)
        runs[model][task].append((ts, p, res))
    if legacy:
        _legacy_runs(legacy, results, folder_model, runs, notes)

    parent = _group_parents(list(results.values()))
    parts: list[ModelPart] = []
    first = True
    for model, tasks in runs.items():
        part = ModelPart(model, str(d), available=sorted(tasks))
        part.notes.extend(notes.get(model, []))
        for leaf in sorted(tasks):
            where = resolve_task(leaf, opts.task, parent)
            if where is None:
                continue
            cands = sorted(tasks[leaf], key=lambda r: r[0])
            ts, p, res = cands[-1]
            if len(cands) > 1:
                older = ", ".join(c[0] or c[1].name for c in cands[:-1])
                part.notes.append(
                    f"{model}: {leaf}: {len(cands)} runs, using the newest ({ts or p.name}); ignored {older}"
                )
            block, bnotes = read_samples_file(
                p, leaf, where[0], where[1], opts.metric, opts.filter, res, unit.want_content and first
            )
            part.blocks.append(block)
            part.notes.extend(f"{model}: {n}" for n in bnotes)
        first = False
        parts.append(part)
    return parts


def _legacy_runs(legacy: list[Path], results: dict[str, dict], folder_model: str, runs, notes) -> None:
    """v0.4.0-0.4.2 ``<sanitized model_args>_<task>.jsonl`` files."""
    res = results.get("") or (results[max(results)] if results else None)
    known: set[str] = set()
    prefix_model: dict[str, str] = {}
    if res:
        known = set((res.get("configs") or {})) | set((res.get("results") or {}))
        args = (res.get("config") or {}).get("model_args")
        if isinstance(args, str) and args:
            prefix_model[sanitize_model_args(args)] = model_name_from_results(res) or folder_model
    for p in legacy:
        stem = p.name[:-6]
        task = max((t for t in known if stem.endswith("_" + t)), key=len, default=None)
        guessed = False
        if task is None:
            tail = stem.rsplit("__", 1)[-1]
            if "_" not in tail:
                raise SourceError(f"{p}: cannot tell the task from the file name (no results json next to it)")
            task = tail.split("_", 1)[1]
            guessed = True
        prefix = stem[: -len(task) - 1]
        model = prefix_model.get(prefix) or _model_from_legacy_prefix(prefix)
        r = res if prefix in prefix_model else None
        runs[model][task].append(("", p, r))
        if guessed:
            notes[model].append(f"{p.name}: no results json; task name {task!r} guessed from the file name")


# --------------------------------------------------------------------------- one samples file
def _record_content(rec: dict) -> dict:
    args = rec.get("arguments")
    prompt = None
    if isinstance(args, dict) and args:
        first = args.get("gen_args_0") or next(iter(args.values()))
        if isinstance(first, dict):
            prompt = first.get("arg_0")
    elif isinstance(args, list) and args:
        first = args[0]
        prompt = first[0] if isinstance(first, (list, tuple)) and first else first
    doc_value = rec.get("doc")
    doc = doc_value if isinstance(doc_value, dict) else {}
    question = next((doc[k] for k in QUESTION_FIELDS if isinstance(doc.get(k), str)), None)
    out = {"prompt": prompt if isinstance(prompt, str) else None, "target": None, "question": question,
           # the whole document (the dataset row after the task's process_docs): the content of a
           # tiny dataset built from these logs (v2 details), kept as JSON text in one column
           "doc_json": json.dumps(doc, ensure_ascii=False, sort_keys=True) if doc else None}
    if "target" in rec and rec["target"] is not None:
        out["target"] = str(rec["target"])
    return out


def read_samples_file(
    path: Path,
    leaf: str,
    scenario: str,
    subscenario: str,
    metric: str | None = None,
    filter: str | None = None,
    results: dict | None = None,
    want_content: bool = False,
) -> tuple[Block, list[str]]:
    """One samples file (JSON lines or JSON array) -> a Block sorted by ``doc_id``.

    Also used for the Open LLM Leaderboard v2 details, whose samples files are identical. The
    records are read by :func:`_read_values` (every (document, filter) value, duplicates checked),
    the filter chosen by :func:`_choose_values`, a partial run told by :func:`_partial_notes`.
    """
    notes: list[str] = []
    values, occurrences, content, has_filter_key, chosen_metric = _read_values(path, leaf, metric, results,
                                                                               want_content, notes)
    pick = _choose_values(values, occurrences, has_filter_key, filter, leaf, path, _filter_names(results, leaf),
                          notes)
    index = np.array(sorted(pick), dtype=np.int64)
    scores = np.array([pick[i] for i in index], dtype=np.float64)
    expected = _partial_notes(index, results, leaf, notes)
    frame = None
    if content:
        frame = pd.DataFrame([content[i] for i in index if i in content], index=[i for i in index if i in content])
        frame = frame.reindex(index).reset_index(drop=True)
    what = chosen_metric if chosen_metric else ""
    return Block(scenario, subscenario, index, scores, frame, expected=expected, what=what), notes


def _read_values(path: Path, leaf: str, metric: str | None, results: dict | None, want_content: bool,
                 notes: list[str]) -> tuple[dict[tuple[int, Any], tuple[float, int]], dict[int, int], dict[int, dict],
                                            bool | None, str | None]:
    """Every record's value by ``(doc_id, filter key)`` (the ``filter`` field, else the record's
    occurrence of its document), with its line; the occurrences per document, the content of each
    document (``want_content``), whether the records have a ``filter`` key and the metric read.
    A conflicting duplicate, a bad ``doc_id`` or a missing or non-numeric metric is a SourceError."""
    chosen_metric = metric
    values: dict[tuple[int, Any], tuple[float, int]] = {}
    occurrences: dict[int, int] = defaultdict(int)
    content: dict[int, dict] = {}
    has_filter_key = None
    for lineno, rec in iter_records(path):
        if "doc_id" not in rec:
            raise SourceError(f"{path}: line {lineno}: record without 'doc_id'")
        try:
            doc_id = doc_index(rec["doc_id"])
        except ValueError:
            raise SourceError(f"{path}: line {lineno}: doc_id {rec['doc_id']!r:.60} is not a document index "
                              "(a whole number from 0)") from None
        if has_filter_key is None:
            has_filter_key = "filter" in rec
        if "filter" in rec:
            fkey: Any = str(rec["filter"])
        else:
            fkey = occurrences[doc_id]
            occurrences[doc_id] += 1
        if chosen_metric is None:
            chosen_metric = _pick_metric(rec, leaf, results, path, lineno)
            usual = default_metric(leaf)
            if usual and usual != chosen_metric:
                notes.append(f"{leaf}: no {usual!r} in the records; using {chosen_metric!r}")
        if chosen_metric not in rec:
            keys = sorted(k for k in rec if k not in _NON_METRIC_KEYS)
            raise SourceError(
                f"{path}: line {lineno}: no metric {chosen_metric!r} in the record; it has: {', '.join(keys) or 'none'}"
            )
        try:
            v = to_float(rec[chosen_metric])
        except (TypeError, ValueError):
            raise SourceError(
                f"{path}: line {lineno}: {chosen_metric} value {rec[chosen_metric]!r} is not a number"
            ) from None
        key = (doc_id, fkey)
        if key in values:
            old, old_line = values[key]
            if not (old == v or (math.isnan(old) and math.isnan(v))):
                raise SourceError(
                    f"{path}: line {lineno}: conflicting duplicate record for doc_id {doc_id}"
                    f"{'' if isinstance(fkey, int) else f' (filter {fkey})'}: {chosen_metric}={v!r}, "
                    f"line {old_line} has {old!r}"
                )
            continue
        values[key] = (v, lineno)
        if want_content and doc_id not in content:
            content[doc_id] = _record_content(rec)

    if not values:
        raise SourceError(f"{path}: no records (empty file)")
    return values, occurrences, content, has_filter_key, chosen_metric


def _choose_values(values: dict[tuple[int, Any], tuple[float, int]], occurrences: dict[int, int],
                   has_filter_key: bool | None, filter: str | None, leaf: str, path: Path, fnames: list[str],
                   notes: list[str]) -> dict[int, float]:
    """``{doc_id: value}`` of the chosen filter: by the records' ``filter`` key, else by the order of
    the filters of the results file (``fnames``), else the first occurrence (with a note)."""
    if has_filter_key:
        present = list(dict.fromkeys(k[1] for k in values))
        chosen = _choose_filter(present, filter, leaf, path, fnames)
        if len(present) > 1 and filter is None:
            notes.append(f"{leaf}: filters {', '.join(present)}; using {chosen!r} (choose with --filter)")
        pick = {k[0]: v for k, (v, _) in values.items() if k[1] == chosen}
    else:
        n_filters = max(occurrences.values())
        if n_filters == 1:
            if filter is not None and fnames and filter not in fnames:
                raise SourceError(f"{path}: no filter {filter!r}; the run used: {', '.join(fnames)}")
            pick = {k[0]: v for k, (v, _) in values.items()}
        elif len(fnames) == n_filters:
            chosen = _choose_filter(fnames, filter, leaf, path, fnames)
            pos = fnames.index(chosen)
            pick = {k[0]: v for k, (v, _) in values.items() if k[1] == pos}
            if filter is None:
                notes.append(f"{leaf}: filters {', '.join(fnames)} (told apart by order); using {chosen!r}")
        elif len(fnames) == 1:
            # one filter but repeated documents: they must agree
            pick = {}
            for (doc, _), (v, line) in sorted(values.items(), key=lambda kv: kv[1][1]):
                if doc in pick and not (pick[doc] == v or (math.isnan(v) and math.isnan(pick[doc]))):
                    raise SourceError(
                        f"{path}: line {line}: conflicting duplicate record for doc_id {doc}: {v!r} vs {pick[doc]!r}"
                    )
                pick.setdefault(doc, v)
        else:
            if filter is not None:
                raise SourceError(
                    f"{path}: documents repeat {n_filters} times but the filter names are unknown "
                    f"(no results json); cannot pick filter {filter!r}"
                )
            pick = {k[0]: v for k, (v, _) in values.items() if k[1] == 0}
            notes.append(f"{leaf}: {n_filters} records per document and no filter names; using the first")
    return pick


def _partial_notes(index: np.ndarray, results: dict | None, leaf: str, notes: list[str]) -> int | None:
    """The full size of the task (the results file's ``n-samples``, None when unknown); a note when
    the run answered fewer documents (``--limit``)."""
    expected = None
    ns = ((results or {}).get("n-samples") or {}).get(leaf) or {}
    limit = ((results or {}).get("config") or {}).get("limit")
    try:
        n_original, n_effective = ns.get("original"), ns.get("effective")
        original = int(n_original) if n_original is not None else None
        effective = int(n_effective) if n_effective is not None else None
    except (TypeError, ValueError):
        original = effective = None
    if original:
        expected = original
    if (original and len(index) < original) or (limit not in (None, "", 0) and (not original or len(index) < original)):
        total = f" of {original}" if original else ""
        lim = f", limit={limit}" if limit not in (None, "") else ""
        notes.append(f"{leaf}: partial run: {len(index)}{total} documents{lim}")
    elif effective and len(index) < effective:
        notes.append(f"{leaf}: {len(index)} documents in the samples file, results say {effective}")
    return expected


def _pick_metric(rec: dict, leaf: str, results: dict | None, path: Path, lineno: int) -> str:
    m = default_metric(leaf)
    if m and m in rec:
        return m
    listed = rec.get("metrics")
    if isinstance(listed, list) and listed and isinstance(listed[0], str) and listed[0] in rec:
        return listed[0]
    if "acc" in rec:
        return "acc"
    for m2 in _result_metrics(results, leaf):
        if m2 in rec:
            return m2
    keys = sorted(k for k in rec if k not in _NON_METRIC_KEYS)
    if len(keys) == 1:
        return keys[0]
    raise SourceError(
        f"{path}: line {lineno}: cannot tell which metric to use for task {leaf!r}; "
        f"choose one with --metric ({', '.join(keys) or 'no metric keys'})"
    )


def _choose_filter(present: list[str], wanted: str | None, leaf: str, path: Path, fnames: list[str]) -> str:
    if wanted is not None:
        if wanted not in present:
            raise SourceError(f"{path}: no filter {wanted!r}; the file has: {', '.join(present)}")
        return wanted
    d = default_filter(leaf)
    if d in present:
        return d
    if "none" in present:
        return "none"
    order = [f for f in fnames if f in present] + [f for f in present if f not in fnames]
    return order[0]
