"""`tinybench-builder import-original`: the original release's tinyBenchmarks.pkl (written here in its layout,
with made-up parameters) becomes estimator side files, and TinyEstimator then returns what the
original evaluate(y, bench) returns, bit for bit: every bench, the lb scenarios alone, several IRT
dimensions. The pickle is read with the restricted unpickler."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from tinybench_builder.cli.main import main
from tinybench_builder.estimator import TinyEstimator, evaluate
from tinybench_builder.dataset.original import LB_SCENARIOS, OriginalFormatError, original_estimator, read_original
from helpers.original_release import original_evaluate, write_original_pickle
from helpers.sources import write_malicious_pickle


@pytest.fixture(scope="module")
def pkl(tmp_path_factory):
    path = tmp_path_factory.mktemp("original") / "tinyBenchmarks.pkl"
    return path, write_original_pickle(path, seed=0, D=3)


def _answers(n: int, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).random(n) < 0.55).astype(float)


@pytest.mark.parametrize("bench", ["mmlu", "lb", "helm_lite", "alpaca", *LB_SCENARIOS])
def test_the_original_evaluate_is_reproduced_exactly(pkl, tmp_path, bench):
    path, data = pkl
    assert main(["import-original", str(path), "--bench", bench, "--out", str(tmp_path / "out")]) == 0
    est = TinyEstimator.load(tmp_path / "out")
    assert (tmp_path / "out" / "estimator.py").is_file() and est.design == "original"
    for seed in (1, 2):
        y = _answers(len(est.anchor_ids), seed)
        want = original_evaluate(data, y, bench)
        got = evaluate(y, bench, source=tmp_path / "out")  # the original's API, its scenario keys
        assert got.keys() == want.keys()
        for key, w in want.items():
            assert (got[key]["irt"], got[key]["pirt"], got[key]["gpirt"]) == (w["irt"], w["pirt"], w["gpirt"])
            assert got[key]["score"] == w["gpirt"]
            assert np.isnan(got[key]["ci_low"]) and np.isnan(got[key]["ci_high"])  # the original has no interval


def test_dimensions_and_the_issue_example_input(tmp_path):
    for D in (1, 2, 5):
        path = tmp_path / f"d{D}.pkl"
        data = write_original_pickle(path, seed=D, D=D)
        est = original_estimator(read_original(path), "mmlu")
        y = [1 if i % 3 == 0 else 0 for i in range(100)]
        got = est.estimate(y)
        want = original_evaluate(data, np.array(y), "mmlu")["mmlu"]
        assert (got["irt"], got["pirt"], got["gpirt"]) == (want["irt"], want["pirt"], want["gpirt"])
        # a batch gives the same numbers as one call per model
        Y = np.vstack([_answers(100, s) for s in range(3)])
        for row, res in zip(Y, est.estimate(Y)):
            assert res["gpirt"] == original_evaluate(data, row, "mmlu")["mmlu"]["gpirt"]


def test_items_anchors_weights_and_metadata(pkl):
    path, data = pkl
    est = original_estimator(read_original(path), "lb")
    e = data["lb"]
    assert len(est.item_ids) == sum(len(p) for p in e["scenarios_position"].values())
    assert est.scenarios == ["truthfulqa", "gsm8k", "winogrande", "arc", "hellaswag", "mmlu"]
    assert est.anchor_ids[0] == "truthfulqa.harness_truthfulqa_mc_0." + str(e["seen_examples"][0])
    np.testing.assert_array_equal(est.anchor_weights, np.concatenate(list(e["examples_weights"].values())))
    assert est.lambdas == e["optimal_lambdas"]
    assert est.metadata["benchmark"] == "tinyOpenLLMLeaderboard"
    gsm = original_estimator(read_original(path), "gsm8k")
    assert gsm.scenarios == ["gsm8k"] and len(gsm.anchor_ids) == 100 and len(gsm.item_ids) == 180
    assert gsm.metadata["benchmark"] == "tinyGSM8k" and gsm.anchor_ids[0].startswith("harness_gsm8k_5.")
    assert original_estimator(read_original(path), "alpaca").anchor_ids[0].isdigit()  # no subscenarios


def test_unanswered_anchors(pkl):
    """The original has no unanswered anchors; here theta uses the answered ones and irt re-weights them."""
    path, data = pkl
    est = original_estimator(read_original(path), "mmlu")
    y = _answers(100, 4)
    full = est.estimate(y)
    part = est.estimate({a: v for a, v in zip(est.anchor_ids[:60], y[:60])})
    assert part["n_answered"] == 60 and 0 <= part["gpirt"] <= 1 and part["gpirt"] != full["gpirt"]
    w = est.anchor_weights[:60]
    assert part["irt"] == pytest.approx((w * y[:60]).sum() / w.sum())


def test_refusals(tmp_path, capsys):
    marker = tmp_path / "pwned"
    bad = write_malicious_pickle(tmp_path / "evil.pkl", marker)
    assert main(["import-original", str(bad), "--bench", "mmlu", "--out", str(tmp_path / "o")]) == 2
    assert "refused to load global" in capsys.readouterr().err and not marker.exists()
    other = tmp_path / "other.pkl"
    other.write_bytes(pickle.dumps({"models": ["m"], "data": {}}))
    with pytest.raises(OriginalFormatError, match="not a tinyBenchmarks.pkl"):
        read_original(other)
    path = tmp_path / "t.pkl"
    write_original_pickle(path)
    assert main(["import-original", str(path), "--bench", "bbh", "--out", str(tmp_path / "o")]) == 2
    assert "--bench must be one of lb, mmlu" in capsys.readouterr().err
    # --check compares with the published numbers of the real release: these parameters are not it
    assert main(["import-original", str(path), "--bench", "mmlu", "--out", str(tmp_path / "o"), "--check"]) == 1
    out = capsys.readouterr().out
    assert "original 0.3231872855436154" in out and "is NOT reproduced" in out


def test_a_batch_row_may_leave_a_scenario_unanswered(pkl):
    import warnings

    path, _ = pkl
    est = original_estimator(read_original(path), "lb")
    Y = np.vstack([_answers(600, 7), np.r_[_answers(100, 8), np.full(500, np.nan)]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        full, part = est.estimate(Y)
    assert part["scenarios"]["truthfulqa"]["n_answered"] == 100 and not np.isnan(part["scenarios"]["truthfulqa"]["irt"])
    gsm = part["scenarios"]["gsm8k"]
    assert gsm["n_answered"] == 0 and np.isnan(gsm["irt"]) and gsm["gpirt"] == gsm["pirt"] == gsm["score"]
    assert full["scenarios"]["gsm8k"]["n_answered"] == 100
