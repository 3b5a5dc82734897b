"""Worker for :mod:`benchmarks.peers`: runs BenchPred methods in the peers venv.

This file runs under the *peers* interpreter (``/work/.venv-peers/bin/python``, numpy 1.26
+ torch + benchpred), not ours, and is started by path::

    <peers-python> benchmarks/peers_worker.py <input.npz>

so it imports nothing from ``tinybench_builder`` (only the standard library, numpy and benchpred).

Input ``.npz`` (written by :func:`benchmarks.peers.write_worker_input`):

* ``train``: float64 (n_train, n_items), 0/1 or [0, 1] scores, no NaN;
* ``test``: float64 (n_test, n_items), no NaN;
* ``k``, ``seed``: int scalars; ``methods``: str array of ``benchpred.all_methods`` names;
* ``benchpred_version``: the version the caller's cache keys assume.

Output: JSON lines on stdout, flushed one at a time so that the caller can store each
result as soon as it exists::

    {"event": "start", "benchpred_version": "1.0.0", "numpy_version": ..., "torch_version": ...}
    {"event": "result", "method": "lasso", "pred": [...n_test floats], "coreset": [...ints],
     "fit_seconds": 1.2, "predict_seconds": 0.01, "seconds": 1.21}
    {"event": "error", "method": "pca", "error": "AssertionError: ..."}   # method failed
    {"event": "fatal", "error": "..."}                                    # nothing can run

Each method is run as BenchPred's own scripts do, with default settings:
``m = all_methods[name](); m.fit(train, k, seed=seed); m.predict(test[:, m.get_coreset()])``.
Anything BenchPred prints goes to stderr (stdout carries only the protocol).
"""

import json
import os
import sys
import time
import traceback


def _emit(stream, obj):
    stream.write(json.dumps(obj) + "\n")
    stream.flush()


def run_method(all_methods, name, train, test, k, seed):
    """Fit and predict one BenchPred method; returns the result record."""
    import numpy as np

    method = all_methods[name]()
    t0 = time.perf_counter()
    method.fit(train, k, seed=seed)  # AnchorPointPredictorPred.fit returns None: do not chain
    t1 = time.perf_counter()
    coreset = np.asarray(method.get_coreset(), dtype=np.int64).ravel()
    pred = np.asarray(method.predict(test[:, coreset]), dtype=np.float64).ravel()
    t2 = time.perf_counter()
    if pred.shape != (test.shape[0],):
        raise ValueError(f"{name} returned {pred.shape[0]} predictions for {test.shape[0]} test models")
    return {
        "event": "result", "method": name,
        "pred": [float(v) for v in pred],
        "coreset": [int(i) for i in coreset],
        "fit_seconds": t1 - t0, "predict_seconds": t2 - t1, "seconds": t2 - t0,
    }


def main(argv):
    protocol_out = sys.stdout
    sys.stdout = sys.stderr  # BenchPred's prints must not corrupt the JSON-lines protocol
    if len(argv) != 1:
        _emit(protocol_out, {"event": "fatal", "error": "usage: peers_worker.py <input.npz>"})
        return 2
    try:
        import numpy as np
        import torch
        from benchpred import all_methods
        from importlib.metadata import version
    except Exception as exc:  # noqa: BLE001 - ImportError, or a broken install
        _emit(protocol_out, {"event": "fatal", "error": f"cannot import benchpred: {type(exc).__name__}: {exc}"})
        return 3
    torch.set_num_threads(int(os.environ.get("PEERS_THREADS", "1")))
    bp_version = version("benchpred")
    _emit(protocol_out, {"event": "start", "benchpred_version": bp_version, "numpy_version": np.__version__,
                         "torch_version": torch.__version__, "pid": os.getpid()})
    with np.load(argv[0], allow_pickle=False) as data:
        train, test = data["train"], data["test"]
        k, seed = int(data["k"]), int(data["seed"])
        methods = [str(m) for m in data["methods"]]
        expected = str(data["benchpred_version"])
    if bp_version != expected:
        _emit(protocol_out, {"event": "fatal",
                             "error": f"benchpred {bp_version} is installed, the cache expects {expected}"})
        return 4
    if train.ndim != 2 or test.ndim != 2 or train.shape[1] != test.shape[1]:
        _emit(protocol_out, {"event": "fatal", "error": f"bad shapes: train {train.shape}, test {test.shape}"})
        return 5
    if np.isnan(train).any() or np.isnan(test).any():
        _emit(protocol_out, {"event": "fatal", "error": "train/test contain NaN (fill them before calling)"})
        return 5
    unknown = [m for m in methods if m not in all_methods]
    if unknown:
        _emit(protocol_out, {"event": "fatal", "error": f"unknown BenchPred methods {unknown}"})
        return 5
    for name in methods:
        print(f"[peers_worker {os.getpid()}] {name}: fit on {train.shape}, k={k}, seed={seed}",
              file=sys.stderr, flush=True)
        try:
            record = run_method(all_methods, name, train, test, k, seed)
        except Exception as exc:  # noqa: BLE001 - one method's failure is reported, the others go on
            traceback.print_exc(file=sys.stderr)
            record = {"event": "error", "method": name, "error": f"{type(exc).__name__}: {exc}"}
        _emit(protocol_out, record)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
