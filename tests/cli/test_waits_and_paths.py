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

pytestmark = pytest.mark.slow  # end to end: each test takes seconds to minutes


def _cli(args, env=None, timeout=240):
    return subprocess.run([sys.executable, "-m", "tinybench_builder", *args], capture_output=True, text=True, timeout=timeout,
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
    """A TCP server on 127.0.0.1 that accepts every connection and never answers (or only sends
    ``banner``, as an SSH server does, and then waits)."""

    def __init__(self, banner: bytes = b""):
        import socket
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.held = []
        self.banner = banner
        self.stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        self.sock.settimeout(0.2)
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
                self.held.append(conn)
                if self.banner:
                    conn.sendall(self.banner)
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
           "HF_HUB_ETAG_TIMEOUT": "1", "HF_HUB_DOWNLOAD_TIMEOUT": "1",
           "HF_HUB_OFFLINE": "0"}  # online even inside an offline run (the fresh-clone test's)
    got = run_in_client(env, hub_clients.timed_publish, str(folder), REPO, "1.0.0", timeout=120).result
    assert got["type"] == "WaitTimeout" and got["exit_code"] == 5, got
    assert f"the Hub at http://127.0.0.1:{silent.port} did not answer within 1 s" in got["error"], got
    assert "TINYBENCH_HUB_TIMEOUT" in got["error"] and got["seconds"] < 60, got


@pytest.mark.parametrize("banner, message", [
    (b"", "accepts connections but sent no Dask handshake within 2 s: it is not a Dask scheduler"),
    (b"SSH-2.0-OpenSSH_9.6\r\n", "does not speak Dask's protocol (it sent b'SSH-2.0-'): it is not a Dask scheduler"),
], ids=["silent", "ssh-banner"])
def test_a_scheduler_address_where_dask_does_not_answer_fails_within_the_bound(banner, message, tmp_path):
    import time

    pytest.importorskip("distributed")
    root = write_lm_eval_tree(tmp_path / "lm", n_models=2)
    server = _Silent(banner)
    try:
        t0 = time.monotonic()
        proc = _cli(["ingest", str(root), "--out", str(tmp_path / "o.parquet"), "--scheduler",
                     f"tcp://127.0.0.1:{server.port}"], env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"},
                    timeout=120)
        seconds = time.monotonic() - t0
    finally:
        server.close()
    assert proc.returncode == (5 if not banner else 2), (proc.returncode, proc.stderr[-1500:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: the server at tcp://127.0.0.1:{server.port} "), lines
    assert message in lines[0], lines
    assert seconds < 60 and not (tmp_path / "o.parquet").exists()


def test_a_run_whose_workers_are_all_gone_stops_within_the_bound(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")

    from tinybench_builder.errors import WaitTimeout
    from tinybench_builder.read.ingest import ingest

    root = write_lm_eval_tree(tmp_path / "lm", n_models=8)
    monkeypatch.setenv("TINYBENCH_WORKER_WAIT", "3")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        killed = []
        import time

        def kill_all(done, total, failed):
            if done == 2 and not killed:  # every worker leaves (with the parts it holds); none comes back
                cluster.scale(0)
                killed.append(True)
                # scale(0) returns before the worker is gone: wait until the scheduler has none, so that
                # the run cannot fetch the parts first (it did under load: the run then simply succeeded)
                deadline = time.monotonic() + 60
                while client.scheduler_info()["workers"] and time.monotonic() < deadline:
                    time.sleep(0.05)
                assert not client.scheduler_info()["workers"], "the cluster kept its worker after scale(0)"

        t0 = time.monotonic()
        with pytest.raises(WaitTimeout, match=r"every Dask worker of tcp://127\.0\.0\.1:\d+ is gone and none joined "
                                              r"within 3 s .*TINYBENCH_WORKER_WAIT"):
            ingest([root], scheduler=client, progress=kill_all)
        assert killed and time.monotonic() - t0 < 90


_ABANDONED_GATHER = """
import gc, logging, sys, time
import distributed
from tinybench_builder.read.sources.dask_map import _gather, dask_client

if __name__ == "__main__":
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, silence_logs=logging.CRITICAL) as cluster:
        with dask_client(cluster.scheduler_address) as client:
            # what distributed's client logs when a worker holding results is gone (the run says it itself)
            logging.getLogger("distributed.client").warning("Couldn't gather 16 keys, rescheduling")
            future = client.submit(time.sleep, 30, pure=False)  # never done within the bound
            try:
                _gather(client, [future], 0.5)
            except TimeoutError:
                print("bounded", flush=True)
            del future
        gc.collect()  # the abandoned waits of distributed's gather end here, with the client
        print("closed", flush=True)
"""


def test_a_bounded_gather_that_ran_out_prints_no_traceback(tmp_path):
    """When every worker is gone the run stops with one error line, but a Python traceback came
    with it: distributed's gather waits on each key in tasks of its own, which our bound (the
    gather's callback_timeout) cancels from outside; left behind, they end with AllExit when the
    client closes and asyncio prints "Task exception was never retrieved" and a traceback. The
    mechanism, made deterministic: a gather of a task that never finishes within the bound. And
    distributed's own warning about the lost results ("Couldn't gather N keys, rescheduling")
    stays off stderr on a --scheduler client of ours, as on the local cluster."""
    pytest.importorskip("distributed")
    script = tmp_path / "abandoned.py"
    script.write_text(_ABANDONED_GATHER)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.split() == ["bounded", "closed"], (proc.stdout, proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr and "never retrieved" not in proc.stderr, proc.stderr[-3000:]
    assert "Couldn't gather" not in proc.stderr, proc.stderr[-3000:]


def test_an_ingest_of_hub_models_from_a_stalled_hub_fails_within_the_bound(silent, tmp_path):
    """``ingest --hub-models`` hung forever on a Hub that accepts and never answers (the Hub
    client has no timeout): now the model fails after the bound, named with what was awaited."""
    import time

    models = tmp_path / "models.txt"
    models.write_text("org/model-a\n")
    out = tmp_path / "o.parquet"
    env = {"HF_ENDPOINT": f"http://127.0.0.1:{silent.port}", "HF_HOME": str(tmp_path / "hf"), "HF_TOKEN": "hf_dummy",
           "HF_HUB_DISABLE_XET": "1", "TINYBENCH_HUB_TIMEOUT": "1", "HF_HUB_ETAG_TIMEOUT": "1",
           "HF_HUB_DOWNLOAD_TIMEOUT": "1", "HF_HUB_OFFLINE": "0"}  # online even inside an offline run
    t0 = time.monotonic()
    proc = _cli(["ingest", "--hub-models", str(models), "--task", "mmlu", "--out", str(out), "--retries", "1",
                 "--jobs", "1", "--progress", "none"], env=env, timeout=120)
    assert proc.returncode == 3, (proc.returncode, proc.stderr[-1500:])
    expected = (f"org/model-a (hub:details_org__model-a): the Hub at http://127.0.0.1:{silent.port} did not answer "
                "in time (a request's bound: 1 s, TINYBENCH_HUB_TIMEOUT")
    assert expected in proc.stderr, proc.stderr
    assert "[2 attempt(s)]" in proc.stderr and time.monotonic() - t0 < 60 and not out.exists()
