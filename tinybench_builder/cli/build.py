"""``build``: fit, select anchors and write a Hub-ready tiny dataset folder (data, estimator, card)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tinybench_builder.progress import get_logger
from tinybench_builder import params
from tinybench_builder.cli._args import ANCHORS, DIMS, SEED, VersionOrValue, add_common, design_args, verbosity
from tinybench_builder.cli._report import validation_table
from tinybench_builder.cli._run import command
log = get_logger(__name__)

__all__ = ["register", "run_build"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``build`` command to the subparsers ``sub``."""
    pb = sub.add_parser(
        "build", help="fit, select anchors and write a Hub-ready tiny dataset folder (data, estimator, card)",
        description="Fit the estimator of the registered tiny benchmark NAME (or of the benchmark a --spec file "
                    "describes) on RESPONSES, select its anchors "
                    "and write DIR: parquet data per config/split (the tiny split in anchor order), the estimator "
                    "side files and estimator.py, validation report and plot, dataset card and manifest.json. "
                    "Same inputs and seed give a byte-identical folder. See docs/BUILD.md.",
    )
    pb.add_argument("name", metavar="NAME", nargs="?", default=None,
                    help="registered benchmark (tinyMMLU, tinyAlpacaEval, ...); or give --spec")
    pb.add_argument("--spec", metavar="FILE.toml", default=None,
                    help="your own benchmark, described by a spec file (name, licence, citation, item id "
                         "column, prompt template, lm-eval task: see tinybench_builder/registry/specs.py and specs/)")
    pb.add_argument("--responses", required=True, nargs="+", metavar="SOURCE",
                    help="score table (parquet/CSV) or evaluation outputs that `ingest` reads; for a bundle also "
                         "CONFIG=SOURCE per config (the bundle is built from the configs given)")
    pb.add_argument("--content", action="append", default=[], metavar="SPLIT=PATH",
                    help="content of a split: local parquet/CSV/JSON in the upstream schema (an item_id column "
                         "matching the responses, or upstream row order) or hub:OWNER/NAME; CONFIG/SPLIT=... for "
                         "bundles; repeatable (default: the registry's upstream Hub dataset)")
    pb.add_argument("--anchors", type=ANCHORS, default=None, metavar="K", help="number of anchors (default: the registry's)")
    pb.add_argument("--seed", type=SEED, default=0, help="random seed (default 0)")
    pb.add_argument("--out", required=True, metavar="DIR",
                    help="output folder; an existing one is replaced only if it is empty or was written by `fit` or "
                         "`build` and holds nothing else (checked before the fit)")
    pb.add_argument("--release-version", dest="release_version", default="0.0.0", metavar="X.Y.Z",
                    help="dataset version for the manifest and card (default 0.0.0)")
    pb.add_argument("--version", dest="release_version", action=VersionOrValue, metavar="X.Y.Z",
                    help="alone: print the program's version; with X.Y.Z: the old spelling of --release-version")
    pb.add_argument("--previous", default=None, metavar="DIR",
                    help="folder of the previous version (card changelog; default: --update-from)")
    pb.add_argument("--update-from", default=None, metavar="PREVIOUS_DIR",
                    help="keep the design of this previous version's folder (its items, anchor ids and order, strata "
                         "and weights: the same tiny-split rows, so results logged against it stay valid) and refit "
                         "the IRT model, the regression and the calibration on RESPONSES; new items join the IRT "
                         "fit only, a new config of a bundle is calibrated against the kept IRT parameters")
    pb.add_argument("--repo-id", default=None, metavar="OWNER/NAME",
                    help="Hub repository shown in the card and the lm-eval task files (default: NAME in your Hub token's namespace, or local/NAME without a token: never another organisation's)")
    pb.add_argument("--item-order", choices=params.ITEM_ORDERS, default="upstream",
                    help="how response item ids index the content rows: upstream row ids (default) or row positions "
                         "in the v0.3 harness evaluation order (Open LLM Leaderboard v1 details)")
    pb.add_argument("--dims", type=DIMS, default=None, metavar="D", help="IRT dimension (default: chosen by validation)")
    design_args(pb)
    add_common(pb, sub=True, version=False)
    pb.set_defaults(func=run_build)


@command
def run_build(args: argparse.Namespace) -> int:
    from tinybench_builder.registry import get_benchmark
    from tinybench_builder.dataset import BuildOptions
    from tinybench_builder.model import FitOptions
    from tinybench_builder.dataset import parse_content_args
    from tinybench_builder.dataset import build_benchmark

    content = parse_content_args(args.content)
    if (args.name is None) == (args.spec is None):
        raise ValueError("build takes a registered benchmark NAME or --spec FILE.toml (one of them)")
    if args.spec is not None:
        from tinybench_builder.registry import load_spec_file

        spec = load_spec_file(args.spec)
    else:
        spec = get_benchmark(args.name)
    options = BuildOptions(anchors=args.anchors, seed=args.seed, version=args.release_version, repo_id=args.repo_id,
                           item_order=args.item_order, fit=FitOptions(n_dims=args.dims, design=args.design,
                                                         n_seeds=args.kmeans_seeds))
    out = build_benchmark(spec, _responses_arg(spec, args.responses), content, options, out=args.out,
                          previous=args.previous, progress=verbosity(args) >= 0,
                          update_from=args.update_from)
    log.info(f"wrote {out}/ ({', '.join(sorted(p.name for p in Path(out).iterdir()))})")
    print(validation_table({spec.name: out}))
    return 0


def _responses_arg(spec, values: list[str]):
    """``--responses``: one source, several, or (a bundle) ``CONFIG=SOURCE`` per config."""
    names = {c.name for c in spec.configs}
    keyed = [v.partition("=") for v in values]
    if len(names) > 1 and all(k in names and sep and not Path(v).exists() for v, (k, sep, _) in zip(values, keyed)):
        out: dict[str, list[str]] = {}
        for k, _, path in keyed:
            out.setdefault(k, []).append(path)
        return {k: p[0] if len(p) == 1 else p for k, p in out.items()}
    return values[0] if len(values) == 1 else values
