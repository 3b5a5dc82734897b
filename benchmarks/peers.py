"""The BenchPred peer rows of the accuracy benchmark, computed once and cached.

BenchPred (Zhang, Dorner & Hardt 2025, "benchmark prediction with fewer data"; MIT) ships
the methods we compare against. For each matrix, protocol split (:mod:`.protocols`), seed
and method this module runs BenchPred's class with its default settings::

    m = benchpred.all_methods[method]()
    m.fit(train_scores, k, seed=seed)
    pred = m.predict(test_scores[:, m.get_coreset()])

BenchPred wants 0/1 matrices without NaN: NaN in both the training and the test matrix
is filled with the *training* column's mean (a column without any training value gets
the training grand mean). Values in [0, 1] (AlpacaEval 2.0) are passed as they are. The
truth stays each test model's mean over its evaluated items (:func:`.protocols.model_means`).

**Cache.** A peer result depends only on the data, the split, k, the seed, the method and
the BenchPred version, so each one is stored once as a small JSON file
``benchmarks/cache/peers/<dataset>/<protocol>-seed<seed>-k<k>-<method>.json`` (predictions,
the selected item indices, seconds; no matrices), keyed by a sha256 over the matrix
values, model names and item ids, the train and test row indices, k, seed, method and
BenchPred version. A file whose key does not match (data or split changed) is recomputed;
a matching file never starts BenchPred. The cache is committed, so a rerun of the
accuracy benchmark costs only our own fits.

**Running BenchPred.** It pins numpy==1.26.4 (and wants torch), which conflicts with our
environment, and it is never a dependency of this package: it runs in a separate venv,
as a worker subprocess (:mod:`.peers_worker`, started by path, needing nothing of
``tinybench_builder``). Our side writes the filled matrices to a temporary ``.npz`` and reads JSON
lines back. The venv (outside the repository)::

    python -m venv /work/.venv-peers
    /work/.venv-peers/bin/pip install numpy==1.26.4 torch==2.13.0 scipy scikit-learn \\
        kmedoids joblib ordered-set tqdm pyro-ppl pydantic rich typer
    /work/.venv-peers/bin/pip install --no-deps benchpred==1.0.0

(``torch==2.13.0`` is the CPU wheel on this machine's disk: plain ``torch`` would fetch a
multi-GB CUDA build. ``--no-deps`` skips BenchPred's unused pins: py-irt, datasets,
wandb, matplotlib, ipython, gitpython, pandas, pyyaml; pyro-ppl, pydantic, rich and typer
are needed only because ``import benchpred`` imports its vendored py-irt.) The committed
cache was computed with benchpred 1.0.0, numpy 1.26.4, torch 2.13.0+cpu, scikit-learn
1.9.1, scipy 1.17.1, kmedoids 0.5.5, on 2 cores (kmedoids' FasterPAM picks its threaded
variant from ``os.cpu_count()`` for 1,000+ items).

Command line (fills the cache, then prints MAE and MAE / random-k per dataset, protocol
and method, mean +- standard deviation over the seeds; random-k = mean over 50 draws of
the plain mean of k random items, computed here)::

    python -m benchmarks.peers --peers-python /work/.venv-peers/bin/python --jobs 2
    python -m benchmarks.peers                       # cache only: table of what is stored

Python API (what the accuracy benchmark calls)::

    from benchmarks.peers import peer_predictions
    res = peer_predictions(name, Y, models, items, protocol, seed, k)  # cache only
    res["lasso"]["pred"]  # ndarray (n_test,), rows of protocols.split(...)[1]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from benchmarks import docs_tables, protocols
from tinybench_builder.errors import PeersUnavailableError, PeerWorkerError
from tinybench_builder.params import derived_seed

#: the BenchPred methods of the accuracy benchmark (keys of ``benchpred.all_methods``)
PEER_METHODS = (
    "random_sampling", "random_sampling_and_learn", "random_search_and_learn", "aipw", "lasso", "pca",
    "double_optimize", "anchor_points_weighted", "anchor_points_predictor",
)
#: the BenchPred release the cache keys assume; the worker refuses any other
BENCHPRED_VERSION = "1.0.0"
#: bump when the cache record or the key changes meaning
CACHE_FORMAT = 1

REPO_ROOT = Path(__file__).resolve().parents[1]
#: the committed cache, next to the benchmark scripts (benchmarks/cache/peers; not installed in a wheel)
DEFAULT_CACHE_DIR = Path(__file__).resolve().parent / "cache" / "peers"
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data" / "responses"
DEFAULT_PEERS_PYTHON_ENV = "TINYBENCH_PEERS_PYTHON"
WORKER_SCRIPT = Path(__file__).resolve().with_name("peers_worker.py")

VENV_RECIPE = """\
make the BenchPred venv (outside the repository), then pass --peers-python /work/.venv-peers/bin/python:
    python -m venv /work/.venv-peers
    /work/.venv-peers/bin/pip install numpy==1.26.4 torch==2.13.0 scipy scikit-learn kmedoids joblib ordered-set tqdm pyro-ppl pydantic rich typer
    /work/.venv-peers/bin/pip install --no-deps benchpred==1.0.0"""


#: worker processes running now (killed by the CLI when it is interrupted)
_ACTIVE_WORKERS: set = set()
_ACTIVE_LOCK = threading.Lock()
_STOPPING = threading.Event()  # set by kill_active_workers: a worker started after it is killed at once


def kill_active_workers() -> int:
    """Kill every worker process this interpreter started and that still runs; returns how many."""
    with _ACTIVE_LOCK:
        _STOPPING.set()
        procs = list(_ACTIVE_WORKERS)
    for proc in procs:
        proc.kill()
    return len(procs)


# ----------------------------------------------------------------------------- data

def fill_nan_with_train_means(train: np.ndarray, test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fill NaN of both matrices with the training column means (BenchPred wants no NaN).

    A column without any training value gets the training grand mean (0.0 if the
    training matrix has no value at all). Inputs are not modified.

    Parameters
    ----------
    train : ndarray of shape (n_train, n_items)
    test : ndarray of shape (n_test, n_items)

    Returns
    -------
    train_filled, test_filled : float64 ndarrays of the same shapes, without NaN
    """
    train = np.asarray(train, dtype=np.float64)
    test = np.asarray(test, dtype=np.float64)
    if train.ndim != 2 or test.ndim != 2:
        raise ValueError(f"train and test must be 2-D, got shapes {train.shape} and {test.shape}")
    if train.shape[1] != test.shape[1]:
        raise ValueError(f"train has {train.shape[1]} items, test {test.shape[1]}")
    obs = ~np.isnan(train)
    n_obs = obs.sum(0)
    total = obs.sum()
    grand = float(np.where(obs, train, 0.0).sum() / total) if total else 0.0
    col = np.where(n_obs > 0, np.where(obs, train, 0.0).sum(0) / np.maximum(n_obs, 1), grand)
    return np.where(obs, train, col), np.where(np.isnan(test), col, test)


def random_k_mae(Y_test: np.ndarray, truth: np.ndarray, k: int, draws: int = 50,
                 seed: int = 0) -> float:
    """MAE of the plain mean of ``k`` random items (NaN ignored), averaged over ``draws``.

    The draws use ``numpy.random.default_rng(derived_seed(seed, "bench_random_k"))``, 1000 + seed
    (:data:`tinybench_builder.params.SEED_STREAMS`).
    """
    Y_test = np.asarray(Y_test, dtype=np.float64)
    truth = np.asarray(truth, dtype=np.float64)
    if Y_test.ndim != 2 or truth.shape != (Y_test.shape[0],):
        raise ValueError(f"Y_test {Y_test.shape} and truth {truth.shape} do not match")
    if not 0 < k <= Y_test.shape[1]:
        raise ValueError(f"k must be in 1..{Y_test.shape[1]}, got {k}")
    rng = np.random.default_rng(derived_seed(seed, "bench_random_k"))
    errs = []
    for _ in range(draws):
        sub = Y_test[:, rng.choice(Y_test.shape[1], k, replace=False)]
        obs = ~np.isnan(sub)
        est = np.where(obs, sub, 0.0).sum(1) / np.maximum(obs.sum(1), 1)
        est = np.where(obs.any(1), est, np.nan)  # no evaluated item drawn: no estimate
        errs.append(np.nanmean(np.abs(est - truth)))
    return float(np.mean(errs))


# ----------------------------------------------------------------------------- cache

def data_digest(Y: np.ndarray, models: Sequence[str], items: Sequence[str]) -> str:
    """sha256 (hex) of the matrix values, shape, model names and item ids.

    NaN is canonicalised, so the digest depends on which entries are missing, never on
    NaN bit patterns or memory order.
    """
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim != 2 or Y.shape != (len(models), len(items)):
        raise ValueError(f"matrix of shape {Y.shape} for {len(models)} models x {len(items)} items")
    values = np.ascontiguousarray(np.where(np.isnan(Y), np.nan, Y), dtype="<f8")
    h = hashlib.sha256()
    h.update(json.dumps({"shape": list(Y.shape), "models": [str(m) for m in models],
                         "items": [str(i) for i in items]}).encode())
    h.update(values.tobytes())
    return h.hexdigest()


def cache_key(digest: str, train: np.ndarray, test: np.ndarray, k: int, seed: int, method: str,
              benchpred_version: str = BENCHPRED_VERSION) -> str:
    """sha256 (hex) identifying one peer result: data digest, split, k, seed, method, version."""
    h = hashlib.sha256()
    h.update(json.dumps({"format": CACHE_FORMAT, "data": digest, "k": int(k), "seed": int(seed),
                         "method": str(method), "benchpred": str(benchpred_version)}).encode())
    h.update(b"train")
    h.update(np.ascontiguousarray(train, dtype="<i8").tobytes())
    h.update(b"test")
    h.update(np.ascontiguousarray(test, dtype="<i8").tobytes())
    return h.hexdigest()


def cache_path(cache_dir: str | os.PathLike, name: str, protocol: str, seed: int, k: int, method: str) -> Path:
    """``<cache_dir>/<name>/<protocol>-seed<seed>-k<k>-<method>.json``."""
    return Path(cache_dir) / name / f"{protocol}-seed{seed}-k{k}-{method}.json"


def read_cached(path: str | os.PathLike, key: str) -> dict | None:
    """The cached record at ``path`` if its key is ``key``; None if absent, stale or unreadable."""
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("key") != key:
        return None
    return record


def write_cached(path: str | os.PathLike, record: dict) -> None:
    """Write ``record`` as JSON atomically (a crash never leaves half a file)."""
    from tinybench_builder.files import atomic_output

    with atomic_output(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(record, fh, indent=1)
            fh.write("\n")


# ----------------------------------------------------------------------------- worker

def write_worker_input(path: str | os.PathLike, train: np.ndarray, test: np.ndarray, k: int, seed: int,
                       methods: Sequence[str], benchpred_version: str = BENCHPRED_VERSION) -> None:
    """The worker's ``.npz`` input (see :mod:`.peers_worker`)."""
    np.savez(path, train=np.asarray(train, dtype=np.float64), test=np.asarray(test, dtype=np.float64),
             k=np.int64(k), seed=np.int64(seed), methods=np.array(list(methods), dtype=str),
             benchpred_version=np.array(benchpred_version))


def worker_env(threads: int = 1) -> dict:
    """Environment of a worker: ``threads`` BLAS/OpenMP/torch threads, no progress bars,
    and none of our interpreter's path settings (the venv has its own numpy)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                "VECLIB_MAXIMUM_THREADS", "PEERS_THREADS"):
        env[var] = str(threads)
    env["TQDM_DISABLE"] = "1"
    env["PYTHONNOUSERSITE"] = "1"
    return env


def run_worker(peers_python: str | os.PathLike, train: np.ndarray, test: np.ndarray, k: int, seed: int,
               methods: Sequence[str], *, on_result: Callable[[dict], None] | None = None,
               threads: int = 1, worker_script: str | os.PathLike = WORKER_SCRIPT,
               benchpred_version: str = BENCHPRED_VERSION) -> dict[str, dict]:
    """Run the BenchPred worker on filled matrices; returns ``{method: record}``.

    Each record has ``pred`` (list of n_test floats), ``coreset``, ``seconds``,
    ``fit_seconds``, ``predict_seconds`` and ``error`` (None, or the method's exception
    as text: a failing method does not stop the others). ``on_result`` is called with
    each record as soon as the worker sends it (so callers can store it at once).

    Raises
    ------
    PeerWorkerError
        When the interpreter cannot start, BenchPred cannot be imported or is another
        version, or the worker ends before answering for every method.
    """
    train = np.asarray(train, dtype=np.float64)
    test = np.asarray(test, dtype=np.float64)
    if np.isnan(train).any() or np.isnan(test).any():
        raise ValueError("fill NaN before running BenchPred (fill_nan_with_train_means)")
    methods = list(methods)
    results: dict[str, dict] = {}
    info: dict = {}
    with tempfile.TemporaryDirectory(prefix="peers-") as tmp:
        npz = Path(tmp) / "input.npz"
        write_worker_input(npz, train, test, k, seed, methods, benchpred_version)
        err_path = Path(tmp) / "stderr.txt"
        with open(err_path, "wb") as err:
            try:
                proc = subprocess.Popen([str(peers_python), str(worker_script), str(npz)], stdout=subprocess.PIPE,
                                        stderr=err, stdin=subprocess.DEVNULL, env=worker_env(threads), cwd=tmp,
                                        text=True, encoding="utf-8")
            except OSError as exc:
                raise PeerWorkerError(f"cannot start {peers_python}: {exc}\n{VENV_RECIPE}") from exc
            with _ACTIVE_LOCK:
                _ACTIVE_WORKERS.add(proc)
                if _STOPPING.is_set():
                    proc.kill()
            fatal = None
            try:
                for line in proc.stdout or ():  # stdout=PIPE: never None
                    try:
                        msg = json.loads(line)
                    except ValueError:
                        fatal = f"the worker wrote a non-JSON line: {line[:200]!r}"
                        break
                    event = msg.get("event")
                    if event == "start":
                        info = {k: v for k, v in msg.items() if k not in ("event", "pid")}
                    elif event in ("result", "error") and msg.get("method") in methods:
                        record = {
                            "pred": msg.get("pred"), "coreset": msg.get("coreset"),
                            "seconds": msg.get("seconds"), "fit_seconds": msg.get("fit_seconds"),
                            "predict_seconds": msg.get("predict_seconds"),
                            "error": msg.get("error") if event == "error" else None,
                            "worker": info,
                        }
                        if record["error"] is None and (record["pred"] is None or len(record["pred"]) != test.shape[0]):
                            fatal = f"the worker sent {msg.get('method')} predictions of the wrong length"
                            break
                        results[msg["method"]] = record
                        if on_result is not None:
                            on_result({"method": msg["method"], **record})
                    elif event == "fatal":
                        fatal = msg.get("error", "unknown error")
                        break
                    else:
                        fatal = f"unexpected worker message {msg!r:.200}"
                        break
            except BaseException:  # KeyboardInterrupt, a failing on_result: never leave the worker running
                proc.kill()
                proc.wait()
                raise
            finally:
                if proc.stdout is not None:
                    proc.stdout.close()
                with _ACTIVE_LOCK:
                    _ACTIVE_WORKERS.discard(proc)
            if fatal is not None:
                proc.kill()
            rc = proc.wait()
        stderr_tail = err_path.read_text(encoding="utf-8", errors="replace")[-2000:]
    if fatal is not None:
        hint = f"\n{VENV_RECIPE}" if "benchpred" in fatal else ""
        raise PeerWorkerError(f"BenchPred worker ({peers_python}): {fatal}{hint}")
    missing = [m for m in methods if m not in results]
    if missing:
        raise PeerWorkerError(f"BenchPred worker ({peers_python}) exited with code {rc} before answering for "
                              f"{missing}; its stderr ends with:\n{stderr_tail}")
    return results


# ----------------------------------------------------------------------------- API

def peer_predictions(name: str, Y: np.ndarray, models: Sequence[str], items: Sequence[str], protocol: str,
                     seed: int, k: int = 100, methods: Iterable[str] = PEER_METHODS,
                     cache_dir: str | os.PathLike = DEFAULT_CACHE_DIR,
                     peers_python: str | os.PathLike | None = None, *,
                     on_result: Callable[[dict], None] | None = None, threads: int = 1) -> dict[str, dict]:
    """BenchPred predictions for the test models of one protocol split, from the cache.

    Only the methods missing from the cache (or with a stale key) are computed, all in
    one worker run under ``peers_python``; each new result is written to the cache as
    soon as it exists.

    Parameters
    ----------
    name : str
        The dataset name (the cache folder).
    Y : ndarray of shape (n_models, n_items)
        Scores in [0, 1], NaN = not evaluated (the whole matrix: the split is made here).
    models, items : sequences of str
        Model names (rows) and item ids (columns); part of the cache key.
    protocol : {"interpolation", "extrapolation"}
    seed, k : int
        The protocol seed (split and BenchPred's own randomness) and the coreset size.
    methods : iterable of str
        Names from :data:`PEER_METHODS` (any ``benchpred.all_methods`` key works).
    cache_dir : path
        Default ``benchmarks/cache/peers`` (:data:`DEFAULT_CACHE_DIR`).
    peers_python : path, optional
        The BenchPred venv's interpreter; None = cache only.
    on_result : callable, optional
        Called with ``{"method", "pred", ..., "cached": bool}`` for each method.

    Returns
    -------
    dict
        ``{method: {"pred": ndarray (n_test,), "coreset": list of int, "seconds": float,
        "error": None or str}}``, test models in the order of
        ``protocols.split(protocol, Y, models, seed)[1]``. A method that failed inside
        BenchPred has ``error`` set and ``pred`` all NaN (failures are cached too).

    Raises
    ------
    PeersUnavailableError
        A result is not cached and ``peers_python`` is None or does not exist.
    PeerWorkerError
        The worker failed as a whole (see :func:`run_worker`).
    """
    methods = list(dict.fromkeys(methods))
    if not methods:
        raise ValueError("no methods given")
    Y = np.asarray(Y, dtype=np.float64)
    models = [str(m) for m in models]
    items = [str(i) for i in items]
    if Y.ndim != 2 or Y.shape != (len(models), len(items)):
        raise ValueError(f"Y has shape {Y.shape} for {len(models)} models x {len(items)} items")
    if not 1 < k < len(items):
        raise ValueError(f"k must be in 2..{len(items) - 1} for {len(items)} items, got {k}")
    train, test = protocols.split(protocol, Y, models, seed)
    digest = data_digest(Y, models, items)
    keys = {m: cache_key(digest, train, test, k, seed, m) for m in methods}
    paths = {m: cache_path(cache_dir, name, protocol, seed, k, m) for m in methods}
    records = {}
    for m in methods:
        rec = read_cached(paths[m], keys[m])
        if rec is not None:
            records[m] = rec
            if on_result is not None:
                on_result({"method": m, **rec, "cached": True})
    missing = [m for m in methods if m not in records]
    if missing:
        if peers_python is None or not Path(peers_python).exists():
            where = "no --peers-python given" if peers_python is None else f"{peers_python} does not exist"
            raise PeersUnavailableError(
                f"{name} {protocol} seed {seed} k={k}: {len(missing)} peer result(s) not cached "
                f"({', '.join(missing)}) and {where}; {VENV_RECIPE}")
        train_filled, test_filled = fill_nan_with_train_means(Y[train], Y[test])
        lock = threading.Lock()

        def store(result: dict) -> None:
            m = result["method"]
            record = {
                "format": CACHE_FORMAT, "key": keys[m], "dataset": name, "protocol": protocol, "seed": int(seed),
                "k": int(k), "method": m, "benchpred_version": BENCHPRED_VERSION,
                "n_models": len(models), "n_items": len(items), "n_train": int(len(train)), "n_test": int(len(test)),
                "test_models": [models[i] for i in test],
                "seconds": result["seconds"], "fit_seconds": result["fit_seconds"],
                "predict_seconds": result["predict_seconds"], "error": result["error"],
                "worker": result.get("worker", {}),
                "coreset": result["coreset"], "pred": result["pred"],
            }
            with lock:
                write_cached(paths[m], record)
                records[m] = record
            if on_result is not None:
                on_result({"method": m, **record, "cached": False})

        run_worker(peers_python, train_filled, test_filled, k, seed, missing, on_result=store, threads=threads)
    out = {}
    for m in methods:
        rec = records[m]
        pred = rec.get("pred")
        out[m] = {
            "pred": (np.full(len(test), np.nan) if rec.get("error") or pred is None
                     else np.array([np.nan if v is None else v for v in pred], dtype=np.float64)),
            "coreset": list(rec.get("coreset") or []),
            "seconds": float(rec["seconds"]) if rec.get("seconds") is not None else float("nan"),
            "error": rec.get("error"),
        }
    return out


# ----------------------------------------------------------------------------- CLI

def _mean_sd(values: Sequence[float]) -> tuple[float, float]:
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return float("nan"), float("nan")
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0


def _cell(values: Sequence[float], digits: int) -> str:
    mean, sd = _mean_sd(values)
    if math.isnan(mean):
        return "failed"
    return f"{mean:.{digits}f} ± {sd:.{digits}f}"


def summarize(rows: list[dict], datasets: Sequence[str], protocols_: Sequence[str],
              methods: Sequence[str], seeds: Sequence[int]) -> str:
    """Markdown tables: per protocol, MAE and MAE / random-k (mean ± sd over seeds)."""
    out = []
    for protocol in protocols_:
        for what, key, digits in (("MAE", "mae", 4), ("MAE / random-k", "ratio", 2)):
            out.append(f"\n### {protocol}: {what} (mean ± sd over seeds {' '.join(map(str, seeds))})\n")
            head = ["dataset", "train/test", "random-k"] + list(methods)
            out.append("| " + " | ".join(head) + " |")
            out.append("|---|---|" + "---:|" * (len(head) - 2))
            per_method_means: dict[str, list[float]] = {m: [] for m in methods}
            for name in datasets:
                rs = [r for r in rows if r["dataset"] == name and r["protocol"] == protocol]
                if not rs:
                    continue
                rk = [r for r in rs if r["method"] == "random-k"]
                cells = [name, f"{rs[0]['n_train']}/{rs[0]['n_test']}",
                         _cell([r["mae"] for r in rk], 4) if key == "mae" else "1"]
                for m in methods:
                    vals = [r[key] for r in rs if r["method"] == m]
                    cells.append(_cell(vals, digits))
                    per_method_means[m].append(_mean_sd(vals)[0])
                out.append("| " + " | ".join(cells) + " |")
            if key == "ratio":
                out.append("| **mean over datasets** | | 1 | " + " | ".join(
                    f"{np.nanmean(per_method_means[m]):.2f}" if per_method_means[m] else "" for m in methods) + " |")
    secs: dict[Any, Any] = {}
    for r in rows:
        if r["method"] != "random-k" and r.get("seconds") is not None and not math.isnan(r["seconds"]):
            secs.setdefault(r["method"], []).append(r["seconds"])
    if secs:
        out.append("\n### seconds per fit + predict (all datasets, protocols, seeds)\n")
        out.append("| method | runs | mean s | max s | total s |")
        out.append("|---|---:|---:|---:|---:|")
        for m in methods:
            s = secs.get(m, [])
            if s:
                out.append(f"| {m} | {len(s)} | {np.mean(s):.1f} | {np.max(s):.1f} | {np.sum(s):.0f} |")
    return "\n".join(out)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.peers",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peers-python", type=Path, default=os.environ.get(DEFAULT_PEERS_PYTHON_ENV) or None,
                    help="the BenchPred venv's python (default: $%s; none = use the cache only and fail "
                         "on a miss)" % DEFAULT_PEERS_PYTHON_ENV)
    ap.add_argument("--data-dir", type=Path, default=DEFAULT_DATA, help="folder of <name>.parquet matrices "
                    f"(default {DEFAULT_DATA})")
    ap.add_argument("--datasets", nargs="+", default=list(protocols.ACCURACY_DATASETS))
    ap.add_argument("--protocols", nargs="+", default=list(protocols.PROTOCOLS), choices=protocols.PROTOCOLS)
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    ap.add_argument("--anchors", type=int, default=100, help="k, the coreset size (default 100)")
    ap.add_argument("--methods", nargs="+", default=list(PEER_METHODS), metavar="METHOD",
                    help=f"BenchPred methods (default: all of {', '.join(PEER_METHODS)})")
    ap.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR, help=f"default {DEFAULT_CACHE_DIR}")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes at once (default 1)")
    ap.add_argument("--threads", type=int, default=1, help="BLAS/torch threads per worker (default 1)")
    ap.add_argument("--json", type=Path, help="also write every (dataset, protocol, seed, method) row as JSON")
    docs_tables.add_docs_arg(ap)
    return ap


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    conditions = docs_tables.Conditions()
    if args.jobs < 1 or args.threads < 1:
        print("error: --jobs and --threads must be >= 1", file=sys.stderr)
        return 2
    if args.peers_python is not None and not args.peers_python.exists():
        print(f"error: --peers-python {args.peers_python} does not exist; {VENV_RECIPE}", file=sys.stderr)
        return 2
    from tinybench_builder.read import ResponseMatrix  # our reader (the worker never needs it)

    matrices = {}
    for name in args.datasets:
        path = args.data_dir / f"{name}.parquet"
        if not path.exists():
            print(f"error: {path} not found", file=sys.stderr)
            return 2
        try:
            matrices[name] = ResponseMatrix.read(path)
        except (ValueError, OSError) as exc:
            print(f"error: {path}: {exc}", file=sys.stderr)
            return 2
    for name, mat in matrices.items():
        if not 1 < args.anchors < mat.shape[1]:
            print(f"error: --anchors {args.anchors} must be in 2..{mat.shape[1] - 1} for {name}", file=sys.stderr)
            return 2

    tasks = [(name, protocol, seed) for name in args.datasets for protocol in args.protocols for seed in args.seeds]
    total = len(tasks) * len(args.methods)
    done = {"n": 0, "computed": 0}
    lock = threading.Lock()
    t_start = time.perf_counter()
    use_bar = sys.stderr.isatty()
    bar = None
    if use_bar:
        from tqdm import tqdm
        bar = tqdm(total=total, desc="peer results", unit="result", file=sys.stderr)

    def progress(task, result):
        with lock:
            done["n"] += 1
            if not result.get("cached"):
                done["computed"] += 1
                status = f"failed: {result['error']}" if result.get("error") else f"{result['seconds']:.1f} s"
                msg = (f"[{done['n']}/{total}, {time.perf_counter() - t_start:.0f} s] {task[0]} {task[1]} "
                       f"seed {task[2]} {result['method']}: {status}")
                if bar is not None:
                    bar.write(msg)
                else:
                    print(msg, file=sys.stderr, flush=True)
            if bar is not None:
                bar.update(1)

    def run_task(task):
        name, protocol, seed = task
        mat = matrices[name]
        return task, peer_predictions(name, mat.scores, mat.models, mat.items, protocol, seed, args.anchors,
                                      args.methods, args.cache_dir, args.peers_python, threads=args.threads,
                                      on_result=lambda r: progress(task, r))

    results, failures, futures = {}, [], []
    _STOPPING.clear()
    previous_sigterm = signal.signal(signal.SIGTERM, _raise_interrupt) if _main_thread() else None
    pool = ThreadPoolExecutor(max_workers=args.jobs)
    try:
        futures = [pool.submit(run_task, t) for t in tasks]
        for fut in as_completed(futures):
            try:
                task, res = fut.result()
                results[task] = res
            except (PeersUnavailableError, PeerWorkerError) as exc:
                failures.append(str(exc))
    except KeyboardInterrupt:
        for fut in futures:
            fut.cancel()
        kill_active_workers()  # their threads then end with a PeerWorkerError
        pool.shutdown(wait=True)
        if bar is not None:
            bar.close()
        print(f"error: interrupted; the {done['computed']} results computed so far are in {args.cache_dir} "
              f"(a rerun computes only the rest)", file=sys.stderr)
        return 130
    finally:
        pool.shutdown(wait=True)
        if previous_sigterm is not None:
            signal.signal(signal.SIGTERM, previous_sigterm)
    if bar is not None:
        bar.close()
    if failures:
        print(f"error: {len(failures)} of {len(tasks)} (dataset, protocol, seed) runs are incomplete; "
              f"the first:\n{failures[0]}", file=sys.stderr)
        return 1
    print(f"{done['computed']} peer results computed, {total - done['computed']} read from {args.cache_dir} "
          f"({time.perf_counter() - t_start:.0f} s)", file=sys.stderr)

    rows = []
    for (name, protocol, seed), res in sorted(results.items()):
        mat = matrices[name]
        train, test = protocols.split(protocol, mat.scores, mat.models, seed)
        truth = protocols.model_means(mat.scores[test])
        rk = random_k_mae(mat.scores[test], truth, args.anchors, 50, seed)
        base = {"dataset": name, "protocol": protocol, "seed": seed, "n_train": int(len(train)),
                "n_test": int(len(test))}
        rows.append({**base, "method": "random-k", "mae": rk, "ratio": 1.0, "seconds": None})
        for m, r in res.items():
            mae = float(np.mean(np.abs(r["pred"] - truth))) if r["error"] is None else float("nan")
            rows.append({**base, "method": m, "mae": mae, "ratio": mae / rk, "seconds": r["seconds"],
                         "coreset_size": len(r["coreset"]), "error": r["error"]})
    head = (f"BenchPred {BENCHPRED_VERSION} peers; k = {args.anchors}; truth = each test model's mean over its "
            f"evaluated items; BLAS/torch threads per worker: {args.threads}")
    table = summarize(rows, args.datasets, args.protocols, args.methods, args.seeds)
    errors = sorted({(r["dataset"], r["method"], r["error"]) for r in rows if r.get("error")})
    notes = [f"note: {m} failed on {name}: {err}" for name, m, err in errors]
    print(head)
    print(table)
    for line in notes:
        print(line)
    if args.write_docs:
        cached = f"{done['computed']} results computed by this run, {total - done['computed']} read from the cache"
        text = f"{head}; {cached}.\n" + table.replace("\n### ", "\n#### ") + "".join(f"\n\n{n}" for n in notes)
        docs_tables.write_sections([("peers", "BenchPred's methods", text)], conditions, argv=argv, module="peers")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
