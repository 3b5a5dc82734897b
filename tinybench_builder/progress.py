"""Progress bars and messages: one implementation for the whole package.

* **Bars** (:func:`bar`): tqdm, on stderr, only where someone watches them: on a terminal by
  default, never in a log file or CI output (no carriage returns or cursor escapes there),
  always with ``--progress``, never with ``--quiet`` (:func:`set_progress`). A caller that
  passes ``enabled=False`` (a library call with ``progress=False``) gets no bar either.
* **Messages** go through :mod:`logging`, the logger ``"tinybench_builder"`` and its children
  (:func:`get_logger`). Its one handler writes with ``tqdm.write``, so a message never lands in
  the middle of a bar. By default it shows INFO and above as the plain message (what the
  command line printed before there was logging); :func:`configure` is the command line's
  ``-q`` (warnings and errors only, no bars) and ``-v`` (debug messages too). A program that
  uses the package sets the level as usual: ``logging.getLogger("tinybench_builder").setLevel(...)``.
* **Other libraries' bars** (``datasets``, ``huggingface_hub``) are silenced unless bars are on
  (:func:`quiet_libraries`).

A kernel module: it imports nothing of the package (tqdm lazily).
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any, Iterable

__all__ = ["bar", "get_logger", "set_progress", "progress_enabled", "configure", "quiet_libraries", "PROGRESS_MODES"]

LOGGER_NAME = "tinybench_builder"
#: ``auto``: bars on a terminal only; ``on``: always (``--progress``); ``off``: never (``--quiet``)
PROGRESS_MODES = ("auto", "on", "off")
_state = {"progress": "auto"}


class _TqdmHandler(logging.Handler):
    """Writes each record with ``tqdm.write`` to the current ``sys.stderr`` (never through a bar)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
            try:
                from tqdm import tqdm

                tqdm.write(text, file=sys.stderr)
            except ImportError:  # pragma: no cover
                print(text, file=sys.stderr)
        except Exception:  # noqa: BLE001 - logging must never raise (logging.Handler's own rule)
            self.handleError(record)


def _package_logger() -> logging.Logger:
    logger = logging.getLogger(LOGGER_NAME)
    if not any(isinstance(h, _TqdmHandler) for h in logger.handlers):
        handler = _TqdmHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.propagate = False  # one line per message, even where the root logger has handlers
        if logger.level == logging.NOTSET:
            logger.setLevel(logging.INFO)
    return logger


def get_logger(name: str) -> logging.Logger:
    """The logger of a module (``get_logger(__name__)``), a child of the package's ``"tinybench_builder"``."""
    _package_logger()
    return logging.getLogger(name if name.startswith(LOGGER_NAME) else f"{LOGGER_NAME}.{name}")


def set_progress(mode: str) -> None:
    """``"auto"`` (bars on a terminal), ``"on"`` or ``"off"``, for every later :func:`bar`."""
    if mode not in PROGRESS_MODES:
        raise ValueError(f"progress must be one of {', '.join(PROGRESS_MODES)}, got {mode!r}")
    _state["progress"] = mode
    if mode != "on":
        quiet_libraries()


def progress_enabled(requested: bool = True) -> bool:
    """Whether a bar shows now: the caller wants one, and the mode (on, or auto on a terminal) allows it."""
    if not requested or _state["progress"] == "off":
        return False
    if _state["progress"] == "on":
        return True
    stream = sys.stderr
    return bool(getattr(stream, "isatty", lambda: False)())


def bar(iterable: Iterable[Any] | None = None, *, total: int | None = None, desc: str | None = None,
        unit: str = "it", enabled: bool = True, force: bool = False, file: Any = None, **kwargs: Any) -> Any:
    """A tqdm bar on stderr (or ``file``), disabled unless :func:`progress_enabled` (``enabled``: the
    caller's wish) or ``force`` (a bar asked for by name, ``ingest --progress bar``)."""
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, unit=unit, disable=not (force or progress_enabled(enabled)),
                file=file if file is not None else sys.stderr, dynamic_ncols=True, **kwargs)


def quiet_libraries() -> None:
    """No progress bars from ``datasets`` and ``huggingface_hub``, and only their errors logged.

    ``datasets`` is not imported for this (it is slow to import): until it is, its environment
    switches say the same (``HF_DATASETS_DISABLE_PROGRESS_BARS``, ``DATASETS_VERBOSITY``).
    """
    try:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    except ImportError:  # pragma: no cover
        pass
    if "datasets" in sys.modules:
        import datasets

        datasets.disable_progress_bars()
        datasets.logging.set_verbosity_error()
    else:
        os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("DATASETS_VERBOSITY", "error")


def configure(verbosity: int = 0, progress: str = "auto") -> None:
    """The command line's setup: ``verbosity`` -1 (``-q``: warnings and errors, no bars), 0 (the
    messages of each step), 1 or more (``-v``: debug messages too); ``progress`` as in :func:`set_progress`."""
    logger = _package_logger()
    logger.setLevel(logging.WARNING if verbosity < 0 else logging.DEBUG if verbosity > 0 else logging.INFO)
    set_progress("off" if verbosity < 0 else progress)
