"""Anchor selection: which k items a tiny benchmark keeps, and what each one weighs.

* :func:`balance_weights` — per-item weights under which every subscenario (e.g. an
  MMLU subject) counts equally within its scenario; they define the full score.
* :func:`cluster_anchors` — the tinyBenchmarks method: weighted k-means
  (scikit-learn) on the item embeddings ``[a_j, b_j]``; the anchor of a cluster is the
  member nearest its centroid, its weight the cluster's share of the balance weights.
* :func:`random_anchors`, :func:`stratified_anchors` — baselines.

Every function returns an :class:`AnchorSet`: positions into the item list, weights
summing to 1 within each scenario, and the cluster label of every item (which the
estimator uses for the error bar of the anchor-weighted mean).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
        Index (into ``positions``) of the anchor that represents each item.
    method : str
    seed : int or None
    """

    positions: np.ndarray
    weights: np.ndarray
    labels: np.ndarray
    method: str
    seed: int | None = None

    @property
    def k(self) -> int:
        return int(self.positions.shape[0])


def balance_weights(scenarios: np.ndarray, subscenarios: np.ndarray | None = None) -> np.ndarray:
    """Item weights: each scenario sums to 1, each of its subscenarios counts equally.

    ``w_j = 1 / (n_sub(s) * n_items(s, sub))`` as in the original ``N_sce / (n_sub n_i)``
    (up to the scenario size, since we normalise per scenario).
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
        w[in_s] = 1.0 / (len(sub_names) * counts[sub_idx])
    return w


def _check_k(k: int, n_items: int, n_scenarios: int = 1) -> int:
    if int(k) != k or k < 1:
        raise ValueError(f"the number of anchors must be a positive integer, got {k!r}")
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
    positions, weights = [], []
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
    positions, weights, labels = [], [], np.empty(balance.shape[0], dtype=np.int64)
    for s in dict.fromkeys(scenarios):
        idx = np.flatnonzero(scenarios == s)
        pick = np.sort(rng.choice(idx, budget[s], replace=False))
        w = balance[pick] / balance[pick].sum()
        labels[idx] = len(positions)
        positions.extend(pick.tolist())
        weights.extend(w.tolist())
    return AnchorSet(np.array(positions), np.array(weights), labels, "random", seed)


def stratified_anchors(
    k: int, balance: np.ndarray, strata: np.ndarray, scenarios: np.ndarray | None = None, seed: int = 0
) -> AnchorSet:
    """Stratified random sample: anchors spread over ``strata`` ∝ their balance mass."""
    balance, scenarios, budget, rng = _sampling_setup(k, balance, scenarios, seed)
    strata = np.asarray(strata).astype(str)
    positions, weights, labels = [], [], np.empty(balance.shape[0], dtype=np.int64)
    for s in dict.fromkeys(scenarios):
        idx = np.flatnonzero(scenarios == s)
        labels[idx] = len(positions)  # strata without an anchor: represented by the first one
        names = list(dict.fromkeys(strata[idx]))
        mass = np.array([balance[idx][strata[idx] == n].sum() for n in names])
        # largest-remainder allocation, at most the stratum size, at least one where possible
        sizes = np.array([(strata[idx] == n).sum() for n in names])
        alloc = np.minimum(np.floor(budget[s] * mass / mass.sum()).astype(int), sizes)
        order = np.argsort(-(budget[s] * mass / mass.sum() - alloc), kind="stable")
        while alloc.sum() < budget[s]:
            for o in order:
                if alloc.sum() < budget[s] and alloc[o] < sizes[o]:
                    alloc[o] += 1
        for n, a, m in zip(names, alloc, mass):
            members = idx[strata[idx] == n]
            if a == 0:
                continue
            pick = np.sort(rng.choice(members, a, replace=False))
            labels[members] = len(positions) + np.arange(len(members)) % a
            positions.extend(pick.tolist())
            weights.extend((m * balance[pick] / balance[pick].sum()).tolist())
        tot = np.sum(weights[-alloc.sum():]) if alloc.sum() else 1.0
        weights[-alloc.sum():] = (np.array(weights[-alloc.sum():]) / tot).tolist()
    return AnchorSet(np.array(positions), np.array(weights), labels, "stratified", seed)
