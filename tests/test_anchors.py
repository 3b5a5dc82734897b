"""Anchor selection, balance weights and calibration helpers."""

import numpy as np
import pytest

from builder.anchors import balance_weights, cluster_anchors, random_anchors, stratified_anchors
from builder.calibrate import choose_lambda, coverage, interval_scale


def test_balance_weights_make_subscenarios_count_equally():
    scen = np.array(["mmlu"] * 4 + ["arc"] * 2)
    sub = np.array(["algebra", "algebra", "algebra", "law", "", ""])
    w = balance_weights(scen, sub)
    np.testing.assert_allclose(w, [1 / 6, 1 / 6, 1 / 6, 1 / 2, 1 / 2, 1 / 2])
    for s in ("mmlu", "arc"):
        assert w[scen == s].sum() == pytest.approx(1.0)


def test_cluster_anchors_per_scenario_with_cluster_masses():
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(300, 3))
    scen = np.array(["a"] * 200 + ["b"] * 100)
    bal = balance_weights(scen)
    a = cluster_anchors(emb, 10, bal, scen, seed=1)
    assert a.k == 10 and len(set(a.positions.tolist())) == 10
    assert (np.array([scen[p] for p in a.positions]) == "a").sum() == 5
    for s in ("a", "b"):
        in_s = np.array([scen[p] == s for p in a.positions])
        assert a.weights[in_s].sum() == pytest.approx(1.0)
    # each item's label points at an anchor of its own scenario, and each anchor is in its cluster
    assert all(scen[a.positions[a.labels[j]]] == scen[j] for j in range(300))
    assert all(a.labels[p] == i for i, p in enumerate(a.positions))
    # cluster mass = the weight of the anchor
    mass = np.bincount(a.labels, weights=bal, minlength=10)
    np.testing.assert_allclose(mass, a.weights)
    b = cluster_anchors(emb, 10, bal, scen, seed=1)
    np.testing.assert_array_equal(a.positions, b.positions)


def test_random_and_stratified_baselines():
    bal = np.ones(100)
    r = random_anchors(10, bal, seed=3)
    assert r.k == 10 and r.weights.sum() == pytest.approx(1.0)
    strata = np.repeat(["x", "y"], [80, 20])
    s = stratified_anchors(10, bal, strata, seed=3)
    picked = strata[s.positions]
    assert (picked == "x").sum() == 8 and (picked == "y").sum() == 2
    assert s.weights.sum() == pytest.approx(1.0)
    assert s.weights[picked == "y"].sum() == pytest.approx(0.2)


@pytest.mark.parametrize("k, match", [(0, "positive integer"), (2.5, "positive integer"), (500, "cannot pick")])
def test_bad_anchor_counts(k, match):
    with pytest.raises(ValueError, match=match):
        random_anchors(k, np.ones(100))


def test_choose_lambda_and_interval_scale():
    truth = np.linspace(0.2, 0.8, 20)
    irt = truth + 0.05  # biased
    pirt = truth - 0.05  # biased the other way: the midpoint is exact
    assert choose_lambda(irt, pirt, truth) == pytest.approx(0.5)
    assert choose_lambda(truth, pirt, truth) == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    err = rng.normal(0, 0.02, 400)
    c = interval_scale(truth.repeat(20) + err, np.full(400, 0.01), truth.repeat(20), n_models=400)
    assert c == pytest.approx(2.0, rel=0.15)  # se too small by 2x -> scale ~2
    assert coverage(truth + err[:20], 1.96 * 0.02 * np.ones(20), truth) > 0.8
    with pytest.raises(ValueError, match="one shape"):
        choose_lambda(irt, pirt[:3], truth)
