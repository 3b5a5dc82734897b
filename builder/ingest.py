"""``builder ingest``: read evaluation outputs of any supported format into one score table.

::

    python -m builder ingest SOURCE [SOURCE ...] --out FILE.parquet
        [--task NAME] [--metric NAME] [--filter NAME] [--content FILE]

Each SOURCE is a file or folder; its format is detected (:func:`detect_source`): lm-eval
``--log_samples`` folders, Open LLM Leaderboard v1/v2 details, AlpacaEval annotations, HELM
runs, the legacy tinyBenchmarks pickle, or a wide/long score table. Models are read one at a
time in parallel workers and merged (:func:`ingest`); the same (model, item) read twice with
different scores is an error. The wide table is written atomically, and a summary (models,
items, missing share, partially covered models, reader notes) is printed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .matrix import MatrixFormatError, ResponseMatrix
from .sources import SourceError
from .sources._common import Options, assemble, map_units, matrix_to_parts, walk_files

#: detect_source results -> reader module (inside builder.sources)
FORMATS = {
    "lm_eval": "lm_eval",
    "open_llm_leaderboard_v2": "lm_eval",
    "open_llm_leaderboard": "open_llm_leaderboard",
    "alpaca_eval": "alpaca_eval",
    "helm": "helm",
    "legacy_pickle": "legacy_pickle",
    "table": "tables",
}

__all__ = ["FORMATS", "detect_source", "ingest", "add_ingest_arguments", "run_ingest"]


def _classify_file(f: Path) -> str | None:
    from .sources.lm_eval import split_samples_name
    from .sources.open_llm_leaderboard import split_details_name
    from .sources.tables import is_table

    name = f.name
    low = name.lower()
    if name in ("run_spec.json", "per_instance_stats.json"):
        return "helm"
    if name == "annotations.json":
        return "alpaca_eval"
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
    ``annotations.json`` (AlpacaEval), ``details_*.parquet`` (Open LLM Leaderboard v1),
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


def ingest(
    sources: Sequence[str | Path] | str | Path,
    task: str | None = None,
    metric: str | None = None,
    filter: str | None = None,
    content: str | Path | None = None,
    *,
    format: str | None = None,
    workers: int | None = None,
    executor: str | None = None,
    progress: bool = False,
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
    workers, executor : parallel reading (``process``/``thread``/``serial``; default: a
        process pool when there are many models).

    Raises
    ------
    SourceError : unreadable/corrupt input (the message names the file), conflicting
        duplicate scores, or nothing found for ``task``.
    """
    if isinstance(sources, (str, Path)):
        sources = [sources]
    if not sources:
        raise SourceError("no sources given")
    if format is not None and format not in FORMATS:
        raise SourceError(f"unknown format {format!r}; known: {', '.join(FORMATS)}")
    options = Options(task=task, metric=metric, filter=filter, content=str(content) if content is not None else None)
    import importlib

    per_source: list[list] = []  # parts per source, in source order
    units = []
    owner: list[int] = []  # source index of each unit
    notes: list[str] = []
    for k, src in enumerate(sources):
        kind = format or detect_source(src)
        module = importlib.import_module(f"builder.sources.{FORMATS[kind]}")
        per_source.append([])
        if kind == "table":
            m = module.read(src)
            per_source[k].extend(matrix_to_parts(m, str(src)))
            if task or metric or filter:
                notes.append(f"{src}: a score table; --task/--metric/--filter do not apply")
        elif kind == "legacy_pickle":
            m = module.read(src, task=task)
            per_source[k].extend(matrix_to_parts(m, str(src), scenario=str(m.item_info["scenario"].iloc[0])))
        else:
            found = module.scan(src, options)
            if found:
                found[0].want_content = True
            units.extend(found)
            owner.extend([k] * len(found))
    for k, got in zip(owner, map_units(units, workers=workers, executor=executor, progress=progress, flatten=False)):
        per_source[k].extend(got)
    parts = [p for group in per_source for p in group]
    if not any(p.blocks for p in parts):
        avail = sorted({t for p in parts for t in p.available})
        if task and avail:
            raise SourceError(f"no scores for task {task!r} in the sources; tasks found: {', '.join(avail)}")
        raise SourceError("the sources hold no scores")
    parts = [p for p in parts if p.blocks]
    return assemble(parts, content=content, notes=notes)


# --------------------------------------------------------------------------- CLI
def add_ingest_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``ingest`` arguments to ``parser`` (the CLI's ``ingest`` subparser)."""
    parser.add_argument("sources", nargs="+", metavar="SOURCE",
                        help="evaluation outputs: files or folders (lm-eval logs, leaderboard details, "
                             "AlpacaEval results, HELM runs, legacy pickle, score tables)")
    parser.add_argument("--out", required=True, metavar="FILE.parquet",
                        help="where to write the wide score table (models x items)")
    parser.add_argument("--task", default=None, metavar="NAME",
                        help="task/benchmark to read (lm-eval task or group, arc|hellaswag|mmlu|truthfulqa|"
                             "winogrande|gsm8k for leaderboard v1, AlpacaEval annotator, HELM run group, pickle entry)")
    parser.add_argument("--metric", default=None, metavar="NAME", help="per-example metric (default: the task's usual one)")
    parser.add_argument("--filter", default=None, metavar="NAME",
                        help="lm-eval filter when a task has several (GSM8K default: strict-match)")
    parser.add_argument("--content", default=None, metavar="FILE",
                        help="content table with item_id (and instruction, for AlpacaEval)")
    parser.add_argument("--items-out", default=None, metavar="FILE.parquet",
                        help="also write the item information (scenario, subscenario, content) here")
    parser.add_argument("--format", default=None, choices=sorted(FORMATS), help="skip detection and use this reader")
    parser.add_argument("--workers", type=int, default=None, metavar="N", help="parallel workers (default: CPU count)")


def run_ingest(args: argparse.Namespace) -> int:
    """Handler of ``builder ingest``: 0 on success, 2 on bad input (``error: ...`` on stderr)."""
    out = Path(args.out)
    try:
        matrix = ingest(
            args.sources,
            task=getattr(args, "task", None),
            metric=getattr(args, "metric", None),
            filter=getattr(args, "filter", None),
            content=getattr(args, "content", None),
            format=getattr(args, "format", None),
            workers=getattr(args, "workers", None),
            progress=sys.stderr.isatty(),
        )
    except (SourceError, MatrixFormatError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    matrix.write(out)
    items_out = getattr(args, "items_out", None)
    if items_out and matrix.item_info is not None:
        write_item_info(matrix.item_info, items_out)
    print(format_summary(matrix, out))
    return 0


def write_item_info(info: pd.DataFrame, path: str | Path) -> Path:
    """Write item information as parquet (lists/dicts as JSON strings), atomically."""
    frame = info.copy()
    for col in frame.columns:
        if frame[col].dtype == object and frame[col].map(lambda v: isinstance(v, (list, dict, tuple, np.ndarray))).any():
            frame[col] = frame[col].map(
                lambda v: json.dumps(v.tolist() if isinstance(v, np.ndarray) else v, ensure_ascii=False)
                if isinstance(v, (list, dict, tuple, np.ndarray)) else v
            )
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        frame.to_parquet(tmp)
        tmp.replace(path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def format_summary(matrix: ResponseMatrix, out: Path | None = None, max_list: int = 10) -> str:
    s = matrix.summary()
    lines = [f"{'wrote ' + str(out) + ': ' if out else ''}{s['models']} models x {s['items']} items"]
    scen = pd.Series(matrix.scenarios()).value_counts()
    if len(scen) > 1 or scen.index[0] != "all":
        lines.append("  scenarios: " + ", ".join(f"{k} ({v} items)" for k, v in scen.items()))
    lines.append(f"  missing: {100 * s['missing_share']:.2f}% of (model, item) entries")
    if s["partial_models"]:
        obs = matrix.observed.sum(axis=1)
        counts = dict(zip(matrix.models, obs))
        shown = ", ".join(f"{m} ({counts[m]}/{s['items']})" for m in s["partial_models"][:max_list])
        more = len(s["partial_models"]) - max_list
        lines.append(f"  models with partial coverage: {len(s['partial_models'])}: {shown}{f', ... {more} more' if more > 0 else ''}")
    else:
        lines.append("  models with partial coverage: 0")
    if matrix.notes:
        lines.append(f"  notes ({len(matrix.notes)}):")
        lines.extend(f"    - {n}" for n in matrix.notes[:50])
        if len(matrix.notes) > 50:
            lines.append(f"    ... {len(matrix.notes) - 50} more")
    return "\n".join(lines)


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m builder.ingest", description=__doc__.split("\n\n")[0])
    add_ingest_arguments(parser)
    return run_ingest(parser.parse_args(list(argv) if argv is not None else None))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
