"""IRT fit: parameter recovery on simulated data, options, and input validation."""

import numpy as np
import pytest
from scipy.special import expit

from tinybench_builder.model.irt import IRTModel, binarize_scores, fit_abilities
from tinybench_builder.read.simulate import simulate_responses


def _corr(x, y):
    return float(np.corrcoef(np.ravel(x), np.ravel(y))[0, 1])


@pytest.fixture(scope="module")
def sim1d():
    matrix, truth = simulate_responses(n_models=300, n_items=300, n_dims=1, seed=1)
    return matrix.scores, truth


def test_recovers_one_dimensional_parameters(sim1d):
    Y, t = sim1d
    m = IRTModel(n_dims=1, random_state=0).fit(Y)
    assert m is not None and m.n_dims_ == 1
    assert m.discrimination_.shape == (300, 1) and m.difficulty_.shape == (300,) and m.ability_.shape == (300, 1)
    # sign of the single dimension is arbitrary: align it
    sign = np.sign(_corr(m.ability_, t["theta"]))
    assert sign * _corr(m.ability_, t["theta"]) > 0.95
    assert sign * _corr(m.discrimination_, t["A"]) > 0.8
    assert _corr(m.difficulty_, t["b"]) > 0.95
    assert np.abs(m.predict_proba() - t["P"]).mean() < 0.06


def test_recovers_two_dimensional_probabilities_with_missing_entries():
    matrix, t = simulate_responses(n_models=250, n_items=400, n_dims=2, seed=2, missing=0.3)
    m = IRTModel(n_dims=2, random_state=0).fit(matrix.scores)
    P = m.predict_proba()
    assert _corr(P, t["P"]) > 0.95
    # the missing entries are predicted as well as the observed ones
    miss = np.isnan(matrix.scores)
    assert np.abs(P[miss] - t["P"][miss]).mean() < 0.08


def test_soft_labels_are_used_as_probabilities():
    matrix, t = simulate_responses(n_models=150, n_items=200, n_dims=1, seed=3, soft=True)
    m = IRTModel(n_dims=1).fit(matrix.scores)
    assert np.abs(m.predict_proba() - t["P"]).mean() < 0.03


def test_dimension_is_chosen_by_validation_and_fit_is_deterministic():
    matrix, _ = simulate_responses(n_models=120, n_items=300, n_dims=1, seed=4)
    a = IRTModel(dims_grid=(1, 3), random_state=5).fit(matrix.scores)
    b = IRTModel(dims_grid=(1, 3), random_state=5).fit(matrix.scores)
    assert set(a.dims_scores_) == {1, 3}
    assert a.n_dims_ == min(a.dims_scores_, key=a.dims_scores_.get)
    np.testing.assert_array_equal(a.discrimination_, b.discrimination_)
    np.testing.assert_array_equal(a.ability_, b.ability_)


def test_staged_fit_for_many_items_matches_truth():
    import tinybench_builder.model.irt as irt

    matrix, t = simulate_responses(n_models=100, n_items=900, n_dims=1, seed=6)
    old = irt._STAGE_ITEMS
    irt._STAGE_ITEMS = 300  # force the subset -> Newton -> polish path on a small matrix
    try:
        m = IRTModel(n_dims=1).fit(matrix.scores)
    finally:
        irt._STAGE_ITEMS = old
    assert _corr(m.difficulty_, t["b"]) > 0.9
    assert _corr(m.predict_proba(), t["P"]) > 0.9


def test_transform_and_refit():
    matrix, t = simulate_responses(n_models=200, n_items=300, n_dims=1, seed=7)
    m = IRTModel(n_dims=1).fit(matrix.scores[:150])
    th = m.transform(matrix.scores[150:])
    sign = np.sign(_corr(m.ability_, t["theta"][:150]))
    assert sign * _corr(th, t["theta"][150:]) > 0.9
    m.refit(matrix.scores)
    assert m.ability_.shape == (200, 1)


def test_binarize_keeps_the_mean_and_nans():
    Y = np.array([[0.1, 0.9, np.nan], [0.6, 0.3, 0.8]])
    B = binarize_scores(Y, 0.5)
    np.testing.assert_array_equal(B, [[0, 1, np.nan], [1, 0, 1]])
    rng = np.random.default_rng(0)
    soft = rng.random((50, 40))
    assert abs(binarize_scores(soft).mean() - soft.mean()) < 0.02
    m = IRTModel(n_dims=1, binarize=0.5).fit(soft)
    assert m.n_dims_ == 1


def test_fit_abilities_matches_closed_form_one_item():
    # one item, a=1, b=0, prior N(0, 1), y=1: the MAP solves theta = 1 - sigmoid(theta)
    from scipy.optimize import brentq

    theta, cov = fit_abilities(np.array([[1.0]]), np.array([[1.0]]), np.array([0.0]), np.zeros(1), np.eye(1))
    expected = brentq(lambda x: x - (1 - expit(x)), -5, 5)
    assert theta[0, 0] == pytest.approx(expected, abs=1e-6)
    p = expit(expected)
    assert cov[0, 0, 0] == pytest.approx(1.0 / (1.0 + p * (1 - p)), rel=1e-6)


@pytest.mark.parametrize(
    "Y, match",
    [
        (np.zeros((3, 3, 3)), "2-D"),
        (np.full((3, 3), 1.5), r"\[0, 1\]"),
        (np.full((3, 3), -0.1), r"\[0, 1\]"),
        (np.zeros((1, 5)), "at least 2 models"),
        (np.full((3, 3), np.nan), "no evaluated"),
    ],
)
def test_bad_responses_raise(Y, match):
    with pytest.raises(ValueError, match=match):
        IRTModel(n_dims=1).fit(Y)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_dims": 0}, "n_dims"),
        ({"n_dims": 1.5}, "n_dims"),
        ({"prior_a": -1}, "prior_a"),
        ({"dims_grid": ()}, "dims_grid"),
        ({"max_iter": 0}, "max_iter"),
        ({"validation_fraction": 1.0}, "validation_fraction"),
    ],
)
def test_bad_parameters_raise(params, match):
    with pytest.raises(ValueError, match=match):
        IRTModel(**params).fit(np.random.default_rng(0).random((10, 10)))


def test_predict_before_fit_raises():
    with pytest.raises(ValueError, match="not fitted"):
        IRTModel().predict_proba()
