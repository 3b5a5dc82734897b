"""Compare two versions of ``adaptive.py`` call by call: every session of a grid run on both, bit for bit.

    python scripts/compare_adaptive.py OLD_FILE NEW_FILE [--quick] [--matrix PATH]
    python scripts/compare_adaptive.py OLD_FILE NEW_FILE --speed ROUNDS      # A/B timing at N = 28,659

Each file is imported as its own module (they are standalone: numpy and scipy only). Every
session of the grid (simulated IRT parameters: dimensions, sizes, bundles of scenarios, seeds,
budgets, ``target_halfwidth`` stops, batch sizes 1, 7 and 32, warm starts, pools, skips, soft
scores, out-of-order and partial records, every option at non-default values, and the errors
of bad calls) is run on both files with the same calls; every ``next_items`` list, every
``record`` return, ``pending``, ``n_drawn``, ``n_skipped``, ``done``, and the final
``result()`` and ``history()`` are compared with ``==`` (NaN equal to NaN only; no tolerance,
and the types too). ``--matrix`` adds sessions on an estimator fitted on a real response
matrix (a ``ResponseMatrix`` file, fitted with the package). Prints the number of sessions,
calls and differences; exits 1 on a difference.

Written to check that splitting ``AdaptiveSession`` by job (issue 27) changed nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import math
import sys
import zlib
from typing import Any

import numpy as np
from scipy.special import expit


def load(path: str, name: str):
    """``path`` imported as module ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def same(a: Any, b: Any) -> bool:
    """Exactly equal, recursively: same types, floats ``==`` (NaN only equal to NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))
    return a == b


def world(seed: int, n_items: int, n_dims: int, n_scen: int):
    """Simulated IRT parameters, weights and scenarios, and one model's results (hard, soft, missing)."""
    rng = np.random.default_rng(seed)
    A = np.abs(rng.normal(0, 1, (n_items, n_dims))) * (1.2 / math.sqrt(n_dims)) + 0.1
    b = rng.normal(0, 1.5, n_items)
    weights = rng.uniform(0.5, 2.0, n_items)
    scen = np.sort(rng.integers(0, n_scen, n_items))
    scen[:n_scen] = np.arange(n_scen)  # every scenario has an item
    names = [f"s{s}" for s in range(n_scen)]
    L = rng.standard_normal((n_dims, n_dims)) * 0.3
    prior_mean, prior_cov = rng.normal(0, 0.5, n_dims), np.eye(n_dims) * 0.8 + L @ L.T
    theta = rng.standard_normal(n_dims) + rng.choice([-2.0, 0.0, 2.0])
    p = expit(A @ theta - b)
    hard = (rng.random(n_items) < p).astype(float)
    soft = np.clip(p + rng.normal(0, 0.1, n_items), 0, 1).round(3)
    ids = [f"q{j}" for j in range(n_items)]
    return ids, (A, b, weights, scen, names, prior_mean, prior_cov), hard, soft, rng


class Pair:
    """The same session on both modules; every call is made on both and its outcomes compared."""

    def __init__(self, mods, make: str | None, args: tuple, kwargs: dict, counter: dict):
        self.counter = counter
        # AdaptiveSession(*args, **kwargs), or AdaptiveSession.<make>(*args, **kwargs), of each module
        self.s = self.call(lambda m: (getattr(m.AdaptiveSession, make) if make else m.AdaptiveSession)(*args, **kwargs),
                           mods)

    def call(self, fn, targets):
        outs = []
        for t in targets:
            try:
                outs.append(("ok", fn(t)))
            except Exception as exc:  # noqa: BLE001 -- an error counts as an outcome: the same type and message
                outs.append(("error", f"{type(exc).__name__}: {exc}"))
        self.counter["calls"] += 1
        (kind_a, a), (kind_b, b) = outs
        if kind_a != kind_b or not (same(a, b) if kind_a == "error" or not hasattr(a, "next_items") else True):
            self.counter["differences"] += 1
            if self.counter["differences"] <= 5:
                print("DIFFERENCE:", repr(outs[0])[:400], "\n        vs:", repr(outs[1])[:400], file=sys.stderr)
        return [o[1] for o in outs] if all(o[0] == "ok" for o in outs) else None

    def __call__(self, method: str, *args):
        """``session.<method>(*args)`` on both (or the attribute ``method`` without ``args``); its value on the first."""
        if self.s is None:
            return None
        out = self.call(lambda s: getattr(s, method)(*args) if args or method in self.METHODS else getattr(s, method),
                        self.s)
        return out[0] if out is not None else None

    METHODS = ("result", "history")

    def state(self):
        """Compare the public state of both sessions."""
        for name in ("n_drawn", "pending", "n_skipped", "done"):
            self(name)


def run(pair: Pair, ids, hard, soft, rng, batch: int, how: dict) -> None:
    """A session's loop: draw, record (partly, out of order, with skips), until done (or a cap)."""
    y = dict(zip(ids, (soft if how.get("soft") else hard).tolist()))
    missing = {ids[j] for j in rng.choice(len(ids), size=int(how.get("missing", 0.0) * len(ids)), replace=False)}
    local = np.random.default_rng(int(rng.integers(1 << 31)))
    held: list[str] = []
    for _ in range(400):
        if pair.s is None or pair("done"):
            break
        new = pair("next_items", int(batch)) or []
        pair.state()
        todo = held + new
        if how.get("partial") and len(todo) > 1:  # record a part now, the rest after the next draws
            local.shuffle(todo)
            cut = int(local.integers(1, len(todo)))
            todo, held = todo[:cut], todo[cut:]
        else:
            held = []
        if not todo:
            if not new:
                break
            continue
        results = {i: (None if i in missing else y[i]) for i in todo}
        if how.get("skip_call") and len(todo) > 2:
            pair("skip", todo[0])
            results[todo[0]] = None
        pair("record", dict(reversed(list(results.items()))))
        pair.state()
        if how.get("errors"):
            pair("record", {ids[0]: 1.0})  # not asked (or already recorded: same score, a no-op)
            last = todo[-1]
            pair("record", {last: 0.5 if results[last] != 0.5 else 0.25})  # a contradiction
    pair("result")
    pair("history")


def _key(*parts) -> int:
    """A seed from the session's description (the same in every run)."""
    return zlib.crc32(repr(parts).encode())


def grid(quick: bool):
    """(world arguments, session keyword arguments, batch, how) of every session."""
    worlds = [(0, 300, 1, 1), (1, 600, 2, 1), (2, 400, 3, 3), (3, 1500, 2, 4)]
    if not quick:
        worlds += [(4, 3000, 5, 1), (5, 250, 2, 2)]
    options = [
        {},
        {"mixing": 0.5, "tempering": 0.0},
        {"mixing": 1.0, "tempering": 2.0, "prior_scale": 3.0},
        {"tempering": 0.5, "calibrate": True},
        {"variance_floor": True, "variance_prior": 0.0},
        {"variance_prior": 20.0, "confidence": 0.9, "offset_scale": 2.0},
        {"mixing": 0.05, "prior_scale": 0.2, "calibrate": True, "variance_floor": True, "variance_prior": 2.5},
    ]
    stops = [{"budget": 40}, {"budget": 150}, {"target_halfwidth": 0.06, "min_draws": 10},
             {"budget": 120, "target_halfwidth": 0.09}, {"budget": 10_000}]
    hows = [{}, {"partial": True}, {"missing": 0.15, "skip_call": True}, {"soft": True, "errors": True},
            {"missing": 0.6, "partial": True}]
    for w, (opt, stop, batch, how) in itertools.product(worlds, itertools.product(options, stops, (1, 7, 32), hows)):
        if quick and _key(w, opt, stop, batch, how) % 3:
            continue
        if stop.get("budget") == 10_000 and w[1] > 600:
            continue  # every item of the pool: only on the small worlds
        yield w, {**opt, **stop}, batch, how


def extras(seed: int):
    """Sessions with a start, a pool, a seed of their own, max_skips, and bad arguments."""
    yield {"seed": seed, "budget": 60, "start": "tiny"}, 7, {}
    yield {"seed": seed + 1, "budget": 60, "pool": "half"}, 7, {"missing": 0.1}
    yield {"seed": seed + 2, "budget": 80, "start": "tiny", "pool": "half"}, 32, {"partial": True}
    yield {"seed": seed + 3, "budget": 30, "max_skips": 3}, 7, {"missing": 0.5}
    yield {"seed": seed + 4, "target_halfwidth": 0.05, "max_skips": 0}, 1, {"missing": 0.9}
    yield {"seed": seed + 5, "budget": 25}, 7, {"missing": 1.0}
    for bad in ({}, {"budget": -1}, {"budget": 5, "mixing": 0}, {"budget": 5, "target_halfwidth": 2},
                {"budget": 5, "variance_prior": -1}, {"budget": 5, "seed": -3}, {"budget": 5, "confidence": 1.5},
                {"budget": 5, "start": {"nope": 1}}, {"budget": 5, "start": {"q1": 2}}, {"budget": 5, "pool": "q1"},
                {"budget": 5, "tempering": 3}, {"budget": 5, "min_draws": -2}):
        yield bad, 1, {}


def real_sessions(path: str, mods, counter) -> None:
    """Sessions on an estimator fitted on a real response matrix (``from_estimator``)."""
    from tinybench_builder.model import fit_estimator
    from tinybench_builder.read import ResponseMatrix

    matrix = ResponseMatrix.read(path)
    n_test = 6  # the first rows are the models evaluated; the estimator is fitted on the others
    est = fit_estimator(matrix.select_models(range(n_test, matrix.shape[0])), n_anchors=100, seed=0,
                        progress=False).estimator
    configs = [(1, {"budget": 50}, {}), (7, {"budget": 200, "calibrate": True}, {"partial": True}),
               (32, {"target_halfwidth": 0.03, "tempering": 0.5}, {"missing": 0.05}),
               (7, {"budget": 100, "start": "tiny"}, {})]
    for r, (batch, kw, how) in itertools.product(range(n_test), configs):
        row = dict(zip(matrix.items, matrix.score_rows([r])[0].tolist()))
        y = np.array([row[i] for i in est.item_ids])
        pool = [i for i, v in zip(est.item_ids, y) if not math.isnan(v)]
        if kw.get("start") == "tiny":
            kw = {**kw, "start": {a: row[a] for a in est.anchor_ids if not math.isnan(row[a])}}
        sess = Pair(mods, "from_estimator", (est,), {**kw, "seed": r, "pool": pool}, counter)
        y = np.nan_to_num(y)
        run(sess, est.item_ids, y, y, np.random.default_rng(r), batch, how)
        counter["sessions"] += 1
        counter["real sessions"] += 1


def speed(mods, rounds: int, n_items: int = 28_659, n_dims: int = 2, budget: int = 200) -> list[str]:
    """A/B timing: the median wall (and CPU) time per ``next_items`` + ``record`` call, old and new
    alternating session by session (ABBA order) in the same process, at N items (the set-up of
    ``python -m benchmarks.adaptive --speed``: simulated 2-D parameters, budget 200)."""
    import time

    rng = np.random.default_rng(0)
    A = np.abs(rng.normal(0, 1, (n_items, n_dims))) * (1.2 / math.sqrt(n_dims)) + 0.1
    b = rng.normal(0, 1.5, n_items)
    ids = [f"item{j}" for j in range(n_items)]
    y = dict(zip(ids, (rng.random(n_items) < expit(rng.standard_normal(n_dims) @ A.T - b)).astype(float).tolist()))
    args = (ids, A, b, np.ones(n_items), np.zeros(n_items, int), ["s"], np.zeros(n_dims), np.eye(n_dims))
    tiny = {ids[j]: y[ids[j]] for j in range(0, n_items, n_items // 100)[:100]}
    lines = ["| batch | start | calls per version | old: median ms / call, wall | new | old: CPU | new: CPU |",
             "|---:|---|---:|---:|---:|---:|---:|"]
    for batch, start in itertools.product((1, 10), (None, tiny)):
        wall: dict[int, list[float]] = {0: [], 1: []}
        cpu: dict[int, list[float]] = {0: [], 1: []}
        for r in range(rounds):
            for v in ((0, 1) if r % 2 == 0 else (1, 0)):
                s = mods[v].AdaptiveSession(*args, budget=budget, seed=r, start=start, pool=ids)
                while not s.done:
                    t0, c0 = time.perf_counter(), time.process_time()
                    got = s.next_items(batch)
                    s.record({i: y[i] for i in got})
                    wall[v].append(time.perf_counter() - t0)
                    cpu[v].append(time.process_time() - c0)
        lines.append(f"| {batch} | {'tiny split (100)' if start else 'none'} | {len(wall[0])} | "
                     + " | ".join(f"{1000 * np.median(t[v]):.2f}" for t in (wall, cpu) for v in (0, 1)) + " |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--quick", action="store_true", help="a third of the grid")
    ap.add_argument("--matrix", help="also sessions on an estimator fitted on this response matrix")
    ap.add_argument("--speed", type=int, metavar="ROUNDS", help="only the A/B timing at N = 28,659, ROUNDS sessions each")
    args = ap.parse_args(argv)
    mods = [load(args.old, "_adaptive_old"), load(args.new, "_adaptive_new")]
    if args.speed:
        print("\n".join(speed(mods, args.speed)))
        return 0
    counter = {"sessions": 0, "calls": 0, "differences": 0, "real sessions": 0}
    worlds: dict = {}
    for (w, kwargs, batch, how) in itertools.chain(grid(args.quick), ((w, *e) for w in [(2, 400, 3, 3)]
                                                                       for e in extras(11))):
        if w not in worlds:
            worlds[w] = world(*w)
        ids, arrays, hard, soft, _ = worlds[w]
        rng = np.random.default_rng(_key(w, kwargs, batch, how))
        kw = dict(kwargs)
        kw.setdefault("seed", int(rng.integers(0, 1000)))
        if kw.get("start") == "tiny":
            kw["start"] = {ids[j]: float(hard[j]) for j in range(0, len(ids), len(ids) // 40)}
        if kw.get("pool") == "half":
            kw["pool"] = ids[::2]
        pair = Pair(mods, None, (ids, *arrays), kw, counter)
        run(pair, ids, hard, soft, rng, batch, how)
        counter["sessions"] += 1
    if args.matrix:
        real_sessions(args.matrix, mods, counter)
    print(", ".join(f"{k}: {v:,}" for k, v in counter.items()))
    return 1 if counter["differences"] else 0


if __name__ == "__main__":
    sys.exit(main())
