"""The Open LLM Leaderboard v2 benchmarks: their metrics and normalisation (the entries are spec files).

The leaderboard (June 2024 - 2025) ranks models on six lm-evaluation-harness tasks, run with
the Hugging Face fork of lm-eval 0.4.3 (its ``leaderboard_*`` tasks, now in lm-eval's
``lm_eval/tasks/leaderboard``). Each gets a tiny benchmark (a spec file of ``registry/registered/``,
``tinyIFEval.toml`` ...), and ARC-Challenge too (the
early v2 runs had ``leaderboard_arc_challenge``, 25-shot; it is not in the leaderboard's
average), and the bundle ``tinyOpenLLMLeaderboardV2`` has one config per benchmark (one IRT
model across them). Subtasks are subscenarios (item ids ``<subtask>.<doc_id>``, as
``tinybench-builder ingest --task leaderboard_bbh`` names them).

==================  =========================  =======================  ======================  ================
benchmark           source task                per-example metric       subtasks weighted       chance
==================  =========================  =======================  ======================  ================
tinyIFEval          leaderboard_ifeval         prompt_level_strict_acc  (one task)              0
tinyBBH             leaderboard_bbh            acc_norm                 1 / (1 - chance_k)      1 / choices
tinyMATHHard        leaderboard_math           exact_match              by size (7 subjects)    0
tinyGPQA            leaderboard_gpqa           acc_norm                 by size (3 subsets)     0.25
tinyMuSR            leaderboard_musr           acc_norm                 1 / (1 - chance_k)      1/2, 1/5, 1/3
tinyMMLUPro         leaderboard_mmlu_pro       acc                      (one task)              0.1
tinyArcChallengeV2  leaderboard_arc_challenge  acc_norm                 (one task)              (not normalised)
==================  =========================  =======================  ======================  ================

What the estimator estimates
----------------------------
The leaderboard shows, per benchmark, a normalised score ``100 * max(0, (raw - chance) /
(1 - chance))`` (its documentation's "Scores normalization"): for BBH and MuSR per subtask and
then averaged over the subtasks; for MATH-hard and GPQA on the group's raw score (lm-eval's
mean over all items, ``weight_by_size``); IFEval is the mean of prompt- and instruction-level
strict accuracy, MATH-hard and IFEval have chance 0 (no shift). The estimator estimates, per
config, the *leaderboard-weighted raw score*

    score = sum_k w_k * (mean over subtask k of the per-example metric),   sum_k w_k = 1,

with ``w_k`` by size (MATH-hard, GPQA), ``w_k`` proportional to ``1 / (1 - chance_k)`` (BBH, MuSR: the
weight of subtask k's accuracy in the mean of normalised subtask scores) or the one subtask.
The leaderboard's normalised score is then the affine map :func:`normalization` gives,

    normalised = 100 * max(0, (score - offset) * scale),

exact for the benchmarks with one chance level, and for BBH and MuSR exact unless a subtask is
below its chance level (the leaderboard clips each subtask at 0, the map clips the sum). The
interval maps the same way. IFEval's estimate is prompt-level strict accuracy only (the
matrices hold that); the leaderboard's IFEval column also averages in instruction-level
accuracy, which is not estimated. The map is stored in ``estimator.json`` (metadata
``normalization``) and printed in the card.

Content and prompts
-------------------
Every config takes its content from the evaluation source (``content_from="source"``): built
from leaderboard v2 details, the rows are the details' documents (``doc``: the dataset row after
the task's ``process_docs``) and ``input_formatted`` is rendered by
:mod:`tinybench_builder.registry.prompts_v2` and checked against the prompt each details record logged;
built from a score table (no documents), the rows hold the item ids only (the card says so and
``release --push`` needs ``allow_missing_content``). A content file in the dataset's schema,
with ``subscenario``/``doc_id``-style item ids, may be given instead (``--content test=...``).
MMLU-Pro's and ARC's few-shot splits (``validation``, ``train``) come from ``--content`` or the
upstream dataset. GPQA asks that its questions not be published in plain text online (its
dataset card): release its rows gated or as ids only.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from tinybench_builder.registry.benchmarks import REGISTRY
from tinybench_builder.registry.entries import ConfigSpec
from tinybench_builder.registry.prompts_v2 import bbh_choices, bbh_subtasks

__all__ = [
    "V2_BENCHMARKS", "V2_CONFIGS", "MATH_HARD_SUBJECTS", "GPQA_SUBSETS", "MUSR_SUBTASKS", "BBH_CHANCE", "MUSR_CHANCE",
    "subscenario_weights", "normalization",
]

#: lm-eval's leaderboard_math_<subject>_hard tasks; subscenario ``<subject>_hard``
MATH_HARD_SUBJECTS = ("algebra", "counting_and_prob", "geometry", "intermediate_algebra", "num_theory",
                      "prealgebra", "precalculus")
GPQA_SUBSETS = ("diamond", "extended", "main")
MUSR_SUBTASKS = ("murder_mysteries", "object_placements", "team_allocation")
#: chance level of each BBH subtask: 1 / its number of choices (the leaderboard's lower bounds; tinyBBH.toml's
#: ``chance`` table holds these numbers, tests/registry/test_leaderboard_v2.py checks that they agree)
BBH_CHANCE = {s: 1.0 / len(bbh_choices(s)) for s in bbh_subtasks()}
#: MuSR's lower bounds (the leaderboard's documentation: 2, 5 and 3 choices)
MUSR_CHANCE = {"murder_mysteries": 1 / 2, "object_placements": 1 / 5, "team_allocation": 1 / 3}

#: the v2 tiny benchmarks in the leaderboard's column order (IFEval, BBH, MATH, GPQA, MuSR, MMLU-Pro), then ARC
#: (their spec files: registry/registered/<name>.toml; the bundle tinyOpenLLMLeaderboardV2 copies their configs)
V2_BENCHMARKS = ("tinyIFEval", "tinyBBH", "tinyMATHHard", "tinyGPQA", "tinyMuSR", "tinyMMLUPro", "tinyArcChallengeV2")
V2_CONFIGS = tuple(REGISTRY[name].configs[0] for name in V2_BENCHMARKS)


# ------------------------------------------------------------------ weights and normalisation
def subscenario_weights(config: ConfigSpec, counts: Mapping[str, int]) -> dict[str, float] | None:
    """Relative weight of each subscenario of ``config`` in its score (``counts``: items per
    subscenario present); None for equal weights (the default of the fit)."""
    how = config.subscenario_weighting
    if how == "equal":
        return None
    if how == "size":
        return {s: float(n) for s, n in counts.items()}
    chance = config.chance if isinstance(config.chance, dict) else {}
    unknown = [s for s in counts if s not in chance]
    if unknown:
        raise ValueError(f"config {config.name!r}: no chance level for subscenario(s) {', '.join(unknown)} "
                         f"(known: {', '.join(chance)})")
    return {s: 1.0 / (1.0 - float(chance[s])) for s in counts}


def normalization(config: ConfigSpec, subscenarios: Iterable[str] = ()) -> dict | None:
    """The leaderboard's normalised score from the estimator's score ``s`` of ``config``:
    ``100 * max(0, (s - offset) * scale)`` (module docstring); None when the leaderboard reports
    none. ``subscenarios``: those present (default: all the registry knows)."""
    if config.chance is None:
        return None
    if not isinstance(config.chance, dict):
        c = float(config.chance)
        return {"offset": c, "scale": 1.0 / (1.0 - c), "formula": "100 * max(0, (score - offset) * scale)",
                "chance": c}
    present = set(subscenarios)
    subs = [s for s in config.chance if s in present] or list(config.chance)  # the registry's order: deterministic
    if config.subscenario_weighting != "chance":
        raise ValueError(f"config {config.name!r}: per-subscenario chance levels need subscenario_weighting 'chance'")
    inv = [1.0 / (1.0 - float(config.chance[s])) for s in subs]
    total = sum(inv)
    offset = sum(float(config.chance[s]) * w for s, w in zip(subs, inv)) / total
    return {"offset": offset, "scale": total / len(subs), "formula": "100 * max(0, (score - offset) * scale)",
            "chance": {s: float(config.chance[s]) for s in subs}}
