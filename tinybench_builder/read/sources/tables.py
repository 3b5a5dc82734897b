"""Wide or long score tables (parquet/CSV): dispatch to :meth:`ResponseMatrix.read`."""

from __future__ import annotations

from pathlib import Path

from tinybench_builder.read.sources import SourceError
from tinybench_builder.read.matrix import MatrixFormatError, ResponseMatrix

SUFFIXES = (".parquet", ".pq", ".csv", ".csv.gz", ".tsv")


def is_table(path: str | Path) -> bool:
    return str(path).lower().endswith(SUFFIXES)


def read(path: str | Path) -> ResponseMatrix:
    """Read a wide (models x items) or long (model, item, score) table; errors name the file."""
    try:
        return ResponseMatrix.read(path)
    except FileNotFoundError as exc:
        raise SourceError(str(exc)) from exc
    except MatrixFormatError as exc:
        msg = str(exc)
        raise SourceError(msg if str(path) in msg else f"{path}: {msg}") from exc
