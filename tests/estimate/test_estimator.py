"""TinyEstimator: formulas on hand-computable cases, input handling, side files."""

import io
import json
import zipfile

import numpy as np
import pytest
from scipy.special import expit

from tinybench_builder.estimator import NPZ_NAME, TinyEstimator


def make_estimator(A=None, lam=0.25, scale=1.0, N=6, params=None):
    """Original-style estimator: anchors at 4, 1 (in that order); strata {0,2,4}->anchor 0, {1,3,5}->anchor 1."""
    A = np.zeros((N, 1)) if A is None else A
    return TinyEstimator(
        item_ids=[f"q{j}" for j in range(N)], anchor_positions=[4, 1], anchor_weights=[0.5, 0.5],
        A=A, b=np.linspace(-1.0, 1.0, N), balance=np.ones(N), scenario_index=np.zeros(N, int),
        scenario_names=["all"], strata=np.array([0, 1, 0, 1, 0, 1]), prior_mean=np.zeros(1), prior_cov=np.eye(1),
        params={"all": params or {"method": "gpirt", "lambda": lam, "interval_scale": scale}}, design="kmeans",
    )


def make_stratified(params=None, ridge=None, A=None):
    """8 items, 2 strata of 4 items ({0..3}, {4..7}), 2 anchors each (1, 2 and 5, 7)."""
    A = np.zeros((8, 1)) if A is None else A
    return TinyEstimator(
        item_ids=[f"q{j}" for j in range(8)], anchor_positions=[1, 2, 5, 7], anchor_weights=[0.25] * 4,
        A=A, b=np.linspace(-1.5, 1.5, 8), balance=np.ones(8), scenario_index=np.zeros(8, int),
        scenario_names=["all"], strata=np.array([0, 0, 0, 0, 1, 1, 1, 1]), prior_mean=np.zeros(1),
        prior_cov=np.eye(1), params={"all": params or {"method": "composite", "sigma": 0.05}}, ridge_coef=ridge,
    )


def test_gpirt_formulas_hand_computed():
    # A = 0: every prediction is sigmoid(-b_j), whatever the answers
    est = make_estimator()
    r = est.estimate([1.0, 0.0])  # q4 = 1, q1 = 0
    p = expit(-np.linspace(-1, 1, 6))
    assert r["irt"] == pytest.approx(0.5 * 1 + 0.5 * 0)
    unseen = [0, 2, 3, 5]
    pirt = (1.0 + 0.0 + p[unseen].sum()) / 6
    assert r["pirt"] == pytest.approx(pirt)
    assert r["gpirt"] == pytest.approx(0.25 * 0.5 + 0.75 * pirt)
    assert r["score"] == r["gpirt"]  # the original design reports gp-IRT
    assert r["ci_low"] < r["score"] < r["ci_high"]
    assert r["n_answered"] == 2
    # with A = 0, theta carries no information: the pirt error is the Bernoulli noise
    se_pirt = np.sqrt((p[unseen] * (1 - p[unseen])).sum()) / 6
    comp = est.components(np.array([[1.0, 0.0]]))
    assert comp["se_pirt"][0, 0] == pytest.approx(se_pirt)


def test_design_based_estimate_and_its_standard_error_hand_computed():
    est = make_stratified()
    y = np.array([[1.0, 0.0, 1.0, 1.0]])  # q1 = 1, q2 = 0 (stratum 0); q5 = q7 = 1 (stratum 1)
    comp = est.components(y)
    p = expit(-np.linspace(-1.5, 1.5, 8))  # A = 0: p does not depend on theta
    r0 = np.array([1.0 - p[1], 0.0 - p[2]])
    r1 = np.array([1.0 - p[5], 1.0 - p[7]])
    db = p.mean() + 0.5 * r0.mean() + 0.5 * r1.mean()
    assert comp["db"][0, 0] == pytest.approx(db)
    # stratified variance: W_h^2 v_h / n_h (1 - n_h / N_h), W_h = 1/2, n_h = 2, N_h = 4, where the
    # per-draw variance v_h is the measured s_h^2 (1 degree of freedom) averaged with the model's
    # mean p(1-p) over the stratum (worth one degree of freedom)
    v = [(np.var(r, ddof=1) + np.mean(p[h] * (1 - p[h]))) / 2 for r, h in ((r0, slice(0, 4)), (r1, slice(4, 8)))]
    var = sum(0.25 * vh / 2 * 0.5 for vh in v)
    assert comp["se_db"][0, 0] == pytest.approx(np.sqrt(var))
    assert comp["irt"][0, 0] == pytest.approx(0.5 * 0.5 + 0.5 * 1.0)
    var_irt = 0.25 * np.var([1.0, 0.0], ddof=1) / 2 * 0.5  # stratum 1 has no spread
    assert comp["se_irt"][0, 0] == pytest.approx(np.sqrt(var_irt))


def test_composite_weights_by_precision_and_leaves_the_training_range():
    ridge = np.array([0.1, 0.1, 0.1, 0.1])
    inside = make_stratified({"method": "composite", "sigma": 0.02, "pirt_weight": 0.5, "range": [0.0, 1.0],
                              "ridge_intercept": -0.2}, ridge=ridge)
    y = np.array([[1.0, 0.0, 1.0, 1.0]])
    c = inside.components(y)
    assert c["ridge"][0, 0] == pytest.approx(c["db"][0, 0] - 0.2 + 0.1 * 3)
    mb = 0.5 * c["pirt"][0, 0] + 0.5 * c["ridge"][0, 0]
    assert c["mb"][0, 0] == pytest.approx(mb)
    # s2 = sigma^2 + kappa E[distance^2 outside [0, 1]] of N(db, se_db^2) (by quadrature here)
    db, sd = c["db"][0, 0], c["se_db"][0, 0]
    x = np.linspace(db - 12 * sd, db + 12 * sd, 200_001)
    dens = np.exp(-0.5 * ((x - db) / sd) ** 2) / (sd * np.sqrt(2 * np.pi))
    f = (np.maximum(x - 1.0, 0.0) ** 2 + np.maximum(-x, 0.0) ** 2) * dens
    d2 = np.sum((f[1:] + f[:-1]) / 2 * np.diff(x))
    s2 = 0.02**2 + 16.0 * d2
    g = s2 / (s2 + sd**2)
    assert c["weight_db"][0, 0] == pytest.approx(g, rel=1e-6)
    assert c["score"][0, 0] == pytest.approx(g * c["db"][0, 0] + (1 - g) * mb)
    # the same model outside a narrow training range: the design-based estimate takes over
    outside = make_stratified({"method": "composite", "sigma": 0.02, "pirt_weight": 0.5, "range": [0.1, 0.2],
                               "kappa": 16.0, "ridge_intercept": -0.2}, ridge=ridge).components(y)
    assert outside["weight_db"][0, 0] > 0.9
    assert abs(outside["score"][0, 0] - outside["db"][0, 0]) < abs(c["score"][0, 0] - c["db"][0, 0])
    assert outside["se"][0, 0] > c["se"][0, 0]


def test_an_unanswered_stratum_borrows_the_residuals_of_the_nearest_answered_one():
    est = make_stratified()
    full = est.components(np.array([[1.0, 0.0, 1.0, 1.0]]))
    part = est.components(np.array([[1.0, np.nan, np.nan, np.nan]]))
    p = expit(-np.linspace(-1.5, 1.5, 8))
    # stratum 1 unanswered: collapsed into stratum 0, whose one residual now corrects the model's
    # prediction of both strata (mass 1/2 + 1/2)
    assert part["db"][0, 0] == pytest.approx(p.mean() + 1.0 * (1.0 - p[1]))
    # its variance: the one draw now stands for both strata (mass 1, one of 8 items drawn), and stratum
    # 1's own mean residual may differ from stratum 0's (one more draw, mass 1/2); with no stratum of
    # two answers to measure the spread, the model's per-draw variance mean p(1-p)
    v0, v1 = np.mean(p[:4] * (1 - p[:4])), np.mean(p[4:] * (1 - p[4:]))
    assert part["se_db"][0, 0] == pytest.approx(np.sqrt(1.0 * v0 / 1 * (1 - 1 / 8) + 0.25 * v1))
    assert part["irt"][0, 0] == pytest.approx(1.0)  # renormalised over the answered stratum
    assert part["se_db"][0, 0] > full["se_db"][0, 0]
    assert part["answered"][0, 0] == 1


def test_positional_mapping_and_matrix_inputs_agree():
    est = make_estimator(A=np.linspace(0.2, 1.5, 6)[:, None])
    a = est.estimate([0.0, 1.0])
    b = est.estimate({"q1": 1.0, "q4": 0.0})
    c = est.estimate(np.array([[0.0, 1.0], [1.0, 1.0]]))
    assert isinstance(c, list) and len(c) == 2
    for key in ("score", "irt", "pirt", "gpirt", "ci_low", "ci_high"):
        assert a[key] == pytest.approx(b[key]) == pytest.approx(c[0][key])
    assert c[1]["gpirt"] > c[0]["gpirt"]
    assert est.estimate([True, False])["irt"] == pytest.approx(est.estimate([1, 0])["irt"])


def test_pandas_inputs_are_read_by_their_labels():
    pd = pytest.importorskip("pandas")
    est = make_estimator(A=np.linspace(0.2, 1.5, 6)[:, None])
    want = est.estimate({"q4": 0.0, "q1": 1.0})
    # the index is the anchor ids in the other order: read by label, not by position
    got = est.estimate(pd.Series([1.0, 0.0], index=["q1", "q4"]))
    assert got["score"] == pytest.approx(want["score"])
    frame = pd.DataFrame({"q1": [1.0, 0.0], "q4": [0.0, 1.0]}, index=["m1", "m2"])
    rows = est.estimate(frame)
    assert rows[0]["score"] == pytest.approx(want["score"])
    assert rows[1]["score"] == pytest.approx(est.estimate([1.0, 0.0])["score"])
    # no labels (a RangeIndex): positional, like a list
    assert est.estimate(pd.Series([0.0, 1.0]))["score"] == pytest.approx(want["score"])
    with pytest.raises(ValueError, match="unknown item id"):
        est.estimate(pd.Series([1.0], index=["nope"]))


def test_subset_of_anchors_and_wider_interval_with_fewer_answers():
    est = make_estimator(A=np.linspace(0.5, 2.0, 6)[:, None])
    full = est.estimate({"q4": 1.0, "q1": 1.0})
    part = est.estimate({"q4": 1.0})
    assert part["n_answered"] == 1
    assert part["irt"] == pytest.approx(1.0)  # renormalised over the answered anchor
    assert (part["ci_high"] - part["ci_low"]) > (full["ci_high"] - full["ci_low"])
    assert est.estimate([1.0, float("nan")])["gpirt"] == pytest.approx(part["gpirt"])


def test_batch_row_with_nothing_answered_gets_the_prior_prediction():
    for est in (make_estimator(A=np.ones((6, 1))), make_stratified(A=np.ones((8, 1)))):
        k = len(est.anchor_ids)
        res = est.estimate(np.vstack([np.full(k, np.nan), np.ones(k)]))
        assert np.isnan(res[0]["irt"]) and res[0]["n_answered"] == 0
        assert res[0]["gpirt"] == pytest.approx(res[0]["pirt"])
        assert np.isfinite(res[0]["score"]) and res[0]["ci_high"] - res[0]["ci_low"] > 0


def test_interval_scale_widens_the_interval():
    narrow = make_estimator(A=np.ones((6, 1)), scale=1.0).estimate([1, 0])
    wide = make_estimator(A=np.ones((6, 1)), scale=2.0).estimate([1, 0])
    assert wide["score"] == pytest.approx(narrow["score"])
    assert (wide["ci_high"] - wide["ci_low"]) > (narrow["ci_high"] - narrow["ci_low"])


def test_bundle_reports_each_scenario_and_the_mean():
    est = TinyEstimator(
        item_ids=[f"q{j}" for j in range(6)], anchor_positions=[0, 3], anchor_weights=[1.0, 1.0],
        A=np.zeros((6, 1)), b=np.zeros(6), balance=np.ones(6), scenario_index=[0, 0, 0, 1, 1, 1],
        scenario_names=["arc", "gsm8k"], strata=[0, 0, 0, 1, 1, 1], prior_mean=[0.0], prior_cov=[[1.0]],
        params={"arc": {"lambda": 1.0}, "gsm8k": {"lambda": 1.0}}, design="kmeans",
    )
    r = est.estimate([1.0, 0.0])
    assert r["scenarios"]["arc"]["irt"] == pytest.approx(1.0)
    assert r["scenarios"]["gsm8k"]["irt"] == pytest.approx(0.0)
    assert r["gpirt"] == pytest.approx(0.5) and r["score"] == pytest.approx(0.5)
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
        ([1 + 0j, 1.0], "complex"),
    ],
)
def test_bad_input_raises_value_error(scores, match):
    with pytest.raises(ValueError, match=match):
        make_estimator().estimate(scores)


def test_save_load_round_trip(tmp_path):
    est = make_stratified({"method": "composite", "sigma": 0.03, "lambda": 0.4, "pirt_weight": 0.7,
                           "range": [0.2, 0.8], "interval_scale": 1.3, "ridge_intercept": 0.01},
                          ridge=np.array([0.01, -0.02, 0.0, 0.03]), A=np.linspace(0.2, 1.5, 8)[:, None])
    est = est.replace(metadata={"benchmark": "demo"})
    est.save(tmp_path)
    back = TinyEstimator.load(tmp_path)
    assert back.anchor_ids == ["q1", "q2", "q5", "q7"] and back.item_ids == est.item_ids
    A, b = back.irt_parameters()
    assert A.shape == (8, 1) and b.shape == (8,)
    assert back.params == est.params and back.metadata["benchmark"] == "demo" and back.design == "stratified"
    for key in ("score", "irt", "pirt", "gpirt", "ci_low", "ci_high"):
        assert back.estimate([1, 0, 1, 1])[key] == pytest.approx(est.estimate([1, 0, 1, 1])[key])
    # identical inputs give identical bytes (reproducible releases)
    first = (tmp_path / NPZ_NAME).read_bytes()
    est.save(tmp_path)
    assert (tmp_path / NPZ_NAME).read_bytes() == first


def _rewrite_npz(folder, **replace):
    with zipfile.ZipFile(folder / NPZ_NAME) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    for key, data in replace.items():
        if data is None:
            members.pop(f"{key}.npy")
        else:
            members[f"{key}.npy"] = data
    with zipfile.ZipFile(folder / NPZ_NAME, "w") as zf:
        for n, data in members.items():
            zf.writestr(n, data)


def _npy(arr, allow_pickle=False):
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=allow_pickle)
    return buf.getvalue()


@pytest.mark.parametrize("case, match", [
    ("object array", "expected numbers"),
    ("missing array", "missing array 'ridge_coef'"),
    ("wrong shape", r"shape \(7,\), expected \(8,\)"),
    ("huge header", r"expected \(8,\)"),
    ("nan difficulty", "b has NaN"),
    ("huge discrimination", "implausibly large"),
    ("negative weight", "non-negative"),
    ("truncated", "not a readable npz"),
    ("text file", "not a readable npz"),
])
def test_load_refuses_corrupt_arrays(tmp_path, case, match):
    make_stratified().save(tmp_path)
    if case == "object array":
        _rewrite_npz(tmp_path, b=_npy(np.array([{"a": 1}], dtype=object), allow_pickle=True))
    elif case == "missing array":
        _rewrite_npz(tmp_path, ridge_coef=None)
    elif case == "wrong shape":
        _rewrite_npz(tmp_path, b=_npy(np.zeros(7)))
    elif case == "huge header":
        # declares 10^12 elements: refused from the header, nothing is allocated
        header = _npy(np.zeros(1))
        _rewrite_npz(tmp_path, b=header.replace(b"(1,)", b"(1000000000000,)".ljust(4)))
    elif case == "nan difficulty":
        _rewrite_npz(tmp_path, b=_npy(np.full(8, np.nan)))
    elif case == "huge discrimination":
        _rewrite_npz(tmp_path, A=_npy(np.full((8, 1), 1e300)))
    elif case == "negative weight":
        _rewrite_npz(tmp_path, anchor_weights=_npy(np.array([0.5, -0.25, 0.5, 0.25])))
    elif case == "truncated":
        data = (tmp_path / NPZ_NAME).read_bytes()
        (tmp_path / NPZ_NAME).write_bytes(data[: len(data) // 2])
    else:
        (tmp_path / NPZ_NAME).write_text("not an npz")
    with pytest.raises(ValueError, match=match):
        TinyEstimator.load(tmp_path)


@pytest.mark.parametrize("edit, match", [
    (lambda m: m.update(format="something-else"), "not a tiny estimator"),
    (lambda m: m.pop("item_ids"), "missing field 'item_ids'"),
    (lambda m: m.update(scenarios="all"), "field 'scenarios' must be a list"),
    (lambda m: m.update(item_ids=["q0"] * 8), "duplicates"),
    (lambda m: m["params"]["all"].update(interval_scale=-1.0), "interval_scale"),
    (lambda m: m["params"]["all"].update(sigma=float("nan")), "sigma"),
    (lambda m: m["params"]["all"].update(range=[0.8, 0.2]), "range"),
    (lambda m: m["params"]["all"].update(method="magic"), "method"),
    (lambda m: m.update(schema_version="2"), "schema_version"),
])
def test_load_refuses_bad_json_fields(tmp_path, edit, match):
    make_stratified().save(tmp_path)
    meta = json.loads((tmp_path / "estimator.json").read_text())
    edit(meta)
    (tmp_path / "estimator.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=match):
        TinyEstimator.load(tmp_path)


def test_load_refuses_non_object_and_deep_json(tmp_path):
    make_stratified().save(tmp_path)
    (tmp_path / "estimator.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a JSON object"):
        TinyEstimator.load(tmp_path)
    (tmp_path / "estimator.json").write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(ValueError, match="estimator.json"):
        TinyEstimator.load(tmp_path)
    with pytest.raises(FileNotFoundError):
        TinyEstimator.load(tmp_path / "nowhere")


def test_schema_1_side_files_still_load_as_gp_irt(tmp_path):
    """Folders written before the stratified design (schema 1: k-means clusters, lambdas)."""
    est = make_estimator(A=np.linspace(0.2, 1.5, 6)[:, None], lam=0.4, scale=1.3)
    meta = {"format": "tinybenchmarks-estimator", "schema_version": 1, "n_items": 6, "n_anchors": 2, "n_dims": 1,
            "scenarios": ["all"], "lambdas": {"all": 0.4}, "interval_scale": {"all": 1.3}, "confidence": 0.95,
            "ability_prior": {"mean": [0.0], "cov": [[1.0]]}, "anchor_ids": ["q4", "q1"],
            "item_ids": est.item_ids, "metadata": {}}
    (tmp_path / "estimator.json").write_text(json.dumps(meta))
    with zipfile.ZipFile(tmp_path / NPZ_NAME, "w") as zf:
        for key, arr in {"A": est.A, "b": est.b, "balance": est.balance, "scenario": est.scenario_index,
                         "cluster": est.strata, "anchor_positions": est.anchor_positions,
                         "anchor_weights": est.anchor_weights}.items():
            zf.writestr(f"{key}.npy", _npy(arr))
    back = TinyEstimator.load(tmp_path)
    assert back.lambdas == {"all": 0.4}
    assert back.estimate([1, 0])["score"] == pytest.approx(est.estimate([1, 0])["gpirt"])


def test_constructor_checks_shapes_and_values():
    base = dict(item_ids=["a", "b"], anchor_positions=[0], anchor_weights=[1.0], A=np.zeros((2, 1)), b=np.zeros(2),
                balance=np.ones(2), scenario_index=[0, 0], scenario_names=["all"], strata=[0, 0],
                prior_mean=[0.0], prior_cov=[[1.0]])
    for change, match in [({"A": np.zeros((3, 1))}, "A must be"),
                          ({"anchor_positions": [0, 0], "anchor_weights": [0.5, 0.5]}, "distinct"),
                          ({"balance": [1.0, -1.0]}, "positive"),
                          ({"prior_cov": [[-1.0]]}, "positive definite"),
                          ({"strata": [0, 1]}, "every stratum needs"),
                          ({"params": {"other": {}}}, "unknown scenario"),
                          ({"params": {"all": {"lambda": 2}}}, "lambda"),
                          ({"item_ids": ["a", "a"]}, "unique")]:
        with pytest.raises(ValueError, match=match):
            TinyEstimator(**{**base, **change})


def test_evaluate_answers_with_the_original_keys(tmp_path):
    from tinybench_builder.registry.benchmarks import REGISTRY
    from tinybench_builder.estimator import ORIGINAL_BENCHMARKS, evaluate

    # the standalone table agrees with the registry
    assert ORIGINAL_BENCHMARKS == {s.original_bench: s.name for s in REGISTRY.values() if s.original_bench}
    est = make_estimator(A=np.linspace(0.2, 1.5, 6)[:, None])
    est = est.replace(metadata={"benchmark": "tinyAlpacaEval", "original_scenarios": {"all": "alpaca_v2"}})
    est.save(tmp_path)
    out = evaluate([1.0, 0.0], "alpaca", source=tmp_path)
    assert set(out) == {"alpaca_v2"}
    assert out["alpaca_v2"]["gpirt"] == pytest.approx(est.estimate([1.0, 0.0])["gpirt"])
    assert set(out["alpaca_v2"]) >= {"score", "ci_low", "ci_high", "irt", "pirt", "gpirt"}
    with pytest.raises(ValueError, match="not 'tinyMMLU'"):
        evaluate([1.0, 0.0], "mmlu", source=tmp_path)


def test_outside_distance2_is_the_expected_squared_distance_outside_the_range():
    from tinybench_builder.estimator import outside_distance2

    # no uncertainty: the plain squared distance (0 inside)
    assert outside_distance2(np.array([0.5, 1.2, -0.3]), 0.0, 0.0, 1.0) == pytest.approx([0.0, 0.04, 0.09])
    # Monte Carlo of X ~ N(0.9, 0.1^2) outside [0.2, 0.95]
    x = np.random.default_rng(0).normal(0.9, 0.1, 2_000_000)
    mc = np.mean(np.maximum(x - 0.95, 0) ** 2 + np.maximum(0.2 - x, 0) ** 2)
    assert outside_distance2(0.9, 0.1, 0.2, 0.95) == pytest.approx(mc, rel=0.01)


def test_an_estimator_does_not_change_and_replace_derives_a_checked_one():
    est = make_stratified({"method": "composite", "sigma": 0.05, "lambda": 0.3}, A=np.linspace(0.2, 1.5, 8)[:, None])
    before = est.estimate([1, 0, 1, 1])
    with pytest.raises(AttributeError, match=r"est.replace\(metadata=\.\.\.\)"):
        est.metadata = {"benchmark": "demo"}
    with pytest.raises(AttributeError, match="read-only"):
        est.anchor_ids = ["q1"]
    with pytest.raises(TypeError, match="read-only"):
        est.params["all"]["sigma"] = 0.5  # the settings the estimate uses cannot drift from it
    with pytest.raises(TypeError, match="read-only"):
        est.metadata["re_estimates"] = []
    with pytest.raises(TypeError, match="read-only"):
        est.item_ids.append("q8")
    with pytest.raises(ValueError, match="read-only"):
        est.A[0, 0] = 9.0
    wider = est.replace(params={"all": {**est.params["all"], "sigma": 0.2}}, metadata={"benchmark": "demo"})
    assert wider.metadata == {"benchmark": "demo"} and est.metadata == {}
    assert wider.params["all"]["sigma"] == 0.2 and est.params["all"]["sigma"] == 0.05
    assert est.estimate([1, 0, 1, 1]) == before  # the original is untouched
    assert wider.estimate([1, 0, 1, 1])["se"] != before["se"]
    with pytest.raises(ValueError, match="lambda"):
        est.replace(params={"all": {"lambda": 2.0}})  # checked as a new estimator is
    with pytest.raises(ValueError, match="anchor_strata"):
        est.replace(anchor_positions=[1, 2, 3, 5])  # the anchors' strata follow them: give both
    moved = est.replace(anchor_positions=[1, 2, 3, 5], anchor_strata=[0, 0, 0, 1])
    assert moved.anchor_ids == ["q1", "q2", "q3", "q5"] and moved.design_hash != est.design_hash


def test_design_side_file_functions_and_pickle_round_trip(tmp_path):
    import copy
    import pickle

    from tinybench_builder.estimator import Design, read_side_files, write_side_files

    est = make_stratified({"method": "composite", "sigma": 0.03, "range": [0.2, 0.8]},
                          ridge=np.array([0.01, -0.02, 0.0, 0.03]), A=np.linspace(0.2, 1.5, 8)[:, None])
    est = est.replace(metadata={"benchmark": "demo", "validation": {"table": [{"scenario": "all", "mae": 0.01}]}})
    design = est.to_design()
    assert isinstance(design, Design) and TinyEstimator.from_design(design).to_design() is design
    paths = write_side_files(design, tmp_path)
    assert [p.name for p in paths] == ["estimator.json", NPZ_NAME]
    back = read_side_files(tmp_path)
    for name in ("item_ids", "anchor_ids", "scenarios", "params", "metadata", "design", "confidence"):
        assert getattr(back, name) == getattr(design, name), name
    for name in ("A", "b", "balance", "strata", "anchor_positions", "anchor_weights", "ridge_coef", "prior_cov"):
        assert np.array_equal(getattr(back, name), getattr(design, name)), name
    y = [1, 0, 1, float("nan")]
    assert TinyEstimator.from_design(back).estimate(y) == est.estimate(y) == TinyEstimator.load(tmp_path).estimate(y)
    # the JSON is the constructor's: the same bytes as save() writes
    first = (tmp_path / "estimator.json").read_bytes()
    est.save(tmp_path)
    assert (tmp_path / "estimator.json").read_bytes() == first
    for other in (pickle.loads(pickle.dumps(est)), copy.deepcopy(est)):
        assert other.estimate(y) == est.estimate(y)
        with pytest.raises(ValueError, match="read-only"):
            other.b[0] = 1.0
        with pytest.raises(TypeError, match="read-only"):
            other.metadata["validation"]["table"].append({})
