"""The validation report scores out-of-fold parts exactly as the shipped estimator scores a model."""

import numpy as np

from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.model.report import scored


def _bundle():
    """Two scenarios of a stratified design (8 items, 2 strata, 2 anchors each): one composite, one gp-IRT."""
    return TinyEstimator(
        item_ids=[f"q{j}" for j in range(16)], anchor_positions=[1, 2, 5, 7, 9, 10, 13, 15],
        anchor_weights=[0.25] * 8, A=np.linspace(0.2, 1.5, 16)[:, None], b=np.linspace(-1.5, 1.5, 16),
        balance=np.ones(16), scenario_index=np.repeat([0, 1], 8), scenario_names=["arc", "gsm8k"],
        strata=np.repeat([0, 1, 2, 3], 4), prior_mean=np.zeros(1), prior_cov=np.eye(1),
        params={"arc": {"method": "composite", "sigma": 0.04, "sigma_partial": 0.05, "pirt_weight": 0.6,
                        "range": [0.3, 0.7], "interval_scale": 1.4, "design_slope": 0.5},
                "gsm8k": {"method": "gpirt", "lambda": 0.3, "interval_scale": 1.2}},
        ridge_coef=np.linspace(-0.05, 0.05, 8),
    )


def test_scored_is_the_estimators_score_and_se_to_the_last_bit():
    est = _bundle()
    rng = np.random.default_rng(3)
    Y = (rng.random((40, 8)) < 0.6).astype(float)
    Y[rng.random(Y.shape) < 0.3] = np.nan  # partial runs: the model-based error grows
    Y[0] = np.nan  # a model with nothing answered
    comp = est.components(Y)
    oof = {key: comp[key] for key in ("irt", "se_irt", "pirt", "se_pirt", "db", "se_db", "ridge", "answered")}
    oof["n_anchors"] = np.array([4.0, 4.0])
    score, se = scored(oof, est.params, est.scenarios)
    np.testing.assert_array_equal(score, comp["score"])
    np.testing.assert_array_equal(se, comp["se"])
    assert np.isfinite(se).all() and (se[:, 1] > 0).all()
