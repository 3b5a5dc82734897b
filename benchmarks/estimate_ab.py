"""The estimate's speed, code A against code B, alternated on one saved estimator.

    python -m benchmarks.estimate_ab --old ../old                  # ../old: a checkout of the code before
    python -m benchmarks.estimate_ab --old ../old --rounds 8 --write-docs

A refactoring of ``estimator.py`` must not make an estimate slower. On a shared machine the load
changes from minute to minute, so the two codes are timed in turns (old, new, old, new, ...),
each turn a fresh process that imports its checkout's ``tinybench_builder`` (``PYTHONPATH``), on
the same saved estimator and the same simulated models, on one BLAS thread (what
``tinybench-builder estimate`` uses). Each turn times, per model: one call per model with every
anchor answered (``single``), one call per model with 30% of the anchors unanswered
(``partial``), and one batched call (``batched``); wall time (``perf_counter``) and the process's
CPU time (``process_time``, less sensitive to the other processes on the machine). The table
gives, per code, the median over all turns and the spread (the lowest and highest turn median),
and the median of the rounds' ratios new / old (a round's two turns run one after the other).

The estimator (400 models x 28,659 items simulated from a 2-D 2PL, k = 100, seed 0, the shape of
:mod:`benchmarks.speed`) is fitted once by the new code into ``--folder`` when that folder does not
hold one yet; both codes then load the same side files.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks.docs_tables import Conditions, add_docs_arg, write_section
from tinybench_builder.layout import ESTIMATOR_JSON

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("single", "partial", "batched")
CLOCKS = ("wall", "cpu")

__all__ = ["main", "summarize"]

# run in a fresh process per turn, with PYTHONPATH at the checkout timed: imports only its package
WORKER = r"""
import json, sys, time
import numpy as np
from threadpoolctl import threadpool_limits
import tinybench_builder
from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.read import simulate_responses

folder, repeats, n_models = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
est = TinyEstimator.load(folder)
new, _ = simulate_responses(n_models=n_models, n_items=len(est.item_ids), n_dims=2, seed=1)
Ya = new.scores[:, est.anchor_positions]
Yp = np.where(np.random.default_rng(0).random(Ya.shape) < 0.3, np.nan, Ya)
out = {"code": tinybench_builder.__file__}
clocks = {"wall": time.perf_counter, "cpu": time.process_time}
with threadpool_limits(limits=1, user_api="blas"):
    est.estimate(Ya[0]); est.estimate(Yp[0]); est.estimate(Ya)  # warm up
    for _ in range(repeats):
        for kind, rows in (("single", Ya), ("partial", Yp), ("batched", Ya)):
            for clock, now in clocks.items():
                t0 = now()
                if kind == "batched":
                    est.estimate(rows)
                else:
                    for r in rows:
                        est.estimate(r)
                out.setdefault(f"{kind}_{clock}", []).append((now() - t0) / len(rows) * 1000)
print(json.dumps(out))
"""

FIT = r"""
import sys
from tinybench_builder.model import fit_estimator
from tinybench_builder.read import simulate_responses
matrix, _ = simulate_responses(n_models=400, n_items=28659, n_dims=2, seed=0)
fit_estimator(matrix, n_anchors=100, seed=0, progress=False).estimator.save(sys.argv[1])
"""


def _run(code: str, checkout: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, cwd="/")
    if done.returncode:
        raise SystemExit(f"{checkout}: the timing process failed:\n{done.stderr}")
    return done.stdout


def summarize(turns: dict[str, list[dict]]) -> dict[str, dict[str, tuple[float, float, float]]]:
    """Per code and measure (``single_wall``, ...): (median over every repeat of every turn, lowest
    turn median, highest turn median), in ms per model; and under ``"paired"`` per measure: the
    median, lowest and highest of the rounds' ratios new / old (each round's two turns ran one
    after the other, so the ratio is the least disturbed by the load changing)."""
    out: dict[str, dict[str, tuple[float, float, float]]] = {}
    for name, runs in turns.items():
        out[name] = {}
        for kind in KINDS:
            for clock in CLOCKS:
                key = f"{kind}_{clock}"
                medians = [statistics.median(r[key]) for r in runs]
                every = [x for r in runs for x in r[key]]
                out[name][key] = (statistics.median(every), min(medians), max(medians))
    out["paired"] = {}
    for kind in KINDS:
        for clock in CLOCKS:
            key = f"{kind}_{clock}"
            ratios = [statistics.median(n[key]) / statistics.median(o[key]) for o, n in zip(turns["old"], turns["new"])]
            out["paired"][key] = (statistics.median(ratios), min(ratios), max(ratios))
    return out


def table(summary: dict[str, dict[str, tuple[float, float, float]]], rounds: int) -> str:
    """The Markdown table: one row per measure, old and new side by side, and new / old."""
    old, new, paired = summary["old"], summary["new"], summary["paired"]
    lines = [f"| estimate, ms per model ({rounds} turns each) | old | new | new / old, by round |",
             "|---|---:|---:|---:|"]
    what = {"single": "one call per model, all anchors", "partial": "one call per model, 30% unanswered",
            "batched": "one batched call"}
    for kind in KINDS:
        for clock in CLOCKS:
            key = f"{kind}_{clock}"
            o, n, p = old[key], new[key], paired[key]
            lines.append(f"| {what[kind]}, {clock} | {o[0]:.2f} ({o[1]:.2f}-{o[2]:.2f}) | "
                         f"{n[0]:.2f} ({n[1]:.2f}-{n[2]:.2f}) | {p[0]:.2f} ({p[1]:.2f}-{p[2]:.2f}) |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.estimate_ab", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", type=Path, required=True, help="a checkout of the code before (its repository top)")
    ap.add_argument("--new", type=Path, default=ROOT, help="the code after (default: this checkout)")
    ap.add_argument("--folder", type=Path, default=ROOT / "benchmarks" / "cache" / "estimate_ab",
                    help="the saved estimator both codes load (fitted by the new code when missing)")
    ap.add_argument("--rounds", type=int, default=6, help="turns of each code, alternated")
    ap.add_argument("--repeats", type=int, default=7, help="timings of each measure within a turn")
    ap.add_argument("--models", type=int, default=50, help="models estimated per timing")
    ap.add_argument("--out", type=Path, default=None, help="also write every turn's timings here (JSON lines)")
    add_docs_arg(ap)
    args = ap.parse_args(argv)
    if not (args.folder / ESTIMATOR_JSON).is_file():
        print(f"fitting the estimator into {args.folder} (400 x 28,659, k = 100) ...", file=sys.stderr)
        args.folder.mkdir(parents=True, exist_ok=True)
        _run(FIT, args.new.resolve(), str(args.folder.resolve()))
    conditions = Conditions()
    turns: dict[str, list[dict]] = {"old": [], "new": []}
    for i in range(args.rounds):
        for name in ("old", "new") if i % 2 == 0 else ("new", "old"):  # neither always goes first
            checkout = (args.old if name == "old" else args.new).resolve()
            res = json.loads(_run(WORKER, checkout, str(args.folder.resolve()), str(args.repeats), str(args.models)))
            if not str(res["code"]).startswith(str(checkout)):
                raise SystemExit(f"{name}: imported {res['code']}, not the checkout {checkout}")
            turns[name].append(res)
            if args.out:
                with args.out.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"round": i + 1, "turn": name, "load": os.getloadavg()[0], **res}) + "\n")
            print(f"round {i + 1} {name}: single {statistics.median(res['single_wall']):.2f} ms wall, "
                  f"{statistics.median(res['single_cpu']):.2f} ms cpu", file=sys.stderr)
    md = table(summarize(turns), args.rounds)
    print(f"old: {args.old}\nnew: {args.new}\n\n{md}")
    if args.write_docs:
        import numpy  # noqa: F401  (loads the BLAS that threadpool_limits limits)
        from threadpoolctl import threadpool_limits

        # the provenance line reads this process's BLAS threads: say those the timed processes used
        with threadpool_limits(limits=1, user_api="blas"):
            write_docs(md, conditions)
    return 0


def write_docs(md: str, conditions: Conditions) -> None:
    """The table into docs/BENCHMARKS.md (section ``estimate_ab``)."""
    write_section("estimate_ab", md + "\n\nold, new: the median over every timing of every turn, in brackets "
                  "the lowest and highest turn median; new / old: the median of the rounds' ratios (lowest-highest).",
                  conditions, title="The estimate, old code against new", module="estimate_ab")


if __name__ == "__main__":
    raise SystemExit(main())
