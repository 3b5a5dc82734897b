"""lighteval custom tasks of a tiny dataset: ``build`` writes ``lighteval/tiny_tasks.py`` beside ``lm_eval/``.

::

    path=$(hf download OWNER/tinyWMDP_bio --repo-type dataset --revision v1.0.0 --quiet)
    PYTHONDONTWRITEBYTECODE=1 lighteval accelerate "model_name=<model>" "tinyWMDP_bio|0" \\
        --custom-tasks "$path/lighteval/tiny_tasks.py" --output-dir results/ --save-details
    python -m tinybench_builder estimate "$path" results/

The module is lighteval 0.13.0's custom-task format (a ``TASKS_TABLE`` of ``LightevalTaskConfig``),
one task per config that has an lm-eval task (the same name, :func:`tinybench_builder.dataset.
harness_tasks.task_name`) and ``<task>_pool`` over its pool split (every item, adaptive evaluation).
It is written from the same pieces as the lm-eval functions module
(:mod:`tinybench_builder.dataset.task_code`):

* **the rows**: read from the release folder the module sits in (``load_dataset`` of the folder:
  the same commit as the estimator, online or offline), or, when the module is used alone, from the
  dataset repository at the release tag;
* **the prompt**: the lm-eval task's (``input_formatted``, zero-shot: it holds the shots), its
  choices with lm-eval's target delimiter (``" A"``), its target;
* **the metric of each row**, by lighteval's own classes where lighteval has the benchmark:
  ``LoglikelihoodAcc`` (``acc``; ``acc_norm`` with ``LogProbCharNorm(ignore_first_space=True)``,
  lm-eval's normalisation by the characters of the choice), ``TruthfulqaMCMetrics`` (mc2),
  ``ExactMatches`` with ``gsm8k_normalizer`` (lighteval's tinyGSM8k scoring), ``AccGoldLikelihood``,
  lighteval's IFEval checks and its MATH extractive match. Winogrande is lighteval's form (the
  prompt up to the blank, each option with the rest of the sentence as a choice), not lm-eval's
  partial evaluation, which lighteval cannot express (one context per document);
* **the results**: ``score``, ``score_ci_low``, ``score_ci_high`` (the release's estimator on the
  answered rows, matched to their anchors by content: any order, any subset, ``--max-samples``)
  and ``anchor_mean``, the plain mean. Each detail carries its anchor id, the dataset version and
  the config's design hash in ``doc.specific``, what ``tinybench-builder estimate`` reads.

:func:`lighteval_files` returns ``{relative path: text}`` (deterministic). The per-benchmark settings
(:data:`KINDS`: how a renderer's rows become lighteval documents) are this module's; the
registry only names the renderer.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from tinybench_builder.dataset.harness_tasks import POOL_SUFFIX, _spec_of, task_name, task_settings
from tinybench_builder.dataset.task_code import DOC_FUNCTIONS, IMPORTS, RELEASE_ESTIMATE, ROW_ITEMS, v2_choices_source
from tinybench_builder.layout import LIGHTEVAL_TASKS
from tinybench_builder.registry import BenchmarkSpec

__all__ = ["LIGHTEVAL_TASKS", "KINDS", "lighteval_files", "lighteval_kind"]

#: how the rows of each registered renderer become lighteval documents and are scored (see the module
#: docstring); a custom benchmark's kind follows its [harness] output type
KINDS = {
    "mmlu": "choice", "arc": "choice", "hellaswag": "choice", "lb2_bbh": "choice", "lb2_gpqa": "choice",
    "lb2_musr": "choice", "lb2_mmlu_pro": "choice",
    "winogrande": "winogrande", "truthfulqa": "mc2", "gsm8k": "gsm8k", "lb2_ifeval": "ifeval", "lb2_math": "math",
}
_CUSTOM = {"multiple_choice": "choice", "generate_until": "exact_match", "loglikelihood": "loglikelihood"}
_GENERATIVE = {"gsm8k", "exact_match", "ifeval", "math"}
#: lm-eval's default max_gen_toks (generation_kwargs without one)
_MAX_TOKENS = 256

#: the docstring and lighteval imports of ``lighteval/tiny_tasks.py``
HEADER = '''\
"""lighteval custom tasks of this tiny dataset (written by tinybench-builder): pass this file to --custom-tasks.

    PYTHONDONTWRITEBYTECODE=1 lighteval accelerate "model_name=<model>" "<task>|0" \\\\
        --custom-tasks <release>/lighteval/tiny_tasks.py --output-dir results/ --save-details

Every task reports, in lighteval's results:

* ``score``: the estimated full-benchmark score, computed by the estimator shipped in this
  release (``estimator.py`` and its side files in the folder above this one; when they are not
  there, downloaded from the dataset repository at the release tag and checked against its
  manifest), from the rows the run answered: any subset (``--max-samples n``) gives an estimate,
  with a wider interval;
* ``score_ci_low``, ``score_ci_high``: its 95% interval;
* ``anchor_mean``: the plain mean of the answered rows' metric (not an estimate of the full score).

The rows are read from this release folder (one commit with the estimator), or, when this file
is used alone, from the dataset repository at the release tag. Each row is matched to its anchor by
its content (never by its position: lighteval shuffles the documents) and scored by lighteval's own
metric classes; ``doc.specific`` of every detail holds its anchor id (``item_id``), the dataset
version and the design hash. ``<task>_pool`` is the task over the pool split (every item, for
adaptive evaluation: ``select_rows``), reporting ``anchor_mean``. numpy (the estimator: numpy +
scipy); jinja2, a lighteval dependency, renders lm-eval's templates of choices and targets.
"""

'''

_LIGHTEVAL_IMPORTS = '''
from lighteval.metrics.metrics_corpus import CorpusLevelComputation
from lighteval.metrics.metrics_sample import AccGoldLikelihood, ExactMatches, LoglikelihoodAcc, SampleLevelComputation
from lighteval.metrics.normalizations import LogProbCharNorm, gsm8k_normalizer
from lighteval.metrics.utils.metric_utils import CorpusLevelMetricGrouping, SampleLevelMetric
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc, SamplingMethod

'''

#: the lighteval part of ``lighteval/tiny_tasks.py``: documents, scoring, metrics and task configs
LIGHTEVAL_SOURCE = '''\
# ----------------------------------------------------------------- lighteval documents
#: pool rows to evaluate, per pool task (None: every row): set by select_rows, or by the environment
#: variable TINYBENCH_POOL_ROWS ("<task>_pool=0,5,9;...") for a command-line run
_SELECTED = {}


def select_rows(task, rows):
    """Evaluate only these rows (positions in the pool split) of the pool task ``task`` (None: every row, or
    those of TINYBENCH_POOL_ROWS).

    The other rows give no document, so the documents keep their row as id (lighteval's sample
    cache is keyed by it): a batch of an adaptive session, ``est.adaptive(...).next_items``."""
    if rows is None:
        _SELECTED.pop(task, None)
    else:
        _SELECTED[task] = {int(r) for r in rows}


def _selected(task):
    if task in _SELECTED:
        return _SELECTED[task]
    for part in os.environ.get("TINYBENCH_POOL_ROWS", "").split(";"):
        name, _, rows = part.partition("=")
        if name.strip() == task:
            return {int(r) for r in rows.split(",") if r.strip()}
    return None


@functools.lru_cache(maxsize=None)
def _pool_items(task):
    """The item ids of the config's pool split, in row order (row j = item j of the config)."""
    cfg = TASKS[task]
    est = _estimator(cfg["estimator"])
    k = list(est.scenarios).index(cfg["scenario"]) if len(est.scenarios) > 1 else 0
    return [i for i, s in zip(est.item_ids, est.scenario_index) if int(s) == k]


def _gold_index(cfg, line, choices):
    """The target as a choice index, as lm-eval resolves it (-100: not one of the choices, never right)."""
    gold = _target(cfg, line)
    if isinstance(gold, str):
        return choices.index(gold) if gold in choices else -100
    return int(gold) if int(gold) < len(choices) else -100


def _document(cfg, line):
    """(query, choices, gold index, specific) of a row, for the config's kind of task."""
    kind = cfg["kind"]
    if kind == "winogrande":  # lighteval's form: the prompt up to the blank, each option + the rest as a choice
        prefix = line["input_formatted"][: len(line["input_formatted"]) - len(_gold_option(line))]
        rest = winogrande_target(line)
        return prefix, [f"{line['option1']} {rest}", f"{line['option2']} {rest}"], winogrande_gold(line), {}
    query = str(_resolve(cfg["text"], line))
    if kind == "choice":
        choices = [str(c) for c in _choices(cfg, line)]
        return query, [" " + c for c in choices], _gold_index(cfg, line, choices), {}
    if kind == "mc2":  # lighteval's TruthfulQA: the mc1 choices, then the mc2 ones, every true one gold
        mc1, mc2 = line["mc1_targets"], line["mc2_targets"]
        labels = list(mc1["labels"]) + list(mc2["labels"])
        return (query, [" " + c for c in list(mc1["choices"]) + list(mc2["choices"])],
                [i for i, label in enumerate(labels) if label == 1], {"len_mc1": len(mc1["choices"])})
    if kind == "ifeval":
        return query, [""], 0, {"instructions_id_list": list(line["instruction_id_list"]),
                                "kwargs": [dict(k) for k in line["kwargs"]]}
    if kind == "math":
        return query, [f"${line['answer']}$"], 0, {}
    target = str(_target(cfg, line))
    return query, [" " + target if kind in ("loglikelihood", "gsm8k") else target], 0, {}


def _prompt(task, pool):
    cfg = TASKS[task]
    name = task + POOL_SUFFIX if pool else task

    def prompt(line, task_name=None):
        row = int(line.get("__index", -1))
        if pool:
            chosen = _selected(name)
            if chosen is not None and row not in chosen:
                return None
            item = _pool_items(task)[row]
        else:
            item = _item(task, line)
        query, choices, gold, specific = _document(cfg, line)
        specific = {**specific, "item_id": item, "row": row, "dataset_version": VERSION, "design": cfg["design"]}
        return Doc(task_name=task_name, query=query, choices=choices, gold_index=gold, specific=specific)

    prompt.__name__ = prompt.__qualname__ = f"prompt_{re.sub(r'[^0-9A-Za-z_]', '_', name)}"
    return prompt


# ----------------------------------------------------------------- lighteval scoring
def _value(cfg, doc, model_response):
    """The row's metric, by lighteval's own metric classes."""
    kind = cfg["kind"]
    if kind in ("choice", "winogrande"):
        norm = LogProbCharNorm(ignore_first_space=True) if cfg["metric"] == "acc_norm" else None
        return float(LoglikelihoodAcc(logprob_normalization=norm).compute(doc=doc, model_response=model_response))
    if kind == "mc2":
        from lighteval.metrics.harness_compatibility.truthful_qa import TruthfulqaMCMetrics

        return float(TruthfulqaMCMetrics().compute(doc=doc, model_response=model_response)["truthfulqa_mc2"])
    if kind == "loglikelihood":
        return float(AccGoldLikelihood().compute(doc=doc, model_response=model_response))
    if kind == "gsm8k":
        match = ExactMatches(strip_strings=True, normalize_gold=gsm8k_normalizer, normalize_pred=gsm8k_normalizer)
        return float(match.compute(doc=doc, model_response=model_response))
    if kind == "ifeval":  # pip install langdetect (lighteval's IFEval checks)
        from lighteval.tasks.tasks.ifeval.main import IFEvalMetrics

        return float(IFEvalMetrics().compute(doc=doc, model_response=model_response)["prompt_level_strict_acc"])
    if kind == "math":  # lighteval's MATH-500 scoring: the answer extracted as an expression or LaTeX
        from lighteval.metrics.dynamic_metrics import MultilingualExtractiveMatchMetric
        from lighteval.metrics.utils.extractive_match_utils import ExprExtractionConfig, LatexExtractionConfig
        from lighteval.utils.language import Language

        targets = [ExprExtractionConfig(), LatexExtractionConfig()]
        match = MultilingualExtractiveMatchMetric(language=Language.ENGLISH, gold_extraction_target=targets,
                                                  pred_extraction_target=targets, precision=6)
        return float(match.compute(doc=doc, model_response=model_response))
    return float(ExactMatches(strip_strings=True).compute(doc=doc, model_response=model_response))


class TinyRow(SampleLevelComputation):
    """A row's metric, tagged with its anchor id (the estimate never depends on the order of the rows)."""

    def __init__(self, task, tagged=True):
        self.task = task
        self.tagged = tagged

    def compute(self, doc, model_response, **kwargs):
        value = _value(TASKS[self.task], doc, model_response)
        if not self.tagged:
            return value
        return {"score": {"item": str(doc.specific["item_id"]), "value": value}, "anchor_mean": value}


class TinyEstimate(CorpusLevelComputation):
    """The estimated full-benchmark score and its 95% interval from the answered rows."""

    def __init__(self, task):
        self.task = task

    def compute_corpus(self, items):
        answers = {}
        for it in items:
            item, value = str(it["item"]), float(it["value"])
            if answers.get(item, value) != value:
                raise ValueError(f"{item}: two different results for the same row")
            answers[item] = value
        score, low, high = _estimate(self.task, tuple(sorted(answers.items())))
        return {"score": score, "score_ci_low": low, "score_ci_high": high}


def _category(cfg):
    return SamplingMethod.GENERATIVE if cfg["generative"] else SamplingMethod.LOGPROBS


def _metrics(task, pool):
    cfg = TASKS[task]
    if pool:  # every item: the row's value (what an adaptive session records), no estimate
        return [SampleLevelMetric(metric_name="anchor_mean", higher_is_better=True, category=_category(cfg),
                                  sample_level_fn=TinyRow(task, tagged=False), corpus_level_fn=np.mean)]
    names = ["score", "score_ci_low", "score_ci_high", "anchor_mean"]
    estimate = TinyEstimate(task)
    return [CorpusLevelMetricGrouping(
        metric_name=names, higher_is_better=dict.fromkeys(names, True), category=_category(cfg),
        sample_level_fn=TinyRow(task),
        corpus_level_fn={"score": estimate, "score_ci_low": estimate, "score_ci_high": estimate,
                         "anchor_mean": np.mean})]


def _config(task, pool=False):
    cfg = TASKS[task]
    split = cfg["pool_split"] if pool else cfg["split"]
    # the rows of this folder (one commit with the estimator); alone, the repository at the tag
    local = (ROOT / "README.md").is_file() and (ROOT / cfg["paths"][split]).is_file()
    return LightevalTaskConfig(
        name=task + POOL_SUFFIX if pool else task, prompt_function=_prompt(task, pool),
        hf_repo=str(ROOT) if local else REPO_ID, hf_subset=cfg["config"], hf_revision=None if local else REVISION,
        hf_avail_splits=[split], evaluation_splits=[split], few_shots_split=None, few_shots_select=None,
        metrics=_metrics(task, pool), generation_size=cfg.get("max_tokens"), stop_sequence=cfg.get("until"))


'''

_TAIL = '''
TASKS_TABLE = ([_config(t) for t in TASKS]
               + [_config(t, pool=True) for t in TASKS if TASKS[t].get("pool_split")])
'''


def lighteval_kind(config) -> str | None:
    """How a config's rows become lighteval documents (:data:`KINDS`), None without an lm-eval task."""
    settings = task_settings(config)
    if settings is None:
        return None
    if config.harness_config:
        return _CUSTOM[settings["output_type"]]
    return KINDS.get(config.renderer or "")


def _entry(config, info: Mapping[str, Any], settings: Mapping[str, Any], kind: str,
           rows: tuple[str, Sequence[str], Sequence[str]], design: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``TASKS`` entry of one config: where its rows are, how they are read and scored, its anchors."""
    key, keys, anchors = rows
    splits = info["splits"]
    pool = info.get("pool_split") if info.get("pool_split") in splits else None
    entry: dict[str, Any] = {
        "config": config.name, "split": info["tiny_split"], "pool_split": pool,
        "paths": {s: splits[s]["path"] for s in (info["tiny_split"], pool) if s},
        "estimator": info.get("estimator", ""), "scenario": info.get("scenario", config.scenario),
        "kind": kind, "generative": kind in _GENERATIVE, "metric": config.harness_metric,
        "design": ((design or {}).get("configs") or {}).get(config.name),
        "text": _spec_of(settings["doc_to_text"]), "key": key, "ids": dict(zip(keys, anchors)),
    }
    if "doc_to_choice" in settings:
        entry["choices"] = _spec_of(settings["doc_to_choice"])
    entry["target"] = _spec_of(settings["doc_to_target"])
    if kind in _GENERATIVE:
        gen = dict(settings.get("generation_kwargs") or {})
        entry["until"] = list(gen.get("until") or []) or None
        entry["max_tokens"] = int(gen.get("max_gen_toks", _MAX_TOKENS))
    return entry


def lighteval_files(spec: BenchmarkSpec, configs: Mapping[str, Mapping[str, Any]], repo_id: str, tag: str,
                    version: str, rows: Mapping[str, tuple[str, Sequence[str], Sequence[str]]] | None = None,
                    design: Mapping[str, Any] | None = None) -> dict[str, str]:
    """``{LIGHTEVAL_TASKS: text}`` for the configs of ``spec`` that have an lm-eval task and rows with
    content (``rows``: :func:`tinybench_builder.dataset.harness_tasks.row_keys` of each tiny split, as
    for :func:`~tinybench_builder.dataset.harness_tasks.task_files`); ``{}`` when there are none."""
    table: dict[str, Any] = {}
    v2 = False
    for c in spec.configs:
        name, kind = task_name(c), lighteval_kind(c)
        if c.name not in configs or name is None or kind is None or c.name not in (rows or {}):
            continue
        settings = task_settings(c)
        assert settings is not None  # a kind implies settings
        table[name] = _entry(c, configs[c.name], settings, kind, (rows or {})[c.name], design)
        v2 |= (c.renderer or "").startswith("lb2_")
    if not table:
        return {}
    text = (HEADER + IMPORTS + _LIGHTEVAL_IMPORTS + DOC_FUNCTIONS + (v2_choices_source() + "\n\n" if v2 else "")
            + ROW_ITEMS + RELEASE_ESTIMATE + LIGHTEVAL_SOURCE
            + "# ----------------------------------------------------------------- this release\n"
            f"REPO_ID = {json.dumps(repo_id)}\nREVISION = {json.dumps(tag)}\nVERSION = {json.dumps(str(version))}\n"
            f"POOL_SUFFIX = {json.dumps(POOL_SUFFIX)}\n"
            "#: per task: its config, splits and files, estimator and scenario, how its rows become documents and\n"
            "#: are scored, and the row -> anchor id table (sha256 of the row's `key` column, first 16 hex digits)\n"
            f"TASKS = json.loads({json.dumps(json.dumps(table, ensure_ascii=False, sort_keys=True, indent=1))})\n"
            + _TAIL)
    return {LIGHTEVAL_TASKS: text}
