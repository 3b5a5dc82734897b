"""The fit pipeline: validation of its parameters, calibration, determinism of the report."""

import numpy as np
import pytest

from builder.fitting import calibrate_blend, fit_estimator, report_markdown
from builder.simulate import simulate_responses


@pytest.fixture(scope="module")
def small():
    matrix, _ = simulate_responses(n_models=30, n_items=150, n_dims=1, seed=11)
    return matrix


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_seeds": 0}, "n_seeds"),
        ({"n_folds": 100}, "n_folds"),
        ({"blend_mode": "magic"}, "blend_mode"),
        ({"embedding": "words"}, "embedding"),
        ({"n_anchors": 1000}, "cannot pick"),
        ({"validation_fraction": 0}, "validation_fraction"),
    ],
)
def test_bad_parameters(small, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fit_estimator(small, **{"n_anchors": 20, "progress": False, **kwargs})


def test_too_few_models():
    matrix, _ = simulate_responses(n_models=4, n_items=50, seed=1)
    with pytest.raises(ValueError, match="at least 6 models"):
        fit_estimator(matrix, n_anchors=10, progress=False)


def test_report_is_out_of_fold_and_complete(small):
    res = fit_estimator(small, n_anchors=20, n_dims=1, n_seeds=2, seed=4, progress=False)
    rep = res.report
    assert rep["n_folds"] == 5 and rep["n_validation_models"] == 30
    assert len(rep["oof"]["gpirt"]) == 30
    row = rep["table"][0]
    assert row["blend"] == "lambda" and 0 <= row["lambda"] <= 1
    assert "| all | 30 |" in report_markdown(rep)
    again = fit_estimator(small, n_anchors=20, n_dims=1, n_seeds=2, seed=4, progress=False)
    np.testing.assert_array_equal(res.anchors.positions, again.anchors.positions)
    assert res.estimator.lambdas == again.estimator.lambdas


def test_calibrate_blend_auto_keeps_the_better_mode():
    t = np.linspace(0.3, 0.7, 40)[:, None]
    rng = np.random.default_rng(2)
    # irt is exact for half of the models (small se), noisy for the others (large se):
    # per-model precision weights beat any single lambda
    noisy = np.arange(40) % 2 == 0
    se_irt = np.where(noisy, 0.1, 0.001)[:, None]
    irt = t + rng.normal(0, 1, (40, 1)) * se_irt
    pirt = t + rng.normal(0, 0.03, (40, 1))
    oof = {"irt": irt, "pirt": pirt, "se_irt": se_irt, "se_pirt": np.full((40, 1), 0.03)}
    auto = calibrate_blend(oof, t, 0, 40, "auto")
    lam = calibrate_blend(oof, t, 0, 40, "lambda")
    assert auto["mode"] == "precision" and auto["mae"] < lam["mae"]
    assert auto["interval_scale"] > 0
