"""The original release's ``tinyBenchmarks.pkl`` layout (docs SOURCE_FORMATS.md section 6.2), written
with made-up parameters, and the original ``evaluate(y, bench)`` code path as the oracle.

:func:`original_evaluate` follows the original package's ``tinyBenchmarks/__init__.py`` step by
step (load the entry, balance weights, the lb scenario slice, ``y`` over all items, theta by
BFGS, per-scenario irt / p-IRT / gp-IRT), with the theta fit and the item curve of
:mod:`benchmarks.original`, which mirror the original's numerics.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np

from benchmarks.original import original_fit_theta, original_item_curve

LB_SCENARIOS = ["truthfulqa", "gsm8k", "winogrande", "arc", "hellaswag"]
BENCHES = ["lb", "mmlu", "helm_lite", "alpaca"]


def _entry(rng, scenarios: dict[str, dict[str, int]], D: int, per_dim_b: bool = False) -> dict:
    """One bench: ``scenarios`` maps scenario -> {subscenario: n_items} ({} = no subscenarios:
    give the item count as {"": n})."""
    positions, subs, start = {}, {}, 0
    for s, parts in scenarios.items():
        pos, subs[s] = [], {}
        for sub, n in parts.items():
            p = list(range(start, start + n))
            start += n
            pos += p
            if sub:
                subs[s][sub] = p
        positions[s] = pos
    N = start
    A = np.abs(rng.normal(1.0, 0.5, size=(1, D, N)))
    B = rng.normal(0.0, 1.5, size=(1, 1, N))
    if per_dim_b:
        B = np.repeat(B, D, axis=1)
    seen, weights, lambdas = [], {}, {}
    for s, pos in positions.items():
        seen += sorted(rng.choice(pos, size=100, replace=False).tolist(), key=lambda _: rng.random())
        w = rng.random(100) + 0.1
        weights[s] = w / w.sum()
        lambdas[s] = float(rng.uniform(0.2, 0.9))
    return {"seen_examples": seen, "examples_weights": weights, "irt_parameters": {"A": A, "B": B},
            "optimal_lambdas": lambdas, "scenarios_position": positions, "subscenarios_position": subs}


def write_original_pickle(path: Path, seed: int = 0, D: int = 2) -> dict:
    """A ``tinyBenchmarks.pkl`` with the four benches (small: 130-600 items per scenario)."""
    rng = np.random.default_rng(seed)
    data = {
        "mmlu": _entry(rng, {"mmlu": {"harness_hendrycksTest_anatomy_5": 135, "harness_hendrycksTest_astronomy_5": 152,
                                      "harness_hendrycksTest_virology_5": 166, "harness_hendrycksTest_marketing_5": 234}},
                       D),
        "lb": _entry(rng, {"truthfulqa": {"harness_truthfulqa_mc_0": 160}, "gsm8k": {"harness_gsm8k_5": 180},
                           "winogrande": {"harness_winogrande_5": 150}, "arc": {"harness_arc_challenge_25": 170},
                           "hellaswag": {"harness_hellaswag_10": 210},
                           "mmlu": {"harness_hendrycksTest_anatomy_5": 120, "harness_hendrycksTest_virology_5": 90}},
                      D),
        "helm_lite": _entry(rng, {"gsm:": {"": 140}, "med_qa:": {"": 130}}, D, per_dim_b=True),
        "alpaca": _entry(rng, {"alpaca_v2": {"": 300}}, D),
    }
    path.write_bytes(pickle.dumps(data, protocol=4))
    return data


def original_evaluate(data: dict, y_input, bench: str) -> dict:
    """``tinyBenchmarks.evaluate(y_input, bench)`` on the pickle's content ``data``."""
    number_of_examples = 100
    y_input = np.asarray(y_input)
    assert y_input.ndim == 1 and bench in BENCHES + LB_SCENARIOS
    bench_name = "lb" if bench in LB_SCENARIOS else bench
    e = data[bench_name]
    seen_examples = e["seen_examples"]
    A, B = e["irt_parameters"]["A"], e["irt_parameters"]["B"]
    positions, subpositions = e["scenarios_position"], e["subscenarios_position"]
    N = np.max([np.max(x) for x in positions.values()]) + 1
    balance_weights = np.ones(N)
    for scenario in positions:
        N_sce = len(positions[scenario])
        n_sub = len(subpositions[scenario])
        for sub in subpositions[scenario]:
            n_i = len(subpositions[scenario][sub])
            balance_weights[subpositions[scenario][sub]] = N_sce / (n_sub * n_i)
    if bench not in BENCHES:
        scenarios = [bench]
        start = number_of_examples * [i for i, s in enumerate(positions) if s == bench][0]
        seen_examples = seen_examples[start:start + number_of_examples]
    else:
        scenarios = list(positions)
    y = np.zeros(N)
    for i, j in enumerate(seen_examples):
        y[j] = y_input[i]
    theta = original_fit_theta(y, seen_examples, A, B)
    unseen_examples = [i for i in range(N) if i not in seen_examples]
    out = {}
    for scenario in scenarios:
        N_sce = len(positions[scenario])
        seen_sce = [s for s in seen_examples if s in positions[scenario]]
        unseen_sce = [s for s in unseen_examples if s in positions[scenario]]
        data_part = ((balance_weights * y)[seen_sce]).mean()
        irt_part = (balance_weights * original_item_curve(theta.reshape(1, A.shape[1], 1), A, B))[0, [unseen_sce]].mean()
        lambd = number_of_examples / N_sce
        irt = (e["examples_weights"][scenario] * y[seen_sce]).sum()
        pirt = lambd * data_part + (1 - lambd) * irt_part
        out[scenario] = {"irt": irt, "pirt": pirt,
                         "gpirt": e["optimal_lambdas"][scenario] * irt + (1 - e["optimal_lambdas"][scenario]) * pirt}
    return out
