"""``tinybench-builder adaptive``: run adaptive sessions against a table of known answers.

::

    python -m tinybench_builder adaptive DIR --answers TABLE [--budget N] [--target-halfwidth H]

For each model (row) of TABLE, a session of DIR's estimator (``TinyEstimator.adaptive``, the
standalone ``adaptive.py``) asks items batch by batch and is answered from the table: a model
you already evaluated in full (to check what adaptive evaluation would have said, at what cost)
or the logs of a run. The session's pool is the items the table answers for that model, so a
row with missing items is estimated over the items it has (a note says so); ``table_score``,
the row's weighted mean over that pool, is the target, shown next to the estimate.

:func:`run_adaptive` is the library function; ``progress`` receives one line per batch.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.read import ResponseMatrix

COLUMNS = ["model", "score", "ci_low", "ci_high", "se", "n_asked", "n_answered", "pool", "table_score", "done"]

__all__ = ["run_adaptive", "COLUMNS"]


def run_adaptive(folder: str | os.PathLike, answers: str | os.PathLike, *, budget: int | None = None,
                 target_halfwidth: float | None = None, seed: int = 0, batch: int = 10, warm_start: bool = False,
                 models: list[str] | None = None, progress: Callable[[str], None] | None = None,
                 notes: Callable[[str], None] | None = None) -> pd.DataFrame:
    """One row per model of ``answers``: the adaptive estimate and what it cost.

    Parameters
    ----------
    folder : path
        A folder holding the estimator side files (written by ``fit`` or ``build``; a per-config
        estimator folder of a build).
    answers : path
        Score table (wide or long, parquet or CSV) with the answers of the items the session
        may ask; item ids as the estimator's.
    budget, target_halfwidth, seed
        The session's (``TinyEstimator.adaptive``); the budget counts the items asked.
    batch : int
        Items per ``next_items`` call.
    warm_start : bool
        Start from the table's answers on the tiny split's anchors (they do not count in the budget).
    models : list of str, optional
        Only these models (rows) of the table.
    """
    if batch < 1:
        raise ValueError(f"--batch must be a positive integer, got {batch}")
    est = TinyEstimator.load(folder)
    matrix = ResponseMatrix.read(answers)
    col = {iid: j for j, iid in enumerate(matrix.items)}
    known = [iid for iid in est.item_ids if iid in col]
    if not known:
        raise ValueError(f"{answers}: none of the estimator's {len(est.item_ids)} items is a column "
                         f"(its items look like {est.item_ids[:3]})")
    extra = len(matrix.items) - len(known)
    if extra and notes:
        notes(f"{extra} column(s) of {Path(answers).name} are not items of this estimator: ignored")
    rows = list(range(len(matrix.models)))
    if models:
        index = {m: i for i, m in enumerate(matrix.models)}
        missing = [m for m in models if m not in index]
        if missing:
            raise ValueError(f"{answers}: no model {missing[0]!r} (models: {', '.join(matrix.models[:5])}...)")
        rows = [index[m] for m in models]
    cols = np.array([col[iid] for iid in known])
    w = _weights(est)
    out = []
    for i in rows:
        name = matrix.models[i]
        y = matrix.scores[i, cols]
        have = ~np.isnan(y)
        pool = [iid for iid, h in zip(known, have) if h]
        if not pool:
            raise ValueError(f"{answers}: model {name!r} answers none of the estimator's items")
        if len(pool) < len(est.item_ids) and notes:
            notes(f"{name}: the table answers {len(pool)} of the {len(est.item_ids)} items: the estimate is of "
                  "the score over those")
        answer = dict(zip(known, y))
        start = None
        if warm_start:
            start = {a: answer[a] for a in est.anchor_ids if a in answer and not np.isnan(answer[a])}
        try:
            s = est.adaptive(budget=budget, target_halfwidth=target_halfwidth, seed=seed, start=start, pool=pool)
        except ValueError as exc:  # e.g. a bundle scenario with no answered item
            raise ValueError(f"{answers}: model {name!r}: {exc}") from exc
        while not s.done:
            ids = s.next_items(batch)
            r = s.record({iid: float(answer[iid]) for iid in ids})
            if progress:
                progress(f"{name}: {r['n_asked']} asked, score {r['score']:.4f} [{r['ci_low']:.4f}, {r['ci_high']:.4f}]")
        r = s.result()
        out.append({"model": name, **{k: r[k] for k in ("score", "ci_low", "ci_high", "se", "n_asked", "n_answered")},
                    "pool": len(pool), "table_score": _table_score(est, w, answer), "done": r["done"]})
        for sname, per in (r.get("scenarios") or {}).items():
            for k in ("score", "ci_low", "ci_high"):
                out[-1][f"{sname}.{k}"] = per[k]
    return pd.DataFrame(out)


def _weights(est: TinyEstimator) -> np.ndarray:
    """Item weights of the full score: balance weights normalised per scenario."""
    tot = np.bincount(est.scenario_index, weights=est.balance, minlength=len(est.scenarios))
    return est.balance / tot[est.scenario_index]


def _table_score(est: TinyEstimator, w: np.ndarray, answer: dict) -> float:
    """The row's full score over its pool: weighted per scenario (renormalised over the pool),
    the mean over scenarios (what the session estimates)."""
    y = np.array([answer.get(iid, np.nan) for iid in est.item_ids], dtype=np.float64)
    ok = ~np.isnan(y)
    scores = []
    for s in range(len(est.scenarios)):
        m = ok & (est.scenario_index == s)
        scores.append(float((w[m] * y[m]).sum() / w[m].sum()))
    return float(np.mean(scores))
