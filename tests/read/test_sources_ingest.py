"""tinybench_builder.read.ingest: format detection, merging sources, the CLI handler, parallel reading."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pandas as pd
import pytest

from tinybench_builder.cli.ingest import add_ingest_arguments, run_ingest
from tinybench_builder.read.ingest import detect_source, ingest
from tinybench_builder.read.matrix import ResponseMatrix
from tinybench_builder.read.sources import SourceError
from helpers.sources import (alpaca_annotations, helm_stat, lm_record, lm_results, write_alpaca, write_helm_run,
                              write_legacy_pickle, write_lm_eval_legacy, write_lm_eval_run, write_v1_details)

TS = "2024-07-08T08-27-46.579882"


def _lm_models(root, n=3, task="wmdp_bio", docs=5):
    for k in range(n):
        recs = [lm_record(i, float((i + k) % 2)) for i in range(docs)]
        write_lm_eval_run(root, f"org/m{k}", {task: recs}, TS)
    return root


def _parse(argv):
    parser = argparse.ArgumentParser()
    add_ingest_arguments(parser)
    return parser.parse_args(argv)


def test_detect_source(tmp_path):
    lm = _lm_models(tmp_path / "lm", n=1)
    assert detect_source(lm) == "lm_eval"
    assert detect_source(next((lm / "org__m0").glob("samples_*"))) == "lm_eval"
    legacy = write_lm_eval_legacy(tmp_path / "legacy", "pretrained=a/b", {"t": [lm_record(0, 1.0, version="0.4.0")]})
    assert detect_source(legacy) == "lm_eval"
    v2 = write_lm_eval_run(tmp_path / "v2", "a/b", {"leaderboard_ifeval": [lm_record(0, 1.0, "prompt_level_strict_acc")]})
    assert detect_source(v2) == "open_llm_leaderboard_v2"
    write_v1_details(tmp_path / "v1" / "details_a__b", "harness|gsm8k|5", "2023-09-18T03-05-58.053951", [1.0])
    assert detect_source(tmp_path / "v1") == "open_llm_leaderboard"
    ae = write_alpaca(tmp_path / "ae", "m", alpaca_annotations("m", ["x"], [2.0]))
    assert detect_source(tmp_path / "ae") == "alpaca_eval" and detect_source(ae) == "alpaca_eval"
    write_helm_run(tmp_path / "helm" / "v1", "gsm:model=m", "m", ["gsm"], {}, [])
    assert detect_source(tmp_path / "helm") == "helm"
    pkl = write_legacy_pickle(tmp_path / "x.pkl", ["a"], {"t": np.ones((2, 1))})
    assert detect_source(pkl) == "legacy_pickle"
    table = tmp_path / "t.parquet"
    ResponseMatrix(np.ones((1, 2)), ["a"], ["0", "1"]).write(table)
    assert detect_source(table) == "table"
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceError, match="no known evaluation outputs"):
        detect_source(tmp_path / "empty")
    with pytest.raises(SourceError, match="no such file"):
        detect_source(tmp_path / "missing")


def test_merge_model_folders_and_root(tmp_path):
    root = _lm_models(tmp_path / "out", n=3)
    m_root = ingest([root])
    m_dirs = ingest(sorted(root.iterdir()))
    assert m_root.models == m_dirs.models == ["org/m0", "org/m1", "org/m2"]
    np.testing.assert_array_equal(m_root.scores, m_dirs.scores)
    # the same folder twice: identical duplicates are fine
    assert ingest([root, root / "org__m1"]).shape == (3, 5)


def test_conflicting_duplicates_across_sources(tmp_path):
    a = write_lm_eval_run(tmp_path / "a", "org/m", {"t": [lm_record(i, 1.0) for i in range(3)]}, TS)
    b = write_lm_eval_run(tmp_path / "b", "org/m", {"t": [lm_record(i, float(i != 2)) for i in range(3)]}, TS)
    with pytest.raises(SourceError, match=r"conflicting scores for model 'org/m', item '2': 1\.0 vs 0\.0"):
        ingest([a, b])


def test_models_missing_items_stay_nan_and_are_reported(tmp_path):
    write_lm_eval_run(tmp_path, "org/full", {"t": [lm_record(i, 1.0) for i in range(4)]}, TS)
    write_lm_eval_run(tmp_path, "org/half", {"t": [lm_record(i, 0.0) for i in range(2)]}, TS,
                      results=lm_results("org/half", {"t": 2}))
    m = ingest([tmp_path])
    assert np.isnan(m.scores[1, 2:]).all()
    assert m.summary()["partial_models"] == ["org/half"]


def test_mixed_formats_and_tables(tmp_path):
    lm = _lm_models(tmp_path / "lm", n=2, docs=3)
    # long table for a third model on the same items
    long = tmp_path / "long.csv"
    pd.DataFrame({"model": ["org/x"] * 3, "item": ["0", "1", "2"], "score": [1, 0, 1]}).to_csv(long, index=False)
    m = ingest([lm, long])
    assert m.models == ["org/m0", "org/m1", "org/x"] and m.items == ["0", "1", "2"]
    np.testing.assert_array_equal(m.scores[2], [1, 0, 1])
    # two scenarios -> <scenario>.<index>
    ae = tmp_path / "ae"
    write_alpaca(ae, "org/m0", alpaca_annotations("org/m0", ["q1", "q2"], [2.0, 1.0]))
    m = ingest([lm, ae])
    assert m.items == ["alpaca_eval.q1", "alpaca_eval.q2", "wmdp_bio.0", "wmdp_bio.1", "wmdp_bio.2"]
    assert set(m.item_info["scenario"]) == {"alpaca_eval", "wmdp_bio"}


def test_pickle_in_ingest_needs_task(tmp_path):
    p = write_legacy_pickle(tmp_path / "x.pkl", ["a", "b"], {"bio": np.ones((2, 2)), "cyber": np.zeros((3, 2))})
    with pytest.raises(SourceError, match="--task: bio, cyber"):
        ingest([p])
    m = ingest([p], task="cyber")
    assert m.shape == (2, 3) and m.items == ["0", "1", "2"]


def test_content_join_by_item_id(tmp_path):
    lm = _lm_models(tmp_path / "lm", n=1, docs=2)
    c = tmp_path / "c.parquet"
    pd.DataFrame({"item_id": ["0", "1"], "answer": [3, 1], "question": ["ignored", "ignored"]}).to_parquet(c)
    m = ingest([lm], content=c)
    assert m.item_info["answer"].tolist() == [3, 1]
    assert m.item_info.loc["0", "question"] == "Question 0?"  # the reader's own content wins


def test_parallel_process_pool_equals_serial(tmp_path):
    root = _lm_models(tmp_path / "lm", n=5, docs=4)
    serial = ingest([root], workers=1)
    par = ingest([root], workers=2, executor="process")
    thr = ingest([root], workers=2, executor="thread")
    assert serial.models == par.models == thr.models
    np.testing.assert_array_equal(serial.scores, par.scores)
    np.testing.assert_array_equal(serial.scores, thr.scores)


def test_parallel_error_propagates(tmp_path):
    root = _lm_models(tmp_path / "lm", n=5, docs=4)
    f = next((root / "org__m3").glob("samples_*"))
    f.write_text(f.read_text()[:-10])
    with pytest.raises(SourceError, match="org__m3.*line 4"):
        ingest([root], workers=2, executor="process")


def test_run_ingest_writes_table_and_summary(tmp_path, capsys):
    root = tmp_path / "lm"
    for k in range(2):
        write_lm_eval_run(root, f"org/m{k}", {"t": [lm_record(i, 1.0) for i in range(4 - 2 * k)]}, TS,
                          results=lm_results(f"org/m{k}", {"t": 4}, limit=None if k == 0 else 2))
    out = tmp_path / "res" / "scores.parquet"
    items = tmp_path / "res" / "items.parquet"
    rc = run_ingest(_parse([str(root), "--out", str(out), "--items-out", str(items)]))
    assert rc == 0
    text = capsys.readouterr().out
    assert "2 models x 4 items" in text and "missing: 25.00%" in text
    assert "partial coverage: 1: org/m1 (2/4)" in text and "partial run: 2 of 4 documents, limit=2" in text
    back = ResponseMatrix.read(out)
    assert back.models == ["org/m0", "org/m1"] and back.items == ["0", "1", "2", "3"]
    info = pd.read_parquet(items)
    assert info.loc["1", "question"] == "Question 1?"
    assert not list(out.parent.glob(".*tmp"))


def test_run_ingest_bad_input_returns_2_and_writes_nothing(tmp_path, capsys):
    root = _lm_models(tmp_path / "lm", n=1, docs=3)
    f = next((root / "org__m0").glob("samples_*"))
    f.write_text(f.read_text()[:-15])
    out = tmp_path / "scores.parquet"
    rc = run_ingest(_parse([str(root), "--out", str(out)]))
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: ") and str(f) in err and "line 3" in err
    assert not out.exists() and not list(tmp_path.glob(".*tmp"))
    # an existing output is left untouched
    out.write_bytes(b"old")
    assert run_ingest(_parse([str(root), "--out", str(out)])) == 2
    assert out.read_bytes() == b"old"
    # corrupt parquet table / unknown task / missing path
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1garbage")
    assert run_ingest(_parse([str(bad), "--out", str(out)])) == 2
    assert "bad.parquet" in capsys.readouterr().err
    good = _lm_models(tmp_path / "good", n=1, docs=2)
    assert run_ingest(_parse([str(good), "--out", str(out), "--task", "nope"])) == 2
    assert "no scores for task 'nope' in the sources; tasks found: wmdp_bio" in capsys.readouterr().err
    assert run_ingest(_parse([str(tmp_path / "missing"), "--out", str(out)])) == 2
    assert "no such file" in capsys.readouterr().err


def test_run_ingest_helm_and_format_override(tmp_path, capsys):
    suite = tmp_path / "runs" / "v1"
    write_helm_run(suite, "gsm:model=m", "org/m", ["gsm"], {},
                   [{"instance_id": f"id{k}", "train_trial_index": 0, "stats": [helm_stat("final_number_exact_match", 1.0)]}
                    for k in range(2)])
    out = tmp_path / "o.parquet"
    assert run_ingest(_parse([str(tmp_path / "runs"), "--out", str(out), "--format", "helm"])) == 0
    assert ResponseMatrix.read(out).items == ["id0", "id1"]
    assert "1 models x 2 items" in capsys.readouterr().out


def test_ingest_string_source_and_json_summary_fields(tmp_path):
    root = _lm_models(tmp_path / "lm", n=1, docs=2)
    m = ingest(str(root))
    assert m.summary()["models"] == 1
    json.dumps(m.notes)
