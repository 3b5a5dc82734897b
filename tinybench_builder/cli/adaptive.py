"""``adaptive``: adaptive sessions over all items, answered from a table of known results."""

from __future__ import annotations

import argparse

from tinybench_builder.progress import get_logger
from tinybench_builder.cli._args import POSITIVE, SEED, add_common, int_range
from tinybench_builder.cli._run import command

log = get_logger(__name__)

__all__ = ["register", "run_adaptive_command", "half_width"]


def half_width(text: str) -> float:
    """``--target-halfwidth``: a number in (0, 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a half-width in (0, 1), got {text}")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``adaptive`` command to the subparsers ``sub``."""
    pa = sub.add_parser(
        "adaptive", help="adaptive evaluation over all items, answered from a table of known results",
        description="Run an adaptive session (TinyEstimator.adaptive: items drawn from ALL items of the "
                    "benchmark with known probabilities, an interval that does not rest on the IRT model) for "
                    "each model of TABLE, answered from the table: a model evaluated in full, to see what "
                    "adaptive evaluation gives at what cost, or the logs of a run. Prints the estimate as it "
                    "goes (stderr) and a table of the estimates (stdout, or --out). See docs/ADAPTIVE.md.",
    )
    pa.add_argument("dir", metavar="DIR", help="folder holding the estimator side files (written by `fit` or `build`)")
    pa.add_argument("--answers", required=True, metavar="TABLE",
                    help="score table in the formats `fit` reads (wide or long, parquet or CSV), one row per model, "
                         "the estimator's item ids as columns; a model's missing items are outside its session")
    pa.add_argument("--budget", type=int_range(1), default=None, metavar="N", help="items to ask per model")
    pa.add_argument("--target-halfwidth", type=half_width, default=None, metavar="H",
                    help="stop once the 95%% interval's half-width is at most H (approximate after such a stop: "
                         "prefer --budget when the interval matters)")
    pa.add_argument("--seed", type=SEED, default=0, help="seed of the draws (default 0); deterministic for a seed")
    pa.add_argument("--batch", type=POSITIVE, default=10, metavar="B", help="items per batch (default 10)")
    pa.add_argument("--warm-start", action="store_true",
                    help="start from the table's answers on the tiny split's anchors (not counted in --budget)")
    pa.add_argument("--model", action="append", metavar="NAME", help="only this model of the table (repeatable)")
    pa.add_argument("--out", metavar="FILE", help="write the estimates to FILE (.csv, .tsv, .json or .parquet)")
    add_common(pa, sub=True)  # -q: no per-batch progress lines
    pa.set_defaults(func=run_adaptive_command)


@command
def run_adaptive_command(args: argparse.Namespace) -> int:
    from tinybench_builder.estimate import check_output, run_adaptive, write_estimates

    if args.budget is None and args.target_halfwidth is None:
        raise ValueError("give --budget N (items to ask) or --target-halfwidth H (or both)")
    if args.out:
        check_output(args.out, args.dir, args.answers)  # never replace an input; a known format
    frame = run_adaptive(args.dir, args.answers, budget=args.budget, target_halfwidth=args.target_halfwidth,
                         seed=args.seed, batch=args.batch, warm_start=args.warm_start, models=args.model,
                         progress=log.info, notes=lambda line: log.warning(f"note: {line}"))
    if args.out:
        write_estimates(frame, args.out)
        log.info(f"wrote {len(frame)} estimate(s) to {args.out}")
    else:
        print(frame.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    return 0
