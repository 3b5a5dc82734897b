"""The one place where the command line turns an exception into an exit status and one line.

Every command handler is wrapped by :func:`command`: it runs the handler and maps what escapes
it (``--debug`` re-raises instead, for the traceback):

* a :class:`~tinybench_builder.errors.TinybenchError` -> ``error: <message>``, its own
  :attr:`~tinybench_builder.errors.TinybenchError.exit_code` (2 bad input, 1 a failed release step, 3 an
  ingest that lost models);
* another library's error that the command counts as bad input (by default ``ValueError`` and
  ``OSError``: a missing or unreadable file, a bad value) -> exit 2;
* ``MemoryError`` (pyarrow's allocation failures included) -> ``error: out of memory ...``, exit 4;
* ``KeyboardInterrupt`` -> the command's own note, exit 130; a closed stdout (``| head``) -> 141;
* anything else -> ``error: unexpected <Type>: <message> (run with --debug ...)``, exit 1.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from typing import Callable

from tinybench_builder.errors import OUT_OF_MEMORY_EXIT, TinybenchError, describe_error, one_line

__all__ = ["command", "run_command", "error_line", "BAD_INPUT"]

#: the foreign exceptions that most commands count as bad input (exit 2)
BAD_INPUT: tuple[type[BaseException], ...] = (ValueError, OSError, RecursionError)

Handler = Callable[[argparse.Namespace], "int | None"]


def error_line(exc: BaseException, bad_input: tuple[type[BaseException], ...] = BAD_INPUT) -> tuple[int, str]:
    """``(exit status, the error line without "error: ")`` for an exception that escaped a command."""
    if isinstance(exc, TinybenchError):
        return exc.exit_code, one_line(exc, 2000)
    if isinstance(exc, RecursionError) and isinstance(exc, bad_input):
        return 2, "an input is nested too deeply to be read (a JSON or pickle file of thousands of levels?)"
    if isinstance(exc, bad_input):
        return 2, one_line(exc)
    if isinstance(exc, MemoryError):  # pyarrow's allocation failures are MemoryErrors too
        detail = one_line(exc, 300) if str(exc).strip() else "a memory allocation failed"
        return OUT_OF_MEMORY_EXIT, (f"out of memory ({detail}): the step needs more memory than this process may "
                                    "use; free memory or raise the limit (docs/INGEST.md gives what reading a "
                                    "table needs)")
    return 1, f"unexpected {describe_error(exc, 600)} (run with --debug for the traceback)"


def run_command(func: Handler, args: argparse.Namespace, *, bad_input: tuple[type[BaseException], ...] = BAD_INPUT,
                interrupted: str = "interrupted") -> int:
    """Run ``func(args)``; what escapes it becomes an exit status and one ``error:`` line on stderr.

    First the output is set up from ``-q``/``-v``/``--progress`` (:func:`tinybench_builder.progress.configure`).
    """
    from tinybench_builder.cli._args import verbosity
    from tinybench_builder.progress import configure

    configure(verbosity(args), "on" if getattr(args, "progress", False) is True else "auto")
    try:
        return int(func(args) or 0)
    except BrokenPipeError:
        return _stdout_closed()
    except KeyboardInterrupt:
        print(interrupted, file=sys.stderr)
        return 130
    except Exception as exc:
        if getattr(args, "debug", False):
            raise
        code, line = error_line(exc, bad_input)
        print(f"error: {line}", file=sys.stderr)
        return code


def command(func: Handler | None = None, *, bad_input: tuple[type[BaseException], ...] = BAD_INPUT,
            interrupted: str = "interrupted"):
    """Decorate a command handler ``(args) -> exit status`` with :func:`run_command`."""
    def wrap(f: Handler) -> Callable[[argparse.Namespace], int]:
        @functools.wraps(f)
        def run(args: argparse.Namespace) -> int:
            return run_command(f, args, bad_input=bad_input, interrupted=interrupted)
        return run

    return wrap(func) if func is not None else wrap


def _stdout_closed() -> int:
    """The reader of our output went away (``estimate ... | head``): stop quietly, as ``cat`` does.

    stdout is pointed at /dev/null so that Python's final flush does not complain again.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141  # 128 + SIGPIPE, what a shell reports for a command stopped by a closed pipe
