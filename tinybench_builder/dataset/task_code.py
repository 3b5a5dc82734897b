"""The source text of the modules ``build`` writes next to the task files: pieces shared by both harnesses.

``tiny_utils_<id>.py`` (lm-evaluation-harness, :mod:`tinybench_builder.dataset.harness_tasks`) and
``lighteval/tiny_tasks.py`` (lighteval, :mod:`tinybench_builder.dataset.lighteval_tasks`) are generated
from these pieces plus a table of the release (``TASKS``, ``REPO_ID``, ``REVISION``): the same
resolution of a row's choices and target (lm-eval's jinja2 templates, HellaSwag's cleaning,
Winogrande's partial evaluation), the same map from a row to its anchor id (sha256 of its key
column) and the same estimate (the release's ``estimator.py``, loaded by path without writing
bytecode into the release folder). Both generated modules need numpy (and jinja2, which both
harnesses install); the estimator numpy + scipy.
"""

from __future__ import annotations

import json

__all__ = ["IMPORTS", "DOC_FUNCTIONS", "LM_EVAL_SCORING", "ROW_ITEMS", "RELEASE_ESTIMATE", "LM_EVAL_AGGREGATION",
           "LM_EVAL_PROCESSOR", "UTILS_DOCSTRING",
           "V2_LM_EVAL_SCORING", "v2_choices_source"]

#: the docstring of ``tiny_utils``
UTILS_DOCSTRING = '''\
"""Functions of the lm-evaluation-harness tasks of this tiny dataset (written by tinybench-builder).

Every task reports, in lm-eval's results table:

* ``score``: the estimated full-benchmark score, computed by the estimator shipped in this
  release (``estimator.py`` and its side files in the folder above this one; when they are not
  there, downloaded from the dataset repository at the release tag and checked against its
  manifest), from the rows the run answered: any subset (``--limit n``: the first n rows) gives
  an estimate, with a wider interval;
* ``score_ci_low``, ``score_ci_high``: its 95% interval;
* ``anchor_mean``: the plain mean of the answered rows' metric (not an estimate of the full score).

``process_results_<task>`` scores a row as lm-eval scores it and tags the value with the row's
item id, so the estimate never depends on the order of the results (data-parallel runs,
``--samples``). numpy only (the estimator: numpy + scipy); jinja2, an lm-eval dependency, renders
the templates of choices and targets as lm-eval does.
"""
'''

#: the imports of the generated modules, and where the release folder is
IMPORTS = '''\

import ast
import functools
import hashlib
import importlib.util
import json
import os
import re
import string
import sys
from pathlib import Path

import numpy as np

# not resolve(): in the Hub cache this file is a symbolic link into blobs/, and the release's other files
# are beside the link (snapshots/<commit>/), not beside its target
HERE = Path(os.path.abspath(__file__)).parent
ROOT = HERE.parent  # the release folder: estimator.py, manifest.json, the side files
SIDE_FILES = ("estimator.json", "irt_parameters.npz")


'''

#: a row's choices and target as lm-eval resolves them (HellaSwag, Winogrande, templates)
DOC_FUNCTIONS = '''\
def _clean(text):
    # lm-eval's HellaSwag preprocessing (tasks/hellaswag/utils.py)
    text = text.strip()
    text = text.replace(" [title]", ". ")
    text = re.sub("\\\\[.*?\\\\]", "", text)
    return text.replace("  ", " ")


def hellaswag_choices(doc):
    """The four endings, cleaned as lm-eval's HellaSwag cleans them."""
    return [_clean(e) for e in doc["endings"]]


def _gold_option(doc):
    return doc["option" + str(doc["answer"]).strip()]


def winogrande_gold(doc):
    """Partial evaluation: the index of the correct context (lm-eval then scores every context)."""
    return {"1": 0, "2": 1}[str(doc["answer"]).strip()]


def winogrande_choices(doc):
    """input_formatted ends with the correct option: the same prompt ending with each option."""
    prompt, gold = doc["input_formatted"], _gold_option(doc)
    if not prompt.endswith(gold):
        raise ValueError("input_formatted does not end with the correct option")
    prefix = prompt[: len(prompt) - len(gold)]
    return [prefix + doc["option1"], prefix + doc["option2"]]


def winogrande_target(doc):
    """The shared continuation: the sentence after the blank."""
    sentence = doc["sentence"]
    return sentence[sentence.index("_") + 1:].strip()


def truthfulqa_mc2(doc, results):
    """TruthfulQA mc2: the normalised probability of the true answers (labels 1 before labels 0)."""
    lls = np.array([r[0] for r in results], dtype=float)
    first_false = list(doc["mc2_targets"]["labels"]).index(0)
    p = np.exp(lls)
    return {"acc": float(p[:first_false].sum() / p.sum())}


# ----------------------------------------------------------------- scoring a row as lm-eval does
@functools.lru_cache(maxsize=1)
def _jinja():
    import jinja2  # lm-eval's template engine, with its settings (lm_eval/utils.py)

    env = jinja2.Environment(loader=jinja2.BaseLoader, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    env.filters["regex_replace"] = lambda s, pattern, repl, count=0: re.sub(pattern, repl, s, count=count)
    return env


def _render(template, doc):
    return _jinja().from_string(template).render(**doc)


def _resolve(spec, doc):
    """A doc_to_choice / doc_to_target / doc_to_text value of the task file, as lm-eval resolves it."""
    kind, value = spec
    if kind == "function":
        return globals()[value](doc)
    if kind in ("list", "int"):
        return value
    if value in doc:  # a column
        return doc[value]
    return _render(value, doc)


def _choices(cfg, doc):
    got = _resolve(cfg["choices"], doc)
    if cfg["choices"][0] == "template" and isinstance(got, str):
        got = ast.literal_eval(got)
    return list(got)


def _target(cfg, doc):
    got = _resolve(cfg["target"], doc)
    if cfg["target"][0] == "template" and isinstance(got, str):
        if got.isdigit() and cfg.get("choices") is not None:
            return ast.literal_eval(got)
        if len(got) >= 2 and got[0] == "[" and got[-1] == "]":
            try:
                return ast.literal_eval(got)
            except (SyntaxError, ValueError):
                return got
    return got


'''

#: a row's metric as lm-eval's ConfigurableTask.process_results computes it
LM_EVAL_SCORING = '''\
def _exact_match(prediction, reference, regexes_to_ignore=(), ignore_case=False, ignore_punctuation=False):
    # lm-eval's exact_match (api/metrics.py, exact_match_hf_evaluate) for one pair
    for s in regexes_to_ignore or ():
        prediction, reference = re.sub(s, "", prediction), re.sub(s, "", reference)
    if ignore_case:
        prediction, reference = prediction.lower(), reference.lower()
    if ignore_punctuation:
        table = str.maketrans("", "", string.punctuation)
        prediction, reference = prediction.translate(table), reference.translate(table)
    return float(prediction == reference)


def _score(cfg, doc, results):
    """The row's metric, computed as lm-eval's ConfigurableTask.process_results computes it."""
    scoring, metric = cfg["scoring"], cfg["metric"]
    if scoring == "function":  # the task's own process_results (TruthfulQA mc2, IFEval, MATH)
        return float(globals()[cfg["function"]](doc, results)[metric])
    if scoring == "loglikelihood":
        return float(bool(results[0][1]))
    if scoring == "exact_match":
        result = results[0]
        gold = _target(cfg, doc)
        if not isinstance(gold, type(result)):
            gold = type(result)(gold)
        return _exact_match(result, gold, **cfg.get("match", {}))
    lls = np.array([float(r[0]) for r in results])
    choices = _choices(cfg, doc)
    gold = _resolve(cfg["gold"], doc) if cfg.get("gold") else _target(cfg, doc)
    if isinstance(gold, str):
        gold = choices.index(gold) if gold in choices else -100
    elif isinstance(gold, (int, np.integer)):
        gold = int(gold) if gold < len(choices) else -100
    if metric == "acc_norm":
        pred = int(np.argmax(lls / np.array([float(len(c)) for c in choices])))
    else:
        pred = int(np.argmax(lls))
    return 1.0 if pred == gold else 0.0


'''

#: a document -> its anchor id (the sha256 of its key column); another release's rows are refused
ROW_ITEMS = '''\
def _item(task, doc):
    cfg = TASKS[task]
    key = hashlib.sha256(str(doc.get(cfg["key"])).encode("utf-8")).hexdigest()[:16]
    item = cfg["ids"].get(key)
    if item is None:
        raise ValueError(f"{task}: a document is not a row of this tiny dataset (column {cfg['key']!r} matches no "
                         f"row of {REPO_ID}@{REVISION}); is the task file from another release?")
    return item


'''

#: lm-eval's process_results of a task: the row's value, tagged with its anchor id
LM_EVAL_PROCESSOR = '''\
def _processor(task):
    def process_results(doc, results):
        item = _item(task, doc)
        value = _score(TASKS[task], doc, results)
        tagged = (task, item, value)
        return {"score": tagged, "score_ci_low": tagged, "score_ci_high": tagged, "anchor_mean": value}

    process_results.__name__ = process_results.__qualname__ = f"process_results_{task}"
    return process_results


'''

#: the release's estimator (beside the module, else downloaded at the tag and checked) and its estimate
RELEASE_ESTIMATE = '''\
# ----------------------------------------------------------------- the estimate (aggregation)
def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _release_root(subfolder):
    """The folder holding estimator.py and the side files of ``subfolder``: this release's, else
    a download of the repository at the release tag (checked against its manifest)."""
    prefix = f"{subfolder}/" if subfolder else ""
    if (ROOT / "estimator.py").is_file() and all((ROOT / f"{prefix}{n}").is_file() for n in SIDE_FILES):
        return ROOT
    from huggingface_hub import snapshot_download  # an lm-eval dependency (datasets)

    names = ["manifest.json", "estimator.py"] + [prefix + n for n in SIDE_FILES]
    root = Path(snapshot_download(REPO_ID, repo_type="dataset", revision=REVISION, allow_patterns=names))
    files = json.loads((root / "manifest.json").read_text(encoding="utf-8")).get("files", {})
    for name in names[1:]:
        want = (files.get(name) or {}).get("sha256")
        if not want or _sha256(root / name) != want:
            raise ValueError(f"{REPO_ID}@{REVISION}: {name} does not match the release manifest")
    return root


@functools.lru_cache(maxsize=None)
def _estimator(subfolder):
    root = _release_root(subfolder)
    code = root / "estimator.py"
    name = "tinybench_estimator_" + _sha256(code)[:16]
    module = sys.modules.get(name)
    if module is None:  # loaded by path (this folder is not on sys.path), once per process
        spec = importlib.util.spec_from_file_location(name, code)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__ in the release folder
        try:
            spec.loader.exec_module(module)
        finally:
            sys.dont_write_bytecode = saved
    return module.TinyEstimator.load(root / subfolder if subfolder else root)


@functools.lru_cache(maxsize=32)
def _estimate(task, answers):
    cfg = TASKS[task]
    res = _estimator(cfg["estimator"]).estimate(dict(answers))
    res = res.get("scenarios", {}).get(cfg["scenario"], res)
    return float(res["score"]), float(res["ci_low"]), float(res["ci_high"])


def _answers(items):
    tasks = {it[0] for it in items}
    if len(tasks) != 1:
        raise ValueError(f"expected the results of one task, got {sorted(tasks)}")
    answers = {}
    for _, item, value in items:
        value = float(value)
        if answers.get(item, value) != value:
            raise ValueError(f"{item}: two different results for the same row")
        answers[item] = value
    return tasks.pop(), tuple(sorted(answers.items()))


'''

#: lm-eval's aggregations: the estimate of the answered rows
LM_EVAL_AGGREGATION = '''\
def agg_score(items):
    """The estimated full-benchmark score from the answered rows (any order, any subset)."""
    return _estimate(*_answers(items))[0]


def agg_ci_low(items):
    """Lower end of the score's 95% interval."""
    return _estimate(*_answers(items))[1]


def agg_ci_high(items):
    """Upper end of the score's 95% interval."""
    return _estimate(*_answers(items))[2]
'''


def v2_choices_source() -> str:
    """The choices of the Open LLM Leaderboard v2 tasks: each BBH subtask's continuations, MMLU-Pro's letters."""
    from tinybench_builder.registry import bbh_choices, bbh_subtasks

    choices = json.dumps({sub: bbh_choices(sub) for sub in bbh_subtasks()}, ensure_ascii=False, indent=1)
    return """

# ---- the Open LLM Leaderboard v2 tasks (lm-eval's lm_eval/tasks/leaderboard)
#: each BBH subtask's continuations (its task's doc_to_choice); a row's subtask is its subscenario
_BBH_CHOICES = """ + choices + '''


def bbh_choices(doc):
    """The continuations of the row's BBH subtask."""
    return _BBH_CHOICES[doc["subscenario"]]


def mmlu_pro_choices(doc):
    """One letter per option (the leaderboard task's utils.doc_to_choice)."""
    return [chr(ord("A") + i) for i in range(len(doc["options"]))]
'''


#: lm-eval's scoring of the v2 generation tasks (IFEval, MATH-hard): lm-eval's own checks
V2_LM_EVAL_SCORING = '''\


def ifeval_results(doc, results):
    """Prompt-level strict accuracy, by lm-eval's own IFEval checks (pip install "lm-eval[ifeval]")."""
    from lm_eval.tasks.leaderboard.ifeval import utils as ifeval

    return {"prompt_level_strict_acc": ifeval.process_results(doc, results)["prompt_level_strict_acc"]}


def math_results(doc, results):
    """Exact match as the leaderboard scored MATH-hard: lm-eval's original answer check
    (process_result_v1; its exact_match_original) (pip install "lm-eval[math]")."""
    from lm_eval.tasks.leaderboard.math import utils as math_hard

    original = getattr(math_hard, "process_result_v1", None)
    if original is not None:
        return {"exact_match": int(original(doc, results[0]))}
    return {"exact_match": int(math_hard.process_results(doc, results)["exact_match"])}
'''
