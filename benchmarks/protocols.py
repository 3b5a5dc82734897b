"""The model splits of the accuracy benchmarks, in one place.

Every benchmark script (ours and the BenchPred peers) takes its train/test models from
here, so that all methods are compared on exactly the same splits.

* **interpolation**: ``numpy.random.default_rng(seed).permutation`` of the models (in
  the matrix's row order); the first ``ceil(25%)`` are test models, the rest train.
* **extrapolation** (the split of Zhang, Dorner & Hardt 2025): models sorted by their
  mean score (NaN ignored; ties by model name); train = the bottom ``n // 2``, test =
  the top ``ceil(30%)``. The split does not depend on the seed (the seed still drives
  every method's own randomness).

Development protocols (:func:`dev_splits`) repeat the same construction *inside* a
protocol's training models, so design choices never see the protocol's test models.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from tinybench_builder.params import derived_seed

PROTOCOLS = ("interpolation", "extrapolation")

#: every matrix of ../shared/data/responses/ that the accuracy benchmark reports
ACCURACY_DATASETS = (
    "alpaca_eval_2", "gsm8k_zeroeval", "wmdp_bio", "wmdp_cyber", "oll_v2_arc_challenge", "oll_v2_ifeval",
    "helm_lite_mmlu", "helm_lite_gsm8k", "helm_lite_med_qa", "helm_lite_math", "helm_lite_openbookqa",
)


#: how far outside an interval a truth may lie and still count as covered: the float rounding of two
#: sums of the same results (a session that asked every item of a model's pool reports the exact
#: score with a zero-width interval, equal to the mean over the row up to ~1e-16)
COVER_TOLERANCE = 1e-9


def covers(lo, truth, hi):
    """Whether ``lo <= truth <= hi`` up to :data:`COVER_TOLERANCE` (elementwise, numpy arrays)."""
    lo, truth, hi = (np.asarray(x, dtype=np.float64) for x in (lo, truth, hi))
    return (lo - COVER_TOLERANCE <= truth) & (truth <= hi + COVER_TOLERANCE)


def model_means(Y: np.ndarray) -> np.ndarray:
    """Each model's mean score over its evaluated items (the truth of the benchmarks)."""
    Y = np.asarray(Y, dtype=np.float64)
    obs = ~np.isnan(Y)
    return np.where(obs, Y, 0.0).sum(1) / np.maximum(obs.sum(1), 1)


def interpolation_split(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(train, test)`` row indices: a random 75/25 split of ``n`` models."""
    perm = np.random.default_rng(seed).permutation(n)
    n_test = math.ceil(0.25 * n)
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def extrapolation_split(means: np.ndarray, models: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(train, test)`` row indices: fit on the weakest half, test on the strongest 30%."""
    means = np.asarray(means, dtype=np.float64)
    n = means.shape[0]
    if len(models) != n:
        raise ValueError(f"{len(models)} model names for {n} means")
    order = np.lexsort((np.asarray(models, dtype=str), means))  # by mean, then by name
    n_train, n_test = n // 2, math.ceil(0.3 * n)
    return np.sort(order[:n_train]), np.sort(order[n - n_test:])


def split(protocol: str, Y: np.ndarray, models: Sequence[str], seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(train, test)`` row indices of ``protocol`` for a (models x items) matrix."""
    if protocol == "interpolation":
        return interpolation_split(len(models), seed)
    if protocol == "extrapolation":
        return extrapolation_split(model_means(Y), models)
    raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")


def dev_splits(protocol: str, Y: np.ndarray, models: Sequence[str], seed: int,
               reps: int = 2) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Nested ``(train, test)`` splits of the protocol's *training* models only.

    Interpolation: ``reps`` random 75/25 splits of the training models (seeds
    ``100 * seed + 10 + r``, ``params.derived_seed(seed, "bench_dev_split", r)``). Extrapolation:
    the weakest half of the training models vs their strongest 30% (one split; the seed only
    reaches the methods). Indices are rows of the full matrix.
    """
    train, _ = split(protocol, Y, models, seed)
    sub_models = [models[i] for i in train]
    if protocol == "interpolation":
        for r in range(reps):
            tr, te = interpolation_split(len(train), derived_seed(seed, "bench_dev_split", r))
            yield train[tr], train[te]
    else:
        tr, te = extrapolation_split(model_means(Y[train]), sub_models)
        yield train[tr], train[te]


def train_test(protocol: str, Y: np.ndarray, models: Sequence[str], seed: int,
               dev_rep: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ``(train, test)`` rows of one split: the test protocol's (``dev_rep`` None) or the
    ``dev_rep``-th nested split of the development protocol (:func:`dev_splits`)."""
    if dev_rep is None:
        return split(protocol, Y, models, seed)
    return list(dev_splits(protocol, Y, models, seed, reps=dev_rep + 1))[dev_rep]


def add_protocol_args(ap: argparse.ArgumentParser, default_data: Path) -> None:
    """The options every accuracy-style benchmark shares: the matrices, the protocols, the seeds."""
    ap.add_argument("--data-dir", type=Path, default=default_data, help="folder of <name>.parquet matrices")
    ap.add_argument("--datasets", nargs="+", default=list(ACCURACY_DATASETS))
    ap.add_argument("--protocols", nargs="+", default=list(PROTOCOLS), choices=PROTOCOLS)
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
