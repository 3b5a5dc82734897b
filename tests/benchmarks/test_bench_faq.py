"""FAQ as a peer (benchmarks/faq.py) and the side-by-side tables (benchmarks/versus_faq.py): the
factor fit, the draws, FAQ's sessions on data from its own model (unbiased, covering, better
than uniform), the tuning split, the uniform reference, the paired bootstrap's verdicts."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from benchmarks import faq, versus_faq


def _factor_world(seed=0, n_models=80, n_items=300, K=3):
    rng = np.random.default_rng(seed)
    U = rng.normal(0, 1, (n_models, K))
    V = rng.normal(0, 0.8, (n_items, K))
    V[:, 0] += 0.5
    P = expit(U @ V.T)
    return (rng.random(P.shape) < P).astype(float), P


def test_fit_factors_lowers_the_loss_and_is_deterministic():
    Y, _ = _factor_world()
    Y[0, :50] = np.nan  # missing entries are left out of the loss

    def loss(U, V):
        z = (U @ V.T).astype(np.float64)
        ok = ~np.isnan(Y)
        return float(np.mean(np.logaddexp(0, z[ok]) - Y[ok] * z[ok]))
    U0, V0 = faq.fit_factors(Y, 4, 0.1, epochs=1)
    U1, V1 = faq.fit_factors(Y, 4, 0.1, epochs=300)
    assert loss(U1, V1) < 0.75 * loss(U0, V0)
    U2, V2 = faq.fit_factors(Y, 4, 0.1, epochs=300)
    assert np.array_equal(U1, U2) and np.array_equal(V1, V2) and U1.dtype == np.float32


def test_select_factors_applies_the_one_standard_error_rule():
    Y, _ = _factor_world(seed=1, n_models=40, n_items=120)
    sel = faq.select_factors(Y, ks=(2, 8), lambdas=(1.0, 1e-3), folds=3, epochs=150)
    assert {(c["K"], c["lambda"]) for c in sel["cv"]} == {(2, 1.0), (2, 1e-3), (8, 1.0), (8, 1e-3)}
    best = max(sel["cv"], key=lambda c: c["val_acc"])
    above = [c for c in sel["cv"] if c["val_acc"] > sel["cutoff"]]
    assert best in above and sel["cutoff"] <= best["val_acc"]
    assert (sel["K"], sel["lambda"]) == min(((c["K"], -c["lambda"]) for c in above))[:1] + (
        max(c["lambda"] for c in above if c["K"] == min(a["K"] for a in above)),)


def test_inverse_cdf_draws_the_first_index_reaching_the_target():
    rng = np.random.default_rng(2)
    q = rng.random((40, 333)).astype(np.float32)
    q[:, 50:90] = 0
    for block in (7, 18, 64):
        u = rng.random(40)
        ref = np.minimum((np.cumsum(q.astype(np.float64), 1) < (u * q.astype(np.float64).sum(1))[:, None]).sum(1), 332)
        assert np.array_equal(faq._inverse_cdf(q, u, block), ref)


@pytest.mark.parametrize("setting", [faq.FaqSetting(1.0, 0.0, 0.0, 0.25), faq.FaqSetting(0.5, 0.5, 0.25, 0.05)],
                         ids=["oracle-score", "active-learning-score"])
def test_faq_sessions_are_unbiased_covering_and_better_than_uniform(setting):
    """On data from a factor model fitted on its training models, FAQ's estimate is unbiased over
    seeds, its interval covers about 95%, and it beats the uniform reference's width."""
    Y, _ = _factor_world(seed=3, n_models=90, n_items=300)
    train, test = Y[:70], Y[70:]
    test[0, :30] = np.nan  # a model not evaluated on every item: its pool is its items
    U, V = faq.fit_factors(train, 3, 0.01, epochs=400)
    mu0, s0 = faq.factor_prior(U)
    n, seeds = 40, list(range(30))
    res = faq.faq_sessions(test, V, mu0, s0, n, [setting], seeds)
    truth = np.nanmean(test, 1)
    err = res["score"][0] - truth  # (seeds, models)
    assert abs(err.mean()) < 3.5 * err.std() / np.sqrt(err.size)
    cover = ((res["ci_low"][0] <= truth) & (truth <= res["ci_high"][0])).mean()
    assert 0.88 <= cover <= 0.99, cover
    width = (res["ci_high"][0] - res["ci_low"][0]).mean()
    uniform = faq.uniform_reference(test, n, seeds[:3])
    assert width < uniform["width"].mean() and 0.9 <= uniform["coverage"].mean() <= 0.99
    assert (res["resampled"][0] >= 0).all()
    # the same seed gives the same session, whatever else is in the call (to float32 rounding: the
    # products' blocking depends on the chunk's shape)
    again = faq.faq_sessions(test[:5], V, mu0, s0, n, [setting, faq.GRID[7]], seeds[:2])
    assert np.allclose(again["score"][0], res["score"][0][:2, :5], rtol=1e-5, atol=1e-7)


def test_the_tuning_split_follows_the_protocol():
    rng = np.random.default_rng(4)
    Y = rng.random((50, 20))
    fit, val = faq.inner_split("extrapolation", Y, 0)
    assert val.size == 10 and set(fit) | set(val) == set(range(50))
    assert np.nanmean(Y[val], 1).min() >= np.nanmean(Y[fit], 1).max()  # the strongest fifth
    fit1, val1 = faq.inner_split("interpolation", Y, 1)
    assert val1.size == 10 and not set(fit1) & set(val1) and not np.array_equal(val1, faq.inner_split("interpolation", Y, 2)[1])
    assert faq.split_key(Y, "extrapolation", None) != faq.split_key(Y, "interpolation", 1)


def test_tune_split_caches_and_reuses_the_hyperparameters(tmp_path):
    Y, _ = _factor_world(seed=5, n_models=30, n_items=80)
    faq.set_profile(quick=True)
    try:
        rec = faq.tune_split("w", Y, "interpolation", 3, [10, 20], cache=tmp_path)
        path = next((tmp_path / "w").glob("interpolation-*.json"))
        assert set(rec["settings"]) == {"10", "20"} and rec["factors"]["K"] == 8
        mtime = path.stat().st_mtime_ns
        assert faq.tune_split("w", Y, "interpolation", 3, [20], cache=tmp_path) == rec  # read, not tuned again
        assert path.stat().st_mtime_ns == mtime
        out = faq.faq_split("w", Y, Y[:4], "interpolation", 3, {"10%": 10}, [0], cache=tmp_path)
        assert len(out["budgets"]["10%"]["score"]) == 4 and out["hyper"]["settings"]["10%"] == rec["settings"]["10"]["setting"]
    finally:
        faq.set_profile()
    assert faq.PROFILE["grid"] == faq.GRID and len(faq.GRID) == 400


def test_the_paired_bootstrap_says_ahead_level_or_behind():
    rng = np.random.default_rng(6)
    n_models, seeds = 40, 3
    truth = rng.random(n_models * seeds)
    models = [f"m{i}" for _ in range(seeds) for i in range(n_models)]

    def per(scale_ours, scale_faq):
        eo, ef = rng.normal(0, scale_ours, truth.size), rng.normal(0, scale_faq, truth.size)
        return {"truth": truth, "var": np.full(truth.size, 0.01), "unif": np.full(truth.size, 0.4), "model": models,
                "rand": np.array([0.08]), "ours_s": truth + eo, "ours_lo": truth + eo - 0.2, "ours_hi": truth + eo + 0.2,
                "faq_s": truth + ef, "faq_lo": truth + ef - 0.2, "faq_hi": truth + ef + 0.2, "n": 50, "n_train": 90,
                "n_test": n_models, "hyper": [{"K": 8, "lambda": 1.0, "settings": {"10%": [1, 0, 0, 0.25]}}]}
    res = versus_faq.compare({"better": per(0.03, 0.06), "same": per(0.05, 0.05), "worse": per(0.06, 0.03)})
    assert [res["matrices"][k]["verdict"] for k in ("better", "same", "worse")] == ["ahead", "level", "behind"]
    lo, hi = res["geomean_ci"]
    assert lo < res["geomean"] < hi and 0.6 < res["geomean"] < 1.6
    assert res["matrices"]["better"]["ours"]["ess_width"] == pytest.approx(1.0)  # (uniform 0.4 / width 0.4)^2


def _run(scores_by_method: dict, truth, dataset="d", protocol="interpolation", seed=0):
    budgets = {"100": {m: {"score": list(s), "ci_low": list(np.asarray(s) - w), "ci_high": list(np.asarray(s) + w)}
                       for m, (s, w) in scores_by_method.items()}}
    return {"dataset": dataset, "protocol": protocol, "seed": seed, "dev_rep": None, "truth": list(truth),
            "test_models": [f"m{i}" for i in range(len(truth))], "budgets": budgets}


def test_adaptive_variants_pairs_runs_and_reports_the_ratios(tmp_path, capsys):
    import json

    from benchmarks import adaptive_variants

    truth = np.array([0.2, 0.4, 0.6, 0.8])
    err = np.array([0.02, -0.02, 0.02, -0.02])
    # the variant's errors are half the base's: ESS ratio (MSE base / MSE variant) = 4; widths 0.1 vs 0.05: 4
    base = [_run({"adaptive": (truth + err, 0.05), "faq": (truth + 2 * err, 0.01)}, truth)]
    var = [_run({"adaptive": (truth + err / 2, 0.025)}, truth)]
    (tmp_path / "b.json").write_text(json.dumps({"rows": base}))
    (tmp_path / "v.json").write_text(json.dumps({"rows": var}))
    res = adaptive_variants.compare(adaptive_variants._load(tmp_path / "b.json"),
                                    adaptive_variants._load(tmp_path / "v.json"))
    cell = res[("interpolation", "100")]
    assert cell["ess"] == pytest.approx(4.0) and cell["width"] == pytest.approx(4.0)
    assert cell["coverage"] == [1.0] and cell["n_matrices"] == 1
    # against FAQ in the same run: FAQ's errors are twice ours (ESS ratio 4), its intervals a fifth as wide
    # (width ratio 0.04); coverage and width are ours
    assert adaptive_variants.main([str(tmp_path / "b.json"), "--faq", "--budgets", "100"]) == 0
    out = capsys.readouterr().out
    assert "| b / FAQ | interpolation | 100 | 1 | 4.00 | 0.04 | 100.0% (100%-100%) | 0.100 |" in out
    # a run on other test models is not a pairing
    other = [dict(var[0], test_models=["x", "y", "z", "w"])]
    (tmp_path / "o.json").write_text(json.dumps({"rows": other}))
    with pytest.raises(ValueError, match="different test models"):
        adaptive_variants.main([str(tmp_path / "b.json"), str(tmp_path / "o.json")])


def test_an_exact_result_with_a_zero_width_interval_covers():
    """A session that asked every item of a model's pool reports the exact score, [s, s]; the truth
    (the row's mean) equals it up to float rounding, which must not count as a miss."""
    from benchmarks import protocols

    truth = np.array([0.15510661950156251, 0.5, 0.5])
    exact = np.array([0.15510661950156274, 0.5, 0.52])  # the last misses by 0.02
    assert protocols.covers(exact, truth, exact).tolist() == [True, True, False]
    d = {"truth": truth, "var": np.ones(3), "unif": np.ones(3), "rand": np.ones(1),
         "ours_s": exact, "ours_lo": exact - [0, 0, 0.001], "ours_hi": exact + [0, 0, 0.001]}
    assert versus_faq._metrics(d, "ours")["covered"] == 2
