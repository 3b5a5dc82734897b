"""A kept design: what an update of a tiny benchmark takes from the previous version's estimator.

``fit_estimator(matrix, keep_design=previous)`` (``build --update-from``) keeps ``previous``'s
design as it is: its item set and their order, the anchor ids and their order, the strata of
every item, the anchor weights (the inclusion probabilities) and the balance weights; only the
IRT model, the regression and the calibration are fitted again. :func:`fixed_design` maps the
design onto a new response matrix and checks that it can be kept; :func:`re_estimates` is the
new estimator's record of the earlier versions whose results it estimates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.model.anchors import AnchorSet
from tinybench_builder.read import ResponseMatrix

__all__ = ["FixedDesign", "fixed_design", "re_estimates"]


@dataclass(frozen=True)
class FixedDesign:
    """``previous``'s design on a response matrix: the rows (models in canonical order), the
    columns of the design's items (in the design's order), the other columns (IRT-only items,
    in canonical order), each design item's scenario and the anchors as they were."""

    rows: np.ndarray
    design_cols: np.ndarray
    extra_cols: np.ndarray
    scenarios: np.ndarray
    anchors: AnchorSet


def fixed_design(previous: TinyEstimator, matrix: ResponseMatrix) -> FixedDesign:
    """Keep ``previous``'s design on ``matrix`` (module docstring); ValueError when it cannot be
    kept: an item of the design without responses, an item in another scenario, or a scenario
    the design lacks (a bundle that gained a config: :func:`tinybench_builder.model.extend.extend_estimator`)."""
    if previous.design == "original":
        raise ValueError("an estimator imported from the original release has no design to keep")
    scen_in = matrix.scenarios().astype(str)
    new_scen = sorted(set(scen_in) - set(previous.scenarios))
    if new_scen:
        raise ValueError(f"the responses hold scenario(s) {', '.join(new_scen)} that the design being kept lacks: "
                         "a bundle that gains a config is calibrated against the kept IRT parameters "
                         "(tinybench_builder.model.extend.extend_estimator)")
    pos = {item: j for j, item in enumerate(matrix.items)}
    missing = [i for i in previous.item_ids if i not in pos]
    if missing:
        raise ValueError(
            f"the responses lack {len(missing)} of the {len(previous.item_ids)} items of the design being kept "
            f"(e.g. {missing[0]!r}): an update keeps the item set; a version without them needs a fresh design "
            "(a new major version, built without --update-from)")
    design_cols = np.array([pos[i] for i in previous.item_ids], dtype=np.int64)
    want = np.array(previous.scenarios, dtype=object)[previous.scenario_index].astype(str)
    wrong = np.flatnonzero(scen_in[design_cols] != want)
    if wrong.size:
        j = int(wrong[0])
        raise ValueError(f"item {previous.item_ids[j]!r} is in scenario {scen_in[design_cols[j]]!r} in the responses "
                         f"but in {want[j]!r} in the design being kept")
    answered = matrix.compact.take(None, design_cols).col_counts()
    empty = np.flatnonzero(answered == 0)
    if empty.size:
        raise ValueError(f"no model has a result on {empty.size} item(s) of the design being kept "
                         f"(e.g. {previous.item_ids[int(empty[0])]!r}): the IRT model cannot be refitted on them")
    rows, canon_cols = matrix.canonical_order(list(previous.scenarios))
    in_design = np.zeros(matrix.shape[1], dtype=bool)
    in_design[design_cols] = True
    extra_cols = np.array([j for j in canon_cols if not in_design[j]], dtype=np.int64)
    seed = previous.metadata.get("seed")
    anchors = AnchorSet(previous.anchor_positions.copy(), previous.anchor_weights.copy(), previous.strata.copy(),
                        previous.design, int(seed) if isinstance(seed, int) else None, previous.anchor_strata.copy())
    return FixedDesign(rows, design_cols, extra_cols, want, anchors)


def re_estimates(previous: TinyEstimator, new: TinyEstimator) -> list[dict]:
    """``metadata["re_estimates"]`` of an estimator that keeps ``previous``'s design: every design
    ``previous`` estimates (its own first), with its positional order when it is not ``new``'s."""
    out = []
    for d in previous.known_designs():
        ids = d["anchor_ids"] if d["anchor_ids"] is not None else list(previous.anchor_ids)
        if d["version"] is None and d["design_hash"] == new.design_hash:
            continue
        out.append({"version": d["version"], "design_hash": d["design_hash"],
                    "anchor_ids": None if ids == list(new.anchor_ids) else ids})
    return out
