"""The BenchPred peer rows: NaN filling, cache keys, cache hits, the worker protocol.

BenchPred itself is not needed: a fake ``peers_python`` (a shell script) runs the real
``peers_worker.py`` under this interpreter with a fake ``benchpred`` package (and a fake
``torch``) on its path, and counts its own starts. One smoke test runs the real BenchPred
when its venv exists (skipped otherwise); one checks that the committed cache matches the
real data (skipped when ../shared/data is absent).
"""

import json
import os
import stat
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from benchmarks import peers, protocols

FAKE_BENCHPRED = '''
import numpy as np

class FirstK:
    """coreset = the first k items; prediction = their mean."""
    def fit(self, scores, k, seed=42):
        assert not np.isnan(scores).any()
        self.idx = np.arange(k)
        return self
    def get_coreset(self):
        return self.idx
    def predict(self, x):
        return x.mean(1)

class SeededRandom(FirstK):
    """coreset = k items drawn with the seed; prints to stdout (must not break the protocol)."""
    def fit(self, scores, k, seed=42):
        print("noise on stdout")
        self.idx = np.random.default_rng(seed).permutation(scores.shape[1])[:k]
        return self

class Broken(FirstK):
    def fit(self, scores, k, seed=42):
        raise AssertionError("num_data > coreset_size")

class Crash(FirstK):
    def fit(self, scores, k, seed=42):
        import os
        os._exit(9)

class Slow(FirstK):
    """writes its pid to $FAKE_PID_DIR, then sleeps (to be interrupted)."""
    def fit(self, scores, k, seed=42):
        import os, time
        open(os.path.join(os.environ["FAKE_PID_DIR"], str(os.getpid())), "w").close()
        time.sleep(120)
        return super().fit(scores, k, seed)

all_methods = {"first_k": FirstK, "seeded": SeededRandom, "broken": Broken, "crash": Crash, "slow": Slow}
'''


@pytest.fixture
def fake_python(tmp_path):
    """A fake peers interpreter: runs the real worker with a fake benchpred; logs each start."""
    site = tmp_path / "fake_site"
    (site / "benchpred").mkdir(parents=True)
    (site / "benchpred" / "__init__.py").write_text(FAKE_BENCHPRED)
    dist = site / f"benchpred-{peers.BENCHPRED_VERSION}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: benchpred\nVersion: {peers.BENCHPRED_VERSION}\n")
    (site / "torch.py").write_text("__version__ = 'fake'\ndef set_num_threads(n):\n    pass\n")
    starts = tmp_path / "starts.log"
    script = tmp_path / "fakepy"
    script.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        echo "$OMP_NUM_THREADS" >> "{starts}"
        PYTHONPATH="{site}" exec "{sys.executable}" "$@"
        """))
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return FakePython(script, starts)


class FakePython(os.PathLike):
    """Path of the fake interpreter, plus how often it was started."""

    def __init__(self, path, log):
        self.path, self.log = Path(path), Path(log)

    def __fspath__(self):
        return str(self.path)

    def __str__(self):
        return str(self.path)

    def starts(self):
        return len(self.log.read_text().splitlines()) if self.log.exists() else 0


def small_matrix(seed=0, n_models=24, n_items=40, nan_share=0.1):
    rng = np.random.default_rng(seed)
    Y = (rng.random((n_models, n_items)) < rng.random((n_models, 1))).astype(float)
    Y[rng.random(Y.shape) < nan_share] = np.nan
    models = [f"model-{i}" for i in range(n_models)]
    items = [f"item-{j}" for j in range(n_items)]
    return Y, models, items


# ----------------------------------------------------------------------------- NaN filling

def test_nan_filled_with_training_column_means_in_both_matrices():
    train = np.array([[1.0, np.nan, np.nan], [0.0, 1.0, np.nan], [1.0, 0.0, np.nan]])
    test = np.array([[np.nan, np.nan, np.nan], [0.0, 1.0, 1.0]])
    train_in, test_in = train.copy(), test.copy()
    tr, te = peers.fill_nan_with_train_means(train, test)
    grand = 3.0 / 5.0  # the training values: 1, 0, 1, 1, 0
    np.testing.assert_allclose(tr, [[1, 0.5, grand], [0, 1, grand], [1, 0, grand]])
    np.testing.assert_allclose(te, [[2 / 3, 0.5, grand], [0, 1, 1]])
    np.testing.assert_array_equal(train, train_in)  # inputs untouched
    np.testing.assert_array_equal(test, test_in)


def test_nan_filling_checks_shapes():
    with pytest.raises(ValueError, match="items"):
        peers.fill_nan_with_train_means(np.zeros((3, 4)), np.zeros((2, 5)))
    with pytest.raises(ValueError, match="2-D"):
        peers.fill_nan_with_train_means(np.zeros(4), np.zeros((2, 4)))


def test_nan_filling_of_an_all_missing_training_matrix_gives_zero():
    tr, te = peers.fill_nan_with_train_means(np.full((2, 3), np.nan), np.full((1, 3), np.nan))
    assert not np.isnan(tr).any() and not np.isnan(te).any()


# ----------------------------------------------------------------------------- cache key

def test_cache_key_changes_with_data_split_k_seed_method_and_version():
    Y, models, items = small_matrix()
    train, test = protocols.split("interpolation", Y, models, 0)
    digest = peers.data_digest(Y, models, items)
    base = peers.cache_key(digest, train, test, 10, 0, "lasso")
    # same content, other memory order and other NaN bit pattern: same key
    Y_f = np.asfortranarray(Y.copy())
    Y_f[np.isnan(Y_f)] = -np.float64("nan")
    assert peers.data_digest(Y_f, models, items) == digest
    assert peers.cache_key(digest, list(train), list(test), 10, 0, "lasso") == base

    Y2 = Y.copy()
    Y2[0, np.flatnonzero(~np.isnan(Y[0]))[0]] = 0.5
    Y3 = Y.copy()
    Y3[1, np.flatnonzero(~np.isnan(Y[1]))[0]] = np.nan
    digests = {
        "value": peers.data_digest(Y2, models, items),
        "nan": peers.data_digest(Y3, models, items),
        "model": peers.data_digest(Y, ["renamed"] + models[1:], items),
        "item": peers.data_digest(Y, models, items[:-1] + ["other"]),
        "models order": peers.data_digest(Y[::-1], models[::-1], items),
    }
    assert digest not in digests.values() and len(set(digests.values())) == len(digests)
    train1, test1 = protocols.split("interpolation", Y, models, 1)
    keys = [
        base,
        *(peers.cache_key(d, train, test, 10, 0, "lasso") for d in digests.values()),
        peers.cache_key(digest, train1, test1, 10, 0, "lasso"),  # split of another seed
        peers.cache_key(digest, train[1:], test, 10, 0, "lasso"),  # one model fewer
        peers.cache_key(digest, test, train, 10, 0, "lasso"),  # roles swapped
        peers.cache_key(digest, train, test, 11, 0, "lasso"),
        peers.cache_key(digest, train, test, 10, 1, "lasso"),
        peers.cache_key(digest, train, test, 10, 0, "pca"),
        peers.cache_key(digest, train, test, 10, 0, "lasso", benchpred_version="1.0.1"),
    ]
    assert len(set(keys)) == len(keys)


def test_data_digest_checks_shapes():
    with pytest.raises(ValueError, match="models"):
        peers.data_digest(np.zeros((3, 4)), ["a", "b"], list("wxyz"))


def test_read_cached_ignores_stale_corrupt_and_missing_files(tmp_path):
    path = tmp_path / "r.json"
    assert peers.read_cached(path, "k") is None
    peers.write_cached(path, {"key": "k", "pred": [0.5]})
    assert peers.read_cached(path, "k")["pred"] == [0.5]
    assert peers.read_cached(path, "other") is None
    path.write_text("{not json")
    assert peers.read_cached(path, "k") is None
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temp file left behind


# ----------------------------------------------------------------------------- API + worker

def test_peer_predictions_runs_the_worker_once_then_reads_the_cache(tmp_path, fake_python):
    Y, models, items = small_matrix()
    cache = tmp_path / "cache"
    seen = []
    res = peers.peer_predictions("sim", Y, models, items, "interpolation", 3, 10, ["first_k", "seeded"],
                                 cache, fake_python, on_result=seen.append)
    assert fake_python.starts() == 1
    assert (tmp_path / "starts.log").read_text().split() == ["1"]  # one BLAS thread per worker
    assert sorted(r["method"] for r in seen) == ["first_k", "seeded"] and not any(r["cached"] for r in seen)
    train, test = protocols.split("interpolation", Y, models, 3)
    tr_filled, te_filled = peers.fill_nan_with_train_means(Y[train], Y[test])
    assert res["first_k"]["coreset"] == list(range(10))
    np.testing.assert_allclose(res["first_k"]["pred"], te_filled[:, :10].mean(1))
    assert res["first_k"]["pred"].shape == (len(test),) and res["first_k"]["error"] is None
    assert res["seeded"]["coreset"] == list(np.random.default_rng(3).permutation(len(items))[:10])
    assert res["first_k"]["seconds"] >= 0

    record = json.loads(peers.cache_path(cache, "sim", "interpolation", 3, 10, "first_k").read_text())
    assert record["test_models"] == [models[i] for i in test] and record["method"] == "first_k"
    assert "train" not in record and len(json.dumps(record)) < 4000  # no matrices in the cache

    # a hit never starts the worker, with or without an interpreter
    seen.clear()
    again = peers.peer_predictions("sim", Y, models, items, "interpolation", 3, 10, ["first_k", "seeded"],
                                   cache, fake_python, on_result=seen.append)
    assert fake_python.starts() == 1 and all(r["cached"] for r in seen)
    cache_only = peers.peer_predictions("sim", Y, models, items, "interpolation", 3, 10, ["seeded", "first_k"],
                                        cache, None)
    for m in ("first_k", "seeded"):
        np.testing.assert_array_equal(again[m]["pred"], res[m]["pred"])
        np.testing.assert_array_equal(cache_only[m]["pred"], res[m]["pred"])

    # only the missing method runs; a changed seed or matrix misses
    peers.peer_predictions("sim", Y, models, items, "interpolation", 3, 10, ["first_k", "broken"], cache,
                           fake_python)
    assert fake_python.starts() == 2
    Y2 = Y.copy()
    Y2[0, 0] = 1.0 - np.nan_to_num(Y[0, 0])
    with pytest.raises(peers.PeersUnavailableError, match="(?s)not cached.*python -m venv"):
        peers.peer_predictions("sim", Y2, models, items, "interpolation", 3, 10, ["first_k"], cache, None)
    with pytest.raises(peers.PeersUnavailableError, match="does not exist"):
        peers.peer_predictions("sim", Y, models, items, "interpolation", 4, 10, ["first_k"], cache,
                               tmp_path / "no-python")
    peers.peer_predictions("sim", Y2, models, items, "interpolation", 3, 10, ["first_k"], cache, fake_python)
    assert fake_python.starts() == 3


def test_a_failing_method_is_reported_and_cached_without_stopping_the_others(tmp_path, fake_python):
    Y, models, items = small_matrix(1)
    cache = tmp_path / "cache"
    res = peers.peer_predictions("sim", Y, models, items, "extrapolation", 0, 10, ["broken", "first_k"],
                                 cache, fake_python)
    assert "AssertionError: num_data > coreset_size" in res["broken"]["error"]
    assert np.isnan(res["broken"]["pred"]).all() and res["first_k"]["error"] is None
    again = peers.peer_predictions("sim", Y, models, items, "extrapolation", 0, 10, ["broken"], cache, None)
    assert again["broken"]["error"] == res["broken"]["error"] and fake_python.starts() == 1


def test_a_crashing_worker_raises_and_keeps_the_results_it_sent(tmp_path, fake_python):
    Y, models, items = small_matrix(2)
    cache = tmp_path / "cache"
    with pytest.raises(peers.PeerWorkerError, match=r"exited with code 9 before answering for \['crash'"):
        peers.peer_predictions("sim", Y, models, items, "interpolation", 0, 10, ["first_k", "crash", "seeded"],
                               cache, fake_python)
    assert peers.cache_path(cache, "sim", "interpolation", 0, 10, "first_k").exists()
    assert not peers.cache_path(cache, "sim", "interpolation", 0, 10, "seeded").exists()
    res = peers.peer_predictions("sim", Y, models, items, "interpolation", 0, 10, ["first_k"], cache, None)
    assert res["first_k"]["error"] is None


def test_worker_refuses_another_benchpred_version(tmp_path, fake_python):
    Y, models, items = small_matrix()
    with pytest.raises(peers.PeerWorkerError, match="benchpred 1.0.0 is installed, the cache expects 9.9"):
        peers.run_worker(fake_python, np.zeros((4, 12)), np.zeros((2, 12)), 3, 0, ["first_k"],
                         benchpred_version="9.9")


def test_worker_without_benchpred_says_how_to_make_the_venv(tmp_path):
    with pytest.raises(peers.PeerWorkerError, match="(?s)cannot import benchpred.*python -m venv"):
        peers.run_worker(sys.executable, np.zeros((4, 12)), np.zeros((2, 12)), 3, 0, ["first_k"])


def test_worker_protocol_violations_raise(tmp_path):
    liar = tmp_path / "liar.py"
    liar.write_text('import json\nprint(json.dumps({"event": "result", "method": "m", "pred": [1.0]}))\n')
    with pytest.raises(peers.PeerWorkerError, match="wrong length"):
        peers.run_worker(sys.executable, np.zeros((4, 12)), np.zeros((2, 12)), 3, 0, ["m"], worker_script=liar)
    liar.write_text('print("hello")\n')
    with pytest.raises(peers.PeerWorkerError, match="non-JSON"):
        peers.run_worker(sys.executable, np.zeros((4, 12)), np.zeros((2, 12)), 3, 0, ["m"], worker_script=liar)
    with pytest.raises(ValueError, match="fill NaN"):
        peers.run_worker(sys.executable, np.full((4, 12), np.nan), np.zeros((2, 12)), 3, 0, ["m"])


def test_peer_predictions_checks_its_input(tmp_path):
    Y, models, items = small_matrix()
    with pytest.raises(ValueError, match="k must be"):
        peers.peer_predictions("sim", Y, models, items, "interpolation", 0, len(items), ["first_k"], tmp_path)
    with pytest.raises(ValueError, match="shape"):
        peers.peer_predictions("sim", Y[:, 1:], models, items, "interpolation", 0, 10, ["first_k"], tmp_path)
    with pytest.raises(ValueError, match="protocol"):
        peers.peer_predictions("sim", Y, models, items, "sideways", 0, 10, ["first_k"], tmp_path)


def test_random_k_mae_matches_a_direct_computation():
    Y, models, items = small_matrix(4, nan_share=0.0)
    truth = Y.mean(1)
    rng = np.random.default_rng(1007)
    direct = np.mean([np.abs(Y[:, rng.choice(Y.shape[1], 5, replace=False)].mean(1) - truth).mean()
                      for _ in range(20)])
    assert peers.random_k_mae(Y, truth, 5, draws=20, seed=7) == pytest.approx(direct)
    assert peers.random_k_mae(Y, truth, Y.shape[1], draws=3) == pytest.approx(0.0)


# ----------------------------------------------------------------------------- CLI

def _write_sim(tmp_path, name="sim"):
    import pandas as pd

    Y, models, items = small_matrix(5, n_models=30, n_items=50)
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    pd.DataFrame(Y, index=pd.Index(models, name="model"), columns=items).to_parquet(data / f"{name}.parquet")
    return data


def test_cli_fills_the_cache_then_prints_the_table_from_it(tmp_path, fake_python, capsys):
    data = _write_sim(tmp_path)
    common = ["--data-dir", str(data), "--datasets", "sim", "--seeds", "0", "1", "--anchors", "10",
              "--methods", "first_k", "seeded", "--cache-dir", str(tmp_path / "cache")]
    assert peers.main(common + ["--peers-python", str(fake_python), "--jobs", "2",
                                "--json", str(tmp_path / "rows.json")]) == 0
    first = capsys.readouterr()
    assert fake_python.starts() == 4  # 2 protocols x 2 seeds
    assert "8 peer results computed" in first.err
    assert "### interpolation: MAE / random-k" in first.out and "| sim | 22/8 | 1 |" in first.out
    assert "| sim | 15/9 |" in first.out  # extrapolation: bottom half / top 30%
    rows = json.loads((tmp_path / "rows.json").read_text())
    assert {r["method"] for r in rows} == {"random-k", "first_k", "seeded"} and len(rows) == 12
    assert peers.main(common) == 0  # cache only: no interpreter needed
    second = capsys.readouterr()
    assert fake_python.starts() == 4 and "0 peer results computed, 8 read" in second.err
    assert second.out == first.out  # same table


def test_cli_sigterm_kills_its_workers_and_keeps_finished_results(tmp_path, fake_python):
    import signal
    import subprocess
    import time

    data = _write_sim(tmp_path)
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(Path(peers.__file__).resolve().parents[1]), "FAKE_PID_DIR": str(pid_dir)}
    cli = subprocess.Popen([sys.executable, "-m", "benchmarks.peers", "--data-dir", str(data), "--datasets", "sim",
                            "--seeds", "0", "--anchors", "10", "--methods", "first_k", "slow", "--jobs", "2",
                            "--cache-dir", str(cache), "--peers-python", str(fake_python)],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(list(pid_dir.iterdir())) < 2 and time.monotonic() < deadline:  # both workers inside "slow"
        time.sleep(0.1)
    assert len(list(pid_dir.iterdir())) == 2
    cli.send_signal(signal.SIGTERM)
    out, err = cli.communicate(timeout=30)
    assert cli.returncode == 130 and "error: interrupted" in err and "Traceback" not in err
    for pid_file in pid_dir.iterdir():  # no worker left running
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid_file.name), 0)
    for protocol in protocols.PROTOCOLS:  # what finished before the signal is kept
        assert peers.cache_path(cache, "sim", protocol, 0, 10, "first_k").exists()
        assert not peers.cache_path(cache, "sim", protocol, 0, 10, "slow").exists()


def test_cli_errors_are_one_line_with_the_recipe(tmp_path, capsys):
    data = _write_sim(tmp_path)
    assert peers.main(["--data-dir", str(data), "--datasets", "nothing"]) == 2
    assert "error:" in capsys.readouterr().err
    assert peers.main(["--data-dir", str(data), "--datasets", "sim", "--seeds", "0", "--anchors", "10",
                       "--methods", "first_k", "--cache-dir", str(tmp_path / "c")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: 2 of 2") and "python -m venv /work/.venv-peers" in err
    assert peers.main(["--data-dir", str(data), "--datasets", "sim", "--peers-python", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert peers.main(["--data-dir", str(data), "--datasets", "sim", "--anchors", "50"]) == 2
    assert "--anchors 50 must be in 2..49" in capsys.readouterr().err


# ----------------------------------------------------------------------------- real BenchPred, real data

PEERS_PYTHON = Path(os.environ.get(peers.DEFAULT_PEERS_PYTHON_ENV, "/work/.venv-peers/bin/python"))


@pytest.mark.skipif(not PEERS_PYTHON.exists(), reason="no BenchPred venv (see benchmarks/peers.py)")
def test_real_benchpred_worker_smoke(tmp_path):
    Y, models, items = small_matrix(6, n_models=30, n_items=60)
    res = peers.peer_predictions("sim", Y, models, items, "interpolation", 0, 10,
                                 ["random_sampling", "aipw", "anchor_points_weighted"], tmp_path, PEERS_PYTHON)
    train, test = protocols.split("interpolation", Y, models, 0)
    _, te = peers.fill_nan_with_train_means(Y[train], Y[test])
    rs = res["random_sampling"]
    assert len(rs["coreset"]) == 10 and rs["error"] is None
    np.testing.assert_allclose(rs["pred"], te[:, rs["coreset"]].mean(1))
    for m in ("aipw", "anchor_points_weighted"):
        assert res[m]["error"] is None and np.isfinite(res[m]["pred"]).all()


DATA = peers.DEFAULT_DATA


@pytest.mark.realdata
@pytest.mark.skipif(not DATA.exists(), reason="../shared/data is absent")
def test_committed_cache_matches_the_real_data():
    """Every committed peer result is fresh: the accuracy benchmark never needs BenchPred."""
    from tinybench_builder.read.matrix import ResponseMatrix

    if not any(peers.DEFAULT_CACHE_DIR.glob("*/*.json")):
        pytest.skip("no committed peer cache")
    for name in protocols.ACCURACY_DATASETS:
        m = ResponseMatrix.read(DATA / f"{name}.parquet")
        for protocol in protocols.PROTOCOLS:
            for seed in range(5):
                res = peers.peer_predictions(name, m.scores, m.models, m.items, protocol, seed, 100)
                assert set(res) == set(peers.PEER_METHODS)
