"""Estimates from lm-evaluation-harness logs of a tiny task, matched to the anchors by document.

``python -m tinybench_builder estimate DIR LM_EVAL_OUTPUT_DIR`` reads the ``--log_samples`` output of
a tiny task (``samples_<task>_<timestamp>.jsonl``, lm-eval >= 0.4.3; one folder per model,
as lm-eval writes them) and estimates each model's full score with the estimator of the
tiny dataset folder ``DIR`` (built by ``tinybench-builder build``).

Order safety: every record is matched to its row of the tiny split by its document, not by
its position in the file. The record's ``doc`` is compared with the rows on the text
columns both have (``question``, ``input_formatted``...); without a ``doc`` the record's
``doc_id`` is the row index. For a folder written by ``tinybench-builder fit`` (no data), the logs are
of the full task and are read as ``tinybench-builder ingest`` reads them (items by ``doc_id``), then
the anchors are taken by item id.
Multi-GPU runs, whose logs interleave the ranks, and any reordering of the records thus
give the same estimate. A document that matches no row is an error (logs of another
version of the dataset), as are two records of one row with different scores.

The records are parsed by :func:`tinybench_builder.read.sources.lm_eval.read_samples_file`; the metric is
the registry's ``harness_metric`` of the config (as recorded in the manifest; tinyMMLU and
tinyWinogrande: ``acc_norm``, the only metric lm-eval's tiny tasks listed, or ``acc`` from
logs of their later versions, which list only it), else the reader's default for the task; the filter
as in ``tinybench-builder ingest`` (tinyGSM8k: strict-match).
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tinybench_builder.estimate.lighteval_logs import has_lighteval_details, lighteval_rows
from tinybench_builder.estimate.tables import one_blas_thread, resolve_folder
from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.dataset import ANCHOR_MEAN
from tinybench_builder.layout import ITEM_ID_COLUMN, config_anchor_ids, estimator_folder, is_dataset_folder, read_manifest
from tinybench_builder.read import SourceError
from tinybench_builder.inputs import doc_index, iter_records, read_json, walk_files
from tinybench_builder.read import (is_results, model_name_from_folder, model_named_in_results, norm_ts, read_samples_file,
                                    results_ts, split_samples_name)

__all__ = ["LogScores", "read_log_scores", "estimate_from_logs", "match_rows"]

COLUMNS = ["model", "score", "ci_low", "ci_high", "irt", "pirt", "gpirt", "n_answered"]


@dataclass
class _Target:
    """One config of the tiny dataset: the harness task, its rows, its anchors in the estimator."""

    config: str
    task: str | None
    metric: str | None  # per-sample metric in the logs (None: the reader's default for the task)
    alternatives: tuple[str, ...]  # read when the records lack ``metric`` (they score the same there)
    aliases: tuple[str, ...]  # other tasks whose logs answer the same rows (lm-eval's own tiny task)
    rows: list[dict] | None  # tiny split rows (None: no data, match by doc_id only)
    estimator_key: str
    anchor_index: list[int]  # row r -> index into the estimator's anchor_ids
    benchmark: str = ""  # the dataset's name, version and this config's design hash (messages, checks)
    version: str | None = None
    design: str | None = None
    source_task: str | None = None  # the full benchmark's lm-eval task (``tinybench-builder ingest --task``)
    prefix: str = ""  # estimator item id = prefix + the full task's item id (bundles: "<scenario>.")


@dataclass
class LogScores:
    """Anchor results read from logs: one row per model and estimator."""

    estimators: dict[str, TinyEstimator]
    models: list[str]
    scores: dict[str, np.ndarray]  # estimator key -> (n_models, k)
    notes: list[str] = field(default_factory=list)
    #: logs of the full benchmark: each model's exact full score (model -> {config: score})
    full_scores: dict[str, dict[str, float]] = field(default_factory=dict)


# ============================================================================ the dataset side
def _targets(folder: Path, task: str | None) -> tuple[dict[str, TinyEstimator], list[_Target]]:
    import pyarrow.parquet as pq

    if not is_dataset_folder(folder):  # a folder written by `tinybench-builder fit`: rows = anchors
        est = TinyEstimator.load(folder)
        return {"": est}, [_Target("", task, None, (), (), None, "", list(range(len(est.anchor_ids))))]
    manifest = read_manifest(folder)
    estimators: dict[str, TinyEstimator] = {}
    targets = []
    configs = manifest["configs"]
    design = (manifest.get("design") or {}).get("configs") or {}
    for name, c in configs.items():
        key = c.get("estimator", "")
        if key not in estimators:
            estimators[key] = TinyEstimator.load(estimator_folder(folder, key))
        est = estimators[key]
        anchors = config_anchor_ids(est, c["scenario"])
        pos = {a: i for i, a in enumerate(est.anchor_ids)}
        split = c["splits"][c["tiny_split"]]
        rows = pq.read_table(folder / split["path"]).to_pylist()
        if len(rows) != len(anchors):
            raise ValueError(f"{folder}: config {name!r} has {len(rows)} rows but {len(anchors)} anchors")
        t = c.get("harness_task")
        aliases = tuple(a for a in (c.get("harness_builtin_task"),) if a)
        if task is not None:
            if len(configs) == 1:
                t, aliases = task, ()
            else:
                t, aliases = (task, ()) if task in (t, *aliases) else (None, ())
        # our task files log the row's value as ANCHOR_MEAN; lm-eval's own tasks as the metric
        alternatives = tuple(dict.fromkeys(m for m in (c.get("harness_metric"), *(c.get("harness_metric_alternatives")
                                                                                 or ())) if m))
        targets.append(_Target(name, t, ANCHOR_MEAN if t else None, alternatives, aliases, rows, key,
                               [pos[a] for a in anchors], str(manifest.get("name") or ""),
                               manifest.get("version"), design.get(name), c.get("source_task") or None,
                               f"{c['scenario']}." if len(est.scenarios) > 1 else ""))
    if task is not None and not any(t.task == task for t in targets):
        raise ValueError(f"{folder}: no config of this dataset is evaluated by task {task!r} "
                         f"(tasks: {', '.join(str(c.get('harness_task')) for c in configs.values())})")
    missing = [t.config for t in targets if t.task is None]
    if len(missing) == len(targets):
        raise ValueError(f"{folder}: no lm-evaluation-harness task is known for this dataset; name it with --task")
    return estimators, [t for t in targets if t.task is not None]


# ============================================================================ matching
def _text_columns(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    return [c for c in rows[0] if all(isinstance(r.get(c), str) for r in rows)]


def match_rows(docs: dict[int, Any], rows: list[dict] | None, where: str) -> tuple[dict[int, int], list[str]]:
    """doc_id -> row index of the tiny split, by document content (doc_id when there is no doc).

    A record's ``doc`` matches a row when it equals the row on every text column they
    share, ignoring a column that matches no row at all (a harness ``process_docs`` may
    rewrite a field); at least one column must match, and it must be a column that tells
    the rows apart (``question``, ``input_formatted``: distinct in every row) when the doc
    has one. Ambiguous matches prefer the row ``doc_id``. The rows' ``item_id`` is a check,
    not evidence: a document whose text matches a row must carry that row's id, and the id
    alone matches only rows without any other text (item ids only).
    """
    notes: list[str] = []
    out: dict[int, int] = {}
    n = None if rows is None else len(rows)
    all_cols = _text_columns(rows) if rows else []
    cols = [c for c in all_cols if c != ITEM_ID_COLUMN] or all_cols
    check_id = ITEM_ID_COLUMN in all_cols and ITEM_ID_COLUMN not in cols
    index: dict[str, defaultdict[Any, set[int]]] = {c: defaultdict(set) for c in cols}
    for r, row_data in enumerate(rows or []):
        for c in cols:
            index[c][row_data[c]].add(r)
    distinct = {c for c in cols if len(index[c]) == len(rows or [])}
    moved = 0
    for doc_id, doc in sorted(docs.items()):
        shared = [c for c in cols if isinstance(doc, dict) and isinstance(doc.get(c), str)]
        if not shared:
            if n is not None and not 0 <= doc_id < n:
                raise SourceError(f"{where}: doc_id {doc_id} is not a row of the tiny split ({n} rows)")
            out[doc_id] = doc_id
            continue
        cand: set[int] | None = None
        used = 0
        used_distinct = False
        for c in shared:
            hit = index[c].get(doc[c])
            if not hit:
                continue
            used += 1
            used_distinct |= c in distinct
            cand = set(hit) if cand is None else cand & hit
        if not used_distinct and distinct & set(shared):
            cand = None
        if not used or not cand:
            preview = next((doc[c] for c in shared), "")[:80]
            raise SourceError(
                f"{where}: the document of doc_id {doc_id} ({preview!r}...) is not a row of this tiny dataset; "
                "are the logs from another version of it?"
            )
        if len(cand) > 1:
            if doc_id not in cand:
                raise SourceError(f"{where}: the document of doc_id {doc_id} matches {len(cand)} rows")
            target = doc_id
        else:
            target = next(iter(cand))
        if (check_id and rows is not None and isinstance(doc.get(ITEM_ID_COLUMN), str)
                and doc[ITEM_ID_COLUMN] != rows[target][ITEM_ID_COLUMN]):
            raise SourceError(f"{where}: the document of doc_id {doc_id} has item_id {doc[ITEM_ID_COLUMN]!r} but the "
                              f"text of row {target} (item_id {rows[target][ITEM_ID_COLUMN]!r}); are the logs from "
                              "another version of this dataset?")
        if target != doc_id:
            moved += 1
        out[doc_id] = target
    if moved:
        notes.append(f"{where}: {moved} record(s) matched by content to a row other than their doc_id")
    seen: dict[int, int] = {}
    for doc_id, target in out.items():
        if target in seen:
            raise SourceError(f"{where}: doc_ids {seen[target]} and {doc_id} are the same row {target} of the tiny split")
        seen[target] = doc_id
    return out, notes


# ============================================================================ the logs side
def _log_dirs(logs: Path, tasks: set[str]) -> dict[Path, dict[str, list[tuple[str, Path]]]]:
    """Folder -> task -> [(timestamp, samples file)] for the wanted tasks."""
    found: dict[Path, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for f in walk_files(logs):
        parsed = split_samples_name(f.name)
        if parsed and parsed[0] in tasks:
            found[f.parent][parsed[0]].append((norm_ts(parsed[1]), f))
    return found


def _results_by_ts(d: Path) -> dict[str, dict]:
    out = {}
    for f in sorted(d.iterdir()):
        if f.is_file() and f.name.startswith("results") and f.name.endswith(".json"):
            try:
                data = read_json(f)
            except SourceError:
                continue
            if is_results(data):
                out[norm_ts(results_ts(f.name))] = data
    return out


def _metric_of(path: Path, target: _Target) -> str | None:
    """The first of the config's metrics the records hold: ``anchor_mean`` (our task files), then
    the config's metric and its alternatives (lm-eval writes only the metrics its task YAML lists:
    lm-eval's own tiny tasks ``acc_norm``, their later versions ``acc``); else the config's metric
    (None: the reader's default for the task)."""
    first = next((rec for _, rec in iter_records(path)), None) or {}
    for m in (target.metric, *target.alternatives):
        if m and m in first:
            return m
    return target.alternatives[0] if target.alternatives else None


def _docs(path: Path) -> dict[int, Any]:
    docs: dict[int, Any] = {}
    for _, rec in iter_records(path):
        try:
            doc_id = doc_index(rec.get("doc_id"))
        except ValueError:
            continue  # read_samples_file reports it
        if doc_id not in docs:
            docs[doc_id] = rec.get("doc")
    return docs


def _logged_design(results: dict | None, task: str) -> tuple[str | None, str | None]:
    """``(dataset_version, design hash)`` of the task file a run used, from lm-eval's results
    file (``configs[task].metadata``: what our task files record); ``(None, None)`` without."""
    meta = (((results or {}).get("configs") or {}).get(task) or {}).get("metadata") or {}
    if not isinstance(meta, dict):
        return None, None
    v, h = meta.get("dataset_version"), meta.get("design")
    return (str(v) if v is not None else None), (str(h) if isinstance(h, str) else None)


def _match(t: _Target, path: Path, results: dict | None, task: str) -> tuple[dict[int, int], list[str]]:
    """:func:`match_rows` for one samples file, with the design the run's task file records:
    results of another design are refused naming both versions; rows served from another
    revision than the task file pinned (offline, ``datasets`` serves the newest cached one) are
    told apart from a task file of another version. ``task``: the task that ran (``t.task`` or
    one of its aliases), whose entry of the results file records the design."""
    where = str(path)
    logged_v, logged_h = _logged_design(results, task)
    mine = f"{t.benchmark} {t.version}" if t.version else (t.benchmark or "this tiny dataset")
    theirs = f"{t.benchmark} {logged_v}" if logged_v else "another version"
    other = logged_h is not None and t.design is not None and logged_h != t.design
    lh, td = (logged_h or "")[:12], (t.design or "")[:12]  # the hashes as the messages show them
    docs = _docs(path)
    has_docs = any(isinstance(d, dict) for d in docs.values())
    if other and not has_docs:
        raise SourceError(f"{where}: these logs were made with the task file of {theirs} (design {lh}), "
                          f"not of {mine} (design {td}), and carry no documents to check the rows "
                          f"against: estimate them with the folder of {theirs}")
    try:
        mapping, notes = match_rows(docs, t.rows, where)
    except SourceError as exc:
        if other:
            raise SourceError(f"{where}: these logs are results of {theirs} (design {lh}), not of {mine} "
                              f"(design {td}): their documents are not this version's rows. Estimate "
                              f"them with the folder of {theirs}") from None
        if logged_h is not None:
            raise SourceError(f"{exc} The task file that ran them ({theirs}'s) has the design of {mine}, but the rows "
                              "it ran are not its rows: offline, `datasets` serves the newest cached revision whatever "
                              "revision the task file pins; estimate them with the folder of the version whose rows "
                              "they are") from None
        raise
    if other:
        notes.append(f"{where}: the task file was {theirs}'s (design {lh}), but the rows it ran are "
                     f"{mine}'s (the dataset cache served this revision): estimated with {mine}")
    return mapping, notes


def read_log_scores(folder: str | os.PathLike, logs: str | os.PathLike, task: str | None = None,
                    metric: str | None = None, filter: str | None = None, version: str | None = None) -> LogScores:
    """Anchor results of every model whose logs of the dataset's tiny task(s) are under ``logs``.

    ``folder`` may be ``hub:OWNER/NAME@REVISION`` (:func:`tinybench_builder.estimate.tables.resolve_folder`).
    ``version``: the version (or design hash) the logs were made against, checked against the
    folder's (:meth:`TinyEstimator.design_of`). Logs of the full benchmark (its ``source_task``,
    not the tiny task) are read too: their anchor documents give the estimate, and the logs also
    give the exact full score (:attr:`LogScores.full_scores`). lighteval's details files of the
    tiny tasks (``--save-details``) are read beside lm-eval's logs
    (:mod:`tinybench_builder.estimate.lighteval_logs`).
    """
    folder, logs = resolve_folder(folder), Path(logs)
    if not logs.is_dir():
        raise NotADirectoryError(f"{logs}: not a folder of lm-evaluation-harness logs or lighteval details")
    estimators, targets = _targets(folder, task)
    if version is not None:
        for est in estimators.values():
            est.design_of(version)
    tasks = {name for t in targets if t.task for name in (t.task, *t.aliases)}
    if targets[0].rows is None:  # a `tinybench-builder fit` folder: logs of the full task, items named as `ingest` does
        return _read_full_task_logs(estimators[""], logs, task, metric, filter)
    dirs = _log_dirs(logs, tasks)
    lighteval = has_lighteval_details(logs)
    if not dirs and not lighteval:
        full = _read_full_benchmark_logs(estimators, targets, logs, metric, filter) if task is None else None
        if full is not None:
            return full
        raise SourceError(f"{logs}: no samples_<task>_<timestamp>.jsonl logs of {', '.join(sorted(tasks))} "
                          "(run lm_eval with --log_samples) and no lighteval details of them (run lighteval with "
                          "--save-details)")
    taken: set[str] = set()
    models, per_model, notes = _lm_eval_rows(estimators, targets, logs, dirs, metric, filter, taken)
    if lighteval:
        more = lighteval_rows(estimators, targets, logs, metric, taken)
        models, per_model, notes = models + more[0], per_model + more[1], notes + more[2]
    if not models:
        raise SourceError(f"{logs}: no logs or details of {', '.join(sorted(tasks))}")
    scores = {key: np.vstack([pm[key] for pm in per_model]) for key in estimators}
    return LogScores(estimators, models, scores, notes)


def _model_of_run(results: dict | None, d: Path, logs: Path, taken: set[str]) -> str:
    """The model a run folder's results file names (:func:`tinybench_builder.read.model_named_in_results`:
    its model arguments, else its model type such as ``dummy``), else the folder's name; a name
    already taken gets the folder appended."""
    model = (model_named_in_results(results) if results else None) or model_name_from_folder(d.name)
    if model in taken:
        model = f"{model} ({d.relative_to(logs).as_posix() if d != logs else d.name})"
    taken.add(model)
    return model


def _lm_eval_rows(estimators: dict[str, TinyEstimator], targets: list[_Target], logs: Path,
                  dirs: dict[Path, dict[str, list[tuple[str, Path]]]], metric: str | None, filter: str | None,
                  taken: set[str]) -> tuple[list[str], list[dict[str, np.ndarray]], list[str]]:
    """``(models, per model {estimator key: anchor results}, notes)`` of the lm-eval logs ``dirs``."""
    notes: list[str] = []
    models: list[str] = []
    per_model: list[dict[str, np.ndarray]] = []
    for d in sorted(dirs):
        results = _results_by_ts(d)
        model = _model_of_run(results[max(results)] if results else None, d, logs, taken)
        rows = {key: np.full(len(est.anchor_ids), np.nan) for key, est in estimators.items()}
        for t in targets:
            if t.task is None:  # a config without an lm-eval task: no logs to read
                continue
            runs = sorted((ts, path, name) for name in (t.task, *t.aliases) for ts, path in dirs[d].get(name, []))
            if not runs:
                continue
            ts, path, name = runs[-1]
            if len(runs) > 1:
                notes.append(f"{model}: {t.task}: {len(runs)} runs, using the newest ({name}, {ts})")
            block, bnotes = read_samples_file(path, name, name, "", metric or _metric_of(path, t), filter,
                                              results.get(ts))
            notes.extend(f"{model}: {n}" for n in bnotes)
            where = f"{path}"
            mapping, mnotes = _match(t, path, results.get(ts), name)
            notes.extend(mnotes)
            n_rows = len(t.anchor_index)
            doc_ids = block.index if block.index is not None else np.arange(len(block.scores))
            for doc_id, score in zip(doc_ids.tolist(), block.scores.tolist()):
                r = mapping.get(int(doc_id), int(doc_id))
                if not 0 <= r < n_rows:
                    raise SourceError(f"{where}: doc_id {doc_id} is not a row of the tiny split ({n_rows} rows)")
                rows[t.estimator_key][t.anchor_index[r]] = score
            answered = len(doc_ids)
            if answered < n_rows:
                notes.append(f"{model}: {t.task}: {answered} of {n_rows} rows answered")
        models.append(model)
        per_model.append(rows)
    return models, per_model, notes


def _read_full_benchmark_logs(estimators: dict[str, TinyEstimator], targets: list[_Target], logs: Path,
                              metric: str | None, filter: str | None) -> LogScores | None:
    """Logs of the full benchmark (each config's ``source_task``) for a tiny dataset folder: the
    anchors' documents are taken by item id (``tinybench-builder ingest``'s ids, those the training
    responses had), the other documents give the exact full score. None: no such logs."""
    from tinybench_builder.read import ingest

    present = {parsed[0] for f in walk_files(logs) if (parsed := split_samples_name(f.name))}
    found = [t for t in targets if t.source_task and t.source_task in present]
    if not found:
        return None
    notes: list[str] = []
    models: list[str] = []
    per_model: dict[str, dict[str, np.ndarray]] = {}
    full: dict[str, dict[str, float]] = {}
    for t in found:
        est = estimators[t.estimator_key]
        m = ingest([logs], task=t.source_task, metric=metric, filter=filter, format="lm_eval")
        notes.extend(m.notes)
        pos = {t.prefix + item: j for j, item in enumerate(m.items)}
        anchors = [est.anchor_ids[i] for i in t.anchor_index]
        have = [a for a in anchors if a in pos]
        if not have:
            raise SourceError(f"{logs}: the {t.source_task} logs hold none of the {len(anchors)} anchor documents of "
                              f"config {t.config!r} (anchors look like {anchors[:3]}, the logs' items like "
                              f"{[t.prefix + i for i in m.items[:3]]})")
        for i, model in enumerate(m.models):
            if model not in per_model:
                models.append(model)
                per_model[model] = {key: np.full(len(e.anchor_ids), np.nan) for key, e in estimators.items()}
            row = per_model[model][t.estimator_key]
            for a in have:
                row[est.anchor_ids.index(a)] = m.scores[i, pos[a]]
            y = m.scores[i]
            done = int((~np.isnan(y)).sum())
            score = float(np.nanmean(y)) if done else float("nan")
            full.setdefault(model, {})[t.config] = score
            notes.append(f"{model}: these are logs of the full benchmark ({t.source_task}, {done} documents), not of "
                         f"the tiny task {t.task}: they also give its exact score, {score:.4f} (the mean over the "
                         f"logged documents, column full_score); the estimate uses their {len(have)} anchor "
                         "documents only")
    scores = {key: np.vstack([per_model[m][key] for m in models]) for key in estimators}
    return LogScores(estimators, models, scores, notes, full)


def _read_full_task_logs(est: TinyEstimator, logs: Path, task: str | None, metric: str | None,
                         filter: str | None) -> LogScores:
    """Logs of the full benchmark for a folder written by ``tinybench-builder fit`` (no tiny dataset).

    The logs are read with :func:`tinybench_builder.read.ingest.ingest` (item ids ``<doc_id>``, or
    ``<subtask>.<doc_id>`` for a group such as ``mmlu``), the same ids ``tinybench-builder ingest`` gives
    the training responses; the anchor items are taken from them by id, so the record order
    does not matter either.
    """
    from tinybench_builder.read import ingest

    if task is None:
        tasks = {got[0] for f in walk_files(logs) if (got := split_samples_name(f.name)) is not None}
        if len(tasks) != 1:
            raise ValueError(f"{logs}: {'no' if not tasks else 'several'} lm-eval samples tasks found "
                             f"({', '.join(sorted(tasks)) or 'none'}); name one with --task")
        task = tasks.pop()
    m = ingest([logs], task=task, metric=metric, filter=filter, format="lm_eval")
    pos = {item: j for j, item in enumerate(m.items)}
    present = [a for a in est.anchor_ids if a in pos]
    if not present:
        raise SourceError(f"{logs}: the {task} logs hold none of the {len(est.anchor_ids)} anchor items "
                          f"(anchors look like {est.anchor_ids[:3]}, the logs' items like {m.items[:3]})")
    Y = np.full((m.shape[0], len(est.anchor_ids)), np.nan)
    for i, a in enumerate(est.anchor_ids):
        if a in pos:
            Y[:, i] = m.scores[:, pos[a]]
    return LogScores({"": est}, list(m.models), {"": Y}, list(m.notes))


def estimate_from_logs(folder: str | os.PathLike, logs: str | os.PathLike, task: str | None = None,
                       metric: str | None = None, filter: str | None = None,
                       version: str | None = None) -> tuple[pd.DataFrame, list[str]]:
    """One row of estimates per model (and estimator) found in ``logs``; plus the reader notes.

    Columns as ``tinybench-builder estimate`` on a score table (``model, score, ci_low, ci_high, irt, pirt, gpirt,
    n_answered`` and ``<scenario>.<key>`` for bundles), with ``config`` first when
    the dataset has one estimator per config.
    """
    got = read_log_scores(folder, logs, task=task, metric=metric, filter=filter, version=version)
    frames = []
    for key, est in got.estimators.items():
        Y = got.scores[key]
        keep = ~np.isnan(Y).all(axis=1)
        if not keep.any():
            continue
        with one_blas_thread():
            results = est.estimate(Y[keep])
        rows = []
        for model, r in zip([m for m, k in zip(got.models, keep) if k], results):
            row = {"model": model, **{k: r[k] for k in COLUMNS[1:]}}
            for name, per in (r.get("scenarios") or {}).items():
                for k in ("score", "ci_low", "ci_high", "irt", "pirt", "gpirt"):
                    row[f"{name}.{k}"] = per[k]
            if model in got.full_scores:  # logs of the full benchmark: its exact score, next to the estimate
                exact = got.full_scores[model]
                if len(exact) == 1:
                    row["full_score"] = next(iter(exact.values()))
                else:
                    row.update({f"{c}.full_score": v for c, v in exact.items()})
            rows.append(row)
        frame = pd.DataFrame(rows)
        if len(got.estimators) > 1:
            frame.insert(0, "config", key)
        frames.append(frame)
    if not frames:
        raise SourceError(f"{logs}: the logs answer none of the anchors")
    return pd.concat(frames, ignore_index=True), got.notes
