"""Command line: ``python -m builder {ingest,fit,estimate,simulate} ...``.

Argument parsing only; the work is done by the modules it calls.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from . import __version__

EPILOG = """\
examples:
  python -m builder simulate --models 80 --items 2000 --out sim.parquet
  python -m builder fit sim.parquet --anchors 100 --out tiny_sim
  python -m builder estimate tiny_sim new_models.parquet --out estimates.csv
"""


def _cmd_fit(args: argparse.Namespace) -> int:
    from .fitting import fit_estimator, report_markdown
    from .matrix import ResponseMatrix

    matrix = ResponseMatrix.read(args.responses)
    print(f"read {matrix.shape[0]} models x {matrix.shape[1]} items from {args.responses}", file=sys.stderr)
    result = fit_estimator(
        matrix, n_anchors=args.anchors, seed=args.seed, n_dims=args.dims, n_seeds=args.kmeans_seeds,
        binarize=_binarize_arg(args.binarize), embedding=args.embedding, progress=not args.quiet,
        metadata={"responses": Path(args.responses).name},
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    result.estimator.save(out)
    shutil.copyfile(Path(__file__).with_name("estimator.py"), out / "estimator.py")
    (out / "validation.json").write_text(json.dumps(result.report, indent=1) + "\n", encoding="utf-8")
    md = report_markdown(result.report)
    (out / "validation.md").write_text(md, encoding="utf-8")
    print(md)
    print(f"wrote {out}/ ({', '.join(sorted(p.name for p in out.iterdir()))})", file=sys.stderr)
    return 0


def _binarize_arg(value: str | None):
    if value is None:
        return False
    if value == "auto":
        return True
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"--binarize takes 'auto' or a threshold number, got {value!r}") from None


def _cmd_estimate(args: argparse.Namespace) -> int:
    from .estimate_io import estimate_table, write_estimates

    frame = estimate_table(args.dir, args.scores)
    if args.out:
        write_estimates(frame, args.out)
        print(f"wrote {len(frame)} estimate(s) to {args.out}", file=sys.stderr)
    else:
        print(frame.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    return 0


def _cmd_simulate(args: argparse.Namespace) -> int:
    from .simulate import simulate_responses

    matrix, _ = simulate_responses(
        n_models=args.models, n_items=args.items, n_dims=args.dims, seed=args.seed,
        missing=args.missing, subscenarios=args.subscenarios,
    )
    matrix.write(args.out)
    print(f"wrote {matrix.shape[0]} models x {matrix.shape[1]} items to {args.out}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m builder",
        description="Build tiny benchmarks: read evaluation results, fit IRT, pick anchors, estimate full scores.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    try:
        from .ingest import add_ingest_arguments, run_ingest
    except ImportError:  # the readers are optional at this stage of the package
        pass
    else:
        pi = sub.add_parser("ingest", help="read evaluation outputs into a score matrix (wide parquet)",
                            description="Read evaluation outputs (lm-eval logs, Open LLM Leaderboard details, "
                                        "AlpacaEval, HELM, legacy pickles, tables) into one wide parquet matrix.")
        add_ingest_arguments(pi)
        pi.set_defaults(func=run_ingest)

    pf = sub.add_parser(
        "fit", help="fit IRT, select anchors and calibrate; write the estimator side files",
        description="Fit the IRT model on RESPONSES, select K anchors, calibrate gp-IRT and its interval on "
                    "held-out training models, and write the estimator side files and a validation report to DIR.",
    )
    pf.add_argument("responses", metavar="RESPONSES",
                    help="parquet or CSV score table: wide (one row per model, one column per item) "
                         "or long (columns model, item, score); values in [0, 1], empty = not evaluated")
    pf.add_argument("--anchors", type=int, required=True, metavar="K", help="number of anchor items (e.g. 100)")
    pf.add_argument("--out", required=True, metavar="DIR", help="output folder")
    pf.add_argument("--seed", type=int, default=0, help="random seed (default 0); the fit is deterministic for a seed")
    pf.add_argument("--dims", type=int, default=None, metavar="D",
                    help="IRT dimension (default: chosen from 1, 2, 3, 5 by validation)")
    pf.add_argument("--kmeans-seeds", type=int, default=10, metavar="N",
                    help="k-means seeds tried; the best on the training models is kept (default 10)")
    pf.add_argument("--binarize", nargs="?", const="auto", default=None, metavar="THRESHOLD",
                    help="binarise soft scores as the original did ('auto' = mean-preserving threshold); "
                         "default: use soft scores as soft labels")
    pf.add_argument("--embedding", choices=("irt", "profile"), default="irt",
                    help="item embedding for k-means: [a_j, b_j] (irt, default) or predicted-correctness profiles")
    pf.add_argument("--quiet", action="store_true", help="no progress bar")
    pf.set_defaults(func=_cmd_fit)

    pe = sub.add_parser(
        "estimate", help="estimate full scores from anchor results",
        description="Estimate full-benchmark scores of the models in SCORES from their anchor results. Only anchor "
                    "columns are read; missing anchors are allowed.",
    )
    pe.add_argument("dir", metavar="DIR", help="folder written by `fit` (or a tiny dataset folder)")
    pe.add_argument("scores", metavar="SCORES", help="score table in the formats `fit` reads, one row per model")
    pe.add_argument("--out", metavar="FILE", help="write CSV (or JSON if FILE ends in .json) instead of a table on stdout")
    pe.set_defaults(func=_cmd_estimate)

    ps = sub.add_parser("simulate", help="write a score matrix simulated from a known IRT model (demos, tests)")
    ps.add_argument("--models", type=int, default=80)
    ps.add_argument("--items", type=int, default=2000)
    ps.add_argument("--dims", type=int, default=2)
    ps.add_argument("--seed", type=int, default=0)
    ps.add_argument("--missing", type=float, default=0.0, help="share of entries left unevaluated (NaN)")
    ps.add_argument("--subscenarios", type=int, default=0, help="split items into this many subscenarios")
    ps.add_argument("--out", required=True, metavar="FILE")
    ps.set_defaults(func=_cmd_simulate)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError, NotADirectoryError, IsADirectoryError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
