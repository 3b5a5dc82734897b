"""The legacy tinyBenchmarks pickle (SOURCE_FORMATS.md section 6).

``{'models': [name, ...], 'data': {name: {'correctness': array(n_items, n_models)}}}``
(``tutorials/lb.pickle``, ``wmdp_data.pkl``). Pickles can run arbitrary code when loaded, so
the file is read with :class:`tinybench_builder.safe_pickle.RestrictedUnpickler`, which admits only the globals needed to
rebuild numpy arrays (``_reconstruct``, ``ndarray``, ``dtype``, ``_frombuffer``, ``scalar``)
and builtin containers; anything else (``os.system``, ``builtins.eval``, ...) raises a
:class:`~tinybench_builder.read.sources.SourceError` before it is called.

Memory is bounded by the file: a pickle can refer to one object many times (a 282 KB file whose
20,000 rows are all the same 20,000-float row declares 400 million scores, 3 GB once converted),
and the admitted constructors could be asked for huge objects (``bytearray(10**12)``,
``list(range(10**10))``, an empty array of a huge shape). Every size a pickle asks for is
checked against :func:`~tinybench_builder.safe_pickle.value_budget` (a legitimate pickle stores each value in at least one
byte) before anything of that size is allocated.

``task`` picks the ``data`` entry (required when there are several; the error lists them).
Fields of the wrong type, complex or text scores and empty model names are refused with a
message naming the file and the field. Item ids are the row positions ``0 .. n_items-1``.
"""

from __future__ import annotations

import reprlib
from pathlib import Path
from typing import Any

import numpy as np

from tinybench_builder.errors import nested_too_deeply
from tinybench_builder.read.sources import SourceError
from tinybench_builder.read.matrix import ResponseMatrix
from tinybench_builder.safe_pickle import safe_load, value_budget


def entries(path: str | Path) -> list[str]:
    data = _load_checked(path)
    return list(data["data"])


def _load_checked(path: str | Path) -> dict:
    data = safe_load(path)
    if not isinstance(data, dict) or "models" not in data or "data" not in data or not isinstance(data["data"], dict):
        raise SourceError(f"{path}: not a tinyBenchmarks pickle (expected keys 'models' and 'data')")
    return data


def _declared_values(obj: Any, budget: int, depth: int = 0, seen: dict | None = None) -> int:
    """How many values converting ``obj`` to an array makes, counting every reference (a row
    referenced 20,000 times counts 20,000 times) without building anything; at most 3 levels."""
    seen = {} if seen is None else seen
    if isinstance(obj, np.ndarray) and obj.dtype != object:
        return int(obj.size)
    if isinstance(obj, (list, tuple, np.ndarray)):
        key = id(obj)
        if key in seen:
            return seen[key]
        if depth >= 3:
            raise ValueError("nested more than 3 levels deep")
        total = 0
        for v in (obj.ravel().tolist() if isinstance(obj, np.ndarray) else obj):
            total += _declared_values(v, budget, depth + 1, seen)
            if total > budget:
                break
        seen[key] = total
        return total
    return 1


def _scores_array(corr: Any, path: str | Path, task: str, budget: int) -> np.ndarray:
    """The correctness field as a float array, checked: size, type of every value."""
    where = f"{path}: entry {task!r}: 'correctness'"
    if not isinstance(corr, (np.ndarray, list, tuple)):
        raise SourceError(f"{where} must be an array (items x models), got {type(corr).__name__}")
    try:
        n = _declared_values(corr, budget)
    except ValueError as exc:
        raise SourceError(f"{where} is {exc}; expected an array of items x models") from None
    if n > budget:
        raise SourceError(f"{where} declares more than {budget:,} values (rows shared by reference?), more than "
                          "the file can hold; refusing to expand it")
    try:
        arr = np.asarray(corr)
    except (ValueError, TypeError) as exc:
        raise SourceError(f"{where} is not a rectangular array ({exc})") from None
    if arr.dtype.kind == "c" or (arr.dtype == object and any(isinstance(v, complex) for v in arr.ravel().tolist())):
        raise SourceError(f"{where} holds complex numbers; scores are real numbers in [0, 1]")
    if arr.dtype.kind in "biuf":
        return arr.astype(np.float64)
    bad = next((v for v in arr.ravel().tolist()
                if not isinstance(v, (bool, int, float, np.integer, np.floating)) and v is not None), None)
    if bad is not None or arr.dtype.kind not in "O":
        shown = bad if bad is not None else arr.ravel()[0] if arr.size else arr.dtype
        raise SourceError(f"{where} holds {type(shown).__name__} values (e.g. {shown!r:.40}); scores must be numbers")
    return np.array([np.nan if v is None else float(v) for v in arr.ravel().tolist()]).reshape(arr.shape)


def read(path: str | Path, task: str | None = None) -> ResponseMatrix:
    """Read one entry of a legacy tinyBenchmarks pickle as a matrix (models x items).

    A structure too deep to check or describe (thousands of levels: it loads, the checks recurse)
    is refused naming the file."""
    with nested_too_deeply(path, SourceError):
        return _read(path, task)


def _read(path: str | Path, task: str | None) -> ResponseMatrix:
    data = _load_checked(path)
    names = list(data["data"])
    if task is None:
        if len(names) != 1:
            raise SourceError(f"{path}: the pickle holds {len(names)} entries; choose one with --task: {', '.join(map(str, names))}")
        task = names[0]
    if task not in data["data"]:
        raise SourceError(f"{path}: no entry {task!r}; entries: {', '.join(map(str, names))}")
    entry = data["data"][task]
    if not isinstance(entry, dict):
        raise SourceError(f"{path}: entry {task!r} must be a dict with a 'correctness' array, got {type(entry).__name__}")
    corr = entry.get("correctness")
    if corr is None:
        raise SourceError(f"{path}: entry {task!r} has no 'correctness' array")
    raw_models = data["models"]
    if not isinstance(raw_models, (list, tuple)) or not all(isinstance(m, str) for m in raw_models):
        bad = raw_models if not isinstance(raw_models, (list, tuple)) else \
            next(m for m in raw_models if not isinstance(m, str))
        raise SourceError(f"{path}: field 'models' must be a list of model names (text), found "
                          f"{type(bad).__name__} {reprlib.repr(bad):.40}")  # reprlib: never recurses deeply
    empty = [i for i, m in enumerate(raw_models) if not m.strip()]
    if empty:
        raise SourceError(f"{path}: field 'models': model {empty[0]} has an empty name")
    corr = _scores_array(corr, path, task, value_budget(Path(path).stat().st_size))
    models = list(raw_models)
    if corr.ndim != 2 or corr.shape[1] != len(models):
        raise SourceError(f"{path}: {task}: correctness shape {corr.shape} does not match {len(models)} models")
    import pandas as pd

    items = [str(i) for i in range(corr.shape[0])]
    info = pd.DataFrame({"scenario": str(task), "subscenario": ""}, index=pd.Index(items, name="item"))
    try:
        return ResponseMatrix(corr.T.copy(), models, items, info)
    except ValueError as exc:
        raise SourceError(f"{path}: {task}: {exc}") from exc
