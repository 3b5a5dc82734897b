"""``release``: build, validate and (``--push``) publish every benchmark of a release config.

``release.py`` at the repository root is :func:`tinybench_builder.cli.main.release_main`: this command
under the program name ``release.py``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tinybench_builder.progress import get_logger
from tinybench_builder.cli._args import VersionOrValue, add_common, verbosity
from tinybench_builder.cli._report import validation_table
from tinybench_builder.cli._run import command

log = get_logger(__name__)

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
  python release.py --config release-local.toml --release-version 1.0.0  # build + validate
  python release.py --config release.toml --release-version 1.1.0 --push  # + publish
  python release.py --config release.toml --release-version 1.1.0 --only tinyAlpacaEval --out /tmp/rel

exit status: 0 success; 1 build, validation or publishing failed; 2 bad arguments or config.
See docs/RELEASE.md."""


@command(bad_input=(), interrupted="interrupted: no tag was created for an unfinished repository; re-run to finish")
def run_release_command(args: argparse.Namespace) -> int:
    """``release``: only a bad argument or config (:class:`~tinybench_builder.errors.ConfigError`) is exit 2;
    any other failure (a build, the validation, the Hub) is exit 1 (``bad_input=()``)."""
    from tinybench_builder.release import ConfigError, default_out_dir, load_config, normalize_version, run_release

    if args.release_version is None:
        raise ConfigError("give the release version: --release-version X.Y.Z (the Hub tag is vX.Y.Z)")
    version = normalize_version(args.release_version)
    config = load_config(args.config).select(args.only)
    log.info(config.describe_inputs())  # which data, before the slow part
    if config.org_from != "config":
        log.info(f"note: no [release] org in {config.path.name}: repositories are {config.org}/<name> "
                 + ("(your Hub token's namespace)" if config.org_from == "token"
                    else "(a local release: give org, or log in to the Hub, to publish)"))
    summary = run_release(config, version, out=args.out, push=args.push,
                          previous="none" if args.no_previous else "always" if args.fetch_previous else "auto",
                          progress=verbosity(args) >= 0)
    out = Path(args.out) if args.out else default_out_dir(version)
    lines = [f"release {summary['tag']} ({len(summary['benchmarks'])} benchmark(s)) in {out}/", config.describe_inputs()]
    for name, b in summary["benchmarks"].items():
        pub = b.get("published")
        state = f"{pub['action']} {pub['commit'][:12]}" if pub else "built (not pushed)"
        lines.append(f"  {name:<28} {b['repo_id']:<40} {state}")
    if not args.push:
        lines.append("not published (add --push to publish)")
    lines.append(validation_table({name: b["folder"] for name, b in summary["benchmarks"].items() if b.get("folder")}))
    print("\n".join(lines))
    return 0


def add_release_arguments(p: argparse.ArgumentParser, sub: bool = False) -> argparse.ArgumentParser:
    p.add_argument("--config", required=True, metavar="TOML", help="release config ([release] org + [[benchmark]] tables)")
    p.add_argument("--release-version", dest="release_version", default=None, metavar="X.Y.Z",
                   help="release version; the Hub tag is vX.Y.Z (required)")
    p.add_argument("--version", dest="release_version", action=VersionOrValue, metavar="X.Y.Z",
                   help="alone: print the program's version; with X.Y.Z: the old spelling of --release-version")
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
    add_common(p, sub=sub, version=False)
    p.set_defaults(func=run_release_command)
    return p


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``release`` command to the subparsers ``sub``."""
    add_release_arguments(sub.add_parser(
        "release", help="build, validate and (--push) publish every benchmark of a release config",
        description=RELEASE_DESCRIPTION, epilog=RELEASE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    ), sub=True)
