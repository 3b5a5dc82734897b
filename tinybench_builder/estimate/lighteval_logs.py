"""Estimates from lighteval details of a tiny task, matched to the anchors by document.

``python -m tinybench_builder estimate DIR RESULTS`` reads, besides lm-eval logs, the details files
lighteval writes with ``--save-details`` (``RESULTS/details/<model>/<ts>/details_<task>|<shots>_<ts>
.parquet``; :mod:`tinybench_builder.read.sources.lighteval`) of the dataset's tasks (the lighteval
tasks of ``lighteval/tiny_tasks.py`` have the lm-eval tasks' names). Each record is matched to
its anchor by its document, never by its position (lighteval shuffles the documents; any subset,
``--max-samples``, is an estimate with a wider interval):

* our tasks' documents carry the anchor id in ``doc.specific["item_id"]`` (the task module derives
  it from the row's content and refuses another release's rows), with the dataset version and the
  config's design hash: an id that is not an anchor of the config, or a design that is not this
  folder's, is refused naming both versions;
* other tasks' documents are matched by their prompt (``doc.query`` equal to a row's
  ``input_formatted``); a document that matches no row is an error.

The per-row value is the records' ``anchor_mean`` (our tasks), else ``metric=``, else the config's
metric or the reader's default. :func:`lighteval_rows` gives the anchor results of every model;
:func:`tinybench_builder.estimate.harness_logs.read_log_scores` combines them with lm-eval's.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from tinybench_builder.dataset import ANCHOR_MEAN
from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.read import SourceError, choose_run, lighteval_runs, model_of, pick_metric, read_details, record_value

__all__ = ["has_lighteval_details", "lighteval_rows"]


def _dict(value: Any) -> dict:
    """``value`` if it is a dict (a struct of the details), else an empty one."""
    return value if isinstance(value, dict) else {}


def has_lighteval_details(logs: str | Path) -> bool:
    """Does ``logs`` hold lighteval details files?"""
    return bool(lighteval_runs(logs))


def _metric(rec: dict, target: Any, metric: str | None, path: Path) -> str:
    """The metric of a file: ``metric``, else ``anchor_mean`` (our tasks), the config's metric or
    its alternatives, else the reader's default."""
    if metric:
        return metric
    have = _dict(rec.get("metric"))
    for m in (ANCHOR_MEAN, *target.alternatives):
        if m and have.get(m) is not None:
            return m
    return pick_metric(rec, path, 1)


def _check_design(spec: dict, target: Any, path: Path, row: int) -> None:
    """Refuse a document of another design (the task module of another version), naming both versions."""
    theirs = spec.get("design")
    if not theirs or not target.design or theirs == target.design:
        return
    mine = f"{target.benchmark} {target.version}" if target.version else (target.benchmark or "this tiny dataset")
    other = f"{target.benchmark} {spec.get('dataset_version')}" if spec.get("dataset_version") else "another version"
    raise SourceError(f"{path}: row {row}: these details are results of {other} (design {str(theirs)[:12]}), not of "
                      f"{mine} (design {str(target.design)[:12]}): estimate them with the folder of {other}")


def _anchor_of(rec: dict, target: Any, est: TinyEstimator, prompts: dict[str, int], path: Path, row: int) -> int:
    """The estimator's anchor index of a record (module docstring: by its anchor id, else by its prompt)."""
    doc = _dict(rec.get("doc"))
    spec = _dict(doc.get("specific"))
    mine = {est.anchor_ids[i]: i for i in target.anchor_index}
    if spec.get("item_id") is not None:
        _check_design(spec, target, path, row)
        item = str(spec["item_id"])
        if item not in mine:
            raise SourceError(f"{path}: row {row}: item {item!r} is not an anchor of config {target.config!r} of this "
                              "tiny dataset; are the details from another version of it?")
        return mine[item]
    query = doc.get("query")
    r = prompts.get(query) if isinstance(query, str) else None
    if r is None:
        preview = str(doc.get("query") or "")[:80]
        raise SourceError(f"{path}: row {row}: the document ({preview!r}...) is not a row of this tiny dataset (no "
                          "anchor id in doc.specific, and its prompt is no row's input_formatted); are the details "
                          "from another task or version?")
    return target.anchor_index[r]


def _read_task(path: Path, target: Any, est: TinyEstimator, metric: str | None) -> dict[int, float]:
    """Anchor index -> value of one details file of ``target``'s task."""
    prompts = {r["input_formatted"]: i for i, r in enumerate(target.rows or []) if isinstance(r.get("input_formatted"),
                                                                                               str)}
    records = read_details(path)
    chosen = _metric(records[0][1], target, metric, path)
    got: dict[int, tuple[float, int]] = {}
    for row, rec in records:
        a = _anchor_of(rec, target, est, prompts, path, row)
        v = record_value(rec, chosen, path, row)
        if a in got and not (got[a][0] == v or (math.isnan(v) and math.isnan(got[a][0]))):
            raise SourceError(f"{path}: row {row}: two different results for anchor {est.anchor_ids[a]!r} "
                              f"({chosen}={v!r}, row {got[a][1]} has {got[a][0]!r})")
        got.setdefault(a, (v, row))
    return {a: v for a, (v, _) in got.items()}


def lighteval_rows(estimators: dict[str, TinyEstimator], targets: Sequence[Any], logs: Path, metric: str | None,
                   taken: set[str]) -> tuple[list[str], list[dict[str, np.ndarray]], list[str]]:
    """``(models, per model {estimator key: anchor results}, notes)`` from the lighteval details under
    ``logs`` (``targets``: the dataset's configs, :func:`tinybench_builder.estimate.harness_logs.read_log_scores`;
    ``taken``: model names already used, a clash gets its folder appended)."""
    models: list[str] = []
    per_model: list[dict[str, np.ndarray]] = []
    notes: list[str] = []
    for folder, tasks in sorted(lighteval_runs(logs).items()):
        wanted = [t for t in targets if t.task in tasks]
        if not wanted:
            continue
        newest = max(ts for t in wanted for ts, _, _ in tasks[t.task])
        model = model_of(folder, newest)
        if model in taken:
            model = f"{model} ({folder.relative_to(logs).as_posix() if folder != logs else folder.name})"
        taken.add(model)
        rows = {key: np.full(len(est.anchor_ids), np.nan) for key, est in estimators.items()}
        for t in wanted:
            (ts, _, path), run_notes = choose_run(tasks[t.task], t.task, None, str(folder))
            notes.extend(f"{model}: {n}" for n in run_notes)
            got = _read_task(path, t, estimators[t.estimator_key], metric)
            for a, v in got.items():
                rows[t.estimator_key][a] = v
            if len(got) < len(t.anchor_index):
                notes.append(f"{model}: {t.task}: {len(got)} of {len(t.anchor_index)} rows answered")
        models.append(model)
        per_model.append(rows)
    return models, per_model, notes
