"""Score tables in CSV, read strictly: a malformed file is refused, never read shifted.

pandas' ``read_csv`` guesses around malformed files: data rows one field longer than the
header (a trailing comma) silently make the first column the index, so every score moves
one column left and the model names become scores; duplicate column names become ``8`` and
``8.1`` (which then reads as item 1 of subscenario 8); short rows are padded with NaN; an
empty model name becomes the model ``nan``. :func:`read_score_csv` reads the header itself
and the rows with pyarrow's CSV reader (exact float parsing, every row must have the
header's field count) and:

* drops a trailing empty field that every row has (a trailing comma on every line), and a
  last column with an empty name and no values; refuses any other row of another length,
  naming its line;
* refuses duplicate column names, and columns without a name that hold values;
* names the file, line and column of a non-numeric score;
* keeps model and item names as text (``NA`` or ``1`` stay names, an empty one is refused);
* with ``columns``, converts only those columns (``estimate`` reads only the anchors).

:func:`check_csv_shape` applies the same header and row-length rules to other CSV inputs
(content tables) without converting anything.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import re
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from tinybench_builder.errors import CsvFormatError, one_line

__all__ = ["CsvFormatError", "read_header", "read_score_csv", "check_csv_shape"]

#: the columns kept as text in a score table (model names, item ids)
TEXT_COLUMNS = ("model", "item")
#: wider tables are read line by line: pyarrow's reader costs ~9 KB per column and block (a 3 x
#: 1,000,000 table took > 6 GB and aborted with std::bad_alloc)
WIDE_LINE_COLUMNS = 50_000
_MISMATCH = re.compile(r"Expected (\d+) columns, got (\d+)")


def _open_text(path: Path) -> io.TextIOBase:
    raw = gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")
    # utf-8-sig: a byte-order mark is not part of the first column name
    return io.TextIOWrapper(raw, encoding="utf-8-sig", errors="strict", newline="")


def read_header(path: str | os.PathLike, sep: str = ",") -> list[str]:
    """The column names: the first record of the file, as written."""
    path = Path(path)
    try:
        with _open_text(path) as fh:
            header = next(csv.reader(fh, delimiter=sep), None)
    except (UnicodeDecodeError, csv.Error, OSError, EOFError) as exc:
        raise CsvFormatError(f"{path}: cannot read the header line: {exc}") from exc
    if not header:
        raise CsvFormatError(f"{path}: empty file (no header line)")
    return header


def _first_bad_line(path: Path, sep: str, n_fields: int) -> tuple[int, int] | None:
    """(line number, field count) of the first data record whose field count is not ``n_fields``."""
    with _open_text(path) as fh:
        reader = csv.reader(fh, delimiter=sep)
        next(reader, None)
        for row in reader:
            if row and len(row) != n_fields:
                return reader.line_num, len(row)
    return None


def _names(path: Path, header: list[str]) -> list[str]:
    """Unique column names; an unnamed first column is the model column (a pandas index written
    without a name); other unnamed columns get placeholders (kept only if they hold nothing)."""
    names = list(header)
    if names[0].strip() == "" and "model" not in names:
        names[0] = "model"
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        if name.strip() == "":
            names[i] = f"\0unnamed-{i}"
            continue
        if name in seen:
            raise CsvFormatError(
                f"{path}: duplicate column name {name!r} (columns {seen[name] + 1} and {i + 1}); "
                "every item needs its own column")
        seen[name] = i
    return names


def _read_rows(path: Path, sep: str, names: list[str], include: Sequence[str] | None, numeric: Sequence[str] = ()):
    """The data rows as a pyarrow table; rows one field longer than the header whose extra
    field is always empty (a trailing comma) are read as if it were absent.

    ``numeric`` columns are parsed as float64 straight away (wide tables read 5-10x faster with
    their types given); a value that does not parse makes them inferred instead, so that the
    caller can name it.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    size = path.stat().st_size
    block = int(min(max(size // 2 + 1, 1 << 20), 1 << 28))  # few, large blocks: wide tables have many columns
    # a block must hold the header (and a row): pyarrow refuses a header longer than a block
    block = max(block, 2 * len(sep.join(names).encode("utf-8", "replace")) + (1 << 16))

    def attempt(cols: list[str], keep: Sequence[str] | None, typed: bool):
        types = {c: pa.string() for c in cols if c in TEXT_COLUMNS}
        if typed:
            present = set(cols)
            types.update({c: pa.float64() for c in numeric if c in present})
        return pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(column_names=cols, skip_rows=1, block_size=block),
            parse_options=pacsv.ParseOptions(delimiter=sep, newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(
                column_types=types, strings_can_be_null=False,
                include_columns=list(keep) if keep is not None else None, timestamp_parsers=[]),
        )

    def read(cols: list[str], keep: Sequence[str] | None):
        try:
            return attempt(cols, keep, typed=bool(numeric))
        except pa.ArrowInvalid as exc:
            if not numeric or _MISMATCH.search(str(exc)):
                raise
            return attempt(cols, keep, typed=False)  # a value that is not a float: find it

    try:
        return read(names, include)
    except pa.ArrowInvalid as exc:
        m = _MISMATCH.search(str(exc))
        if not m:
            raise CsvFormatError(f"{path}: cannot read the rows: {one_line(exc, 200)}") from None
    expected, got = int(m.group(1)), int(m.group(2))
    if got == expected + 1:  # maybe a trailing comma on every data row
        extra = f"\0trailing-{len(names)}"
        try:
            table = read(names + [extra], None if include is None else [*include, extra])
        except pa.ArrowInvalid:
            table = None
        if table is not None:
            col = table.column(extra)
            if col.null_count == len(col) or all(v in (None, "") for v in col.to_pylist()):
                return table.drop_columns([extra])
            raise CsvFormatError(
                f"{path}: the data rows have {got} fields but the header names {expected} columns, and the "
                "extra last field holds values; refusing to guess which column is which")
    if got == expected - 1 and names[-1].startswith("\0unnamed-"):  # a trailing comma on the header only
        return _read_rows(path, sep, names[:-1], include, numeric)
    bad = _first_bad_line(path, sep, expected)
    where = f"line {bad[0]} has {bad[1]} fields" if bad else f"a row has {got} fields"
    hint = " (a truncated line?)" if (bad[1] if bad else got) < expected else ""
    raise CsvFormatError(f"{path}: {where} but the header names {expected} columns{hint}; "
                         "refusing to guess which column is which")


def _float_column(path: Path, name: str, col, first_line: int = 2) -> np.ndarray:
    """A column as float64 (booleans 1/0, empty = NaN); a non-number names its line (the column's
    first value is on line ``first_line``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    typ = col.type
    if pa.types.is_null(typ):
        return np.full(len(col), np.nan)
    if pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_boolean(typ):
        return np.asarray(pc.cast(col, pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        try:
            cleaned = pc.if_else(pc.equal(pc.utf8_trim_whitespace(col), ""), pa.scalar(None, typ), col)
            return np.asarray(pc.cast(cleaned, pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)
        except pa.ArrowInvalid:
            pass
    values = col.to_pylist()
    out = np.empty(len(values))
    for row, v in enumerate(values):
        word = str(v).strip().lower() if v is not None else ""
        if v is None or word == "":
            out[row] = np.nan
        elif word in ("true", "false"):
            out[row] = 1.0 if word == "true" else 0.0
        else:
            try:
                out[row] = float(word)
            except ValueError:
                raise CsvFormatError(
                    f"{path}: line {row + first_line}, column {name!r}: {v!r} is not a number (scores are numbers in "
                    "[0, 1], empty = not evaluated)") from None
    return out


def read_score_csv(path: str | os.PathLike, sep: str = ",", columns: Iterable[str] | None = None,
                   long_columns: Sequence[str] = ("model", "item", "score")) -> pd.DataFrame:
    """A wide or long score table from CSV (see the module docstring).

    Returns a frame whose ``model`` (and ``item``) columns are text and every other column
    float64. ``columns``: for a wide table, only these item columns (unknown names ignored)
    are converted; for a long table, only the rows of these items are kept.
    """
    path = Path(path)
    header = read_header(path, sep)
    names = _names(path, header)
    real = [n for n in names if not n.startswith("\0")]
    is_long = set(long_columns).issubset(real) and len(real) <= len(long_columns) + 1
    include = None
    if columns is not None and not is_long:
        wanted = set(map(str, columns))
        include = [n for n in names if n in TEXT_COLUMNS or n in wanted]
    numeric = ["score"] if is_long else [n for n in names if n not in TEXT_COLUMNS and not n.startswith("\0")]
    if not is_long and len(names) > WIDE_LINE_COLUMNS:
        return _read_wide_by_line(path, sep, names, include)
    table = _read_rows(path, sep, names, include, numeric)
    data: dict[str, object] = {}
    for name in table.column_names:
        col = table.column(name)
        if name.startswith("\0"):
            if col.null_count != len(col) and not all(v in (None, "") for v in col.to_pylist()):
                raise CsvFormatError(f"{path}: column {int(name.rsplit('-', 1)[1]) + 1} has values but no name")
            continue
        if name in TEXT_COLUMNS:
            values = col.to_pylist()
            empty = [r for r, v in enumerate(values) if v is None or not str(v).strip()]
            if empty:
                raise CsvFormatError(f"{path}: line {empty[0] + 2}: empty {name} name")
            data[name] = values
        elif is_long and name != "score":
            data[name] = col.to_pylist()
        else:
            data[name] = _float_column(path, name, col)
    if is_long and columns is not None:
        frame = pd.DataFrame(data)
        return frame[frame["item"].isin(set(map(str, columns)))]
    text = {k: v for k, v in data.items() if k in TEXT_COLUMNS}
    numeric = [k for k in data if k not in TEXT_COLUMNS]
    frame = pd.DataFrame(np.column_stack([np.asarray(data[k]) for k in numeric]) if numeric else np.empty((table.num_rows, 0)),
                         columns=pd.Index(numeric, dtype=object))
    for i, (k, v) in enumerate(text.items()):
        frame.insert(i, k, v)
    return frame


def _read_wide_by_line(path: Path, sep: str, names: list[str], include: Sequence[str] | None) -> pd.DataFrame:
    """A very wide table, one line at a time (memory: the matrix twice at most, whatever the width)."""
    keep = [k for k, n in enumerate(names) if n not in TEXT_COLUMNS and not n.startswith("\0")
            and (include is None or n in include)]
    text = [k for k, n in enumerate(names) if n in TEXT_COLUMNS]
    unnamed = [k for k, n in enumerate(names) if n.startswith("\0")]
    rows: list[np.ndarray] = []
    labels: dict[int, list[str]] = {k: [] for k in text}
    with _open_text(path) as fh:
        reader = csv.reader(fh, delimiter=sep)
        next(reader, None)
        for rec in reader:
            if not rec:
                continue
            line = reader.line_num
            if len(rec) == len(names) + 1 and rec[-1] == "":
                rec.pop()  # a trailing comma
            if len(rec) != len(names):
                raise CsvFormatError(f"{path}: line {line} has {len(rec)} fields but the header names {len(names)} "
                                     "columns; refusing to guess which column is which")
            for k in unnamed:
                if rec[k].strip():
                    raise CsvFormatError(f"{path}: column {k + 1} has values but no name")
            for k in text:
                if not rec[k].strip():
                    raise CsvFormatError(f"{path}: line {line}: empty {names[k]} name")
                labels[k].append(rec[k])
            fields = [rec[k] for k in keep]
            try:
                rows.append(np.array([v if v.strip() else "nan" for v in fields], dtype=np.float64))
            except ValueError:  # booleans, or a value that is not a number: name it
                row = np.empty(len(fields))
                for i, (k, v) in enumerate(zip(keep, fields)):
                    word = v.strip().lower()
                    if word in ("true", "false"):
                        row[i] = 1.0 if word == "true" else 0.0
                        continue
                    try:
                        row[i] = float(word) if word else np.nan
                    except ValueError:
                        raise CsvFormatError(f"{path}: line {line}, column {names[k]!r}: {v!r} is not a number "
                                             "(scores are numbers in [0, 1], empty = not evaluated)") from None
                rows.append(row)
    values = np.vstack(rows) if rows else np.empty((0, len(keep)))
    del rows
    frame = pd.DataFrame(values, columns=pd.Index([names[k] for k in keep], dtype=object), copy=False)
    for i, k in enumerate(text):
        frame.insert(i, names[k], labels[k])
    return frame


def check_csv_shape(path: str | os.PathLike, sep: str = ",") -> None:
    """Refuse a CSV whose header has duplicate or (valued) empty names or whose rows do not all
    have the header's field count: the layout checks of :func:`read_score_csv`, nothing converted."""
    path = Path(path)
    header = read_header(path, sep)
    names = _names(path, header)
    if names[0] == "model" and header[0].strip() == "":
        names[0] = "\0unnamed-0"  # content tables have no model column: an unnamed index column
    table = _read_rows(path, sep, names, None)
    for name in table.column_names:
        col = table.column(name)
        if name.startswith("\0unnamed-") and name != "\0unnamed-0" and col.null_count != len(col) \
                and not all(v in (None, "") for v in col.to_pylist()):
            raise CsvFormatError(f"{path}: column {int(name.rsplit('-', 1)[1]) + 1} has values but no name")
