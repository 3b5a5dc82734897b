"""Argument types and flags shared by several commands (argparse ``type=`` callables, ``--debug``)."""

from __future__ import annotations

import argparse

__all__ = ["int_range", "share", "binarize_threshold", "binarize_arg", "SEED", "POSITIVE", "design_args", "add_debug"]


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


def binarize_threshold(text: str) -> str | float:
    """``--binarize``: 'auto' or a threshold strictly between 0 and 1."""
    if text == "auto":
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes 'auto' or a threshold number, got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(
            f"the threshold must lie strictly between 0 and 1 (a score >= it counts as 1), got {text}: "
            "any other threshold makes every score 0 or every score 1")
    return value


SEED = int_range(0, 2**32 - 1)
POSITIVE = int_range(1)


def design_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--design", choices=("stratified", "kmeans"), default="stratified",
                        help="anchor design: a stratified random sample along item easiness, whose estimate stays "
                             "unbiased for models unlike the training ones (default), or the original k-means "
                             "anchors with gp-IRT as the score")
    parser.add_argument("--kmeans-seeds", type=POSITIVE, default=10, metavar="N",
                        help="--design kmeans: k-means seeds tried; the best on the training models is kept (default 10)")


def binarize_arg(value: str | float | None):
    if value is None:
        return False
    if value == "auto":
        return True
    return float(value)


def add_debug(parser: argparse.ArgumentParser, sub: bool = False) -> None:
    """``--debug``, accepted before and after the command: a subcommand's flag has no default of
    its own (``SUPPRESS``), so it never undoes a ``--debug`` given before the command."""
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS if sub else False,
                        help="show tracebacks instead of one-line errors")
