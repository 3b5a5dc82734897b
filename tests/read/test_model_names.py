"""Model names that differ only by surrounding whitespace (issue 29, item 4).

The rule, for every reader, ``ingest``'s merge and the API: names are kept exactly as written,
and two that are the same once surrounding whitespace is stripped (``org/m00`` and ``org/m00 ``)
are refused with one line naming both (and where each was read): a typo must not split one
model into two rows without a word.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tinybench_builder.cli.main import main
from tinybench_builder.read import ingest
from tinybench_builder.read.matrix import MatrixFormatError, ResponseMatrix
from helpers.sources import lm_record, write_lm_eval_run

TWIN = "differ only by surrounding whitespace"


def _error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "Traceback" not in err[0], err
    return err[0]


@pytest.mark.parametrize("names", [["org/m00", "org/m00 "], [" org/m00", "org/m00"], ["org/m00\t", "org/m00\u00a0"]])
def test_the_api_refuses_names_that_differ_only_by_surrounding_whitespace(names):
    with pytest.raises(MatrixFormatError, match=TWIN) as info:
        ResponseMatrix(np.zeros((2, 1)), names, ["0"])
    assert repr(names[0]) in str(info.value) and repr(names[1]) in str(info.value)


def test_a_name_with_surrounding_whitespace_alone_is_kept_as_written(tmp_path):
    m = ResponseMatrix(np.array([[1.0], [0.0]]), ["org/m00 ", "org/m01"], ["0"])
    assert m.models == ["org/m00 ", "org/m01"]
    m.write(tmp_path / "t.parquet")
    assert ResponseMatrix.read(tmp_path / "t.parquet").models == ["org/m00 ", "org/m01"]


@pytest.mark.parametrize("layout", ["wide.csv", "long.csv", "wide.parquet", "long.parquet"])
def test_every_table_reader_refuses_them_naming_the_file(tmp_path, layout, capsys):
    kind, ext = layout.split(".")
    path = tmp_path / f"scores.{ext}"
    if kind == "wide":
        frame = pd.DataFrame({"model": ["org/m00", "org/m00 "], "0": [1.0, 0.0], "1": [0.0, 1.0]})
    else:
        frame = pd.DataFrame({"model": ["org/m00", "org/m00 "], "item": ["0", "1"], "score": [1.0, 0.0]})
    frame.to_csv(path, index=False) if ext == "csv" else frame.to_parquet(path, index=False)
    with pytest.raises(MatrixFormatError, match=TWIN) as info:
        ResponseMatrix.read(path)
    assert str(path) in str(info.value)
    assert main(["ingest", str(path), "--out", str(tmp_path / "o.parquet"), "--progress", "none"]) == 2
    line = _error_line(capsys)
    assert TWIN in line and str(path) in line and "'org/m00 '" in line, line
    assert not (tmp_path / "o.parquet").exists()


def test_ingest_refuses_them_across_sources_naming_both(tmp_path, capsys):
    """Two tables (or folders) whose model differs by a trailing space were merged into two models."""
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    pd.DataFrame({"model": ["org/m00", "org/m01"], "0": [1.0, 0.0]}).to_csv(a, index=False)
    pd.DataFrame({"model": ["org/m00 "], "1": [1.0]}).to_csv(b, index=False)
    with pytest.raises(MatrixFormatError, match=TWIN) as info:
        ingest([a, b])
    assert f"'org/m00' ({a})" in str(info.value) and f"'org/m00 ' ({b})" in str(info.value), str(info.value)
    assert main(["ingest", str(a), str(b), "--out", str(tmp_path / "o.parquet"), "--progress", "none"]) == 2
    assert TWIN in _error_line(capsys)


def test_ingest_refuses_them_from_evaluation_outputs(tmp_path):
    """lm-eval runs whose results name the model with a trailing space (model_args of a script)."""
    root = tmp_path / "logs"
    write_lm_eval_run(root, "org/m00", {"wmdp_bio": [lm_record(i, 1.0) for i in range(3)]})
    d = write_lm_eval_run(root, "org/m00-copy", {"wmdp_bio": [lm_record(i, 0.0) for i in range(3)]})
    res = next(d.glob("results_*.json"))
    res.write_text(res.read_text().replace('"model_name": "org/m00-copy"', '"model_name": "org/m00 "')
                   .replace("pretrained=org/m00-copy", "pretrained_path=x"))
    with pytest.raises(MatrixFormatError, match=TWIN):
        ingest([root])
