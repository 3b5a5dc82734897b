"""CLI round trips: simulate -> fit -> estimate, formats, errors."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from tinybench_builder.cli.main import main
from tinybench_builder.estimator import TinyEstimator


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    assert main(["simulate", "--models", "60", "--items", "400", "--dims", "1", "--seed", "3",
                 "--out", str(d / "sim.parquet")]) == 0
    assert main(["fit", str(d / "sim.parquet"), "--anchors", "30", "--out", str(d / "tiny"),
                 "--seed", "1", "--dims", "1", "--quiet"]) == 0
    return d


def test_fit_writes_side_files_and_report(fitted):
    out = fitted / "tiny"
    for name in ("estimator.json", "irt_parameters.npz", "estimator.py", "validation.json", "validation.md"):
        assert (out / name).is_file(), name
    report = json.loads((out / "validation.json").read_text())
    row = report["table"][0]
    for key in ("random", "irt", "pirt", "gpirt", "score", "spearman", "coverage"):
        assert np.isfinite(row[key])
    assert "| scenario |" in (out / "validation.md").read_text()
    est = TinyEstimator.load(out)
    assert len(est.anchor_ids) == 30 and len(est.item_ids) == 400


def test_estimate_round_trip_csv_json_and_stdout(fitted, capsys):
    out = fitted / "tiny"
    est = TinyEstimator.load(out)
    assert main(["estimate", str(out), str(fitted / "sim.parquet"), "--out", str(fitted / "e.csv")]) == 0
    df = pd.read_csv(fitted / "e.csv")
    assert list(df.columns[:7]) == ["model", "score", "ci_low", "ci_high", "irt", "pirt", "gpirt"]
    assert len(df) == 60
    # same numbers as the Python API on the anchor columns
    Y = pd.read_parquet(fitted / "sim.parquet")[est.anchor_ids].to_numpy()
    api = est.estimate(Y)
    for key in ("score", "ci_low", "ci_high", "gpirt"):
        np.testing.assert_allclose(df[key], [r[key] for r in api])
    truth = pd.read_parquet(fitted / "sim.parquet").mean(axis=1).to_numpy()
    assert np.mean(np.abs(df["score"] - truth)) < 0.08
    assert main(["estimate", str(out), str(fitted / "sim.parquet"), "--out", str(fitted / "e.json")]) == 0
    records = json.loads((fitted / "e.json").read_text())
    assert records[0]["model"] == df["model"][0]
    capsys.readouterr()
    assert main(["estimate", str(out), str(fitted / "sim.parquet")]) == 0
    assert "score" in capsys.readouterr().out


def test_estimate_long_csv_with_missing_anchors(fitted):
    est = TinyEstimator.load(fitted / "tiny")
    rows = [{"model": "m1", "item": a, "score": 1.0} for a in est.anchor_ids[:10]]
    rows += [{"model": "m2", "item": a, "score": 0.0} for a in est.anchor_ids[5:]]
    rows += [{"model": "m2", "item": "not-an-anchor-column", "score": 1.0}]
    pd.DataFrame(rows).to_csv(fitted / "long.csv", index=False)
    assert main(["estimate", str(fitted / "tiny"), str(fitted / "long.csv"), "--out", str(fitted / "l.csv")]) == 0
    df = pd.read_csv(fitted / "l.csv").set_index("model")
    assert df.loc["m1", "n_answered"] == 10 and df.loc["m2", "n_answered"] == 25
    assert df.loc["m1", "irt"] == pytest.approx(1.0) and df.loc["m2", "irt"] == pytest.approx(0.0)


def test_fit_reads_long_format_and_is_deterministic(tmp_path):
    from tinybench_builder.read.simulate import simulate_responses

    m, _ = simulate_responses(n_models=30, n_items=120, n_dims=1, seed=9, missing=0.05)
    long = m.to_frame().stack().rename("score").reset_index()
    long.columns = ["model", "item", "score"]
    long.to_csv(tmp_path / "long.csv", index=False)
    for out in ("a", "b"):
        assert main(["fit", str(tmp_path / "long.csv"), "--anchors", "20", "--out", str(tmp_path / out),
                     "--quiet"]) == 0
    for name in ("estimator.json", "irt_parameters.npz"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


@pytest.mark.parametrize(
    "args, message",
    [
        (["fit", "{d}/missing.parquet", "--anchors", "10", "--out", "{d}/o"], "no such file"),
        (["fit", "{d}/bad.csv", "--anchors", "10", "--out", "{d}/o"], r"bad.csv: line 4, column '3': 'oops' is not a number"),
        (["fit", "{d}/range.csv", "--anchors", "10", "--out", "{d}/o"], r"\[0, 1\]"),
        (["fit", "{d}/ok.csv", "--anchors", "500", "--out", "{d}/o"], "cannot pick 500 anchors"),
        (["estimate", "{d}/nowhere", "{d}/ok.csv"], "not found"),
    ],
)
def test_errors_exit_2_with_a_message(tmp_path, capsys, args, message):
    import re

    rng = np.random.default_rng(0)
    ok = pd.DataFrame((rng.random((12, 40)) < 0.5).astype(float), index=[f"m{i}" for i in range(12)])
    ok.index.name = "model"
    ok.to_csv(tmp_path / "ok.csv")
    bad = ok.astype(object)
    bad.iloc[2, 3] = "oops"
    bad.to_csv(tmp_path / "bad.csv")
    (ok * 2).to_csv(tmp_path / "range.csv")
    assert main([a.format(d=tmp_path) for a in args]) == 2
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: ") and re.search(message, last) and "Traceback" not in err, err


@pytest.mark.slow  # tens of seconds (pytest --durations)
def test_the_module_entry_point(tmp_path):
    """`python -m tinybench_builder`, in a fresh process: --help lists the commands; an error is one line, no traceback."""
    proc = subprocess.run([sys.executable, "-m", "tinybench_builder", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0
    for cmd in ("ingest", "fit", "estimate", "build", "release", "simulate"):
        assert cmd in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "tinybench_builder", "fit", str(tmp_path / "missing.parquet"), "--anchors", "10",
                           "--out", str(tmp_path / "o")], capture_output=True, text=True)
    assert proc.returncode == 2 and "no such file" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
