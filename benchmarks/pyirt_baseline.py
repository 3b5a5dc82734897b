"""Training time of the ORIGINAL tinyBenchmarks IRT fit: py-irt's ``multidim_2pl``.

The original (felipemaiapolo/tinyBenchmarks, ``tutorials/training_irt.ipynb`` with
``tutorials/irt.py``: ``create_irt_dataset`` and ``train_irt_model``) writes the 0/1
matrix as jsonlines, one line per model::

    {"subject_id": "0", "responses": {"q0": 0, "q1": 1, ...}}

and shells out to::

    py-irt train 'multidim_2pl' <data> <out> --dims D --lr 0.1 --epochs 2000
        --device cuda --priors 'hierarchical' --seed 42 --deterministic --log-every 200

i.e. ``IrtConfig(model_type="multidim_2pl", epochs=2000, lr=0.1, lr_decay=0.9999
(default), priors="hierarchical", dims=D, seed=42, deterministic=True)``: stochastic
variational inference (pyro ``SVI`` + ``Trace_ELBO``, Adam with an exponential learning
rate decay), one full-batch step per epoch, then ``parameters.json`` and
``best_parameters.json`` are written. The notebook tried D in (5, 10) and kept 10; its
log shows 186-235 s for 2000 epochs at 240-300 models x 28,659 items on a GPU.

:func:`time_pyirt` does the same in-process (the CLI's seeding and
``torch.use_deterministic_algorithms(True)``, then ``IrtModelTrainer.train`` and both
JSON files) on the CPU, and times each stage. Exceptions are caught and reported: the
hierarchical model can stop with a NaN in its Gamma prior parameters.

Installed for the benchmark only (not a package dependency; see the ``pyirt`` extra)::

    pip install torch==2.13.0            # the CPU wheel on local disk
    pip install --no-deps py-irt==0.7.1  # it pins pandas<3; pandas 3 works for this use
    pip install "pyro-ppl>=1.8.6,<2" "rich>=13.7,<14" "typer>=0.9,<0.15" "toml>=0.10.2,<0.11" "ordered-set>=4.1,<5" \
        "pydantic>=2.5.3,<3"                 # py-irt imports it (its own requirement); --no-deps skips it

Deviation: the original trained with a fork of py-irt (felipemaiapolo/py-irt, "we only
adapted the file py_irt/models/multidim_2pl.py"); the fork is not on PyPI, so this times
the released ``multidim_2pl`` of py-irt 0.7.1. Both run the same SVI loop over the same
n x N x D observation plate, which dominates the time; the fork's model differs in the
parametrisation (one difficulty per item, ``sum_d(a_d theta_d - b)``, Normal instead of
LogNormal discriminations). Missing scores (NaN) are left out of a model's ``responses``
(py-irt accepts ragged data; the original's matrix was complete).

    python -m benchmarks.pyirt_baseline --models 400 --items 28659 --epochs 50 --dims 2

Measured here (2 cores shared with other jobs, load ~3; simulated 0/1 matrices;
py-irt 0.7.1, pyro-ppl 1.9.2, torch 2.13.0+cpu):

=================  ===  =======  =======  ==============  =========================
models x items     D    threads  epochs   s / epoch       2000 epochs incl. set-up
=================  ===  =======  =======  ==============  =========================
400 x 28659        2    1        20       2.72            ~92 min (extrapolated)
400 x 28659        2    2        20       4.90            ~164 min (extrapolated)
400 x 28659        10   1        10       8.65            ~289 min (extrapolated)
48 x 1273          2    1        50       0.034           ~69 s (extrapolated)
48 x 1273          2    1        2000     0.032           65.6 s (measured)
=================  ===  =======  =======  ==============  =========================

Set-up at 400 x 28659: ~34 s to write the jsonlines, ~25-30 s for py-irt to read it
(2.9 GB peak memory). The per-epoch time is flat over the epochs (small matrix: 50-epoch
estimate within 8% of the 2000-epoch run), so the linear extrapolation holds. No run at
the original settings crashed; lr = 5 makes the logits non-finite within 200 epochs
(reported as ``ok=False`` with the ``ValueError``).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

#: the original's settings (tutorials/irt.py, training_irt.ipynb, py-irt's IrtConfig defaults)
ORIGINAL_SETTINGS: dict[str, Any] = {
    "model_type": "multidim_2pl",
    "epochs": 2000,
    "lr": 0.1,
    "lr_decay": 0.9999,
    "priors": "hierarchical",
    "seed": 42,
    "deterministic": True,
    "log_every": 200,
}


def write_irt_dataset(Y: np.ndarray, path: str | Path) -> int:
    """Write ``Y`` (models x items, 0/1, NaN = missing) as the original's jsonlines.

    Subject ids ``"0", "1", ...``, item ids ``"q0", "q1", ...``, responses ``int``.
    Returns the number of responses written.
    """
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim != 2:
        raise ValueError(f"Y must be 2-D (models x items), got shape {Y.shape}")
    obs = ~np.isnan(Y)
    vals = Y[obs]
    if vals.size and not np.isin(vals, (0.0, 1.0)).all():
        raise ValueError("py-irt's multidim_2pl needs 0/1 responses (binarize first)")
    n_written = 0
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(Y.shape[0]):
            row, ok = Y[i], obs[i]
            responses = {f"q{j}": int(row[j]) for j in range(Y.shape[1]) if ok[j]}
            n_written += len(responses)
            fh.write(json.dumps({"subject_id": str(i), "responses": responses}))
            fh.write("\n")
    return n_written


def pyirt_versions() -> dict:
    """Versions of the packages in the timed path (missing ones as None)."""
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, Any] = {}
    for name in ("py-irt", "pyro-ppl", "torch"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    try:
        import torch

        out["torch_threads"] = torch.get_num_threads()
    except ImportError:
        pass
    return out


def time_pyirt(
    Y: np.ndarray,
    dims: int,
    epochs: int,
    seed: int = ORIGINAL_SETTINGS["seed"],
    *,
    lr: float = ORIGINAL_SETTINGS["lr"],
    lr_decay: float = ORIGINAL_SETTINGS["lr_decay"],
    priors: str = ORIGINAL_SETTINGS["priors"],
    deterministic: bool = ORIGINAL_SETTINGS["deterministic"],
    device: str = "cpu",
    threads: int | None = None,
    workdir: str | Path | None = None,
    verbose: bool = False,
) -> dict:
    """Fit py-irt's ``multidim_2pl`` on ``Y`` as the original did and time it.

    Returns a dict with ``seconds`` (the ``epochs`` SVI steps, i.e. ``train()``; until
    the crash for a failed fit), ``seconds_per_epoch`` (NaN for a failed fit), ``epochs``, ``ok`` and ``error`` (None, or the exception's type
    and message), plus ``write_seconds`` (jsonlines), ``load_seconds`` (py-irt's
    ``Dataset.from_jsonlines`` and trainer set-up), ``save_seconds`` (the two JSON
    parameter files), ``total_seconds``, ``n_responses``, ``finite`` (whether the final
    parameters are all finite) and ``versions``. Nothing is raised for a failed fit.

    ``threads`` sets torch's intra-op threads for the run (None: torch's default, one per
    core). On a 2-core machine shared with other processes, 2 threads can be ~10x slower
    than 1 on small matrices (threads wait for a busy core); report the setting used.
    """
    Y = np.asarray(Y, dtype=np.float64)
    dims, epochs = int(dims), int(epochs)
    if dims < 1 or epochs < 1:
        raise ValueError("dims and epochs must be positive")
    res: dict = {"seconds": math.nan, "seconds_per_epoch": math.nan, "epochs": epochs, "ok": False,
                 "error": None, "dims": dims, "models": int(Y.shape[0]), "items": int(Y.shape[1]),
                 "write_seconds": math.nan, "load_seconds": math.nan, "save_seconds": math.nan,
                 "total_seconds": math.nan, "n_responses": 0, "finite": None, "versions": pyirt_versions()}
    try:
        import pyro
        import torch
        from py_irt.config import IrtConfig
        from py_irt.io import write_json
        from py_irt.training import IrtModelTrainer
    except ImportError as exc:
        res["error"] = f"ImportError: {exc} (see this module's docstring for the install commands)"
        return res
    if not verbose:  # py-irt's module-level consoles log even when the trainer is quiet
        for mod in ("py_irt.dataset", "py_irt.anchor_utils", "py_irt.training"):
            con = getattr(sys.modules.get(mod), "console", None)
            if con is not None:
                con.quiet = True
    # its first call imports torch._dynamo/_inductor (~3 s once per process): not timed
    det_before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(det_before)
    t_start = time.perf_counter()
    tmp = tempfile.TemporaryDirectory(prefix="pyirt_", dir=workdir)
    py_state, np_state = random.getstate(), np.random.get_state()
    threads_before = torch.get_num_threads()
    try:
        if threads is not None:
            torch.set_num_threads(int(threads))
        res["threads"] = torch.get_num_threads()
        data_path = Path(tmp.name) / "irt_dataset.jsonlines"
        out_dir = Path(tmp.name) / "irt_model"
        out_dir.mkdir()

        t = time.perf_counter()
        res["n_responses"] = write_irt_dataset(Y, data_path)
        res["write_seconds"] = time.perf_counter() - t

        # the CLI's seeding and determinism, in its order
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)
        pyro.set_rng_seed(seed)
        if deterministic:
            torch.use_deterministic_algorithms(True)
        config = IrtConfig(model_type="multidim_2pl", epochs=epochs, priors=priors, dims=dims, lr=lr,
                           lr_decay=lr_decay, log_every=ORIGINAL_SETTINGS["log_every"], seed=seed,
                           deterministic=deterministic)

        t = time.perf_counter()
        trainer = IrtModelTrainer(config=config, data_path=data_path, verbose=verbose)
        res["load_seconds"] = time.perf_counter() - t

        t = time.perf_counter()
        try:
            trainer.train(device=device)
        finally:  # on a crash: the time until it, and no per-epoch figure
            res["seconds"] = time.perf_counter() - t
        res["seconds_per_epoch"] = res["seconds"] / epochs

        t = time.perf_counter()
        trainer.save(out_dir / "parameters.json")
        if trainer.best_params is None:
            raise FloatingPointError("no finite loss in any epoch (best_params is None)")
        write_json(out_dir / "best_parameters.json", trainer.best_params)
        res["save_seconds"] = time.perf_counter() - t

        last = trainer.last_params
        res["finite"] = bool(all(np.isfinite(np.asarray(last[k], dtype=float)).all()
                                 for k in ("ability", "diff", "disc")))
        res["ok"] = res["finite"]
        if not res["finite"]:
            res["error"] = "non-finite parameters after training"
    except Exception as exc:  # noqa: BLE001 - the point is to report any failure of the original
        msg = str(exc).strip().splitlines()
        res["error"] = f"{type(exc).__name__}: {msg[0][:300] if msg else ''}"
    finally:
        torch.use_deterministic_algorithms(det_before)
        torch.set_num_threads(threads_before)
        random.setstate(py_state)
        np.random.set_state(np_state)
        tmp.cleanup()
        res["total_seconds"] = time.perf_counter() - t_start
    return res


def extrapolate(res: dict, epochs: int = ORIGINAL_SETTINGS["epochs"]) -> float:
    """Seconds for a full run of ``epochs`` epochs: the measured set-up (write, load, save)
    plus ``seconds_per_epoch * epochs`` (linear in the epochs; checked on a small matrix)."""
    fixed = sum(res[k] for k in ("write_seconds", "load_seconds", "save_seconds") if math.isfinite(res[k]))
    return fixed + res["seconds_per_epoch"] * epochs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.pyirt_baseline", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=int, default=400)
    ap.add_argument("--items", type=int, default=28659)
    ap.add_argument("--dims", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=50, help="epochs to run (the original: 2000)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the simulated matrix")
    ap.add_argument("--fit-seed", type=int, default=ORIGINAL_SETTINGS["seed"], help="py-irt seed (original: 42)")
    ap.add_argument("--missing", type=float, default=0.0, help="share of NaN entries in the simulated matrix")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's, one per core)")
    ap.add_argument("--verbose", action="store_true", help="show py-irt's own log and loss table")
    ap.add_argument("--json", type=Path, help="also write the result as JSON")
    args = ap.parse_args(argv)

    from tinybench_builder.read import simulate_responses

    matrix, _ = simulate_responses(n_models=args.models, n_items=args.items, n_dims=args.dims,
                                   seed=args.seed, missing=args.missing)
    print(f"py-irt multidim_2pl, {args.models} models x {args.items} items, D={args.dims}, "
          f"{args.epochs} epochs, lr={ORIGINAL_SETTINGS['lr']}, lr_decay={ORIGINAL_SETTINGS['lr_decay']}, "
          f"priors={ORIGINAL_SETTINGS['priors']}, deterministic, CPU")
    res = time_pyirt(matrix.scores, args.dims, args.epochs, args.fit_seed, threads=args.threads, verbose=args.verbose)
    full = ORIGINAL_SETTINGS["epochs"]
    v = res["versions"]
    print(f"versions: py-irt {v.get('py-irt')}, pyro-ppl {v.get('pyro-ppl')}, torch {v.get('torch')} "
          f"({res.get('threads', v.get('torch_threads'))} threads used)")
    print(f"responses: {res['n_responses']}")
    print(f"write jsonlines: {res['write_seconds']:.2f} s; load (Dataset + trainer): {res['load_seconds']:.2f} s; "
          f"save parameters: {res['save_seconds']:.2f} s")
    print(f"train: {res['seconds']:.2f} s for {res['epochs']} epochs = {res['seconds_per_epoch']:.4f} s/epoch")
    if res["ok"]:
        est = extrapolate(res, full)
        if args.epochs < full:
            print(f"EXTRAPOLATION (measured {args.epochs} epochs, linear in epochs): the original's {full} epochs "
                  f"would take ~{est:.0f} s ({est / 60:.1f} min) including set-up")
        else:
            print(f"measured: {res['total_seconds']:.1f} s in all for {args.epochs} epochs "
                  f"(the original runs {full})")
    else:
        print(f"FAILED: {res['error']}")
    print(f"total wall time of this run: {res['total_seconds']:.1f} s")
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
