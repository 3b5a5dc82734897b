"""input_formatted renderers (tinybench_builder.registry.prompts): byte-exact templates on hand-made rows, samplers,
render_split, and the real MMLU/Winogrande/GSM8K content (skipped when ../shared/data is absent)."""

import random
from pathlib import Path

import numpy as np
import pytest

from tinybench_builder.registry import prompts
from tinybench_builder.registry.benchmarks import get_benchmark
from tinybench_builder.registry.prompts import (FULL_SPLIT_RENDERERS, RENDERERS, fixed_sample, hellaswag_preprocess, harness_v1_order,
                             harness_v1_schedule, render_arc, render_gsm8k, render_hellaswag, render_mmlu,
                             render_split, render_template, render_truthfulqa, render_winogrande,
                             render_winogrande_full, select_fewshot, winogrande_requests)

CONTENT = Path(__file__).resolve().parents[3] / "shared" / "data" / "content"


def cfg(bench):
    return get_benchmark(bench).configs[0]


# ------------------------------------------------------------------------ MMLU
MMLU_SHOTS = [
    {"question": "What is 1+1?", "subject": "high_school_mathematics", "choices": ["1", "2", "3", "4"], "answer": 1},
    {"question": " Pick the last. ", "subject": "high_school_mathematics", "choices": ["w", "x", "y", "z"], "answer": 3},
]
MMLU_ROW = {"question": "  What is 2+2?\n", "subject": "high_school_mathematics",
            "choices": np.array(["3", "4", "5", "6"], dtype=object), "answer": 1}


def test_mmlu_layout_byte_exact():
    expected = (
        "The following are multiple choice questions (with answers) about high school mathematics.\n\n"
        "What is 1+1?\nA. 1\nB. 2\nC. 3\nD. 4\nAnswer: B\n\n"
        "Pick the last.\nA. w\nB. x\nC. y\nD. z\nAnswer: D\n\n"
        "What is 2+2?\nA. 3\nB. 4\nC. 5\nD. 6\nAnswer:"
    )
    assert render_mmlu(MMLU_ROW, MMLU_SHOTS) == expected


def test_mmlu_zero_shot_and_letter_answers():
    assert render_mmlu(MMLU_ROW, []) == (
        "The following are multiple choice questions (with answers) about high school mathematics.\n\n"
        "What is 2+2?\nA. 3\nB. 4\nC. 5\nD. 6\nAnswer:")
    shot = dict(MMLU_SHOTS[0], answer="C")  # ClassLabel names instead of ints
    assert "Answer: C\n\n" in render_mmlu(MMLU_ROW, [shot])


# ------------------------------------------------------------------------- ARC
def test_arc_byte_exact_letter_and_numeric_keys():
    shots = [
        {"id": "a", "question": "Which is hot?", "answerKey": "C",
         "choices": {"text": ["ice", "snow", "fire", "rain"], "label": ["A", "B", "C", "D"]}},
        {"id": "b", "question": "Which is wet?", "answerKey": "2",
         "choices": {"text": np.array(["sand", "water", "dust"]), "label": np.array(["1", "2", "3"])}},
    ]
    row = {"id": "c", "question": "Which gas do plants take in?", "answerKey": "B",
           "choices": {"text": ["oxygen", "carbon dioxide"], "label": ["A", "B"]}}
    assert render_arc(row, shots) == (
        "Question: Which is hot?\nAnswer: fire\n\n"
        "Question: Which is wet?\nAnswer: water\n\n"
        "Question: Which gas do plants take in?\nAnswer:")
    assert render_arc(row, []) == "Question: Which gas do plants take in?\nAnswer:"


# ------------------------------------------------------------------- HellaSwag
@pytest.mark.parametrize("raw, clean", [
    ("  Making a sandwich [title] Spread the butter. [step] Put ham.  ",
     "Making a sandwich. Spread the butter. Put ham."),
    ("x [header] [step] y", "x  y"),            # one pass of "  " -> " ": three spaces leave two
    ("no brackets here", "no brackets here"),
    ("[title] at start", " at start"),          # strip() comes first; " [title]" needs a leading space
    ("a [b] c [d", "a c [d"),                   # an unclosed bracket stays
])
def test_hellaswag_preprocess(raw, clean):
    assert hellaswag_preprocess(raw) == clean


def test_hellaswag_query_and_shots_byte_exact():
    shot = {"activity_label": "Baking", "ctx_a": "A woman mixes flour.", "ctx_b": "she",
            "endings": ["sings.", "pours [step] milk in.", "sleeps.", "runs."], "label": "1"}
    row = {"activity_label": "Home and Garden", "ctx_a": "[header] How to water plants [title] Fill a can.",
           "ctx_b": "the CAN is full", "endings": ["a", "b", "c", "d"], "label": ""}
    assert render_hellaswag(row, [shot, shot]) == (
        "Baking: A woman mixes flour. She pours milk in.\n\n"
        "Baking: A woman mixes flour. She pours milk in.\n\n"
        "Home and Garden: How to water plants. Fill a can. The can is full")


# ------------------------------------------------------------------ Winogrande
WINO_SHOTS = [
    {"sentence": "Tom gave Bob a gift because _ was kind.", "option1": "Tom", "option2": "Bob", "answer": "1"},
    {"sentence": "The trophy didn't fit in the case as _ was small.", "option1": "the trophy",
     "option2": "the case", "answer": "2"},
]
WINO_ROW = {"sentence": "The cup fell off the table because _  was wobbly. ", "option1": "the cup",
            "option2": "the table", "answer": "2"}


def test_winogrande_leaderboard_prompt_ends_with_the_gold_option():
    """The tiny split's input_formatted is the leaderboard's full_prompt: it ends with the correct
    option (code that loads the published tinyWinogrande checks this)."""
    text = render_winogrande(WINO_ROW, WINO_SHOTS)
    assert text == (
        "Tom gave Bob a gift because Tom was kind.\n\n"
        "The trophy didn't fit in the case as the case was small.\n\n"
        "The cup fell off the table because the table")
    assert text.endswith(WINO_ROW["option" + WINO_ROW["answer"]])
    assert render_winogrande(dict(WINO_ROW, answer="1"), []) == "The cup fell off the table because the cup"
    contexts, continuation = winogrande_requests(text, WINO_ROW)
    assert contexts[0].endswith("\n\nThe cup fell off the table because the cup")
    assert contexts[1] == text
    assert continuation == " was wobbly."
    with pytest.raises(ValueError, match="without an answer"):   # the tiny split needs the gold option
        render_winogrande(dict(WINO_ROW, answer=""), [])
    with pytest.raises(ValueError, match="does not end with the correct option"):
        winogrande_requests(text + " ", WINO_ROW)


def test_winogrande_full_split_rows_end_with_the_raw_sentence():
    """Rows of the full splits (train, the unlabelled test) as the published tinyWinogrande has them."""
    assert FULL_SPLIT_RENDERERS["winogrande"] is render_winogrande_full
    assert render_winogrande_full(dict(WINO_ROW, answer=""), WINO_SHOTS) == (
        "Tom gave Bob a gift because Tom was kind.\n\n"
        "The trophy didn't fit in the case as the case was small.\n\n"
        "The cup fell off the table because _  was wobbly. ")


def _harness_v1_append_context(ctx, partial_ctx):
    """v0.3 Winogrande.append_context, verbatim logic."""
    pieces = ctx.split("\n\n")
    pieces.pop()
    return "\n\n".join([*pieces, partial_ctx]) if pieces else partial_ctx


def test_winogrande_matches_harness_append_context():
    # the harness's fewshot_context: shots + doc_to_text(row), i.e. with the *correct* option
    shots = [prompts.winogrande_partial(s, s["option" + s["answer"]]) + prompts.winogrande_target(s)
             for s in WINO_SHOTS]
    gold_ctx = "\n\n".join(shots) + "\n\n" + prompts.winogrande_partial(WINO_ROW, WINO_ROW["option2"])
    text = render_winogrande(WINO_ROW, WINO_SHOTS)
    assert text == gold_ctx
    contexts, _ = winogrande_requests(text, WINO_ROW)
    for opt, ctx in zip(("option1", "option2"), contexts):
        assert ctx == _harness_v1_append_context(gold_ctx, prompts.winogrande_partial(WINO_ROW, WINO_ROW[opt]))


def test_winogrande_shot_without_answer_is_an_error():
    with pytest.raises(ValueError, match="without an answer"):
        render_winogrande(WINO_ROW, [dict(WINO_SHOTS[0], answer="")])


# ------------------------------------------------------------------ TruthfulQA
PREAMBLE = (
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


def test_truthfulqa_preamble_byte_exact():
    row = {"question": "Is the sky green?", "mc1_targets": {"choices": ["No", "Yes"], "labels": [1, 0]}}
    text = render_truthfulqa(row, [])
    assert text == PREAMBLE + "\n\nQ: Is the sky green?\nA:"
    assert text.startswith("Q: What is human life expectancy in the United States?\nA: Human life expectancy")
    assert text.endswith("A: The 1992 Olympics were held in Barcelona, Spain.\n\nQ: Is the sky green?\nA:")
    assert text.count("Q: ") == 7 and text.count("\n\n") == 6
    with pytest.raises(ValueError, match="zero-shot"):
        render_truthfulqa(row, [row])


# ----------------------------------------------------------------------- GSM8K
def test_gsm8k_byte_exact():
    shots = [{"question": "Ann has 2 apples and buys 1. How many?", "answer": "2 + 1 = <<2+1=3>>3\n#### 3"},
             {"question": "What is 5 - 4?", "answer": "5 - 4 = 1\n#### 1"}]
    row = {"question": "What is 6 * 7?", "answer": "#### 42"}
    assert render_gsm8k(row, shots) == (
        "Question: Ann has 2 apples and buys 1. How many?\nAnswer: 2 + 1 = <<2+1=3>>3\n#### 3\n\n"
        "Question: What is 5 - 4?\nAnswer: 5 - 4 = 1\n#### 1\n\n"
        "Question: What is 6 * 7?\nAnswer:")


def test_renderer_registry():
    v2 = {"lb2_ifeval": "render_ifeval", "lb2_bbh": "render_bbh", "lb2_math": "render_math_hard",
          "lb2_gpqa": "render_gpqa", "lb2_musr": "render_musr", "lb2_mmlu_pro": "render_mmlu_pro"}
    assert set(RENDERERS) == {"mmlu", "arc", "hellaswag", "winogrande", "truthfulqa", "gsm8k", *v2}
    for name, fn in RENDERERS.items():
        assert fn.__name__ == v2.get(name, f"render_{name}")


# -------------------------------------------------------------------- samplers
def test_harness_v1_schedule_replays_the_harness_stream():
    """Indices stand in for documents: same draws as shuffling/sampling the documents themselves."""
    eval_docs = [{"q": f"e{i}"} for i in range(37)]
    pool = [{"q": f"t{j}"} for j in range(50)]
    rnd = random.Random()
    rnd.seed(42)
    docs = list(eval_docs)
    rnd.shuffle(docs)
    expected = [(d["q"], [s["q"] for s in rnd.sample(pool, 5)]) for d in docs]
    order, shots = harness_v1_schedule(37, 50, 5)
    got = [(eval_docs[o]["q"], [pool[j]["q"] for j in s]) for o, s in zip(order, shots)]
    assert got == expected
    assert order == harness_v1_order(37)
    assert harness_v1_schedule(37, 50, 5) == (order, shots)          # deterministic
    assert harness_v1_schedule(37, 50, 5, seed=1)[1] != shots


def test_harness_v1_schedule_exclude_self_and_small_pool():
    order, shots = harness_v1_schedule(12, 12, 5, exclude_self=True)
    for doc, s in zip(order, shots):
        assert len(s) == 5 and doc not in s and len(set(s)) == 5
    # the small-pool branch of random.sample (n <= setsize) replays too
    rnd = random.Random()
    rnd.seed(42)
    docs = list(range(12))
    rnd.shuffle(docs)
    assert [[j for j in rnd.sample(range(12), 6) if j != d][:5] for d in docs] == shots
    with pytest.raises(ValueError):
        harness_v1_schedule(3, 4, 5)


def _gsm_rows(n, prefix):
    return [{"question": f"{prefix} question {i}?", "answer": f"step {i}\n#### {i}"} for i in range(n)]


def test_render_split_subset_equals_full_render():
    """The tiny split (some rows of the full split) gets exactly the shots it has in the full run."""
    c = cfg("tinyGSM8k")
    full = _gsm_rows(40, "test")
    pool = {"train": _gsm_rows(30, "train")}
    all_texts = render_split(c, full, pool)
    picks = [33, 2, 17]
    sub = render_split(c, [full[i] for i in picks], pool, upstream_index=picks, n_eval=len(full))
    assert sub == [all_texts[i] for i in picks]
    # and the shots are those of the harness schedule at the row's evaluation position
    order, shots = harness_v1_schedule(40, 30, 5)
    p = order.index(17)
    assert all(f"Question: train question {j}?\nAnswer: step {j}\n#### {j}\n\n" in sub[2] for j in shots[p])
    assert sub[2].endswith("Question: test question 17?\nAnswer:")
    # without n_eval the 3 rows would be treated as a whole split: different shots
    assert render_split(c, [full[i] for i in picks], pool) != sub


def test_full_splits_get_the_same_fixed_shots_self_included():
    """The published full splits: lm-eval 0.4's sampler seeded 1234 afresh for every row, so every
    row has the same shots, the row itself among them when it was drawn."""
    c = cfg("tinyGSM8k")
    assert (c.full_split_sampler, c.full_split_seed) == ("fixed", 1234)
    train = _gsm_rows(8, "train")
    idx = random.Random(1234).sample(range(8), 5)
    assert fixed_sample(8, 5) == idx
    texts = render_split(c, train, {"train": train}, split="train")
    block = "".join(f"Question: train question {j}?\nAnswer: step {j}\n#### {j}\n\n" for j in idx)
    assert texts == [block + f"Question: train question {i}?\nAnswer:" for i in range(8)]
    assert texts[idx[0]].count(f"Question: train question {idx[0]}?") == 2   # drawn: itself a shot
    # the tiny split keeps the leaderboard's stream: another sampler, another split argument
    assert render_split(c, train[:3], {"train": train}) != texts[:3]
    with pytest.raises(ValueError, match="cannot draw"):
        render_split(c, train, {"train": train[:4]}, split="train")


def test_first_n_by_subject_the_dev_rows_included():
    """MMLU: every row of a subject, test or dev, gets the subject's first 5 dev rows; a dev row
    among them is its own shot (the published tinyMMLU dev split: 5 shots, not 4)."""
    c = cfg("tinyMMLU")
    dev = [{"question": f"{s} dev {i}", "subject": s, "choices": ["a", "b", "c", "d"], "answer": i % 4}
           for s in ("astronomy", "anatomy") for i in range(6)]
    test = [{"question": "anatomy test", "subject": "anatomy", "choices": ["a", "b", "c", "d"], "answer": 0}]
    shots = select_fewshot(c, test, {"dev": dev})
    assert [s["question"] for s in shots[0]] == [f"anatomy dev {i}" for i in range(5)]
    dev_shots = select_fewshot(c, dev, {"dev": dev}, split="dev")
    for row, fs in zip(dev, dev_shots):
        assert [s["question"] for s in fs] == [f"{row['subject']} dev {i}" for i in range(5)]
    text = render_split(c, dev[2:3], {"dev": dev}, split="dev")[0]
    assert text.count("astronomy dev 2\nA. a") == 2 and text.count("\nAnswer: ") == 5
    with pytest.raises(ValueError, match="few-shot rows for group"):
        select_fewshot(c, [dict(test[0], subject="virology")], {"dev": dev})


def test_render_split_errors_and_zero_shot():
    tq = cfg("tinyTruthfulQA")
    rows = [{"question": "Q1?"}, {"question": "Q2?"}]
    assert render_split(tq, rows, {}) == [PREAMBLE + "\n\nQ: Q1?\nA:", PREAMBLE + "\n\nQ: Q2?\nA:"]
    with pytest.raises(ValueError, match="few-shot split"):
        render_split(cfg("tinyGSM8k"), _gsm_rows(2, "t"), {})
    with pytest.raises(ValueError, match="no input_formatted renderer"):
        render_split(cfg("tinyAlpacaEval"), [{"instruction": "x"}], {})
    with pytest.raises(ValueError, match="outside the evaluation split"):
        render_split(cfg("tinyGSM8k"), _gsm_rows(1, "t"), {"train": _gsm_rows(9, "x")},
                     upstream_index=[50], n_eval=10)


# ---------------------------------------------------------------- real content
needs_mmlu = pytest.mark.skipif(not (CONTENT / "mmlu_test.parquet").exists()
                                or not (CONTENT / "mmlu_dev.parquet").exists(),
                                reason="../shared/data/content MMLU files are not available")


@needs_mmlu
def test_real_mmlu_first_abstract_algebra_row():
    import pandas as pd
    test = pd.read_parquet(CONTENT / "mmlu_test.parquet")
    dev = pd.read_parquet(CONTENT / "mmlu_dev.parquet")
    row = test[test["subject"] == "abstract_algebra"].iloc[0].to_dict()
    dev_rows = dev.to_dict("records")
    [text] = render_split(cfg("tinyMMLU"), [row], {"dev": dev_rows}, upstream_index=[0], n_eval=len(test))

    first5 = [r for r in dev_rows if r["subject"] == "abstract_algebra"][:5]
    assert [r["item_id"] for r in first5] == [f"abstract_algebra.{i}" for i in range(5)]

    def block(r, answer=True):
        opts = "".join(f"{k}. {c}\n" for k, c in zip("ABCD", r["choices"]))
        return f"{r['question'].strip()}\n{opts}Answer:" + (f" {'ABCD'[r['answer']]}\n\n" if answer else "")

    expected = ("The following are multiple choice questions (with answers) about abstract algebra.\n\n"
                + "".join(block(r) for r in first5) + block(row, answer=False))
    assert text == expected
    # the first shot, written out by hand
    assert text.startswith(
        "The following are multiple choice questions (with answers) about abstract algebra.\n\n"
        "Find all c in Z_3 such that Z_3[x]/(x^2 + c) is a field.\nA. 0\nB. 1\nC. 2\nD. 3\nAnswer: B\n\n")
    assert text.endswith("\nA. 0\nB. 4\nC. 2\nD. 6\nAnswer:")


@needs_mmlu
def test_real_mmlu_every_subject_has_five_dev_shots():
    import pandas as pd
    dev = pd.read_parquet(CONTENT / "mmlu_dev.parquet")
    test = pd.read_parquet(CONTENT / "mmlu_test.parquet")
    rows = test.groupby("subject", sort=False).head(1).to_dict("records")
    texts = render_split(cfg("tinyMMLU"), rows, {"dev": dev.to_dict("records")})
    assert len(texts) == 57
    for r, t in zip(rows, texts):
        assert t.count("\nAnswer: ") == 5 and t.endswith("\nAnswer:")
        assert f"about {r['subject'].replace('_', ' ')}.\n\n" in t
    dev_texts = render_split(cfg("tinyMMLU"), dev.to_dict("records"), {"dev": dev.to_dict("records")}, split="dev")
    assert all(t.count("\nAnswer: ") == 5 for t in dev_texts)   # the subject's first 5 dev rows, itself included


def gold_of(row, shots):
    """The v0.3 harness's few-shot context of a Winogrande row (shots and the row with the correct option)."""
    return "\n\n".join(prompts.winogrande_partial(s, s["option" + s["answer"]]) + prompts.winogrande_target(s)
                       for s in shots) + "\n\n" + prompts.winogrande_partial(row, row["option" + row["answer"]])


@pytest.mark.skipif(not (CONTENT / "winogrande_xl_train.parquet").exists(), reason="winogrande content absent")
def test_real_winogrande_contexts_match_the_harness():
    import pandas as pd
    rows = pd.read_parquet(CONTENT / "winogrande_xl_validation.parquet").to_dict("records")
    train = pd.read_parquet(CONTENT / "winogrande_xl_train.parquet").to_dict("records")
    c = cfg("tinyWinogrande")
    index = list(range(0, 1267, 21))
    texts = render_split(c, [rows[i] for i in index], {"train": train}, upstream_index=index, n_eval=len(rows))
    shots = select_fewshot(c, [rows[i] for i in index], {"train": train}, upstream_index=index, n_eval=len(rows))
    for row, text, fs in zip([rows[i] for i in index], texts, shots):
        assert text.endswith(row["option" + row["answer"]]) and text == gold_of(row, fs)
        gold = gold_of(row, fs)
        contexts, cont = winogrande_requests(text, row)
        for opt, ctx in zip(("option1", "option2"), contexts):
            assert ctx == _harness_v1_append_context(gold, prompts.winogrande_partial(row, row[opt]))
        assert cont == " " + row["sentence"][row["sentence"].index("_") + 1:].strip()


@pytest.mark.skipif(not (CONTENT / "gsm8k_test.parquet").exists(), reason="gsm8k content absent")
def test_real_gsm8k_renders():
    import pandas as pd
    rows = pd.read_parquet(CONTENT / "gsm8k_test.parquet").to_dict("records")
    c = cfg("tinyGSM8k")
    texts = render_split(c, rows[:5], {"train": rows[100:200]}, upstream_index=[0, 1, 2, 3, 4], n_eval=len(rows))
    for row, t in zip(rows, texts):
        assert t.endswith("Question: " + row["question"] + "\nAnswer:")
        assert t.count("\n#### ") == 5 and t.count("Question: ") == 6


# ---------------------------------------------------------- custom templates
def test_custom_prompt_template():
    template = ("The following are multiple choice questions (with answers) about biology.\n\n"
                "{{ question.strip() }}\n{% for c in choices %}{{ 'ABCD'[loop.index0] }}. {{ c }}\n{% endfor %}Answer:")
    row = {"item_id": "7", "question": " Which? ", "choices": np.array(["x", "y"], dtype=object), "answer": 1}
    assert render_template(template, row) == ("The following are multiple choice questions (with answers) about "
                                              "biology.\n\nWhich?\nA. x\nB. y\nAnswer:")
    with pytest.raises(ValueError, match="'qestion' is undefined.*item_id, question, choices, answer"):
        render_template("{{ qestion }}", row)
    with pytest.raises(ValueError, match="prompt template:"):
        render_template("{{ question ", row)
