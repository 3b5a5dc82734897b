"""The Open LLM Leaderboard v2 benchmarks: registry entries, their metrics and normalisation.

The leaderboard (June 2024 - 2025) ranks models on six lm-evaluation-harness tasks, run with
the Hugging Face fork of lm-eval 0.4.3 (its ``leaderboard_*`` tasks, now in lm-eval's
``lm_eval/tasks/leaderboard``). Each gets a tiny benchmark here, and ARC-Challenge too (the
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

import dataclasses
from typing import Iterable, Mapping

from tinybench_builder.registry.benchmarks import BenchmarkSpec, ConfigSpec, register
from tinybench_builder.registry.citations import (
    ARC_BIBTEX, BBH_BIBTEX, GPQA_BIBTEX, IFEVAL_BIBTEX, MATH_BIBTEX, MMLU_PRO_BIBTEX, MUSR_BIBTEX,
    OPEN_LLM_LEADERBOARD_V2_BIBTEX,
)
from tinybench_builder.registry.prompts_v2 import bbh_choices, bbh_subtasks

__all__ = [
    "V2_CONFIGS", "MATH_HARD_SUBJECTS", "GPQA_SUBSETS", "MUSR_SUBTASKS", "BBH_CHANCE", "MUSR_CHANCE",
    "subscenario_weights", "normalization",
]

#: lm-eval's leaderboard_math_<subject>_hard tasks; subscenario ``<subject>_hard``
MATH_HARD_SUBJECTS = ("algebra", "counting_and_prob", "geometry", "intermediate_algebra", "num_theory",
                      "prealgebra", "precalculus")
GPQA_SUBSETS = ("diamond", "extended", "main")
MUSR_SUBTASKS = ("murder_mysteries", "object_placements", "team_allocation")
#: chance level of each BBH subtask: 1 / its number of choices (the leaderboard's lower bounds)
BBH_CHANCE = {s: 1.0 / len(bbh_choices(s)) for s in bbh_subtasks()}
#: MuSR's lower bounds (the leaderboard's documentation: 2, 5 and 3 choices)
MUSR_CHANCE = {"murder_mysteries": 1 / 2, "object_placements": 1 / 5, "team_allocation": 1 / 3}


def _v2(name: str, scenario: str, **kw) -> ConfigSpec:
    return ConfigSpec(name=name, scenario=scenario, tiny_split="test", content_from="source", **kw)


IFEVAL_CONFIG = _v2(
    "default", "ifeval", columns=("doc_id", "key", "prompt", "instruction_id_list", "kwargs", "input_formatted"),
    upstream="wis-k/instruction-following-eval", upstream_splits={"test": "train"},
    source_task="leaderboard_ifeval", metric="prompt_level_strict_acc", renderer="lb2_ifeval",
    harness_task="tinyIFEval", harness_metric="prompt_level_strict_acc", eval_size=541, chance=0.0,
    license="apache-2.0")

BBH_CONFIG = _v2(
    "default", "bbh", columns=("subscenario", "doc_id", "input", "target", "input_formatted"),
    upstream="SaylorTwift/bbh", upstream_splits={"test": "test"}, source_task="leaderboard_bbh", metric="acc_norm",
    renderer="lb2_bbh", harness_task="tinyBBH", harness_metric="acc_norm",
    subscenario_weighting="chance", chance=dict(BBH_CHANCE), license="mit")

MATH_HARD_CONFIG = _v2(
    "default", "math_hard",
    columns=("subscenario", "doc_id", "problem", "level", "type", "solution", "answer", "input_formatted"),
    upstream="lighteval/MATH-Hard", upstream_splits={"test": "test"}, source_task="leaderboard_math",
    metric="exact_match", renderer="lb2_math", harness_task="tinyMATHHard", harness_metric="exact_match",
    subscenario_weighting="size", chance=0.0, license="mit")

GPQA_CONFIG = _v2(
    "default", "gpqa",
    columns=("subscenario", "doc_id", "Record ID", "Question", "choice1", "choice2", "choice3", "choice4", "answer",
             "input_formatted"),
    upstream="Idavidrein/gpqa", upstream_splits={"test": "train"}, source_task="leaderboard_gpqa",
    metric="acc_norm", renderer="lb2_gpqa", harness_task="tinyGPQA", harness_metric="acc_norm",
    subscenario_weighting="size", chance=0.25, license="cc-by-4.0")

MUSR_CONFIG = _v2(
    "default", "musr",
    columns=("subscenario", "doc_id", "narrative", "question", "choices", "answer_index", "answer_choice",
             "input_formatted"),
    upstream="TAUR-Lab/MuSR", source_task="leaderboard_musr", metric="acc_norm", renderer="lb2_musr",
    harness_task="tinyMuSR", harness_metric="acc_norm", subscenario_weighting="chance", chance=dict(MUSR_CHANCE),
    license="cc-by-4.0")

MMLU_PRO_CONFIG = _v2(
    "default", "mmlu_pro", full_splits=("validation",),
    columns=("doc_id", "question_id", "question", "options", "answer", "answer_index", "cot_content", "category", "src",
             "input_formatted"),
    upstream="TIGER-Lab/MMLU-Pro", upstream_splits={"test": "test", "validation": "validation"},
    source_task="leaderboard_mmlu_pro", metric="acc", renderer="lb2_mmlu_pro", harness_task="tinyMMLUPro",
    harness_metric="acc", num_fewshot=5, fewshot_split="validation", fewshot_sampler="first_n",
    full_split_sampler="first_n", eval_size=12032, split_sizes={"validation": 70}, chance=0.1, license="mit")

ARC_V2_CONFIG = _v2(
    "ARC-Challenge", "arc_challenge", full_splits=("train",),
    columns=("doc_id", "id", "question", "choices", "answerKey", "input_formatted"),
    upstream="allenai/ai2_arc", upstream_config="ARC-Challenge", upstream_splits={"test": "test", "train": "train"},
    source_task="leaderboard_arc_challenge", metric="acc_norm", renderer="arc", harness_task="tinyArcChallengeV2",
    harness_metric="acc_norm", num_fewshot=25, fewshot_split="train", fewshot_sampler="first_n",
    full_split_sampler="first_n", eval_size=1172, split_sizes={"train": 1119}, license="cc-by-sa-4.0")

#: the configs in the leaderboard's column order (IFEval, BBH, MATH, GPQA, MuSR, MMLU-Pro), then ARC
V2_CONFIGS = (IFEVAL_CONFIG, BBH_CONFIG, MATH_HARD_CONFIG, GPQA_CONFIG, MUSR_CONFIG, MMLU_PRO_CONFIG, ARC_V2_CONFIG)


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


# --------------------------------------------------------------------------- entries
_LICENSES = ("IFEval Apache-2.0 (google-research/instruction_following_eval); BBH MIT (BIG-Bench Hard); "
             "MATH MIT; GPQA CC BY 4.0 (its authors ask that its questions not be posted in plain text "
             "online: publish its rows gated or as ids only); MuSR CC BY 4.0; MMLU-Pro MIT; ARC CC BY-SA 4.0. "
             "Prompts as the leaderboard's lm-evaluation-harness tasks render them (MIT).")
_TINY = ("{n} {what} chosen with IRT (anchor points) so that a model's {metric} on them, with the "
         "tinyBenchmarks estimators, estimates its {metric} on the full {bench} of the Open LLM Leaderboard v2 "
         "(lm-evaluation-harness task `{task}`{shots}). `input_formatted` holds the leaderboard's prompt (when the rows carry the examples).")

_SINGLES = (
    ("tinyIFEval", "tinyIFEval", IFEVAL_CONFIG, "apache-2.0", ("text-generation",), (), IFEVAL_BIBTEX,
     dict(what="IFEval prompts", metric="prompt-level strict accuracy", bench="IFEval (541 prompts)",
          task="leaderboard_ifeval", shots=", zero-shot")),
    ("tinyBBH", "tinyBBH", BBH_CONFIG, "mit", ("question-answering", "multiple-choice"), ("multiple-choice-qa",),
     BBH_BIBTEX, dict(what="BIG-Bench Hard examples from its 24 subtasks", metric="acc_norm",
                      bench="BBH", task="leaderboard_bbh", shots=", 3-shot")),
    ("tinyMATHHard", "tinyMATH-Hard", MATH_HARD_CONFIG, "mit", ("text-generation",), (), MATH_BIBTEX,
     dict(what="MATH level-5 problems from its 7 subjects", metric="exact match", bench="MATH-hard (MATH Lvl 5)",
          task="leaderboard_math_hard", shots=", 4-shot")),
    ("tinyGPQA", "tinyGPQA", GPQA_CONFIG, "cc-by-4.0", ("question-answering", "multiple-choice"),
     ("multiple-choice-qa",), GPQA_BIBTEX, dict(what="GPQA questions (diamond, extended, main)", metric="acc_norm",
                                                 bench="GPQA", task="leaderboard_gpqa", shots=", zero-shot")),
    ("tinyMuSR", "tinyMuSR", MUSR_CONFIG, "cc-by-4.0", ("question-answering", "multiple-choice"),
     ("multiple-choice-qa",), MUSR_BIBTEX, dict(what="MuSR narratives (its 3 subtasks)", metric="acc_norm",
                                                 bench="MuSR", task="leaderboard_musr", shots=", zero-shot")),
    ("tinyMMLUPro", "tinyMMLU-Pro", MMLU_PRO_CONFIG, "mit", ("question-answering", "multiple-choice"),
     ("multiple-choice-qa",), MMLU_PRO_BIBTEX,
     dict(what="MMLU-Pro questions", metric="accuracy", bench="MMLU-Pro (12,032 questions)",
          task="leaderboard_mmlu_pro", shots=", 5-shot: the first five `validation` questions")),
    ("tinyArcChallengeV2", "tinyArc-Challenge (leaderboard v2)", ARC_V2_CONFIG, "cc-by-sa-4.0",
     ("question-answering",), ("open-domain-qa", "multiple-choice-qa"), ARC_BIBTEX,
     dict(what="ARC-Challenge test questions", metric="acc_norm", bench="ARC-Challenge (1,172 questions)",
          task="leaderboard_arc_challenge", shots=", 25-shot: the first 25 `train` questions; not in the "
                                                   "leaderboard's average")),
)

for _name, _pretty, _config, _license, _cats, _ids, _bib, _desc in _SINGLES:
    register(BenchmarkSpec(
        name=_name, pretty_name=_pretty, configs=(_config,), license=_license, task_categories=_cats, task_ids=_ids,
        source_citation="\n".join((OPEN_LLM_LEADERBOARD_V2_BIBTEX, _bib)), description=_TINY.format(n=100, **_desc),
    ))

register(BenchmarkSpec(
    name="tinyOpenLLMLeaderboardV2", pretty_name="tinyOpenLLMLeaderboard v2",
    configs=tuple(dataclasses.replace(c, name=c.scenario) for c in V2_CONFIGS), joint=True,
    license="other", license_notes="Each config keeps the licence of its source: " + _LICENSES,
    task_categories=("question-answering", "multiple-choice", "text-generation"),
    task_ids=("multiple-choice-qa", "open-domain-qa"),
    source_citation="\n".join((OPEN_LLM_LEADERBOARD_V2_BIBTEX, IFEVAL_BIBTEX, BBH_BIBTEX, MATH_BIBTEX, GPQA_BIBTEX,
                               MUSR_BIBTEX, MMLU_PRO_BIBTEX, ARC_BIBTEX)),
    description="The Open LLM Leaderboard v2 benchmarks (IFEval, BBH, MATH-hard, GPQA, MuSR, MMLU-Pro; and "
                "ARC-Challenge, which the early v2 runs had), 100 examples each, chosen with one IRT model fitted "
                "across them, so that each benchmark is estimated from one ability shared by all. Subtasks are "
                "weighted as the leaderboard weighs them (see the metric section). `input_formatted` holds the "
                "leaderboard's lm-evaluation-harness prompt with its in-context examples.",
))
