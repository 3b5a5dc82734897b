"""The package's errors: one home for every exception the tools raise on purpose.

Every one derives from :class:`TinybenchError`; those where the *input* is at fault (a file, an
option, a config, a spec) are also :class:`ValueError` (through :class:`InputError`), so plain
``except ValueError`` code keeps working. Each class carries the exit status the command line
gives it (:attr:`TinybenchError.exit_code`): 2 for bad input, 1 for a failure of the work
itself (a refused tag, a failed upload), 3 for an ingest that lost some models, 4 for out of
memory (:class:`OutOfMemory`; any ``MemoryError``, pyarrow's allocation failures included) and
5 for a wait that reached its bound (:class:`WaitTimeout`: a cluster, a scheduler, the Hub). The command line
turns any of them into one ``error:`` line in one place (:mod:`tinybench_builder.cli._run`).

The classes stay importable where they were first defined (``tinybench_builder.read.SourceError``,
``tinybench_builder.release.ConfigError``, ...): those modules re-export them from here.

This module imports nothing of the package (every stage may import it).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

__all__ = [
    "TinybenchError", "InputError",
    "BuildError", "MatrixFormatError", "CsvFormatError", "SourceError", "SpecError", "OriginalFormatError",
    "ReleaseError", "ConfigError",
    "ClusterError", "ModelUnavailable", "ReadFailed", "IncompleteIngest", "OutOfMemory", "WaitTimeout",
    "OUT_OF_MEMORY_EXIT", "TIMEOUT_EXIT",
    "PeersUnavailableError", "PeerWorkerError",
    "one_line", "describe_error", "nested_too_deeply", "TOO_DEEP",
]


class TinybenchError(Exception):
    """The base of every error the package raises on purpose (the message says what to fix)."""

    #: exit status of the command line for this error
    exit_code: int = 1


class InputError(TinybenchError, ValueError):
    """The input is at fault: a file, an option, a config or a spec (exit status 2)."""

    exit_code = 2


# ----------------------------------------------------------------------------- bad input (exit 2)
class BuildError(InputError):
    """Inputs or settings that cannot make a tiny dataset (mismatched ids, missing columns...)."""


class MatrixFormatError(InputError):
    """A score table that cannot be read as a response matrix (bad layout or values)."""


class CsvFormatError(InputError):
    """A CSV file whose layout cannot be read without guessing (the message names the file)."""


class SourceError(InputError):
    """An evaluation output that cannot be read (truncated, corrupt, inconsistent).

    The message always names the offending file (and the line for JSON-lines files).
    """


class SpecError(InputError):
    """A custom benchmark spec that cannot describe a tiny benchmark (the message names the key)."""


class OriginalFormatError(InputError):
    """A pickle that is not the original package's ``tinyBenchmarks.pkl`` layout."""


# ----------------------------------------------------------------------------- releases
class ReleaseError(TinybenchError):
    """A release that cannot go on (refused tag, failed upload, a folder that is not ours):
    the command line prints its message and exits 1 without a traceback."""


class ConfigError(ReleaseError, InputError):
    """A bad argument or release config (exit status 2)."""

    exit_code = 2


# ----------------------------------------------------------------------------- reading at scale
class ClusterError(TinybenchError, RuntimeError):
    """The Dask cluster cannot be used: Dask missing, scheduler unreachable, workers unusable (exit 2)."""

    exit_code = 2


class ModelUnavailable(TinybenchError):
    """A model that cannot be read, and that retrying will not help (no details repo on the Hub,
    a gated repo, no details for the chosen task). It is reported as a failed model at once."""


class ReadFailed(TinybenchError):
    """A unit's read failed; the message already describes the error and its cause (built where
    it happened: a pickled exception loses its ``__cause__`` on the way from a worker)."""


class IncompleteIngest(TinybenchError):
    """Some models could not be read even after their retries (exit status 3).

    Attributes
    ----------
    matrix : ResponseMatrix or None
        The matrix of every other model (None when no model could be read); its notes name
        each failed model.
    failures : list of UnitFailure
        Model, source, last error and attempts of each failed unit, in source order.
    """

    exit_code = 3

    def __init__(self, matrix: Any, failures: list[Any]):
        self.matrix = matrix
        self.failures = failures
        first = failures[0]
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        super().__init__(f"{len(failures)} model(s) could not be read: {first.model}: {first.error}{more}")


# ----------------------------------------------------------------------------- resources and waits
#: exit status of the command line for out of memory and for a bounded wait that ran out
OUT_OF_MEMORY_EXIT = 4
TIMEOUT_EXIT = 5


class OutOfMemory(TinybenchError, MemoryError):
    """A step needed more memory than the process could get; the message says which step and
    what to do (exit status 4). Anything partly written was removed."""

    exit_code = OUT_OF_MEMORY_EXIT


class WaitTimeout(TinybenchError, TimeoutError):
    """A wait reached its bound (a scheduler that does not answer, a cluster without workers, a
    stalled Hub); the message says what was waited for, how long, and the setting (exit status 5)."""

    exit_code = TIMEOUT_EXIT


# ----------------------------------------------------------------------------- benchmark scripts
class PeersUnavailableError(TinybenchError, RuntimeError):
    """Some results are not cached and there is no BenchPred interpreter to compute them."""


class PeerWorkerError(TinybenchError, RuntimeError):
    """The BenchPred worker could not run (bad venv, crash, protocol violation)."""


# ----------------------------------------------------------------------------- one line
def one_line(exc: BaseException | str, limit: int = 600) -> str:
    """An exception's message (or a text) on one line, whitespace collapsed, at most ``limit``
    characters (then ``...``); the class name when the message is empty."""
    text = " ".join(str(exc).split())
    if not text and isinstance(exc, BaseException):
        text = type(exc).__name__
    return text if len(text) <= limit else text[:limit] + "..."


def describe_error(exc: BaseException, limit: int = 400) -> str:
    """``Type (HTTP status): message`` on one line: an unexpected or a client library's error.

    The message is the exception's own text (a Hub client error's never holds the request
    headers, so no token is shown).
    """
    status = getattr(getattr(exc, "response", None), "status_code", None)
    return f"{type(exc).__name__}{f' (HTTP {status})' if status else ''}: {one_line(str(exc), limit)}"


#: what a RecursionError while reading an input means (said with the file's name)
TOO_DEEP = "the input is nested too deeply to be read (a JSON or pickle structure of thousands of levels)"


@contextmanager
def nested_too_deeply(path: Any, error: type[InputError] = InputError) -> Iterator[None]:
    """Turn a ``RecursionError`` raised in the block into ``error`` naming ``path`` (bad input: exit 2, never retried).

    A structure thousands of levels deep can load (the pickle reader is not recursive) and still
    make Python recurse later, when it is checked or described (``repr`` of a deep model list);
    the reader of ``path`` knows the file, the command line's last resort does not.
    """
    try:
        yield
    except RecursionError:
        raise error(f"{path}: {TOO_DEEP}") from None
