"""Estimates for a table of models: read anchor columns, estimate, write CSV/JSON."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from .estimator import TinyEstimator
from .matrix import ResponseMatrix

COLUMNS = ["model", "score", "ci_low", "ci_high", "irt", "pirt", "gpirt", "n_answered"]


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
    results = est.estimate(Y)
    rows = []
    for model, r in zip(matrix.models, results):
        row = {"model": model, **{k: r[k] for k in COLUMNS[1:]}}
        for name, per in (r.get("scenarios") or {}).items():
            for k in ("score", "ci_low", "ci_high", "irt", "pirt", "gpirt"):
                row[f"{name}.{k}"] = per[k]
        rows.append(row)
    return pd.DataFrame(rows)


def write_estimates(frame: pd.DataFrame, path: str | os.PathLike) -> Path:
    """CSV, or JSON (a list of records) when the name ends in .json; written atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        if path.suffix.lower() == ".json":
            Path(tmp).write_text(json.dumps(frame.to_dict(orient="records"), indent=1) + "\n", encoding="utf-8")
        else:
            frame.to_csv(tmp, index=False)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path
