"""Reading input files the user names: JSON, JSON lines, folder walks, document ids.

Every stage reads such files (the readers their evaluation outputs, the estimate stage the logs
of lm-eval's tiny tasks, the dataset stage content tables): an unreadable one is one
:class:`~tinybench_builder.errors.SourceError` naming the file and the line, never a traceback, and
nothing read can exhaust the stack (nesting) or overflow (document ids).

This kernel module imports only :mod:`tinybench_builder.errors` (and numpy).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from tinybench_builder.errors import SourceError

__all__ = ["read_json", "iter_records", "walk_files", "doc_index", "MAX_DOC_ID"]

#: the largest document index accepted (lm-eval doc ids are row positions; beyond is corrupt)
MAX_DOC_ID = 2**53


def doc_index(value: Any) -> int:
    """A document id as a row position: a non-negative integer (an integral float or a digit
    string too) below :data:`MAX_DOC_ID`. ValueError otherwise, never OverflowError: ``1e999``,
    ``1.5``, ``true``, ``-1`` and ``10**30`` are all refused."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"not a document index: {value!r}")
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value) or value != int(value):
            raise ValueError(f"not a whole number: {value!r}")
        value = int(value)
    elif isinstance(value, str):
        text = value.strip()
        if not text.isdigit() or not text.isascii() or len(text) > 20:
            raise ValueError(f"not a document index: {value!r}")
        value = int(text)
    elif not isinstance(value, (int, np.integer)):
        raise ValueError(f"not a document index: {value!r}")
    if not 0 <= int(value) < MAX_DOC_ID:
        raise ValueError(f"document index {int(value)} is out of range (0 to 2**53)")
    return int(value)


def read_json(path: str | os.PathLike) -> Any:
    """``json.load`` whose errors name the file and the line."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise SourceError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise SourceError(
            f"{path}: line {exc.lineno}: invalid JSON ({exc.msg}); the file is truncated or corrupt"
        ) from exc
    except RecursionError:  # also on pool and Dask workers: bad input, never retried
        raise SourceError(f"{path}: the JSON is nested too deeply to be an evaluation output") from None
    except UnicodeDecodeError as exc:
        raise SourceError(f"{path}: not UTF-8 text ({exc.reason}); the file is corrupt") from exc


def iter_records(path: str | os.PathLike) -> Iterator[tuple[int, dict]]:
    """Yield ``(line number, record)`` from a JSON-lines file or a JSON array file.

    lm-eval v0.4.0-0.4.2 wrote its ``.jsonl`` samples as a pretty-printed JSON array; the
    first non-blank character tells the two apart. Errors name the file and the line.
    """
    path = Path(path)
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise SourceError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    with fh:
        head = fh.read(4096).lstrip()
        fh.seek(0)
        if head.startswith(b"["):
            data = read_json(path)
            if not isinstance(data, list):
                raise SourceError(f"{path}: expected a JSON array of records")
            for i, rec in enumerate(data):
                if not isinstance(rec, dict):
                    raise SourceError(f"{path}: record {i} is not a JSON object")
                yield i + 1, rec
            return
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SourceError(
                    f"{path}: line {lineno}: invalid JSON ({exc.msg}); the file is truncated or corrupt"
                ) from exc
            except RecursionError:
                raise SourceError(f"{path}: line {lineno}: the JSON is nested too deeply to be a record") from None
            except UnicodeDecodeError as exc:
                raise SourceError(f"{path}: line {lineno}: not UTF-8 text; the file is corrupt") from exc
            if not isinstance(rec, dict):
                raise SourceError(f"{path}: line {lineno}: expected a JSON object, got {type(rec).__name__}")
            yield lineno, rec


def walk_files(root: Path, max_depth: int = 6) -> Iterator[Path]:
    """Files under ``root`` (sorted, depth-limited, hidden entries skipped)."""
    root = Path(root)
    if root.is_file():
        yield root
        return
    base_depth = len(root.parts)
    for dirpath, dirnames, filenames in os.walk(root):
        depth = len(Path(dirpath).parts) - base_depth
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")) if depth < max_depth else []
        for name in sorted(filenames):
            if not name.startswith("."):
                yield Path(dirpath) / name
