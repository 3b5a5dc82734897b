"""Argument types and flags shared by several commands (argparse ``type=`` callables, ``--debug``).

The shared parameters (k, seed, dims, design, binarize) take their rule from :mod:`tinybench_builder.params`,
so the command line refuses exactly what the API, a release config and a spec refuse.
"""

from __future__ import annotations

import argparse
import sys

from tinybench_builder import params

__all__ = ["int_range", "share", "binarize_threshold", "binarize_arg", "SEED", "ANCHORS", "DIMS", "N_SEEDS", "POSITIVE",
           "design_args", "add_debug", "add_common", "VersionOrValue", "verbosity", "program_version", "PROGRAM"]


def int_range(low: int, high: int | None = None):
    """An argparse type: an integer in [low, high]; the error names the option (argparse adds it)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low or (high is not None and value > high):
            span = f"at least {low}" if high is None else f"from {low} to {high}"
            raise argparse.ArgumentTypeError(f"must be an integer {span}, got {value}")
        return value
    parse.__name__ = "integer"
    return parse


def share(text: str) -> float:
    """An argparse type: a number in [0, 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a share in [0, 1), got {text}")
    return value


#: the shared parameters' rules (tinybench_builder/params.py) as argparse types: the same rule as the API's
SEED = params.SEED.arg
ANCHORS = params.ANCHORS.arg
DIMS = params.DIMS.arg
N_SEEDS = params.N_SEEDS.arg
binarize_threshold = params.binarize_arg
POSITIVE = int_range(1)


def design_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--design", choices=params.DESIGNS, default="stratified",
                        help="anchor design: a stratified random sample along item easiness, whose estimate stays "
                             "unbiased for models unlike the training ones (default), or the original k-means "
                             "anchors with gp-IRT as the score")
    parser.add_argument("--kmeans-seeds", type=N_SEEDS, default=10, metavar="N",
                        help="--design kmeans: k-means seeds tried; the best on the training models is kept (default 10)")


def binarize_arg(value: str | float | None) -> bool | float:
    """The parsed ``--binarize`` as ``fit_estimator``'s ``binarize``: absent False, 'auto' True, else the threshold."""
    if value is None:
        return False
    if value == "auto":
        return True
    return float(value)


#: what ``--version`` prints, on every command
PROGRAM = "tinybench-builder"


def program_version() -> str:
    from tinybench_builder import __version__

    return f"{PROGRAM} {__version__}"


def add_debug(parser: argparse.ArgumentParser, sub: bool = False) -> None:
    """``--debug``, accepted before and after the command: a subcommand's flag has no default of
    its own (``SUPPRESS``), so it never undoes a ``--debug`` given before the command."""
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS if sub else False,
                        help="show tracebacks instead of one-line errors")


def add_common(parser: argparse.ArgumentParser, sub: bool = False, *, version: bool = True,
               progress: bool = True) -> None:
    """The options of every command: ``--debug``, ``-v/--verbose``, ``-q/--quiet``, ``--progress``
    (``progress=False`` where the command has its own) and ``--version`` (``version=False``
    where the command's ``--version`` also takes a value: :class:`VersionOrValue`)."""
    group = parser.add_argument_group("output")
    group.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS if sub else 0,
                       help="more messages (debug details)")
    group.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS if sub else False,
                       help="only warnings and errors: no progress bars, no step messages")
    if progress:
        group.add_argument("--progress", action="store_true", default=argparse.SUPPRESS if sub else False,
                           help="progress bars even when stderr is not a terminal (default: only on a terminal)")
    if version:
        group.add_argument("--version", action="version", version=program_version(),
                           help="print the program's version and exit")
    add_debug(parser, sub=sub)


class VersionOrValue(argparse.Action):
    """``--version``: alone, the program's version (as on every command); with a value, the old
    spelling of ``--release-version`` (kept working, with a deprecation note)."""

    def __init__(self, option_strings, dest, new_option: str = "--release-version", **kwargs):
        self.new_option = new_option
        super().__init__(option_strings, dest, nargs="?", default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        if values is None:
            print(program_version())
            parser.exit()
        print(f"note: --version {values} is deprecated; use {self.new_option} {values} "
              "(--version alone prints the program's version)", file=sys.stderr)
        setattr(namespace, self.dest, values)


def verbosity(args: argparse.Namespace) -> int:
    """-1 with ``--quiet``, else the number of ``-v``."""
    return -1 if getattr(args, "quiet", False) else int(getattr(args, "verbose", 0) or 0)
