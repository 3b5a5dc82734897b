"""What ``fit`` costs as the matrix grows to the whole Open LLM Leaderboard (issue 18).

    python -m builder.bench.scale                                # the table of the README (about 15 min here)
    python -m builder.bench.scale --models 400 2000 --soft-models 0 --estimate-models 0   # a quick one

Every case runs in a fresh process (``python -m builder ...``, as a user would), under a
memory cap (``--memory-cap``, RLIMIT_AS of the child): wall time, the child's user and system
time and its peak resident memory (``ru_maxrss`` from ``wait4``), and the cost per million
cells. The matrices are simulated 2-D 2PL 0/1 scores (``python -m builder simulate --dims 2
--subscenarios 57``; one soft-score matrix with ``--soft``) of ``--models`` x 28,659 items, the
Open LLM Leaderboard v1 shape; they are written once into ``--work`` and reused. Then:

* ``fit`` of each matrix (``--anchors 100 --seed 0``: the dimension chosen by validation, the
  cross-fitted calibration and the final fit);
* ``estimate`` of ``--estimate-models`` new models (a matrix of another seed) with the
  estimator fitted on the biggest matrix: only the anchor columns are read;
* ``build`` of the biggest matrix as a tiny benchmark of its own (a spec file and a content
  table of the 28,659 items written into ``--work``): read, fit, card, folder, end to end.

The 1-minute load average before and after each run is in the table: on a shared machine the
wall times move with it (user + system time much less).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ITEMS = 28659
SUBSCENARIOS = 57


def run_child(cmd: list[str], cap_bytes: int | None, log: Path) -> dict:
    """Run ``cmd`` in a fresh process; wall, user and system seconds, peak RSS (bytes), exit code
    and the load average before and after."""
    def limit():  # runs in the child before exec
        if cap_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (cap_bytes, cap_bytes))

    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    with open(log, "wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, preexec_fn=limit)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"wall": wall, "user": usage.ru_utime, "sys": usage.ru_stime, "rss": usage.ru_maxrss * 1024,
            "code": proc.returncode, "load": (load0, os.getloadavg()[0]), "log": str(log)}


def _builder(*args: str) -> list[str]:
    return [sys.executable, "-m", "builder", *args]


def simulated(work: Path, models: int, items: int, soft: bool, seed: int, cap: int | None) -> Path:
    """The simulated matrix (written once by ``builder simulate`` in a child, then reused)."""
    name = f"sim_{models}x{items}{'_soft' if soft else ''}_seed{seed}.parquet"
    path = work / name
    if not path.exists():
        cmd = _builder("simulate", "--models", str(models), "--items", str(items), "--dims", "2",
                       "--subscenarios", str(SUBSCENARIOS), "--seed", str(seed), "--out", str(path))
        if soft:
            cmd.append("--soft")
        r = run_child(cmd, cap, work / f"{name}.log")
        if r["code"] != 0:
            raise SystemExit(f"simulate failed ({r['log']})")
        print(f"simulated {name}: {r['wall']:.0f} s, peak {r['rss'] / 2**30:.2f} GiB", file=sys.stderr)
    return path


def _spec(work: Path, items: int) -> tuple[Path, Path]:
    """A spec and a content table for ``build`` of a simulated matrix (item ids sub<s>.<i>)."""
    import pandas as pd

    from builder.read import simulate_responses

    spec = work / "tinySimulated.toml"
    content = work / f"content_{items}.parquet"
    if not content.exists():
        m, _ = simulate_responses(n_models=2, n_items=items, n_dims=2, subscenarios=SUBSCENARIOS, seed=0,
                                  probabilities=False)  # the same item ids as any seed's (ids come from counts)
        pd.DataFrame({"item_id": m.items, "question": [f"Simulated question {i}." for i in range(items)]}).to_parquet(
            content, index=False)
    spec.write_text('name = "tinySimulated"\npretty_name = "tinySimulated"\nlicense = "mit"\n'
                    'citation = """@misc{simulated, title={Simulated}}"""\nitem_id_column = "item_id"\n'
                    'split = "test"\n', encoding="utf-8")
    return spec, content


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m builder.bench.scale", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=int, nargs="+", default=[400, 2000, 7000], help="models of the 0/1 matrices")
    ap.add_argument("--items", type=int, default=ITEMS)
    ap.add_argument("--soft-models", type=int, default=2000, help="models of the soft-score matrix (0: none)")
    ap.add_argument("--estimate-models", type=int, default=7000, help="models to estimate (0: none)")
    ap.add_argument("--no-build", action="store_true", help="skip the end-to-end build of the biggest matrix")
    ap.add_argument("--work", type=Path, default=None, help="folder for the matrices and outputs (default: a temp dir)")
    ap.add_argument("--memory-cap", type=float, default=12.0, help="address-space cap of each child, GiB (0: none)")
    args = ap.parse_args(argv)
    cap = int(args.memory_cap * 2**30) if args.memory_cap else None
    work = args.work or Path(tempfile.mkdtemp(prefix="scale-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []

    def fit(models: int, soft: bool):
        path = simulated(work, models, args.items, soft, 0, cap)
        out = work / f"fit_{path.stem}"
        r = run_child(_builder("fit", str(path), "--anchors", "100", "--seed", "0", "--out", str(out), "--quiet"),
                      cap, work / f"fit_{path.stem}.log")
        label = f"fit {models:,} x {args.items:,}{' soft scores' if soft else ' 0/1'}"
        rows.append((label, models * args.items, r))
        print(_row(label, models * args.items, r), file=sys.stderr, flush=True)
        return out

    fits = {m: fit(m, False) for m in args.models}
    if args.soft_models:
        fit(args.soft_models, True)
    biggest = max(args.models)
    if args.estimate_models:
        new = simulated(work, args.estimate_models, args.items, False, 1, cap)
        r = run_child(_builder("estimate", str(fits[biggest]), str(new), "--out", str(work / "estimates.csv")),
                      cap, work / "estimate.log")
        label = f"estimate {args.estimate_models:,} models (estimator of the {biggest:,}-model fit)"
        rows.append((label, None, r))
        print(_row(label, None, r, per_model=args.estimate_models), file=sys.stderr, flush=True)
    if not args.no_build:
        spec, content = _spec(work, args.items)
        path = simulated(work, biggest, args.items, False, 0, cap)
        r = run_child(_builder("build", "--spec", str(spec), "--responses", str(path), "--content",
                               f"test={content}", "--version", "1.0.0", "--out", str(work / "build"), "--quiet"),
                      cap, work / "build.log")
        label = f"build {biggest:,} x {args.items:,} (read, fit, card, folder)"
        rows.append((label, biggest * args.items, r))
        print(_row(label, biggest * args.items, r), file=sys.stderr, flush=True)

    print(f"\n{os.cpu_count()} cores; every fit runs BLAS on 1 thread (fit_estimator sets it) and its blocks on "
          f"{min(4, os.cpu_count() or 1)} threads; memory cap {args.memory_cap:g} GiB per run; work folder {work}\n")
    print("| run | cells | wall | user | system | peak RSS | wall per M cells | CPU per M cells | load before, after |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for label, cells, r in rows:
        per = args.estimate_models if label.startswith("estimate") else None
        print(_row(label, cells, r, per_model=per))
    bad = [label for label, _, r in rows if r["code"] != 0]
    for label in bad:
        print(f"\n{label}: FAILED (exit {[r for lab, _, r in rows if lab == label][0]['code']}; see the log)")
    return 1 if bad else 0


def _row(label: str, cells: int | None, r: dict, per_model: int | None = None) -> str:
    cpu = r["user"] + r["sys"]
    if cells:
        mc = cells / 1e6
        per = f"{r['wall'] / mc:.2f} s | {cpu / mc:.2f} s"
        cells_txt = f"{mc:.1f} M"
    else:
        per = f"{r['wall'] / per_model * 1000:.2f} ms per model | {cpu / per_model * 1000:.2f} ms per model"
        cells_txt = ""
    status = "" if r["code"] == 0 else f" (exit {r['code']})"
    return (f"| {label}{status} | {cells_txt} | {r['wall']:.1f} s | {r['user']:.1f} s | {r['sys']:.1f} s | "
            f"{r['rss'] / 2**30:.2f} GiB | {per} | {r['load'][0]:.1f}, {r['load'][1]:.1f} |")


if __name__ == "__main__":
    sys.exit(main())
