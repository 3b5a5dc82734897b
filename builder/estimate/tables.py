"""Estimates for a table of models: read anchor columns, estimate, write CSV/JSON."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from builder.estimator import TinyEstimator
from builder.files import atomic_output, is_within, same_file
from builder.model import keep_freed_blocks
from builder.read import ResponseMatrix

COLUMNS = ["model", "score", "ci_low", "ci_high", "irt", "pirt", "gpirt", "n_answered"]


def one_blas_thread():
    """A context in which BLAS runs on one thread: ``estimate`` is faster so on this 2-core machine
    (N = 28,659, k = 100, medians of 5 alternated runs: 2,000 models in 4.05 vs 4.49 s, one model
    1.76 vs 2.35 ms) with identical results; ``fit`` does the same (``fit_estimator``)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def estimate_table(folder: str | os.PathLike, scores_path: str | os.PathLike) -> pd.DataFrame:
    """One row of estimates per model of ``scores_path`` (a wide or long score table).

    Only the anchor columns are read (parquet column projection); other columns are
    ignored, missing anchors are left unanswered. A model with no anchor answered is an
    error, as is a table with no anchor column at all.
    """
    est = TinyEstimator.load(folder)
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
