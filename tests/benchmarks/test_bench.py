"""Smoke tests of the benchmark scripts on small simulated data (their numbers are not checked here)."""

import json

from benchmarks import accuracy, speed
from tinybench_builder.read.simulate import simulate_responses
import pytest

pytestmark = pytest.mark.slow  # end to end: each test takes seconds to minutes


def test_accuracy_script_runs_the_protocol(tmp_path, capsys):
    matrix, _ = simulate_responses(n_models=24, n_items=200, n_dims=1, seed=5)
    matrix.write(tmp_path / "sim.parquet")
    assert accuracy.main(["--data-dir", str(tmp_path), "--datasets", "sim", "--seeds", "0",
                          "--anchors", "20", "--dims", "1", "--jobs", "1", "--json", str(tmp_path / "rows.json")]) == 0
    out = capsys.readouterr().out
    # interpolation: 24 models -> 18 train / 6 test; extrapolation: the weakest 12 / the strongest 8
    assert "| sim | 18/6 |" in out and "| sim | 12/8 |" in out and "**score**" in out
    assert "score MAE <= random-k on every dataset" in out and "lowest mean ratio of all methods" in out
    rows = json.loads((tmp_path / "rows.json").read_text())["rows"]
    assert {r["protocol"] for r in rows} == {"interpolation", "extrapolation"}


def test_accuracy_script_reports_a_missing_dataset(tmp_path, capsys):
    assert accuracy.main(["--data-dir", str(tmp_path), "--datasets", "nothing"]) == 2


def test_speed_script_compares_with_the_original(capsys):
    assert speed.main(["--models", "40", "--items", "300", "--anchors", "20", "--dims", "1",
                       "--repeats", "3", "--original-repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "original as released" in out and "| fit (whole pipeline) |" in out


def test_accuracy_dev_mode_uses_only_training_models(tmp_path, capsys):
    matrix, _ = simulate_responses(n_models=32, n_items=150, n_dims=1, seed=6)
    matrix.write(tmp_path / "sim.parquet")
    assert accuracy.main(["--data-dir", str(tmp_path), "--datasets", "sim", "--seeds", "0", "--dev",
                          "--dev-reps", "1", "--anchors", "15", "--dims", "1", "--jobs", "1",
                          "--protocols", "interpolation"]) == 0
    out = capsys.readouterr().out
    # 32 models -> 24 protocol training models -> 18/6 nested
    assert "DEV protocol" in out and "| sim | 18/6 |" in out


def test_stability_script_compares_layouts_and_thread_counts(tmp_path, capsys):
    from benchmarks import stability

    matrix, _ = simulate_responses(n_models=22, n_items=120, n_dims=1, seed=8)
    matrix.write(tmp_path / "sim.parquet")
    assert stability.main([str(tmp_path / "sim.parquet"), "--anchors", "12"]) == 0
    out = capsys.readouterr().out
    for name in ("long CSV, rows shuffled", "models and items permuted", "2 BLAS threads"):
        assert f"| {name} | 12/12 | 0.0e+00 |" in out


def test_adaptive_script_compares_random_fixed_and_adaptive(tmp_path, capsys):
    from benchmarks import adaptive

    matrix, _ = simulate_responses(n_models=24, n_items=400, n_dims=1, seed=7)
    matrix.write(tmp_path / "sim.parquet")
    assert adaptive.main(["--data-dir", str(tmp_path), "--datasets", "sim", "--seeds", "0", "--budgets", "20", "10%",
                          "--jobs", "1", "--cache-dir", str(tmp_path / "cache"), "--json", str(tmp_path / "a.json"),
                          "--protocols", "interpolation", "--faq-quick", "--faq-cache", str(tmp_path / "faq")]) == 0
    out = capsys.readouterr().out
    assert "### interpolation" in out and "| 20 | 20 |" in out and "| 10% | 40 |" in out
    assert "| sim | 18/6 | 40 |" in out and "ESS adaptive" in out
    rows = json.loads((tmp_path / "a.json").read_text())["rows"]
    b = rows[0]["budgets"]["20"]
    assert len(b["adaptive"]["score"]) == len(b["fixed"]["score"]) == 6 and "warm" not in b
    # FAQ on the same split at 10% (20 items is not one of the comparison's budgets)
    assert "faq" not in b and len(rows[0]["budgets"]["10%"]["faq"]["score"]) == 6
    assert "### interpolation: the adaptive session against FAQ" in out and "| sim | 18/6 | 40 |" in out
    assert "ESS ours (FAQ's width def.)" in out and "10%: ESS ours / FAQ" in out
    assert list((tmp_path / "faq" / "sim").glob("interpolation-*.json"))  # FAQ's tuning is cached
    assert any((tmp_path / "cache").rglob("estimator.json"))  # the fits are cached
    assert adaptive.main(["--data-dir", str(tmp_path), "--datasets", "sim", "--seeds", "0", "--budgets", "20",
                          "--jobs", "1", "--cache-dir", str(tmp_path / "cache"), "--protocols", "interpolation",
                          "--no-fixed"]) == 0
    assert "| sim | 18/6 | 20 |" in capsys.readouterr().out
    # --sessions 2: a second, independent draw of every session (ours and FAQ's); the first is the run's above
    assert adaptive.main(["--data-dir", str(tmp_path), "--datasets", "sim", "--seeds", "0", "--budgets", "20", "10%",
                          "--jobs", "1", "--cache-dir", str(tmp_path / "cache"), "--json", str(tmp_path / "b.json"),
                          "--protocols", "interpolation", "--faq-quick", "--faq-cache", str(tmp_path / "faq"),
                          "--sessions", "2"]) == 0
    assert "2 session draw(s) per model" in capsys.readouterr().out
    two = json.loads((tmp_path / "b.json").read_text())["rows"]
    assert [r["draw"] for r in two] == [0, 1]
    for m in ("adaptive", "faq"):
        assert two[0]["budgets"]["10%"][m]["score"] == rows[0]["budgets"]["10%"][m]["score"]
        assert two[1]["budgets"]["10%"][m]["score"] != rows[0]["budgets"]["10%"][m]["score"]
    with pytest.raises(SystemExit):
        adaptive.main(["--data-dir", str(tmp_path), "--sessions", "0"])
    # --session-dims: the sessions run on an estimator fitted with that IRT dimension, cached apart
    assert adaptive.main(["--data-dir", str(tmp_path), "--datasets", "sim", "--seeds", "0", "--budgets", "20",
                          "--jobs", "1", "--cache-dir", str(tmp_path / "cache"), "--protocols", "interpolation",
                          "--no-fixed", "--no-faq", "--session-dims", "2"]) == 0
    fitted = [json.loads(p.read_text())["n_dims"] for p in (tmp_path / "cache").rglob("k100-d2/estimator.json")]
    assert fitted == [2]
