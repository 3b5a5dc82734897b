"""Bounded waits and awkward paths (issue 21): a long TMPDIR for the local process pool; every
wait on a cluster or the Hub bounded, with a message saying what was waited for and exit
status 5 (the bounds are made small here through their environment variables)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from helpers.builds import ROOT
from helpers.ingest_trees import write_lm_eval_tree


def _cli(args, env=None, timeout=240):
    return subprocess.run([sys.executable, "-m", "builder", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def test_a_long_tmpdir_does_not_break_the_local_process_pool(tmp_path):
    root = write_lm_eval_tree(tmp_path / "lm", n_models=6)
    tmpdir = tmp_path / ("t" * max(1, 80 - len(str(tmp_path)) - 1))
    tmpdir.mkdir()
    assert len(str(tmpdir)) >= 80
    out = tmp_path / "m.parquet"
    proc = _cli(["ingest", str(root), "--out", str(out), "--jobs", "2", "--progress", "none"],
                env={"TMPDIR": str(tmpdir)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "local process pool, 2 workers" in proc.stdout, proc.stdout
