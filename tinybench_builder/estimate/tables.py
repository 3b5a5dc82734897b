"""Estimates for a table of models: read anchor columns, estimate, write CSV/JSON."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.files import atomic_output, is_within, same_file
from tinybench_builder.model import keep_freed_blocks
from tinybench_builder.progress import get_logger
from tinybench_builder.read import ResponseMatrix

log = get_logger(__name__)

COLUMNS = ["model", "score", "ci_low", "ci_high", "irt", "pirt", "gpirt", "n_answered"]


def one_blas_thread():
    """A context in which BLAS runs on one thread: ``estimate`` is faster so on this 2-core machine
    (N = 28,659, k = 100, medians of 5 alternated runs: 2,000 models in 4.05 vs 4.49 s, one model
    1.76 vs 2.35 ms) with identical results; ``fit`` does the same (``fit_estimator``)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


#: ``tinybench-builder estimate hub:OWNER/NAME@REVISION ...``: a released version, rows and estimator of one commit
HUB_PREFIX = "hub:"


def resolve_folder(folder: str | os.PathLike) -> Path:
    """The tiny dataset folder to estimate with: a local folder, or ``hub:OWNER/NAME@REVISION``
    (a release tag such as ``v1.0.0``, a commit or a branch), downloaded as one snapshot (the
    revision resolved once, so the rows and the estimator are of the same commit; offline from
    the cache once downloaded) and checked against its manifest's sha256."""
    text = str(folder)
    if not text.startswith(HUB_PREFIX):
        return Path(folder)
    repo_id, _, revision = text[len(HUB_PREFIX):].partition("@")
    if not revision:
        raise ValueError(f"{text}: give the revision the results were made against, e.g. {text}@v1.0.0")
    from huggingface_hub import snapshot_download

    from tinybench_builder.layout import verify_manifest

    path = Path(snapshot_download(repo_id, repo_type="dataset", revision=revision))
    problems = verify_manifest(path)
    if problems:
        raise ValueError(f"{text}: the snapshot does not match its manifest ({problems[0]})")
    return path


def table_labels(path: str | os.PathLike) -> tuple[list[str], bool]:
    """The item labels of the score table ``path``, without reading any score: its column names
    but the model column (a wide table), or the distinct ``item`` values (a long table, in the
    order of their first row); and whether the table is long."""
    import csv

    import pyarrow.parquet as pq

    path = Path(path)
    long = {"model", "item", "score"}
    if path.suffix.lower() in (".parquet", ".pq"):
        schema = pq.read_schema(path)
        names = schema.names
        if long <= set(names):
            values = pq.read_table(path, columns=["item"]).column("item").to_pylist()
            return list(dict.fromkeys(str(v) for v in values)), True
        index = {c for c in (schema.pandas_metadata or {}).get("index_columns", []) if isinstance(c, str)}
        return [n for n in names if n != "model" and n not in index], False
    sep = "\t" if path.suffix.lower() == ".tsv" else ","
    opener = __import__("gzip").open if path.name.lower().endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8-sig", newline="") as fh:
        header = next(csv.reader(fh, delimiter=sep), [])
    if long <= set(header):
        values = pd.read_csv(path, sep=sep, usecols=["item"], dtype=str, keep_default_na=False)["item"]
        return list(dict.fromkeys(values)), True
    model_column = 0 if header and (header[0] == "model" or not header[0].strip()) else None
    return [n for j, n in enumerate(header) if j != model_column and n != "model"], False


def match_table(path: str | os.PathLike, est: TinyEstimator) -> list[str]:
    """The anchors the score table ``path`` holds, by the rule of :meth:`TinyEstimator.check_items`
    (the Python API's): the anchors there are read, any subset (a partial run) or all; its other
    columns are not used and, when anchors are missing, named in a warning; a table without a
    single anchor is refused (``ValueError`` naming the file and what its columns are instead)."""
    labels, long = table_labels(path)
    anchors, others, unknown = est.match_labels(labels)
    what = "item(s)" if long else "column(s)"
    k = len(est.anchor_ids)
    name = est.metadata.get("benchmark") or "this tiny benchmark"
    mine = f"{name} {est.version}" if est.version else name
    parts = ([f"{len(others)} other item(s) of {mine} ({_some(others)})"] if others else []) + \
            ([f"{len(unknown)} that are not items of {mine} ({_some(unknown)})"] if unknown else [])
    if not anchors:  # what the labels are instead says which mistake it is
        hints = (["results of another version's tiny split (estimate them with that version's estimator)"]
                 if others else []) + (["another benchmark's table, or item ids written another way"] if unknown else [])
        said = f"; it has {' and '.join(parts)}: {' or '.join(hints)}?" if parts else ""
        raise ValueError(f"{path}: none of the {k} anchor items is a{'n item' if long else ' column'} (anchors look "
                         f"like {est.anchor_ids[:3]}){said}")
    if len(anchors) < k and parts:
        log.warning(f"{path}: {len(others) + len(unknown)} {what} not used: {'; '.join(parts)}; the estimate uses "
                    f"the {len(anchors)} of the {k} anchors the table has (a partial run)")
    return anchors


def _some(names: list[str], n: int = 3) -> str:
    return "e.g. " + ", ".join(repr(x) for x in names[:n]) + (", ..." if len(names) > n else "")


def estimate_table(folder: str | os.PathLike, scores_path: str | os.PathLike,
                   version: str | None = None) -> pd.DataFrame:
    """One row of estimates per model of ``scores_path`` (a wide or long score table).

    Only the anchor columns are read (parquet column projection), by the rule of the Python API
    (:func:`match_table`, :meth:`TinyEstimator.check_items`): the anchors there, any subset (a
    partial run: missing anchors are left unanswered) or all; the other columns (items that are
    not anchors, names that are not items) are not used, named in a warning when anchors are
    missing. ``version``: the version (or design hash) the results were made against
    (:meth:`TinyEstimator.design_of`). A model with no anchor answered is an error, as is a
    table with no anchor column at all.
    """
    est = TinyEstimator.load(resolve_folder(folder))
    if version is not None:
        est.design_of(version)
    match_table(scores_path, est)
    matrix = ResponseMatrix.read(scores_path, columns=est.anchor_ids)
    pos = {item: j for j, item in enumerate(matrix.items)}
    present = [a for a in est.anchor_ids if a in pos]
    if not present:
        raise ValueError(
            f"{scores_path}: none of the {len(est.anchor_ids)} anchor items is a column "
            f"(anchors look like {est.anchor_ids[:3]})"
        )
    Y = np.full((matrix.shape[0], len(est.anchor_ids)), np.nan)
    for i, a in enumerate(est.anchor_ids):
        if a in pos:
            Y[:, i] = matrix.scores[:, pos[a]]
    empty = np.isnan(Y).all(axis=1)
    if empty.any():
        raise ValueError(f"{scores_path}: model {matrix.models[int(np.flatnonzero(empty)[0])]!r} has no anchor result")
    with one_blas_thread(), keep_freed_blocks():  # estimates come in blocks of models (bounded memory)
        results = est.estimate(Y)
    rows = []
    for model, r in zip(matrix.models, results):
        row = {"model": model, **{k: r[k] for k in COLUMNS[1:]}}
        for name, per in (r.get("scenarios") or {}).items():
            for k in ("score", "ci_low", "ci_high", "irt", "pirt", "gpirt"):
                row[f"{name}.{k}"] = per[k]
        rows.append(row)
    return pd.DataFrame(rows)


#: output formats of :func:`write_estimates`, by file name ending
OUTPUT_FORMATS = {".csv": "csv", ".tsv": "tsv", ".json": "json", ".parquet": "parquet", ".pq": "parquet"}


def output_format(path: str | os.PathLike) -> str:
    """The format :func:`write_estimates` writes for ``path``; ValueError for another ending."""
    suffix = Path(path).suffix.lower()
    if suffix not in OUTPUT_FORMATS:
        raise ValueError(f"--out {path}: unknown output format {suffix or '(no extension)'!r}; "
                         f"use one of {', '.join(OUTPUT_FORMATS)}")
    return OUTPUT_FORMATS[suffix]


def check_output(out: str | os.PathLike, folder: str | os.PathLike, scores: str | os.PathLike) -> None:
    """Refuse an ``--out`` that would replace an input of ``estimate``: the scores file, a file
    of the estimator folder, or a log file inside a logs folder; or that is a folder, or whose
    format is unknown. Checked before anything is read."""
    out = Path(out)
    output_format(out)
    if out.is_dir():
        raise ValueError(f"--out {out} is a folder; give a file name (e.g. {out / 'estimates.csv'})")
    if Path(scores).is_file() and same_file(out, scores):
        raise ValueError(f"--out {out} is the scores file being read; writing there would replace it: "
                         "choose another file name")
    if is_within(out, folder):
        raise ValueError(f"--out {out} is inside the tiny benchmark folder {folder}; that folder is an input "
                         "(and its manifest lists its files): write the estimates elsewhere")
    if Path(scores).is_dir() and is_within(out, scores) and out.suffix.lower() in (".json", ".jsonl"):
        raise ValueError(f"--out {out} is inside the logs folder {scores}, where it would be read as a log "
                         "next time (or replace one): write the estimates elsewhere")


def write_estimates(frame: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write ``frame`` as CSV, TSV, JSON (a list of records, NaN as null) or parquet, chosen by
    the file name ending (:func:`output_format`); atomically, with the umask's permissions."""
    path = Path(path)
    kind = output_format(path)
    with atomic_output(path) as tmp:
        if kind == "json":
            records = [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
                       for r in frame.to_dict(orient="records")]
            tmp.write_text(json.dumps(records, indent=1, allow_nan=False) + "\n", encoding="utf-8")
        elif kind == "parquet":
            frame.to_parquet(tmp, index=False)
        else:
            frame.to_csv(tmp, index=False, sep="\t" if kind == "tsv" else ",")
    return path
