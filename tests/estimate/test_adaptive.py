"""The adaptive session (tinybench_builder/adaptive.py through TinyEstimator.adaptive): unbiased and covering
whatever the IRT model gets wrong (a 3-D truth fitted 1-D, models far stronger than the training
ones), batches in any order, determinism, bundles with their weights, warm starts, bad input, and
the standalone file shipped next to estimator.py (loaded by path, checked by from_hub)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from scipy.special import expit

from tinybench_builder import adaptive, estimator, layout
from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.model.irt import IRTModel


def _world(seed=0, n_items=500, n_train=60, true_dims=3, fit_dims=1, scale=1.5):
    """A 2PL truth of ``true_dims`` dimensions; an estimator fitted ``fit_dims``-D on ``n_train`` models."""
    rng = np.random.default_rng(seed)
    A = np.abs(rng.normal(0, 1, (n_items, true_dims))) * (scale / np.sqrt(true_dims)) + 0.1
    b = rng.normal(0, 1.5, n_items)
    theta = rng.standard_normal((n_train, true_dims))
    Y = (rng.random((n_train, n_items)) < expit(theta @ A.T - b)).astype(float)
    irt = IRTModel(n_dims=fit_dims, random_state=0).fit(Y)
    mean, cov = irt.ability_prior()
    k = 50
    est = TinyEstimator(item_ids=[f"i{j}" for j in range(n_items)], anchor_positions=np.arange(0, n_items, n_items // k)[:k],
                        anchor_weights=np.full(k, 1 / k), A=irt.discrimination_, b=irt.difficulty_,
                        balance=np.ones(n_items), scenario_index=np.zeros(n_items, int), scenario_names=["s"],
                        strata=np.minimum(np.arange(n_items) // (n_items // k), k - 1), prior_mean=mean, prior_cov=cov)
    return est, (A, b, rng)


def _run(est, y, budget, seed, batch, **kw):
    s = est.adaptive(budget=budget, seed=seed, **kw)
    while not s.done:
        ids = s.next_items(batch)
        s.record({i: y[int(i[1:])] for i in ids})
    return s.result()


@pytest.mark.slow
@pytest.mark.parametrize("shift", [0.0, 3.0], ids=["like-training", "far-stronger"])
def test_unbiased_and_covering_when_a_3d_truth_is_fitted_1d(shift):
    """Over many seeds the estimate's mean is the model's true score (the increments are a
    martingale whatever the predictions), and the 95% interval covers about 95% of the time,
    for a model like the training ones and one far stronger than all of them."""
    est, (A, b, rng) = _world(seed=1)
    theta = rng.standard_normal(3) + shift
    y = (rng.random(A.shape[0]) < expit(theta @ A.T - b)).astype(float)
    truth = y.mean()
    runs = [_run(est, y, 40, seed, 8) for seed in range(400)]
    err = np.array([r["unclipped"] for r in runs]) - truth
    se = err.std(ddof=1) / np.sqrt(err.size)
    assert abs(err.mean()) < 3.5 * se, (err.mean(), se)
    cover = np.mean([r["ci_low"] <= truth <= r["ci_high"] for r in runs])
    assert 0.91 <= cover <= 0.99, cover
    if shift:
        assert truth > 0.9  # far stronger than the training models (their mean is about 0.5)


@pytest.mark.slow
def test_a_plain_without_replacement_estimate_would_be_caught():
    """The unbiasedness check above can fail: dropping the known items' residuals (the naive
    without-replacement estimator FAQ's appendix B measured) is biased and is flagged."""
    est, (A, b, rng) = _world(seed=1)
    theta = rng.standard_normal(3) + 3.0
    y = (rng.random(A.shape[0]) < expit(theta @ A.T - b)).astype(float)
    errs = []
    for seed in range(400):
        s = est.adaptive(budget=40, seed=seed)
        while not s.done:
            f = s._prediction().copy()
            ids = s.next_items(8)
            s.record({i: y[int(i[1:])] for i in ids})
        # naive: the final prediction for every unasked item, asked items' results, no correction
        naive = (np.where(np.isnan(s._results.y), f, s._results.y) * s._pool.cs).sum()
        errs.append(naive - y.mean())
    errs = np.array(errs)
    assert abs(errs.mean()) > 3.5 * errs.std(ddof=1) / np.sqrt(errs.size)


@pytest.mark.slow
def test_better_than_uniform_sampling_where_the_model_fits():
    """On data from the fitted model's own family (sharp items) the session beats random items
    and comes close to the best possible rule: its effective sample size (variance of the mean
    of as many random items / mean squared error) is at least 70% of the one that knowing the
    true probabilities would give (draws proportional to sqrt(P (1 - P)), the same floor)."""
    est, (A, b, rng) = _world(seed=2, true_dims=1, fit_dims=1, n_train=200, n_items=800, scale=3.0)
    n, tau = 60, adaptive.DEFAULT_MIXING
    ess, oracle = [], []
    for _ in range(3):
        theta = rng.standard_normal(1)
        P = expit(theta @ A.T - b)
        y = (rng.random(A.shape[0]) < P).astype(float)
        mse = np.mean([(_run(est, y, n, s, 10)["unclipped"] - y.mean()) ** 2 for s in range(150)])
        var_srs = (1 - n / y.size) * y.var(ddof=1) / n
        ess.append(var_srs / mse)
        h = np.sqrt(P * (1 - P))
        q = (1 - tau) * h / h.sum() + tau / y.size
        oracle.append(((P * (1 - P)).mean() + P.var()) / (P * (1 - P) / (y.size**2 * q)).sum())
    assert np.mean(ess) > 1.5 and np.mean(ess) >= 0.7 * np.mean(oracle), (ess, oracle)


def test_deterministic_per_seed_and_batches_in_any_order():
    est, (A, b, rng) = _world(seed=3)
    y = (rng.random(A.shape[0]) < 0.6).astype(float)
    one = est.adaptive(budget=30, seed=7)
    two = est.adaptive(budget=30, seed=7)
    ids1, ids2 = one.next_items(12), two.next_items(12)
    assert ids1 == ids2 and len(set(ids1)) == 12
    assert est.adaptive(budget=30, seed=8).next_items(12) != ids1
    # results out of order: only the recorded prefix of the draws counts
    one.record({i: y[int(i[1:])] for i in ids1[5:]})
    r = one.result()
    assert r["n_used"] == 0 and r["pending"] == 5 and one.pending == ids1[:5] and not r["done"]
    assert np.isnan(r["ci_low"])
    one.record({i: y[int(i[1:])] for i in reversed(ids1[:5])})
    two.record({i: y[int(i[1:])] for i in ids2})
    assert one.result() == two.result() and one.result()["n_used"] == 12
    # asking again before recording: the new draws use the results known so far
    more = one.next_items(10)
    assert not set(more) & set(ids1) and len(one.pending) == 10
    assert len(one.next_items(100)) == 8 and one.next_items(3) == []  # the budget of 30 is spent
    one.record({i: y[int(i[1:])] for i in one.pending})
    assert one.done and one.result()["n_asked"] == 30 and len(one.history()) == 30
    assert one.record({ids1[0]: y[int(ids1[0][1:])]})["n_used"] == 30  # the same score again: a no-op


def test_exact_when_every_item_is_known_and_start_items_are_never_asked():
    est, (A, b, rng) = _world(seed=4, n_items=120)
    y = (rng.random(120) < 0.5).astype(float)
    start = {f"i{j}": y[j] for j in range(0, 120, 3)}
    s = est.adaptive(budget=500, seed=0, start=start)
    asked = []
    while not s.done:
        ids = s.next_items(25)
        asked += ids
        s.record({i: y[int(i[1:])] for i in ids})
    r = s.result()
    assert not set(asked) & set(start) and len(asked) == 80
    assert r["score"] == pytest.approx(y.mean()) and r["se"] == 0 and r["ci_low"] == r["ci_high"]
    assert r["n_answered"] == 120


def test_target_halfwidth_stops_early():
    est, (A, b, rng) = _world(seed=5)
    y = (rng.random(A.shape[0]) < expit(1.0 - b)).astype(float)
    s = est.adaptive(target_halfwidth=0.08, seed=0, min_draws=20)
    while not s.done:
        ids = s.next_items(5)
        s.record({i: y[int(i[1:])] for i in ids})
    r = s.result()
    assert r["ci_high"] - r["score"] <= 0.08 + 1e-12 or r["score"] - r["ci_low"] <= 0.08 + 1e-12
    assert 20 <= r["n_asked"] < A.shape[0] // 2


def test_bundle_uses_the_benchmarks_weights_and_reports_each_scenario():
    """Two scenarios of different sizes, one with subscenarios of unequal size weighted equally
    (balance weights): the headline is the mean of the scenario scores, each unbiased."""
    rng = np.random.default_rng(6)
    n1, n2 = 300, 100
    N = n1 + n2
    A = np.abs(rng.normal(0, 1, (N, 1))) + 0.2
    b = rng.normal(0, 1.5, N)
    scen = np.r_[np.zeros(n1, int), np.ones(n2, int)]
    balance = np.r_[np.where(np.arange(n1) < 250, 1 / 250, 1 / 50) / 2, np.full(n2, 1 / n2)]
    est = TinyEstimator(item_ids=[f"i{j}" for j in range(N)], anchor_positions=np.arange(0, N, 4),
                        anchor_weights=np.full(100, 1 / 75), A=A, b=b, balance=balance, scenario_index=scen,
                        scenario_names=["big", "small"], strata=np.arange(N) // 4, prior_mean=np.zeros(1),
                        prior_cov=np.eye(1))
    y = (rng.random(N) < expit(0.5 * rng.standard_normal(N) + 0.3 - b)).astype(float)
    w = balance / np.bincount(scen, weights=balance)[scen]
    truth = np.array([(w * y)[scen == s].sum() for s in (0, 1)])
    runs = [_run(est, y, 60, seed, 12) for seed in range(300)]
    head = np.array([r["unclipped"] for r in runs])
    per = np.array([[r["scenarios"][s]["unclipped"] for s in ("big", "small")] for r in runs])
    assert abs(head.mean() - truth.mean()) < 3.5 * head.std(ddof=1) / np.sqrt(len(runs))
    for s in (0, 1):
        assert abs(per[:, s].mean() - truth[s]) < 3.5 * per[:, s].std(ddof=1) / np.sqrt(len(runs))
    assert np.allclose(head, per.mean(1))
    assert set(runs[0]["scenarios"]) == {"big", "small"}


def test_pool_restricts_the_items_and_the_target():
    est, (A, b, rng) = _world(seed=7, n_items=200)
    y = (rng.random(200) < 0.7).astype(float)
    pool = [f"i{j}" for j in range(0, 200, 2)]
    s = est.adaptive(budget=500, seed=1, pool=pool)
    while not s.done:
        ids = s.next_items(30)
        assert set(ids) <= set(pool)
        s.record({i: y[int(i[1:])] for i in ids})
    assert s.result()["score"] == pytest.approx(y[::2].mean())


@pytest.mark.parametrize("call, match", [
    (lambda e: e.adaptive(), "give a budget"),
    (lambda e: e.adaptive(budget=-1), "budget must be a non-negative integer"),
    (lambda e: e.adaptive(budget=5, mixing=0), "mixing must be"),
    (lambda e: e.adaptive(budget=5, target_halfwidth=2), "target_halfwidth"),
    (lambda e: e.adaptive(budget=5, start={"nope": 1}), "unknown item id 'nope'"),
    (lambda e: e.adaptive(budget=5, start={"i1": 2}), "scores must be in"),
    (lambda e: e.adaptive(budget=5, pool=["i1"], start={"i2": 1}), "not in this session's pool"),
    (lambda e: e.adaptive(budget=5).next_items(0), "n must be a positive integer"),
    (lambda e: e.adaptive(budget=5).record({"i1": 1.0}), "was not asked by this session"),
    (lambda e: e.adaptive(budget=5, start={"i1": 1}).record({"i1": 1.0}), "it is a start result"),
    (lambda e: e.adaptive(budget=5).record([1, 0]), "mapping"),
])
def test_bad_input_raises_value_error(call, match):
    est, _ = _world(seed=8, n_items=100, n_train=20)
    with pytest.raises(ValueError, match=match):
        call(est)


def test_a_changed_result_is_refused():
    est, _ = _world(seed=8, n_items=100, n_train=20)
    s = est.adaptive(budget=5)
    first = s.next_items(3)
    s.record({first[0]: 1})
    with pytest.raises(ValueError, match="already recorded with score 1.0, now 0.0"):
        s.record({first[0]: 0})
    with pytest.raises(ValueError, match="already recorded with score 1.0, now no result"):
        s.record({first[0]: None})
    with pytest.raises(ValueError, match="must be a number"):
        s.record({first[1]: "yes"})
    s.skip(first[1])
    with pytest.raises(ValueError, match="already recorded without a result"):
        s.record({first[1]: 1.0})
    assert s.record({first[1]: None})["n_skipped"] == 1  # the same skip again: a no-op


# --------------------------------------------------------------------------- skips: sessions always end


def test_a_skipped_item_is_replaced_and_never_asked_again():
    """``None`` (or skip) records "no result": the session asks another item instead, the budget
    counts the items with a result, and the estimate says it is of the answered items."""
    est, (A, b, rng) = _world(seed=12, n_items=200, n_train=30)
    y = (rng.random(200) < 0.6).astype(float)
    missing = {f"i{j}" for j in range(0, 200, 4)}  # a quarter of the items have no result
    s = est.adaptive(budget=40, seed=3)
    asked = []
    while not s.done:
        ids = s.next_items(7)
        asked += ids
        s.record({i: (None if i in missing else y[int(i[1:])]) for i in ids})
    r = s.result()
    assert len(asked) == len(set(asked)) and r["n_answered"] == 40
    assert r["n_skipped"] == len(set(asked) & missing) > 0 and r["n_asked"] == 40 + r["n_skipped"]
    assert "skipped" in r["note"] and np.isfinite(r["score"]) and r["ci_low"] < r["score"] < r["ci_high"]
    assert [h["skipped"] for h in s.history()] == [i in missing for i in asked]
    assert all(h["score"] is None for h in s.history() if h["skipped"])


def test_a_model_that_answers_nothing_ends_with_no_score():
    est, _ = _world(seed=13, n_items=150, n_train=20)
    batch = 4  # the skips of a batch are known once it is recorded: the last batch may pass max_skips
    for kwargs, cap in ((dict(budget=25), 25), (dict(budget=25, max_skips=3), 3),
                        (dict(target_halfwidth=0.05), adaptive.DEFAULT_MAX_SKIPS),
                        (dict(budget=400, pool=[f"i{j}" for j in range(60)]), 60)):
        s = est.adaptive(seed=0, **kwargs)
        calls = 0
        while not s.done:
            calls += 1
            assert calls < 1000, kwargs
            s.skip(s.next_items(batch))
        r = s.result()
        assert r["done"] and r["n_asked"] == r["n_skipped"] and r["n_answered"] == 0, (kwargs, r)
        assert cap <= r["n_skipped"] < cap + batch and r["n_asked"] <= 60 + 90 * ("pool" not in kwargs), (kwargs, r)
        assert np.isnan(r["score"]) and np.isnan(r["ci_low"]) and r["note"].startswith("no result"), r


def test_sessions_end_for_any_answer_pattern():
    """Random patterns of scores, skips, batch sizes, recording orders and stopping rules
    (bundles, pools, warm starts): every session reaches ``done`` within the pool's size in
    draws, reports no score when nothing was answered, and says why whenever there is no score."""
    rng = np.random.default_rng(14)
    N = 90
    A = np.abs(rng.normal(0, 1, (N, 2))) + 0.1
    scen = (np.arange(N) < 27).astype(int)  # two scenarios, the strata (of 9 items) inside them
    est = TinyEstimator(item_ids=[f"i{j}" for j in range(N)], anchor_positions=np.arange(0, N, 9),
                        anchor_weights=np.full(10, 0.1), A=A, b=rng.normal(0, 1, N), balance=rng.random(N) + 0.2,
                        scenario_index=scen, scenario_names=["a", "b"], strata=np.arange(N) // 9,
                        prior_mean=np.zeros(2), prior_cov=np.eye(2))
    for trial in range(60):
        p_skip = rng.choice([0.0, 0.1, 0.5, 0.9, 1.0])
        y = {f"i{j}": (None if rng.random() < p_skip else float(rng.random() < 0.5)) for j in range(N)}
        kwargs: dict = {"seed": trial}
        kwargs.update(rng.choice([{"budget": int(rng.integers(1, 120))}, {"target_halfwidth": 0.2, "min_draws": 5},
                                  {"budget": 30, "max_skips": int(rng.integers(0, 5))}]))
        if rng.random() < 0.3:
            kwargs["start"] = {f"i{j}": 1.0 for j in range(0, N, 30)}  # in the pool below too
        if rng.random() < 0.3:
            kwargs["pool"] = [f"i{j}" for j in range(N) if j % 2 or j % 3 == 0]
        s = est.adaptive(**kwargs)
        for _ in range(N + 1):
            if s.done:
                break
            ids = s.next_items(int(rng.integers(1, 12)))
            order = rng.permutation(len(ids))
            for part in np.array_split(order, 2):  # recorded in two calls, in any order
                s.record({ids[k]: y[ids[k]] for k in part})
        r = s.result()
        assert s.done and r["done"], (trial, kwargs, r)
        assert r["n_asked"] <= N and (r["n_answered"] > 0 or np.isnan(r["score"])), (trial, kwargs, r)
        assert np.isfinite(r["score"]) or r["note"].startswith("no result"), (trial, kwargs, r)
        assert np.isfinite(r["score"]) or r["n_skipped"] > 0.5 * r["n_asked"], (trial, kwargs, r)


@pytest.mark.slow
def test_skips_leave_the_estimate_of_the_answered_items_unbiased_and_covering():
    """Items whose result is missing, the harder ones more often (so the score over the answered
    items is not the pool's): over many seeds the estimate's mean is the score over the answered
    items and the 95% interval covers it about 95% of the time."""
    est, (A, b, rng) = _world(seed=15)
    theta = rng.standard_normal(3)
    P = expit(theta @ A.T - b)
    y = (rng.random(A.shape[0]) < P).astype(float)
    missing = rng.random(A.shape[0]) < np.where(b > 0.5, 0.4, 0.05)
    truth = y[~missing].mean()
    assert abs(truth - y.mean()) > 0.01  # the answered items' score is another target
    runs = []
    for seed in range(400):
        s = est.adaptive(budget=40, seed=seed)
        while not s.done:
            ids = s.next_items(8)
            s.record({i: (None if missing[int(i[1:])] else y[int(i[1:])]) for i in ids})
        runs.append(s.result())
    err = np.array([r["unclipped"] for r in runs]) - truth
    assert abs(err.mean()) < 3.5 * err.std(ddof=1) / np.sqrt(err.size), (err.mean(), err.std())
    cover = np.mean([r["ci_low"] <= truth <= r["ci_high"] for r in runs])
    assert 0.91 <= cover <= 0.99, cover


def test_adaptive_py_is_copied_next_to_estimator_py_and_runs_alone(tmp_path):
    """The fit folder carries adaptive.py; with nothing but the folder on sys.path (no package),
    TinyEstimator.adaptive loads the copy next to estimator.py, and imports nothing of tinybench_builder."""
    est, (A, b, rng) = _world(seed=9, n_items=100, n_train=20)
    folder = tmp_path / "fit"
    folder.mkdir()
    est.save(folder)
    layout.copy_estimator_code(folder)
    assert (folder / "adaptive.py").read_bytes() == open(adaptive.__file__, "rb").read()
    code = textwrap.dedent(f"""
        import sys, json
        sys.path.insert(0, {str(folder)!r})
        from estimator import TinyEstimator
        s = TinyEstimator.load({str(folder)!r}).adaptive(budget=10, seed=3)
        ids = s.next_items(10)
        r = s.record({{i: 1.0 for i in ids}})
        mods = sorted(m for m in sys.modules if m == "tinybench_builder" or m.startswith("tinybench_builder."))
        print(json.dumps({{"ids": ids, "score": r["score"], "package": mods,
                           "file": type(s).__module__ and sys.modules[type(s).__module__].__file__}}))
    """)
    out = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                    cwd=tmp_path).stdout)
    assert out["package"] == [] and out["file"] == str(folder / "adaptive.py")
    assert out["ids"] == est.adaptive(budget=10, seed=3).next_items(10)


def test_from_hub_checks_adaptive_py_and_uses_it_when_estimator_py_is_alone(tmp_path):
    """estimator.py copied alone (no adaptive.py next to it): from_hub downloads adaptive.py with
    the side files, checks its sha256 against the release manifest and uses it; a modified copy
    is refused; a release from before adaptive.py (none in the folder) still loads."""
    est, _ = _world(seed=10, n_items=100, n_train=20)
    release = tmp_path / "release"
    release.mkdir()
    est.save(release)
    layout.copy_estimator_code(release)
    layout.write_manifest(release, {"format": layout.FIT_FORMAT, "schema_version": 1})
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copyfile(estimator.__file__, alone / "estimator.py")
    code = textwrap.dedent(f"""
        import sys, json
        sys.path.insert(0, {str(alone)!r})
        import huggingface_hub
        huggingface_hub.snapshot_download = lambda *a, **kw: {str(release)!r}
        from estimator import TinyEstimator
        try:
            est = TinyEstimator.from_hub("org/tiny", revision="v1.0.0")
        except ValueError as exc:
            print(json.dumps({{"error": str(exc)}})); raise SystemExit
        try:
            s = est.adaptive(budget=4, seed=0)
            print(json.dumps({{"ids": s.next_items(4), "file": sys.modules[type(s).__module__].__file__}}))
        except FileNotFoundError as exc:
            print(json.dumps({{"missing": str(exc)}}))
    """)

    def run():
        return json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                         cwd=tmp_path).stdout)

    ok = run()
    assert ok["file"] == str(release / "adaptive.py") and ok["ids"] == est.adaptive(budget=4, seed=0).next_items(4)
    (release / "adaptive.py").write_text((release / "adaptive.py").read_text() + "\n# changed\n")
    assert "adaptive.py has sha256" in run()["error"]
    (release / "adaptive.py").unlink()  # an older release: no adaptive.py, the estimator still loads
    assert "adaptive.py not found next to estimator.py" in run()["missing"]


def test_the_api_version_is_checked(tmp_path, monkeypatch):
    bad = tmp_path / "adaptive.py"
    bad.write_text("API_VERSION = 99\n")
    monkeypatch.setattr(estimator, "__file__", str(tmp_path / "estimator.py"))
    with pytest.raises(ValueError, match="API version 99"):
        estimator._adaptive_module()


# --------------------------------------------------------------------------- the command line


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    from tinybench_builder.cli.main import main

    d = tmp_path_factory.mktemp("adaptive_cli")
    assert main(["simulate", "--models", "50", "--items", "300", "--dims", "1", "--seed", "4",
                 "--out", str(d / "sim.parquet")]) == 0
    assert main(["fit", str(d / "sim.parquet"), "--anchors", "30", "--out", str(d / "tiny"), "--dims", "1",
                 "--quiet"]) == 0
    import pandas as pd

    table = pd.read_parquet(d / "sim.parquet")
    table.iloc[:3].to_parquet(d / "three.parquet")
    gappy = table.iloc[:1].copy()
    gappy.iloc[0, :100] = np.nan  # a model with 100 items not evaluated
    gappy.to_parquet(d / "gappy.parquet")
    return d


def test_cli_runs_the_loop_against_a_table_and_matches_the_api(fitted, capsys):
    from tinybench_builder.cli.main import main
    import pandas as pd

    assert main(["adaptive", str(fitted / "tiny"), "--answers", str(fitted / "three.parquet"), "--budget", "40",
                 "--batch", "8", "--seed", "2", "--out", str(fitted / "a.csv")]) == 0
    err = capsys.readouterr().err
    assert "40 asked, score" in err and "wrote 3 estimate(s)" in err
    df = pd.read_csv(fitted / "a.csv")
    assert list(df.columns) == ["model", "score", "ci_low", "ci_high", "se", "n_asked", "n_answered", "pool",
                                "table_score", "done"]
    table = pd.read_parquet(fitted / "three.parquet")
    est = TinyEstimator.load(fitted / "tiny")
    for i in range(len(table)):
        y = table.iloc[i]
        s = est.adaptive(budget=40, seed=2)
        while not s.done:
            s.record({k: float(y[k]) for k in s.next_items(8)})
        assert df["score"][i] == pytest.approx(s.result()["score"])
        assert df["table_score"][i] == pytest.approx(y.mean())
    assert (df["n_asked"] == 40).all() and df["done"].all()
    # warm start from the tiny split: the anchors are known, 40 more are asked
    assert main(["adaptive", str(fitted / "tiny"), "--answers", str(fitted / "three.parquet"), "--budget", "40",
                 "--warm-start", "--quiet", "--model", table.index[0]]) == 0
    out = capsys.readouterr().out
    assert table.index[0] in out and table.index[1] not in out and " 70 " in out  # n_answered = 30 + 40


def test_cli_restricts_a_gappy_row_to_its_items_and_refuses_bad_input(fitted, capsys):
    from tinybench_builder.cli.main import main

    assert main(["adaptive", str(fitted / "tiny"), "--answers", str(fitted / "gappy.parquet"),
                 "--target-halfwidth", "0.2", "--quiet"]) == 0
    cap = capsys.readouterr()
    assert "answers 200 of the 300 items" in cap.err and " 200 " in cap.out
    assert main(["adaptive", str(fitted / "tiny"), "--answers", str(fitted / "three.parquet")]) == 2
    assert "error: give --budget N" in capsys.readouterr().err
    assert main(["adaptive", str(fitted / "tiny"), "--answers", str(fitted / "three.parquet"), "--budget", "5",
                 "--out", str(fitted / "three.parquet")]) == 2
    assert "is the scores file being read" in capsys.readouterr().err
    assert main(["adaptive", str(fitted / "tiny"), "--answers", str(fitted / "three.parquet"), "--budget", "5",
                 "--model", "nobody"]) == 2
    assert "no model 'nobody'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["adaptive", str(fitted / "tiny"), "--answers", str(fitted / "three.parquet"), "--target-halfwidth", "2"])
    assert "must be a half-width in (0, 1)" in capsys.readouterr().err


def test_the_package_session_class_is_the_one_the_estimator_loads():
    import tinybench_builder

    est, _ = _world(seed=11, n_items=80, n_train=20)
    assert isinstance(est.adaptive(budget=3), tinybench_builder.AdaptiveSession)


# --------------------------------------------------------------------------- options measured on the dev protocol


@pytest.mark.slow
def test_the_variance_prior_keeps_the_estimate_unbiased_and_covering():
    """``variance_prior`` changes only the interval: the estimate is the same, unbiased over
    seeds, and the interval covers about 95%, for a model far stronger than the training ones."""
    est, (A, b, rng) = _world(seed=1)
    theta = rng.standard_normal(3) + 3.0
    y = (rng.random(A.shape[0]) < expit(theta @ A.T - b)).astype(float)
    runs = [_run(est, y, 40, seed, 8, variance_prior=10.0) for seed in range(300)]
    assert [r["unclipped"] for r in runs[:20]] == [_run(est, y, 40, seed, 8)["unclipped"] for seed in range(20)]
    err = np.array([r["unclipped"] for r in runs]) - y.mean()
    assert abs(err.mean()) < 3.5 * err.std(ddof=1) / np.sqrt(err.size)
    cover = np.mean([r["ci_low"] <= y.mean() <= r["ci_high"] for r in runs])
    assert 0.90 <= cover <= 0.99, cover


def test_a_bad_variance_prior_is_refused():
    est, _ = _world(seed=16, n_items=120, n_train=30)
    for bad in (-1, True, "10"):
        with pytest.raises(ValueError, match="variance_prior"):
            est.adaptive(budget=5, variance_prior=bad)


def test_the_default_variance_prior_widens_only_the_interval_and_the_stop_uses_it():
    """The default (``DEFAULT_VARIANCE_PRIOR`` pseudo-draws of the model's variance) changes the
    interval, never the estimate; a ``target_halfwidth`` stop is judged on that same interval, so
    the reported half-width is within the target when the session stops early (a low-score model:
    there the model's variance exceeds the increments' own, and a stop on the empirical variance
    alone reported half-widths up to 1.6x the target)."""
    from tinybench_builder import adaptive

    assert adaptive.DEFAULT_VARIANCE_PRIOR == 5.0
    est, (A, b, rng) = _world(seed=5)
    y = (rng.random(A.shape[0]) < expit(-3.0 - b)).astype(float)
    assert 0.05 < y.mean() < 0.15
    for seed in range(15):
        d, z = _run(est, y, 30, seed, 5), _run(est, y, 30, seed, 5, variance_prior=0.0)
        assert d["unclipped"] == z["unclipped"] and d["se"] != z["se"]
        s = est.adaptive(target_halfwidth=0.1, seed=seed, min_draws=10)
        while not s.done:
            s.record({i: y[int(i[1:])] for i in s.next_items(1)})
        r = s.result()
        assert r["n_asked"] < A.shape[0] // 2 and r["ci_high"] < 1.0
        assert r["ci_high"] - r["unclipped"] <= 0.1 + 1e-12, (seed, r["ci_high"] - r["unclipped"])
