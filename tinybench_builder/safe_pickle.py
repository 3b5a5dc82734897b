"""Loading a pickle that may only hold plain data: numpy arrays and builtin containers.

Pickles can run arbitrary code when loaded, so :func:`safe_load` reads one with
:class:`RestrictedUnpickler`, which admits only the globals needed to rebuild numpy arrays
(``_reconstruct``, ``ndarray``, ``dtype``, ``_frombuffer``, ``scalar``) and builtin containers;
anything else (``os.system``, ``builtins.eval``, ...) raises a
:class:`~tinybench_builder.errors.SourceError` before it is called. Memory is bounded by the file:
every size a pickle asks for is checked against :func:`value_budget` before anything of that size
is allocated. The readers' legacy tinyBenchmarks pickles
(:mod:`tinybench_builder.read.sources.legacy_pickle`) and the original package's estimator pickle
(:mod:`tinybench_builder.dataset.original`) are read through it.

This kernel module imports only :mod:`tinybench_builder.errors` (and numpy).
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

import numpy as np

from tinybench_builder.errors import SourceError

__all__ = ["ALLOWED_GLOBALS", "RestrictedUnpickler", "value_budget", "safe_load"]

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


#: constructors whose arguments can ask for a large object: checked against the budget
_SIZED = frozenset({"bytes", "bytearray", "list", "tuple", "set", "frozenset", "dict", "_reconstruct"})


def value_budget(file_size: int) -> int:
    """How many values (or bytes) a pickle of ``file_size`` bytes may declare: 16 per byte of
    the file (a pickled array stores at least one byte per value), at least 2**20."""
    return max(1 << 20, 16 * int(file_size))


class RestrictedUnpickler(pickle.Unpickler):
    """Unpickler that resolves only :data:`ALLOWED_GLOBALS` (numpy arrays + containers), and whose
    constructors refuse sizes beyond ``budget`` values (see :func:`value_budget`)."""

    def __init__(self, file, source: str = "pickle", budget: int | None = None):
        super().__init__(file)
        self.source = source
        self.budget = budget if budget is not None else 1 << 30

    def _check_size(self, n: int, what: str) -> None:
        if n > self.budget:
            raise SourceError(f"{self.source}: the pickle asks for {what} of {n:,} elements, more than a file "
                              f"of its size can hold ({self.budget:,}); refusing to build it")

    def _sized(self, func, name: str):
        """``func`` with its size arguments checked first (ints, ranges, array shapes)."""
        def call(*args, **kwargs):
            for a in args[:1]:
                if isinstance(a, int) and not isinstance(a, bool) and name in ("bytes", "bytearray"):
                    self._check_size(a, name)
                elif isinstance(a, range):
                    self._check_size(len(a), f"{name}(range)")
            if name == "_reconstruct" and len(args) >= 2:
                self._check_size(_shape_size(args[1]), "an array")
            return func(*args, **kwargs)
        return call

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in ALLOWED_GLOBALS:
            raise SourceError(
                f"{self.source}: refused to load global {module}.{name}: the pickle may run code; "
                "only numpy arrays and builtin containers are allowed"
            )
        found = self._resolve(module, name)
        return self._sized(found, name) if name in _SIZED else found

    def _resolve(self, module: str, name: str) -> Any:
        if module.startswith(("numpy.core.", "numpy._core.")):
            # numpy 2 renamed numpy.core to numpy._core; resolve whichever this numpy has
            leaf = module.split(".", 2)[2]
            for base in ("numpy._core", "numpy.core"):
                try:
                    mod = __import__(f"{base}.{leaf}", fromlist=[name])
                    return getattr(mod, name)
                except (ImportError, AttributeError):
                    continue
        return super().find_class(module, name)


def _shape_size(shape: Any) -> int:
    try:
        dims = [int(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,))]
    except (TypeError, ValueError):
        return 0
    return int(np.prod([max(d, 0) for d in dims], dtype=object)) if dims else 1


def _what_it_is(raw: bytes) -> str | None:
    """A hint for a file that is not a pickle at all."""
    if not raw:
        return "the file is empty"
    if raw.startswith(b"PK\x03\x04"):
        return "it is a zip archive (an .npz?), not a pickle"
    if raw.startswith(b"PAR1"):
        return "it is a parquet file, not a pickle: give it as a score table (.parquet)"
    try:
        text = raw[:64].decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text.isprintable() or all(c.isprintable() or c in "\r\n\t" for c in text):
        return f"it looks like a text file (it starts with {text[:30]!r}), not a pickle"
    return None


def safe_load(path: str | Path) -> Any:
    """The pickle at ``path``, loaded by :class:`RestrictedUnpickler` within the file's :func:`value_budget`;
    one :class:`SourceError` naming the file for anything else (code, a truncated or foreign file)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        return RestrictedUnpickler(io.BytesIO(raw), source=str(path), budget=value_budget(len(raw))).load()
    except SourceError:
        raise
    except MemoryError:
        raise SourceError(f"{path}: the pickle asks for more memory than this machine has; refusing it") from None
    except RecursionError:
        raise SourceError(f"{path}: the pickle is nested too deeply to be a tinyBenchmarks pickle") from None
    except Exception as exc:  # UnpicklingError, EOFError (truncated), ValueError ...
        hint = _what_it_is(raw)
        if hint:
            raise SourceError(f"{path}: not a readable pickle: {hint}") from exc
        raise SourceError(f"{path}: not a readable pickle ({type(exc).__name__}: {exc}); truncated or corrupt?") from exc
