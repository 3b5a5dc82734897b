"""lighteval details (``--save-details``; the layout of lighteval 0.10 - 0.13, its ``Doc``/``ModelResponse`` records).

lighteval writes, under ``--output-dir OUT``::

    OUT/results/<model_name>/results_<ts>.json
    OUT/details/<model_name>/<ts>/details_<task>|<shots>_<ts>.parquet

(``<model_name>`` may hold a ``/``: ``org/model`` is two folders). One parquet row per document,
with three struct columns: ``doc`` (``query``, ``choices``, ``gold_index``, ``specific``, ``id``:
the document's row in the task's evaluation split, as a string), ``model_response`` and
``metric`` (the task's per-sample metrics). The rows are in lighteval's (shuffled) order.

Rules (those of the lm-eval reader, :mod:`tinybench_builder.read.sources.lm_eval`):

* a document's item is its ``doc.id``; the tasks of one lighteval superset (``mmlu:anatomy``,
  ``mmlu:virology``, ... share ``mmlu``) give ``<subtask>.<id>`` when the superset is read
  (``task="mmlu"``), a single task ``<id>``, several unrelated tasks ``<task>.<id>``;
* ``task`` names a task (``tinyWMDP_bio`` or ``tinyWMDP_bio|0``) or a superset; a task run with
  several numbers of shots must be named with its ``|<shots>``;
* the metric defaults to the one numeric metric of the records, else the first of
  :data:`DEFAULT_METRICS` they have; ``metric=`` picks another (a struct metric with a ``value``,
  what our tasks tag with the anchor id, is read by its value);
* several runs of one model and task: the newest timestamp wins (reported in the notes);
* the model name is ``config_general.model_name`` of the run's results file, else the folder
  path under ``details/``;
* anything unreadable (a corrupt parquet file, a record without ``doc.id`` or the metric, a
  value that is not a number, two different values for one document) is a :class:`SourceError`
  naming the file and the row.
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
from tinybench_builder.inputs import doc_index, read_json, walk_files
from tinybench_builder.read.sources._common import Block, ModelPart, Options, Unit, map_units, to_float
from tinybench_builder.read.sources.lm_eval import TS_RE, norm_ts
from tinybench_builder.read.sources.reduce import assemble

__all__ = ["DEFAULT_METRICS", "is_lighteval_details", "split_lighteval_name", "lighteval_runs", "read_details",
           "record_value", "record_item", "model_of", "choose_run", "pick_metric", "scan", "read", "read_unit"]

#: the metric read when the records hold several numeric ones, first present wins
DEFAULT_METRICS = ("anchor_mean", "acc", "acc_norm", "em", "extractive_match", "truthfulqa_mc2",
                   "prompt_level_strict_acc", "exact_match")
#: the columns every lighteval details file has (older lighteval and the Open LLM Leaderboard v1
#: details have flat columns instead: their reader is open_llm_leaderboard)
DETAILS_COLUMNS = ("doc", "metric", "model_response")
_NAME_RE = re.compile(r"^details_(?P<task>.+)_(?P<ts>[^_]+)\.parquet$")


def _dict(value: Any) -> dict:
    """``value`` if it is a dict (a struct of the details), else an empty one."""
    return value if isinstance(value, dict) else {}


# --------------------------------------------------------------------------- files
def split_lighteval_name(name: str) -> tuple[str, str, str] | None:
    """``details_tinyMMLU_tb|0_2026-12-02T02-03-28.768550.parquet`` -> ``("tinyMMLU_tb", "0", ts)``."""
    m = _NAME_RE.match(name)
    if not m or not TS_RE.match(m.group("ts")):
        return None
    task, sep, shots = m.group("task").rpartition("|")
    if not sep or not task or not shots.isdigit():
        return None
    return task, shots, m.group("ts")


def is_lighteval_details(path: str | Path) -> bool:
    """Is ``path`` a details file of lighteval 0.10+ (its name, and the struct columns of its schema)?"""
    path = Path(path)
    if split_lighteval_name(path.name) is None:
        return False
    import pyarrow.parquet as pq

    try:
        names = set(pq.read_schema(path).names)
    except Exception:  # noqa: BLE001 - unreadable: not recognised here; the reader names the file
        return False
    return all(c in names for c in DETAILS_COLUMNS)


def lighteval_runs(root: str | Path) -> dict[Path, dict[str, list[tuple[str, str, Path]]]]:
    """Model folder -> task -> ``[(timestamp, shots, details file)]`` of the lighteval details under ``root``."""
    found: dict[Path, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for f in walk_files(Path(root), max_depth=8):
        parsed = split_lighteval_name(f.name)
        if parsed is None or not is_lighteval_details(f):
            continue
        task, shots, ts = parsed
        folder = f.parent.parent if norm_ts(f.parent.name) == norm_ts(ts) else f.parent
        found[folder][task].append((norm_ts(ts), shots, f))
    return {k: dict(v) for k, v in found.items()}


def model_of(folder: Path, ts: str | None = None) -> str:
    """The model of a details folder: the results file's ``config_general.model_name`` (the run at
    ``ts``, else the newest), else the folder's path under ``details/`` (``org/model``)."""
    parts = folder.parts
    if "details" in parts:
        i = len(parts) - 1 - parts[::-1].index("details")
        name = "/".join(parts[i + 1:])
        results = Path(*parts[:i], "results", *parts[i + 1:])
        files = sorted(results.glob("results_*.json")) if results.is_dir() else []
        wanted = [f for f in files if ts and norm_ts(f.stem[len("results_"):]) == ts] or files[-1:]
        for f in wanted:
            try:
                got = (read_json(f).get("config_general") or {}).get("model_name")
            except (SourceError, AttributeError):
                continue
            if isinstance(got, str) and got:
                return got
        if name:
            return name
    return folder.name


def read_details(path: str | Path) -> list[tuple[int, dict]]:
    """``[(row number, record)]`` of a details file (records: ``doc``, ``metric``, ``model_response``)."""
    import pyarrow.parquet as pq

    path = Path(path)
    try:
        table = pq.read_table(path, columns=["doc", "metric"])
    except Exception as exc:  # noqa: BLE001 - any parquet error is a corrupt or foreign file
        raise SourceError(f"{path}: not a readable lighteval details file ({type(exc).__name__}: "
                          f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
    rows = table.to_pylist()
    if not rows:
        raise SourceError(f"{path}: no records (empty file)")
    return [(i + 1, r) for i, r in enumerate(rows)]


def record_item(rec: dict, path: Path, row: int) -> int:
    """A record's document: its ``doc.id`` (the row in the task's evaluation split)."""
    doc = rec.get("doc")
    if not isinstance(doc, dict) or doc.get("id") in (None, ""):
        raise SourceError(f"{path}: row {row}: record without doc.id")
    try:
        return doc_index(doc["id"])
    except ValueError:
        raise SourceError(f"{path}: row {row}: doc.id {doc['id']!r:.60} is not a document index "
                          "(a whole number from 0)") from None


def _numeric(value: Any) -> bool:
    return isinstance(value, (bool, int, float))


def pick_metric(rec: dict, path: Path, row: int) -> str:
    """The metric of a file's records when none is asked (module docstring)."""
    metric = _dict(rec.get("metric"))
    numeric = [k for k, v in metric.items() if v is not None and _numeric(v)]
    if len(numeric) == 1:
        return numeric[0]
    chosen = next((m for m in DEFAULT_METRICS if m in numeric), None)
    if chosen is None:
        raise SourceError(f"{path}: row {row}: cannot tell which metric to use; choose one with --metric "
                          f"({', '.join(sorted(metric)) or 'no metrics'})")
    return chosen


def record_value(rec: dict, metric: str, path: Path, row: int) -> float:
    """The record's ``metric`` as a number (a struct with a ``value``: its value)."""
    got = _dict(rec.get("metric"))
    if metric not in got or got[metric] is None:
        raise SourceError(f"{path}: row {row}: no metric {metric!r} in the record; it has: "
                          f"{', '.join(sorted(k for k, v in got.items() if v is not None)) or 'none'}")
    value = got[metric]
    if isinstance(value, dict) and "value" in value:
        value = value["value"]
    try:
        return to_float(value)
    except (TypeError, ValueError):
        raise SourceError(f"{path}: row {row}: {metric} value {value!r:.60} is not a number") from None


def read_scores(path: Path, metric: str | None) -> tuple[dict[int, float], str, list[dict]]:
    """``{doc id: value}`` of a details file, the metric read and the records' documents (in file order)."""
    values: dict[int, tuple[float, int]] = {}
    docs = []
    for row, rec in read_details(path):
        doc_id = record_item(rec, path, row)
        metric = metric or pick_metric(rec, path, row)
        v = record_value(rec, metric, path, row)
        if doc_id in values:
            old, old_row = values[doc_id]
            if not (old == v or (math.isnan(old) and math.isnan(v))):
                raise SourceError(f"{path}: row {row}: conflicting duplicate record for doc.id {doc_id}: "
                                  f"{metric}={v!r}, row {old_row} has {old!r}")
            continue
        values[doc_id] = (v, row)
        docs.append(rec["doc"])
    assert metric is not None  # set by the first record (the file has one)
    return {k: v for k, (v, _) in values.items()}, metric, docs


# --------------------------------------------------------------------------- tasks
def _superset(task: str) -> str:
    return task.split(":", 1)[0]


def _where(task: str, wanted: str | None, tasks: set[str]) -> tuple[str, str] | None:
    """(scenario, subscenario) of a task's file, or None when ``wanted`` does not select it."""
    top = _superset(task)
    if wanted is None:
        grouped = top != task and sum(_superset(t) == top for t in tasks) > 1
        return (top, task[len(top) + 1:]) if grouped else (task, "")
    bare = wanted.rpartition("|")[0] if re.search(r"\|\d+$", wanted) else wanted
    if task == bare:
        return task, ""
    if top == bare and top != task:
        return top, task[len(top) + 1:]
    return None


def _shots_of(wanted: str | None) -> str | None:
    m = re.search(r"\|(\d+)$", wanted or "")
    return m.group(1) if m else None


def choose_run(runs: list[tuple[str, str, Path]], task: str, wanted: str | None, where: str
               ) -> tuple[tuple[str, str, Path], list[str]]:
    """The run of a task to read: the newest, of the shots asked (``task|<shots>``); notes."""
    shots = _shots_of(wanted)
    if shots is not None:
        runs = [r for r in runs if r[1] == shots]
    kinds = sorted({r[1] for r in runs})
    if len(kinds) > 1:
        raise SourceError(f"{where}: task {task} was run with {', '.join(kinds)} shots; name one with "
                          f"--task '{task}|<shots>'")
    runs = sorted(runs)
    notes = []
    if len(runs) > 1:
        notes.append(f"{task}: {len(runs)} runs, using the newest ({runs[-1][0]}); ignored "
                     f"{', '.join(r[0] for r in runs[:-1])}")
    return runs[-1], notes


# --------------------------------------------------------------------------- scan / read
def scan(path: str | Path, options: Options | None = None) -> list[Unit]:
    """One unit per model folder holding lighteval details files."""
    options = options or Options()
    path = Path(path)
    if not path.exists():
        raise SourceError(f"{path}: no such file or folder")
    runs = lighteval_runs(path.parent if path.is_file() else path)
    if path.is_file():
        runs = {d: {t: [r for r in rs if r[2] == path] for t, rs in tasks.items()} for d, tasks in runs.items()}
        runs = {d: {t: rs for t, rs in tasks.items() if rs} for d, tasks in runs.items()}
    units = []
    for folder, tasks in sorted(runs.items()):
        if not tasks:
            continue
        payload = {"runs": {t: [(ts, shots, str(p)) for ts, shots, p in rs] for t, rs in tasks.items()}}
        units.append(Unit("lighteval", str(folder), model_of(folder), payload, options))
    return units


def read(path: str | Path, task: str | None = None, metric: str | None = None, workers: int | None = None):
    """Read the lighteval details of one run folder or many into a matrix."""
    units = scan(path, Options(task=task, metric=metric))
    if not units:
        raise SourceError(f"{path}: no lighteval details files found (run lighteval with --save-details)")
    units[0].want_content = True
    parts = map_units(units, workers=workers)
    if not any(p.blocks for p in parts):
        avail = sorted({t for p in parts for t in p.available})
        raise SourceError(f"{path}: no details for task {task!r}; found: {', '.join(avail)}")
    return assemble(parts)


def read_unit(unit: Unit) -> list[ModelPart]:
    """One model folder: the newest run of every task selected, one block per task."""
    runs = {t: [(ts, shots, Path(p)) for ts, shots, p in rs] for t, rs in unit.payload["runs"].items()}
    opts = unit.options
    newest = max(ts for rs in runs.values() for ts, _, _ in rs)
    part = ModelPart(model_of(Path(unit.source), newest), unit.source, available=sorted(runs))
    for task in sorted(runs):
        where = _where(task, opts.task, set(runs))
        if where is None:
            continue
        (ts, _, path), notes = choose_run(runs[task], task, opts.task, unit.source)
        part.notes.extend(f"{part.model}: {n}" for n in notes)
        values, metric, docs = read_scores(path, opts.metric)
        index = np.array(sorted(values), dtype=np.int64)
        content = None
        if unit.want_content:
            by_id = {doc_index(d["id"]): d for d in docs}
            content = pd.DataFrame([_content(by_id[i]) for i in index])
        part.blocks.append(Block(where[0], where[1], index, np.array([values[i] for i in index], dtype=np.float64),
                                 content, what=metric))
    return [part]


def _content(doc: dict) -> dict:
    """The content of a document (what a tiny dataset built from these details shows)."""
    choices = list(doc.get("choices") or [])
    gold = doc.get("gold_index")
    first = gold[0] if isinstance(gold, list) and gold else gold
    target = choices[first] if isinstance(first, int) and 0 <= first < len(choices) else None
    return {"prompt": doc.get("query"), "target": target, "question": None,
            "doc_json": json.dumps({k: v for k, v in doc.items() if k in ("query", "choices", "gold_index",
                                                                            "specific")},
                                   ensure_ascii=False, sort_keys=True, default=str)}
