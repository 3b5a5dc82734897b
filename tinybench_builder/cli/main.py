"""Command line: ``python -m tinybench_builder {ingest,fit,estimate,adaptive,build,import-original,release,simulate} ...`` (``tinybench-builder``).

One module per command (:mod:`tinybench_builder.cli.ingest`, :mod:`~tinybench_builder.cli.fit`,
:mod:`~tinybench_builder.cli.estimate`, :mod:`~tinybench_builder.cli.adaptive`, :mod:`~tinybench_builder.cli.build`, :mod:`~tinybench_builder.cli.original`,
:mod:`~tinybench_builder.cli.release`, :mod:`~tinybench_builder.cli.simulate`), each registering its subparser and a
thin handler over the library; this module assembles them. Errors become one line in one place
(:mod:`tinybench_builder.cli._run`). ``release.py`` (repository root) is :func:`release_main`: the
``release`` command under the program name ``release.py``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tinybench_builder.cli import adaptive, build, estimate, fit, ingest, original, release, simulate
from tinybench_builder.cli._args import add_common

__all__ = ["main", "release_main", "build_parser", "COMMANDS"]

#: the command modules, in the order ``--help`` lists them
COMMANDS = (ingest, fit, estimate, adaptive, build, original, release, simulate)

EPILOG = """\
examples:
  python -m tinybench_builder simulate --models 80 --items 2000 --holdout 20 --out sim.parquet   # + new_models.parquet
  python -m tinybench_builder fit sim.parquet --anchors 100 --out tiny_sim
  python -m tinybench_builder estimate tiny_sim new_models.parquet --out estimates.csv
  python -m tinybench_builder build tinyAlpacaEval --responses alpaca_eval_2.parquet \
      --content test=alpaca_eval.parquet --out build/tinyAlpacaEval
  python -m tinybench_builder estimate build/tinyMMLU lm_eval_output/      # lm-eval logs of tinyMMLU
  python -m tinybench_builder adaptive tiny_sim --answers new_models.parquet --budget 200   # adaptive, answered from a table
  python -m tinybench_builder release --config release-local.toml --release-version 1.0.0   # = python release.py ...
"""


def build_parser() -> argparse.ArgumentParser:
    invoked = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    p = argparse.ArgumentParser(
        prog=invoked if invoked and invoked not in ("__main__.py", "-c") else "python -m tinybench_builder",
        description="Build tiny benchmarks: read evaluation results, fit IRT, pick anchors, estimate full scores.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(p)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS:
        module.register(sub)
    return p


def install_signal_handlers() -> None:
    """SIGTERM ends a command as Ctrl-C does: with its ``finally`` blocks (staging folders and
    temporary files removed, nothing half-written left), exit status 143. Python's default
    would stop at once and leave them. Only in the main thread, and only over the default."""
    import signal
    import threading

    def terminated(signum, frame):
        print("terminated (SIGTERM): nothing half-written is left", file=sys.stderr)
        raise SystemExit(128 + signum)

    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, terminated)


def main(argv: list[str] | None = None) -> int:
    install_signal_handlers()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return args.func(args)  # every handler is wrapped by tinybench_builder.cli._run.command: errors -> one line


def release_main(argv: list[str] | None = None) -> int:
    """``release.py``: the ``release`` command under the program name ``release.py``."""
    install_signal_handlers()
    parser = release.add_release_arguments(argparse.ArgumentParser(
        prog="release.py", description=release.RELEASE_DESCRIPTION, epilog=release.RELEASE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
