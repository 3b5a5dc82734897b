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


class _Silent:
    """A TCP server on 127.0.0.1 that accepts every connection and never answers."""

    def __init__(self):
        import socket
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.held = []
        self.stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        self.sock.settimeout(0.2)
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
                self.held.append(conn)
            except OSError:
                continue

    def close(self):
        self.stop = True
        self.thread.join(2)
        for c in self.held:
            c.close()
        self.sock.close()


@pytest.fixture
def silent():
    server = _Silent()
    yield server
    server.close()


def test_a_stalled_hub_fails_a_push_within_the_bound(silent, tmp_path):
    from helpers import hub_clients
    from helpers.client import run_in_client
    from helpers.folders import REPO, make_folder

    folder = make_folder(tmp_path / "f", version="1.0.0")
    env = {**os.environ, "HF_ENDPOINT": f"http://127.0.0.1:{silent.port}", "HF_HOME": str(tmp_path / "hf"),
           "HF_TOKEN": "hf_dummy", "HF_HUB_DISABLE_XET": "1", "TINYBENCH_HUB_TIMEOUT": "1",
           "HF_HUB_ETAG_TIMEOUT": "1", "HF_HUB_DOWNLOAD_TIMEOUT": "1"}
    got = run_in_client(env, hub_clients.timed_publish, str(folder), REPO, "1.0.0", timeout=120).result
    assert got["type"] == "WaitTimeout" and got["exit_code"] == 5, got
    assert f"the Hub at http://127.0.0.1:{silent.port} did not answer within 1 s" in got["error"], got
    assert "TINYBENCH_HUB_TIMEOUT" in got["error"] and got["seconds"] < 60, got
