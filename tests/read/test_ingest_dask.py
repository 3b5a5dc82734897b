"""``ingest`` on Dask: a 2-worker LocalCluster (processes on 127.0.0.1) gives exactly the local
matrix (items, order, NaN, item information, notes) on lm-eval, Open LLM Leaderboard v1 and HELM
trees; bad input stops the run as locally; a worker killed mid-run still gives the full matrix.

One cluster serves the whole module; the CLI tests that need their own (``--workers 2``, Hub
downloads) start it in a subprocess.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

from tinybench_builder.cli.ingest import add_ingest_arguments, run_ingest  # noqa: E402
from tinybench_builder.read.ingest import ingest  # noqa: E402
from tinybench_builder.read.matrix import ResponseMatrix  # noqa: E402
from tinybench_builder.read.sources import SourceError  # noqa: E402
from tinybench_builder.read.sources.dask_map import ClusterError  # noqa: E402
from helpers.ingest_trees import TS_NEW, v1_repo_files, write_helm_tree, write_lm_eval_tree, write_v1_tree  # noqa: E402

pytestmark = pytest.mark.slow  # end to end: each test takes seconds to minutes

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    root = tmp_path_factory.mktemp("trees")
    return {"lm": write_lm_eval_tree(root / "lm", n_models=10), "v1": write_v1_tree(root / "v1", n_models=6),
            "helm": write_helm_tree(root / "helm", n_models=6)}


def _same(a: ResponseMatrix, b: ResponseMatrix) -> None:
    assert a.models == b.models
    assert a.items == b.items
    np.testing.assert_array_equal(a.scores, b.scores)  # NaN in the same places
    pd.testing.assert_frame_equal(a.item_info, b.item_info)
    assert a.notes == b.notes


def _cluster_is_idle(client) -> bool:
    """No task of ours left on the scheduler (released futures are forgotten shortly after)."""
    deadline = time.time() + 5
    while time.time() < deadline:
        if client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)) == 0:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("tree,kw,notes", [
    ("lm", {}, ["2 runs, using the newest", "partial run: 20 of 40 documents"]),
    ("lm", {"task": "wmdp_bio"}, ["partial run"]),
    ("v1", {}, ["arc: 2 runs, using the newest complete one", "partial run: arc (300 of 1172 rows",
                "skipped run(s) 2024-01-10T10-00-00.000000 (old MMLU prompt"]),
    ("helm", {"task": "mmlu"}, ["mmlu/virology: 2 runs"]),
])
def test_local_cluster_gives_the_local_matrix(client, trees, tree, kw, notes):
    local = ingest([trees[tree]], **kw)
    dist = ingest([trees[tree]], scheduler=client, **kw)
    _same(local, dist)
    assert np.isnan(dist.scores).any()
    for n in notes:
        assert any(n in x for x in dist.notes), n
    assert _cluster_is_idle(client)


def test_mixed_sources_and_a_table_give_the_local_matrix(client, trees, tmp_path):
    table = tmp_path / "extra.csv"
    pd.DataFrame({"model": ["other/x"] * 3, "item": ["wmdp_bio.0", "wmdp_bio.1", "wmdp_bio.99"],
                  "score": [1, 0, 1]}).to_csv(table, index=False)
    sources = [trees["lm"], table, trees["lm"] / "org__m3"]  # the same folder twice: identical duplicates
    _same(ingest(sources), ingest(sources, scheduler=client))


def test_bad_input_stops_the_run_with_the_local_message(client, tmp_path):
    root = write_lm_eval_tree(tmp_path / "lm", n_models=6)
    f = root / "org__m4" / "samples_wmdp_cyber_2024-02-20T10-00-00.000000.jsonl"
    f.write_text(f.read_text()[:-30])
    with pytest.raises(SourceError) as local:
        ingest([root])
    with pytest.raises(SourceError) as dist:
        ingest([root], scheduler=client)
    assert str(dist.value) == str(local.value) and str(f) in str(dist.value)
    assert _cluster_is_idle(client)
    # conflicting scores across two sources: the same message too
    import json
    import shutil

    copy = shutil.copytree(root / "org__m1", tmp_path / "copy" / "org__m1")
    g = copy / "samples_wmdp_bio_2024-02-20T10-00-00.000000.jsonl"
    lines = g.read_text().splitlines()
    rec = json.loads(lines[3])
    rec["acc"] = 1.0 - rec["acc"]
    g.write_text("\n".join(lines[:3] + [json.dumps(rec)] + lines[4:]) + "\n")
    sources = [root / "org__m1", root / "org__m0", tmp_path / "copy"]
    with pytest.raises(SourceError, match="conflicting scores for model 'org/m1', item 'wmdp_bio.3'") as local:
        ingest(sources)
    with pytest.raises(SourceError) as dist:
        ingest(sources, scheduler=client)
    assert str(dist.value) == str(local.value)
    assert _cluster_is_idle(client)


def test_a_worker_killed_mid_run_still_gives_the_full_matrix(client, trees):
    local = ingest([trees["lm"]])
    pids = client.run(os.getpid)
    killed = []

    def kill_one(done, total, failed):
        if done == 3 and not killed:  # 3 of 10 models read, the others still to come
            held = [(key, w) for key, ws in client.who_has().items() if key.startswith("ingest-read-") for w in ws]
            key, worker = held[0]  # a worker that holds parts the reduce still needs
            os.kill(pids[worker], signal.SIGKILL)
            killed.append((pids[worker], key.rsplit("-", 1)[0]))

    dist = ingest([trees["lm"]], scheduler=client, progress=kill_one)
    assert len(killed) == 1
    _same(local, dist)
    # the parts the dead worker held were read again (the scheduler's lineage), not lost
    log = client.run_on_scheduler(lambda dask_scheduler: [t[:3] for t in dask_scheduler.transition_log])
    pid, run = killed[0]
    computed = Counter(key for key, _, finish in log if finish == "memory" and str(key).startswith(run + "-"))
    assert len(computed) == 10 and max(computed.values()) >= 2
    assert pid not in client.run(os.getpid).values()  # it really died
    client.wait_for_workers(2, timeout=30)  # the nanny restarts it for the next tests


# --------------------------------------------------------------------------- the CLI
def _parse(argv):
    parser = argparse.ArgumentParser()
    add_ingest_arguments(parser)
    return parser.parse_args(argv)


def test_cli_scheduler_address_writes_the_local_table(client, trees, tmp_path, capsys):
    address = client.scheduler.address
    assert address.startswith("tcp://127.0.0.1:")
    local, dist = tmp_path / "local.parquet", tmp_path / "dist.parquet"
    assert run_ingest(_parse([str(trees["v1"]), "--task", "arc", "--out", str(local), "--progress", "none"])) == 0
    capsys.readouterr()
    assert run_ingest(_parse([str(trees["v1"]), "--task", "arc", "--out", str(dist), "--scheduler", address])) == 0
    out = capsys.readouterr().out
    assert f"on Dask cluster {address}, 2 workers; failed models: 0" in out
    assert "org/v1: partial run: arc (300 of 1172 rows" in out
    pd.testing.assert_frame_equal(pd.read_parquet(local), pd.read_parquet(dist))


def test_cli_unreachable_scheduler_is_an_error_line(trees, tmp_path, capsys):
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        rc = run_ingest(_parse([str(trees["lm"]), "--out", str(tmp_path / "o.parquet"),
                                "--scheduler", "tcp://127.0.0.1:9"]))
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: cannot reach the Dask scheduler at tcp://127.0.0.1:9")
    assert not (tmp_path / "o.parquet").exists()
    with pytest.raises(ClusterError, match="--workers must be at least 1"):
        ingest([trees["lm"]], executor="dask", workers=0)


def _run_cli(args, env=None, timeout=240):
    env = dict(env or os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return subprocess.run([sys.executable, "-m", "tinybench_builder", "ingest", *args], env=env, capture_output=True,
                          text=True, timeout=timeout, cwd=str(REPO))


def test_cli_workers_2_starts_a_local_cluster(trees, tmp_path):
    out = tmp_path / "w2.parquet"
    proc = _run_cli([str(trees["helm"]), "--task", "mmlu", "--out", str(out), "--workers", "2"])
    assert proc.returncode == 0, proc.stderr
    assert "on Dask LocalCluster tcp://127.0.0.1:" in proc.stdout and ", 2 workers; failed models: 0" in proc.stdout
    assert "reading: 6/6 models (100%)" in proc.stderr  # not a terminal: a line every 10%
    pd.testing.assert_frame_equal(pd.read_parquet(out), ingest([trees["helm"]], task="mmlu").to_frame())


# --------------------------------------------------------------------------- Hub downloads in the map
def test_hub_details_are_downloaded_by_the_workers(tmp_path):
    """Six models on a loopback Hub: two in open-llm-leaderboard, one only in the -old org, one
    whose newest run is partial (an older complete run is fetched and used), one whose first
    download is refused (retried by Dask), one that always fails (reported, exit 3), and one
    without any repo (reported at once). The others equal a local read of the same files."""
    from helpers.hub import HubServer

    local_root = tmp_path / "local"
    models = {0: "open-llm-leaderboard", 1: "open-llm-leaderboard-old", 2: "open-llm-leaderboard",
              3: "open-llm-leaderboard", 4: "open-llm-leaderboard"}
    with HubServer(token="hf_dask_test") as hub:
        for k, org in models.items():
            repo = f"{org}/details_org__v{k}"
            hub.create_repo(repo)
            files = v1_repo_files(k)
            hub.commit_files(repo, files)
            if k != 3:
                for rel, data in files.items():
                    (local_root / f"details_org__v{k}" / rel).parent.mkdir(parents=True, exist_ok=True)
                    (local_root / f"details_org__v{k}" / rel).write_bytes(data)
        once = hub.inject_fault("http403", r"details_org__v2/resolve/.*gsm8k", times=1)  # a retry reads it
        always = hub.inject_fault("http403", r"details_org__v3/resolve/.*gsm8k", times=10_000)
        model_list = tmp_path / "models.txt"
        model_list.write_text("# six models\norg/v0\norg/v1\norg/v2\norg/v3\norg/v4\norg/missing\n")
        out = tmp_path / "hub.parquet"
        env = hub.client_env(tmp_path / "hf_home", token="hf_dask_test")
        proc = _run_cli(["--hub-models", str(model_list), "--out", str(out), "--workers", "2", "--retries", "2",
                         "--hub-cache", str(tmp_path / "cache")], env=env)
        assert once.hits == 1 and always.hits == 3  # 1 + 2 retries, no more
    assert proc.returncode == 3, proc.stderr
    err = proc.stderr
    assert "error: 2 of 6 model(s) could not be read after their retries and are NOT in the matrix:" in err
    assert "org/v3 (hub:details_org__v3): LocalEntryNotFoundError" in err and "403 Forbidden" in err
    assert "[3 attempt(s)]" in err
    assert "org/missing (hub:details_org__missing): ModelUnavailable: no details repo" in err
    assert "[1 attempt(s)]" in err
    failed = (tmp_path / "hub.failed.txt").read_text().splitlines()[1:]
    assert [ln.split("\t")[0] for ln in failed] == ["org/v3", "org/missing"]
    got = ResponseMatrix.read(out)
    local = ingest([local_root])
    assert got.models == local.models == ["org/v0", "org/v1", "org/v2", "org/v4"]
    assert "org/v4: arc: 2 runs, using the newest complete one (2024-01-10T10-00-00.000000)" in local.notes
    pd.testing.assert_frame_equal(got.to_frame(), local.to_frame())
    for note in local.notes:  # superseded and partial runs, reported as for local folders
        assert note in proc.stdout
    cache = tmp_path / "cache"
    assert list(cache.glob("datasets--open-llm-leaderboard-old--details_org__v1/snapshots/*/*"))
    # only the runs the reader opens are fetched: not model 0's superseded ARC run
    v0 = {p.name for p in cache.glob("datasets--open-llm-leaderboard--details_org__v0/snapshots/*/*/*")}
    assert v0 == {f"details_harness|arc:challenge|25_{TS_NEW}.parquet", f"details_harness|gsm8k|5_{TS_NEW}.parquet"}
