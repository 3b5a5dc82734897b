"""Anchor selection: which k items a tiny benchmark keeps, and what each one weighs.

* :func:`balance_weights` — per-item weights under which every subscenario (e.g. an
  MMLU subject) counts equally within its scenario; they define the full score.
* :func:`cluster_anchors` — the tinyBenchmarks method: weighted k-means
  (scikit-learn) on the item embeddings ``[a_j, b_j]``; the anchor of a cluster is the
  member nearest its centroid, its weight the cluster's share of the balance weights.
* :func:`stratified_anchors` — a stratified random sample (strata of equal mass along an
  easiness key): the probability sample the design-based estimators need (the default).
* :func:`random_anchors` — a baseline.

Every function returns an :class:`AnchorSet`: positions into the item list, weights
summing to 1 within each scenario, and the cluster label of every item (which the
estimator uses for the error bar of the anchor-weighted mean).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from tinybench_builder.params import ANCHORS


@dataclass
class AnchorSet:
    """k anchors over N items.

    Attributes
    ----------
    positions : ndarray (k,) of int
        Anchor positions in the item list, in the tiny dataset's row order.
    weights : ndarray (k,)
        Weight of each anchor; they sum to 1 within each scenario.
    labels : ndarray (N,) of int
        Stratum of each item. For one-anchor-per-cluster designs (k-means, random) the
        stratum is the index (into ``positions``) of the anchor that represents the item.
    strata : ndarray (k,) of int
        Stratum of each anchor (``arange(k)`` for one-anchor-per-cluster designs).
    method : str
    seed : int or None
    """

    positions: np.ndarray
    weights: np.ndarray
    labels: np.ndarray
    method: str
    seed: int | None = None
    strata: np.ndarray | None = None

    def __post_init__(self) -> None:
        # designs with one anchor per cluster (k-means, random): the anchor is its stratum
        if self.strata is None:
            self.strata = np.arange(self.positions.shape[0])

    @property
    def k(self) -> int:
        return int(self.positions.shape[0])


def balance_weights(scenarios: np.ndarray, subscenarios: np.ndarray | None = None,
                    subscenario_weights: Mapping[str, float] | None = None) -> np.ndarray:
    """Item weights: each scenario sums to 1, each of its subscenarios counts equally.

    ``w_j = 1 / (n_sub(s) * n_items(s, sub))`` as in the original ``N_sce / (n_sub n_i)``
    (up to the scenario size, since we normalise per scenario). With ``subscenario_weights``
    (label -> relative weight; labels not in it weigh 1) subscenario ``k`` of scenario ``s``
    gets ``u_k / sum(u)`` of it, shared equally by its items: the item counts give every item
    the same weight (lm-eval's ``weight_by_size``).
    """
    scenarios = np.asarray(scenarios, dtype=object)
    N = scenarios.shape[0]
    subs = np.asarray(subscenarios if subscenarios is not None else [""] * N, dtype=object)
    if subs.shape[0] != N:
        raise ValueError(f"{subs.shape[0]} subscenario labels for {N} items")
    w = np.empty(N)
    for s in dict.fromkeys(scenarios):
        in_s = scenarios == s
        sub_names, sub_idx, counts = np.unique(subs[in_s].astype(str), return_inverse=True, return_counts=True)
        if subscenario_weights is None:  # the original formula, kept bit for bit
            w[in_s] = 1.0 / (len(sub_names) * counts[sub_idx])
            continue
        u = np.array([float(subscenario_weights.get(str(n), 1.0)) for n in sub_names])
        if not (np.isfinite(u).all() and (u > 0).all()):
            raise ValueError(f"subscenario weights must be positive numbers, got {dict(zip(sub_names, u))}")
        w[in_s] = (u / u.sum())[sub_idx] / counts[sub_idx]
    return w


def _check_k(k: int, n_items: int, n_scenarios: int = 1) -> int:
    k = ANCHORS.check(k, "the number of anchors")
    if k > n_items:
        raise ValueError(f"cannot pick {k} anchors from {n_items} items")
    if k < n_scenarios:
        raise ValueError(f"{k} anchors cannot cover {n_scenarios} scenarios")
    return int(k)


def _scenario_budget(k: int, scenarios: np.ndarray) -> dict:
    """Split k anchors over scenarios: equal shares, the remainder to the biggest."""
    names, counts = np.unique(scenarios.astype(str), return_counts=True)
    base = {n: k // len(names) for n in names}
    for n in names[np.argsort(-counts, kind="stable")][: k - sum(base.values())]:
        base[n] += 1
    for n, c in zip(names, counts):
        if base[n] > c:
            raise ValueError(f"scenario {n!r} has only {c} items for {base[n]} anchors")
    return base


def cluster_anchors(
    embeddings: np.ndarray,
    k: int,
    balance: np.ndarray,
    scenarios: np.ndarray | None = None,
    seed: int = 0,
) -> AnchorSet:
    """Weighted k-means anchors (k per scenario split evenly).

    Parameters
    ----------
    embeddings : ndarray (N, E)
        Item embeddings, e.g. ``np.hstack([A, b[:, None]])``.
    k : int
        Total number of anchors.
    balance : ndarray (N,)
        Balance weights (k-means sample weights and the mass of each cluster).
    scenarios : ndarray (N,), optional
        Scenario labels; anchors are chosen within each scenario separately.
    seed : int
        k-means seed.
    """
    from sklearn.cluster import KMeans

    X = np.asarray(embeddings, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"embeddings must be 2-D (items x features), got shape {X.shape}")
    N = X.shape[0]
    balance = np.asarray(balance, dtype=np.float64)
    if balance.shape != (N,):
        raise ValueError(f"balance must have shape ({N},), got {balance.shape}")
    scenarios = np.asarray(scenarios if scenarios is not None else ["all"] * N, dtype=object)
    budget = _scenario_budget(_check_k(k, N, len(set(scenarios))), scenarios)
    positions: list[int] = []
    weights: list[float] = []
    labels = np.empty(N, dtype=np.int64)
    for s in dict.fromkeys(scenarios.astype(str)):
        idx = np.flatnonzero(scenarios.astype(str) == s)
        ks = budget[s]
        Xs, ws = X[idx], balance[idx]
        if ks == len(idx):
            assign = np.arange(len(idx))
            anchor_local = np.arange(len(idx))
        else:
            km = KMeans(n_clusters=ks, n_init=1, random_state=seed, max_iter=50, tol=1e-3)
            assign = km.fit_predict(Xs, sample_weight=ws)
            anchor_local = np.empty(ks, dtype=np.int64)
            for c in range(ks):
                members = np.flatnonzero(assign == c)
                if members.size == 0:  # empty cluster (k-means corner case): nearest free item
                    members = np.arange(len(idx))
                d = ((Xs[members] - km.cluster_centers_[c]) ** 2).sum(1)
                anchor_local[c] = members[np.argmin(d)]
        mass = np.bincount(assign, weights=ws, minlength=ks)
        offset = len(positions)
        positions.extend(idx[anchor_local].tolist())
        weights.extend((mass / mass.sum()).tolist())
        labels[idx] = assign + offset
    return AnchorSet(np.array(positions), np.array(weights), labels, "kmeans", seed)


def _sampling_setup(k, balance, scenarios, seed):
    """Validated inputs of the random baselines: balance, scenario labels, per-scenario budget, rng."""
    balance = np.asarray(balance, dtype=np.float64)
    N = balance.shape[0]
    scenarios = np.asarray(scenarios if scenarios is not None else ["all"] * N, dtype=object).astype(str)
    budget = _scenario_budget(_check_k(k, N, len(set(scenarios))), scenarios)
    return balance, scenarios, budget, np.random.default_rng(seed)


def random_anchors(
    k: int, balance: np.ndarray, scenarios: np.ndarray | None = None, seed: int = 0
) -> AnchorSet:
    """k items drawn uniformly (per scenario); weights ∝ balance weights.

    Every item is represented by the anchors of its scenario (labels point to the
    scenario's first anchor; they only matter for error bars).
    """
    balance, scenarios, budget, rng = _sampling_setup(k, balance, scenarios, seed)
    positions: list[int] = []
    weights: list[float] = []
    labels = np.empty(balance.shape[0], dtype=np.int64)
    for s in dict.fromkeys(scenarios):
        idx = np.flatnonzero(scenarios == s)
        pick = np.sort(rng.choice(idx, budget[s], replace=False))
        w = balance[pick] / balance[pick].sum()
        labels[idx] = len(positions)
        positions.extend(pick.tolist())
        weights.extend(w.tolist())
    return AnchorSet(np.array(positions), np.array(weights), labels, "random", seed)


def stratified_anchors(
    key: np.ndarray,
    k: int,
    balance: np.ndarray,
    scenarios: np.ndarray | None = None,
    seed: int = 0,
    per_stratum: int = 2,
) -> AnchorSet:
    """A stratified random sample of anchors: the design-based estimators' probability sample.

    Within each scenario, items are sorted by ``key`` (e.g. the training models' mean
    score on the item: its easiness), ties by position, and cut into ``k_s // per_stratum``
    strata of (nearly) equal balance mass; ``per_stratum`` items are drawn from each at
    random (uniformly, without replacement; one stratum takes the remainder when k_s is
    odd). Because the draw is random and every stratum is sampled in proportion to its
    mass, the anchor-weighted mean is unbiased for *any* model (whether or not the IRT
    model fits it) and never much worse than a simple random sample; the strata make it
    better when easiness predicts the model's results.

    Each anchor weighs its stratum's mass times its share of the stratum's sampled balance
    weight (equal shares when the balance weights are equal); weights sum to 1 per scenario.

    Returns
    -------
    AnchorSet
        ``labels`` is the stratum of every item and ``strata`` the stratum of every anchor
        (strata are numbered in easiness order within each scenario, scenario after scenario).
    """
    balance, scen, budget, _ = _sampling_setup(k, balance, scenarios, 0)
    key = np.asarray(key, dtype=np.float64)
    if key.shape != balance.shape:
        raise ValueError(f"key must have shape {balance.shape}, got {key.shape}")
    if not np.isfinite(key).all():
        raise ValueError("key must be finite")
    if int(per_stratum) != per_stratum or per_stratum < 1:
        raise ValueError(f"per_stratum must be a positive integer, got {per_stratum!r}")
    N = balance.shape[0]
    labels = np.empty(N, dtype=np.int64)
    positions: list[int] = []
    weights: list[float] = []
    strata: list[int] = []
    for s in dict.fromkeys(scen):
        # one generator per scenario, seeded by the scenario's name: the draw of a scenario
        # does not depend on which other scenarios the matrix holds or their order
        rng = np.random.default_rng([int(seed), *_name_seed(s)])
        idx = np.flatnonzero(scen == s)
        ks = budget[s]
        n_strata = max(1, min(ks // int(per_stratum), len(idx)))
        order = idx[np.lexsort((idx, key[idx]))]
        local = _equal_mass_cut(balance[order], n_strata)
        offset = max(strata) + 1 if strata else 0  # strata numbered across scenarios
        labels[order] = local + offset
        take = np.full(n_strata, ks // n_strata)
        # the remainder goes to the strata with the most mass per draw, then by order
        extra = ks - take.sum()
        mass = np.bincount(local, weights=balance[order], minlength=n_strata)
        sizes = np.bincount(local, minlength=n_strata)
        for h in np.argsort(-mass / take, kind="stable"):
            if extra == 0:
                break
            if take[h] < sizes[h]:
                take[h] += 1
                extra -= 1
        if extra:
            raise ValueError(f"scenario {s!r} has too few items for {ks} anchors")
        total = mass.sum()
        for h in range(n_strata):
            members = order[local == h]
            pick = np.sort(rng.choice(members, min(take[h], members.size), replace=False))
            share = balance[pick] / balance[pick].sum()
            positions.extend(pick.tolist())
            weights.extend((mass[h] / total * share).tolist())
            strata.extend([h + offset] * pick.size)
    pos, wts, strat = np.array(positions), np.array(weights), np.array(strata)
    # anchors in item order within each scenario (the tiny dataset's rows); strata go along
    out_order = np.lexsort((pos, np.array([list(dict.fromkeys(scen)).index(scen[p]) for p in pos])))
    return AnchorSet(pos[out_order], wts[out_order], labels, "stratified", seed, strat[out_order])


def _equal_mass_cut(mass: np.ndarray, n_strata: int) -> np.ndarray:
    """Stratum of each item of an ordered list: ``n_strata`` contiguous runs of equal mass.

    An item goes to the stratum holding the middle of its mass; when a heavy item leaves
    a stratum empty, the run with the most items is split at its mass midpoint.
    """
    n = mass.shape[0]
    if n_strata >= n:
        return np.arange(n)
    cum = np.cumsum(mass)
    mid = (cum - mass / 2) / cum[-1]
    lab = np.minimum((mid * n_strata).astype(np.int64), n_strata - 1)
    _, lab = np.unique(lab, return_inverse=True)
    while lab.max() + 1 < n_strata:
        sizes = np.bincount(lab)
        h = int(np.argmax(sizes))
        members = np.flatnonzero(lab == h)
        c = np.cumsum(mass[members])
        cut = members[int(np.searchsorted(c, c[-1] / 2))]
        cut = min(max(cut, members[0] + 1), members[-1])
        lab[lab > h] += 1
        lab[(lab == h) & (np.arange(n) >= cut)] = h + 1
    return lab


def _name_seed(name: str) -> list[int]:
    """Stable integers from a name (not Python's randomised ``hash``)."""
    import hashlib

    digest = hashlib.sha256(str(name).encode("utf-8")).digest()
    return [int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4)]
