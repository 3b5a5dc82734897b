"""``import-original``: the original release's tinyBenchmarks.pkl as estimator side files."""

from __future__ import annotations

import argparse

from tinybench_builder.progress import get_logger
from tinybench_builder.cli._args import add_common
from tinybench_builder.cli._run import command
log = get_logger(__name__)

__all__ = ["register", "run_import_original"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``import-original`` command to the subparsers ``sub``."""
    po = sub.add_parser(
        "import-original", help="the original release's tinyBenchmarks.pkl as estimator side files",
        description="Convert the original tinyBenchmarks package's tinyBenchmarks.pkl (read with a restricted "
                    "unpickler: numpy arrays and containers only) into estimator side files and estimator.py in "
                    "DIR, so that TinyEstimator reproduces the original evaluate(y, bench): the same irt, p-IRT "
                    "and gp-IRT given its parameters (no interval: the original has none). See tinybench_builder/dataset/original.py.",
    )
    po.add_argument("pickle", metavar="PKL", help="the original package's tinyBenchmarks.pkl")
    po.add_argument("--bench", required=True, metavar="NAME",
                    help="the original's evaluate() name: lb, mmlu, helm_lite, alpaca, or an lb scenario "
                         "(truthfulqa, gsm8k, winogrande, arc, hellaswag)")
    po.add_argument("--out", required=True, metavar="DIR", help="output folder (side files and estimator.py)")
    po.add_argument("--check", action="store_true",
                    help="--bench mmlu: compare with the original's published numbers for y = [1 if i %% 3 == 0 "
                         "else 0 for i in range(100)] (exit 1 if they differ)")
    add_common(po, sub=True)
    po.set_defaults(func=run_import_original)


@command
def run_import_original(args: argparse.Namespace) -> int:
    from tinybench_builder.dataset import check_reference, import_original

    est, out = import_original(args.pickle, args.bench, args.out)
    log.info(f"imported {args.bench!r}: {len(est.item_ids)} items, {len(est.anchor_ids)} anchors, IRT dimension "
          f"{est.n_dims}, scenarios {', '.join(est.scenarios)} -> {out}/")
    if args.check:
        if args.bench != "mmlu":
            raise ValueError("--check compares with the published reference of --bench mmlu")
        lines = check_reference(est)
        print("\n".join(lines))
        return 0 if lines[-1].endswith("is reproduced") else 1
    return 0
