"""Long score tables (``model, item, score``) read in chunks: memory a small multiple of the matrix.

A long table has one row per (model, item) pair, so it is as many rows as the matrix has cells:
20,000 models x 5,000 items is 100 million rows. Reading it whole (a pandas frame of Python
strings, then hashing every pair) took 15 to 35 times the matrix. :func:`read_long` reads the
file in chunks (pyarrow's streaming CSV reader, parquet row batches) and keeps, per row, only
the model's and the item's codes (``uint16`` while there are fewer than 65,536 names, else
``int32``) and the score (``float32`` when that is exact, as 0/1 scores are, else ``float64``):
8 to 16 bytes a row, against the matrix's 8 bytes a cell. Once the names are known the matrix
is allocated and the chunks scattered into it, each freed as soon as it is in, with a bitmap
of the cells already written (1 byte a cell) to refuse a pair given twice. The peak is about
twice the matrix for 0/1 scores (three times for soft ones), whatever the table's text size.

The result is what :meth:`ResponseMatrix.from_frame` gives for the same rows: models and items
in the order of their first row, names as text (``str()`` of the values, ``NA`` stays a name),
the same checks (an empty name, a pair given twice, a score that is not a number), with the
line (CSV) or row (parquet) of the first offence.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from tinybench_builder.errors import CsvFormatError, MatrixFormatError, one_line
from tinybench_builder.read.csv_table import _MISMATCH, _first_bad_line, _float_column, _names, read_header

__all__ = ["read_long", "write_long", "is_long_header", "CHUNK_BYTES", "WRITE_BLOCK_CELLS"]

#: bytes of CSV text parsed per chunk (pyarrow's block size); parquet reads this many rows per batch
CHUNK_BYTES = 1 << 22
PARQUET_BATCH_ROWS = 1 << 20
LONG = ("model", "item", "score")
#: cells of the matrix turned into long rows at a time by :func:`write_long` (the memory of a write)
WRITE_BLOCK_CELLS = 1 << 22


def is_long_header(names: Iterable[str], long_columns: Iterable[str] = LONG) -> bool:
    """The rule of the readers: the three long columns, and at most one column more."""
    real = [n for n in names if not str(n).startswith("\0")]
    return set(long_columns).issubset(real) and len(real) <= len(tuple(long_columns)) + 1


class _Names:
    """Names -> codes in the order of their first row."""

    def __init__(self, what: str):
        self.what = what
        self.code: dict[str, int] = {}
        self.names: list[str] = []

    def encode(self, col, where) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks()
        given = pa.types.is_dictionary(col.type)  # a parquet category: its dictionary is in any order
        d = col if given else pc.dictionary_encode(col)  # dictionary in the order of first appearance
        indices = d.indices
        if indices.null_count:
            raise MatrixFormatError(f"{where(_first(pc.is_null(indices)))}: empty {self.what} name")
        values = d.dictionary.to_pylist()
        positions = np.asarray(indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        import pandas as pd

        order = pd.unique(positions) if given else range(len(values))
        lookup = np.zeros(len(values), dtype=np.int64)
        for k in order:
            v = values[k]
            name = "" if v is None else str(v)
            if not name.strip():
                rows = np.flatnonzero(positions == k)
                raise MatrixFormatError(f"{where(int(rows[0]))}: empty {self.what} name")
            code = self.code.get(name)
            if code is None:
                code = self.code[name] = len(self.names)
                self.names.append(name)
            lookup[k] = code
        codes = lookup[positions]
        return codes.astype(np.uint16 if len(self.names) < (1 << 16) else np.int32)


def _first(mask) -> int:
    return int(np.flatnonzero(np.asarray(mask.to_numpy(zero_copy_only=False)))[0])


def _compact(scores: np.ndarray) -> np.ndarray:
    """``scores`` as float32 when that loses nothing (0/1, halves, NaN), else as they are."""
    small = scores.astype(np.float32)
    same = (small == scores) | np.isnan(scores)
    return small if same.all() else scores


class _Chunks:
    """The codes and scores of every chunk, then the matrix."""

    def __init__(self, source: str, where):
        self.source = source
        self.where = where  # row number in the file -> "FILE: line N" / "FILE: row N"
        self.models = _Names("model")
        self.items = _Names("item")
        self.chunks: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]] = []
        self.rows = 0

    def add(self, model, item, scores: np.ndarray) -> None:
        first = self.rows
        at = lambda k: self.where(first + k)  # noqa: E731 - a row of this chunk -> where in the file
        m = self.models.encode(model, at)
        i = self.items.encode(item, at)
        self.chunks.append((m, i, _compact(np.asarray(scores, dtype=np.float64)), first))
        self.rows += len(m)

    def matrix(self) -> tuple[np.ndarray, list[str], list[str]]:
        n, m = len(self.models.names), len(self.items.names)
        out = np.full((n, m), np.nan)
        flat_out = out.reshape(-1)
        seen = np.zeros(n * m, dtype=bool)
        while self.chunks:
            mc, ic, s, first = self.chunks.pop(0)  # freed once scattered
            flat = mc.astype(np.int64) * m + ic
            again = seen[flat]
            order = np.arange(len(flat), dtype=np.float64)
            flat_out[flat] = order  # a pair given twice in this chunk: only its last row's number stays
            clash = flat_out[flat] != order
            if again.any() or clash.any():
                self._duplicate(flat, again, clash, first)
            flat_out[flat] = s
            seen[flat] = True
            del flat, again, order, clash
        return out, self.models.names, self.items.names

    def _duplicate(self, flat: np.ndarray, again: np.ndarray, clash: np.ndarray, first: int) -> None:
        """The error for the first row of this chunk whose pair came before (in it or earlier)."""
        m = len(self.items.names)
        k = int(np.flatnonzero(again)[0]) if again.any() else len(flat)
        if clash.any():
            _, firsts = np.unique(flat, return_index=True)
            repeated = np.ones(len(flat), dtype=bool)
            repeated[firsts] = False
            k = min(k, int(np.flatnonzero(repeated)[0]))
        model, item = self.models.names[flat[k] // m], self.items.names[flat[k] % m]
        raise MatrixFormatError(f"{self.where(first + k)}: the pair ({model!r}, {item!r}) is given twice; a long "
                                "table has one row per model and item")


# ----------------------------------------------------------------------------- CSV
def _csv_batches(path: Path, sep: str, names: list[str], keep: list[str], typed: bool) -> Iterator:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    # typed: scores parsed as floats (fast); else as text, converted chunk by chunk to name a bad line
    types = {"model": pa.string(), "item": pa.string(), "score": pa.float64() if typed else pa.string()}
    header_bytes = len(sep.join(names).encode()) + 64
    reader = pacsv.open_csv(
        path,
        read_options=pacsv.ReadOptions(column_names=names, skip_rows=1,
                                       block_size=max(CHUNK_BYTES, 2 * header_bytes)),
        parse_options=pacsv.ParseOptions(delimiter=sep, newlines_in_values=True),
        convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=False, include_columns=keep,
                                             timestamp_parsers=[]),
    )
    with reader:
        for batch in reader:
            yield batch


def _read_csv_chunks(path: Path, sep: str, wanted: set[str] | None) -> _Chunks:
    import pyarrow as pa
    import pyarrow.compute as pc

    header = read_header(path, sep)
    names = _names(path, header)
    keep = list(LONG)
    extra = None

    def attempt(typed: bool) -> _Chunks:
        chunks = _Chunks(str(path), lambda row: f"{path}: line {row + 2}")
        for batch in _csv_batches(path, sep, names + ([extra] if extra else []), keep + ([extra] if extra else []),
                                  typed):
            if extra is not None:
                col = batch.column(extra)
                if col.null_count != len(col) and pc.any(pc.not_equal(col.cast(pa.string()), "")).as_py():
                    raise CsvFormatError(
                        f"{path}: the data rows have one field more than the header names, and the extra last "
                        "field holds values; refusing to guess which column is which")
            model, item, score = batch.column("model"), batch.column("item"), batch.column("score")
            if wanted is not None:
                mask = pc.is_in(item, value_set=pa.array(sorted(wanted), pa.string()))
                model, item, score = model.filter(mask), item.filter(mask), score.filter(mask)
            first = chunks.rows
            values = (np.asarray(score.to_numpy(zero_copy_only=False), dtype=np.float64) if typed
                      else _float_column(path, "score", score, first_line=first + 2))
            chunks.add(model, item, values)
        return chunks

    for _ in range(3):
        try:
            try:
                return attempt(typed=True)
            except pa.ArrowInvalid as exc:
                if _MISMATCH.search(str(exc)) or "conversion error" not in str(exc).lower():
                    raise
                return attempt(typed=False)  # a score that is not a float (true/false, a typo): name its line
        except pa.ArrowInvalid as exc:
            m = _MISMATCH.search(str(exc))
            if not m:
                raise CsvFormatError(f"{path}: cannot read the rows: {one_line(exc, 200)}") from None
            expected, got = int(m.group(1)), int(m.group(2))
            if got == expected + 1 and extra is None:  # a trailing comma on every data row?
                extra = f"\0trailing-{len(names)}"
                continue
            if got == expected - 1 and names[-1].startswith("\0unnamed-") and extra is None:
                names = names[:-1]  # a trailing comma on the header only
                continue
            bad = _first_bad_line(path, sep, expected - (1 if extra else 0))
            where = f"line {bad[0]} has {bad[1]} fields" if bad else f"a row has {got} fields"
            raise CsvFormatError(f"{path}: {where} but the header names {len(header)} columns; refusing to guess "
                                 "which column is which") from None
    raise CsvFormatError(f"{path}: cannot read the rows")  # pragma: no cover


# ----------------------------------------------------------------------------- parquet
def _read_parquet_chunks(path: Path, wanted: set[str] | None) -> _Chunks:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    chunks = _Chunks(str(path), lambda row: f"{path}: row {row + 1}")
    pf = pq.ParquetFile(path)
    for batch in pf.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=list(LONG)):
        model, item, score = batch.column("model"), batch.column("item"), batch.column("score")
        if wanted is not None:
            as_text = item.dictionary_decode() if pa.types.is_dictionary(item.type) else item
            mask = pc.is_in(pc.cast(as_text, pa.string()), value_set=pa.array(sorted(wanted), pa.string()))
            model, item, score = model.filter(mask), item.filter(mask), score.filter(mask)
        chunks.add(model, item, _parquet_scores(path, score, chunks.rows))
    return chunks


def _parquet_scores(path: Path, col, first: int) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.compute as pc

    typ = col.type
    if pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_boolean(typ) or pa.types.is_null(typ):
        return np.asarray(pc.cast(col, pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)
    import pandas as pd

    values = pd.Series(col.to_pylist(), dtype=object)
    conv = pd.to_numeric(values, errors="coerce")
    bad = conv.isna() & values.notna() & (values.astype(str).str.strip() != "")
    if bad.any():
        k = int(np.flatnonzero(bad.to_numpy())[0])
        raise MatrixFormatError(f"{path}: row {first + k + 1}: non-numeric score {values[k]!r} in column 'score'")
    return conv.to_numpy(dtype=np.float64, na_value=np.nan)


# ----------------------------------------------------------------------------- entry point
def read_long(path: str | os.PathLike, sep: str = ",", columns: Iterable[str] | None = None):
    """``(scores, models, items)`` of a long table (CSV or parquet, by its name), read in chunks.

    ``columns``: keep only the rows of these items (``estimate`` reads only the anchors).
    """
    path = Path(path)
    wanted = set(map(str, columns)) if columns is not None else None
    if path.name.lower().endswith((".parquet", ".pq")):
        chunks = _read_parquet_chunks(path, wanted)
    else:
        chunks = _read_csv_chunks(path, sep, wanted)
    return chunks.matrix()


def write_long(path: str | os.PathLike, models: Sequence[str], items: Sequence[str],
               rows: Callable[[slice], np.ndarray], kind: str, block_cells: int = WRITE_BLOCK_CELLS) -> None:
    """Write a matrix as a long table (``model, item, score``, one row per evaluated pair, model by
    model and item by item in the matrix's order; a NaN cell is no row) to ``path``, a parquet
    (``kind`` ``"parquet"``) or CSV file. ``rows(slice)`` gives the float64 scores of some models.

    The readers order models and items by their first row, so two kinds of empty rows (an empty
    score: not evaluated) keep the matrix's order: the first model has a row for every item, and
    a model with no score at all has one (for the first item).

    Written a block of about ``block_cells`` cells at a time, so memory is one block (its rows as
    arrays) and the item names, whatever the width: the layout for matrices too wide for a wide
    parquet table (parquet keeps metadata per column), which :func:`read_long` reads back in
    bounded memory.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    schema = pa.schema([("model", pa.string()), ("item", pa.string()), ("score", pa.float64())])
    item_names = pa.array([str(i) for i in items], type=pa.string())
    names = np.asarray([str(m) for m in models], dtype=object)
    step = max(1, block_cells // max(len(item_names), 1))
    writer: Any = pq.ParquetWriter(str(path), schema) if kind == "parquet" else pacsv.CSVWriter(str(path), schema)
    try:
        for start in range(0, len(names), step):
            Y = rows(slice(start, min(start + step, len(names))))
            keep = ~np.isnan(Y)
            if start == 0 and len(Y):
                keep[0] = True  # every item in the first model's rows: the items' order
            if Y.shape[1]:
                keep[~keep.any(axis=1), 0] = True  # a model without any score still has a row
            r, c = np.nonzero(keep)  # row-major: model by model, items in order
            del keep
            writer.write_table(pa.Table.from_arrays(
                [pa.array(names[start + r], type=pa.string()), item_names.take(pa.array(c)), pa.array(Y[r, c])],
                schema=schema))
            del Y, r, c
    finally:
        writer.close()
