"""The Open LLM Leaderboard v2 prompts, rendered as the leaderboard's harness tasks render them.

The leaderboard v2 ran the Hugging Face fork of lm-evaluation-harness (branch
``adding_all_changess``, lm-eval 0.4.3; the tasks became lm-eval's ``lm_eval/tasks/leaderboard``).
Its details datasets log the prompt of every document (``arguments.gen_args_0.arg_0``,
docs/SOURCE_FORMATS.md section 2.2); these renderers give the same string from the document
(the ``doc`` field of the details: the dataset row after the task's ``process_docs``) for a run
without a chat template. Layout of a context (lm-eval 0.4.3 ``Task.fewshot_context`` and
``ContextSampler.get_context``)::

    description                                           (rendered by Jinja: one trailing newline dropped)
    + "".join(doc_to_text(s) + " " + doc_to_target(s) + "\\n\\n" for s in shots)
    + doc_to_text(row)

===============  =====  ==================================  =============================================
renderer         shots  examples                            ``doc_to_text``
===============  =====  ==================================  =============================================
``lb2_ifeval``   0                                          ``prompt``
``lb2_bbh``      3      the subtask's fixed samples         ``"Q: {input}\\nA:"`` after the subtask's description
``lb2_math``     4      the four fixed Minerva examples     ``"Problem:\\n{problem}\\n\\nSolution:"``
``lb2_gpqa``     0                                          ``"What is the correct answer to this question:{Question}\\nChoices:\\n(A) ..."``
``lb2_musr``     0                                          ``"{narrative}\\n\\n{question}\\n\\n1 - c1\\n2 - c2\\n...\\nAnswer:"``
``lb2_mmlu_pro`` 5      first 5 rows of ``validation``      ``"{question}\\nA. o1\\nB. o2\\n...\\nAnswer:"``
``arc``          25     first 25 rows of ``train``          ``"Question: {question}\\nAnswer:"`` (:func:`tinybench_builder.registry.prompts.render_arc`)
===============  =====  ==================================  =============================================

The fixed examples (BBH's three per subtask with its description and choices, MATH's four) are
in ``leaderboard_v2_fewshot.json`` next to this module, written from the leaderboard's task
files by ``scripts/leaderboard_v2_fewshot.py`` (MIT: lm-eval; the BBH prompts are BIG-Bench
Hard's). MMLU-Pro's and ARC's examples are the first rows of a split of the content (the
registry's ``fewshot_sampler="first_n"``). A BBH example equal to the row itself is left out, as
``get_context`` does (``[x for x in shots if x != doc]``).

GPQA's choices are shuffled by the task's ``process_docs`` (Python's global ``random``); a row
must carry the shuffled ``choice1``..``choice4`` and ``answer`` as the details' ``doc`` holds them
(the raw ``Idavidrein/gpqa`` row cannot give the leaderboard's order). MuSR's ``choices`` is the
string of a Python list, read with ``ast.literal_eval`` as the task does.

Each renderer has the signature of :data:`tinybench_builder.registry.prompts.RENDERERS`:
``render(row, fewshot) -> str``; a BBH or MATH row's subtask is its ``subscenario`` column (the
item id's prefix, e.g. ``boolean_expressions``), MATH's is not needed.
"""

from __future__ import annotations

import ast
import json
import string
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

__all__ = [
    "V2_RENDERERS", "FEWSHOT_FILE", "fewshot_material", "bbh_subtasks", "bbh_choices", "render_ifeval", "render_bbh",
    "render_math_hard", "render_gpqa", "render_musr", "render_mmlu_pro", "musr_choices", "mmlu_pro_choices",
    "gpqa_query", "bbh_query", "math_query", "musr_query", "mmlu_pro_query",
]

FEWSHOT_FILE = Path(__file__).with_name("leaderboard_v2_fewshot.json")
_DELIM = "\n\n"  # lm-eval's fewshot_delimiter
_TARGET = " "  # lm-eval's target_delimiter


@lru_cache(maxsize=1)
def fewshot_material() -> dict:
    """The fixed examples of the leaderboard's task files (``leaderboard_v2_fewshot.json``)."""
    return json.loads(FEWSHOT_FILE.read_text(encoding="utf-8"))


def bbh_subtasks() -> list[str]:
    """The 24 BBH subtasks of the leaderboard (``leaderboard_bbh_<subtask>``), in its group's order."""
    return list(fewshot_material()["bbh"])


def bbh_choices(subtask: str) -> list[str]:
    """The continuations of a BBH subtask (its ``doc_to_choice``)."""
    return list(_bbh(subtask)["choices"])


def _bbh(subtask: str) -> dict:
    try:
        return fewshot_material()["bbh"][subtask]
    except KeyError:
        raise ValueError(f"unknown BBH subtask {subtask!r} (known: {', '.join(bbh_subtasks())})") from None


def _seq(x: Any) -> list:
    if x is None:
        return []
    if hasattr(x, "tolist"):
        x = x.tolist()
    return list(x)


def _shots(pairs: Sequence[tuple[str, str]]) -> str:
    return "".join(text + _TARGET + target + _DELIM for text, target in pairs)


# ---------------------------------------------------------------------- IFEval
def render_ifeval(row: Mapping, fewshot: Sequence[Mapping] = ()) -> str:
    """IFEval (``leaderboard_ifeval``, zero-shot): the row's ``prompt`` as it is."""
    if len(fewshot):
        raise ValueError("IFEval is zero-shot; got few-shot rows")
    return str(row["prompt"])


# ------------------------------------------------------------------------- BBH
def bbh_query(row: Mapping) -> str:
    """``"Q: {input}\\nA:"`` (the task's ``'Q: {{input}}\\n\\n  A:'``, a folded YAML string)."""
    return "Q: " + str(row["input"]) + "\nA:"


def render_bbh(row: Mapping, fewshot: Sequence[Mapping] = ()) -> str:
    """BBH (``leaderboard_bbh_<subtask>``, 3-shot): the subtask's description (Jinja-rendered:
    no separator before the first ``Q:``), its three fixed examples (``Q: ...\\nA: target``) and
    the row's ``Q: {input}\\nA:``. The subtask is ``row["subscenario"]``."""
    if len(fewshot):
        raise ValueError("BBH's examples are the subtask's fixed samples; got few-shot rows")
    sub = _bbh(str(row["subscenario"]))
    doc = {"input": row["input"], "target": row["target"]}
    shots = [s for s in sub["fewshot"] if s != doc]  # get_context drops an example equal to the doc
    return sub["description"] + _shots([(bbh_query(s), s["target"]) for s in shots]) + bbh_query(row)


# ------------------------------------------------------------------- MATH-hard
def math_query(row: Mapping) -> str:
    return "Problem:" + "\n" + str(row["problem"]) + "\n\n" + "Solution:"


def render_math_hard(row: Mapping, fewshot: Sequence[Mapping] = ()) -> str:
    """MATH level 5 (``leaderboard_math_<subject>_hard``, 4-shot): the four fixed Minerva examples
    (``Problem:\\n...\\n\\nSolution: <solution>``; their target is the solution, the row's the answer)
    and the row's ``Problem:\\n{problem}\\n\\nSolution:``."""
    if len(fewshot):
        raise ValueError("MATH-hard's examples are the task's fixed samples; got few-shot rows")
    shots = fewshot_material()["math_hard"]
    return _shots([(math_query(s), s["solution"]) for s in shots]) + math_query(row)


# ------------------------------------------------------------------------ GPQA
def gpqa_query(row: Mapping) -> str:
    return ("What is the correct answer to this question:" + str(row["Question"]) + "\nChoices:\n"
            + "".join(f"({letter}) {row[f'choice{i}']}\n" for i, letter in enumerate("ABCD", 1)) + "Answer: ")


def render_gpqa(row: Mapping, fewshot: Sequence[Mapping] = ()) -> str:
    """GPQA (``leaderboard_gpqa_{diamond,extended,main}``, zero-shot); the prompt ends in
    ``"Answer: "`` (with the space) and the row must hold the shuffled ``choice1``..``choice4``."""
    if len(fewshot):
        raise ValueError("GPQA is zero-shot; got few-shot rows")
    missing = [c for c in ("Question", "choice1", "choice2", "choice3", "choice4") if row.get(c) is None]
    if missing:
        raise ValueError(f"GPQA row without {', '.join(missing)}: the leaderboard's prompt needs the choices as "
                         "its process_docs shuffled them (the details' doc), not the raw Idavidrein/gpqa row")
    return gpqa_query(row)


# ------------------------------------------------------------------------ MuSR
def musr_choices(row: Mapping) -> list[str]:
    """MuSR's ``choices``: a Python-list string (``ast.literal_eval``, as ``utils.doc_to_choice``)."""
    value = row["choices"]
    return [str(c) for c in (ast.literal_eval(value) if isinstance(value, str) else _seq(value))]


def musr_query(row: Mapping) -> str:
    choices = "".join(f"{i + 1} - {c}\n" for i, c in enumerate(musr_choices(row)))
    return f"{row['narrative']}\n\n{row['question']}\n\n{choices}\nAnswer:"


def render_musr(row: Mapping, fewshot: Sequence[Mapping] = ()) -> str:
    """MuSR (``leaderboard_musr_<subtask>``, zero-shot): narrative, question, numbered choices."""
    if len(fewshot):
        raise ValueError("MuSR is zero-shot; got few-shot rows")
    return musr_query(row)


# --------------------------------------------------------------------- MMLU-Pro
def mmlu_pro_choices(row: Mapping) -> list[str]:
    """``A``, ``B``, ... one letter per option (``utils.doc_to_choice``)."""
    return [string.ascii_uppercase[i] for i in range(len(_seq(row["options"])))]


def mmlu_pro_query(row: Mapping) -> str:
    options = _seq(row["options"])
    return f"{row['question']}\n" + "".join(f"{string.ascii_uppercase[i]}. {o}\n" for i, o in enumerate(options)) \
        + "Answer:"


def render_mmlu_pro(row: Mapping, fewshot: Sequence[Mapping] = ()) -> str:
    """MMLU-Pro (``leaderboard_mmlu_pro``, 5-shot, ``first_n`` from ``validation`` whatever the
    category): each example ``question\\nA. ...\\nAnswer: <letter>``, then the row's query."""
    return _shots([(mmlu_pro_query(s), str(s["answer"])) for s in fewshot]) + mmlu_pro_query(row)


#: renderer name (``ConfigSpec.renderer``) -> render function; ARC uses prompts.render_arc
V2_RENDERERS = {
    "lb2_ifeval": render_ifeval,
    "lb2_bbh": render_bbh,
    "lb2_math": render_math_hard,
    "lb2_gpqa": render_gpqa,
    "lb2_musr": render_musr,
    "lb2_mmlu_pro": render_mmlu_pro,
}
