"""``tinybench-builder ingest``, the command: its arguments, the handler, the summary and the failure list.

The library half (:func:`tinybench_builder.read.ingest.ingest`) reads; this module parses the command
line, checks the outputs before any reading, writes the matrix and reports.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from tinybench_builder.cli._args import add_common
from tinybench_builder.cli._run import command
from tinybench_builder.progress import get_logger
from tinybench_builder.read import FORMATS, IngestResult, ingest_with_report
from tinybench_builder.read import MAX_PARQUET_COLUMNS, MatrixFormatError, ResponseMatrix
from tinybench_builder.read import SourceError
from tinybench_builder.read import UnitFailure

_log = get_logger(__name__)

__all__ = ["register", "add_ingest_arguments", "run_ingest", "INGEST_EPILOG", "read_hub_models", "write_failures",
           "write_matrix", "check_width", "same_command", "failures_text", "failures_path", "FAILED_HEADER"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``ingest`` command to the subparsers ``sub``."""
    pi = sub.add_parser("ingest", help="read evaluation outputs into a score matrix (wide parquet)",
                        description="Read evaluation outputs (lm-eval logs, Open LLM Leaderboard details, "
                                    "AlpacaEval, HELM, legacy pickles, tables) into one wide parquet matrix, "
                                    "model by model on a local process pool or a Dask cluster.",
                        epilog=INGEST_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_ingest_arguments(pi)
    add_common(pi, sub=True, progress=False)  # ingest's --progress chooses bar, log or none
    pi.set_defaults(func=run_ingest)


def add_ingest_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``ingest`` arguments to ``parser`` (the CLI's ``ingest`` subparser)."""
    parser.add_argument("sources", nargs="*", metavar="SOURCE",
                        help="evaluation outputs: files or folders (lm-eval logs, leaderboard details, "
                             "AlpacaEval results, HELM runs, legacy pickle, score tables)")
    parser.add_argument("--out", required=True, metavar="FILE.parquet",
                        help="where to write the score table (models x items; .parquet or .csv)")
    parser.add_argument("--layout", choices=["wide", "long"], default="wide",
                        help="wide: one row per model, one column per item (default); long: columns model, item, "
                             "score, one row per evaluated pair, for matrices too wide for a wide parquet table "
                             f"(over {MAX_PARQUET_COLUMNS:,} items); fit, build and estimate read both")
    parser.add_argument("--task", default=None, metavar="NAME",
                        help="task/benchmark to read (lm-eval task or group, arc|hellaswag|mmlu|truthfulqa|"
                             "winogrande|gsm8k for leaderboard v1, AlpacaEval annotator, HELM run group, pickle entry)")
    parser.add_argument("--metric", default=None, metavar="NAME", help="per-example metric (default: the task's usual one)")
    parser.add_argument("--filter", default=None, metavar="NAME",
                        help="lm-eval filter when a task has several (GSM8K default: strict-match)")
    parser.add_argument("--content", default=None, metavar="FILE",
                        help="content table with item_id (and instruction, for AlpacaEval)")
    parser.add_argument("--items-out", default=None, metavar="FILE.parquet",
                        help="also write the item information (scenario, subscenario, content) here")
    parser.add_argument("--format", default=None, choices=sorted(FORMATS), help="skip detection and use this reader")
    hub = parser.add_argument_group("Open LLM Leaderboard details from the Hub")
    hub.add_argument("--hub-models", default=None, metavar="FILE",
                     help="text file of model ids (org/name, one per line, '#' comments; extra tab-separated "
                          "fields are ignored, so a FILE.failed.txt works): their v1 details repos "
                          "(open-llm-leaderboard[-old]/details_<org>__<name>) are downloaded inside the map, "
                          "only the files of --task, and read")
    hub.add_argument("--hub-cache", default=None, metavar="DIR",
                     help="Hub cache folder on the workers (default: huggingface_hub's, HF_HUB_CACHE or "
                          "~/.cache/huggingface/hub on each worker)")
    run = parser.add_argument_group("where the per-model map runs (default: a local process pool)")
    where = run.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=None, metavar="N",
                       help="start a Dask LocalCluster of N worker processes on this machine (needs the "
                            "[distributed] extra)")
    where.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="run on a running Dask cluster, e.g. tcp://10.0.0.5:8786 (its workers must see the "
                            "SOURCE paths and run the same tinybench-builder)")
    where.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                       help="size of the local process pool (default: CPU count)")
    run.add_argument("--retries", type=int, default=2, metavar="N",
                     help="extra attempts for a model that fails for another reason than bad input "
                          "(network, lost worker); bad input stops the run at once (default: 2)")
    run.add_argument("--progress", choices=["auto", "bar", "log", "none"], default="auto",
                     help="progress over models on stderr: a bar on a terminal, a line every 10%% otherwise (auto)")


INGEST_EPILOG = """\
exit status: 0 every model read (an earlier <out stem>.failed.txt is removed with the new
output); 2 bad input or unusable cluster (nothing written); 3 some models kept failing after
their retries (the others are written, the failed ones are listed on stderr and in <out
stem>.failed.txt, which always describes the output beside it and is never written through a
link or over a file that is not an earlier list: such a file is refused before the reading;
when every model failed nothing is written, the list neither); 4 out of memory
(nothing written; a long table needs about 3x its matrix, models x items x 8 bytes)

examples:
  python -m tinybench_builder ingest details/ --task mmlu --out mmlu.parquet
  python -m tinybench_builder ingest details/ --task mmlu --out mmlu.parquet --workers 4
  python -m tinybench_builder ingest --hub-models models.txt --task arc --scheduler tcp://10.0.0.5:8786 --out arc.parquet

docs/INGEST.md: formats, the failure rule, running on a cluster
"""


def read_hub_models(path: str | Path) -> list[str]:
    """Model ids from a text file: one per line, ``#`` comments, extra tab-separated fields ignored."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SourceError(f"{path}: cannot read the model list: {exc.strerror or exc}") from exc
    except UnicodeDecodeError:
        raise SourceError(f"{path}: the model list is not UTF-8 text (one model id per line)") from None
    models = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            models.append(line.split("\t", 1)[0].strip())
    if not models:
        raise SourceError(f"{path}: no model ids in the model list")
    return models


@command(interrupted="error: interrupted; nothing written")
def run_ingest(args: argparse.Namespace) -> int:
    """Handler of ``tinybench-builder ingest``.

    Exit status: 0 on success; 2 on bad input or an unusable cluster (``error: ...`` on stderr,
    nothing written); 3 when some models kept failing: the matrix of the others is written, the
    failed ones are listed on stderr and in ``<out stem>.failed.txt``.
    """
    out = Path(args.out)
    workers = getattr(args, "workers", None)
    scheduler = getattr(args, "scheduler", None)
    check_outputs(out, getattr(args, "items_out", None), args.sources)
    for flag, value in (("--workers", workers), ("--jobs", getattr(args, "jobs", None))):
        if value is not None and value < 1:
            raise SourceError(f"{flag} must be at least 1, got {value}")
    if getattr(args, "retries", 2) < 0:
        raise SourceError(f"--retries must be 0 or more, got {args.retries}")
    hub_file = getattr(args, "hub_models", None)
    hub_models = read_hub_models(hub_file) if hub_file else []
    if not args.sources and not hub_models:
        raise SourceError("give at least one SOURCE, or --hub-models FILE")
    result = ingest_with_report(
        args.sources,
        task=getattr(args, "task", None),
        metric=getattr(args, "metric", None),
        filter=getattr(args, "filter", None),
        content=getattr(args, "content", None),
        format=getattr(args, "format", None),
        workers=workers if workers is not None else getattr(args, "jobs", None),
        executor="dask" if workers is not None else None,
        scheduler=scheduler,
        hub_models=hub_models,
        hub_cache=getattr(args, "hub_cache", None),
        retries=getattr(args, "retries", 2),
        progress=getattr(args, "progress", "auto"),
    )
    matrix = result.matrix
    failed_file: Path | None = None
    if matrix is not None:
        layout = getattr(args, "layout", "wide")
        check_width(matrix, out, layout, args)
        failed_file, problem = write_matrix(matrix, out, result.failures, layout)
        items_out = getattr(args, "items_out", None)
        if items_out and matrix.item_info is not None:
            write_item_info(matrix.item_info, items_out)
        print(format_summary(matrix, out, result=result))
        if problem and result.failures:  # it appeared after the check: the list is on stderr only
            print(f"error: the list of failed models was not written: {problem}", file=sys.stderr)
        elif problem:
            _log.warning(f"warning: the list of failed models of an earlier run was not removed: {problem}")
    # nothing written (every model failed): the earlier output, if any, keeps the list that describes it
    if result.failures:
        print(format_failures(result, failed_file, wrote=matrix is not None), file=sys.stderr)
        return 3
    return 0


def check_width(matrix: ResponseMatrix, out: Path, layout: str, args: argparse.Namespace) -> None:
    """Refuse a wide parquet ``out`` of more than :data:`MAX_PARQUET_COLUMNS` items, giving the
    command that works: the same with ``--layout long`` (or a wide CSV)."""
    from tinybench_builder.read import table_format

    n_items = matrix.shape[1]
    if layout != "wide" or table_format(out) != "parquet" or n_items <= MAX_PARQUET_COLUMNS:
        return
    raise SourceError(f"{out}: {n_items:,} items are too many columns for a wide parquet table (parquet keeps "
                      f"metadata per column: writing and reading it takes GBs; at most {MAX_PARQUET_COLUMNS:,}), "
                      f"although the matrix is {matrix.shape[0] * n_items * 8 / 2**20:,.0f} MiB: write the long "
                      "table instead, one row per model and item, which fit, build and estimate read in bounded "
                      f"memory: {same_command(args, layout='long')}; or write CSV instead (--out ending in .csv)")


def same_command(args: argparse.Namespace, **changes: str) -> str:
    """The ``ingest`` command of ``args`` (its sources and the options given), with ``changes``
    (``layout="long"`` -> ``--layout long``): what to run instead, printed in a message."""
    import shlex

    words = ["python", "-m", "tinybench_builder", "ingest", *map(str, args.sources)]
    values = {**{k: getattr(args, k, None) for k in ("out", "task", "metric", "filter", "content", "items_out",
                                                     "format", "hub_models", "hub_cache", "workers", "scheduler",
                                                     "jobs")}, **changes}
    for key, value in values.items():
        if value is not None:
            words += [f"--{key.replace('_', '-')}", str(value)]
    return " ".join(shlex.quote(w) for w in words)


def write_matrix(matrix: ResponseMatrix, out: Path, failures: Sequence[UnitFailure],
                 layout: str = "wide") -> tuple[Path | None, str | None]:
    """Write ``matrix`` to ``out`` and bring ``<out stem>.failed.txt`` along: the list of ``failures``,
    or no file at all (an earlier list removed) when every model was read.

    The list always describes the output beside it: its new state is checked and written aside
    before the matrix is replaced and put in place right after (:class:`tinybench_builder.files.SidecarUpdate`);
    a matrix that fails to write leaves the earlier matrix and list as they were. Returns the list
    written (None: no list now) and, when the list could not be written or removed, why.
    """
    from tinybench_builder.files import SidecarUpdate

    text = failures_text(failures) if failures else None
    update = SidecarUpdate(failures_path(out), FAILED_HEADER, text)
    try:
        update.prepare()
    except OSError as exc:  # a link or someone's file appeared there after the check: the matrix still counts
        matrix.write(out, layout=layout)
        return None, str(exc)
    with update:  # an error writing the matrix discards the prepared list
        matrix.write(out, layout=layout)
        try:
            return update.commit(), None
        except OSError as exc:
            return None, str(exc)


def check_outputs(out: Path, items_out: str | Path | None, sources: Sequence[str | Path]) -> None:
    """Refuse outputs that are folders, of an unknown type, or would replace a SOURCE (before any reading)."""
    from tinybench_builder.files import same_file
    from tinybench_builder.read import table_format

    outs = [("--out", Path(out))] + ([("--items-out", Path(items_out))] if items_out else [])
    for flag, path in outs:
        if path.is_dir():
            raise SourceError(f"{flag} {path} is a folder; give a file name such as {path / 'scores.parquet'}")
        try:
            kind = table_format(path)
        except MatrixFormatError:
            kind = None
        if kind is None or (flag == "--items-out" and kind != "parquet"):
            raise SourceError(f"{flag} {path}: give a .parquet{' (or .csv)' if flag == '--out' else ''} file name")
        for src in sources:
            if Path(src).is_file() and same_file(path, src):
                raise SourceError(f"{flag} {path} is also a SOURCE; writing it would replace that input: "
                                  "choose another file name")
    if items_out and same_file(out, items_out):
        raise SourceError("--out and --items-out name the same file")
    from tinybench_builder.files import check_sidecar

    try:  # the failure list is named after --out: absent or an earlier list of ours, never a user's file
        check_sidecar(failures_path(out), FAILED_HEADER)
    except OSError as exc:
        raise SourceError(f"{exc} (the list of models that could not be read goes there)") from None


#: the first line of a failure list: what proves an existing ``<out stem>.failed.txt`` ours
FAILED_HEADER = "# models that could not be read: model<TAB>source<TAB>last error (attempts)"


def failures_path(out: str | Path) -> Path:
    """``<out stem>.failed.txt`` next to ``out`` (shortened with a hash when it would exceed NAME_MAX)."""
    from tinybench_builder.files import sidecar_name

    return sidecar_name(out, ".failed.txt")


def write_failures(failures: Sequence[UnitFailure], out: Path) -> Path:
    """``<out stem>.failed.txt``: ``model<TAB>source<TAB>error`` per failed unit (a valid --hub-models file).

    Written atomically, never through a symbolic link nor over a file that does not start with
    :data:`FAILED_HEADER` (:func:`tinybench_builder.files.write_sidecar`; checked before the reading too).
    """
    from tinybench_builder.files import write_sidecar

    return write_sidecar(failures_path(out), failures_text(failures), FAILED_HEADER)


def failures_text(failures: Sequence[UnitFailure]) -> str:
    """The text of a failure list: :data:`FAILED_HEADER`, then ``model<TAB>source<TAB>error`` per failed unit."""
    lines = [FAILED_HEADER]
    lines += [" ".join(f"{f.model}\t{f.source}\t{f.error} ({f.attempts} attempt(s))".splitlines()) for f in failures]
    return "\n".join(lines) + "\n"


def format_failures(result: IngestResult, failed_file: Path | None, wrote: bool, max_list: int = 20) -> str:
    n = len(result.failures)
    lines = [f"error: {n} of {result.units} model(s) could not be read after their retries"
             + (" and are NOT in the matrix:" if wrote else "; nothing written:")]
    lines += [f"  {f.model} ({f.source}): {f.error} [{f.attempts} attempt(s)]" for f in result.failures[:max_list]]
    if n > max_list:
        lines.append(f"  ... {n - max_list} more")
    if not wrote:  # no output, so no list beside it: an earlier output keeps its own
        lines.append("  run the same command again once the cause is fixed (an earlier output and its list of "
                     "failed models, if any, are left as they were)")
        return "\n".join(lines)
    where = f"the list is in {failed_file}; " if failed_file else ""
    lines.append(f"  {where}read them again with the same command on those sources "
                 f"(Hub models: --hub-models {failed_file or 'FILE'}) and merge the tables with "
                 "`ingest A.parquet B.parquet`")
    return "\n".join(lines)


def write_item_info(info: pd.DataFrame, path: str | Path) -> Path:
    """Write item information as parquet (lists/dicts as JSON strings), atomically."""
    frame = info.copy()
    for col in frame.columns:
        if frame[col].dtype == object and frame[col].map(lambda v: isinstance(v, (list, dict, tuple, np.ndarray))).any():
            frame[col] = frame[col].map(
                lambda v: json.dumps(v.tolist() if isinstance(v, np.ndarray) else v, ensure_ascii=False)
                if isinstance(v, (list, dict, tuple, np.ndarray)) else v
            )
    from tinybench_builder.files import atomic_output

    with atomic_output(path) as tmp:
        frame.to_parquet(tmp)
    return Path(path)


def format_summary(matrix: ResponseMatrix, out: Path | None = None, max_list: int = 10,
                   result: IngestResult | None = None) -> str:
    s = matrix.summary()
    lines = [f"{'wrote ' + str(out) + ': ' if out else ''}{s['models']} models x {s['items']} items"]
    if result is not None:
        lines.append(f"  read in {result.seconds:.1f} s on {result.engine}; "
                     f"failed models: {len(result.failures)}")
    scen = pd.Series(matrix.scenarios()).value_counts()
    if len(scen) > 1 or scen.index[0] != "all":
        lines.append("  scenarios: " + ", ".join(f"{k} ({v} items)" for k, v in scen.items()))
    lines.append(f"  missing: {100 * s['missing_share']:.2f}% of (model, item) entries")
    if s["partial_models"]:
        obs = matrix.observed.sum(axis=1)
        counts = dict(zip(matrix.models, obs))
        shown = ", ".join(f"{m} ({counts[m]}/{s['items']})" for m in s["partial_models"][:max_list])
        more = len(s["partial_models"]) - max_list
        lines.append(f"  models with partial coverage: {len(s['partial_models'])}: {shown}{f', ... {more} more' if more > 0 else ''}")
    else:
        lines.append("  models with partial coverage: 0")
    if matrix.notes:
        lines.append(f"  notes ({len(matrix.notes)}):")
        lines.extend(f"    - {n}" for n in matrix.notes[:50])
        if len(matrix.notes) > 50:
            lines.append(f"    ... {len(matrix.notes) - 50} more")
    return "\n".join(lines)


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tinybench_builder.cli.ingest", description=__doc__.split("\n\n")[0],
                                     epilog=INGEST_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_ingest_arguments(parser)
    return run_ingest(parser.parse_args(list(argv) if argv is not None else None))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
