"""Shared machinery of the readers: per-model parts, parallel map, assembly into a matrix.

Every reader works in two steps so that many models can be read in parallel:

``scan(path, options) -> list[Unit]``
    cheap: list files, decide which runs to read; one :class:`Unit` per model (picklable);
``read_unit(unit) -> ModelPart``
    read one model's files (only the needed columns) into sparse :class:`Block` s.

:func:`map_units` runs ``read_unit`` over the units (serially, or in a process/thread pool);
:mod:`tinybench_builder.read.sources.reduce` reduces the parts into one :class:`ResponseMatrix`.
"""

from __future__ import annotations

import importlib
import math
import os
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from functools import partial
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from tinybench_builder.errors import OutOfMemory, ReadFailed, nested_too_deeply, one_line
from tinybench_builder.inputs import iter_records, read_json
from tinybench_builder.read.sources import ModelUnavailable, SourceError


@dataclass
class Options:
    """User choices shared by every reader."""

    task: str | None = None
    metric: str | None = None
    filter: str | None = None
    content: str | None = None


@dataclass
class Block:
    """Scores of one model on (part of) one scenario/subscenario.

    ``index`` holds the item positions within the subscenario (ints: doc ids, row positions)
    or string keys (HELM instance ids, AlpacaEval instructions); ``None`` means the positions
    ``0 .. len(scores)-1`` (row order, stored without an array). ``scenario=None`` means
    ``index`` already holds final item ids (score tables).
    """

    scenario: str | None
    subscenario: str
    index: np.ndarray | None
    scores: np.ndarray
    content: pd.DataFrame | None = None  # rows aligned with ``index``
    rank: int = 1000  # scenario sort rank (known benchmarks in their usual order)
    expected: int | None = None  # full size of the subscenario when known (ints only)
    what: str = ""  # metric/filter description, for messages


@dataclass
class ModelPart:
    model: str
    source: str
    blocks: list[Block] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    available: list[str] = field(default_factory=list)  # tasks seen, for "task not found" messages


@dataclass
class Unit:
    """One model's worth of reading work (picklable, sent to a worker)."""

    reader: str  # module name inside tinybench_builder.read.sources
    source: str  # the path shown in messages
    model: str
    payload: dict[str, Any]
    options: Options = field(default_factory=Options)
    want_content: bool = False


# --------------------------------------------------------------------------- values
_TRUE = {"true": 1.0, "false": 0.0}


def to_float(value: Any) -> float:
    """Coerce a per-example score: numbers, bools, numeric strings, lists (mean), None -> NaN."""
    if value is None:
        return math.nan
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (complex, np.complexfloating)):
        raise ValueError(f"not a score: complex number {value!r}")
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    if isinstance(value, str):
        s = value.strip()
        if s.lower() in _TRUE:
            return _TRUE[s.lower()]
        if s == "" or s.lower() in ("nan", "none", "null", "n/a"):
            return math.nan
        return float(s)  # ValueError for junk: the caller names the file
    if isinstance(value, (list, tuple)):
        vals = [to_float(v) for v in value]
        vals = [v for v in vals if not math.isnan(v)]
        return float(np.mean(vals)) if vals else math.nan
    raise ValueError(f"not a score: {value!r}")


def int_or_str(values: Sequence[Any]) -> np.ndarray:
    """Indices as int64 when they all are integers (or integer strings), else str objects."""
    try:
        out = np.array([int(v) for v in values], dtype=np.int64)
        if all(str(v).strip() == str(o) or isinstance(v, (int, np.integer)) for v, o in zip(values, out)):
            return out
    except (TypeError, ValueError, OverflowError):
        pass
    return np.array([str(v) for v in values], dtype=object)


# --------------------------------------------------------------------------- files
def read_content_table(path: str | os.PathLike) -> pd.DataFrame:
    """A content file (parquet, CSV/TSV, JSON array or JSON lines) as a DataFrame."""
    path = Path(path)
    if not path.exists():
        raise SourceError(f"{path}: content file not found")
    name = path.name.lower()
    try:
        if name.endswith((".parquet", ".pq")):
            df = pd.read_parquet(path)
        elif name.endswith((".csv", ".csv.gz", ".tsv")):
            df = pd.read_csv(path, sep="\t" if name.endswith(".tsv") else ",", dtype={"item_id": str})
        elif name.endswith(".jsonl"):
            df = pd.DataFrame([rec for _, rec in iter_records(path)])
        elif name.endswith(".json"):
            data = read_json(path)
            df = pd.DataFrame(data)
        else:
            raise SourceError(f"{path}: unknown content file type (use parquet, CSV or JSON)")
    except SourceError:
        raise
    except Exception as exc:
        raise SourceError(f"{path}: cannot read content file: {exc}") from exc
    if "item_id" in df.columns:
        df["item_id"] = df["item_id"].astype(str)
    return df


# --------------------------------------------------------------------------- parallel map
def read_unit(unit: Unit) -> list[ModelPart]:
    """Run the unit's reader; always a list (a folder may hold several models)."""
    module = importlib.import_module(f"{__package__}.{unit.reader}")
    out = module.read_unit(unit)
    return [out] if isinstance(out, ModelPart) else list(out)


@dataclass
class UnitFailure:
    """A unit of reading work that kept failing: reported, never dropped silently."""

    model: str
    source: str
    error: str  # "<exception type>: <message>" of the last attempt
    attempts: int

    def note(self) -> str:
        return f"{self.model}: not read ({self.source}): {self.error} (after {self.attempts} attempt(s))"


def describe_error(exc: BaseException, limit: int = 400) -> str:
    """One line naming an exception and its root cause: ``Type: message (cause: Type: message)``."""
    if isinstance(exc, ReadFailed):
        return str(exc)

    def one(e: BaseException, room: int) -> str:
        lines = str(e).strip().splitlines()
        text = f"{type(e).__name__}: {lines[0].strip()}" if lines else type(e).__name__
        return text if len(text) <= room else text[: room - 3] + "..."

    chain = [exc]
    while len(chain) < 8:
        nxt = chain[-1].__cause__ or chain[-1].__context__
        if nxt is None or nxt in chain:
            break
        chain.append(nxt)
    if len(chain) == 1:
        return one(exc, limit)
    return f"{one(exc, limit // 3)} (cause: {one(chain[-1], limit - limit // 3)})"


def read_unit_retrying(unit: Unit, retries: int = 0, backoff: float = 0.5) -> list[ModelPart] | UnitFailure:
    """:func:`read_unit` with the failure rule of ``ingest``.

    Bad input (:class:`SourceError`) is raised at once: retrying cannot fix a corrupt file.
    :class:`ModelUnavailable` gives a :class:`UnitFailure` at once. Any other exception (a network
    error, a full disk, a bug) is retried ``retries`` times, waiting ``backoff`` seconds, doubled
    each time; then the unit is a :class:`UnitFailure`.
    """
    attempts = 0
    while True:
        attempts += 1
        try:
            with nested_too_deeply(unit.source, SourceError):  # bad input (a structure too deep), named
                return read_unit(unit)
        except SourceError:
            raise
        except ModelUnavailable as exc:
            return UnitFailure(unit.model, unit.source, describe_error(exc), attempts)
        except MemoryError as exc:  # retrying in the same process cannot help: say it, at once
            raise OutOfMemory(f"{unit.source}: out of memory while reading model {unit.model!r} "
                              f"({one_line(str(exc), 200) or 'an allocation failed'})") from exc
        except Exception as exc:  # noqa: BLE001 - anything else is a failure of this unit only
            if attempts > retries:
                return UnitFailure(unit.model, unit.source, describe_error(exc), attempts)
            time.sleep(backoff * 2 ** (attempts - 1))


def map_units(
    units: Sequence[Unit],
    workers: int | None = None,
    executor: str | None = None,
    progress: bool | Callable[[Any], None] = False,
    flatten: bool = True,
    retries: int | None = None,
) -> list:
    """``read_unit`` over every unit, in unit order (``flatten=False``: one list per unit).

    ``executor``: ``"process"`` (default for many units: JSON parsing holds the GIL; threads
    when the main module is a plain script, see :func:`_processes_safe`), ``"thread"`` or
    ``"serial"``. ``workers`` defaults to the CPU count. ``progress``: a tqdm bar, or a callable
    given each unit's result as it arrives. ``retries``: read with :func:`read_unit_retrying`
    (a unit that keeps failing gives a :class:`UnitFailure` instead of raising; needs
    ``flatten=False``).
    """
    n = len(units)
    if workers is None:
        workers = min(os.cpu_count() or 1, n)
    if retries is not None and flatten:
        raise ValueError("retries needs flatten=False (a failure takes the place of a unit's parts)")
    func: Callable[[Unit], Any] = read_unit if retries is None else partial(read_unit_retrying, retries=retries)
    kind = executor or ("serial" if workers <= 1 or n < 4 else "process" if _processes_safe() else "thread")
    bar: Any = progress if callable(progress) else _progress(n, progress)  # a callable, or a bar
    tick: Callable[[Any], Any] = progress if callable(progress) else (lambda got: bar.update(1))
    try:
        if kind == "serial" or workers <= 1:
            out = []
            for u in units:
                got = func(u)
                out.extend(got) if flatten else out.append(got)
                tick(got)
            return out
        if kind == "thread":
            pool: Any = ThreadPoolExecutor(max_workers=workers)
            chunksize = 1
        elif kind == "process":
            import multiprocessing as mp

            # fork is unsafe once pyarrow's thread pools exist in the parent; forkserver workers
            # start from a clean process and import the readers once.
            if _short_socket_folder():
                ctx = mp.get_context("forkserver")
                ctx.set_forkserver_preload([__name__])
                pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx)
                chunksize = max(1, min(16, n // (workers * 8)))
            else:  # no folder gives a short enough socket path: threads need none
                pool, chunksize = ThreadPoolExecutor(max_workers=workers), 1
        else:
            raise ValueError(f"unknown executor {kind!r} (use process, thread or serial)")
        out = []
        try:
            for got in pool.map(func, units, chunksize=chunksize):
                out.extend(got) if flatten else out.append(got)
                tick(got)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        return out
    finally:
        if not callable(progress):
            bar.close()


#: the longest AF_UNIX socket path (sun_path is 108 bytes on Linux, with its NUL)
_SUN_PATH_MAX = 107


def _short_socket_folder() -> bool:
    """Keep the fork server's socket path short enough for AF_UNIX.

    The fork server listens on ``<multiprocessing's temporary folder>/listener-XXXXXXXX``, made
    in ``TMPDIR``: an 80-character ``TMPDIR`` gave "AF_UNIX path too long". With such a
    ``TMPDIR`` the folder is made in the first short, writable one of ``/tmp``, ``/var/tmp`` and
    ``/dev/shm`` instead (multiprocessing removes it at exit); the data files still go to ``TMPDIR``.
    False when the socket path stays too long (then threads are used).
    """
    import multiprocessing.util as mpu
    import tempfile

    need = len("/pymp-xxxxxxxx/listener-xxxxxxxx") + 4
    if len(os.fsencode(tempfile.gettempdir())) + need <= _SUN_PATH_MAX:
        return len(os.fsencode(mpu.get_temp_dir())) + need - 6 <= _SUN_PATH_MAX
    for folder in ("/tmp", "/var/tmp", "/dev/shm"):
        if os.path.isdir(folder) and os.access(folder, os.W_OK | os.X_OK) and len(folder) + need <= _SUN_PATH_MAX:
            saved = tempfile.tempdir
            tempfile.tempdir = folder
            try:
                mpu.get_temp_dir()  # made now, under the short folder, and kept for this process
            finally:
                tempfile.tempdir = saved
            break
    return len(os.fsencode(mpu.get_temp_dir())) + need - 6 <= _SUN_PATH_MAX


def _processes_safe() -> bool:
    """Can worker processes start without re-running the user's script?

    Workers start from a fork server, which imports the parent's ``__main__``: safe for
    ``python -m ...`` (the CLI, pytest) and interactive sessions, not for a plain script that
    lacks an ``if __name__ == "__main__"`` guard; there threads are used instead.
    """
    import sys

    main = sys.modules.get("__main__")
    return main is None or getattr(main, "__spec__", None) is not None or not hasattr(main, "__file__")


def _progress(total: int, enabled: bool):
    from tinybench_builder.progress import bar

    return bar(total=total, unit="model", desc="reading", enabled=enabled, leave=False)
