"""tinybench_builder.estimate.harness_logs / `tinybench-builder estimate DIR LOGS`: lm-eval logs of a tiny task give the same
estimate whatever the order of their records (shuffled, multi-GPU interleaving, doc ids that do
not follow the rows), because results are matched to the rows by document."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from tinybench_builder.cli.main import main
from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.estimate.harness_logs import estimate_from_logs, match_rows
from tinybench_builder.read.sources import SourceError
from helpers.builds import built, read_split, rng_perm

TS = "2024-05-01T10-00-00.123456"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return built(tmp_path_factory.getbasetemp() / "builds", "tinyMMLU")


def _records(rows: pd.DataFrame, scores, doc_ids=None):
    out = []
    for i, (row, s) in enumerate(zip(rows.to_dict("records"), scores)):
        doc = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in row.items()}
        out.append({
            "doc_id": int(doc_ids[i]) if doc_ids is not None else i, "doc": doc, "target": doc["answer"],
            "arguments": {"gen_args_0": {"arg_0": doc["input_formatted"], "arg_1": " A"}},
            "resps": [[["-1.2", "False"]]], "filtered_resps": [["-1.2", "False"]],
            "filter": "none", "metrics": ["acc", "acc_norm"], "doc_hash": "x", "prompt_hash": "y", "target_hash": "z",
            "acc": f"{s:.1f}", "acc_norm": f"{s:.1f}",
        })
    return out


def _write_logs(root, model, records, order=None):
    d = root / model.replace("/", "__")
    d.mkdir(parents=True, exist_ok=True)
    recs = records if order is None else [records[i] for i in order]
    with open(d / f"samples_tinyMMLU_{TS}.jsonl", "w") as fh:
        for r in recs:
            fh.write(json.dumps(r) + "\n")
    (d / f"results_{TS}.json").write_text(json.dumps({
        "results": {"tinyMMLU": {"alias": "tinyMMLU", "acc_norm,none": 0.5}},
        "config": {"model": "hf", "model_args": f"pretrained={model},dtype=bfloat16"},
        "n-samples": {"tinyMMLU": {"original": len(records), "effective": len(records)}},
    }))
    return d


def _scores(n, seed):
    return (np.random.default_rng(seed).random(n) < 0.6).astype(float)


def test_logs_with_only_acc_norm_or_only_acc(tiny, tmp_path):
    """lm-eval's tinyMMLU/tinyWinogrande tasks list acc_norm only, and lm-eval writes only listed
    metrics: such logs estimate (the registry said acc and they failed); logs of the later task
    version, acc only, give the same estimate (equal there); neither metric is a clear error."""
    rows = read_split(tiny, "all", "test")
    y = _scores(len(rows), 3)
    want = TinyEstimator.load(tiny).estimate(y)["score"]
    got = {}
    for keep in ("acc_norm", "acc"):
        recs = [{k: v for k, v in r.items() if k != ({"acc", "acc_norm"} - {keep}).pop()} for r in _records(rows, y)]
        for r in recs:
            r["metrics"] = [keep]
        _write_logs(tmp_path / keep, "org/model-n", recs)
        frame, _ = estimate_from_logs(tiny, tmp_path / keep)
        got[keep] = frame["score"][0]
    assert got["acc_norm"] == pytest.approx(want) and got["acc"] == pytest.approx(want)
    recs = [{k: v for k, v in r.items() if k not in ("acc", "acc_norm")} | {"exact_match": "1.0"}
            for r in _records(rows, y)]
    _write_logs(tmp_path / "neither", "org/model-n", recs)
    with pytest.raises(SourceError, match="no metric 'acc_norm' in the record"):
        estimate_from_logs(tiny, tmp_path / "neither")


def test_estimate_is_order_independent(tiny, tmp_path):
    rows = read_split(tiny, "all", "test")
    est = TinyEstimator.load(tiny)
    y = _scores(len(rows), 1)
    want = est.estimate(y)
    recs = _records(rows, y)
    frames = []
    for name, order in [("ordered", None), ("shuffled", rng_perm(len(recs), 7)), ("reversed", list(range(len(recs)))[::-1])]:
        logs = tmp_path / name
        _write_logs(logs, "org/model-a", recs, order)
        frame, notes = estimate_from_logs(tiny, logs)
        assert list(frame["model"]) == ["org/model-a"]
        frames.append(frame)
    for f in frames:
        pd.testing.assert_frame_equal(f, frames[0])
    assert frames[0]["gpirt"][0] == pytest.approx(want["gpirt"])
    assert frames[0]["n_answered"][0] == len(rows)
    # multi-GPU: two ranks' records interleaved in one file (doc_ids 0,2,4,... then 1,3,5,...)
    logs = tmp_path / "ranks"
    _write_logs(logs, "org/model-a", recs, list(range(0, len(recs), 2)) + list(range(1, len(recs), 2)))
    pd.testing.assert_frame_equal(estimate_from_logs(tiny, logs)[0], frames[0])


def test_documents_are_matched_by_content_not_doc_id(tiny, tmp_path):
    """doc_ids that do not follow the rows (e.g. a harness that reordered the split) still map
    each result to its own row, so the estimate is unchanged."""
    rows = read_split(tiny, "all", "test")
    y = _scores(len(rows), 2)
    perm = rng_perm(len(rows), 3)
    recs = _records(rows, y, doc_ids=perm)  # record of row i carries doc_id perm[i]
    logs = tmp_path / "logs"
    _write_logs(logs, "org/model-b", recs, rng_perm(len(rows), 4))
    frame, notes = estimate_from_logs(tiny, logs)
    est = TinyEstimator.load(tiny)
    assert frame["gpirt"][0] == pytest.approx(est.estimate(y)["gpirt"])
    assert any("matched by content" in n for n in notes)


def test_partial_logs_and_several_models(tiny, tmp_path):
    rows = read_split(tiny, "all", "test")
    est = TinyEstimator.load(tiny)
    ya, yb = _scores(len(rows), 5), _scores(len(rows), 6)
    logs = tmp_path / "logs"
    _write_logs(logs, "org/model-a", _records(rows, ya))
    keep = [0, 3, 4, 7]  # a --limit style partial run of model b
    _write_logs(logs, "org/model-b", [_records(rows, yb)[i] for i in keep])
    frame, notes = estimate_from_logs(tiny, logs)
    assert list(frame["model"]) == ["org/model-a", "org/model-b"]
    partial = np.full(len(rows), np.nan)
    partial[keep] = yb[keep]
    assert frame["gpirt"][1] == pytest.approx(est.estimate(partial)["gpirt"])
    assert frame["n_answered"][1] == len(keep)
    assert any("4 of 10 rows answered" in n for n in notes)


def test_foreign_documents_are_refused(tiny, tmp_path):
    rows = read_split(tiny, "all", "test")
    recs = _records(rows, _scores(len(rows), 0))
    recs[2]["doc"]["question"] = "A question from another version of the dataset?"
    recs[2]["doc"]["input_formatted"] = "something else"
    logs = tmp_path / "logs"
    _write_logs(logs, "org/model-c", recs)
    with pytest.raises(SourceError, match="not a row of this tiny dataset"):
        estimate_from_logs(tiny, logs)
    # duplicate documents under different doc_ids
    recs = _records(rows, _scores(len(rows), 0))
    recs[1]["doc"] = recs[0]["doc"]
    shutil.rmtree(logs)
    _write_logs(logs, "org/model-c", recs)
    with pytest.raises(SourceError, match="same row"):
        estimate_from_logs(tiny, logs)


def test_match_rows_without_docs_uses_doc_id():
    rows = [{"question": "a"}, {"question": "b"}]
    assert match_rows({0: None, 1: None}, rows, "x")[0] == {0: 0, 1: 1}
    assert match_rows({0: {"question": "b"}, 1: {"question": "a"}}, rows, "x")[0] == {0: 1, 1: 0}
    with pytest.raises(SourceError):
        match_rows({5: None}, rows, "x")


def test_cli_estimate_from_a_logs_folder(tiny, tmp_path, capsys):
    rows = read_split(tiny, "all", "test")
    y = _scores(len(rows), 9)
    logs = tmp_path / "logs"
    _write_logs(logs, "org/model-d", _records(rows, y), rng_perm(len(rows), 1))
    assert main(["estimate", str(tiny), str(logs), "--out", str(tmp_path / "e.csv")]) == 0
    df = pd.read_csv(tmp_path / "e.csv")
    assert df["model"].tolist() == ["org/model-d"]
    assert df["gpirt"][0] == pytest.approx(TinyEstimator.load(tiny).estimate(y)["gpirt"])
    # a folder without logs of the task is an error (exit 2, message on stderr)
    (tmp_path / "empty").mkdir()
    assert main(["estimate", str(tiny), str(tmp_path / "empty")]) == 2
    assert "no samples_" in capsys.readouterr().err


def test_fit_folder_reads_full_task_logs(tmp_path):
    """A `tinybench-builder fit` folder has no data: the logs are of the full task, items named by doc_id
    (as `tinybench-builder ingest` names them), the anchors taken by id, in any record order."""
    from tinybench_builder.model.fitting import fit_estimator
    from tinybench_builder.read.simulate import simulate_responses

    m, _ = simulate_responses(n_models=30, n_items=120, n_dims=1, seed=3)
    est = fit_estimator(m, n_anchors=10, seed=0, n_dims=1, n_seeds=2, n_folds=2, progress=False).estimator
    fit_dir = tmp_path / "fit"
    est.save(fit_dir)
    y = _scores(120, 12)
    d = tmp_path / "logs" / "org__model-e"
    d.mkdir(parents=True)
    with open(d / f"samples_simtask_{TS}.jsonl", "w") as fh:
        for i in rng_perm(120, 5):
            fh.write(json.dumps({"doc_id": int(i), "doc": {"question": f"q{i}"}, "acc": str(y[i])}) + "\n")
    frame, _ = estimate_from_logs(fit_dir, tmp_path / "logs")  # the only task in the logs
    want = est.estimate({a: y[int(a)] for a in est.anchor_ids})
    assert frame["gpirt"][0] == pytest.approx(want["gpirt"]) and frame["n_answered"][0] == 10
    frame2, _ = estimate_from_logs(fit_dir, tmp_path / "logs", task="simtask")
    pd.testing.assert_frame_equal(frame, frame2)


def test_bundle_logs_of_several_tasks(tmp_path, tmp_path_factory):
    """tinyOpenLLMLeaderboard: one folder per model with the samples of several tiny tasks; each
    config's results go to its scenario's anchors of the joint estimator; missing tasks stay unanswered."""
    from tinybench_builder.layout import config_anchor_ids
    from helpers.builds import built as build

    folder = build(tmp_path_factory.getbasetemp() / "builds", "tinyOpenLLMLeaderboard")
    est = TinyEstimator.load(folder)
    d = tmp_path / "logs" / "org__model-f"
    d.mkdir(parents=True)
    y = np.full(len(est.anchor_ids), np.nan)
    for config, task, metric, seed in (("gsm8k", "tinyGSM8k", "exact_match", 1), ("winogrande", "tinyWinogrande", "acc", 2)):
        rows = read_split(folder, config, {"gsm8k": "test", "winogrande": "validation"}[config])
        s = _scores(len(rows), seed)
        recs = _records(rows, s)
        for r in recs:
            r[metric] = f"{r['acc']}"
        with open(d / f"samples_{task}_{TS}.jsonl", "w") as fh:
            for i in rng_perm(len(recs), seed):
                fh.write(json.dumps(recs[i]) + "\n")
        pos = {a: i for i, a in enumerate(est.anchor_ids)}
        for a, v in zip(config_anchor_ids(est, config), s):
            y[pos[a]] = v
    frame, _ = estimate_from_logs(folder, tmp_path / "logs")
    want = est.estimate(y)
    assert frame["model"].tolist() == ["org/model-f"]
    assert frame["gpirt"][0] == pytest.approx(want["gpirt"])
    assert frame["gsm8k.gpirt"][0] == pytest.approx(want["scenarios"]["gsm8k"]["gpirt"])
    assert frame["n_answered"][0] == 6


from helpers.builds import SHARED  # noqa: E402


@pytest.mark.realdata
@pytest.mark.skipif(not (SHARED / "raw" / "lm_eval_samples").is_dir(), reason="../shared/data is absent")
def test_real_lm_eval_logs_with_a_fit_folder(tmp_path):
    """Real lm-eval logs (wmdp_bio, 3 models) against an estimator fitted on the real wmdp_bio matrix:
    the same estimates as the matrix rows of those models (their acc equals the logs)."""
    from tinybench_builder.model.fitting import fit_estimator
    from tinybench_builder.read.matrix import ResponseMatrix

    m = ResponseMatrix.read(SHARED / "responses" / "wmdp_bio.parquet")
    est = fit_estimator(m, n_anchors=30, seed=0, n_dims=1, n_seeds=2, n_folds=2, progress=False).estimator
    est.save(tmp_path / "fit")
    frame, _ = estimate_from_logs(tmp_path / "fit", SHARED / "raw" / "lm_eval_samples", task="wmdp_bio")
    assert len(frame) == 3
    for model, gp in zip(frame["model"], frame["gpirt"]):
        row = m.scores[m.models.index(model)]
        want = est.estimate({a: row[m.items.index(a)] for a in est.anchor_ids})["gpirt"]
        assert gp == pytest.approx(want)
