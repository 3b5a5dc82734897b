"""The reduce step of the readers: per-model parts into one response matrix.

:class:`MatrixReducer` collects each model's item keys first (the union of the items, named by
the matrix convention), then fills the matrix slot by slot, checking duplicates; memory is
bounded by the item index and the output matrix. :func:`assemble` runs it over parts in memory;
the distributed path (:mod:`tinybench_builder.read.sources.dask_map`) streams keys and parts into it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from tinybench_builder.read.matrix import ResponseMatrix, check_model_names, subscenario_of
from tinybench_builder.read.sources import SourceError
from tinybench_builder.read.sources._common import Block, ModelPart, int_or_str, read_content_table


# --------------------------------------------------------------------------- assembly
def _check_block(part: ModelPart, b: Block) -> None:
    if b.index is None:
        idx = np.empty(0, dtype=np.int64)
    elif len(b.index) != len(b.scores):
        raise SourceError(f"{part.source}: internal error: {len(b.index)} keys for {len(b.scores)} scores")
    else:
        idx = b.index
    if idx.dtype != object and (len(idx) < 2 or bool(np.all(idx[1:] > idx[:-1]))):
        pass  # sorted ints: unique (the common case, checked fast)
    elif len(pd.unique(idx)) != len(idx):
        dup = pd.Index(idx)[pd.Index(idx).duplicated()][0]
        raise SourceError(f"{part.source}: model {part.model!r}: duplicate item {dup!r} in {b.scenario or 'table'}")
    s = b.scores
    bad = ~np.isnan(s) & ((s < 0) | (s > 1) | np.isinf(s))
    if bad.any():
        what = f" ({b.what})" if b.what else ""
        where = f"{b.scenario}/{b.subscenario}".rstrip("/") if b.scenario else "table"
        raise SourceError(
            f"{part.source}: model {part.model!r}: {where}{what} has {int(bad.sum())} score(s) outside [0, 1], "
            f"e.g. {s[bad][0]!r}; choose a metric in [0, 1] (--metric)"
        )


def item_id(scenario: str | None, subscenario: str, index: Any, multi: bool) -> str:
    """Item id by the matrix convention (``<index>``, ``<sub>.<index>``, ``<scenario>.<...>``)."""
    if scenario is None:
        return str(index)
    pieces = ([scenario] if multi else []) + ([subscenario] if subscenario else []) + [str(index)]
    return ".".join(pieces)


# The reduce is split in two so that it can stream: the *keys* of every model's blocks (which
# items it has, no scores) make the item index, then the parts fill the matrix one at a time.
# A distributed run sends only the keys to the client first; the scores stay on the workers
# until the matrix exists, so the client never holds more than the index and the matrix.
@dataclass
class BlockKeys:
    """The item keys of one :class:`Block`: its index, or its length for positions ``0..n-1``."""

    scenario: str | None
    subscenario: str
    index: np.ndarray | int
    rank: int
    expected: int | None


@dataclass
class PartKeys:
    model: str
    source: str
    notes: list[str]
    blocks: list[BlockKeys]


@dataclass
class UnitKeys:
    """What the item index needs from one unit's parts (those with blocks), scores left out."""

    parts: list[PartKeys]
    available: list[str]  # tasks seen by every part, for "task not found" messages


def unit_keys(parts: Sequence[ModelPart]) -> UnitKeys:
    """Check the blocks of one unit's parts and keep only their keys.

    Raises
    ------
    SourceError : a duplicate item within a block, or a score outside [0, 1].
    """
    out = []
    for part in parts:
        if not part.blocks:
            continue
        for b in part.blocks:
            _check_block(part, b)
        out.append(PartKeys(part.model, part.source, list(part.notes), [
            BlockKeys(b.scenario, b.subscenario, b.index if b.index is not None else len(b.scores), b.rank, b.expected)
            for b in part.blocks
        ]))
    return UnitKeys(out, sorted({t for p in parts for t in p.available}))


_RANK_SHIFT = 2**32  # rank of a key = slot * _RANK_SHIFT + its offset in the slot's keys of the group


class _GroupKeys:
    """The union of the keys of one (scenario, subscenario), with the first place each was seen.

    Integer keys end up sorted; when string keys occur the items keep the order in which they were
    first seen in slot order (as ``pd.unique`` over the concatenation would), whatever the order in
    which the slots arrive.
    """

    def __init__(self, rank: int) -> None:
        self.rank = rank
        self.span = 0  # max length of the position-only blocks and of the known full sizes
        self.int_keys = np.empty(0, dtype=np.int64)  # sorted, unique
        self.int_first = np.empty(0, dtype=np.int64)  # first rank of each int key
        self.obj_first: dict[Any, int] = {}
        self._pending: list[tuple[np.ndarray, np.ndarray]] = []
        self._pending_size = 0

    def add(self, keys: np.ndarray | int, expected: int | None, rank: int, first: int) -> int:
        """Add one block's keys whose first rank is ``first``; returns the number of ranks used."""
        self.rank = min(self.rank, rank)
        if expected:
            self.span = max(self.span, int(expected))
        if isinstance(keys, (int, np.integer)):
            self.span = max(self.span, int(keys))
            return 0
        n = len(keys)
        if keys.dtype == object:
            seen = self.obj_first
            for k, key in enumerate(keys.tolist(), start=first):
                if seen.get(key, k) >= k:  # slots may arrive in any order: keep the smallest rank
                    seen[key] = k
        else:
            self._pending.append((keys.astype(np.int64, copy=False), first + np.arange(n, dtype=np.int64)))
            self._pending_size += n
            if self._pending_size > 4 * len(self.int_keys) + 65536:
                self._merge()
        return n

    def _merge(self) -> None:
        if not self._pending:
            return
        keys = np.concatenate([self.int_keys] + [k for k, _ in self._pending])
        first = np.concatenate([self.int_first] + [r for _, r in self._pending])
        self._pending, self._pending_size = [], 0
        order = np.lexsort((first, keys))  # by key, then by rank: the first of each key is its first rank
        keys, first = keys[order], first[order]
        keep = np.ones(len(keys), dtype=bool)
        keep[1:] = keys[1:] != keys[:-1]
        self.int_keys, self.int_first = keys[keep], first[keep]

    def union(self) -> np.ndarray:
        self._merge()
        if not self.obj_first:
            if not len(self.int_keys):
                return np.arange(self.span, dtype=np.int64)
            return np.union1d(self.int_keys, np.arange(self.span, dtype=np.int64))
        first = dict(self.obj_first)
        for key, r in zip(self.int_keys.tolist(), self.int_first.tolist()):
            if key not in first or r < first[key]:
                first[key] = r
        ordered = sorted(first, key=first.__getitem__)
        seen = set(ordered)
        ordered += [i for i in range(self.span) if i not in seen]
        out = np.empty(len(ordered), dtype=object)
        out[:] = ordered
        return out


class MatrixReducer:
    """Streaming reduce of per-model parts into one :class:`ResponseMatrix`.

    Work comes in *slots* (one per unit of reading work, or per table source), numbered in the
    order of the sources; the result does not depend on the order in which slots arrive:

    1. :meth:`add_keys` for every slot (its :func:`unit_keys`), in any order;
    2. :meth:`build_index`: the item index (items, columns) and the model rows; allocates the matrix;
    3. :meth:`fill` for every slot, with its parts (any order; memory: the matrix and one part);
    4. :meth:`finish`: the matrix with its item information and notes.

    ``assemble`` runs the four steps on parts held in memory; a distributed run streams them.
    """

    def __init__(self) -> None:
        self._groups: dict[tuple, _GroupKeys] = {}
        self._slots: dict[int, list[tuple[str, str, list[str]]]] = {}  # slot -> (model, source, notes) per part
        self._available: set[str] = set()
        self._dropped: set[int] = set()
        self._filled: set[int] = set()
        self._content: list[tuple[int, int, pd.DataFrame]] = []
        self.scores: np.ndarray | None = None

    # ----------------------------------------------------------------- keys
    def add_keys(self, slot: int, keys: UnitKeys) -> None:
        if self.scores is not None:
            raise RuntimeError("add_keys after build_index")
        if slot in self._slots:
            raise ValueError(f"slot {slot} added twice")
        self._available.update(keys.available)
        self._slots[slot] = [(p.model, p.source, p.notes) for p in keys.parts]
        offsets: dict[tuple, int] = {}
        for p in keys.parts:
            for b in p.blocks:
                key = (b.scenario, b.subscenario)
                g = self._groups.get(key)
                if g is None:
                    g = self._groups[key] = _GroupKeys(b.rank)
                off = offsets.get(key, 0)
                offsets[key] = off + g.add(b.index, b.expected, b.rank, slot * _RANK_SHIFT + off)

    def drop(self, slot: int) -> None:
        """Leave a slot out (a unit that failed). Before :meth:`build_index` it costs nothing;
        after, its rows are removed at :meth:`finish` (one copy of the matrix)."""
        self._dropped.add(slot)

    @property
    def has_scores(self) -> bool:
        """Do the slots added so far hold any block?"""
        return bool(self._groups) or self.scores is not None

    @property
    def available(self) -> list[str]:
        return sorted(self._available)

    # ----------------------------------------------------------------- index
    def build_index(self) -> tuple[int, int]:
        """Fix items and model rows and allocate the matrix; returns its shape."""
        if not self._groups:
            raise SourceError("the sources hold no scores (check --task / --metric / --filter)")
        groups = self._groups
        scenarios = {s for s, _ in groups if s is not None}
        self.multi = multi = len(scenarios) > 1

        def gkey(k):
            s, sub = k
            return (s is None, groups[k].rank, s or "", sub)

        item_col: dict[str, int] = {}
        info_rows: list[tuple[str, Any, str]] = []
        lookups: dict[tuple, tuple[Any, np.ndarray]] = {}
        for key in sorted(groups, key=gkey):
            union = groups[key].union()
            ids = [item_id(key[0], key[1], i, multi) for i in union]
            cols = np.empty(len(ids), dtype=np.int64)
            for j, iid in enumerate(ids):
                col = item_col.get(iid)
                if col is None:
                    col = item_col[iid] = len(item_col)
                    info_rows.append((iid, key[0], key[1]))
                cols[j] = col
            lookups[key] = (union if union.dtype != object else pd.Index(union), cols)
        self._groups = {}  # the unions now live in the lookups
        self._lookups = lookups
        self._info_rows = info_rows
        self.items = list(item_col)

        self._rows: dict[str, int] = {}
        self._sources: dict[str, list[str]] = {}
        self._row_slots: list[int] = []
        for slot in sorted(self._slots):
            if slot in self._dropped:
                continue
            for model, source, _ in self._slots[slot]:
                if model not in self._rows:
                    self._rows[model] = len(self._rows)
                    self._row_slots.append(slot)
                self._sources.setdefault(model, []).append(source)
        check_model_names(list(self._rows), self._sources)  # finish() skips the matrix's own checks
        self.scores = np.full((len(self._rows), len(self.items)), np.nan)
        return self.scores.shape

    # ----------------------------------------------------------------- fill
    def fill(self, slot: int, parts: Sequence[ModelPart]) -> None:
        """Write one slot's scores into the matrix (conflicting duplicates raise)."""
        if self.scores is None:
            raise RuntimeError("fill before build_index")
        if slot in self._dropped:
            return
        self._filled.add(slot)
        seq = 0
        for part in parts:
            if not part.blocks:
                continue
            row = self._rows[part.model]
            for b in part.blocks:
                c = _columns(self._lookups[(b.scenario, b.subscenario)], b.index, len(b.scores))
                old = self.scores[row, c]
                new = np.asarray(b.scores, dtype=np.float64)
                clash = ~np.isnan(old) & ~np.isnan(new) & (np.abs(old - new) > 1e-9)
                if clash.any():
                    k = int(np.argmax(clash))
                    srcs = sorted(set(self._sources[part.model]))
                    raise SourceError(
                        f"conflicting scores for model {part.model!r}, item {self.items[c[k]]!r}: "
                        f"{float(old[k])!r} vs {float(new[k])!r} (sources: {', '.join(srcs)})"
                    )
                self.scores[row, c] = np.where(np.isnan(new), old, new)
                if b.content is not None and not b.content.empty:
                    f = b.content.reset_index(drop=True).copy()
                    f.index = pd.Index([self.items[k] for k in c], name="item")
                    self._content.append((slot, seq, f))
                seq += 1

    # ----------------------------------------------------------------- result
    def finish(self, content: str | os.PathLike | pd.DataFrame | None = None,
               notes: Iterable[str] = ()) -> ResponseMatrix:
        if self.scores is None:
            raise RuntimeError("finish before build_index")
        scores = self.scores
        models = list(self._rows)
        gone = [r for r, slot in enumerate(self._row_slots) if slot in self._dropped]
        if gone:  # a slot failed after the index was built: its models leave the matrix
            keep = np.setdiff1d(np.arange(len(models)), gone)
            scores = scores[keep]
            models = [models[r] for r in keep]
        info = self._item_info()
        if content is not None:
            info = _join_content(info, content)
        all_notes = list(notes)
        seen = set(all_notes)
        for slot in sorted(self._slots):
            if slot in self._dropped:
                continue
            for _, _, part_notes in self._slots[slot]:
                for n in part_notes:
                    if n not in seen:
                        seen.add(n)
                        all_notes.append(n)
        # Every block was checked on its way in (_check_block: scores in [0, 1] or NaN), models and
        # items are unique by construction: validating the whole matrix again would copy its
        # finite values (ResponseMatrix.__post_init__), doubling the peak memory of the reduce.
        # So the matrix is built with no rows, which checks everything else, then given its rows.
        matrix = ResponseMatrix(np.empty((0, len(self.items))), [], self.items, info, notes=all_notes)
        matrix.scores, matrix.models = scores, [str(m) for m in models]
        return matrix

    def _item_info(self) -> pd.DataFrame:
        rows = self._info_rows
        multi = self.multi
        info = pd.DataFrame(
            {
                "scenario": [r[1] if r[1] is not None else None for r in rows],
                "subscenario": [subscenario_of(r[0]) if (multi or r[1] is None) else r[2] for r in rows],
            },
            index=pd.Index([r[0] for r in rows], name="item"),
        )
        frames = [f for slot, _, f in sorted(self._content, key=lambda t: t[:2]) if slot not in self._dropped]
        if frames:
            content = pd.concat(frames)
            content = content[~content.index.duplicated(keep="first")]
            extra = [c for c in content.columns if c not in info.columns]
            info = info.join(content[extra], how="left")
        return info


def assemble(
    parts: Sequence[ModelPart],
    content: str | os.PathLike | pd.DataFrame | None = None,
    notes: Iterable[str] = (),
) -> ResponseMatrix:
    """Reduce per-model parts into one matrix (union of items; conflicting duplicates raise).

    Parts without blocks (a model folder without the chosen task) give no row.
    """
    parts = [p for p in parts if p.blocks]
    if not parts:
        raise SourceError("no models found in the sources")
    reducer = MatrixReducer()
    for slot, part in enumerate(parts):
        reducer.add_keys(slot, unit_keys([part]))
    reducer.build_index()
    for slot, part in enumerate(parts):
        reducer.fill(slot, [part])
    return reducer.finish(content=content, notes=notes)


def _columns(lookup: tuple, index: np.ndarray | None, n: int) -> np.ndarray:
    """Matrix columns of a block's keys (ints: binary search in the sorted union)."""
    union, cols = lookup
    if index is None:
        if isinstance(union, np.ndarray) and n and union[0] == 0 and union[n - 1] == n - 1:
            return cols[:n]  # sorted unique ints starting 0..n-1: positions are a prefix
        index = np.arange(n, dtype=np.int64)
    if isinstance(union, np.ndarray):
        if len(index) == len(union) and index.dtype == union.dtype and np.array_equal(index, union):
            return cols
        return cols[np.searchsorted(union, index)]
    return cols[union.get_indexer(index)]


def _join_content(info: pd.DataFrame, content: str | os.PathLike | pd.DataFrame) -> pd.DataFrame:
    df = content if isinstance(content, pd.DataFrame) else read_content_table(content)
    if "item_id" not in df.columns:
        return info
    df = df.assign(item_id=df["item_id"].astype(str)).drop_duplicates("item_id").set_index("item_id")
    extra = [c for c in df.columns if c not in info.columns]
    if not extra:
        return info
    return info.join(df[extra], how="left")


def matrix_to_parts(matrix: ResponseMatrix, source: str, scenario: str | None = None) -> list[ModelPart]:
    """Split a matrix into one part per model, for merging with other sources.

    ``scenario=None`` keeps the item ids as they are (score tables); a scenario name makes the
    ids positions of that scenario (renamed ``<scenario>.<id>`` when several scenarios merge).
    """
    if scenario is None:
        index = np.array(matrix.items, dtype=object)
    else:
        index = int_or_str(matrix.items)
    content = None
    if matrix.item_info is not None:
        extra = [c for c in matrix.item_info.columns if c not in ("scenario", "subscenario")]
        if extra:
            content = matrix.item_info[extra].reset_index(drop=True)
    parts = []
    for r, model in enumerate(matrix.models):
        # a view of the row, not a copy: the parts of a table then cost nothing on top of its matrix
        block = Block(scenario, "", index, matrix.scores[r], content if r == 0 else None, rank=1000)
        parts.append(ModelPart(model, source, [block], notes=list(matrix.notes) if r == 0 else []))
    return parts
