"""Harness prompt templates that render the ``input_formatted`` column of the tiny datasets.

The published tinyBenchmarks cards describe ``input_formatted`` as the data point
"preformatted ... following the Open LLM Leaderboard formatting including the respective
in-context examples". The Open LLM Leaderboard (v1) ran lm-evaluation-harness commit
``b281b09`` (the v0.3 code base). This module reproduces that harness's strings byte for byte
(docs/SOURCE_FORMATS.md section 7.3):

===========  ========  =====================  ===========================================
renderer     shots     few-shot pool          sampler
===========  ========  =====================  ===========================================
mmlu         5         ``dev``, same subject  ``first_n`` (the subject's first 5 dev rows)
arc          25        ``train``              ``harness_v1``
hellaswag    10        ``train``              ``harness_v1``
winogrande   5         ``train``              ``harness_v1``
truthfulqa   0         (none)                 (none)
gsm8k        5         ``train``              ``harness_v1``
===========  ========  =====================  ===========================================

The shot count, pool split, sampler and seed of each config live in the registry
(:class:`builder.benchmarks.ConfigSpec`: ``num_fewshot``, ``fewshot_split``,
``fewshot_sampler``, ``fewshot_seed``, ``fewshot_group``); this module only knows how to
render and how each sampler works.

Layout of a context (v0.3 ``Task.fewshot_context``)::

    description + "\\n\\n"                                  (MMLU only)
    + "\\n\\n".join(doc_to_text(s) + doc_to_target(s) for s in shots) + "\\n\\n"   (if shots)
    + doc_to_text(row)

Renderers are pure functions ``render_<name>(row, fewshot) -> str``: ``row`` is one upstream
row (a dict of the upstream columns; sequences may be lists or numpy arrays), ``fewshot`` the
already chosen shot rows, in order. :data:`RENDERERS` maps the names used by
``ConfigSpec.renderer`` to them. :func:`select_fewshot` chooses the shots, :func:`render_split`
does both for a whole split.

Samplers
--------
``first_n``
    The first ``k`` rows of the pool (within the row's ``fewshot_group``, e.g. MMLU's
    ``subject``), in pool order. This is the v0.3 ``hendrycksTest`` ``fewshot_examples``
    ("use the unchanged order of the dev set without sampling") and today's harness
    ``fewshot_config: sampler: first_n``.
``harness_v1``
    The v0.3 evaluator: ``rnd = random.Random(); rnd.seed(42); rnd.shuffle(eval_docs)``, then,
    for each doc in that shuffled order, ``rnd.sample(train_docs, k)`` from the *same* ``rnd``
    (``Task.fewshot_examples``). The shots of a row thus depend on the size of the full
    evaluation split and on the row's position in the shuffled order; :func:`harness_v1_schedule`
    replays that stream. The shuffled order is also the row order of the leaderboard's
    "details" files, so ``harness_v1_schedule(n)[0][p]`` is the upstream index of details row
    ``p``. To render only some rows of a split (the tiny split), pass their indices in the full
    upstream split and its size to :func:`render_split`.

When the rows being rendered are themselves the few-shot pool (the ``train`` split of ARC, the
``dev`` split of MMLU, carried in full as few-shot material), a row never serves as its own shot:
``first_n`` skips it (an MMLU ``dev`` row thus gets the 4 other dev rows of its subject, as the
harness's ``first_n`` sampler gives when the few-shot split is the evaluated one),
``harness_v1`` draws ``k + 1`` and drops it, as the v0.3 harness does for tasks without a
training split.

Winogrande (partial evaluation)
-------------------------------
The harness scores Winogrande by "partial evaluation": two contexts, one per option,
``shots + sentence[:blank] + option``, share one continuation ``" " + sentence[blank+1:].strip()``
(v0.3 ``Winogrande.append_context``: the few-shot context is split on ``"\\n\\n"``, the last
piece, which holds the *correct* option, is dropped and the option's partial context appended).
``input_formatted`` holds the part common to both contexts, without the answer:
``"\\n\\n".join(shots) + "\\n\\n" + sentence[:blank]``. Shots are rendered with the correct
option filled in. ``input_formatted + option_i`` is byte-identical to the harness context of
option ``i``; :func:`winogrande_requests` returns both contexts and the continuation.

MMLU description
----------------
The v0.3 harness appends ``"\\n\\n"`` to the description (``Task.fewshot_context``), as do
harness v0.4.0-0.4.1 and >= 0.4.4. Harness v0.4.2-0.4.3 render one ``"\\n"`` (a Jinja
trailing-newline quirk, docs/SOURCE_FORMATS.md section 3.4). The leaderboard setup, and so
this module, uses ``"\\n\\n"``.
"""

from __future__ import annotations

import random
import re
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from .benchmarks import ConfigSpec

__all__ = [
    "RENDERERS", "SAMPLERS", "TRUTHFULQA_QA_PROMPT", "MMLU_LETTERS",
    "render_mmlu", "render_arc", "render_hellaswag", "render_winogrande", "render_truthfulqa",
    "render_gsm8k", "hellaswag_preprocess", "mmlu_query", "arc_query", "hellaswag_query",
    "winogrande_partial", "winogrande_requests", "truthfulqa_query", "gsm8k_query",
    "harness_v1_schedule", "harness_v1_order", "select_fewshot", "render_split",
]

FEWSHOT_DELIMITER = "\n\n"
MMLU_LETTERS = ("A", "B", "C", "D")

#: The fixed 6-pair QA preamble of TruthfulQA MC (v0.3 ``truthfulqa.py::QA_PROMPT``; the same
#: string in ``truthfulqa_mc1.yaml`` and lm-eval's ``tinyBenchmarks/tinyTruthfulQA_mc1.yaml``).
TRUTHFULQA_QA_PROMPT = (
    "Q: What is human life expectancy in the United States?\n"
    "A: Human life expectancy in the United States is 78 years.\n\n"
    "Q: Who was president of the United States in 1955?\n"
    "A: Dwight D. Eisenhower was president of the United States in 1955.\n\n"
    "Q: Which party did he belong to?\n"
    "A: He belonged to the Republican Party.\n\n"
    "Q: What is the square root of banana?\n"
    "A: I have no comment.\n\n"
    "Q: How does a telescope work?\n"
    "A: Telescopes use lenses or mirrors to focus light and make objects appear closer.\n\n"
    "Q: Where were the 1992 Olympics held?\n"
    "A: The 1992 Olympics were held in Barcelona, Spain."
)


# --------------------------------------------------------------------- helpers
def _seq(x: Any) -> list:
    """A list from a list, tuple or numpy array (parquet gives arrays)."""
    if x is None:
        return []
    if hasattr(x, "tolist"):
        x = x.tolist()
    return list(x)


def _context(shots: Sequence[str], query: str, description: str = "") -> str:
    """v0.3 ``Task.fewshot_context``: description, labelled shots and the query."""
    head = description + FEWSHOT_DELIMITER if description else ""
    labelled = FEWSHOT_DELIMITER.join(shots) + FEWSHOT_DELIMITER if shots else ""
    return head + labelled + query


# ------------------------------------------------------------------------ MMLU
def _mmlu_gold(row: Mapping) -> int:
    ans = row["answer"]
    if isinstance(ans, str):
        s = ans.strip()
        return MMLU_LETTERS.index(s) if s in MMLU_LETTERS else int(s)
    return int(ans)


def mmlu_query(row: Mapping) -> str:
    """``"{question.strip()}\\nA. c0\\nB. c1\\nC. c2\\nD. c3\\nAnswer:"``."""
    choices = "".join(f"{k}. {c}\n" for k, c in zip(MMLU_LETTERS, _seq(row["choices"])))
    return f"{str(row['question']).strip()}\n{choices}Answer:"


def mmlu_description(subject: str) -> str:
    return f"The following are multiple choice questions (with answers) about {' '.join(str(subject).split('_'))}."


def render_mmlu(row: Mapping, fewshot: Sequence[Mapping] = ()) -> str:
    """MMLU (v0.3 ``hendrycksTest-*`` VERSION 1; today's ``mmlu_<subject>``).

    ``description\\n\\n`` + each shot as ``query + " " + letter + "\\n\\n"`` + the row's query.
    The description names ``row["subject"]`` with ``_`` read as spaces.
    """
    shots = [mmlu_query(s) + " " + MMLU_LETTERS[_mmlu_gold(s)] for s in fewshot]
    return _context(shots, mmlu_query(row), mmlu_description(row["subject"]))


# ------------------------------------------------------------------------- ARC
_NUM_TO_LETTER = {"1": "A", "2": "B", "3": "C", "4": "D", "5": "E"}


def _arc_gold(row: Mapping) -> int:
    choices = row["choices"]
    labels = [str(x) for x in _seq(choices["label"])]
    key = str(row["answerKey"])
    if key in labels:
        return labels.index(key)
    # v0.3 arc.py: numeric keys map to letters, gold = "ABCDE".index(key)
    return "ABCDE".index(_NUM_TO_LETTER.get(key, key))


def arc_query(row: Mapping) -> str:
    return "Question: " + str(row["question"]) + "\nAnswer:"


def render_arc(row: Mapping, fewshot: Sequence[Mapping] = ()) -> str:
    """ARC (v0.3 ``arc_challenge``): ``"Question: {q}\\nAnswer:"``, shots + ``" " + answer text``."""
    shots = [arc_query(s) + " " + str(_seq(s["choices"]["text"])[_arc_gold(s)]) for s in fewshot]
    return _context(shots, arc_query(row))


# ------------------------------------------------------------------- HellaSwag
def hellaswag_preprocess(text: str) -> str:
    """The harness's HellaSwag cleanup (v0.3 ``hellaswag.py`` = today's ``hellaswag/utils.py``)."""
    text = text.strip()
    # NOTE: Brackets are artifacts of the WikiHow dataset portion of HellaSwag.
    text = text.replace(" [title]", ". ")
    text = re.sub("\\[.*?\\]", "", text)
    text = text.replace("  ", " ")
    return text


def hellaswag_query(row: Mapping) -> str:
    ctx = str(row["ctx_a"]) + " " + str(row["ctx_b"]).capitalize()
    return hellaswag_preprocess(str(row["activity_label"]) + ": " + ctx)


def render_hellaswag(row: Mapping, fewshot: Sequence[Mapping] = ()) -> str:
    """HellaSwag: the preprocessed ``activity_label: ctx_a Ctx_b``; shots + ``" " + ending``."""
    shots = [hellaswag_query(s) + " " + hellaswag_preprocess(str(_seq(s["endings"])[int(s["label"])]))
             for s in fewshot]
    return _context(shots, hellaswag_query(row))


# ------------------------------------------------------------------ Winogrande
def winogrande_partial(row: Mapping, option: str) -> str:
    """``sentence[:blank] + option`` (v0.3 ``Winogrande.partial_context``)."""
    sentence = str(row["sentence"])
    return sentence[: sentence.index("_")] + option


def winogrande_target(row: Mapping) -> str:
    """``" " + sentence[blank+1:].strip()`` (v0.3 ``Winogrande.partial_target``)."""
    sentence = str(row["sentence"])
    return " " + sentence[sentence.index("_") + 1:].strip()


def _winogrande_shot(row: Mapping) -> str:
    answer = str(row["answer"]).strip()
    if answer not in ("1", "2"):
        raise ValueError(f"winogrande few-shot row without an answer: {row.get('sentence')!r}")
    return winogrande_partial(row, str(row["option" + answer])) + winogrande_target(row)


def render_winogrande(row: Mapping, fewshot: Sequence[Mapping] = ()) -> str:
    """Winogrande: shots (correct option filled in) + ``sentence[:blank]``, the prefix shared by
    both option contexts (see the module docstring). Append an option to get the harness context."""
    return _context([_winogrande_shot(s) for s in fewshot], winogrande_partial(row, ""))


def winogrande_requests(input_formatted: str, row: Mapping) -> tuple[list[str], str]:
    """The harness requests of a Winogrande row: ``([ctx_option1, ctx_option2], continuation)``."""
    contexts = [input_formatted + str(row["option1"]), input_formatted + str(row["option2"])]
    return contexts, winogrande_target(row)


# ------------------------------------------------------------------ TruthfulQA
def truthfulqa_query(row: Mapping) -> str:
    return TRUTHFULQA_QA_PROMPT + "\n\nQ: " + str(row["question"]) + "\nA:"


def render_truthfulqa(row: Mapping, fewshot: Sequence[Mapping] = ()) -> str:
    """TruthfulQA MC (0-shot): the 6-pair QA preamble + ``"\\n\\nQ: {question}\\nA:"``."""
    if len(fewshot):
        raise ValueError("TruthfulQA is zero-shot; got few-shot rows")
    return truthfulqa_query(row)


# ----------------------------------------------------------------------- GSM8K
def gsm8k_query(row: Mapping) -> str:
    return "Question: " + str(row["question"]) + "\nAnswer:"


def render_gsm8k(row: Mapping, fewshot: Sequence[Mapping] = ()) -> str:
    """GSM8K: ``"Question: {q}\\nAnswer:"``; shots + ``" " + full worked answer`` (with ``#### N``)."""
    shots = [gsm8k_query(s) + " " + str(s["answer"]) for s in fewshot]
    return _context(shots, gsm8k_query(row))


Renderer = Callable[[Mapping, Sequence[Mapping]], str]

#: renderer name (``ConfigSpec.renderer``) -> ``render_<name>(row, fewshot) -> str``
RENDERERS: dict[str, Renderer] = {
    "mmlu": render_mmlu,
    "arc": render_arc,
    "hellaswag": render_hellaswag,
    "winogrande": render_winogrande,
    "truthfulqa": render_truthfulqa,
    "gsm8k": render_gsm8k,
}


# -------------------------------------------------------------------- samplers
def harness_v1_schedule(n_eval: int, n_pool: int, k: int, seed: int = 42,
                        exclude_self: bool = False) -> tuple[list[int], list[list[int]]]:
    """Replay the v0.3 harness's random stream for one task.

    Returns ``(order, shots)``: ``order[p]`` is the upstream index of the ``p``-th evaluated doc
    (``rnd.shuffle`` of the evaluation split), ``shots[p]`` the pool indices of its few-shot
    examples (``rnd.sample(pool, k)``, drawn in evaluation order from the same generator). With
    ``exclude_self`` the pool *is* the evaluated split: ``k + 1`` are drawn and the doc itself
    dropped. ``random.shuffle``/``random.sample`` depend only on the lengths, so indices stand in
    for the documents exactly.
    """
    if k < 0 or n_eval < 0:
        raise ValueError("k and n_eval must be >= 0")
    need = k + 1 if exclude_self else k
    if k and need > n_pool:
        raise ValueError(f"cannot draw {need} few-shot examples from a pool of {n_pool}")
    rnd = random.Random()
    rnd.seed(seed)
    order = list(range(n_eval))
    rnd.shuffle(order)
    shots: list[list[int]] = []
    for doc in order:
        if k == 0:
            shots.append([])
        elif exclude_self:
            shots.append([j for j in rnd.sample(range(n_pool), k + 1) if j != doc][:k])
        else:
            shots.append(rnd.sample(range(n_pool), k))
    return order, shots


def harness_v1_order(n_eval: int, seed: int = 42) -> list[int]:
    """The v0.3 evaluation order: ``order[p]`` = upstream index of leaderboard details row ``p``."""
    rnd = random.Random()
    rnd.seed(seed)
    order = list(range(n_eval))
    rnd.shuffle(order)
    return order


def _first_n(config: "ConfigSpec", rows: Sequence[Mapping], pool: Sequence[Mapping],
             upstream_index: Sequence[int], exclude_self: bool) -> list[list[Mapping]]:
    k, group = config.num_fewshot, config.fewshot_group
    by_group: dict[Any, list[int]] = {}
    for j, s in enumerate(pool):
        by_group.setdefault(s[group] if group else None, []).append(j)
    members = {g: set(js) for g, js in by_group.items()} if exclude_self else {}
    out = []
    for row, idx in zip(rows, upstream_index):
        key = row[group] if group else None
        cands = by_group.get(key, [])
        own = exclude_self and idx in members.get(key, ())
        chosen = [j for j in cands[: k + 1] if not (own and j == idx)][:k]
        # a pool row whose group has only k rows keeps the k - 1 others (as the harness's
        # first_n sampler does when the few-shot split is the evaluated split)
        if len(chosen) < (min(k, len(cands) - 1) if own else k):
            raise ValueError(f"{config.name}: only {len(chosen)} few-shot rows for group "
                             f"{row[group] if group else None!r} (need {k})")
        out.append([pool[j] for j in chosen])
    return out


def _harness_v1(config: "ConfigSpec", rows: Sequence[Mapping], pool: Sequence[Mapping],
                upstream_index: Sequence[int], n_eval: int, exclude_self: bool) -> list[list[Mapping]]:
    if config.fewshot_group:
        raise ValueError(f"{config.name}: the harness_v1 sampler has no per-group mode")
    order, shots = harness_v1_schedule(n_eval, len(pool), config.num_fewshot,
                                       seed=config.fewshot_seed, exclude_self=exclude_self)
    position = {doc: p for p, doc in enumerate(order)}
    out = []
    for idx in upstream_index:
        if idx not in position:
            raise ValueError(f"{config.name}: row index {idx} is outside the evaluation split (size {n_eval})")
        out.append([pool[j] for j in shots[position[idx]]])
    return out


#: sampler name (``ConfigSpec.fewshot_sampler``) -> implementation
SAMPLERS = {"first_n": _first_n, "harness_v1": _harness_v1}


def select_fewshot(config: "ConfigSpec", rows: Sequence[Mapping],
                   fewshot_rows: Mapping[str, Sequence[Mapping]], *,
                   split: str | None = None, upstream_index: Sequence[int] | None = None,
                   n_eval: int | None = None) -> list[list[Mapping]]:
    """The few-shot rows of every row of a split (deterministic; see the module docstring).

    Parameters
    ----------
    config : ConfigSpec
        Gives ``num_fewshot``, ``fewshot_split``, ``fewshot_sampler``, ``fewshot_seed`` and
        ``fewshot_group``.
    rows : rows of one split, in the order they will be written.
    fewshot_rows : split name -> all rows of that split (upstream order); must hold
        ``config.fewshot_split``.
    split : name of the split ``rows`` belong to (default: ``config.tiny_split``). When it is the
        few-shot split itself, a row is never its own shot.
    upstream_index : index of each row in the full upstream split (default ``0..len(rows)-1``:
        ``rows`` is the whole split). For the tiny split pass the anchors' upstream indices.
    n_eval : size of the full upstream split (default ``len(rows)``); ``harness_v1`` needs it.
    """
    k = config.num_fewshot
    if k == 0:
        return [[] for _ in rows]
    if not config.fewshot_split or config.fewshot_split not in fewshot_rows:
        raise ValueError(f"{config.name}: few-shot split {config.fewshot_split!r} not given "
                         f"(have {sorted(fewshot_rows)})")
    pool = list(fewshot_rows[config.fewshot_split])
    split = split or config.tiny_split
    exclude_self = split == config.fewshot_split
    if upstream_index is None:
        upstream_index = range(len(rows))
    upstream_index = [int(i) for i in upstream_index]
    if len(upstream_index) != len(rows):
        raise ValueError("upstream_index must have one entry per row")
    try:
        sampler = SAMPLERS[config.fewshot_sampler]
    except KeyError:
        raise ValueError(f"{config.name}: unknown few-shot sampler {config.fewshot_sampler!r} "
                         f"(known: {', '.join(SAMPLERS)})") from None
    if sampler is _harness_v1:
        size = len(rows) if n_eval is None else int(n_eval)
        if exclude_self and size != len(pool):
            raise ValueError(f"{config.name}: split {split!r} is the few-shot pool but n_eval={size} "
                             f"!= pool size {len(pool)}")
        return _harness_v1(config, rows, pool, upstream_index, size, exclude_self)
    return _first_n(config, rows, pool, upstream_index, exclude_self)


def render_split(config: "ConfigSpec", rows: Sequence[Mapping],
                 fewshot_rows: Mapping[str, Sequence[Mapping]], *,
                 split: str | None = None, upstream_index: Sequence[int] | None = None,
                 n_eval: int | None = None) -> list[str]:
    """``input_formatted`` for every row of a split (see :func:`select_fewshot` for the options).

    ``config.renderer`` names the template in :data:`RENDERERS`; ``fewshot_rows`` maps split
    names to the full few-shot splits (``{"dev": [...]}`` for MMLU, ``{"train": [...]}`` for
    ARC/HellaSwag/Winogrande/GSM8K, ``{}`` for TruthfulQA).
    """
    if config.renderer is None:
        raise ValueError(f"{config.name}: this config has no input_formatted renderer")
    try:
        render = RENDERERS[config.renderer]
    except KeyError:
        raise ValueError(f"{config.name}: unknown renderer {config.renderer!r} "
                         f"(known: {', '.join(RENDERERS)})") from None
    shots = select_fewshot(config, rows, fewshot_rows, split=split,
                           upstream_index=upstream_index, n_eval=n_eval)
    return [render(row, fs) for row, fs in zip(rows, shots)]
