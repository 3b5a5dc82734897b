"""tinybench_builder.read.sources.lighteval: lighteval's details files (``--save-details``) as a source of `ingest`
(``--format lighteval``, or detected) and of `estimate` on a tiny dataset (matched to the anchors by
document, any order, any subset), with the strictness of the lm-eval reader on bad files. The files
are written here in lighteval 0.13.0's layout and schema (tests/helpers/sources.py); the real
lighteval writes them in tests/e2e/test_harness_downloads.py."""

from __future__ import annotations

import numpy as np
import pytest

from tinybench_builder.estimate.harness_logs import estimate_from_logs
from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.layout import config_anchor_ids, read_manifest
from tinybench_builder.read import SourceError, detect_source, ingest
from helpers.builds import built, read_split
from helpers.sources import lighteval_record, write_lighteval_run, write_v1_details

TS2 = "2026-12-03T09-00-00.000000"


def _recs(n, values, metric="acc", order=None, **kw):
    order = list(range(n)) if order is None else order
    return [lighteval_record(i, {metric: float(values[i])}, **kw) for i in order]


def test_many_models_are_read_into_one_matrix_in_any_record_order(tmp_path):
    rng = np.random.default_rng(0)
    y = (rng.random((3, 8)) < 0.5).astype(float)
    for m, model in enumerate(["org/model-a", "model-b", "org/model-c"]):
        write_lighteval_run(tmp_path / "out", model, {"mytask|0": _recs(8, y[m], order=rng.permutation(8).tolist())})
    assert detect_source(tmp_path / "out") == "lighteval"
    mat = ingest([tmp_path / "out"], progress=False)
    assert sorted(mat.models) == ["model-b", "org/model-a", "org/model-c"]  # config_general.model_name
    assert mat.items == [str(i) for i in range(8)]
    for m, model in enumerate(["org/model-a", "model-b", "org/model-c"]):
        assert mat.scores[mat.models.index(model)].tolist() == y[m].tolist()
    assert ingest([tmp_path / "out"], format="lighteval", progress=False).scores.tolist() == mat.scores.tolist()


def test_a_superset_gives_subtask_items_and_the_newest_run_wins(tmp_path):
    out = tmp_path / "out"
    write_lighteval_run(out, "m", {"mmlu:anatomy|5": _recs(3, [1, 0, 1]), "mmlu:virology|5": _recs(2, [0, 1]),
                                   "other|0": _recs(2, [1, 1])})
    write_lighteval_run(out, "m", {"other|0": _recs(2, [0, 0])}, ts=TS2)  # a later run of one task
    mat = ingest([out], task="mmlu", progress=False)
    assert mat.items == ["anatomy.0", "anatomy.1", "anatomy.2", "virology.0", "virology.1"]
    assert mat.scores.tolist() == [[1, 0, 1, 0, 1]]
    mat = ingest([out], task="other|0", progress=False)
    assert mat.scores.tolist() == [[0, 0]] and any("2 runs, using the newest" in n for n in mat.notes)
    everything = ingest([out], progress=False)
    assert set(everything.items) == {"mmlu.anatomy.0", "mmlu.anatomy.1", "mmlu.anatomy.2", "mmlu.virology.0",
                                     "mmlu.virology.1", "other.0", "other.1"}


def test_a_task_run_with_several_numbers_of_shots_is_named_with_its_shots(tmp_path):
    out = tmp_path / "out"
    write_lighteval_run(out, "m", {"t|0": _recs(2, [1, 0]), "t|5": _recs(2, [0, 0])})
    with pytest.raises(SourceError, match=r"task t was run with 0, 5 shots; name one with --task 't\|<shots>'"):
        ingest([out], task="t", progress=False)
    assert ingest([out], task="t|5", progress=False).scores.tolist() == [[0, 0]]


def test_the_metric_is_the_one_number_or_named(tmp_path):
    out = tmp_path / "out"
    write_lighteval_run(out, "m", {"t|0": [lighteval_record(i, {"acc": 1.0, "f1": 0.25}) for i in range(2)]})
    assert ingest([out], progress=False).scores.tolist() == [[1, 1]]  # acc: first of the defaults
    assert ingest([out], metric="f1", progress=False).scores.tolist() == [[0.25, 0.25]]
    write_lighteval_run(tmp_path / "o2", "m", {"t|0": [lighteval_record(0, {"bleu": 1.0, "rouge": 0.5})]})
    with pytest.raises(SourceError, match="cannot tell which metric to use; choose one with --metric"):
        ingest([tmp_path / "o2"], progress=False)


@pytest.mark.parametrize("bad, message", [
    ("corrupt", "not a readable lighteval details file"),
    ("no id", "row 2: record without doc.id"),
    ("bad id", "row 1: doc.id 'x' is not a document index"),
    ("not a number", "row 1: acc value 'high' is not a number"),
    ("missing metric", "row 2: no metric 'acc' in the record"),
    ("conflict", "row 2: conflicting duplicate record for doc.id 0"),
])
def test_bad_files_are_one_error_naming_the_file_and_row(tmp_path, bad, message):
    out = tmp_path / "out"
    recs = _recs(3, [1, 0, 1])
    if bad == "no id":
        recs[1]["doc"]["id"] = None
    elif bad == "bad id":
        recs[0]["doc"]["id"] = "x"
    elif bad == "not a number":
        recs = [lighteval_record(i, {"acc": "high"}) for i in range(2)]
    elif bad == "missing metric":
        recs[1]["metric"] = {"em": 1.0}
    elif bad == "conflict":
        recs[1] = lighteval_record(0, {"acc": 0.0})
    d = write_lighteval_run(out, "m", {"t|0": recs})
    if bad == "corrupt":
        f = next(d.glob("*.parquet"))
        f.write_bytes(f.read_bytes()[:40])
        # a cut file is not recognised as lighteval's: asking for the format names it
        with pytest.raises(SourceError, match=message):
            from tinybench_builder.read.sources.lighteval import read_details

            read_details(f)
        return
    with pytest.raises(SourceError, match=message) as err:
        ingest([out], metric="acc", progress=False)
    assert "details_t|0_" in str(err.value)


def test_v1_leaderboard_details_are_still_the_leaderboards(tmp_path):
    """The Open LLM Leaderboard v1 details have lighteval-like names but flat columns: still their reader."""
    write_v1_details(tmp_path / "details_org__m", "harness|arc:challenge|25", "2023-10-01T10-00-00.000000",
                     [1.0, 0.0, 1.0])
    assert detect_source(tmp_path) == "open_llm_leaderboard"


# ----------------------------------------------------------------- estimate on a tiny dataset
@pytest.fixture(scope="module")
def mmlu(tmp_path_factory):
    return built(tmp_path_factory.getbasetemp() / "builds", "tinyMMLU")


def _our_records(folder, values, order, design=None, version=None):
    """Details of our lighteval task: each document carries its anchor id, the version and the design."""
    man = read_manifest(folder)
    est = TinyEstimator.load(folder)
    anchors = config_anchor_ids(est, man["configs"]["all"]["scenario"])
    spec = {"dataset_version": version or man["version"], "design": design or man["design"]["configs"]["all"]}
    rows = read_split(folder, "all", "test")
    return [lighteval_record(r, {"score": {"item": anchors[r], "value": float(values[r])},
                                 "anchor_mean": float(values[r])},
                             query=rows["input_formatted"][r], specific={"item_id": anchors[r], "row": r, **spec})
            for r in order], anchors


def test_estimate_reads_details_in_any_order_and_any_subset(mmlu, tmp_path):
    task = read_manifest(mmlu)["configs"]["all"]["harness_task"]
    est = TinyEstimator.load(mmlu)
    rng = np.random.default_rng(1)
    values = (rng.random(len(est.anchor_ids)) < 0.5).astype(float)
    order = rng.permutation(len(values))[:6].tolist()
    recs, anchors = _our_records(mmlu, values, order)
    write_lighteval_run(tmp_path / "out", "org/model", {f"{task}|0": recs})
    frame, notes = estimate_from_logs(mmlu, tmp_path / "out")
    want = est.estimate({anchors[r]: values[r] for r in order})
    assert frame["model"].tolist() == ["org/model"] and frame["n_answered"][0] == 6
    assert (frame["score"][0], frame["ci_low"][0], frame["ci_high"][0]) == (want["score"], want["ci_low"],
                                                                          want["ci_high"])
    assert any(f"6 of {len(values)} rows answered" in n for n in notes)
    # documents without our anchor ids are matched by their prompt (a row's input_formatted)
    for rec in recs:
        rec["doc"]["specific"] = None
    write_lighteval_run(tmp_path / "plain", "org/model", {f"{task}|0": recs})
    assert estimate_from_logs(mmlu, tmp_path / "plain")[0]["score"][0] == want["score"]
    recs[0]["doc"]["query"] = "a prompt of another benchmark"
    write_lighteval_run(tmp_path / "other", "org/model", {f"{task}|0": recs})
    with pytest.raises(SourceError, match="is not a row of this tiny dataset"):
        estimate_from_logs(mmlu, tmp_path / "other")


def test_estimate_refuses_details_of_another_design_or_items(mmlu, tmp_path):
    task = read_manifest(mmlu)["configs"]["all"]["harness_task"]
    values = np.ones(len(TinyEstimator.load(mmlu).anchor_ids))
    recs, _ = _our_records(mmlu, values, [0, 1], design="f" * 64, version="0.9.0")
    write_lighteval_run(tmp_path / "out", "m", {f"{task}|0": recs})
    with pytest.raises(SourceError, match=r"results of tinyMMLU 0\.9\.0 \(design ffffffffffff\), not of tinyMMLU"):
        estimate_from_logs(mmlu, tmp_path / "out")
    recs, _ = _our_records(mmlu, values, [0, 1])
    recs[1]["doc"]["specific"]["item_id"] = "not-an-anchor"
    write_lighteval_run(tmp_path / "items", "m", {f"{task}|0": recs})
    with pytest.raises(SourceError, match="item 'not-an-anchor' is not an anchor of config 'all'"):
        estimate_from_logs(mmlu, tmp_path / "items")
