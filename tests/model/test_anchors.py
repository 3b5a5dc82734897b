"""Anchor selection, balance weights and calibration helpers."""

import numpy as np
import pytest

from tinybench_builder.model.anchors import balance_weights, cluster_anchors, random_anchors, stratified_anchors
from tinybench_builder.model.calibrate import choose_lambda, coverage, interval_scale


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


def test_random_baseline():
    r = random_anchors(10, np.ones(100), seed=3)
    assert r.k == 10 and r.weights.sum() == pytest.approx(1.0)
    np.testing.assert_array_equal(r.strata, np.arange(10))


def test_stratified_sample_equal_mass_strata_along_the_key():
    rng = np.random.default_rng(0)
    key = rng.random(1000)
    a = stratified_anchors(key, 100, np.ones(1000), seed=1)
    assert a.k == 100 and a.method == "stratified"
    assert np.bincount(a.labels).tolist() == [20] * 50  # 50 strata of equal mass
    assert np.bincount(a.strata).tolist() == [2] * 50  # two draws each
    assert np.all(a.labels[a.positions] == a.strata)
    assert np.allclose(a.weights, 0.01)
    # strata are contiguous in key order: easiness ranges do not overlap
    hi = [key[a.labels == h].max() for h in range(50)]
    lo = [key[a.labels == h].min() for h in range(50)]
    assert all(h < l_next for h, l_next in zip(hi, lo[1:]))
    # anchors in item order within the scenario; deterministic for a seed
    assert np.all(np.diff(a.positions) > 0)
    np.testing.assert_array_equal(a.positions, stratified_anchors(key, 100, np.ones(1000), seed=1).positions)
    assert not np.array_equal(a.positions, stratified_anchors(key, 100, np.ones(1000), seed=2).positions)


def test_stratified_sample_per_scenario_balance_and_odd_budgets():
    rng = np.random.default_rng(1)
    key = rng.random(700)
    scen = np.repeat(["x", "y"], [500, 200])
    bal = np.where(np.arange(700) < 600, 1.0, 3.0)  # unequal balance weights in y
    a = stratified_anchors(key, 51, bal, scen, seed=0)
    picked = scen[a.positions]
    assert (picked == "x").sum() == 26 and (picked == "y").sum() == 25
    for s in "xy":
        assert a.weights[picked == s].sum() == pytest.approx(1.0)
    # a scenario's draw does not depend on the other scenarios
    alone = stratified_anchors(key[500:], 25, bal[500:], scen[500:], seed=0)
    np.testing.assert_array_equal(alone.positions + 500, a.positions[picked == "y"])


@pytest.mark.slow  # tens of seconds (pytest --durations)
def test_stratified_sample_is_unbiased_for_any_scores():
    rng = np.random.default_rng(2)
    key = rng.random(300)
    y = (rng.random(300) < 0.3 + 0.4 * (key > 0.8)).astype(float)  # unrelated to key below 0.8
    bal = rng.uniform(0.5, 2.0, 300)
    truth = (bal * y).sum() / bal.sum()
    ests = np.array([(lambda a: a.weights @ y[a.positions])(stratified_anchors(key, 20, bal, per_stratum=2, seed=s))
                     for s in range(2000)])
    assert abs(ests.mean() - truth) < 4 * ests.std() / np.sqrt(len(ests)) + 2e-3


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
