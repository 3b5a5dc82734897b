"""The fit pipeline: parameters, report, the design-based estimate's unbiasedness when the IRT
model is wrong, intervals under shift, and sameness across layouts, orders and thread counts."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy.special import expit

from tinybench_builder.model.anchors import stratified_anchors
from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.model.fitting import fit_estimator
from tinybench_builder.model.report import report_markdown
from tinybench_builder.model.irt import IRTModel
from tinybench_builder.read.matrix import ResponseMatrix
from tinybench_builder.read.simulate import simulate_responses


@pytest.fixture(scope="module")
def small():
    matrix, _ = simulate_responses(n_models=30, n_items=150, n_dims=1, seed=11)
    return matrix


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_seeds": 0}, "n_seeds"),
        ({"n_folds": 100}, "n_folds"),
        ({"design": "magic"}, "design"),
        ({"kappa": -1.0}, "kappa"),
        ({"n_anchors": 1000}, "cannot pick"),
        ({"validation_fraction": 0}, "validation_fraction"),
        ({"scenario_order": ["other"]}, "scenario_order lacks"),
        ({"binarize": 2.5}, "binarize"),
        ({"binarize": 0.0}, "binarize"),
        ({"binarize": "yes"}, "binarize"),
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
    res = fit_estimator(small, n_anchors=20, n_dims=1, seed=4, progress=False)
    rep = res.report
    assert rep["n_folds"] == 5 and rep["n_validation_models"] == 30 and rep["design"] == "stratified"
    assert len(rep["oof"]["score"]) == 30
    row = rep["table"][0]
    assert row["method"] == "composite" and 0 <= row["lambda"] <= 1 and 0 <= row["pirt_weight"] <= 1
    assert {"random", "irt", "pirt", "gpirt", "db", "mb", "score", "coverage"} <= set(row)
    assert "| all | 30 |" in report_markdown(rep)
    chosen = res.estimator.metadata["chosen_estimator"]["all"]
    assert chosen["method"] == "composite" and chosen["oof_mae"]["score"] == row["score"]
    # the anchors: a stratified sample, positions into the caller's matrix
    assert res.estimator.anchor_ids == [small.items[p] for p in res.anchors.positions]
    again = fit_estimator(small, n_anchors=20, n_dims=1, seed=4, progress=False)
    np.testing.assert_array_equal(res.anchors.positions, again.anchors.positions)
    assert res.estimator.params == again.estimator.params


def test_kmeans_design_reports_gp_irt(small):
    res = fit_estimator(small, n_anchors=20, n_dims=1, design="kmeans", n_seeds=2, n_folds=2, seed=1, progress=False)
    assert res.report["table"][0]["method"] == "gpirt"
    r = res.estimator.estimate(small.scores[0, res.anchors.positions])
    assert r["score"] == r["gpirt"]


def _three_dim_population(n_models, n_items, seed):
    """Scores from a 3-D 2PL model whose third dimension only a few items load on."""
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal((n_models, 3))
    A = np.abs(rng.normal(0, 1, (n_items, 3))) * np.array([1.0, 0.6, 0.0])
    special = rng.random(n_items) < 0.3
    A[special, 2] = 2.5  # a block of items that follows its own ability
    b = rng.normal(0, 1.2, n_items)
    return theta, A, b


@pytest.mark.slow  # tens of seconds (pytest --durations)
def test_design_based_estimate_is_unbiased_when_the_irt_model_is_wrong():
    """3-D truth, 1-D fit: over repeated stratified draws the design-based estimate averages
    to each model's true full score, even for models the 1-D model mispredicts."""
    rng = np.random.default_rng(0)
    theta, A, b = _three_dim_population(60, 600, seed=3)
    Y = (rng.random((60, 600)) < expit(theta @ A.T - b)).astype(float)
    irt = IRTModel(n_dims=1, random_state=0).fit(Y[:50])
    mean, cov = irt.ability_prior()
    # two new models off the training population: strong only on the block of special items
    new_theta = np.array([[0.0, 0.0, 3.0], [0.0, 0.0, -3.0]])
    Ynew = (rng.random((2, 600)) < expit(new_theta @ A.T - b)).astype(float)
    truth = Ynew.mean(1)
    easiness = Y[:50].mean(0)
    draws = {"db": [], "pirt": []}
    for seed in range(300):
        a = stratified_anchors(easiness, 40, np.ones(600), seed=seed)
        est = TinyEstimator([str(j) for j in range(600)], a.positions, a.weights, irt.discrimination_,
                            irt.difficulty_, np.ones(600), np.zeros(600, int), ["all"], a.labels, mean, cov)
        comp = est.components(Ynew[:, a.positions])
        draws["db"].append(comp["db"][:, 0])
        draws["pirt"].append(comp["pirt"][:, 0])
    db, pirt = np.array(draws["db"]), np.array(draws["pirt"])
    mc_se = db.std(0, ddof=1) / np.sqrt(len(db))
    assert np.all(np.abs(db.mean(0) - truth) < 4 * mc_se + 1e-3)
    # the model-based estimate is biased for these models: the test would catch a biased db
    assert np.all(np.abs(pirt.mean(0) - truth) > 5 * mc_se)


def test_intervals_cover_models_stronger_than_the_training_ones():
    """Fit on the weakest half of a simulated population whose strong models differ in kind
    (a second ability only they have), test on the strongest 30%."""
    rng = np.random.default_rng(5)
    n, N = 160, 800
    theta = rng.standard_normal((n, 2))
    theta[:, 1] = np.where(theta[:, 0] > 0.5, theta[:, 0] * 1.5, 0.0)  # strong models gain a skill
    A = np.abs(rng.normal(0, 1, (N, 2))) * np.array([1.0, 0.8])
    b = rng.normal(0.5, 1.2, N)
    Y = (rng.random((n, N)) < expit(theta @ A.T - b)).astype(float)
    means = Y.mean(1)
    order = np.argsort(means)
    train, test = order[: n // 2], order[-int(0.3 * n):]
    m = ResponseMatrix(Y[train], [f"m{i}" for i in train], [str(j) for j in range(N)])
    res = fit_estimator(m, n_anchors=100, n_dims=1, seed=0, progress=False)
    out = res.estimator.estimate(Y[test][:, res.anchors.positions])
    truth = means[test]
    lo, hi = np.array([r["ci_low"] for r in out]), np.array([r["ci_high"] for r in out])
    score, pirt = np.array([r["score"] for r in out]), np.array([r["pirt"] for r in out])
    assert np.mean((truth >= lo) & (truth <= hi)) >= 0.85
    assert np.mean(np.abs(score - truth)) < 0.6 * np.mean(np.abs(pirt - truth))


@pytest.fixture(scope="module")
def soft_matrix():
    matrix, _ = simulate_responses(n_models=24, n_items=160, n_dims=2, seed=7, missing=0.05, soft=True)
    return matrix


def _fit_summary(matrix):
    res = fit_estimator(matrix, n_anchors=24, seed=3, n_dims=None, progress=False)
    ref, _ = simulate_responses(n_models=5, n_items=160, n_dims=2, seed=99, soft=True)
    Y = ref.to_frame()[res.estimator.anchor_ids].to_numpy()
    return sorted(res.estimator.anchor_ids), np.array([[r[k] for k in ("score", "ci_low", "ci_high", "pirt")]
                                                       for r in res.estimator.estimate(Y)])


def test_same_data_same_tiny_benchmark_in_any_layout_or_order(soft_matrix, tmp_path):
    """Wide parquet, long CSV with shuffled rows, permuted models and items: same anchors,
    estimates within 1e-9."""
    wide = tmp_path / "wide.parquet"
    soft_matrix.write(wide)
    frame = soft_matrix.to_frame()
    long = frame.stack().rename("score").reset_index().rename(columns={"level_1": "item"})
    long = long.sample(frac=1.0, random_state=1)
    long.to_csv(tmp_path / "long.csv", index=False)
    rng = np.random.default_rng(0)
    permuted = frame.iloc[rng.permutation(frame.shape[0]), rng.permutation(frame.shape[1])]
    permuted.to_parquet(tmp_path / "permuted.parquet")
    fortran = ResponseMatrix(np.asfortranarray(soft_matrix.scores), soft_matrix.models, soft_matrix.items)
    anchors0, est0 = _fit_summary(ResponseMatrix.read(wide))
    for other in (ResponseMatrix.read(tmp_path / "long.csv"), ResponseMatrix.read(tmp_path / "permuted.parquet"),
                  fortran):
        anchors, est = _fit_summary(other)
        assert anchors == anchors0
        np.testing.assert_allclose(est, est0, rtol=0, atol=1e-9)


_THREADS_SCRIPT = """
import json, sys
import numpy as np
from tinybench_builder.model.fitting import fit_estimator
from tinybench_builder.read.simulate import simulate_responses
m, _ = simulate_responses(n_models=24, n_items=300, n_dims=2, seed=5)
res = fit_estimator(m, n_anchors=30, seed=1, progress=False)
out = res.estimator.estimate(m.scores[:4, res.anchors.positions])
print(json.dumps({"anchors": res.estimator.anchor_ids, "score": [r["score"] for r in out]}))
"""


@pytest.mark.slow  # tens of seconds (pytest --durations)
def test_same_tiny_benchmark_whatever_the_blas_thread_count():
    runs = []
    for threads in ("1", "2"):
        env = {**os.environ, "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}
        proc = subprocess.run([sys.executable, "-c", _THREADS_SCRIPT], capture_output=True, text=True, env=env,
                              timeout=300, check=True)
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert list(runs[0]["anchors"]) == list(runs[1]["anchors"])
    np.testing.assert_allclose(runs[0]["score"], runs[1]["score"], rtol=0, atol=1e-9)
