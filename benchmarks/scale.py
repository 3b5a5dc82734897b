"""What ``fit`` costs as the matrix grows to the whole Open LLM Leaderboard (issue 18).

    python -m benchmarks.scale --work DIR --write-docs        # the table of docs/BENCHMARKS.md (25 min here, loaded)
    python -m benchmarks.scale --models 400 2000 --soft-models 0 --estimate-models 0   # a quick one

Every case runs in a fresh process (``python -m tinybench_builder ...``, as a user would), under a
memory cap (``--memory-cap``, RLIMIT_AS of the child): wall time, the child's user and system
time and its peak resident memory (``ru_maxrss`` from ``wait4``), and the cost per million
cells. The matrices are simulated 2-D 2PL 0/1 scores (``python -m tinybench_builder simulate --dims 2
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
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import docs_tables

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
    return [sys.executable, "-m", "tinybench_builder", *args]


def simulated(work: Path, models: int, items: int, soft: bool, seed: int, cap: int | None,
              subscenarios: int = SUBSCENARIOS) -> Path:
    """The simulated matrix (written once by ``tinybench-builder simulate`` in a child, then reused)."""
    sub = "" if subscenarios == SUBSCENARIOS else f"_sub{subscenarios}"
    name = f"sim_{models}x{items}{sub}{'_soft' if soft else ''}_seed{seed}.parquet"
    path = work / name
    if not path.exists():
        cmd = _builder("simulate", "--models", str(models), "--items", str(items), "--dims", "2",
                       "--subscenarios", str(subscenarios), "--seed", str(seed), "--out", str(path))
        if soft:
            cmd.append("--soft")
        r = run_child(cmd, cap, work / f"{name}.log")
        if r["code"] != 0:
            raise SystemExit(f"simulate failed ({r['log']})")
        print(f"simulated {name}: {r['wall']:.0f} s, peak {r['rss'] / 2**30:.2f} GiB", file=sys.stderr)
    return path


def _spec(work: Path, matrix: Path) -> tuple[Path, Path]:
    """A spec and a content table (the matrix's item ids, a made-up question each) for ``build``."""
    import pandas as pd
    import pyarrow.parquet as pq

    from tinybench_builder.layout import ITEM_ID_COLUMN  # the content column the build matches item ids by

    spec = work / "tinySimulated.toml"
    content = work / f"content_{matrix.stem}.parquet"
    if not content.exists():
        items = [c for c in pq.read_schema(matrix).names if c != "model"]
        pd.DataFrame({ITEM_ID_COLUMN: items, "question": [f"Simulated question {i}." for i in items]}).to_parquet(
            content, index=False)
    spec.write_text('name = "tinySimulated"\npretty_name = "tinySimulated"\nlicense = "mit"\n'
                    f'citation = """@misc{{simulated, title={{Simulated}}}}"""\nitem_id_column = "{ITEM_ID_COLUMN}"\n'
                    'split = "test"\n', encoding="utf-8")
    return spec, content


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=int, nargs="*", default=[400, 2000, 7000],
                    help="models of the 0/1 matrices (none: only the soft-score fit)")
    ap.add_argument("--items", type=int, default=ITEMS)
    ap.add_argument("--subscenarios", type=int, default=SUBSCENARIOS, help="subscenarios of the simulated items")
    ap.add_argument("--anchors", type=int, default=100, help="anchors of every fit and of the build")
    ap.add_argument("--soft-models", type=int, nargs="+", default=[2000],
                    help="models of the soft-score matrices, one fit each (0: none; default 2000)")
    ap.add_argument("--estimate-models", type=int, default=7000, help="models to estimate (0: none)")
    ap.add_argument("--no-build", action="store_true", help="skip the end-to-end build of the biggest matrix")
    ap.add_argument("--only-build", action="store_true", help="only the build (of the biggest of --models)")
    ap.add_argument("--work", type=Path, default=None, help="folder for the matrices and outputs, kept and reused (default: a temporary folder, removed "
                         "at the end: the matrices take several GB)")
    ap.add_argument("--memory-cap", type=float, default=12.0, help="address-space cap of each child, GiB (0: none)")
    docs_tables.add_docs_arg(ap)
    ap.add_argument("--docs-section", default="scale", metavar="ID",
                    help="the docs/BENCHMARKS.md table --write-docs replaces (default scale; scale.idle: the "
                         "fit-only timing on an idle machine)")
    args = ap.parse_args(argv)
    args.conditions, args.argv = docs_tables.Conditions(), argv
    if not args.models and (args.only_build or args.estimate_models or not args.no_build):
        ap.error("estimate and build need a 0/1 matrix: give --models, or --estimate-models 0 --no-build")
    cap = int(args.memory_cap * 2**30) if args.memory_cap else None
    work = args.work or Path(tempfile.mkdtemp(prefix="scale-bench-"))
    try:
        return _run(args, work, cap)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


def _run(args, work: Path, cap: int | None) -> int:
    work.mkdir(parents=True, exist_ok=True)
    rows = []

    def fit(models: int, soft: bool):
        path = simulated(work, models, args.items, soft, 0, cap, args.subscenarios)
        out = work / f"fit_{path.stem}"
        r = run_child(_builder("fit", str(path), "--anchors", str(args.anchors), "--seed", "0", "--out", str(out), "--quiet"),
                      cap, work / f"fit_{path.stem}.log")
        label = f"fit {models:,} x {args.items:,}{' soft scores' if soft else ' 0/1'}"
        rows.append((label, models * args.items, r))
        print(_row(label, models * args.items, r), file=sys.stderr, flush=True)
        return out

    fits = {} if args.only_build else {m: fit(m, False) for m in args.models}
    for soft_models in args.soft_models if not args.only_build else []:
        if soft_models:
            fit(soft_models, True)
    biggest = max(args.models, default=0)
    if args.estimate_models and not args.only_build:
        new = simulated(work, args.estimate_models, args.items, False, 1, cap, args.subscenarios)
        r = run_child(_builder("estimate", str(fits[biggest]), str(new), "--out", str(work / "estimates.csv")),
                      cap, work / "estimate.log")
        label = f"estimate {args.estimate_models:,} models (estimator of the {biggest:,}-model fit)"
        rows.append((label, None, r))
        print(_row(label, None, r, per_model=args.estimate_models), file=sys.stderr, flush=True)
    if not args.no_build:
        path = simulated(work, biggest, args.items, False, 0, cap, args.subscenarios)
        spec, content = _spec(work, path)
        r = run_child(_builder("build", "--spec", str(spec), "--responses", str(path), "--content",
                               f"test={content}", "--anchors", str(args.anchors), "--seed", "0",
                               "--version", "1.0.0", "--out", str(work / "build"), "--quiet"),
                      cap, work / "build.log")
        label = f"build {biggest:,} x {args.items:,} (read, fit, card, folder)"
        rows.append((label, biggest * args.items, r))
        print(_row(label, biggest * args.items, r), file=sys.stderr, flush=True)

    head = (f"{os.cpu_count()} cores; every fit runs BLAS on 1 thread (fit_estimator sets it) and its blocks on "
            f"{min(4, os.cpu_count() or 1)} threads; memory cap {args.memory_cap:g} GiB per run")
    print(f"\n{head}; work folder {work}{'' if args.work else ' (removed at the end)'}\n")
    lines = ["| run | cells | wall | user | system | peak RSS | wall per M cells | CPU per M cells | load before, after |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for label, cells, r in rows:
        per = args.estimate_models if label.startswith("estimate") else None
        lines.append(_row(label, cells, r, per_model=per))
    print("\n".join(lines))
    goals = _goals(rows, args)
    if goals:
        print("\n" + "\n".join(goals))
    if args.write_docs:
        text = f"{head}.\n\n" + "\n".join(lines) + ("\n\nGoals checked by the script:\n\n" + "\n".join(goals) if goals else "")
        docs_tables.write_sections([(args.docs_section, "Scale", text)], args.conditions, argv=args.argv,
                                   module="scale")
    bad = [(label, r) for label, _, r in rows if r["code"] != 0]
    for label, r in bad:
        # the end of the child's stderr here too: a temporary work folder goes with its logs
        tail = Path(r["log"]).read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
        print(f"\n{label}: FAILED (exit {r['code']}; see the log {r['log']})" + "".join(f"\n    {t}" for t in tail))
    return 1 if bad else 0


#: the goals of issue 18: the biggest fit (7,000 x 28,659) within 8 GB and 5 minutes, the
#: 400-model fit within 20 s, estimate within 10 ms per model
GOAL_RSS, GOAL_WALL, GOAL_SMALL_WALL, GOAL_ESTIMATE_MS = 8e9, 300.0, 20.0, 10.0


def _goals(rows: list, args) -> list[str]:
    """One line per goal of issue 18 that this run measured: the figure, the goal, met or not."""
    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    fits = {cells: r for label, cells, r in rows if label.startswith("fit") and "soft" not in label
            and r["code"] == 0}
    lines = []
    if fits:
        big, small = max(fits), min(fits)
        r = fits[big]
        lines.append(f"* biggest fit ({big / 1e6:.1f} M cells): peak {r['rss'] / 2**30:.2f} GiB = {r['rss'] / 1e9:.2f} GB (goal <= 8 GB: "
                     f"{verdict(r['rss'] <= GOAL_RSS)}), wall {r['wall']:.0f} s (goal <= 300 s: "
                     f"{verdict(r['wall'] <= GOAL_WALL)}; load {r['load'][0]:.1f} to {r['load'][1]:.1f})")
        if big != small:
            def per(x):
                return (x["user"] + x["sys"]) / (big if x is r else small)

            growth = per(r) / per(fits[small])
            lines.append(f"* growth: CPU time per cell of the biggest fit / of the smallest = {growth:.2f} "
                         f"(goal: no worse than linear in cells, <= 1: {verdict(growth <= 1.0)}); peak memory "
                         f"x{r['rss'] / fits[small]['rss']:.1f} for x{big / small:.1f} cells")
        if small == 400 * args.items and args.items == ITEMS:
            s = fits[small]
            lines.append(f"* 400 x 28,659 fit: wall {s['wall']:.1f} s (goal <= 20 s: {verdict(s['wall'] <= GOAL_SMALL_WALL)}"
                         f"; load {s['load'][0]:.1f} to {s['load'][1]:.1f}), user + system {s['user'] + s['sys']:.1f} s")
    for label, _, r in rows:
        if label.startswith("estimate") and r["code"] == 0:
            ms = r["wall"] / args.estimate_models * 1000
            lines.append(f"* estimate: {ms:.2f} ms per model, wall, start-up and reading included (goal <= 10 ms: "
                         f"{verdict(ms <= GOAL_ESTIMATE_MS)})")
    return lines


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
