"""Harness prompt templates that render the ``input_formatted`` column of the tiny datasets.

The published tinyBenchmarks cards describe ``input_formatted`` as the data point
"preformatted ... following the Open LLM Leaderboard formatting including the respective
in-context examples". The Open LLM Leaderboard (v1) ran lm-evaluation-harness commit
``b281b09`` (the v0.3 code base). This module reproduces that harness's strings byte for byte
(docs/SOURCE_FORMATS.md section 7.3):

===========  ========  =====================  ===========================================
renderer     shots     few-shot pool          sampler (tiny split / full splits)
===========  ========  =====================  ===========================================
mmlu         5         ``dev``, same subject  ``first_n`` / ``first_n``
arc          25        ``train``              ``harness_v1`` / ``fixed``
hellaswag    10        ``train``              ``harness_v1`` / ``fixed``
winogrande   5         ``train``              ``harness_v1`` / ``fixed``
truthfulqa   0         (none)                 (none)
gsm8k        5         ``train``              ``harness_v1`` / ``fixed``
template     0         (none)                 a custom benchmark's jinja2 ``prompt``
lb2_*        0-5       (v2: see prompts_v2)   ``first_n`` (MMLU-Pro) / fixed examples
===========  ========  =====================  ===========================================

The Open LLM Leaderboard v2 renderers (``lb2_*``; the leaderboard's lm-eval 0.4.3 tasks) are in
:mod:`tinybench_builder.registry.prompts_v2`; its ARC-Challenge uses :func:`render_arc` with ``first_n``.

The shot count, pool split, samplers and seeds of each config live in the registry
(:class:`tinybench_builder.registry.benchmarks.ConfigSpec`: ``num_fewshot``, ``fewshot_split``,
``fewshot_sampler``, ``fewshot_seed``, ``fewshot_group``, ``full_split_sampler``,
``full_split_seed``); this module only knows how to render and how each sampler works.

Layout of a context (v0.3 ``Task.fewshot_context``)::

    description + "\\n\\n"                                  (MMLU only)
    + "\\n\\n".join(doc_to_text(s) + doc_to_target(s) for s in shots) + "\\n\\n"   (if shots)
    + doc_to_text(row)

Renderers are pure functions ``render_<name>(row, fewshot) -> str``: ``row`` is one upstream
row (a dict of the upstream columns; sequences may be lists or numpy arrays), ``fewshot`` the
already chosen shot rows, in order. :data:`RENDERERS` maps the names used by
``ConfigSpec.renderer`` to them (:data:`FULL_SPLIT_RENDERERS` overrides one for the full
splits). :func:`select_fewshot` chooses the shots, :func:`render_split` does both for a whole
split.

Samplers
--------
``first_n``
    The first ``k`` rows of the pool (within the row's ``fewshot_group``, e.g. MMLU's
    ``subject``), in pool order. This is the v0.3 ``hendrycksTest`` ``fewshot_examples``
    ("use the unchanged order of the dev set without sampling") and today's harness
    ``fewshot_config: sampler: first_n``. A pool row rendered itself (MMLU ``dev``) is not
    skipped: it gets the same first ``k`` rows, itself included when it is one of them.
``harness_v1``
    The v0.3 evaluator: ``rnd = random.Random(); rnd.seed(42); rnd.shuffle(eval_docs)``, then,
    for each doc in that shuffled order, ``rnd.sample(train_docs, k)`` from the *same* ``rnd``
    (``Task.fewshot_examples``). The shots of a row thus depend on the size of the full
    evaluation split and on the row's position in the shuffled order; :func:`harness_v1_schedule`
    replays that stream. The shuffled order is also the row order of the leaderboard's
    "details" files, so ``harness_v1_schedule(n)[0][p]`` is the upstream index of details row
    ``p``. To render only some rows of a split (the tiny split), pass their indices in the full
    upstream split and its size to :func:`render_split`.
``fixed``
    ``random.Random(seed).sample(pool, k)``, drawn afresh for every row, so every row gets the
    same ``k`` shots (the row itself included when it is one of them): the lm-evaluation-harness
    0.4 context sampler (seed 1234) re-created for each row.

Full splits
-----------
The splits carried whole as few-shot material (``train``, ``dev``, Winogrande's ``test``...)
follow the published tinyBenchmarks datasets, which rendered them with lm-evaluation-harness
0.4 rather than with the leaderboard's v0.3 stream: ``full_split_sampler`` (``fixed`` with seed
1234, MMLU ``first_n``) and, for Winogrande, the row's raw ``sentence`` after the shots
(:func:`render_winogrande_full`; the ``test`` split has no answers). Measured against the
published cards' ``num_bytes`` (the arrow size of a split) with the real content of
``../shared/data`` (``tests/dataset/test_fidelity.py``): tinyGSM8k ``train`` 27,470,490 bytes and
tinyWinogrande ``train`` 29,034,018, both equal; tinyMMLU ``dev`` 858,525 against 858,526. The
leaderboard's stream gave 174 bytes less (GSM8K) and 19.5 more (Winogrande) per row. The tiny
split keeps the leaderboard's prompts (``harness_v1``): the published tiny splits' sizes agree
with them within the spread of 100 rows, and not with the full splits' scheme.

Winogrande (partial evaluation)
-------------------------------
The harness scores Winogrande by "partial evaluation": two contexts, one per option,
``shots + sentence[:blank] + option``, share one continuation ``" " + sentence[blank+1:].strip()``.
The v0.3 harness builds the few-shot context with the *correct* option (``doc_to_text``), which
is what the leaderboard's ``full_prompt`` holds, then ``Winogrande.append_context`` splits it on
``"\\n\\n"``, drops the last piece and appends each option's partial context. The tiny split's
``input_formatted`` is that leaderboard prompt: ``"\\n\\n".join(shots) + "\\n\\n" +
sentence[:blank] + gold option``, shots rendered with their correct option filled in.
:func:`winogrande_requests` replaces the gold option by each option and returns the two
contexts and the continuation, byte-identical to the harness requests.

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

from tinybench_builder.registry.entries import FULL_SPLIT_SAMPLERS, SAMPLERS  # the names the registry checks
from tinybench_builder.registry.prompts_v2 import V2_RENDERERS

if TYPE_CHECKING:  # pragma: no cover
    from tinybench_builder.registry.entries import ConfigSpec

__all__ = [
    "RENDERERS", "FULL_SPLIT_RENDERERS", "SAMPLERS", "FULL_SPLIT_SAMPLERS", "TRUTHFULQA_QA_PROMPT", "MMLU_LETTERS",
    "render_mmlu", "render_arc", "render_hellaswag", "render_winogrande", "render_winogrande_full",
    "render_truthfulqa", "render_gsm8k", "render_template", "template_problems", "hellaswag_preprocess", "mmlu_query", "arc_query",
    "hellaswag_query", "winogrande_partial", "winogrande_gold", "winogrande_requests", "truthfulqa_query",
    "gsm8k_query", "harness_v1_schedule", "harness_v1_order", "fixed_sample", "select_fewshot", "render_split",
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


def winogrande_gold(row: Mapping, what: str = "row") -> str:
    """The text of the correct option (``option1`` or ``option2`` as ``answer`` says)."""
    answer = str(row.get("answer", "")).strip()
    if answer not in ("1", "2"):
        raise ValueError(f"winogrande {what} without an answer: {row.get('sentence')!r}")
    return str(row["option" + answer])


def _winogrande_shot(row: Mapping) -> str:
    return winogrande_partial(row, winogrande_gold(row, "few-shot row")) + winogrande_target(row)


def render_winogrande(row: Mapping, fewshot: Sequence[Mapping] = ()) -> str:
    """Winogrande, the leaderboard prompt: shots (correct option filled in) + ``sentence[:blank]``
    + the correct option. :func:`winogrande_requests` swaps the option to score each one."""
    return _context([_winogrande_shot(s) for s in fewshot], winogrande_partial(row, winogrande_gold(row)))


def render_winogrande_full(row: Mapping, fewshot: Sequence[Mapping] = ()) -> str:
    """Winogrande rows of the full splits (few-shot material, the unlabelled ``test``): shots
    (correct option filled in) + the row's raw ``sentence``, as the published tinyWinogrande
    ``train`` and ``test`` splits hold them (module docstring, "Full splits")."""
    return _context([_winogrande_shot(s) for s in fewshot], str(row["sentence"]))


def winogrande_requests(input_formatted: str, row: Mapping) -> tuple[list[str], str]:
    """The harness requests of a tiny-split Winogrande row: ``([ctx_option1, ctx_option2],
    continuation)``, ``input_formatted`` with its final (correct) option replaced by each option."""
    gold = winogrande_gold(row)
    if not input_formatted.endswith(gold):
        raise ValueError(f"input_formatted does not end with the correct option {gold!r}")
    prefix = input_formatted[: len(input_formatted) - len(gold)]
    return [prefix + str(row["option1"]), prefix + str(row["option2"])], winogrande_target(row)


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


# -------------------------------------------------------------- custom templates
_TEMPLATES: dict[str, Any] = {}
#: the largest string or list a template may build with ``*``, and the largest exponent of ``**``
_MAX_REPEAT = 1_000_000
_MAX_EXPONENT = 64
#: tags that reach other templates (files): a prompt renders one content row and nothing else
_LOADING_TAGS = {"Include": "{% include %}", "Import": "{% import %}", "FromImport": "{% from ... import %}",
                 "Extends": "{% extends %}"}


def _sandbox():
    """jinja2's immutable sandbox, with ``*`` and ``**`` bounded: a spec is untrusted input.

    The sandbox refuses attributes that reach Python internals (names starting with ``_``,
    function globals, frames...) and methods that modify a row's lists or dicts; a template
    cannot load other templates (no loader). ``'x' * 10**12`` or ``10 ** 10 ** 10`` would
    exhaust memory or time: they are refused too.
    """
    from jinja2 import StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

    class PromptSandbox(ImmutableSandboxedEnvironment):
        intercepted_binops = frozenset({"*", "**"})

        def call_binop(self, context, operator, left, right):
            if operator == "**" and isinstance(right, (int, float)) and (
                    abs(right) > _MAX_EXPONENT or isinstance(left, int) and left.bit_length() * abs(right) > 4096):
                raise SecurityError(f"{left!r:.40} ** {right!r:.40} is too large a power")
            if operator == "*":
                for seq, n in ((left, right), (right, left)):
                    if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * n > _MAX_REPEAT:
                        raise SecurityError(f"repeating a {type(seq).__name__} {n} times makes more than "
                                            f"{_MAX_REPEAT:,} elements")
            return super().call_binop(context, operator, left, right)

    return PromptSandbox(undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False)


def template_problems(template: str) -> list[str]:
    """Why a spec's template is refused (empty list: it may be rendered), from its syntax alone.

    Loading tags (``{% include %}``, ``{% import %}``, ``{% from %}``, ``{% extends %}``),
    attributes or keys starting with ``_`` (``x.__class__``, ``x['__init__']``) and the
    ``attr`` filter are refused: what they reach is never a column of the row. Whatever a
    template assembles while rendering is checked again by the sandbox (:func:`render_template`).
    """
    import jinja2
    from jinja2 import nodes

    try:
        ast = _sandbox().parse(template)
    except jinja2.TemplateSyntaxError as exc:
        return [f"not a valid jinja2 template: {exc.message} (line {exc.lineno})"]
    out = []
    for node in ast.find_all(nodes.Node):
        kind = type(node).__name__
        if kind in _LOADING_TAGS:
            out.append(f"{_LOADING_TAGS[kind]} is not allowed (line {node.lineno}): a template renders one row "
                       "and cannot read other templates or files")
        elif isinstance(node, nodes.Getattr) and node.attr.startswith("_"):
            out.append(f"attribute {node.attr!r} is not allowed (line {node.lineno}): names starting with _ "
                       "reach Python internals, not the row")
        elif (isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const)
              and isinstance(node.arg.value, str) and node.arg.value.startswith("_")):
            out.append(f"key {node.arg.value!r} is not allowed (line {node.lineno}): names starting with _ "
                       "reach Python internals, not the row")
        elif isinstance(node, nodes.Filter) and node.name == "attr":
            out.append(f"the attr filter is not allowed (line {node.lineno}): use row.column or row['column']")
    return list(dict.fromkeys(out))


def render_template(template: str, row: Mapping) -> str:
    """A custom benchmark's jinja2 ``prompt`` rendered with the row's columns as variables.

    Rendered in jinja2's immutable sandbox (:func:`_sandbox`): a spec is untrusted input, and
    its template must not reach anything but the row. Undefined names are errors (a typo in a
    column name must not render an empty string); numpy arrays become lists. The template's
    trailing newline is kept. Every problem is a ValueError starting with ``prompt template:``.
    """
    import jinja2
    from jinja2.sandbox import SecurityError

    compiled = _TEMPLATES.get(template)
    if compiled is None:
        problems = template_problems(template)
        if problems:
            raise ValueError(f"prompt template: {'; '.join(problems)}")
        compiled = _sandbox().from_string(template)
        _TEMPLATES[template] = compiled
    values = {str(k): (v.tolist() if hasattr(v, "tolist") and not isinstance(v, str) else v) for k, v in row.items()}
    try:
        return compiled.render(**values)
    except SecurityError as exc:
        raise ValueError(f"prompt template: refused by the sandbox: {exc}") from None
    except jinja2.UndefinedError as exc:
        raise ValueError(f"prompt template: {exc.message}; the row has columns {', '.join(map(str, row))}") from None
    except jinja2.TemplateError as exc:  # e.g. a loading tag that slipped through: never an unexpected error
        raise ValueError(f"prompt template: {type(exc).__name__}: {exc}") from None
    except (TypeError, ValueError, ArithmeticError, LookupError) as exc:  # an expression that fails on this row
        raise ValueError(f"prompt template: {type(exc).__name__} while rendering a row: {exc}") from None


Renderer = Callable[[Mapping, Sequence[Mapping]], str]

#: renderer name (``ConfigSpec.renderer``) -> ``render_<name>(row, fewshot) -> str``
RENDERERS: dict[str, Renderer] = {
    "mmlu": render_mmlu,
    "arc": render_arc,
    "hellaswag": render_hellaswag,
    "winogrande": render_winogrande,
    "truthfulqa": render_truthfulqa,
    "gsm8k": render_gsm8k,
    **V2_RENDERERS,  # the Open LLM Leaderboard v2 tasks (tinybench_builder.registry.prompts_v2)
}
#: renderers of the full splits where they differ from the tiny split's
FULL_SPLIT_RENDERERS: dict[str, Renderer] = {"winogrande": render_winogrande_full}
#: ``ConfigSpec.renderer`` of a custom benchmark's jinja2 prompt (``ConfigSpec.prompt_template``)
TEMPLATE_RENDERER = "template"


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


def fixed_sample(n_pool: int, k: int, seed: int = 1234) -> list[int]:
    """``random.Random(seed).sample(range(n_pool), k)``: the pool indices of the ``fixed`` sampler
    (lm-evaluation-harness 0.4's context sampler, seeded 1234, on a fresh task)."""
    if k > n_pool:
        raise ValueError(f"cannot draw {k} few-shot examples from a pool of {n_pool}")
    return random.Random(seed).sample(range(n_pool), k)


def _first_n(config: "ConfigSpec", rows: Sequence[Mapping], pool: Sequence[Mapping]) -> list[list[Mapping]]:
    k, group = config.num_fewshot, config.fewshot_group
    by_group: dict[Any, list[int]] = {}
    for j, s in enumerate(pool):
        by_group.setdefault(s[group] if group else None, []).append(j)
    out = []
    for row in rows:
        key = row[group] if group else None
        chosen = by_group.get(key, [])[:k]
        if len(chosen) < k:
            raise ValueError(f"{config.name}: only {len(chosen)} few-shot rows for group {key!r} (need {k})")
        out.append([pool[j] for j in chosen])
    return out


def _harness_v1(config: "ConfigSpec", rows: Sequence[Mapping], pool: Sequence[Mapping],
                upstream_index: Sequence[int], n_eval: int) -> list[list[Mapping]]:
    if config.fewshot_group:
        raise ValueError(f"{config.name}: the harness_v1 sampler has no per-group mode")
    order, shots = harness_v1_schedule(n_eval, len(pool), config.num_fewshot, seed=config.fewshot_seed)
    position = {doc: p for p, doc in enumerate(order)}
    out = []
    for idx in upstream_index:
        if idx not in position:
            raise ValueError(f"{config.name}: row index {idx} is outside the evaluation split (size {n_eval})")
        out.append([pool[j] for j in shots[position[idx]]])
    return out


def _fixed(config: "ConfigSpec", rows: Sequence[Mapping], pool: Sequence[Mapping]) -> list[list[Mapping]]:
    if config.fewshot_group:
        raise ValueError(f"{config.name}: the fixed sampler has no per-group mode")
    shots = [pool[j] for j in fixed_sample(len(pool), config.num_fewshot, config.full_split_seed)]
    return [list(shots) for _ in rows]




def select_fewshot(config: "ConfigSpec", rows: Sequence[Mapping],
                   fewshot_rows: Mapping[str, Sequence[Mapping]], *,
                   split: str | None = None, upstream_index: Sequence[int] | None = None,
                   n_eval: int | None = None) -> list[list[Mapping]]:
    """The few-shot rows of every row of a split (deterministic; see the module docstring).

    Parameters
    ----------
    config : ConfigSpec
        Gives ``num_fewshot``, ``fewshot_split``, the samplers and seeds and ``fewshot_group``.
    rows : rows of one split, in the order they will be written.
    fewshot_rows : split name -> all rows of that split (upstream order); must hold
        ``config.fewshot_split``.
    split : name of the split ``rows`` belong to (default: ``config.tiny_split``). The tiny split
        uses ``fewshot_sampler``, every other split ``full_split_sampler``.
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
    tiny = (split or config.tiny_split) == config.tiny_split
    sampler = config.fewshot_sampler if tiny else config.full_split_sampler
    if sampler == "first_n":
        return _first_n(config, rows, pool)
    if sampler == "fixed" and not tiny:
        return _fixed(config, rows, pool)
    if sampler == "harness_v1" and tiny:
        index = list(range(len(rows))) if upstream_index is None else [int(i) for i in upstream_index]
        if len(index) != len(rows):
            raise ValueError("upstream_index must have one entry per row")
        return _harness_v1(config, rows, pool, index, len(rows) if n_eval is None else int(n_eval))
    known = SAMPLERS if tiny else FULL_SPLIT_SAMPLERS
    raise ValueError(f"{config.name}: unknown {'' if tiny else 'full-split '}few-shot sampler {sampler!r} "
                     f"(known: {', '.join(known)})")


def render_split(config: "ConfigSpec", rows: Sequence[Mapping],
                 fewshot_rows: Mapping[str, Sequence[Mapping]], *,
                 split: str | None = None, upstream_index: Sequence[int] | None = None,
                 n_eval: int | None = None) -> list[str]:
    """``input_formatted`` for every row of a split (see :func:`select_fewshot` for the options).

    ``config.renderer`` names the template in :data:`RENDERERS` (the full splits use
    :data:`FULL_SPLIT_RENDERERS` where it has the name); ``"template"`` renders the config's
    jinja2 ``prompt_template`` (custom benchmarks, zero-shot). ``fewshot_rows`` maps split names
    to the full few-shot splits (``{"dev": [...]}`` for MMLU, ``{"train": [...]}`` for
    ARC/HellaSwag/Winogrande/GSM8K, ``{}`` for TruthfulQA).
    """
    if config.renderer is None:
        raise ValueError(f"{config.name}: this config has no input_formatted renderer")
    if config.renderer == TEMPLATE_RENDERER:
        template = getattr(config, "prompt_template", None)
        if not template:
            raise ValueError(f"{config.name}: renderer 'template' without a prompt template")
        return [render_template(template, row) for row in rows]
    tiny = (split or config.tiny_split) == config.tiny_split
    render = None if tiny else FULL_SPLIT_RENDERERS.get(config.renderer)
    if render is None:
        try:
            render = RENDERERS[config.renderer]
        except KeyError:
            raise ValueError(f"{config.name}: unknown renderer {config.renderer!r} "
                             f"(known: {', '.join(RENDERERS)}, {TEMPLATE_RENDERER})") from None
    shots = select_fewshot(config, rows, fewshot_rows, split=split,
                           upstream_index=upstream_index, n_eval=n_eval)
    return [render(row, fs) for row, fs in zip(rows, shots)]
