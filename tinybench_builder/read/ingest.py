"""``tinybench-builder ingest``: read evaluation outputs of any supported format into one score table.

::

    python -m tinybench_builder ingest SOURCE [SOURCE ...] --out FILE.parquet
        [--task NAME] [--metric NAME] [--filter NAME] [--content FILE] [--items-out FILE]
        [--hub-models FILE [--hub-cache DIR]]
        [--workers N | --scheduler ADDRESS | --jobs N] [--retries N] [--progress MODE]

Each SOURCE is a file or folder; its format is detected (:func:`detect_source`): lm-eval
``--log_samples`` folders, Open LLM Leaderboard v1/v2 details, AlpacaEval annotations, HELM
runs, the legacy tinyBenchmarks pickle, or a wide/long score table. ``--hub-models`` adds Open
LLM Leaderboard v1 models read straight from their Hub details repos.

The work is a map and a reduce (:func:`ingest`): each model is read on its own (a local
process pool by default; a Dask cluster with ``--workers``/``--scheduler``, see
:mod:`tinybench_builder.read.sources.dask_map`), then merged into one matrix whose items and order do not
depend on where the map ran; the same (model, item) read twice with different scores is an
error. Bad input stops the run (exit 2, nothing written); a model that keeps failing for
another reason is retried, then reported: the others are written and the exit status is 3.
The wide table is written atomically, and a summary (models, items, time, failures, missing
share, partially covered models, reader notes) is printed.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence


from tinybench_builder.errors import IncompleteIngest, nested_too_deeply
from tinybench_builder.progress import bar as progress_bar
from tinybench_builder.progress import get_logger, progress_enabled
from tinybench_builder.read.matrix import ResponseMatrix
from tinybench_builder.read.sources import SourceError
from tinybench_builder.inputs import walk_files
from tinybench_builder.read.sources._common import Options, Unit, UnitFailure, map_units
from tinybench_builder.read.sources.reduce import MatrixReducer, matrix_to_parts, unit_keys

#: detect_source results -> reader module (inside tinybench_builder.read.sources)
FORMATS = {
    "lm_eval": "lm_eval",
    "lighteval": "lighteval",
    "open_llm_leaderboard_v2": "lm_eval",
    "open_llm_leaderboard": "open_llm_leaderboard",
    "alpaca_eval": "alpaca_eval",
    "helm": "helm",
    "legacy_pickle": "legacy_pickle",
    "table": "tables",
}

_log = get_logger(__name__)

__all__ = ["FORMATS", "detect_source", "ingest", "ingest_with_report", "IncompleteIngest", "IngestResult"]


def _classify_file(f: Path) -> str | None:
    from tinybench_builder.read.sources.lighteval import is_lighteval_details
    from tinybench_builder.read.sources.lm_eval import split_samples_name
    from tinybench_builder.read.sources.open_llm_leaderboard import split_details_name
    from tinybench_builder.read.sources.tables import is_table

    name = f.name
    low = name.lower()
    if name in ("run_spec.json", "per_instance_stats.json"):
        return "helm"
    if name == "annotations.json":
        return "alpaca_eval"
    if low.endswith(".parquet") and is_lighteval_details(f):  # before v1's details: the same file names
        return "lighteval"
    if split_details_name(name):
        return "open_llm_leaderboard"
    parsed = split_samples_name(name)
    if parsed:
        return "open_llm_leaderboard_v2" if parsed[0].startswith("leaderboard_") else "lm_eval"
    if low.endswith((".pkl", ".pickle")):
        return "legacy_pickle"
    if low.endswith(".jsonl"):
        return "lm_eval"
    if is_table(f):
        return "table"
    return None


def detect_source(path: str | Path) -> str:
    """The format of a source file or folder, one of :data:`FORMATS`.

    Folders are recognised by their marker files: ``run_spec.json`` (HELM),
    ``annotations.json`` (AlpacaEval), ``details_<task>|<shots>_<ts>.parquet`` with lighteval's
    ``doc``/``metric``/``model_response`` columns (lighteval), other ``details_*.parquet`` (Open LLM
    Leaderboard v1),
    ``samples_<task>_<ts>.jsonl`` (lm-eval; ``leaderboard_*`` tasks: leaderboard v2),
    other ``*.jsonl`` (lm-eval v0.4.0-0.4.2); a single ``.pkl`` is a legacy pickle and a
    ``.parquet``/``.csv`` file a score table.
    """
    path = Path(path)
    if not path.exists():
        raise SourceError(f"{path}: no such file or folder")
    if path.is_file():
        kind = _classify_file(path)
        if kind is None and path.suffix == ".json":
            kind = _sniff_json(path)
        if kind is None:
            raise SourceError(f"{path}: cannot tell the source format from this file")
        if kind == "table" and path.name.startswith("details_"):
            return "open_llm_leaderboard"
        return kind
    weak: str | None = None
    for f in walk_files(path):
        kind = _classify_file(f)
        if kind in (None, "table", "legacy_pickle"):
            weak = weak or kind
            continue
        return kind
    if weak == "legacy_pickle":
        pickles = [f for f in walk_files(path) if f.suffix.lower() in (".pkl", ".pickle")]
        if len(pickles) == 1:
            raise SourceError(f"{path}: pass the pickle file itself: {pickles[0]}")
    if weak == "table":
        raise SourceError(f"{path}: a folder of tables; pass the table files themselves")
    raise SourceError(f"{path}: no known evaluation outputs found (see docs/INGEST.md for the formats)")


def _sniff_json(path: Path) -> str | None:
    with open(path, "rb") as fh:
        head = fh.read(65536)
    if b'"preference"' in head and b'"instruction"' in head:
        return "alpaca_eval"
    if b'"doc_id"' in head:
        return "lm_eval"
    if b'"instance_id"' in head:
        return "helm"
    return None


@dataclass
class IngestResult:
    """What :func:`ingest_with_report` read: the matrix and how it went."""

    matrix: ResponseMatrix | None
    failures: list[UnitFailure]
    units: int  # units of reading work (one per model folder or Hub repo) + table sources
    seconds: float
    engine: str  # "local process pool, 2 workers", "Dask cluster tcp://..., 4 workers", ...


class ModelProgress:
    """Progress over models on stderr: a bar (:func:`tinybench_builder.progress.bar`) where bars show, else a
    log line every 10% (the ``tinybench_builder`` logger, INFO).

    Called with each unit's result; counts the failures. ``mode``: ``"auto"``, ``"bar"``,
    ``"log"`` or ``"none"``; a callable ``callback(done, total, failed)`` is also called.
    """

    def __init__(self, total: int, mode: str = "auto", callback=None, stream=None):
        self.total = total
        self.done = 0
        self.failed = 0
        self.callback = callback
        self.stream = stream or sys.stderr
        self._own_stream = stream is not None  # log lines to that stream; else to the builder logger
        if mode == "auto":
            mode = "bar" if progress_enabled() else "log"
        self.mode = mode
        self._t0 = time.perf_counter()
        self._next_log = 0.1
        self._bar = None
        if mode == "bar" and total:
            # asked for by name (--progress bar), or auto where bars show
            self._bar = progress_bar(total=total, unit="model", desc="reading", file=self.stream, force=True)

    def __call__(self, result) -> None:
        self.done += 1
        if isinstance(result, UnitFailure):
            self.failed += 1
            if self._bar is not None:
                self._bar.set_postfix(failed=self.failed, refresh=False)
        if self._bar is not None:
            self._bar.update(1)
        elif self.mode == "log" and self.total and self.done / self.total >= self._next_log - 1e-12:
            while self._next_log <= self.done / self.total + 1e-12:
                self._next_log += 0.1
            dt = time.perf_counter() - self._t0
            failed = f", {self.failed} failed" if self.failed else ""
            line = f"reading: {self.done}/{self.total} models ({100 * self.done / self.total:.0f}%){failed}, {dt:.0f} s"
            if self._own_stream:
                print(line, file=self.stream, flush=True)
            else:
                _log.info(line)
        if self.callback is not None:
            self.callback(self.done, self.total, self.failed)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _plan_source(src, options: Options, format: str | None, task, metric, filter, slots: list,
                 notes: list[str]) -> None:
    """Add the slots of one source to ``slots`` (and its notes to ``notes``)."""
    import importlib

    kind = format or detect_source(src)
    module = importlib.import_module(f"tinybench_builder.read.sources.{FORMATS[kind]}")
    if kind == "table":
        m = module.read(src)
        slots.append(matrix_to_parts(m, str(src)))
        if task or metric or filter:
            notes.append(f"{src}: a score table; --task/--metric/--filter do not apply")
    elif kind == "legacy_pickle":
        m = module.read(src, task=task)
        slots.append(matrix_to_parts(m, str(src), scenario=str(m.item_info["scenario"].iloc[0])))
    else:
        found = module.scan(src, options)
        if found:
            found[0].want_content = True
        slots.extend(found)


def _plan(sources, options: Options, format: str | None, task, metric, filter, hub_models, hub_cache):
    """The slots of an ingest, in source order: a Unit (read by a worker) or a list of parts
    (a score table or pickle, read here), and the notes of the planning itself."""
    slots: list = []
    notes: list[str] = []
    for src in sources:
        with nested_too_deeply(src, SourceError):  # tables and pickles are read here, folders scanned
            _plan_source(src, options, format, task, metric, filter, slots, notes)
    if hub_models:
        from tinybench_builder.read.sources.open_llm_leaderboard import hub_units

        found = hub_units(list(hub_models), options, cache_dir=str(hub_cache) if hub_cache else None)
        if found:
            found[0].want_content = True
        slots.extend(found)
    return slots, notes


def ingest_with_report(
    sources: Sequence[str | Path] | str | Path = (),
    task: str | None = None,
    metric: str | None = None,
    filter: str | None = None,
    content: str | os.PathLike | None = None,
    *,
    format: str | None = None,
    workers: int | None = None,
    executor: str | None = None,
    scheduler: Any = None,
    hub_models: Sequence[str] = (),
    hub_cache: str | Path | None = None,
    retries: int = 2,
    progress: bool | str | Callable[[int, int, int], None] = False,
) -> IngestResult:
    """:func:`ingest`, returning failed models and timings instead of raising on failures.

    ``result.matrix`` is None only when every model failed. Bad input still raises
    :class:`SourceError`; an unusable cluster raises :class:`ClusterError`.
    """
    t0 = time.perf_counter()
    if isinstance(sources, (str, Path)):
        sources = [sources]
    sources = list(sources)
    if not sources and not hub_models:
        raise SourceError("no sources given")
    if format is not None and format not in FORMATS:
        raise SourceError(f"unknown format {format!r}; known: {', '.join(FORMATS)}")
    if retries < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    use_dask = executor == "dask" or scheduler is not None
    if executor not in (None, "process", "thread", "serial", "dask"):
        raise ValueError(f"unknown executor {executor!r} (use process, thread, serial or dask)")
    options = Options(task=task, metric=metric, filter=filter, content=str(content) if content is not None else None)
    slots, notes = _plan(sources, options, format, task, metric, filter, hub_models, hub_cache)
    units = [s for s in slots if isinstance(s, Unit)]
    if isinstance(progress, str):
        bar = ModelProgress(len(units), mode=progress)
    elif callable(progress):
        bar = ModelProgress(len(units), mode="none", callback=progress)
    else:
        bar = ModelProgress(len(units), mode="auto" if progress else "none")

    reducer = MatrixReducer()
    try:
        if use_dask:
            from tinybench_builder.read.sources.dask_map import dask_client, describe_client, reduce_on_dask

            if scheduler is None and workers is None:
                workers = os.cpu_count() or 1
            with dask_client(scheduler, workers) as client:
                engine = describe_client(client)
                if scheduler is None:
                    engine = engine.replace("Dask cluster", "Dask LocalCluster", 1)
                failures = reduce_on_dask(client, slots, reducer, retries=retries, on_result=bar,
                                          before_fill=lambda n: bar.close())
        else:
            n_workers = workers if workers is not None else min(os.cpu_count() or 1, max(1, len(units)))
            results = iter(map_units(units, workers=n_workers, executor=executor, progress=bar,
                                     flatten=False, retries=retries))
            engine = _local_engine(executor, n_workers, len(units))
            got = [next(results) if isinstance(s, Unit) else s for s in slots]
            bar.close()
            failures = [g for g in got if isinstance(g, UnitFailure)]
            for i, g in enumerate(got):
                if not isinstance(g, UnitFailure):
                    reducer.add_keys(i, unit_keys(g))
            if reducer.has_scores:
                reducer.build_index()
                for i, g in enumerate(got):
                    if not isinstance(g, UnitFailure):
                        reducer.fill(i, g)
                        got[i] = None  # the matrix holds the scores now
    finally:
        bar.close()
    matrix = None
    if reducer.has_scores:
        notes.extend(f.note() for f in failures)
        matrix = reducer.finish(content=content, notes=notes)
    elif not failures:
        avail = reducer.available
        if task and avail:
            raise SourceError(f"no scores for task {task!r} in the sources; tasks found: {', '.join(avail)}")
        raise SourceError("the sources hold no scores")
    return IngestResult(matrix, failures, len(slots), time.perf_counter() - t0, engine)


def _local_engine(executor: str | None, workers: int, n: int) -> str:
    from tinybench_builder.read.sources._common import _processes_safe

    kind = executor or ("serial" if workers <= 1 or n < 4 else "process" if _processes_safe() else "thread")
    if kind == "serial" or workers <= 1:
        return "this process (serial)"
    return f"local {'process pool' if kind == 'process' else 'threads'}, {workers} workers"


def ingest(
    sources: Sequence[str | Path] | str | Path = (),
    task: str | None = None,
    metric: str | None = None,
    filter: str | None = None,
    content: str | os.PathLike | None = None,
    *,
    format: str | None = None,
    workers: int | None = None,
    executor: str | None = None,
    scheduler: Any = None,
    hub_models: Sequence[str] = (),
    hub_cache: str | Path | None = None,
    retries: int = 2,
    progress: bool | str | Callable[[int, int, int], None] = False,
) -> ResponseMatrix:
    """Read and merge evaluation outputs into one :class:`ResponseMatrix`.

    Parameters
    ----------
    sources : paths (files or folders); formats are detected per source unless ``format``.
    task : picks the task/benchmark (lm-eval task or group, v1 benchmark such as ``arc`` or
        ``mmlu``, AlpacaEval annotator, HELM run group, pickle entry).
    metric : per-example metric to read instead of the task's default.
    filter : lm-eval filter (e.g. ``flexible-extract``; GSM8K defaults to ``strict-match``).
    content : a content table (parquet/CSV/JSON). AlpacaEval maps instructions to its
        ``item_id``/row position; any source gets its columns joined on ``item_id``.
    workers, executor : where the per-model map runs. ``executor``: ``process``/``thread``/
        ``serial`` on this machine (``workers`` = pool size, default the CPU count; default
        executor: a process pool when there are many models), or ``dask``: a Dask
        ``LocalCluster`` of ``workers`` processes (needs the ``[distributed]`` extra).
    scheduler : a Dask scheduler address (``tcp://host:8786``) or a ``distributed.Client``:
        run the map on that cluster. Its workers must see the source paths.
    hub_models : Open LLM Leaderboard model ids (``org/name``) whose v1 details are downloaded
        from the Hub inside the map (each worker fetches its models' files into its Hub cache,
        ``hub_cache`` if given) and read like local folders.
    retries : extra attempts for a model whose reading fails for another reason than bad
        input (network, lost worker, ...). Bad input is never retried.
    progress : a progress display over models on stderr (``True``/``"auto"``: a bar on a
        terminal, a line every 10% otherwise; ``"bar"``, ``"log"``, ``"none"``), or a callable
        ``progress(done, total, failed)`` called after each model.

    Raises
    ------
    SourceError : unreadable/corrupt input (the message names the file), conflicting
        duplicate scores, or nothing found for ``task``.
    IncompleteIngest : some models kept failing; ``exc.matrix`` holds the others.
    ClusterError : Dask missing, scheduler unreachable, workers without this package.

    The result does not depend on where the map ran: the same items in the same order, the
    same NaN and the same notes.
    """
    result = ingest_with_report(
        sources, task, metric, filter, content, format=format, workers=workers, executor=executor,
        scheduler=scheduler, hub_models=hub_models, hub_cache=hub_cache, retries=retries, progress=progress,
    )
    if result.failures:
        raise IncompleteIngest(result.matrix, result.failures)
    assert result.matrix is not None  # no failure: every model was read
    return result.matrix
