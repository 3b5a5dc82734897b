"""TinyEstimator: formulas on hand-computable cases, input handling, side files."""

import json
import zipfile

import numpy as np
import pytest
from scipy.special import expit

from builder.estimator import NPZ_NAME, TinyEstimator


def make_estimator(A=None, lam=0.25, scale=1.0, scenarios=None, N=6):
    """N items, anchors at positions 4, 1 (in that order), clusters {0,2,4}->anchor 0, {1,3,5}->anchor 1."""
    A = np.zeros((N, 1)) if A is None else A
    b = np.linspace(-1.0, 1.0, N)
    sc_names = ["all"] if scenarios is None else sorted(set(scenarios))
    sc_idx = np.zeros(N, int) if scenarios is None else np.array([sc_names.index(s) for s in scenarios])
    return TinyEstimator(
        item_ids=[f"q{j}" for j in range(N)],
        anchor_positions=[4, 1],
        anchor_weights=[0.5, 0.5],
        A=A, b=b, balance=np.ones(N), scenario_index=sc_idx, scenario_names=sc_names,
        cluster=np.array([0, 1, 0, 1, 0, 1]), prior_mean=np.zeros(1), prior_cov=np.eye(1),
        lambdas={s: lam for s in sc_names}, interval_scale={s: scale for s in sc_names},
    )


def test_formulas_hand_computed():
    # A = 0: every prediction is sigmoid(-b_j), whatever the answers
    est = make_estimator()
    r = est.estimate([1.0, 0.0])  # q4 = 1, q1 = 0
    p = expit(-np.linspace(-1, 1, 6))
    assert r["irt"] == pytest.approx(0.5 * 1 + 0.5 * 0)
    unseen = [0, 2, 3, 5]
    pirt = (1.0 + 0.0 + p[unseen].sum()) / 6
    assert r["pirt"] == pytest.approx(pirt)
    assert r["gpirt"] == pytest.approx(0.25 * 0.5 + 0.75 * pirt)
    assert r["ci_low"] < r["gpirt"] < r["ci_high"]
    assert r["n_answered"] == 2
    # with A = 0, theta carries no information: the pirt error is the Bernoulli noise
    se_pirt = np.sqrt((p[unseen] * (1 - p[unseen])).sum()) / 6
    comp = est.components(np.array([[1.0, 0.0]]))
    assert comp["se_pirt"][0, 0] == pytest.approx(se_pirt)


def test_theta_is_the_map_under_the_prior():
    # one anchor answered, a = 1 at that item: the MAP solves theta = y - sigmoid(theta - b)
    from scipy.optimize import brentq

    A = np.zeros((6, 1))
    A[4, 0] = 1.0
    est = make_estimator(A=A)
    comp = est.components(np.array([[1.0, np.nan]]))
    b4 = np.linspace(-1, 1, 6)[4]
    expected = brentq(lambda t: t - (1 - expit(t - b4)), -5, 5)
    assert comp["theta"][0, 0] == pytest.approx(expected, abs=1e-6)


def test_positional_mapping_and_matrix_inputs_agree():
    A = np.linspace(0.2, 1.5, 6)[:, None]
    est = make_estimator(A=A)
    a = est.estimate([0.0, 1.0])
    b = est.estimate({"q1": 1.0, "q4": 0.0})
    c = est.estimate(np.array([[0.0, 1.0], [1.0, 1.0]]))
    assert isinstance(c, list) and len(c) == 2
    for key in ("irt", "pirt", "gpirt", "ci_low", "ci_high"):
        assert a[key] == pytest.approx(b[key]) == pytest.approx(c[0][key])
    assert c[1]["gpirt"] > c[0]["gpirt"]
    assert est.estimate([True, False])["irt"] == pytest.approx(est.estimate([1, 0])["irt"])


def test_subset_of_anchors_and_wider_interval_with_fewer_answers():
    A = np.linspace(0.5, 2.0, 6)[:, None]
    est = make_estimator(A=A)
    full = est.estimate({"q4": 1.0, "q1": 1.0})
    part = est.estimate({"q4": 1.0})
    assert part["n_answered"] == 1
    assert part["irt"] == pytest.approx(1.0)  # renormalised over the answered anchor
    assert (part["ci_high"] - part["ci_low"]) > (full["ci_high"] - full["ci_low"])
    nan_row = est.estimate([1.0, float("nan")])
    assert nan_row["gpirt"] == pytest.approx(part["gpirt"])


def test_batch_row_with_nothing_answered_gets_the_prior_prediction():
    est = make_estimator(A=np.ones((6, 1)))
    res = est.estimate(np.array([[np.nan, np.nan], [1.0, 0.0]]))
    assert np.isnan(res[0]["irt"]) and res[0]["n_answered"] == 0
    assert res[0]["gpirt"] == pytest.approx(res[0]["pirt"])
    assert res[0]["ci_high"] - res[0]["ci_low"] > 0


def test_interval_scale_widens_the_interval():
    narrow = make_estimator(A=np.ones((6, 1)), scale=1.0).estimate([1, 0])
    wide = make_estimator(A=np.ones((6, 1)), scale=2.0).estimate([1, 0])
    assert wide["gpirt"] == pytest.approx(narrow["gpirt"])
    assert (wide["ci_high"] - wide["ci_low"]) > (narrow["ci_high"] - narrow["ci_low"])


def test_bundle_reports_each_scenario_and_the_mean():
    est = TinyEstimator(
        item_ids=[f"q{j}" for j in range(6)], anchor_positions=[0, 3], anchor_weights=[1.0, 1.0],
        A=np.zeros((6, 1)), b=np.zeros(6), balance=np.ones(6), scenario_index=[0, 0, 0, 1, 1, 1],
        scenario_names=["arc", "gsm8k"], cluster=[0, 0, 0, 1, 1, 1], prior_mean=[0.0], prior_cov=[[1.0]],
        lambdas={"arc": 1.0, "gsm8k": 1.0},
    )
    r = est.estimate([1.0, 0.0])
    assert r["scenarios"]["arc"]["irt"] == pytest.approx(1.0)
    assert r["scenarios"]["gsm8k"]["irt"] == pytest.approx(0.0)
    assert r["gpirt"] == pytest.approx(0.5)
    assert r["scenarios"]["arc"]["pirt"] == pytest.approx((1 + 0.5 + 0.5) / 3)


@pytest.mark.parametrize(
    "scores, match",
    [
        ([1.0], "expected 2 scores"),
        ([1.0, 0.0, 1.0], "expected 2 scores"),
        ([1.0, 1.5], r"in \[0, 1\]"),
        ([-0.1, 0.0], r"in \[0, 1\]"),
        (["1", 0.0], "text"),
        ("10", "text"),
        (np.zeros((1, 2, 2)), "dimensions"),
        (np.float64(1.0), "dimensions"),
        ({"zz": 1.0}, "unknown item id 'zz'"),
        ({"q0": 1.0}, "not one of the 2 anchors"),
        ({"q4": "yes"}, "text"),
        ({}, "no anchor is answered"),
        ([np.nan, None], "no anchor is answered"),
        ([[1.0, 0.0], [1.0]], "sequence"),
        ([object(), 1.0], "not a number"),
        ([float("inf"), 1.0], r"in \[0, 1\]"),
    ],
)
def test_bad_input_raises_value_error(scores, match):
    est = make_estimator()
    with pytest.raises(ValueError, match=match):
        est.estimate(scores)


def test_save_load_round_trip(tmp_path):
    est = make_estimator(A=np.linspace(0.2, 1.5, 6)[:, None], lam=0.4, scale=1.3)
    est.metadata = {"benchmark": "demo"}
    est.save(tmp_path)
    back = TinyEstimator.load(tmp_path)
    assert back.anchor_ids == ["q4", "q1"] and back.item_ids == est.item_ids
    A, b = back.irt_parameters()
    assert A.shape == (6, 1) and b.shape == (6,)
    assert back.lambdas == {"all": 0.4} and back.metadata["benchmark"] == "demo"
    for key in ("irt", "pirt", "gpirt", "ci_low", "ci_high"):
        assert back.estimate([1, 0])[key] == pytest.approx(est.estimate([1, 0])[key])
    # identical inputs give identical bytes (reproducible releases)
    first = (tmp_path / NPZ_NAME).read_bytes()
    est.save(tmp_path)
    assert (tmp_path / NPZ_NAME).read_bytes() == first


def test_load_refuses_pickled_arrays_and_foreign_files(tmp_path):
    est = make_estimator()
    est.save(tmp_path)
    # replace one array by an object array: np.load(allow_pickle=False) must refuse it
    with zipfile.ZipFile(tmp_path / NPZ_NAME) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    import io

    buf = io.BytesIO()
    np.save(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    members["b.npy"] = buf.getvalue()
    with zipfile.ZipFile(tmp_path / NPZ_NAME, "w") as zf:
        for n, data in members.items():
            zf.writestr(n, data)
    with pytest.raises(ValueError, match="pickle"):
        TinyEstimator.load(tmp_path)
    meta = json.loads((tmp_path / "estimator.json").read_text())
    meta["format"] = "something-else"
    (tmp_path / "estimator.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="not a tiny estimator"):
        TinyEstimator.load(tmp_path)
    with pytest.raises(FileNotFoundError):
        TinyEstimator.load(tmp_path / "nowhere")


def test_constructor_checks_shapes():
    with pytest.raises(ValueError, match="A must be"):
        TinyEstimator(["a", "b"], [0], [1.0], np.zeros((3, 1)), np.zeros(3), np.ones(2), [0, 0], ["all"],
                      [0, 0], [0.0], [[1.0]])
    with pytest.raises(ValueError, match="distinct"):
        TinyEstimator(["a", "b"], [0, 0], [0.5, 0.5], np.zeros((2, 1)), np.zeros(2), np.ones(2), [0, 0],
                      ["all"], [0, 1], [0.0], [[1.0]])


def test_precision_blend_weights_each_model_by_inverse_variance(tmp_path):
    from builder.estimator import blend

    gp, se, lam = blend(np.array([0.2, np.nan]), np.array([0.6, 0.5]), np.array([0.1, 0.1]),
                        np.array([0.05, 0.05]), 0.5, precision=(1.0, 2.0))
    # v_irt = 0.01, v_pirt = (2 * 0.05)^2 = 0.01 -> equal weights; no irt -> p-IRT alone
    assert lam[0] == pytest.approx(0.5) and gp[0] == pytest.approx(0.4)
    assert se[0] == pytest.approx(np.sqrt(0.25 * 0.01 + 0.25 * 0.01))
    assert lam[1] == 0.0 and gp[1] == pytest.approx(0.5)
    est = make_estimator(A=np.linspace(0.2, 1.5, 6)[:, None])
    est.precision_weights = {"all": (1.0, 1.0)}
    est.save(tmp_path)
    back = TinyEstimator.load(tmp_path)
    assert back.precision_weights == {"all": (1.0, 1.0)}
    comp = back.components(np.array([[1.0, 0.0]]))
    want, _, _ = blend(comp["irt"][:, 0], comp["pirt"][:, 0], comp["se_irt"][:, 0], comp["se_pirt"][:, 0], 0.0,
                       (1.0, 1.0))
    assert back.estimate([1.0, 0.0])["gpirt"] == pytest.approx(float(want[0]))
    with pytest.raises(ValueError, match="unknown scenario"):
        make_estimator().__class__(
            ["a", "b"], [0], [1.0], np.zeros((2, 1)), np.zeros(2), np.ones(2), [0, 0], ["all"], [0, 0],
            [0.0], [[1.0]], precision_weights={"other": (1, 1)})


def test_evaluate_answers_with_the_original_keys(tmp_path):
    from builder.benchmarks import REGISTRY
    from builder.estimator import ORIGINAL_BENCHMARKS, evaluate

    # the standalone table agrees with the registry
    assert ORIGINAL_BENCHMARKS == {s.original_bench: s.name for s in REGISTRY.values() if s.original_bench}
    est = make_estimator(A=np.linspace(0.2, 1.5, 6)[:, None])
    est.metadata = {"benchmark": "tinyAlpacaEval", "original_scenarios": {"all": "alpaca_v2"}}
    est.save(tmp_path)
    out = evaluate([1.0, 0.0], "alpaca", source=tmp_path)
    assert set(out) == {"alpaca_v2"}
    assert out["alpaca_v2"]["gpirt"] == pytest.approx(est.estimate([1.0, 0.0])["gpirt"])
    assert set(out["alpaca_v2"]) >= {"irt", "pirt", "gpirt"}
    with pytest.raises(ValueError, match="not 'tinyMMLU'"):
        evaluate([1.0, 0.0], "mmlu", source=tmp_path)
