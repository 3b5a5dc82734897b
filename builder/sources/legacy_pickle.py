"""The legacy tinyBenchmarks pickle (SOURCE_FORMATS.md section 6).

``{'models': [name, ...], 'data': {name: {'correctness': array(n_items, n_models)}}}``
(``tutorials/lb.pickle``, ``wmdp_data.pkl``). Pickles can run arbitrary code when loaded, so
the file is read with :class:`RestrictedUnpickler`, which admits only the globals needed to
rebuild numpy arrays (``_reconstruct``, ``ndarray``, ``dtype``, ``_frombuffer``, ``scalar``)
and builtin containers; anything else (``os.system``, ``builtins.eval``, ...) raises a
:class:`~builder.sources.SourceError` before it is called.

``task`` picks the ``data`` entry (required when there are several; the error lists them).
Item ids are the row positions ``0 .. n_items-1``.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

import numpy as np

from . import SourceError
from ..matrix import ResponseMatrix

#: (module, name) pairs the unpickler may resolve
ALLOWED_GLOBALS: frozenset[tuple[str, str]] = frozenset(
    [(mod, "_reconstruct") for mod in ("numpy.core.multiarray", "numpy._core.multiarray")]
    + [(mod, "scalar") for mod in ("numpy.core.multiarray", "numpy._core.multiarray")]
    + [(mod, "_frombuffer") for mod in ("numpy.core.numeric", "numpy._core.numeric")]
    + [("numpy", "ndarray"), ("numpy", "dtype")]
    + [("numpy", n) for n in ("float64", "float32", "int64", "int32", "bool_")]
    + [("numpy.dtypes", n) for n in ("Float64DType", "Float32DType", "Int64DType", "Int32DType", "BoolDType",
                                     "ObjectDType", "StrDType")]
    + [("builtins", n) for n in ("dict", "list", "tuple", "set", "frozenset", "bytearray", "bytes", "str",
                                 "int", "float", "bool", "complex", "slice", "range")]
    + [("_codecs", "encode")]  # protocol <= 2 pickles store bytes as _codecs.encode(str, 'latin1')
    + [("collections", "OrderedDict")]
)


class RestrictedUnpickler(pickle.Unpickler):
    """Unpickler that resolves only :data:`ALLOWED_GLOBALS` (numpy arrays + containers)."""

    def __init__(self, file, source: str = "pickle"):
        super().__init__(file)
        self.source = source

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in ALLOWED_GLOBALS:
            raise SourceError(
                f"{self.source}: refused to load global {module}.{name}: the pickle may run code; "
                "only numpy arrays and builtin containers are allowed"
            )
        if module.startswith("numpy.core.") or module.startswith("numpy._core."):
            # numpy 2 renamed numpy.core to numpy._core; resolve whichever this numpy has
            leaf = module.split(".", 2)[2]
            for base in ("numpy._core", "numpy.core"):
                try:
                    mod = __import__(f"{base}.{leaf}", fromlist=[name])
                    return getattr(mod, name)
                except (ImportError, AttributeError):
                    continue
        return super().find_class(module, name)


def safe_load(path: str | Path) -> Any:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        return RestrictedUnpickler(io.BytesIO(raw), source=str(path)).load()
    except SourceError:
        raise
    except Exception as exc:  # UnpicklingError, EOFError (truncated), ValueError ...
        raise SourceError(f"{path}: not a readable pickle ({type(exc).__name__}: {exc}); truncated or corrupt?") from exc


def entries(path: str | Path) -> list[str]:
    data = _load_checked(path)
    return list(data["data"])


def _load_checked(path: str | Path) -> dict:
    data = safe_load(path)
    if not isinstance(data, dict) or "models" not in data or "data" not in data or not isinstance(data["data"], dict):
        raise SourceError(f"{path}: not a tinyBenchmarks pickle (expected keys 'models' and 'data')")
    return data


def read(path: str | Path, task: str | None = None) -> ResponseMatrix:
    """Read one entry of a legacy tinyBenchmarks pickle as a matrix (models x items)."""
    data = _load_checked(path)
    names = list(data["data"])
    if task is None:
        if len(names) != 1:
            raise SourceError(f"{path}: the pickle holds {len(names)} entries; choose one with --task: {', '.join(map(str, names))}")
        task = names[0]
    if task not in data["data"]:
        raise SourceError(f"{path}: no entry {task!r}; entries: {', '.join(map(str, names))}")
    entry = data["data"][task]
    corr = entry.get("correctness") if isinstance(entry, dict) else None
    if corr is None:
        raise SourceError(f"{path}: entry {task!r} has no 'correctness' array")
    corr = np.asarray(corr, dtype=np.float64)
    models = [str(m) for m in data["models"]]
    if corr.ndim != 2 or corr.shape[1] != len(models):
        raise SourceError(f"{path}: {task}: correctness shape {corr.shape} does not match {len(models)} models")
    import pandas as pd

    items = [str(i) for i in range(corr.shape[0])]
    info = pd.DataFrame({"scenario": task, "subscenario": ""}, index=pd.Index(items, name="item"))
    try:
        return ResponseMatrix(corr.T.copy(), models, items, info)
    except ValueError as exc:
        raise SourceError(f"{path}: {task}: {exc}") from exc
