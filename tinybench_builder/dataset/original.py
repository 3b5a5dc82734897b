"""Bring the original release along: the original package's ``tinyBenchmarks.pkl`` as estimator side files.

::

    python -m tinybench_builder import-original tinyBenchmarks.pkl --bench mmlu --out tiny_mmlu_original
    python -c "from tinybench_builder.estimator import TinyEstimator; print(TinyEstimator.load('tiny_mmlu_original').estimate(y))"

The pickle (docs/SOURCE_FORMATS.md section 6.2) holds, per ``bench`` in ``lb``, ``mmlu``,
``helm_lite``, ``alpaca``: ``seen_examples`` (the anchors, global item positions, in the order of
the tiny dataset's rows; ``lb``: 100 per scenario, scenario after scenario), ``examples_weights``
(per scenario), ``irt_parameters`` (``A`` (1, D, N), ``B`` (1, 1, N)), ``optimal_lambdas``,
``scenarios_position`` and ``subscenarios_position``. It is read with the restricted unpickler
(:mod:`tinybench_builder.safe_pickle`: numpy arrays and builtin containers only; anything else
is refused before it runs).

:func:`original_estimator` turns one ``bench`` into a :class:`~tinybench_builder.estimator.TinyEstimator`
with ``design="original"``, which computes what the original ``evaluate(y, bench)`` computes
with the same operations (``TinyEstimator`` docstring): given the same parameters, the same irt,
p-IRT and gp-IRT, bit for bit (``tests/dataset/test_original.py`` checks it against the original's code
path on pickles written in its layout). The single leaderboard scenarios (``--bench gsm8k``, ...)
are, as in the original, the ``lb`` model restricted to that scenario: its 100 anchors
(``seen_examples[100 k : 100 (k + 1)]``), its items, the ability fitted on those anchors.

What differs, on purpose:

* items are named ``<subscenario>.<position within it>`` (``<scenario>.`` first in a bundle);
  positional input follows the anchors' order, as the original's ``y`` does;
* anchors left unanswered (``None``/NaN) are allowed: the ability is fitted on the answered
  ones, ``irt`` re-weights the answered anchors, p-IRT counts the unanswered ones as unseen
  items. The original has no such input (with every anchor answered nothing changes);
* p-IRT's share of the seen items is (answered anchors) / N, where the original divides a fixed
  100 by N (the same whenever a scenario has 100 anchors, as in the released pickle);
* no interval: ``ci_low``, ``ci_high`` and ``se`` are NaN (the original has none);
* the balance weights are the original's ``N_sce / (n_sub * n_i)`` per subscenario (its current
  code; an early version set them for the last subscenario only).

The released pickle is not in this repository (nor in ``../shared``), so the published reference
of the issue (``mmlu``, ``y = [1 if i % 3 == 0 else 0 for i in range(100)]`` -> irt
0.3231872855436154, pirt 0.3388445659317948, gpirt 0.3371074242933746) could not be checked here;
with the real pickle, ``python -m tinybench_builder import-original tinyBenchmarks.pkl --bench mmlu --check``
prints these three numbers.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, cast

import numpy as np

from tinybench_builder.errors import OriginalFormatError, nested_too_deeply
from tinybench_builder.registry import get_by_original
from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.layout import (FIT_FORMAT, MANIFEST_SCHEMA_VERSION, check_replaceable, copy_estimator_code, file_sha256, staging,
                     write_manifest)

__all__ = ["ORIGINAL_BENCHES", "LB_SCENARIOS", "OriginalFormatError", "read_original", "original_estimator",
           "import_original", "REFERENCE_Y", "REFERENCE_MMLU", "check_reference"]

#: the original's ``bench`` values with their own model, and the leaderboard scenarios of ``lb``
ORIGINAL_BENCHES = ("lb", "mmlu", "helm_lite", "alpaca")
LB_SCENARIOS = ("truthfulqa", "gsm8k", "winogrande", "arc", "hellaswag")
_KEYS = ("seen_examples", "examples_weights", "irt_parameters", "optimal_lambdas", "scenarios_position",
         "subscenarios_position")
#: the input of the published reference (``--check``) and what the original returns for ``mmlu``
REFERENCE_Y = [1 if i % 3 == 0 else 0 for i in range(100)]
REFERENCE_MMLU = {"irt": 0.3231872855436154, "pirt": 0.3388445659317948, "gpirt": 0.3371074242933746}


def read_original(path: str | os.PathLike) -> dict:
    """The pickle's content, read with the restricted unpickler (no code runs)."""
    from tinybench_builder.errors import SourceError
    from tinybench_builder.safe_pickle import safe_load

    try:
        data = safe_load(Path(path))
    except SourceError as exc:
        raise OriginalFormatError(str(exc)) from None
    if not isinstance(data, dict) or not any(b in data for b in ORIGINAL_BENCHES):
        raise OriginalFormatError(f"{path}: not a tinyBenchmarks.pkl (expected keys among {', '.join(ORIGINAL_BENCHES)})")
    return data


def _ints(values: Any, where: str) -> list[int]:
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and (arr == np.round(arr)).all()):
        raise OriginalFormatError(f"{where}: expected a list of item positions")
    return [int(v) for v in arr.tolist()]


def _entry(data: Mapping, bench: str, where: str) -> dict:
    entry = data.get(bench)
    if not isinstance(entry, dict):
        raise OriginalFormatError(f"{where}: no entry {bench!r} (it has: {', '.join(map(str, data))})")
    missing = [k for k in _KEYS if k not in entry]
    if missing:
        raise OriginalFormatError(f"{where}: entry {bench!r} lacks {', '.join(missing)}")
    return entry


def original_estimator(data: Mapping, bench: str, source: str = "tinyBenchmarks.pkl") -> TinyEstimator:
    """The estimator of ``bench`` (an original ``evaluate`` name: ``mmlu``, ``lb``, ``gsm8k``...)."""
    if bench not in ORIGINAL_BENCHES + LB_SCENARIOS:
        raise ValueError(f"--bench must be one of {', '.join(ORIGINAL_BENCHES + LB_SCENARIOS)}, got {bench!r}")
    model = "lb" if bench in LB_SCENARIOS else bench
    where = f"{source} [{model!r}]"
    e = _entry(data, model, source)
    positions = {str(s): _ints(p, f"{where} scenarios_position[{s!r}]") for s, p in e["scenarios_position"].items()}
    keys = list(positions)
    seen = _ints(e["seen_examples"], f"{where} seen_examples")
    A = np.asarray(e["irt_parameters"]["A"], dtype=np.float64)
    B = np.asarray(e["irt_parameters"]["B"], dtype=np.float64)
    N = max(max(p) for p in positions.values()) + 1
    if A.ndim != 3 or A.shape[0] != 1 or A.shape[2] < N:
        raise OriginalFormatError(f"{where}: irt_parameters A must be (1, D, N) with N >= {N}, got {A.shape}")
    if B.shape not in ((1, 1, A.shape[2]), (1, A.shape[1], A.shape[2])):
        raise OriginalFormatError(f"{where}: irt_parameters B must be (1, 1, N) or (1, D, N), got {B.shape}")
    if B.shape[1] > 1 and not (B == B[:, :1]).all():
        raise OriginalFormatError(f"{where}: per-dimension difficulties B (1, D, N) that differ across dimensions "
                                  "are not supported")
    if bench in LB_SCENARIOS:  # the lb model restricted to one scenario, as the original does
        if bench not in keys:
            raise OriginalFormatError(f"{where}: no scenario {bench!r} (it has: {', '.join(keys)})")
        k = keys.index(bench)
        keys, seen = [bench], seen[100 * k: 100 * (k + 1)]
    # balance weights: the original's N_sce / (n_sub * n_i) per subscenario, 1 elsewhere
    balance = np.ones(N)
    subs = e["subscenarios_position"]
    for s in keys:
        sub = {str(k_): _ints(p, f"{where} subscenarios_position[{s!r}][{k_!r}]")
               for k_, p in (subs.get(s) or {}).items()}
        for p in sub.values():
            balance[p] = len(positions[s]) / (len(sub) * len(p))
    # items: the scenarios' positions in increasing order (the original's unseen order), named
    # <subscenario>.<row within it> (else <row within the scenario>), <scenario>. first in a bundle
    item_pos = sorted({p for s in keys for p in positions[s]})
    scen_of = {p: i for i, s in enumerate(keys) for p in positions[s]}
    names: dict[int, str] = {}
    for s in keys:
        prefix = f"{s}." if len(keys) > 1 else ""
        for sub_name, sub_pos in (subs.get(s) or {}).items():
            for r, q in enumerate(_ints(sub_pos, where)):
                names.setdefault(q, f"{prefix}{sub_name}.{r}")
        for r, q in enumerate(positions[s]):
            names.setdefault(q, f"{prefix}{r}")
    index = {p: j for j, p in enumerate(item_pos)}
    missing = [p for p in seen if p not in index]
    if missing:
        raise OriginalFormatError(f"{where}: seen_examples {missing[:3]} are in no scenario")
    weights = []
    for s in keys:
        w = np.asarray(e["examples_weights"][s], dtype=np.float64).reshape(-1)
        n_s = sum(scen_of[p] == keys.index(s) for p in seen)
        if w.shape != (n_s,):
            raise OriginalFormatError(f"{where}: examples_weights[{s!r}] has {w.size} weights for {n_s} anchors")
        weights.append(w)
    order = [scen_of[p] for p in seen]
    if order != sorted(order):
        raise OriginalFormatError(f"{where}: seen_examples are not grouped by scenario")
    spec = get_by_original(model)
    ours = {}
    for s in keys:
        try:
            ours[s] = spec.scenario_config(s).scenario
        except KeyError:
            ours[s] = s
    scen_index = np.array([scen_of[p] for p in item_pos])
    return TinyEstimator(
        item_ids=[names[p] for p in item_pos], anchor_positions=[index[p] for p in seen],
        anchor_weights=np.concatenate(weights),  # type: ignore[arg-type]  # any array-like
        A=A[0].T[item_pos], b=B[0, 0][item_pos],
        balance=balance[item_pos], scenario_index=scen_index, scenario_names=[ours[s] for s in keys],
        strata=scen_index, prior_mean=np.zeros(A.shape[1]), prior_cov=np.eye(A.shape[1]),
        params={ours[s]: {"method": "gpirt", "lambda": float(e["optimal_lambdas"][s])} for s in keys},
        design="original",
        metadata={"benchmark": get_by_original(bench).name,
                  "original_bench": bench, "original_scenarios": {ours[s]: s for s in keys},
                  "imported_from": {"file": Path(source).name, "bench": model, "items": N,
                                    "note": "the original release's parameters (tinybench-builder import-original)"}},
    )


def import_original(path: str | os.PathLike, bench: str, out: str | os.PathLike) -> tuple[TinyEstimator, Path]:
    """Read the pickle, convert ``bench`` and write its side files, ``estimator.py`` and a manifest to
    ``out``, replaced atomically under the rule of ``fit`` (:func:`tinybench_builder.layout.check_replaceable`)."""
    path = Path(path)
    out = Path(out)
    check_replaceable(out)  # like fit: only an empty folder or one this tool wrote, checked first
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    with nested_too_deeply(path, OriginalFormatError):  # it loads; describing its keys may recurse
        est = original_estimator(read_original(path), bench, source=str(path))
    imported = {**est.metadata["imported_from"], "sha256": file_sha256(path)}
    est = est.replace(metadata={**est.metadata, "imported_from": imported})
    with staging(out) as tmp:
        est.save(tmp)
        copy_estimator_code(tmp)
        write_manifest(tmp, {"format": FIT_FORMAT, "schema_version": MANIFEST_SCHEMA_VERSION,
                             "written_by": "tinybench-builder import-original"})
    return est, out


def check_reference(est: TinyEstimator) -> list[str]:
    """Lines comparing ``est`` (imported ``mmlu``) with the original's published numbers for
    :data:`REFERENCE_Y`; the last line says whether all three agree (to 1e-12)."""
    got = cast(dict, est.estimate(REFERENCE_Y))  # one row: one result
    lines = [f"{k:6s} original {want:.16g}  imported {got[k]:.16g}" for k, want in REFERENCE_MMLU.items()]
    same = all(abs(got[k] - want) <= 1e-12 for k, want in REFERENCE_MMLU.items())
    return lines + ["the published reference is reproduced" if same else "the published reference is NOT reproduced"]
