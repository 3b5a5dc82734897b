"""Compact storage of a score matrix, and wide parquet tables streamed into and out of it.

A 7,000 x 28,659 matrix (the Open LLM Leaderboard v1) is 1.6 GB as float64 but 0.2 GB as bytes.
:class:`CompactScores` keeps

* 0/1 scores as ``uint8`` (one byte per cell) and soft scores (AlpacaEval preferences, TruthfulQA
  mc2) exactly, as ``float64``; 0 where a model was not evaluated;
* a separate boolean mask of the evaluated cells (``None`` when every cell is evaluated);
* optionally a row index: a *view* on some of the models (the cross-fitting folds) that copies
  nothing.

Everything that needs the scores as numbers takes them in blocks of rows or columns
(:meth:`CompactScores.block`, :meth:`CompactScores.dense`), so that no models x items float
array is ever made for a big matrix. Results are those of the float64 matrix with NaN: the
values are the same numbers, and the blocks' reductions keep numpy's order (see
:meth:`CompactScores.col_sums` and :func:`row_chunks`).

:func:`read_wide_parquet` fills a :class:`CompactScores` from a wide parquet table a few hundred
columns at a time (pandas would hold the table, a float64 frame and a copy of it at once), and
:func:`write_wide_parquet` writes one in row groups.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Sequence

import numpy as np

#: elements of one block of a models x items temporary (float64: 32 MiB)
CHUNK_ELEMENTS = 1 << 22
#: blocks of rows start at multiples of this. BLAS kernels treat the rows (and columns) of a
#: product in groups (of 4, 8, 12, 16... by kernel) with other code at the edges, so a product
#: over a block that starts elsewhere can differ in the last bits; 192 is a multiple of them
#: all (checked on OpenBLAS's Haswell kernels, float32 and float64, the shapes used here). Kernels
#: that send small products to other code by size (OpenBLAS's SkylakeX small-matrix kernels) can
#: still move the last bits when the blocks change; a given matrix always gets the same blocks, so
#: a fit stays deterministic on a machine (tests/read/test_compact.py checks both)
ROW_ALIGN = 192

__all__ = ["CompactScores", "row_chunks", "read_wide_parquet", "write_wide_parquet", "CHUNK_ELEMENTS"]


def row_chunks(n: int, width: int, budget: int | None = None) -> list[slice]:
    """Slices of ``range(n)`` holding about ``budget // width`` rows each.

    Block starts are multiples of :data:`ROW_ALIGN` and no block has a single row unless
    ``n == 1``: a product over one block of rows then gives, row by row, the same bits as the
    product over all rows (numpy sends one-row products to another BLAS routine, and BLAS
    kernels treat rows in groups). Used for every models x items computation (and for blocks
    of items, with ``n`` the number of items).
    """
    budget = CHUNK_ELEMENTS if budget is None else budget
    rows = max(ROW_ALIGN, (max(budget, 1) // max(width, 1)) // ROW_ALIGN * ROW_ALIGN)
    out = [slice(s, min(s + rows, n)) for s in range(0, n, rows)]
    if len(out) > 1 and out[-1].stop - out[-1].start == 1:
        out[-2:] = [slice(out[-2].start, n)]
    return out or [slice(0, 0)]


class CompactScores:
    """Scores of an (n models, N items) matrix in [0, 1], stored compactly.

    Parameters
    ----------
    values : ndarray (n0, N)
        ``uint8`` 0/1 scores, or ``float64`` scores; 0 where not evaluated.
    mask : ndarray (n0, N) of bool, optional
        True where evaluated; None when every cell is.
    rows : ndarray of int, optional
        The rows of ``values`` this object stands for (a view, nothing copied); default all.
    """

    __slots__ = ("values", "mask", "rows", "_n_obs")

    def __init__(self, values: np.ndarray, mask: np.ndarray | None = None, rows: np.ndarray | None = None):
        if values.ndim != 2 or values.dtype not in (np.uint8, np.float64):
            raise ValueError(f"values must be a 2-D uint8 or float64 array, got {values.dtype} {values.shape}")
        if mask is not None and (mask.shape != values.shape or mask.dtype != np.bool_):
            raise ValueError("mask must be a bool array of the values' shape")
        self.values = values
        self.mask = mask
        self.rows = None if rows is None else np.asarray(rows, dtype=np.int64)
        self._n_obs: int | None = None

    # ------------------------------------------------------------ building
    @classmethod
    def from_dense(cls, Y: np.ndarray) -> "CompactScores":
        """From a float (n, N) matrix with NaN = not evaluated (values assumed in [0, 1]).

        0/1 matrices become ``uint8``; any other value keeps the matrix in float64.
        """
        Y = np.asarray(Y)
        if Y.ndim != 2:
            raise ValueError(f"scores must be 2-D, got shape {Y.shape}")
        n, N = Y.shape
        chunks = row_chunks(n, N)
        binary, full = True, True
        for sl in chunks:
            blk = Y[sl]
            nan = np.isnan(blk)
            full = full and not nan.any()
            binary = binary and bool(((blk == 0) | (blk == 1) | nan).all())
        values = np.empty((n, N), dtype=np.uint8 if binary else np.float64)
        mask = None if full else np.empty((n, N), dtype=bool)
        for sl in chunks:
            blk = Y[sl]
            if mask is None:
                values[sl] = blk
            else:
                obs = ~np.isnan(blk)
                mask[sl] = obs
                values[sl] = np.where(obs, blk, 0)
        return cls(values, mask)

    # ------------------------------------------------------------ structure
    @property
    def shape(self) -> tuple[int, int]:
        n = self.values.shape[0] if self.rows is None else len(self.rows)
        return n, self.values.shape[1]

    @property
    def binary(self) -> bool:
        """True when every score is 0 or 1 (stored as bytes)."""
        return self.values.dtype == np.uint8

    @property
    def nbytes(self) -> int:
        """Bytes of the storage this object reads (shared by its views)."""
        return self.values.nbytes + (0 if self.mask is None else self.mask.nbytes)

    @property
    def n_obs(self) -> int:
        """Number of evaluated cells."""
        if self._n_obs is None:
            n, N = self.shape
            mask = self.mask
            self._n_obs = n * N if mask is None else sum(
                int(np.count_nonzero(self._get(mask, sl))) for sl in row_chunks(n, N))
        return self._n_obs

    def _index(self, sel) -> slice | np.ndarray:
        """Rows of the storage for ``sel`` (a slice or index array into this object's rows)."""
        if self.rows is None:
            return sel
        return self.rows[sel]

    def _get(self, arr: np.ndarray, sel, cols=None) -> np.ndarray:
        idx = self._index(sel)
        if cols is None:
            return arr[idx]
        if isinstance(idx, slice) or isinstance(cols, slice):
            return arr[idx, cols]
        return arr[np.ix_(idx, cols)]

    def _values_rows(self, sel, cols=None) -> np.ndarray:
        return self._get(self.values, sel, cols)

    def _mask_rows(self, sel, cols=None) -> np.ndarray | None:
        return None if self.mask is None else self._get(self.mask, sel, cols)

    def _shape_of(self, sel, cols=None) -> tuple[int, int]:
        n, N = self.shape
        rows = len(range(*sel.indices(n))) if isinstance(sel, slice) else len(sel)
        width = N if cols is None else (len(range(*cols.indices(N))) if isinstance(cols, slice) else len(cols))
        return rows, width

    def view(self, rows: Sequence[int] | np.ndarray) -> "CompactScores":
        """These scores restricted to ``rows`` (positions in this object), without a copy."""
        rows = np.asarray(rows, dtype=np.int64)
        if self.rows is None and len(rows) == self.values.shape[0] and (rows == np.arange(len(rows))).all():
            return CompactScores(self.values, self.mask)  # all rows in order: blocks are slices
        return CompactScores(self.values, self.mask, rows if self.rows is None else self.rows[rows])

    def take(self, rows: Sequence[int] | np.ndarray | None = None,
             cols: Sequence[int] | np.ndarray | None = None) -> "CompactScores":
        """A compact copy of ``rows`` x ``cols`` (default all), in that order.

        Columns alone give a column-major copy, as numpy lays out ``Y[:, cols]``: sums over
        its models then come out as numpy's (:meth:`col_sums`), and so do its products."""
        n, N = self.shape
        order: Literal["C", "F"] = "F" if rows is None and cols is not None else "C"
        rows = np.arange(n) if rows is None else np.asarray(rows, dtype=np.int64)
        cols = None if cols is None else np.asarray(cols, dtype=np.int64)
        width = N if cols is None else len(cols)
        values = np.empty((len(rows), width), dtype=self.values.dtype, order=order)
        mask = None if self.mask is None else np.empty((len(rows), width), dtype=bool, order=order)
        for sl in row_chunks(len(rows), N):
            values[sl] = self._values_rows(rows[sl], cols)
            if mask is not None:
                mask[sl] = self._mask_rows(rows[sl], cols)
        if mask is not None and mask.all():
            mask = None
        return CompactScores(values, mask)

    # -------------------------------------------------------------- numbers
    def block(self, sel, cols=None, dtype=np.float32) -> tuple[np.ndarray, np.ndarray | None]:
        """Rows ``sel`` (a slice or indices into this object's rows) and columns ``cols``
        (default all) as ``dtype`` values with 0 where not evaluated, and the bool mask (None
        when the whole matrix is evaluated)."""
        return self._values_rows(sel, cols).astype(dtype), self._mask_rows(sel, cols)

    def dense(self, rows=None, cols=None) -> np.ndarray:
        """Float64 scores of ``rows`` x ``cols`` (default all; slices or index arrays) with
        NaN where not evaluated: the matrix this object stores (for small selections).

        With an index array of columns the result is column-major, as numpy lays out
        ``Y[rows][:, cols]``: BLAS then takes the same path, and sums come out the same.
        """
        n, N = self.shape
        sel = slice(0, n) if rows is None else rows
        if cols is None or isinstance(cols, slice):
            out = self._values_rows(sel, cols).astype(np.float64)
            mask = self._mask_rows(sel, cols)
            if mask is not None:
                out[~mask] = np.nan
            return out
        idx = np.arange(n)[sel] if isinstance(sel, slice) else np.asarray(sel, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        out = np.empty((len(idx), len(cols)), order="F")
        for sl in row_chunks(len(idx), N):
            blk = self._values_rows(idx[sl], cols).astype(np.float64)
            mask = self._mask_rows(idx[sl], cols)
            if mask is not None:
                blk[~mask] = np.nan
            out[sl] = blk
        return out

    def observed(self, rows=None, cols=None) -> np.ndarray:
        """Bool mask of ``rows`` x ``cols`` (default all)."""
        sel = slice(0, self.shape[0]) if rows is None else rows
        mask = self._mask_rows(sel, cols)
        return np.ones(self._shape_of(sel, cols), dtype=bool) if mask is None else mask

    def col_sums(self, via=np.float64) -> np.ndarray:
        """Float64 column sums of the scores (NaN as 0), each score first rounded to ``via``.

        The same bits as ``Y.astype(via).sum(axis=0, dtype=np.float64)`` on the matrix: numpy
        adds the rows of a C-ordered matrix one after the other, and so do the blocks here (a
        column-major copy, :meth:`take` of columns, is summed as numpy sums one).
        """
        n, N = self.shape
        if self._column_major():  # numpy's own sum (pairwise down each column), as on Y[:, cols]
            return self.values.astype(via).sum(axis=0, dtype=np.float64)
        acc = np.zeros(N)
        for sl in row_chunks(n, N):
            blk = self._values_rows(sl)
            if self.binary:  # integers: exact in any order
                acc += blk.sum(axis=0, dtype=np.float64)
            else:
                rows = blk.astype(via).astype(np.float64, copy=False)
                acc = np.add.reduce(np.concatenate([acc[None], rows]), axis=0)
        return acc

    def _column_major(self) -> bool:
        return self.rows is None and self.values.flags.f_contiguous and not self.values.flags.c_contiguous

    def col_counts(self) -> np.ndarray:
        """Evaluated models per item."""
        n, N = self.shape
        mask = self.mask
        if mask is None:
            return np.full(N, n, dtype=np.int64)
        cnt = np.zeros(N, dtype=np.int64)
        for sl in row_chunks(n, N):
            cnt += self._get(mask, sl).sum(axis=0)
        return cnt

    def row_counts(self) -> np.ndarray:
        """Evaluated items per model."""
        n, N = self.shape
        mask = self.mask
        if mask is None:
            return np.full(n, N, dtype=np.int64)
        return np.concatenate([self._get(mask, sl).sum(axis=1) for sl in row_chunks(n, N)])

    def observed_values(self) -> np.ndarray:
        """The evaluated scores, float64, in row-major order (``Y[~np.isnan(Y)]``)."""
        n, N = self.shape
        parts = []
        for sl in row_chunks(n, N):
            v = self._values_rows(sl).astype(np.float64)
            m = self._mask_rows(sl)
            parts.append(v.ravel() if m is None else v[m])
        return np.concatenate(parts) if parts else np.zeros(0)

    def binarized(self, threshold: float) -> "CompactScores":
        """0/1 scores ``score >= threshold`` where evaluated (the mask is kept)."""
        n, N = self.shape
        values = np.empty((n, N), dtype=np.uint8)
        mask = None if self.mask is None else np.empty((n, N), dtype=bool)
        for sl in row_chunks(n, N):
            hit = self._values_rows(sl) >= threshold
            if mask is not None:
                mask[sl] = self._mask_rows(sl)
                hit &= mask[sl]
            values[sl] = hit
        return CompactScores(values, mask)


# ============================================================================ parquet
_BATCH_COLUMNS = 512


def read_wide_parquet(path: Path):
    """``(models, items, CompactScores)`` of a wide parquet score table, read a few hundred
    columns at a time; None when the table is anything else (long layout, text or integer
    score columns, values outside [0, 1], a MultiIndex, names that are not strings...), which
    the pandas reader then handles with its messages.

    The model names come, as ``pandas.read_parquet`` and :meth:`ResponseMatrix.from_frame`
    take them, from a ``model`` column, else from the table's (one, named or not) index.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    schema = pf.schema_arrow
    names = list(schema.names)
    if len(set(names)) != len(names):
        return None
    meta = schema.pandas_metadata or {}
    index_cols = meta.get("index_columns", [])
    stored_index = [c for c in index_cols if isinstance(c, str)]
    if len(index_cols) > 1:
        return None
    columns = [c for c in names if c not in stored_index]
    if {"model", "item", "score"}.issubset(columns) and len(columns) <= 4:
        return None  # the long layout
    if "model" in columns:
        model_col = "model"
    elif stored_index:
        model_col = stored_index[0]
    else:
        return None  # no model names: the pandas reader says so
    items = [c for c in columns if c != model_col]
    if not items or not all(pa.types.is_floating(schema.field(c).type) for c in items):
        return None
    mtype = schema.field(model_col).type
    if not (pa.types.is_string(mtype) or pa.types.is_large_string(mtype)):
        return None
    models = pf.read(columns=[model_col]).column(0).to_pylist()
    n, N = len(models), len(items)
    values = np.empty((n, N), dtype=np.uint8)
    mask = None
    for start in range(0, N, _BATCH_COLUMNS):
        group = items[start:start + _BATCH_COLUMNS]
        table = pf.read(columns=group, use_threads=False)
        # (G, n): one contiguous row per column, then written into the (n, N) store 64 columns
        # at a time (a transposed copy that stays in cache)
        block = np.empty((len(group), n), dtype=np.float64)
        for g in range(len(group)):
            block[g] = table.column(g).to_numpy()
        del table
        nan = np.isnan(block)
        finite = block[~nan]
        if finite.size and (np.isinf(finite).any() or finite.min() < 0.0 or finite.max() > 1.0):
            return None  # the pandas reader names the bad value
        if values.dtype == np.uint8 and not ((block == 0) | (block == 1) | nan).all():
            values = values.astype(np.float64)  # soft scores: kept exactly
        if mask is None and nan.any():
            mask = np.ones((n, N), dtype=bool)
        for g0 in range(0, len(group), 64):
            part = block[g0:g0 + 64].T
            cols = slice(start + g0, start + g0 + part.shape[1])
            if mask is not None:
                obs = ~np.isnan(part)
                mask[:, cols] = obs
                values[:, cols] = np.where(obs, part, 0.0)
            else:
                values[:, cols] = part
    return models, items, CompactScores(values, mask)


def write_wide_parquet(path: Path, models: Sequence[str], items: Sequence[str], scores: CompactScores,
                       row_group_rows: int = 256) -> None:
    """Write the wide table (a ``model`` column, one float64 column per item, NaN as null) in
    row groups of ``row_group_rows`` models: memory stays at one row group."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    fields = [pa.field("model", pa.string())] + [pa.field(str(i), pa.float64()) for i in items]
    schema = pa.schema(fields)
    n, _ = scores.shape
    with pq.ParquetWriter(path, schema) as writer:
        for s in range(0, n, row_group_rows):
            sl = slice(s, min(s + row_group_rows, n))
            Y = scores.dense(sl)
            arrays = [pa.array(list(models[sl]), type=pa.string())]
            arrays += [pa.array(Y[:, j], from_pandas=True) for j in range(Y.shape[1])]
            writer.write_table(pa.Table.from_arrays(arrays, schema=schema))
