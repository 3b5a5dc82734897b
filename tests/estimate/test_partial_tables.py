"""Labelled results of a partial run with extra columns (issue 29, item 5).

One rule for ``tinybench-builder estimate DIR TABLE`` and ``TinyEstimator.estimate``: the anchors
among the labels (the table's columns, a mapping's keys, a Series' index) are read as a partial
run; every other label (items of the benchmark that are not anchors, names that are not items)
is not used and, when anchors are missing, named in a warning; labels without a single anchor
are refused. Estimates are those of the anchor columns alone, to the bit.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pandas as pd
import pytest

from tinybench_builder.cli.main import main
from tinybench_builder.estimate import estimate_table
from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.read.simulate import simulate_responses

K = 8


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    d = tmp_path_factory.mktemp("partial")
    m, _ = simulate_responses(n_models=34, n_items=50, n_dims=1, seed=7)
    m.select_models(np.arange(30)).write(d / "train.csv")
    assert main(["fit", str(d / "train.csv"), "--anchors", str(K), "--dims", "1", "--quiet", "--out", str(d / "tiny")]) == 0
    est = TinyEstimator.load(d / "tiny")
    new = m.select_models(np.arange(30, 34))
    frame = pd.DataFrame(new.scores, columns=new.items, index=pd.Index(new.models, name="model"))
    return d, est, frame


def _columns(est, frame, n_anchors, n_others, unknown=()):
    anchors = est.anchor_ids[:n_anchors]
    others = [i for i in frame.columns if i not in est.anchor_ids][:n_others]
    out = frame[others[: n_others // 2] + anchors + others[n_others // 2:]].copy()  # mixed order
    for name in unknown:
        out[name] = 0.5
    return out, anchors, others


def _write(frame, path):
    frame.to_parquet(path) if path.suffix == ".parquet" else frame.to_csv(path)
    return path


@pytest.mark.parametrize("ext", [".parquet", ".csv"])
@pytest.mark.parametrize("unknown", [(), ("notes", "run_date")], ids=["items", "items+unknown"])
def test_the_cli_reads_the_anchors_there_and_names_the_columns_not_used(fitted, tmp_path, ext, unknown, package_log):
    d, est, frame = fitted
    table, anchors, others = _columns(est, frame, 4, 6, unknown)
    mixed = _write(table, tmp_path / f"mixed{ext}")
    only = _write(frame[anchors], tmp_path / f"only{ext}")
    got = estimate_table(d / "tiny", mixed)
    want = estimate_table(d / "tiny", only)
    pd.testing.assert_frame_equal(got, want, check_exact=True)  # the anchors alone, to the bit
    said = [r.getMessage() for r in package_log.records if r.levelno == logging.WARNING]
    assert len(said) == 1, said
    assert str(mixed) in said[0] and f"{len(others) + len(unknown)} column(s) not used" in said[0], said[0]
    assert repr(others[0]) in said[0] and f"4 of the {K} anchors" in said[0], said[0]
    if unknown:
        assert "'notes'" in said[0] and "not items of" in said[0], said[0]


def test_the_cli_command_prints_the_estimates_and_one_warning(fitted, tmp_path, capsys):
    d, est, frame = fitted
    table, _, others = _columns(est, frame, 3, 2)
    path = _write(table, tmp_path / "mixed.parquet")
    assert main(["estimate", str(d / "tiny"), str(path)]) == 0
    out, err = capsys.readouterr()
    assert all(m in out for m in frame.index)
    assert err.count("\n") == 1 and "2 column(s) not used" in err, err


def test_the_api_reads_them_the_same_way(fitted, tmp_path):
    d, est, frame = fitted
    table, anchors, others = _columns(est, frame, 4, 6, ("notes",))
    want = est.estimate(frame[anchors])
    with pytest.warns(UserWarning, match=rf"7 label\(s\) are not used .*4 of the {K} anchors") as caught:
        got = est.estimate(table)
    assert got == want and len(caught) == 1
    assert caught[0].filename == __file__  # the warning names the line that called estimate
    row = table.iloc[0]
    with pytest.warns(UserWarning, match="not used") as caught:
        assert est.estimate(row) == est.estimate(frame[anchors].iloc[0])
    with pytest.warns(UserWarning, match="not used") as also:
        assert est.estimate(dict(row)) == est.estimate(dict(frame[anchors].iloc[0]))
    assert [w.filename for w in [*caught, *also]] == [__file__, __file__]
    # the CLI on the same table gives the same numbers
    cli = estimate_table(d / "tiny", _write(table, tmp_path / "t.parquet"))
    assert list(cli["score"]) == pytest.approx([r["score"] for r in got], abs=1e-12)


def test_full_rows_and_anchor_subsets_say_nothing_and_do_not_change(fitted, tmp_path, package_log):
    d, est, frame = fitted
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: a full row and a subset of the anchors are as before
        full = est.estimate(frame)
        assert full == est.estimate(frame[est.anchor_ids])
        part = est.estimate(frame[est.anchor_ids[:3]])
    assert part == est.estimate(np.where(np.isin(est.anchor_ids, est.anchor_ids[:3]), frame[est.anchor_ids].to_numpy(),
                                         np.nan))
    estimate_table(d / "tiny", _write(frame, tmp_path / "full.parquet"))
    estimate_table(d / "tiny", _write(frame[est.anchor_ids[:3]], tmp_path / "part.parquet"))
    assert [r for r in package_log.records if r.levelno >= logging.WARNING] == []


@pytest.mark.parametrize("what", ["others", "unknown"])
def test_labels_without_a_single_anchor_are_refused_by_both(fitted, tmp_path, what):
    d, est, frame = fitted
    if what == "others":
        table = frame[[i for i in frame.columns if i not in est.anchor_ids][:5]]
        message = rf"is not one of the {K} anchors"
    else:
        table = pd.DataFrame({"other.1": [1.0, 0.0], "other.2": [0.0, 1.0]}, index=pd.Index(["a", "b"], name="model"))
        message = "unknown item id 'other.1'"
    with pytest.raises(ValueError, match=message):
        est.estimate(table)
    path = _write(table, tmp_path / "none.parquet")
    with pytest.raises(ValueError, match=rf"{path}: none of the {K} anchor items is a column"):
        estimate_table(d / "tiny", path)


def test_a_long_table_follows_the_same_rule(fitted, tmp_path, package_log):
    d, est, frame = fitted
    table, anchors, others = _columns(est, frame, 4, 2)
    long = table.reset_index().melt(id_vars="model", var_name="item", value_name="score")
    long.to_csv(tmp_path / "long.csv", index=False)
    got = estimate_table(d / "tiny", tmp_path / "long.csv")
    pd.testing.assert_frame_equal(got, estimate_table(d / "tiny", _write(frame[anchors], tmp_path / "a.csv")),
                                  check_exact=True)
    assert any("2 item(s) not used" in r.getMessage() for r in package_log.records), [r.getMessage() for r in package_log.records]
