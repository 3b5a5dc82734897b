"""Long score tables (model, item, score) read in chunks (issue 21): the same matrix as reading the
whole table with pandas, the same checks with the line of the first offence, and memory a small
multiple of the matrix (the peak is measured in a child process; the benchmark script
``python -m benchmarks.ingest_memory`` gives the numbers of docs/INGEST.md)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tinybench_builder.errors import MatrixFormatError
from tinybench_builder.read import long_table
from tinybench_builder.read.matrix import ResponseMatrix
from helpers.builds import ROOT


def _long_frame(n_models=30, n_items=40, seed=0, missing=0.2, soft=False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [(f"org/m{i}", f"sub{j % 3}.{j}", (rng.random() if soft else float(rng.random() < 0.5)))
            for i in range(n_models) for j in range(n_items) if rng.random() >= missing]
    df = pd.DataFrame(rows, columns=["model", "item", "score"])
    return df.iloc[rng.permutation(len(df))].reset_index(drop=True)


def _whole(df: pd.DataFrame) -> ResponseMatrix:
    """What reading the table whole gives (the reference)."""
    return ResponseMatrix.from_frame(df, "table")


def _same(a: ResponseMatrix, b: ResponseMatrix) -> None:
    assert a.models == b.models and a.items == b.items
    np.testing.assert_array_equal(a.scores, b.scores)


@pytest.fixture(params=[False, True], ids=["whole", "tiny-chunks"])
def chunks(request, monkeypatch):
    if request.param:  # many chunks: every rule must hold across chunk boundaries
        monkeypatch.setattr(long_table, "CHUNK_BYTES", 2048)
        monkeypatch.setattr(long_table, "PARQUET_BATCH_ROWS", 97)
    return request.param


@pytest.mark.parametrize("soft", [False, True])
@pytest.mark.parametrize("fmt", ["csv", "parquet", "tsv"])
def test_chunked_reading_gives_the_same_matrix(tmp_path, chunks, fmt, soft):
    df = _long_frame(soft=soft)
    path = tmp_path / f"long.{fmt}"
    if fmt == "parquet":
        df.to_parquet(path)
    else:
        df.to_csv(path, index=False, sep="\t" if fmt == "tsv" else ",")
    _same(ResponseMatrix.read(path), _whole(df))
    wanted = ["sub1.4", "sub0.9", "nope"]
    got = ResponseMatrix.read(path, columns=wanted)
    _same(got, _whole(df[df["item"].isin(wanted)]))


def test_parquet_names_of_other_types_and_a_fourth_column(tmp_path, chunks):
    df = _long_frame(missing=0.0)
    df["item"] = df["item"].str.split(".").str[1].astype(int)  # integer item ids: their text
    df["model"] = df["model"].astype("category")
    df["note"] = "x"
    path = tmp_path / "long.parquet"
    df.to_parquet(path)
    got = ResponseMatrix.read(path)
    _same(got, _whole(df.drop(columns="note")))
    assert got.items[0] == str(df["item"][0])
    csv = tmp_path / "long.csv"
    df.to_csv(csv, index=False)
    _same(ResponseMatrix.read(csv), got)


def test_na_stays_a_name_and_booleans_are_scores(tmp_path, chunks):
    path = tmp_path / "long.csv"
    path.write_text("model,item,score\nNA,1,true\nNA,2,false\nm,1,\nm,2,0.5\n")
    got = ResponseMatrix.read(path)
    assert got.models == ["NA", "m"] and got.items == ["1", "2"]
    np.testing.assert_array_equal(got.scores, [[1.0, 0.0], [np.nan, 0.5]])


def _csv(tmp_path, lines: list[str], n_before: int = 300) -> Path:
    """A long CSV whose rows ``lines`` come after ``n_before`` good rows (so across chunks)."""
    body = [f"org/m{i // 50},{i % 50},1" for i in range(n_before)] + lines
    path = tmp_path / "long.csv"
    path.write_text("model,item,score\n" + "\n".join(body) + "\n")
    return path


@pytest.mark.parametrize("lines,message", [
    (["org/m0,7,0"], r"line 302: the pair \('org/m0', '7'\) is given twice"),
    (["org/x,1,0", "org/x,1,1"], r"line 303: the pair \('org/x', '1'\) is given twice"),
    ([",1,0"], r"line 302: empty model name"),
    (["org/x, ,0"], r"line 302: empty item name"),
    (["org/x,1,zero"], r"line 302, column 'score': 'zero' is not a number"),
    (["org/x,1,0,9"], r"line 302 has 4 fields but the header names 3 columns"),
])
def test_bad_rows_are_named_by_their_line(tmp_path, chunks, lines, message):
    with pytest.raises(ValueError, match=message):
        ResponseMatrix.read(_csv(tmp_path, lines))


def test_bad_parquet_rows_are_named_by_their_row(tmp_path, chunks):
    df = pd.DataFrame({"model": ["a"] * 200 + ["a"], "item": [str(i) for i in range(200)] + ["5"],
                       "score": [1.0] * 201})
    df.to_parquet(tmp_path / "d.parquet")
    with pytest.raises(MatrixFormatError, match=r"row 201: the pair \('a', '5'\) is given twice"):
        ResponseMatrix.read(tmp_path / "d.parquet")
    df = pd.DataFrame({"model": ["a", None], "item": ["1", "2"], "score": [1.0, 0.0]})
    df.to_parquet(tmp_path / "e.parquet")
    with pytest.raises(MatrixFormatError, match=r"row 2: empty model name"):
        ResponseMatrix.read(tmp_path / "e.parquet")


def test_a_trailing_comma_on_every_line_is_fine(tmp_path, chunks):
    df = _long_frame(n_models=5, n_items=60)
    path = tmp_path / "t.csv"
    path.write_text("model,item,score\n" + "".join(f"{m},{i},{s},\n" for m, i, s in df.itertuples(index=False)))
    _same(ResponseMatrix.read(path), _whole(df))


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads the peak memory from /proc")
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_memory_is_a_small_multiple_of_the_matrix(tmp_path, fmt):
    """400 models x 2,500 items (1M rows, an 8 MB matrix): reading it whole took ~40x the matrix; in
    chunks (small against this matrix, as the default chunks are against 2,000 x 5,000) 8-9x here, the rest
    being fixed costs of pyarrow (2.2-2.4x at 2,000 and 20,000 models: docs/INGEST.md)."""
    from benchmarks.ingest_memory import write_table

    path = tmp_path / f"long.{fmt}"
    write_table(path, 400, 2500, "long-csv" if fmt == "csv" else "long-parquet")
    code = (f"import re, sys\nfrom tinybench_builder.read.matrix import ResponseMatrix\n"
            "hwm = lambda: int(re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1)) * 1024\n"
            "import pyarrow.csv, pyarrow.parquet, pandas\n"
            "from tinybench_builder.read import long_table\n"
            # chunks small against this small matrix, as 4 MB chunks are against a real one (2,000+ models)
            "long_table.CHUNK_BYTES, long_table.PARQUET_BATCH_ROWS = 1 << 18, 1 << 14\n"
            "before = hwm()\n"
            f"m = ResponseMatrix.read({str(path)!r})\n"
            "print('ADDED', (hwm() - before) / m.scores.nbytes, m.shape)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0, proc.stderr
    added = float(re.findall(r"ADDED ([\d.]+)", proc.stdout)[0])
    assert "(400, 2500)" in proc.stdout and added < 12, proc.stdout  # whole: 47x (CSV), 37x (parquet)


def test_very_wide_tables_are_read_line_by_line_as_before(tmp_path, monkeypatch):
    """Above WIDE_LINE_COLUMNS columns the CSV is read one line at a time: the same frame."""
    from tinybench_builder.read import csv_table

    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.random((6, 30)).round(3), index=pd.Index([f"m{i}" for i in range(6)], name="model"),
                         columns=[f"s.{j}" for j in range(30)])
    frame.iloc[2, 5] = np.nan
    path = tmp_path / "wide.csv"
    frame.to_csv(path)
    whole = ResponseMatrix.read(path)
    monkeypatch.setattr(csv_table, "WIDE_LINE_COLUMNS", 10)
    _same(ResponseMatrix.read(path), whole)
    _same(ResponseMatrix.read(path, columns=["s.3", "s.7"]), whole.select_items([3, 7]))
    bad = tmp_path / "bad.csv"
    lines = path.read_text().splitlines()
    first, rest = lines[4].split(",", 2)[0], lines[4].split(",", 2)[2]
    lines[4] = f"{first},x,{rest}"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"line 5, column 's.0': 'x' is not a number"):
        ResponseMatrix.read(bad)
    short = tmp_path / "short.csv"
    short.write_text(path.read_text().rsplit(",", 1)[0] + "\n")
    with pytest.raises(ValueError, match=r"line 7 has 30 fields but the header names 31"):
        ResponseMatrix.read(short)
