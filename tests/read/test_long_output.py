"""The long table as an output (issue 29, item 6): a matrix too wide for a wide parquet table
(1,000,000 items of 3 models is a 24 MB matrix, but parquet keeps metadata per column) is
written one row per (model, item) with ``--layout long``, and the refusal of the wide parquet
gives that way, with the command."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tinybench_builder.cli.main import main
from tinybench_builder.read.matrix import MAX_PARQUET_COLUMNS, MatrixFormatError, ResponseMatrix


def _matrix():
    Y = np.array([[1.0, 0.0, np.nan, 0.25], [np.nan, 1.0, 0.5, 0.0], [0.0, 0.0, 1.0, 1.0]])
    return ResponseMatrix(Y, ["org/a", "org/b,c", "org/d "], ["s.0", "s.1", "s,2", "t.10"])


@pytest.mark.parametrize("ext", ["parquet", "csv"])
def test_a_matrix_written_long_reads_back_the_same(tmp_path, ext):
    m = _matrix()
    path = m.write(tmp_path / f"long.{ext}", layout="long")
    back = ResponseMatrix.read(path)
    assert back.models == m.models and back.items == m.items
    np.testing.assert_array_equal(back.scores, m.scores)  # NaN: no row, read back as not evaluated
    frame = pd.read_parquet(path) if ext == "parquet" else pd.read_csv(path, dtype={"model": str, "item": str})
    # one row per evaluated pair, and the first model's unevaluated items as empty rows (the items' order)
    assert list(frame.columns) == ["model", "item", "score"] and len(frame) == int(m.observed.sum()) + 1
    assert frame["score"].isna().sum() == 1 and frame.loc[frame["score"].isna(), "model"].tolist() == ["org/a"]
    assert [p.name for p in tmp_path.iterdir()] == [f"long.{ext}"]


def test_an_unknown_layout_is_refused(tmp_path):
    with pytest.raises(ValueError, match="layout must be 'wide' or 'long'"):
        _matrix().write(tmp_path / "x.parquet", layout="tall")


@pytest.mark.slow  # tens of seconds (pytest --durations)
def test_the_wide_parquet_refusal_gives_the_long_table_and_its_command(tmp_path, capsys):
    n_items = MAX_PARQUET_COLUMNS + 1
    table = tmp_path / "long.csv"
    table.write_text("model,item,score\n" + "".join(f"a,{j},{j % 2}\n" for j in range(n_items)))
    out = tmp_path / "w.parquet"
    rc = main(["ingest", str(table), "--out", str(out), "--progress", "none", "--jobs", "1"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and err.startswith("error: "), err
    assert "too many columns for a wide parquet table" in err and "write CSV instead" in err, err
    command = f"python -m tinybench_builder ingest {table} --out {out} --jobs 1 --layout long"  # the options given
    assert command in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.csv"]
    assert main(command.split()[3:] + ["--progress", "none"]) == 0  # the command it gives works
    back = ResponseMatrix.read(out)
    assert back.shape == (1, n_items) and back.items[:3] == ["0", "1", "2"]
    assert back.scores[0, :4].tolist() == [0.0, 1.0, 0.0, 1.0]


def test_ingest_writes_the_long_layout_on_request(tmp_path):
    m = _matrix()
    m.write(tmp_path / "wide.csv")
    assert main(["ingest", str(tmp_path / "wide.csv"), "--out", str(tmp_path / "o.parquet"), "--layout", "long",
                 "--progress", "none"]) == 0
    back = ResponseMatrix.read(tmp_path / "o.parquet")
    assert back.models == m.models and back.items == m.items
    np.testing.assert_array_equal(back.scores, m.scores)
    with pytest.raises(MatrixFormatError, match="layout"):
        _matrix().write(tmp_path / "x.csv", layout="")
