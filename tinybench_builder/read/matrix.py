"""The response matrix: models x items scores in [0, 1], NaN = not evaluated.

Every reader in :mod:`tinybench_builder.read.sources` returns a :class:`ResponseMatrix`; ``fit`` and
``estimate`` read one from a table on disk. Two table layouts are accepted:

* **wide**: one row per model (the model name as the index, or in a first column
  ``model``), one column per item id, values in [0, 1], empty/NaN = not evaluated;
* **long**: columns ``model, item, score``, one row per evaluated (model, item) pair.

Files may be parquet (``.parquet``/``.pq``) or CSV (``.csv``, ``.csv.gz``, ``.tsv``).
Item ids are strings. By convention ``<subscenario>.<index>`` names an item of a
benchmark with subscenarios (``abstract_algebra.12``); see :func:`subscenario_of`.

Model names are kept exactly as written; two that differ only by surrounding whitespace
(``org/m00`` and ``org/m00 ``) are refused (:func:`check_model_names`, the one rule for every
reader, ``ingest``'s merge and the API): they would be two rows of one model.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from tinybench_builder.errors import MatrixFormatError, OutOfMemory, one_line
from tinybench_builder.read.compact import CompactScores, read_wide_parquet, row_chunks, write_wide_parquet

LONG_COLUMNS = ("model", "item", "score")
#: a parquet table of more cells than this is written in row groups of this many cells
BIG_TABLE_CELLS = 1 << 25
#: the widest matrix written as a wide parquet table (CSV has no such limit); 100,000 columns took
#: 40 s and 0.5 GB to write, 1.1 GB to read back; 1,000,000 did not finish within 15 minutes
MAX_PARQUET_COLUMNS = 200_000
#: columns of :attr:`ResponseMatrix.item_info` that every reader fills when it can
ITEM_INFO_COLUMNS = ("scenario", "subscenario")


class ResponseMatrix:
    """Per-example scores of many models.

    Parameters
    ----------
    scores : ndarray of shape (n_models, n_items), or CompactScores
        Float scores in [0, 1]; NaN means "not evaluated". A
        :class:`~tinybench_builder.read.compact.CompactScores` (0/1 scores as bytes, soft scores exactly,
        a separate mask) is kept as it is: the float64 matrix (:attr:`scores`) is then made only
        if something asks for it, and the fit never does (:attr:`compact`).
    models : sequence of str, length n_models
        Model names, unique.
    items : sequence of str, length n_items
        Item ids, unique strings.
    item_info : DataFrame, optional
        Indexed by item id (same order as ``items``). Optional columns ``scenario``,
        ``subscenario`` and any content columns (``prompt``, ``question``, ...).
    """

    def __init__(self, scores, models, items, item_info: pd.DataFrame | None = None,
                 notes: list[str] | None = None) -> None:
        self.item_info = item_info
        self.notes = list(notes) if notes is not None else []  # reader warnings, e.g. partial runs
        self._dense: np.ndarray | None = None
        self._compact: CompactScores | None = None
        if isinstance(scores, CompactScores):
            self._compact = scores
            shape = scores.shape
        else:
            if np.iscomplexobj(scores):
                raise MatrixFormatError("scores are complex numbers; scores are real numbers in [0, 1]")
            self._dense = np.asarray(scores, dtype=np.float64)
            shape = self._dense.shape
        _check_names(models, "scores", "model name", "row")
        _check_names(items, "scores", "item id", "column")
        self.models = [str(m) for m in models]
        self.items = [str(i) for i in items]
        if len(shape) != 2:
            raise MatrixFormatError(f"scores must be 2-D (models x items), got shape {shape}")
        n, m = shape
        if len(self.models) != n:
            raise MatrixFormatError(f"{len(self.models)} model names for {n} score rows")
        if len(self.items) != m:
            raise MatrixFormatError(f"{len(self.items)} item ids for {m} score columns")
        _check_unique(self.models, "model name")
        check_model_names(self.models)
        _check_unique(self.items, "item id")
        if self._dense is not None:
            _check_range(self._dense)
        if self.item_info is not None:
            info = self.item_info.copy()
            info.index = info.index.astype(str)
            missing = [i for i in self.items if i not in info.index]
            if missing:
                raise MatrixFormatError(f"item_info lacks {len(missing)} item(s), e.g. {missing[0]!r}")
            self.item_info = info.loc[self.items]

    def __repr__(self) -> str:
        kind = "dense" if self._dense is not None else "compact"
        return f"ResponseMatrix({self.shape[0]} models x {self.shape[1]} items, {kind})"

    # ------------------------------------------------------------ storage
    @property
    def scores(self) -> np.ndarray:
        """The (n_models, n_items) float64 scores, NaN = not evaluated.

        Made from the compact storage on first use when the matrix was built from one (8
        bytes per cell: for a big matrix use :attr:`compact`)."""
        if self._dense is None:
            self._dense = self._store().dense()
        return self._dense

    @scores.setter
    def scores(self, value: np.ndarray) -> None:
        # as an attribute of the dataclass this was: no checks (a reader that checked every
        # block on its way in sets the finished matrix this way)
        self._dense = np.asarray(value, dtype=np.float64)
        self._compact = None

    @property
    def storage(self) -> "np.ndarray | CompactScores":
        """The scores as this matrix holds them: the float64 array, or CompactScores. A new
        matrix over the same scores (other item ids or info) takes this, nothing is converted."""
        return self._dense if self._dense is not None else self._store()

    def score_rows(self, rows) -> np.ndarray:
        """Float64 scores (NaN = not evaluated) of ``rows`` (a slice or indices), without making
        the whole float matrix when the storage is compact."""
        return self._dense[rows] if self._dense is not None else self._store().dense(rows)

    @property
    def compact(self) -> CompactScores:
        """The scores as :class:`~tinybench_builder.read.compact.CompactScores` (made once from the float64
        matrix when the matrix was built from one)."""
        if self._compact is None:
            self._compact = CompactScores.from_dense(self.scores)
        return self._compact

    def _store(self) -> CompactScores:
        """The compact storage of a matrix built from one (never None there)."""
        if self._compact is None:
            raise RuntimeError("ResponseMatrix holds neither dense nor compact scores")
        return self._compact

    # ------------------------------------------------------------------ views
    @property
    def shape(self) -> tuple[int, int]:
        """``(n_models, n_items)``."""
        return self._dense.shape if self._dense is not None else self._store().shape

    @property
    def observed(self) -> np.ndarray:
        """Boolean mask of evaluated entries, shape (n_models, n_items)."""
        return ~np.isnan(self._dense) if self._dense is not None else self._store().observed()

    def subscenarios(self) -> np.ndarray:
        """Subscenario label of every item (from ``item_info`` or the item id)."""
        if self.item_info is not None and "subscenario" in self.item_info:
            col = self.item_info["subscenario"]
            if col.notna().all():
                return col.astype(str).to_numpy()
        return np.array([subscenario_of(i) for i in self.items], dtype=object)

    def scenarios(self) -> np.ndarray:
        """Scenario label of every item (``item_info['scenario']``, else one scenario)."""
        if self.item_info is not None and "scenario" in self.item_info:
            col = self.item_info["scenario"]
            if col.notna().all():
                return col.astype(str).to_numpy()
        return np.array(["all"] * len(self.items), dtype=object)

    def select_models(self, rows: Sequence[int] | np.ndarray) -> "ResponseMatrix":
        """The matrix of the models at positions ``rows`` (in that order), with every item."""
        rows = np.asarray(rows)
        scores = self._dense[rows] if self._dense is not None else self._store().take(rows=rows)
        return ResponseMatrix(scores, [self.models[i] for i in rows], list(self.items), self.item_info)

    def canonical_order(self, scenario_order: Sequence[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Row and column permutations that put the matrix in its canonical order.

        Models are sorted by name; items by scenario (``scenario_order``, default: sorted
        names), then by :func:`natural_key` of their id. Everything fitted on the
        canonical matrix is therefore the same whatever the file layout (wide or long,
        CSV or parquet) or the order of its rows and columns.

        Returns
        -------
        rows, cols : ndarray of int
            ``scores[rows][:, cols]`` is the canonical matrix.
        """
        scen = self.scenarios().astype(str)
        names = sorted(set(scen)) if scenario_order is None else [str(s) for s in scenario_order]
        missing = sorted(set(scen) - set(names))
        if missing:
            raise ValueError(f"scenario_order lacks scenario(s) {missing}")
        rank = {s: i for i, s in enumerate(names)}
        rows = np.array(sorted(range(len(self.models)), key=lambda i: self.models[i]), dtype=np.int64)
        cols = np.array(sorted(range(len(self.items)), key=lambda j: (rank[scen[j]], natural_key(self.items[j]))),
                        dtype=np.int64)
        return rows, cols

    def select_items(self, cols: Sequence[int] | np.ndarray) -> "ResponseMatrix":
        """The matrix of the items at positions ``cols`` (in that order, with their ``item_info`` rows), every model."""
        cols = np.asarray(cols)
        info = None if self.item_info is None else self.item_info.iloc[cols]
        scores = self._dense[:, cols] if self._dense is not None else self._store().take(cols=cols)
        return ResponseMatrix(scores, list(self.models), [self.items[j] for j in cols], info)

    def summary(self) -> dict:
        """Counts a user wants after reading: models, items, missing share, partial models."""
        n, N = self.shape
        per_model = (~np.isnan(self._dense)).sum(axis=1) if self._dense is not None else self._store().row_counts()
        partial = [m for m, c in zip(self.models, per_model) if c < N]
        return {
            "models": n,
            "items": N,
            "missing_share": float(1.0 - per_model.sum() / (n * N)) if n * N else 0.0,
            "models_with_partial_coverage": len(partial),
            "partial_models": partial,
        }

    # --------------------------------------------------------------- tables
    def to_frame(self) -> pd.DataFrame:
        """Wide frame: index ``model``, one column per item id."""
        df = pd.DataFrame(self.scores, index=pd.Index(self.models, name="model"), columns=list(self.items))
        return df

    @classmethod
    def from_frame(cls, df: pd.DataFrame, source: str = "table", allow_no_items: bool = False) -> "ResponseMatrix":
        """Build from a wide or long frame (layout detected from the columns).

        ``allow_no_items``: a wide frame without item columns gives a matrix of no items
        (a table read for columns it does not have) instead of an error.
        """
        cols = [str(c) for c in df.columns]
        if set(LONG_COLUMNS).issubset(cols) and len(cols) <= 4:
            return cls._from_long(df, source)
        return cls._from_wide(df, source, allow_no_items)

    @classmethod
    def _from_wide(cls, df: pd.DataFrame, source: str, allow_no_items: bool = False) -> "ResponseMatrix":
        df = df.copy()
        df.columns = [str(c) for c in df.columns]
        if "model" in df.columns:
            df = df.set_index("model")
        elif df.index.name != "model" and isinstance(df.index, pd.RangeIndex):
            raise MatrixFormatError(
                f"{source}: a wide table needs the model names as its index or in a first column "
                "'model' (or use the long layout with columns model, item, score)"
            )
        if df.shape[1] == 0 and not allow_no_items:
            raise MatrixFormatError(f"{source}: no item columns")
        _check_names(df.index, source, "model name", "row")
        _check_names(df.columns, source, "item id", "column")
        values = _to_float(df, source)
        return cls(values, [str(m) for m in df.index], list(df.columns))

    @classmethod
    def _from_long(cls, df: pd.DataFrame, source: str) -> "ResponseMatrix":
        df = df.rename(columns=str)
        if df[["model", "item"]].isna().any().any() or (df[["model", "item"]].astype(str).apply(
                lambda c: c.str.strip()) == "").any().any():
            raise MatrixFormatError(f"{source}: empty model or item name in the long table")
        df = df.assign(model=df["model"].astype(str), item=df["item"].astype(str))
        dup = df.duplicated(["model", "item"], keep=False)
        if dup.any():
            first = df.loc[dup].iloc[0]
            raise MatrixFormatError(
                f"{source}: {int(dup.sum())} duplicate (model, item) rows, e.g. ({first['model']!r}, {first['item']!r})"
            )
        scores = _to_float(df[["score"]], source)[:, 0]
        models = list(dict.fromkeys(df["model"]))
        items = list(dict.fromkeys(df["item"]))
        mi = {m: i for i, m in enumerate(models)}
        ii = {t: j for j, t in enumerate(items)}
        out = np.full((len(models), len(items)), np.nan)
        out[df["model"].map(mi).to_numpy(), df["item"].map(ii).to_numpy()] = scores
        return cls(out, models, items)

    @classmethod
    def read(cls, path: str | os.PathLike, columns: Iterable[str] | None = None) -> "ResponseMatrix":
        """Read a wide or long parquet/CSV table.

        Parameters
        ----------
        columns : iterable of str, optional
            For wide parquet files, read only these item columns (plus the model names);
            unknown names are ignored. Used by ``estimate`` to read only the anchors.
        """
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"no such file: {path}")
        if path.is_dir():
            raise MatrixFormatError(f"{path} is a folder; give a score table file (.parquet or .csv)")
        name = path.name.lower()
        try:
            if _is_long_file(path, name):  # one row per pair: read in chunks (tinybench_builder.read.long_table)
                from tinybench_builder.read.long_table import read_long

                scores, models, items = read_long(path, sep="\t" if name.endswith(".tsv") else ",", columns=columns)
                return cls(scores, models, items)
            if name.endswith((".parquet", ".pq")) and columns is None:
                # a wide table of float columns goes straight into compact storage, a few hundred
                # columns at a time; anything else (or a bad value) takes the pandas way below
                streamed = _read_wide_streamed(path)
                if streamed is not None:
                    return streamed
            if name.endswith((".parquet", ".pq")):
                df = _read_parquet(path, columns)
            elif name.endswith((".csv", ".csv.gz", ".tsv", ".txt")):
                from tinybench_builder.read.csv_table import read_score_csv

                df = read_score_csv(path, sep="\t" if name.endswith(".tsv") else ",", columns=columns,
                                    long_columns=LONG_COLUMNS)
            else:
                raise MatrixFormatError(f"{path}: unknown table format (use .parquet or .csv)")
        except MatrixFormatError as exc:
            raise _naming(path, exc) from None
        except MemoryError as exc:  # pyarrow's allocation failures too: not bad input, not an empty reason
            detail = one_line(str(exc), 200) or "an allocation failed"
            raise OutOfMemory(f"{path}: out of memory while reading the table ({detail}); a long table needs about "
                              "3x its matrix (models x items x 8 bytes), a wide one more (docs/INGEST.md)") from exc
        except ValueError as exc:  # CsvFormatError: the message names the file already
            raise MatrixFormatError(str(exc) if str(path) in str(exc) else f"{path}: {exc}") from exc
        except Exception as exc:  # pyarrow/pandas errors: name the file, hide the traceback
            raise MatrixFormatError(f"{path}: cannot read table: {one_line(exc, 300)}") from exc
        try:
            return cls.from_frame(df, source=str(path), allow_no_items=columns is not None)
        except MatrixFormatError as exc:
            raise _naming(path, exc) from None

    def write(self, path: str | os.PathLike, layout: str = "wide") -> Path:
        """Write the table atomically (parquet, or CSV by extension); the file gets the
        permissions of the user's umask. ``layout``: ``"wide"`` (a ``model`` column, one column
        per item) or ``"long"`` (``model, item, score``, one row per evaluated pair:
        :func:`~tinybench_builder.read.long_table.write_long`, bounded memory whatever the width;
        the readers take either)."""
        from tinybench_builder.files import atomic_output

        path = Path(path)
        kind = table_format(path)
        if layout not in ("wide", "long"):
            raise MatrixFormatError(f"{path}: layout must be 'wide' or 'long', got {layout!r}")
        n, N = self.shape
        if layout == "wide" and kind == "parquet" and N > MAX_PARQUET_COLUMNS:
            raise MatrixFormatError(
                f"{path}: {N:,} items are too many columns for a wide parquet table (parquet keeps metadata per "
                f"column: writing and reading it takes GBs); at most {MAX_PARQUET_COLUMNS:,}: write the long table "
                "instead (one row per model and item, which fit, build and estimate read in bounded memory: "
                "`ingest ... --layout long`, ResponseMatrix.write(path, layout='long')), or write CSV instead (a "
                "name ending in .csv)")
        if layout == "long":
            from tinybench_builder.read.long_table import write_long

            try:
                with atomic_output(path) as tmp:
                    write_long(tmp, self.models, self.items, self.score_rows, kind)
            except MemoryError as exc:
                detail = one_line(str(exc), 200) or "an allocation failed"
                raise OutOfMemory(f"{path}: out of memory while writing the table ({detail}); nothing was "
                                  "written") from exc
            return path
        try:  # the temporary file is removed on any error, out of memory included
            if kind == "parquet" and n * N > BIG_TABLE_CELLS:
                # a big matrix: row groups of a few hundred models, never the whole float64 frame
                with atomic_output(path) as tmp:
                    write_wide_parquet(tmp, self.models, self.items, self.compact,
                                       row_group_rows=max(64, BIG_TABLE_CELLS // max(N, 1)))
                return path
            frame = self.to_frame()
            with atomic_output(path) as tmp:
                if kind == "csv":
                    frame.to_csv(tmp)
                else:
                    frame.to_parquet(tmp)
        except MemoryError as exc:
            detail = one_line(str(exc), 200) or "an allocation failed"
            raise OutOfMemory(f"{path}: out of memory while writing the table ({detail}); nothing was written") from exc
        return path


def table_format(path: str | os.PathLike) -> str:
    """``"parquet"`` or ``"csv"``: what :meth:`ResponseMatrix.write` writes for ``path``, by its
    ending; any other ending is refused (a parquet file named ``.json`` helps nobody)."""
    name = Path(path).name.lower()
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if name.endswith(".csv"):
        return "csv"
    raise MatrixFormatError(f"{path}: write the score table as .parquet (or .csv); unknown file type")


def natural_key(name: object) -> tuple[tuple[tuple[int, int, str], ...], str]:
    """Sort key that orders ``"item2"`` before ``"item10"`` (digit runs compare as numbers).

    The one natural order of the package: item ids (the matrix's column order) and the readers'
    files (HELM run folders) sort by it. A digit run sorts before text at the same place; the raw
    string is the last element, so two different names never compare equal (``"a01"`` before
    ``"a1"``), and the order never depends on the order the names came in.
    """
    text = str(name)
    # split() with a capturing group alternates text and digit runs: the odd parts are the runs
    # (str.isdigit would also take "²" for one, which int() refuses)
    parts = _DIGITS.split(text)
    return tuple((0, int(p), "") if i % 2 else (1, 0, p) for i, p in enumerate(parts) if p != ""), text


_DIGITS = __import__("re").compile(r"(\d+)")


def subscenario_of(item_id: str) -> str:
    """``"abstract_algebra.12"`` -> ``"abstract_algebra"``; ``"12"`` -> ``""``."""
    item_id = str(item_id)
    head, sep, _ = item_id.rpartition(".")
    return head if sep else ""


def _check_range(Y: np.ndarray) -> None:
    """Finite and in [0, 1] (NaN allowed), checked in blocks of rows (no full-size temporary)."""
    chunks = row_chunks(Y.shape[0], Y.shape[1]) if Y.ndim == 2 else [slice(None)]
    for sl in chunks:
        if np.isinf(Y[sl]).any():
            raise MatrixFormatError("scores contain infinite values")
    count, first = 0, None
    for sl in chunks:
        blk = Y[sl]
        bad = (blk < 0.0) | (blk > 1.0)
        c = int(np.count_nonzero(bad))
        if c and first is None:
            first = blk[bad][0]
        count += c
    if count:
        raise MatrixFormatError(f"scores must lie in [0, 1]; found {count} value(s) outside, e.g. {first!r}")


def _naming(path: Path, exc: MatrixFormatError) -> MatrixFormatError:
    """``exc`` with the file named: the matrix's own checks (unique names...) do not know it."""
    return exc if str(path) in str(exc) else MatrixFormatError(f"{path}: {exc}")


def _check_unique(names: list[str], what: str) -> None:
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise MatrixFormatError(f"duplicate {what}: {n!r}")
        seen.add(n)


def check_model_names(models: Sequence[str], sources: Mapping[str, Sequence[str]] | None = None) -> None:
    """The rule for model names, for every reader and the API: kept exactly as written, and two
    that are the same once surrounding whitespace is stripped (``"org/m00"``, ``"org/m00 "``,
    ``"org/m00\\t"``) are refused (:class:`MatrixFormatError` naming both, and where each was
    read when ``sources`` maps names to their sources): a typo must not split one model in two.

    Stripping them silently would rename models (and merge rows) behind the user's back; keeping
    both would give the fit two partial models where there is one."""
    first: dict[str, str] = {}
    for name in models:
        other = first.setdefault(name.strip(), name)
        if other == name:
            continue
        if sources:
            shown = " and ".join(f"{n!r} ({', '.join(sorted(set(sources.get(n, ()))))})" for n in (other, name))
        else:
            shown = f"{other!r} and {name!r}"
        raise MatrixFormatError(f"model names {shown} differ only by surrounding whitespace: they would be two "
                                "models; correct the name where it was written (names are kept as written)")


def _check_names(names: Iterable, source: str, what: str, where: str) -> None:
    """Refuse a missing (None/NaN) or blank name: ``str()`` would make it the model ``nan``."""
    for i, name in enumerate(names):
        if name is None or (isinstance(name, float) and np.isnan(name)) or not str(name).strip():
            raise MatrixFormatError(f"{source}: {where} {i + 1} has an empty {what}")


def _to_float(df: pd.DataFrame, source: str) -> np.ndarray:
    if all(dt == np.float64 for dt in df.dtypes):  # parquet and CSV scores usually are: no per-column work
        return df.to_numpy(dtype=np.float64)
    try:
        return df.apply(pd.to_numeric, errors="raise").to_numpy(dtype=np.float64, na_value=np.nan)
    except (ValueError, TypeError) as exc:
        for col in df.columns:
            conv = pd.to_numeric(df[col], errors="coerce")
            bad = conv.isna() & df[col].notna() & (df[col].astype(str).str.strip() != "")
            if bad.any():
                raise MatrixFormatError(
                    f"{source}: non-numeric score {df[col][bad].iloc[0]!r} in column {col!r}"
                ) from exc
        raise MatrixFormatError(f"{source}: cannot read scores as numbers: {exc}") from exc


def _read_wide_streamed(path: Path) -> ResponseMatrix | None:
    got = read_wide_parquet(path)
    if got is None:
        return None
    models, items, store = got
    _check_names(models, str(path), "model name", "row")
    _check_names(items, str(path), "item id", "column")
    return ResponseMatrix(store, models, items)


def _is_long_file(path: Path, name: str) -> bool:
    """Whether the table's columns are the long layout's (from the parquet schema or the CSV header)."""
    from tinybench_builder.read.long_table import is_long_header

    if name.endswith((".parquet", ".pq")):
        import pyarrow.parquet as pq

        schema = pq.read_schema(path)
        index = {c for c in (schema.pandas_metadata or {}).get("index_columns", []) if isinstance(c, str)}
        names = [n for n in schema.names if n not in index]
        return len(set(names)) == len(names) and is_long_header(names, LONG_COLUMNS)
    if name.endswith((".csv", ".csv.gz", ".tsv", ".txt")):
        from tinybench_builder.read.csv_table import _names, read_header

        return is_long_header(_names(path, read_header(path, "\t" if name.endswith(".tsv") else ",")), LONG_COLUMNS)
    return False


def _read_parquet(path: Path, columns: Iterable[str] | None) -> pd.DataFrame:
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    seen: set[str] = set()
    for name in schema.names:
        if name in seen:
            raise MatrixFormatError(f"{path}: duplicate column name {name!r}; every item needs its own column")
        seen.add(name)
    if columns is None:
        return pd.read_parquet(path)
    names = set(schema.names)
    if set(LONG_COLUMNS).issubset(names):  # long layout: filter rows instead
        df = pd.read_parquet(path, columns=list(LONG_COLUMNS))
        return df[df["item"].astype(str).isin(set(map(str, columns)))]
    wanted = [c for c in columns if c in names]
    index_cols = [c for c in (schema.pandas_metadata or {}).get("index_columns", []) if isinstance(c, str)]
    keep = [c for c in ("model",) if c in names and c not in index_cols]
    return pd.read_parquet(path, columns=keep + wanted)
