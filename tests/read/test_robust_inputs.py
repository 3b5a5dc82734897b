"""Nothing silently wrong, no traceback, bounded memory: hostile and malformed inputs are read
right or refused with one `error:` line that names the file, line or option.

Kinds (each with several cases of our own): malformed CSV layouts, empty names, out-of-range
options, complex and text scores, deeply nested JSON (also on pool and Dask workers), document
ids that are not row positions, pickles with wrong-typed fields or shared references, tampered
estimator side files given to the CLI, a closed stdout, an offline Hub, repository ids the Hub
rejects and a card that would paste them into code.
"""

from __future__ import annotations

import ast
import json
import os
import pickle
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tinybench_builder.cli.main import main
from tinybench_builder.dataset.options import BuildOptions, check_repo_id
from tinybench_builder.errors import BuildError
from tinybench_builder.model.options import FitOptions
from tinybench_builder.read.matrix import MatrixFormatError, ResponseMatrix
from tinybench_builder.read.simulate import simulate_responses
from tinybench_builder.read.sources import SourceError, legacy_pickle
from helpers.builds import ROOT
from helpers.sources import lm_record, write_lm_eval_run


def _one_error_line(capsys, pattern: str) -> str:
    err = capsys.readouterr().err.strip()
    lines = err.splitlines()
    # ours: "error: ..."; argparse's: "<prog>: error: argument --x: ..." after the usage
    assert lines and re.match(r"(python -m tinybench_builder( \w+)?: )?error: ", lines[-1]) and "Traceback" not in err, err
    assert re.search(pattern, lines[-1]), lines[-1]
    return lines[-1]


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """A clean wide CSV, its matrix, and a fit on it."""
    d = tmp_path_factory.mktemp("clean")
    m, _ = simulate_responses(n_models=30, n_items=50, n_dims=1, seed=4)
    m.write(d / "clean.csv")
    assert main(["fit", str(d / "clean.csv"), "--anchors", "8", "--dims", "1", "--quiet", "--out", str(d / "tiny")]) == 0
    return d, m


# --------------------------------------------------------------------------- CSV layouts
def _rewrite(src: Path, dst: Path, fn) -> Path:
    lines = src.read_text().splitlines()
    dst.write_text("\n".join(fn(lines)) + "\n")
    return dst


TRAILING = {
    "every data row": lambda ls: [ls[0]] + [line + "," for line in ls[1:]],
    "every line": lambda ls: [line + "," for line in ls],
    "the header only": lambda ls: [ls[0] + ","] + ls[1:],
    "data rows, CRLF": lambda ls: [ls[0] + "\r"] + [line + ",\r" for line in ls[1:]],
}


@pytest.mark.parametrize("case", sorted(TRAILING))
def test_trailing_commas_are_read_as_the_clean_file(clean, case, tmp_path, capsys):
    d, m = clean
    path = _rewrite(d / "clean.csv", tmp_path / "t.csv", TRAILING[case])
    got = ResponseMatrix.read(path)
    assert got.models == m.models and got.items == m.items
    np.testing.assert_array_equal(got.scores, m.scores)
    # and the CLI: fit and estimate give what the clean file gives
    assert main(["estimate", str(d / "tiny"), str(path), "--out", str(tmp_path / "a.csv")]) == 0
    assert main(["estimate", str(d / "tiny"), str(d / "clean.csv"), "--out", str(tmp_path / "b.csv")]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "a.csv"), pd.read_csv(tmp_path / "b.csv"))


def test_trailing_commas_in_long_and_tsv_tables(tmp_path):
    (tmp_path / "long.csv").write_text("model,item,score,\nm1,a,1,\nm1,b,0.25,\nm2,a,0,\n")
    m = ResponseMatrix.read(tmp_path / "long.csv")
    assert m.models == ["m1", "m2"] and m.items == ["a", "b"]
    np.testing.assert_array_equal(m.scores, [[1.0, 0.25], [0.0, np.nan]])
    (tmp_path / "w.tsv").write_text("model\tq1\tq2\nm1\t1\t0\t\nm2\t0\t1\t\n")
    assert ResponseMatrix.read(tmp_path / "w.tsv").scores.tolist() == [[1.0, 0.0], [0.0, 1.0]]


@pytest.mark.parametrize("text, message", [
    ("model,a,b\nm1,1,0\nm2,1\n", r"line 3 has 2 fields but the header names 3 columns \(a truncated line\?\)"),
    ("model,a,b\nm1,1,0,1\nm2,1,0,\n", "the extra last field holds values"),
    ("model,a,b\nm1,1,0\nm2,1,0,1,0\n", "line 3 has 5 fields"),
    ("model,a,a\nm1,1,0\n", r"duplicate column name 'a' \(columns 2 and 3\)"),
    ("model,8,8\nm1,1,0\n", "duplicate column name '8'"),
    ("model,a,,b\nm1,1,1,0\n", "column 3 has values but no name"),
    ("model,a\n,1\nm2,0\n", "line 2: empty model name"),
    ("model,a\n   ,1\n", "empty model name"),
    ("model,item,score\n,a,1\n", "empty model name"),
    ("model,item,score\nm,,1\n", "empty item name"),
    ("model,a,b\nm1,1,abc\n", r"line 2, column 'b': 'abc' is not a number"),
    ("model,a,b\nm1,1,0\nm2,2024-01-01,1\n", r"line 3, column 'a': '2024-01-01' is not a number"),
    ("model,a\nm1,1+2j\n", "is not a number"),
    ("", "empty file"),
])
def test_malformed_csv_is_refused_with_its_line(tmp_path, text, message, capsys):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(MatrixFormatError, match=message):
        ResponseMatrix.read(path)
    assert main(["fit", str(path), "--anchors", "1", "--out", str(tmp_path / "o")]) == 2
    line = _one_error_line(capsys, message)
    assert str(path) in line
    assert not (tmp_path / "o").exists()


def test_names_that_look_like_missing_values_stay_names(tmp_path):
    (tmp_path / "n.csv").write_text("model,1,NA\nNA,1,0\nnull,0,1\nnan,1,1\n")
    m = ResponseMatrix.read(tmp_path / "n.csv")
    assert m.models == ["NA", "null", "nan"] and m.items == ["1", "NA"]


def test_empty_names_in_parquet_and_in_memory(tmp_path):
    frame = pd.DataFrame({"a": [1.0, 0.0]}, index=pd.Index(["m1", None], name="model"))
    frame.to_parquet(tmp_path / "p.parquet")
    with pytest.raises(MatrixFormatError, match="row 2 has an empty model name"):
        ResponseMatrix.read(tmp_path / "p.parquet")
    for models in (["m", ""], ["m", float("nan")], ["m", None], ["m", "  "]):
        with pytest.raises(MatrixFormatError, match="empty model name"):
            ResponseMatrix(np.ones((2, 1)), models, ["a"])
    with pytest.raises(MatrixFormatError, match="complex"):
        ResponseMatrix(np.array([[1 + 1j]]), ["m"], ["a"])


def test_estimate_reads_only_the_anchor_columns_of_a_csv(clean, tmp_path):
    """A column that is not an anchor is not even converted: junk there changes nothing."""
    d, m = clean
    from tinybench_builder.estimator import TinyEstimator

    est = TinyEstimator.load(d / "tiny")
    frame = m.to_frame()
    other = next(c for c in frame.columns if c not in est.anchor_ids)
    frame = frame.astype(object)
    frame[other] = "not a score"
    frame.to_csv(tmp_path / "junk.csv")
    assert main(["estimate", str(d / "tiny"), str(tmp_path / "junk.csv"), "--out", str(tmp_path / "a.csv")]) == 0
    assert main(["estimate", str(d / "tiny"), str(d / "clean.csv"), "--out", str(tmp_path / "b.csv")]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "a.csv"), pd.read_csv(tmp_path / "b.csv"))
    with pytest.raises(MatrixFormatError, match="not a number"):
        ResponseMatrix.read(tmp_path / "junk.csv")  # all columns: refused


# --------------------------------------------------------------------------- options
@pytest.mark.parametrize("args, pattern", [
    (["fit", "x.csv", "--anchors", "5", "--out", "o", "--binarize", "2.5"], r"argument --binarize: .*strictly between 0 and 1"),
    (["fit", "x.csv", "--anchors", "5", "--out", "o", "--binarize", "1"], r"argument --binarize: .*strictly between"),
    (["fit", "x.csv", "--anchors", "5", "--out", "o", "--binarize", "0"], r"argument --binarize: .*strictly between"),
    (["fit", "x.csv", "--anchors", "5", "--out", "o", "--binarize", "-0.5"], r"argument --binarize"),
    (["fit", "x.csv", "--anchors", "5", "--out", "o", "--binarize", "abc"], r"argument --binarize: takes 'auto'"),
    (["fit", "x.csv", "--anchors", "5", "--out", "o", "--seed", "-1"], r"argument --seed: must be an integer from 0"),
    (["fit", "x.csv", "--anchors", "5", "--out", "o", "--seed", str(2**32)], r"argument --seed"),
    (["fit", "x.csv", "--anchors", "0", "--out", "o"], r"argument --anchors: must be a positive integer, got 0"),
    (["fit", "x.csv", "--anchors", "5", "--out", "o", "--dims", "0"], r"argument --dims"),
    (["fit", "x.csv", "--anchors", "5", "--out", "o", "--kmeans-seeds", "-3"], r"argument --kmeans-seeds"),
    (["build", "tinyAlpacaEval", "--responses", "x", "--out", "o", "--seed", "-1"], r"argument --seed"),
    (["simulate", "--out", "s.parquet", "--missing", "1.5"], r"argument --missing: must be a share in \[0, 1\)"),
    (["simulate", "--out", "s.parquet", "--models", "1"], r"argument --models"),
    (["simulate", "--out", "s.parquet", "--items", "-4"], r"argument --items"),
])
def test_bad_options_are_named(args, pattern, capsys):
    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code == 2
    _one_error_line(capsys, pattern)


def test_binarize_thresholds_are_checked_in_the_api_too():
    for bad in (2.5, 1.0, 0.0, -1, "0.5"):
        with pytest.raises(BuildError, match="binarize"):
            FitOptions(binarize=bad)
    assert FitOptions(binarize=0.5).binarize == 0.5 and FitOptions(binarize=True).binarize is True


def test_a_valid_binarize_threshold_still_fits(tmp_path):
    m, _ = simulate_responses(n_models=20, n_items=40, n_dims=1, seed=2)
    soft = ResponseMatrix(np.round(np.clip(m.scores * 0.8 + 0.1, 0, 1), 2), m.models, m.items)
    soft.write(tmp_path / "soft.parquet")
    assert main(["fit", str(tmp_path / "soft.parquet"), "--anchors", "5", "--dims", "1", "--quiet",
                 "--binarize", "0.5", "--out", str(tmp_path / "o")]) == 0
    assert json.loads((tmp_path / "o" / "estimator.json").read_text())["metadata"]["binarize"] == 0.5


# --------------------------------------------------------------------------- readers: JSON, doc ids, pickles
def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _lm_tree(root: Path, n_models: int = 6, bad_model: int | None = None, bad_line: str | None = None) -> Path:
    for k in range(n_models):
        recs = [lm_record(i, float((i + k) % 2)) for i in range(6)]
        d = write_lm_eval_run(root, f"org/m{k}", {"wmdp_bio": recs})
        if k == bad_model:
            f = next(d.glob("samples_*.jsonl"))
            f.write_text(f.read_text() + bad_line + "\n")
    return root


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_deep_json_is_one_error_line_also_from_pool_workers(tmp_path, jobs, capsys):
    root = _lm_tree(tmp_path / "logs", bad_model=4, bad_line='{"doc_id": 7, "doc": ' + _deep(100_000) + "}")
    rc = main(["ingest", str(root), "--out", str(tmp_path / "o.parquet"), "--jobs", jobs, "--progress", "none"])
    assert rc == 2  # bad input: exit 2 at once, not a failed model (3) after retries
    _one_error_line(capsys, r"org__m4/samples_wmdp_bio_.*line 7: the JSON is nested too deeply")
    assert not (tmp_path / "o.parquet").exists()


def test_deep_json_is_one_error_line_from_dask_workers(tmp_path):
    distributed = pytest.importorskip("distributed")
    from tinybench_builder.read.ingest import ingest

    root = _lm_tree(tmp_path / "logs", bad_model=2, bad_line=_deep(50_000))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        with pytest.raises(SourceError, match="nested too deeply"):
            ingest(root, scheduler=client, retries=0)


def test_deep_json_elsewhere(tmp_path, capsys):
    """A results json, a content file and a manifest nested too deeply: one error line each."""
    from tinybench_builder import layout
    from tinybench_builder.dataset.content import _read_local_table

    (tmp_path / "c.json").write_text(_deep(100_000))
    with pytest.raises(BuildError, match="nested too deeply"):
        _read_local_table(tmp_path / "c.json")
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "manifest.json").write_text(_deep(100_000))
    with pytest.raises(ValueError, match="not valid JSON"):
        layout.read_manifest(tmp_path / "ds")
    assert "not valid JSON" in layout.ownership_problem(tmp_path / "ds")


# issue 29, item 3: nested too deeply *after* the loading (a model list, a key), named with the file
def _deep_list(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def _deep_tuple(depth: int) -> tuple:
    value: tuple = ()
    for _ in range(depth):
        value = (value,)
    return value


def _dump_deep(path: Path, obj) -> Path:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 30_000))  # pickling a deep object recurses; unpickling does not
    try:
        path.write_bytes(pickle.dumps(obj, protocol=4))
    finally:
        sys.setrecursionlimit(limit)
    return path


@pytest.mark.parametrize("make, message", [
    (lambda: {"models": _deep_list(5_000), "data": {"bio": {"correctness": np.zeros((3, 1))}}},
     r"field 'models' must be a list of model names \(text\), found list \[\[\["),
    (lambda: {"models": ["a"], "data": {_deep_tuple(5_000): {"correctness": np.zeros((3, 1))},
                                        "bio": {"correctness": np.zeros((3, 1))}}},
     "the input is nested too deeply to be read"),
], ids=["model-list", "entry-name"])
def test_a_pickle_nested_too_deeply_past_the_loading_is_named(tmp_path, make, message, capsys):
    """The pickle loads (its reader is not recursive) but its deep model list or entry name made
    the message that names it recurse: "an input is nested too deeply", without the file."""
    pkl = _dump_deep(tmp_path / "lb.pkl", make())
    assert main(["ingest", str(pkl), "--out", str(tmp_path / "o.parquet"), "--progress", "none"]) == 2
    line = _one_error_line(capsys, message)
    assert str(pkl) in line, line
    assert not (tmp_path / "o.parquet").exists()


def test_an_original_pickle_nested_too_deeply_is_named(tmp_path, capsys):
    pkl = _dump_deep(tmp_path / "tinyBenchmarks.pkl", {"lb": {}, _deep_tuple(5_000): 1})
    assert main(["import-original", str(pkl), "--bench", "mmlu", "--out", str(tmp_path / "o")]) == 2
    line = _one_error_line(capsys, "nested too deeply")
    assert str(pkl) in line, line


def test_a_reader_that_recurses_too_deep_is_bad_input_named_and_not_retried(tmp_path, monkeypatch, capsys):
    """A RecursionError inside a model's reader was retried, then reported as a failed model
    (exit 3): it is bad input, like a JSON nested too deeply, named with the model's source."""
    from tinybench_builder.read.sources import _common

    root = _lm_tree(tmp_path / "logs", n_models=2)
    calls = []

    def recurse(unit):
        calls.append(unit.source)
        if unit.source.endswith("org__m1"):
            raise RecursionError("maximum recursion depth exceeded")
        return real(unit)

    real = _common.read_unit
    monkeypatch.setattr(_common, "read_unit", recurse)
    rc = main(["ingest", str(root), "--out", str(tmp_path / "o.parquet"), "--jobs", "1", "--retries", "2",
               "--progress", "none"])
    assert rc == 2
    line = _one_error_line(capsys, "nested too deeply")
    assert str(root / "org__m1") in line, line
    assert calls.count(str(root / "org__m1")) == 1  # bad input: never retried


@pytest.mark.parametrize("doc_id", ["1e999", "-1e999", "NaN", "123456789012345678901234567890", "1.5", "true",
                                    "-3", '"12abc"', "null", "[1]"])
def test_doc_ids_that_are_not_row_positions(tmp_path, doc_id, capsys):
    root = _lm_tree(tmp_path / "logs", n_models=2, bad_model=1, bad_line='{"doc_id": ' + doc_id + ', "acc": 1}')
    assert main(["ingest", str(root), "--out", str(tmp_path / "o.parquet"), "--progress", "none"]) == 2
    _one_error_line(capsys, r"line 7: doc_id .* is not a document index")


def test_integral_doc_ids_in_other_spellings_are_accepted(tmp_path):
    root = tmp_path / "logs"
    recs = [dict(lm_record(i, 1.0), doc_id=v) for i, v in enumerate([0, 1.0, "2", 3])]
    write_lm_eval_run(root, "org/m", {"wmdp_bio": recs})
    from tinybench_builder.read.ingest import ingest

    assert ingest(root).items == ["0", "1", "2", "3"]


def _pickle(path: Path, obj, protocol: int = 4) -> Path:
    path.write_bytes(pickle.dumps(obj, protocol=protocol))
    return path


@pytest.mark.parametrize("obj, message", [
    ({"models": 5, "data": {"t": {"correctness": np.ones((2, 1))}}}, "field 'models' must be a list of model names"),
    ({"models": ["a", 3], "data": {"t": {"correctness": np.ones((2, 2))}}}, "found int 3"),
    ({"models": ["a", None], "data": {"t": {"correctness": np.ones((2, 2))}}}, "found NoneType"),
    ({"models": ["a", ""], "data": {"t": {"correctness": np.ones((2, 2))}}}, "model 1 has an empty name"),
    ({"models": "ab", "data": {"t": {"correctness": np.ones((2, 2))}}}, "must be a list of model names"),
    ({"models": ["a"], "data": {"t": [1, 2]}}, "entry 't' must be a dict"),
    ({"models": ["a"], "data": {"t": {"correctness": "0101"}}}, "must be an array"),
    ({"models": ["a"], "data": {"t": {"correctness": {"x": 1}}}}, "must be an array"),
    ({"models": ["a", "b"], "data": {"t": {"correctness": [["x", "y"]]}}}, "holds str values"),
    ({"models": ["a", "b"], "data": {"t": {"correctness": [[1.0, 0.0], [1.0]]}}}, "not a rectangular array"),
    ({"models": ["a", "b"], "data": {"t": {"correctness": np.array([[0.5 + 0.5j, 1.0]])}}}, "complex numbers"),
    ({"models": ["a", "b"], "data": {"t": {"correctness": [[1, 0j]]}}}, "complex numbers"),
    ({"models": ["a"], "data": {"t": {"correctness": [[[[[1.0]]]]]}}}, "nested more than 3 levels"),
    ({"models": ["a", "b"], "data": []}, "not a tinyBenchmarks pickle"),
])
def test_pickle_fields_of_the_wrong_type(tmp_path, obj, message, capsys):
    path = _pickle(tmp_path / "x.pkl", obj)
    with pytest.raises(SourceError, match=message):
        legacy_pickle.read(path)
    assert main(["ingest", str(path), "--out", str(tmp_path / "o.parquet"), "--progress", "none"]) == 2
    _one_error_line(capsys, re.escape(str(path)) + ".*" + message)


def _peak_rss_of(code: str) -> tuple[int, str, float]:
    """Run ``code`` in a fresh process; (exit status, stderr, peak RSS in MiB).

    The peak is the process's own VmHWM (ru_maxrss would carry the parent's peak over exec)."""
    script = ("import sys\n" + code + "\nimport re\nhwm = re.search(r'VmHWM:\\s+(\\d+) kB', "
              "open('/proc/self/status').read())\nprint('PEAK', int(hwm.group(1)) / 1024, file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    peak = float(re.findall(r"PEAK ([\d.]+)", proc.stderr)[-1])
    return proc.returncode, proc.stderr, peak


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads the peak memory from /proc")
@pytest.mark.parametrize("name", ["shared rows", "shared rows in an object array", "bytearray", "list(range)",
                                  "empty array of a huge shape"])
def test_pickles_that_would_inflate_are_refused_before_allocating(tmp_path, name):
    path = tmp_path / "bomb.pkl"
    n = 20_000
    if name == "shared rows":
        row = [0.5] * n
        _pickle(path, {"models": [f"m{i}" for i in range(n)], "data": {"t": {"correctness": [row] * n}}})
    elif name == "shared rows in an object array":
        rows = np.empty(n, dtype=object)
        row = np.full(n, 0.5)
        for i in range(n):
            rows[i] = row
        models = [f"m{i}" for i in range(n)]
        _pickle(path, {"models": models, "data": {"t": {"correctness": rows}}})
    elif name == "bytearray":  # builtins.bytearray(2**40)
        path.write_bytes(b"\x80\x04\x8c\x08builtins\x8c\tbytearray\x93\x8a\x06\x00\x00\x00\x00\x00\x01\x85R.")
    elif name == "list(range)":  # builtins.list(builtins.range(10**10))
        path.write_bytes(b"\x80\x04\x8c\x08builtins\x8c\x04list\x93\x8c\x08builtins\x8c\x05range\x93"
                         b"\x8a\x05\x00\xe4\x0bT\x02\x85R\x85R.")
    else:  # numpy _reconstruct(ndarray, (10**6, 10**5), 'f8') before any __setstate__
        path.write_bytes(b"\x80\x04\x8c\x15numpy.core.multiarray\x8c\x0c_reconstruct\x93\x8c\x05numpy\x8c\x07ndarray"
                         b"\x93J@B\x0f\x00J\xa0\x86\x01\x00\x86C\x01b\x87R.")
    assert path.stat().st_size < 2_000_000
    rc, err, peak = _peak_rss_of(
        "from tinybench_builder.read.sources import legacy_pickle, SourceError\n"
        f"try:\n    legacy_pickle.read({str(path)!r})\nexcept SourceError as e:\n    print('REFUSED', e, file=sys.stderr)\n")
    assert rc == 0 and "REFUSED" in err and "Traceback" not in err, err
    assert re.search(r"asks for|declares more than", err), err
    assert peak < 400, f"peak RSS {peak:.0f} MiB"


def test_a_file_that_is_not_a_pickle_is_named_for_what_it_is(tmp_path, capsys):
    cases = {"notes.pkl": b"hello, these are my notes\n", "empty.pkl": b"",
             "zip.pkl": b"PK\x03\x04" + b"\0" * 30, "table.pkl": b"PAR1" + b"\0" * 30}
    expected = {"notes.pkl": "looks like a text file", "empty.pkl": "the file is empty",
                "zip.pkl": "zip archive", "table.pkl": "parquet file"}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        assert main(["ingest", str(tmp_path / name), "--out", str(tmp_path / "o.parquet"), "--progress", "none"]) == 2
        _one_error_line(capsys, f"{name}: not a readable pickle: .*{expected[name]}")


# --------------------------------------------------------------------------- tampered side files, via the CLI
def _tamper(folder: Path, how: str) -> None:
    meta_path = folder / "estimator.json"
    npz = folder / "irt_parameters.npz"
    if how == "missing key":
        meta = json.loads(meta_path.read_text())
        meta.pop("anchor_ids")
        meta_path.write_text(json.dumps(meta))
    elif how == "not an object":
        meta_path.write_text('"just a string"')
    elif how == "deep JSON":
        meta_path.write_text(_deep(100_000))
    elif how == "NaN parameter":
        meta = json.loads(meta_path.read_text())
        next(iter(meta["params"].values()))["sigma"] = float("nan")
        meta_path.write_text(json.dumps(meta))
    elif how == "truncated npz":
        npz.write_bytes(npz.read_bytes()[:300])
    elif how == "text as npz":
        npz.write_text("this is not an npz\n")
    elif how == "huge npz header":
        import zipfile

        with zipfile.ZipFile(npz) as zf:
            members = {n: zf.read(n) for n in zf.namelist()}
        head = members["b.npy"]
        shape = re.search(rb"\((\d+),\)", head).group(0)
        grown = head.replace(shape, b"(1000000000000,)", 1)
        end = grown.index(b"\n")  # keep the header length: take the extra characters from its padding
        extra = len(grown) - len(head)
        assert grown[end - extra:end] == b" " * extra
        members["b.npy"] = grown[:end - extra] + grown[end:]
        with zipfile.ZipFile(npz, "w") as zf:
            for n, data in members.items():
                zf.writestr(n, data)


@pytest.mark.parametrize("how, pattern", [
    ("missing key", "missing field 'anchor_ids'"),
    ("not an object", "not a JSON object"),
    ("deep JSON", "not valid JSON"),
    ("NaN parameter", "sigma"),
    ("truncated npz", "not a readable npz"),
    ("text as npz", "irt_parameters.npz: not a readable npz"),
    ("huge npz header", "array 'b' has shape"),
])
def test_estimate_turns_bad_side_files_into_one_error_line(clean, tmp_path, how, pattern, capsys):
    import shutil

    d, _ = clean
    shutil.copytree(d / "tiny", tmp_path / "tiny")
    _tamper(tmp_path / "tiny", how)
    t0 = time.perf_counter()
    assert main(["estimate", str(tmp_path / "tiny"), str(d / "clean.csv")]) == 2
    assert time.perf_counter() - t0 < 10
    _one_error_line(capsys, pattern)


# --------------------------------------------------------------------------- closed stdout, offline Hub
def test_estimate_into_a_closed_pipe_stops_quietly(clean, tmp_path):
    d, m = clean
    big = ResponseMatrix(np.tile(m.scores, (40, 1)), [f"m{i}" for i in range(40 * len(m.models))], m.items)
    big.write(tmp_path / "many.parquet")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "tinybench_builder", "estimate", str(d / "tiny"), str(tmp_path / "many.parquet")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    first = proc.stdout.readline()  # like `| head -1`
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert b"score" in first and err == "", err


def test_build_without_content_offline_fails_fast(tmp_path):
    m, _ = simulate_responses(n_models=20, n_items=30, n_dims=1, seed=0)
    m.write(tmp_path / "r.parquet")
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_ENDPOINT="http://127.0.0.1:9", HF_HUB_DISABLE_TELEMETRY="1")
    env.pop("HF_HUB_OFFLINE", None)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "tinybench_builder", "build", "tinyAlpacaEval", "--responses",
                           str(tmp_path / "r.parquet"), "--out", str(tmp_path / "o"), "--quiet"],
                          capture_output=True, text=True, env=env, timeout=120)
    elapsed = time.perf_counter() - t0
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and "the Hub cannot be reached" in last and "--content" in last, last
    assert elapsed < 20 and not (tmp_path / "o").exists()


# --------------------------------------------------------------------------- repository ids and the card
BAD_REPO_IDS = ["org/name\n", "org/../name", "org/na..me", "org--x/name", "org/name.git", "org/na me",
                'org/x"); import os; os.system("touch pwned"); ("', "just-a-name", "a/b/c", "-org/name"]


@pytest.mark.parametrize("repo_id", BAD_REPO_IDS)
def test_repo_ids_the_hub_rejects_are_refused(repo_id, tmp_path):
    from tinybench_builder.release.config import ConfigError, load_config
    from helpers.folders import write_config

    with pytest.raises(BuildError, match="repo"):
        check_repo_id(repo_id)
    with pytest.raises(BuildError):
        BuildOptions(repo_id=repo_id)
    (tmp_path / "r.parquet").write_bytes(b"x")
    cfg = write_config(tmp_path, '[release]\norg = "tinyOrg"\n\n[[benchmark]]\nname = "tinyAlpacaEval"\n'
                                 f'responses = "r.parquet"\nrepo = {json.dumps(repo_id)}\n')
    with pytest.raises(ConfigError):
        load_config(cfg)


@pytest.mark.parametrize("org", ["tinyOrg\n", "tiny..Org", "tiny--Org", "tiny Org", "-tinyOrg"])
def test_org_names_the_hub_rejects_are_refused(org, tmp_path, capsys):
    from tinybench_builder.cli.main import release_main
    from helpers.folders import write_config

    (tmp_path / "r.parquet").write_bytes(b"x")
    cfg = write_config(tmp_path, f'[release]\norg = {json.dumps(org)}\n\n[[benchmark]]\nname = "tinyAlpacaEval"\n'
                                 'responses = "r.parquet"\n')
    assert release_main(["--config", str(cfg), "--release-version", "1.0.0", "--out", str(tmp_path / "o")]) == 2
    _one_error_line(capsys, "org|repository")
    assert not (tmp_path / "o").exists()


def test_a_spec_name_the_hub_rejects_is_refused(tmp_path):
    from tinybench_builder.registry.specs import SpecError, spec_from_mapping

    base = {"pretty_name": "X", "license": "mit", "citation": "@misc{x}", "item_id_column": "item_id"}
    for name in ("tinyX\n", "tiny X", "tiny..X/.."):
        with pytest.raises(SpecError, match="name must be"):
            spec_from_mapping({"name": name, **base}, "spec.toml")
    with pytest.raises(BuildError, match="not a valid Hub repository id"):
        BuildOptions().repo_id_for("tiny--X")


def test_valid_repo_ids_pass():
    for ok in ("tinyBenchmarks/tinyMMLU", "a-b_c.d/x.y-z_1", "someone/tinyAlpacaEval"):
        assert check_repo_id(ok) == ok and BuildOptions(repo_id=ok).repo_id == ok


def test_the_card_pastes_ids_as_python_literals(tmp_path):
    """Whatever a manifest says (a tampered --previous folder, an old build), the card's example
    code parses and the repository id and tag are plain string literals in it."""
    from tinybench_builder.dataset.cards import CardInputs, python_string, render_card
    from helpers.builds import built

    evil = 'org/x"); import os; os.system("touch pwned"); ("'
    evil_tag = 'v1"+__import__("os").getcwd()+"'
    assert ast.literal_eval(python_string(evil)) == evil
    inputs = CardInputs.from_folder(built(tmp_path, "tinyAlpacaEval"))
    inputs.manifest.update(repo_id=evil, tag=evil_tag)
    text = str(render_card(inputs))
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 2  # loading (rows and estimator from one snapshot), estimating
    literals = set()
    for code in blocks:
        tree = ast.parse(code)
        assert not [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and n.func.attr in ("system", "getcwd")], code
        literals |= {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert evil in literals and evil_tag in literals
