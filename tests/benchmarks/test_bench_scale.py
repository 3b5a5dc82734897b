"""Smoke test of the scale benchmark (its numbers are not checked here): every kind of run (fit of
0/1 and soft matrices, estimate, build) goes through on tiny simulated matrices, each in its own
process, and the table and the goal lines come out."""

import re

from benchmarks import scale
import pytest

pytestmark = pytest.mark.slow  # end to end: each test takes seconds to minutes


def test_scale_bench_runs_every_case_on_tiny_matrices(tmp_path, capsys):
    work = tmp_path / "work"
    argv = ["--models", "30", "40", "--items", "240", "--subscenarios", "3", "--anchors", "20",
            "--soft-models", "30", "--estimate-models", "12", "--work", str(work), "--memory-cap", "4"]
    assert scale.main(argv) == 0
    out = capsys.readouterr().out
    for label in ("fit 30 x 240 0/1", "fit 40 x 240 0/1", "fit 30 x 240 soft scores",
                  "estimate 12 models (estimator of the 40-model fit)", "build 40 x 240 (read, fit, card, folder)"):
        assert re.search(rf"^\| {re.escape(label)} \| [^|]* \| [\d.]+ s \| [\d.]+ s \| [\d.]+ s \| [\d.]+ GiB \|",
                         out, re.M), (label, out)
    assert "* biggest fit (0.0 M cells): peak" in out and "* growth:" in out and "* estimate:" in out
    assert (work / "build" / "manifest.json").is_file() and (work / "estimates.csv").is_file()
    # the matrices are written once and reused: a second run only fits (the build folder is replaced)
    mtimes = {p: p.stat().st_mtime_ns for p in work.glob("sim_*.parquet")}
    assert len(mtimes) == 4  # 30, 40, 30 soft and the 12 new models
    assert scale.main([*argv, "--only-build"]) == 0
    assert {p: p.stat().st_mtime_ns for p in work.glob("sim_*.parquet")} == mtimes
    assert "build 40 x 240" in capsys.readouterr().out


def test_scale_bench_reports_a_failed_run(tmp_path, capsys):
    argv = ["--models", "20", "--items", "60", "--subscenarios", "2", "--anchors", "10", "--soft-models", "0",
            "--estimate-models", "0", "--no-build", "--work", str(tmp_path)]
    assert scale.main(argv) == 0
    capsys.readouterr()
    # the same matrix (reused), a fit under an address-space cap far too small for numpy: it fails, and says so
    assert scale.main([*argv, "--memory-cap", "0.05"]) == 1
    out = capsys.readouterr().out
    assert re.search(r"^\| fit 20 x 60 0/1 \(exit 1\) \|", out, re.M), out
    assert "fit 20 x 60 0/1: FAILED (exit 1; see the log " in out and "* biggest fit" not in out


def test_scale_bench_removes_its_temporary_folder(tmp_path, monkeypatch, capsys):
    # without --work the matrices (several GB at full size) go into a temporary folder, removed at the end
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    argv = ["--models", "20", "--items", "60", "--subscenarios", "2", "--anchors", "10", "--soft-models", "0",
            "--estimate-models", "0", "--no-build"]
    assert scale.main(argv) == 0
    assert "(removed at the end)" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []
