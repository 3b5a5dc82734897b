"""Command line: ``python -m builder {ingest,fit,estimate,adaptive,build,import-original,release,simulate} ...`` (``tinybench``).

Argument parsing only; the work is done by the modules it calls. ``release.py`` (repository
root) is :func:`release_main`: the ``release`` subcommand under the program name ``release.py``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from builder import __version__

EPILOG = """\
examples:
  python -m builder simulate --models 80 --items 2000 --out sim.parquet
  python -m builder fit sim.parquet --anchors 100 --out tiny_sim
  python -m builder estimate tiny_sim new_models.parquet --out estimates.csv
  python -m builder build tinyAlpacaEval --responses alpaca_eval_2.parquet \
      --content test=alpaca_eval.parquet --out build/tinyAlpacaEval
  python -m builder estimate build/tinyMMLU lm_eval_output/      # lm-eval logs of tinyMMLU
  python -m builder adaptive tiny_sim --answers new_models.parquet --budget 200   # adaptive, answered from a table
  python -m builder release --config release-local.toml --version 1.0.0   # = python release.py ...
"""

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


def int_range(low: int, high: int | None = None):
    """An argparse type: an integer in [low, high]; the error names the option (argparse adds it)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low or (high is not None and value > high):
            span = f"at least {low}" if high is None else f"from {low} to {high}"
            raise argparse.ArgumentTypeError(f"must be an integer {span}, got {value}")
        return value
    parse.__name__ = "integer"
    return parse


def share(text: str) -> float:
    """An argparse type: a number in [0, 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a share in [0, 1), got {text}")
    return value


def binarize_threshold(text: str) -> str | float:
    """``--binarize``: 'auto' or a threshold strictly between 0 and 1."""
    if text == "auto":
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes 'auto' or a threshold number, got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(
            f"the threshold must lie strictly between 0 and 1 (a score >= it counts as 1), got {text}: "
            "any other threshold makes every score 0 or every score 1")
    return value


SEED = int_range(0, 2**32 - 1)
POSITIVE = int_range(1)


def _design_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--design", choices=("stratified", "kmeans"), default="stratified",
                        help="anchor design: a stratified random sample along item easiness, whose estimate stays "
                             "unbiased for models unlike the training ones (default), or the original k-means "
                             "anchors with gp-IRT as the score")
    parser.add_argument("--kmeans-seeds", type=POSITIVE, default=10, metavar="N",
                        help="--design kmeans: k-means seeds tried; the best on the training models is kept (default 10)")


def _cmd_fit(args: argparse.Namespace) -> int:
    from builder.model import fit_estimator, report_markdown
    from builder.layout import check_replaceable, write_fit_folder
    from builder.read import ResponseMatrix

    check_replaceable(args.out)  # before the fit: only an empty folder or one we wrote is replaced
    matrix = ResponseMatrix.read(args.responses)
    print(f"read {matrix.shape[0]} models x {matrix.shape[1]} items from {args.responses}", file=sys.stderr)
    result = fit_estimator(
        matrix, n_anchors=args.anchors, seed=args.seed, n_dims=args.dims, design=args.design,
        n_seeds=args.kmeans_seeds, binarize=_binarize_arg(args.binarize), progress=not args.quiet,
        metadata={"responses": Path(args.responses).name},
    )
    md = report_markdown(result.report)
    out = write_fit_folder(args.out, result.estimator, result.report, md)
    print(md)
    print(f"wrote {out}/ ({', '.join(sorted(p.name for p in out.iterdir()))})", file=sys.stderr)
    return 0


def _binarize_arg(value: str | float | None):
    if value is None:
        return False
    if value == "auto":
        return True
    return float(value)


def _cmd_estimate(args: argparse.Namespace) -> int:
    from builder.estimate import check_output, estimate_table, write_estimates

    if args.out:
        check_output(args.out, args.dir, args.scores)  # never replace an input; a known format

    if Path(args.scores).is_dir():  # lm-evaluation-harness logs of the tiny task(s)
        from builder.estimate import estimate_from_logs

        frame, notes = estimate_from_logs(args.dir, args.scores, task=args.task, metric=args.metric,
                                          filter=args.filter)
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
    else:
        frame = estimate_table(args.dir, args.scores)
    if args.out:
        write_estimates(frame, args.out)
        print(f"wrote {len(frame)} estimate(s) to {args.out}", file=sys.stderr)
    else:
        print(frame.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    return 0


def _cmd_adaptive(args: argparse.Namespace) -> int:
    from builder.estimate import check_output, run_adaptive, write_estimates

    if args.budget is None and args.target_halfwidth is None:
        raise ValueError("give --budget N (items to ask) or --target-halfwidth H (or both)")
    if args.out:
        check_output(args.out, args.dir, args.answers)
    say = (lambda line: None) if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    frame = run_adaptive(args.dir, args.answers, budget=args.budget, target_halfwidth=args.target_halfwidth,
                         seed=args.seed, batch=args.batch, warm_start=args.warm_start, models=args.model,
                         progress=say, notes=lambda line: print(f"note: {line}", file=sys.stderr))
    if args.out:
        write_estimates(frame, args.out)
        print(f"wrote {len(frame)} estimate(s) to {args.out}", file=sys.stderr)
    else:
        print(frame.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    return 0


def half_width(text: str) -> float:
    """``--target-halfwidth``: a number in (0, 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a half-width in (0, 1), got {text}")
    return value


def _cmd_simulate(args: argparse.Namespace) -> int:
    from builder.read import simulate_responses

    matrix, _ = simulate_responses(
        n_models=args.models, n_items=args.items, n_dims=args.dims, seed=args.seed,
        missing=args.missing, subscenarios=args.subscenarios,
    )
    matrix.write(args.out)
    print(f"wrote {matrix.shape[0]} models x {matrix.shape[1]} items to {args.out}", file=sys.stderr)
    return 0


def _cmd_build(args: argparse.Namespace) -> int:
    from builder.registry import get_benchmark
    from builder.dataset import BuildOptions
    from builder.model import FitOptions
    from builder.dataset import parse_content_args
    from builder.dataset import build_benchmark

    content = parse_content_args(args.content)
    if (args.name is None) == (args.spec is None):
        raise ValueError("build takes a registered benchmark NAME or --spec FILE.toml (one of them)")
    if args.spec is not None:
        from builder.registry import load_spec_file

        spec = load_spec_file(args.spec)
    else:
        spec = get_benchmark(args.name)
    options = BuildOptions(anchors=args.anchors, seed=args.seed, version=args.version, repo_id=args.repo_id,
                           item_order=args.item_order, fit=FitOptions(n_dims=args.dims, design=args.design,
                                                         n_seeds=args.kmeans_seeds))
    out = build_benchmark(spec, _responses_arg(spec, args.responses), content, options, out=args.out,
                          previous=args.previous, progress=not args.quiet)
    print(f"wrote {out}/ ({', '.join(sorted(p.name for p in Path(out).iterdir()))})", file=sys.stderr)
    return 0


def _cmd_import_original(args: argparse.Namespace) -> int:
    from builder.dataset import check_reference, import_original

    est, out = import_original(args.pickle, args.bench, args.out)
    print(f"imported {args.bench!r}: {len(est.item_ids)} items, {len(est.anchor_ids)} anchors, IRT dimension "
          f"{est.n_dims}, scenarios {', '.join(est.scenarios)} -> {out}/", file=sys.stderr)
    if args.check:
        if args.bench != "mmlu":
            raise ValueError("--check compares with the published reference of --bench mmlu")
        lines = check_reference(est)
        print("\n".join(lines))
        return 0 if lines[-1].endswith("is reproduced") else 1
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


def _cmd_release(args: argparse.Namespace) -> int:
    from builder.release import describe_error
    from builder.release import run_release
    from builder.release import ConfigError, ReleaseError, default_out_dir, load_config, normalize_version

    try:
        version = normalize_version(args.version)
        config = load_config(args.config).select(args.only)
        summary = run_release(config, version, out=args.out, push=args.push,
                              previous="none" if args.no_previous else "always" if args.fetch_previous else "auto", progress=not args.quiet)
    except ReleaseError as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, ConfigError) else 1
    except KeyboardInterrupt:
        print("interrupted: no tag was created for an unfinished repository; re-run to finish", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug or an unexpected library error: still one line, no token
        if args.debug:
            raise
        print(f"error: unexpected {describe_error(exc)} (run with --debug for the traceback)", file=sys.stderr)
        return 1
    out = Path(args.out) if args.out else default_out_dir(version)
    lines = [f"release {summary['tag']} ({len(summary['benchmarks'])} benchmark(s)) in {out}/"]
    for name, b in summary["benchmarks"].items():
        pub = b.get("published")
        state = f"{pub['action']} {pub['commit'][:12]}" if pub else "built (not pushed)"
        lines.append(f"  {name:<28} {b['repo_id']:<40} {state}")
    if not args.push:
        lines.append("not published (add --push to publish)")
    print("\n".join(lines))
    return 0


def add_release_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
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
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    p.set_defaults(func=_cmd_release)
    return p


def build_parser() -> argparse.ArgumentParser:
    invoked = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    p = argparse.ArgumentParser(
        prog=invoked if invoked and invoked not in ("__main__.py", "-c") else "python -m builder",
        description="Build tiny benchmarks: read evaluation results, fit IRT, pick anchors, estimate full scores.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument("--debug", action="store_true", help="show tracebacks instead of one-line errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    try:
        from builder.cli.ingest import INGEST_EPILOG, add_ingest_arguments, run_ingest
    except ImportError:  # the readers are optional at this stage of the package
        pass
    else:
        pi = sub.add_parser("ingest", help="read evaluation outputs into a score matrix (wide parquet)",
                            description="Read evaluation outputs (lm-eval logs, Open LLM Leaderboard details, "
                                        "AlpacaEval, HELM, legacy pickles, tables) into one wide parquet matrix, "
                                        "model by model on a local process pool or a Dask cluster.",
                            epilog=INGEST_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
        add_ingest_arguments(pi)
        pi.set_defaults(func=run_ingest)

    pf = sub.add_parser(
        "fit", help="fit IRT, select anchors and calibrate; write the estimator side files",
        description="Fit the IRT model on RESPONSES, draw K anchors, fit the regression and calibrate the "
                    "estimate and its interval on held-out training models (cross-fitting), and write the "
                    "estimator side files and a validation report to DIR.",
    )
    pf.add_argument("responses", metavar="RESPONSES",
                    help="parquet or CSV score table: wide (one row per model, one column per item) "
                         "or long (columns model, item, score); values in [0, 1], empty = not evaluated")
    pf.add_argument("--anchors", type=POSITIVE, required=True, metavar="K", help="number of anchor items (e.g. 100)")
    pf.add_argument("--out", required=True, metavar="DIR",
                    help="output folder; an existing one is replaced only if it is empty or was written by `fit` or "
                         "`build` and holds nothing else (checked before the fit)")
    pf.add_argument("--seed", type=SEED, default=0, help="random seed (default 0); the fit is deterministic for a seed")
    pf.add_argument("--dims", type=POSITIVE, default=None, metavar="D",
                    help="IRT dimension (default: chosen from 1, 2, 3, 5 by validation)")
    _design_args(pf)
    pf.add_argument("--binarize", nargs="?", const="auto", default=None, metavar="THRESHOLD",
                    type=binarize_threshold,
                    help="binarise soft scores as the original did ('auto' = mean-preserving threshold, or a "
                         "threshold strictly between 0 and 1); default: use soft scores as soft labels")
    pf.add_argument("--quiet", action="store_true", help="no progress bar")
    pf.set_defaults(func=_cmd_fit)

    pe = sub.add_parser(
        "estimate", help="estimate full scores from anchor results",
        description="Estimate full-benchmark scores of the models in SCORES from their anchor results. Only anchor "
                    "columns are read; missing anchors are allowed.",
    )
    pe.add_argument("dir", metavar="DIR", help="folder written by `fit` (or a tiny dataset folder)")
    pe.add_argument("scores", metavar="SCORES",
                    help="score table in the formats `fit` reads, one row per model; or a folder of "
                         "lm-evaluation-harness --log_samples output of the tiny task (results are matched "
                         "to the rows by document, so the order of the records does not matter)")
    pe.add_argument("--task", default=None, metavar="NAME",
                    help="harness logs: the lm-eval task to read (default: the dataset's own, e.g. tinyMMLU)")
    pe.add_argument("--metric", default=None, metavar="NAME",
                    help="harness logs: per-sample metric (default: acc_norm; exact_match for tinyGSM8k, acc for "
                         "tinyTruthfulQA)")
    pe.add_argument("--filter", default=None, metavar="NAME", help="harness logs: lm-eval filter (tinyGSM8k: strict-match)")
    pe.add_argument("--out", metavar="FILE",
                    help="write the estimates to FILE instead of a table on stdout, in the format its name ends "
                         "with: .csv, .tsv, .json (a list of records) or .parquet; never one of the inputs")
    pe.set_defaults(func=_cmd_estimate)

    pa = sub.add_parser(
        "adaptive", help="adaptive evaluation over all items, answered from a table of known results",
        description="Run an adaptive session (TinyEstimator.adaptive: items drawn from ALL items of the "
                    "benchmark with known probabilities, an interval that does not rest on the IRT model) for "
                    "each model of ANSWERS, answered from the table: a model evaluated in full, to see what "
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
    pa.add_argument("--quiet", action="store_true", help="no per-batch progress lines")
    pa.set_defaults(func=_cmd_adaptive)

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
                         "column, prompt template, lm-eval task: see builder/registry/specs.py and specs/)")
    pb.add_argument("--responses", required=True, nargs="+", metavar="SOURCE",
                    help="score table (parquet/CSV) or evaluation outputs that `ingest` reads; for a bundle also "
                         "CONFIG=SOURCE per config (the bundle is built from the configs given)")
    pb.add_argument("--content", action="append", default=[], metavar="SPLIT=PATH",
                    help="content of a split: local parquet/CSV/JSON in the upstream schema (an item_id column "
                         "matching the responses, or upstream row order) or hub:OWNER/NAME; CONFIG/SPLIT=... for "
                         "bundles; repeatable (default: the registry's upstream Hub dataset)")
    pb.add_argument("--anchors", type=POSITIVE, default=None, metavar="K", help="number of anchors (default: the registry's)")
    pb.add_argument("--seed", type=SEED, default=0, help="random seed (default 0)")
    pb.add_argument("--out", required=True, metavar="DIR",
                    help="output folder; an existing one is replaced only if it is empty or was written by `fit` or "
                         "`build` and holds nothing else (checked before the fit)")
    pb.add_argument("--version", default="0.0.0", help="dataset version for the manifest and card (default 0.0.0)")
    pb.add_argument("--previous", default=None, metavar="DIR", help="folder of the previous version (card changelog)")
    pb.add_argument("--repo-id", default=None, metavar="OWNER/NAME",
                    help="Hub repository shown in the card (default tinyBenchmarks/NAME)")
    pb.add_argument("--item-order", choices=("upstream", "harness_v1"), default="upstream",
                    help="how response item ids index the content rows: upstream row ids (default) or row positions "
                         "in the v0.3 harness evaluation order (Open LLM Leaderboard v1 details)")
    pb.add_argument("--dims", type=POSITIVE, default=None, metavar="D", help="IRT dimension (default: chosen by validation)")
    _design_args(pb)
    pb.add_argument("--quiet", action="store_true", help="no progress bar")
    pb.set_defaults(func=_cmd_build)

    po = sub.add_parser(
        "import-original", help="the original release's tinyBenchmarks.pkl as estimator side files",
        description="Convert the original tinyBenchmarks package's tinyBenchmarks.pkl (read with a restricted "
                    "unpickler: numpy arrays and containers only) into estimator side files and estimator.py in "
                    "DIR, so that TinyEstimator reproduces the original evaluate(y, bench): the same irt, p-IRT "
                    "and gp-IRT given its parameters (no interval: the original has none). See builder/dataset/original.py.",
    )
    po.add_argument("pickle", metavar="PKL", help="the original package's tinyBenchmarks.pkl")
    po.add_argument("--bench", required=True, metavar="NAME",
                    help="the original's evaluate() name: lb, mmlu, helm_lite, alpaca, or an lb scenario "
                         "(truthfulqa, gsm8k, winogrande, arc, hellaswag)")
    po.add_argument("--out", required=True, metavar="DIR", help="output folder (side files and estimator.py)")
    po.add_argument("--check", action="store_true",
                    help="--bench mmlu: compare with the original's published numbers for y = [1 if i %% 3 == 0 "
                         "else 0 for i in range(100)] (exit 1 if they differ)")
    po.set_defaults(func=_cmd_import_original)

    add_release_arguments(sub.add_parser(
        "release", help="build, validate and (--push) publish every benchmark of a release config",
        description=RELEASE_DESCRIPTION, epilog=RELEASE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    ))

    ps = sub.add_parser("simulate", help="write a score matrix simulated from a known IRT model (demos, tests)")
    ps.add_argument("--models", type=int_range(2), default=80, help="number of models (default 80)")
    ps.add_argument("--items", type=POSITIVE, default=2000, help="number of items (default 2000)")
    ps.add_argument("--dims", type=POSITIVE, default=2, help="IRT dimension of the simulation (default 2)")
    ps.add_argument("--seed", type=SEED, default=0, help="random seed (default 0)")
    ps.add_argument("--missing", type=share, default=0.0, help="share of entries left unevaluated (NaN), in [0, 1)")
    ps.add_argument("--subscenarios", type=int_range(0), default=0, help="split items into this many subscenarios")
    ps.add_argument("--out", required=True, metavar="FILE", help="score table to write (.parquet or .csv)")
    ps.set_defaults(func=_cmd_simulate)
    return p


def _one_line(exc: BaseException, limit: int = 600) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[:limit] + "..."


def _stdout_closed() -> int:
    """The reader of our output went away (``estimate ... | head``): stop quietly, as ``cat`` does.

    stdout is pointed at /dev/null so that Python's final flush does not complain again.
    """
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141  # 128 + SIGPIPE, what a shell reports for a command stopped by a closed pipe


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    debug = getattr(args, "debug", False)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        return _stdout_closed()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (ValueError, OSError) as exc:  # bad input, missing or unwritable files: one line, no traceback
        if debug:
            raise
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except RecursionError:
        if debug:
            raise
        print("error: an input is nested too deeply to be read (a JSON or pickle file of thousands of levels?)",
              file=sys.stderr)
        return 2
    except MemoryError:
        if debug:
            raise
        print("error: out of memory", file=sys.stderr)
        return 1
    except Exception as exc:  # a bug or an unexpected library error: still one line
        if debug:
            raise
        print(f"error: unexpected {type(exc).__name__}: {_one_line(exc)} (run with --debug for the traceback)",
              file=sys.stderr)
        return 1


def release_main(argv: list[str] | None = None) -> int:
    """``release.py``: the ``release`` subcommand under the program name ``release.py``."""
    parser = add_release_arguments(argparse.ArgumentParser(
        prog="release.py", description=RELEASE_DESCRIPTION, epilog=RELEASE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter))
    return _cmd_release(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
