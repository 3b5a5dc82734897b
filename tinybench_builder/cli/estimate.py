"""``estimate``: full-score estimates from anchor results (score tables or lm-eval logs of a tiny task)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tinybench_builder.progress import get_logger
from tinybench_builder.cli._args import add_common
from tinybench_builder.cli._run import command
log = get_logger(__name__)

__all__ = ["register", "run_estimate"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``estimate`` command to the subparsers ``sub``."""
    pe = sub.add_parser(
        "estimate", help="estimate full scores from anchor results",
        description="Estimate full-benchmark scores of the models in SCORES from their anchor results. Only anchor "
                    "columns are read; missing anchors are allowed.",
    )
    pe.add_argument("dir", metavar="DIR",
                    help="folder written by `fit` or `build`, or a released version hub:OWNER/NAME@REVISION (its rows "
                         "and estimator from one commit)")
    pe.add_argument("scores", metavar="SCORES",
                    help="score table in the formats `fit` reads, one row per model (anchor columns, or full rows: "
                         "read by their anchor labels); or a folder of lm-evaluation-harness --log_samples output of "
                         "the tiny task (results are matched to the rows by document, so the order of the records "
                         "does not matter) or of the full benchmark (its anchor documents give the estimate; the "
                         "exact full score is shown too)")
    pe.add_argument("--task", default=None, metavar="NAME",
                    help="harness logs: the lm-eval task to read (default: the dataset's own, e.g. tinyMMLU)")
    pe.add_argument("--metric", default=None, metavar="NAME",
                    help="harness logs: per-sample metric (default: acc_norm; exact_match for tinyGSM8k, acc for "
                         "tinyTruthfulQA)")
    pe.add_argument("--filter", default=None, metavar="NAME", help="harness logs: lm-eval filter (tinyGSM8k: strict-match)")
    pe.add_argument("--results-from", default=None, metavar="VERSION|DESIGN",
                    help="the dataset version (e.g. 1.0.0) or design hash the results were made against: results "
                         "of another design are refused, naming both versions (an earlier version whose design "
                         "DIR keeps is accepted)")
    pe.add_argument("--out", metavar="FILE",
                    help="write the estimates to FILE instead of a table on stdout, in the format its name ends "
                         "with: .csv, .tsv, .json (a list of records) or .parquet; never one of the inputs")
    add_common(pe, sub=True)
    pe.set_defaults(func=run_estimate)


@command
def run_estimate(args: argparse.Namespace) -> int:
    from tinybench_builder.estimate import check_output, estimate_table, write_estimates

    if args.out:
        check_output(args.out, args.dir, args.scores)  # never replace an input; a known format

    if Path(args.scores).is_dir():  # lm-evaluation-harness logs of the tiny task(s)
        from tinybench_builder.estimate import estimate_from_logs

        frame, notes = estimate_from_logs(args.dir, args.scores, task=args.task, metric=args.metric,
                                          filter=args.filter, version=args.results_from)
        for note in notes:
            log.info(f"note: {note}")
    else:
        frame = estimate_table(args.dir, args.scores, version=args.results_from)
    if args.out:
        write_estimates(frame, args.out)
        log.info(f"wrote {len(frame)} estimate(s) to {args.out}")
    else:
        print(frame.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    return 0
