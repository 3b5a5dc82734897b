"""``simulate``: a score matrix simulated from a known IRT model (demos, tests)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tinybench_builder.progress import get_logger
from tinybench_builder.cli._args import DIMS, POSITIVE, SEED, add_common, int_range, share
from tinybench_builder.cli._run import command
log = get_logger(__name__)

__all__ = ["register", "run_simulate"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``simulate`` command to the subparsers ``sub``."""
    ps = sub.add_parser("simulate", help="write a score matrix simulated from a known IRT model (demos, tests)")
    ps.add_argument("--models", type=int_range(2), default=80, help="number of models (default 80)")
    ps.add_argument("--items", type=POSITIVE, default=2000, help="number of items (default 2000)")
    ps.add_argument("--dims", type=DIMS, default=2, help="IRT dimension of the simulation (default 2)")
    ps.add_argument("--seed", type=SEED, default=0, help="random seed (default 0)")
    ps.add_argument("--missing", type=share, default=0.0, help="share of entries left unevaluated (NaN), in [0, 1)")
    ps.add_argument("--subscenarios", type=int_range(0), default=0, help="split items into this many subscenarios")
    ps.add_argument("--soft", action="store_true",
                    help="soft scores: each score is the model's probability of success (default: 0/1 draws)")
    ps.add_argument("--out", required=True, metavar="FILE", help="score table to write (.parquet or .csv)")
    ps.add_argument("--holdout", type=int_range(0), default=0, metavar="N",
                    help="also write N held-out models drawn from the same item parameters (new models to "
                         "estimate: `estimate DIR new_models.parquet`)")
    ps.add_argument("--holdout-out", default=None, metavar="FILE",
                    help="where --holdout writes them (default: new_models.<ext> next to --out)")
    add_common(ps, sub=True)
    ps.set_defaults(func=run_simulate)


@command
def run_simulate(args: argparse.Namespace) -> int:
    from tinybench_builder.read import simulate_responses

    holdout_out = None
    if args.holdout:
        out = Path(args.out)
        holdout_out = Path(args.holdout_out) if args.holdout_out else out.with_name("new_models" + out.suffix)
        if holdout_out.resolve() == out.resolve():
            raise ValueError(f"--holdout-out {holdout_out} is the --out file; give another file name")
    elif args.holdout_out:
        raise ValueError("--holdout-out needs --holdout N (the number of held-out models)")
    matrix, params = simulate_responses(
        n_models=args.models, n_items=args.items, n_dims=args.dims, seed=args.seed,
        missing=args.missing, subscenarios=args.subscenarios, soft=args.soft, probabilities=False,
        holdout=args.holdout,
    )
    matrix.write(args.out)
    log.info(f"wrote {matrix.shape[0]} models x {matrix.shape[1]} items to {args.out}")
    if holdout_out is not None:
        params["holdout"].write(holdout_out)
        log.info(f"wrote {args.holdout} held-out models (the same item parameters, every item evaluated) to "
                 f"{holdout_out}")
    return 0
