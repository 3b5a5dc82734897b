"""``release``: build, validate and (``--push``) publish every benchmark of a release config.

``release.py`` at the repository root is :func:`builder.cli.main.release_main`: this command
under the program name ``release.py``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from builder.cli._args import add_debug
from builder.cli._run import command

__all__ = ["register", "add_release_arguments", "run_release_command", "RELEASE_DESCRIPTION", "RELEASE_EPILOG"]

RELEASE_DESCRIPTION = """\
Build every tiny benchmark listed in a release config, validate each folder (manifest hashes,
dataset card, load_dataset round trip of every config/split, estimator side files) and, with
--push, publish each to <org>/<name> on the Hub: one atomic commit, then the tag vX.Y.Z.

The Hub endpoint and token come from the huggingface_hub environment (HF_ENDPOINT, HF_TOKEN or a
saved login). Re-running a release is safe: identical content makes no new commit, an
interrupted release is completed, and an existing tag with other content is refused."""

RELEASE_EPILOG = """\
examples:
  python release.py --config release-local.toml --version 1.0.0          # build + validate
  python release.py --config release.toml --version 1.1.0 --push         # + publish
  python release.py --config release.toml --version 1.1.0 --only tinyAlpacaEval --out /tmp/rel

exit status: 0 success; 1 build, validation or publishing failed; 2 bad arguments or config.
See docs/RELEASE.md."""


@command(bad_input=(), interrupted="interrupted: no tag was created for an unfinished repository; re-run to finish")
def run_release_command(args: argparse.Namespace) -> int:
    """``release``: only a bad argument or config (:class:`~builder.errors.ConfigError`) is exit 2;
    any other failure (a build, the validation, the Hub) is exit 1 (``bad_input=()``)."""
    from builder.release import default_out_dir, load_config, normalize_version, run_release

    version = normalize_version(args.version)
    config = load_config(args.config).select(args.only)
    print(config.describe_inputs(), file=sys.stderr)  # which data, before the slow part
    summary = run_release(config, version, out=args.out, push=args.push,
                          previous="none" if args.no_previous else "always" if args.fetch_previous else "auto",
                          progress=not args.quiet)
    out = Path(args.out) if args.out else default_out_dir(version)
    lines = [f"release {summary['tag']} ({len(summary['benchmarks'])} benchmark(s)) in {out}/", config.describe_inputs()]
    for name, b in summary["benchmarks"].items():
        pub = b.get("published")
        state = f"{pub['action']} {pub['commit'][:12]}" if pub else "built (not pushed)"
        lines.append(f"  {name:<28} {b['repo_id']:<40} {state}")
    if not args.push:
        lines.append("not published (add --push to publish)")
    print("\n".join(lines))
    return 0


def add_release_arguments(p: argparse.ArgumentParser, sub: bool = False) -> argparse.ArgumentParser:
    p.add_argument("--config", required=True, metavar="TOML", help="release config ([release] org + [[benchmark]] tables)")
    p.add_argument("--version", required=True, metavar="X.Y.Z", help="release version; the Hub tag is vX.Y.Z")
    p.add_argument("--push", action="store_true", help="publish to the Hub after building and validating")
    p.add_argument("--out", metavar="DIR", help="output folder (default: build/release-X.Y.Z); one sub-folder per benchmark")
    p.add_argument("--only", action="append", metavar="NAME", help="release only this benchmark of the config (repeatable)")
    prev = p.add_mutually_exclusive_group()
    prev.add_argument("--fetch-previous", action="store_true",
                      help="fetch the previous release from the Hub for the card's changelog even without --push "
                           "(with --push it is fetched by default)")
    prev.add_argument("--no-previous", action="store_true",
                      help="with --push, do not fetch the previous release (the card's changelog then has no "
                           "comparison)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    add_debug(p, sub=sub)
    p.set_defaults(func=run_release_command)
    return p


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``release`` command to the subparsers ``sub``."""
    add_release_arguments(sub.add_parser(
        "release", help="build, validate and (--push) publish every benchmark of a release config",
        description=RELEASE_DESCRIPTION, epilog=RELEASE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    ), sub=True)
