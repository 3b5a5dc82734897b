"""``fit``: IRT, anchors and calibration on a score matrix; writes the estimator side files."""

from __future__ import annotations

import argparse
from pathlib import Path

from tinybench_builder.progress import get_logger
from tinybench_builder.cli._args import ANCHORS, DIMS, SEED, add_common, binarize_arg, verbosity, binarize_threshold, design_args
from tinybench_builder.cli._run import command
log = get_logger(__name__)

__all__ = ["register", "run_fit"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``fit`` command to the subparsers ``sub``."""
    pf = sub.add_parser(
        "fit", help="fit IRT, select anchors and calibrate; write the estimator side files",
        description="Fit the IRT model on RESPONSES, draw K anchors, fit the regression and calibrate the "
                    "estimate and its interval on held-out training models (cross-fitting), and write the "
                    "estimator side files and a validation report to DIR.",
    )
    pf.add_argument("responses", metavar="RESPONSES",
                    help="parquet or CSV score table: wide (one row per model, one column per item) "
                         "or long (columns model, item, score); values in [0, 1], empty = not evaluated")
    pf.add_argument("--anchors", type=ANCHORS, required=True, metavar="K", help="number of anchor items (e.g. 100)")
    pf.add_argument("--out", required=True, metavar="DIR",
                    help="output folder; an existing one is replaced only if it is empty or was written by `fit` or "
                         "`build` and holds nothing else (checked before the fit)")
    pf.add_argument("--seed", type=SEED, default=0, help="random seed (default 0); the fit is deterministic for a seed")
    pf.add_argument("--dims", type=DIMS, default=None, metavar="D",
                    help="IRT dimension (default: chosen from 1, 2, 3, 5 by validation)")
    design_args(pf)
    pf.add_argument("--binarize", nargs="?", const="auto", default=None, metavar="THRESHOLD",
                    type=binarize_threshold,
                    help="binarise soft scores as the original did ('auto' = mean-preserving threshold, or a "
                         "threshold strictly between 0 and 1); default: use soft scores as soft labels")
    add_common(pf, sub=True)
    pf.set_defaults(func=run_fit)


@command
def run_fit(args: argparse.Namespace) -> int:
    from tinybench_builder.model import fit_estimator, report_markdown
    from tinybench_builder.layout import check_replaceable, write_fit_folder
    from tinybench_builder.read import ResponseMatrix

    check_replaceable(args.out)  # before the fit: only an empty folder or one we wrote is replaced
    matrix = ResponseMatrix.read(args.responses)
    log.info(f"read {matrix.shape[0]} models x {matrix.shape[1]} items from {args.responses}")
    result = fit_estimator(
        matrix, n_anchors=args.anchors, seed=args.seed, n_dims=args.dims, design=args.design,
        n_seeds=args.kmeans_seeds, binarize=binarize_arg(args.binarize), progress=verbosity(args) >= 0,
        metadata={"responses": Path(args.responses).name},
    )
    md = report_markdown(result.report)
    out = write_fit_folder(args.out, result.estimator, result.report, md)
    print(md)
    log.info(f"wrote {out}/ ({', '.join(sorted(p.name for p in out.iterdir()))})")
    return 0
