#!/usr/bin/env python
"""Write tests/data/leaderboard_v2/: Open LLM Leaderboard v2 details made by the leaderboard's own code.

    git -C LMEVAL_CHECKOUT archive adding_all_changess lm_eval | tar -x -C /tmp/fork   # the leaderboard's fork
    python scripts/leaderboard_v2_fixtures.py --fork /tmp/fork --python /work/venvs/lmeval/bin/python

The leaderboard v2 ran the Hugging Face fork of lm-evaluation-harness (github.com/huggingface/
lm-evaluation-harness, branch ``adding_all_changess``, lm-eval 0.4.3). This script runs that code,
with its ``dummy`` model, on every leaderboard task (``leaderboard_ifeval``, the 24
``leaderboard_bbh_*``, the 7 ``leaderboard_math_*_hard``, the 3 ``leaderboard_gpqa_*``, the 3
``leaderboard_musr_*``, ``leaderboard_mmlu_pro``, and ``leaderboard_arc_challenge``, 25-shot, from the
fork's branch ``add_leaderboard_tasks``), each task's YAML included as is with only its dataset
replaced by a few hand-made documents (local JSON files; the texts are invented). The fork's
``EvaluationTracker`` writes the details files (``<model>/results_<ts>.json`` and
``samples_<task>_<ts>.jsonl``, docs/SOURCE_FORMATS.md section 2): their prompts (``arg_0``) are the
fork's own rendering, byte for byte, against which tests/registry/test_leaderboard_v2.py checks
tinybench_builder.registry.prompts_v2. The per-example scores are the dummy model's (random); the tests
replace them per simulated model.

The fork is run from a copy of ``--fork`` with the interpreter ``--python`` (a venv with
``datasets``, ``jinja2``, ``evaluate``, ``sympy``, ``langdetect``...: lm-eval's dependencies, no
torch), changed in two ways only: ``lm_eval/models/__init__.py`` imports only the dummy model (the
others need torch), and four imports of torch/transformers, for code the dummy model never runs
(``torch.manual_seed`` is skipped with ``--seed 0,1234,None,1234``), may fail. Written: the samples
and results files, gzip-compressed, and ``content/`` (ARC's ``train`` and MMLU-Pro's ``validation``
documents, which the prompts draw their examples from).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "leaderboard_v2"

BBH = ["boolean_expressions", "causal_judgement", "date_understanding", "disambiguation_qa", "formal_fallacies",
       "geometric_shapes", "hyperbaton", "logical_deduction_five_objects", "logical_deduction_seven_objects",
       "logical_deduction_three_objects", "movie_recommendation", "navigate", "object_counting", "penguins_in_a_table",
       "reasoning_about_colored_objects", "ruin_names", "salient_translation_error_detection", "snarks",
       "sports_understanding", "temporal_sequences", "tracking_shuffled_objects_five_objects",
       "tracking_shuffled_objects_seven_objects", "tracking_shuffled_objects_three_objects", "web_of_lies"]
MATH = {"algebra": "Algebra", "counting_and_prob": "Counting & Probability", "geometry": "Geometry",
        "intermediate_algebra": "Intermediate Algebra", "num_theory": "Number Theory", "prealgebra": "Prealgebra",
        "precalculus": "Precalculus"}
MATH_FILES = {"algebra": "math_algebra", "counting_and_prob": "math_counting_and_prob", "geometry": "math_geometry",
              "intermediate_algebra": "math_intermediate_algebra", "num_theory": "math_num_theory",
              "prealgebra": "math_prealgebra", "precalculus": "math_precalculus"}
GPQA = ["diamond", "extended", "main"]
MUSR = ["murder_mysteries", "object_placements", "team_allocation"]

#: leaderboard_arc_challenge as the fork's branch add_leaderboard_tasks defines it (commit 493d432b,
#: lm_eval/tasks/leaderboard/arc_challenge/arc_easy.yaml + arc_challenge.yaml), run 25-shot
ARC_YAML = """task: leaderboard_arc_challenge
dataset_path: json
dataset_name: null
dataset_kwargs:
  data_files:
    train: {train}
    test: {test}
output_type: multiple_choice
training_split: train
test_split: test
doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
doc_to_target: "{{{{choices.label.index(answerKey)}}}}"
doc_to_choice: "{{{{choices.text}}}}"
should_decontaminate: true
doc_to_decontamination_query: "Question: {{{{question}}}}\\nAnswer:"
fewshot_config:
  sampler: first_n
num_fewshot: 5
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
  - metric: acc_norm
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""


#: (file, import line, what stands in when the package is missing)
_OPTIONAL_IMPORTS = [
    ("evaluator.py", "import torch", "torch = None"),
    ("api/model.py", "import transformers", "transformers = None"),
    ("loggers/utils.py", "from torch.utils.collect_env import get_pretty_env_info",
     "get_pretty_env_info = lambda: 'N/A (torch not installed)'"),
    ("loggers/utils.py", "from transformers import __version__ as trans_version", "trans_version = 'N/A'"),
]


# ------------------------------------------------------------------------------ documents
def _bbh_docs(choices: dict[str, list[str]]) -> dict[str, list[dict]]:
    out = {}
    for sub in BBH:
        c = choices[sub]
        out[sub] = [{"input": f"A hand-made {sub.replace('_', ' ')} question, number {i}.\nOptions:\n"
                              + "\n".join(c[:4]), "target": c[(i + 1) % len(c)]} for i in range(2)]
    return out


def _gpqa_docs() -> dict[str, list[dict]]:
    out = {}
    for s, sub in enumerate(GPQA):
        out[sub] = [{"Record ID": f"rec{s}{i}", "Question": f" Hand-made {sub} question {i} about a [title] reaction?",
                     "Correct Answer": f"right {i}", "Incorrect Answer 1": f"wrong one {i}",
                     "Incorrect Answer 2": f"wrong  two {i} [note]", "Incorrect Answer 3": f"wrong three {i}",
                     "Subdomain": "Organic Chemistry"} for i in range(3)]
    return out


def _math_docs() -> dict[str, list[dict]]:
    return {sub: [{"problem": f"Hand-made {name} problem {i}: what is ${i} + {i + 1}$?", "level": "Level 5",
                   "type": name, "solution": f"We add: ${i} + {i + 1} = \\boxed{{{2 * i + 1}}}$."}
                  for i in range(2)] for sub, name in MATH.items()}


def _musr_docs() -> dict[str, list[dict]]:
    names = {"murder_mysteries": ["Alice", "Bob"], "object_placements": ["box", "shelf", "drawer", "bag", "desk"],
             "team_allocation": ["A: x, B: y", "A: y, B: x", "A: z, B: x"]}
    return {sub: [{"narrative": f"A hand-made {sub.replace('_', ' ')} story, number {i}.\n\nIt goes on.",
                   "question": f"Who or where, in story {i}?", "choices": repr(names[sub]),
                   "answer_index": i % len(names[sub]), "answer_choice": names[sub][i % len(names[sub])]}
                  for i in range(3)] for sub in MUSR}


def _mmlu_pro_docs(n: int, offset: int, split: str) -> list[dict]:
    letters = "ABCDEFGHIJ"
    return [{"question_id": offset + i, "question": f"Hand-made MMLU-Pro {split} question {i}?",
             "options": [f"option {k} of {i}" for k in range(10 if i % 3 else 4)],
             "answer": letters[i % 4], "answer_index": i % 4, "cot_content": "", "category": ["law", "math"][i % 2],
             "src": f"ori_mmlu-{['law', 'math'][i % 2]}"} for i in range(n)]


def _ifeval_docs() -> list[dict]:
    return [{"key": 1000 + i, "prompt": f"Write a hand-made answer number {i}, at least five words, without commas.",
             "instruction_id_list": ["length_constraints:number_words", "punctuation:no_comma"],
             "kwargs": [{"relation": "at least", "num_words": 5}, {"relation": None, "num_words": None}]}
            for i in range(8)]


def _arc_docs(n: int, split: str) -> list[dict]:
    return [{"id": f"{split}_{i}", "question": f"Hand-made ARC {split} question {i}: which one?",
             "choices": {"text": [f"answer {k} of {i}" for k in range(4 if i % 5 else 3)],
                         "label": list("ABCD" if i % 5 else "ABC")},
             "answerKey": "ABC"[i % 3]} for i in range(n)]


def _write_json(path: Path, rows: list[dict]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _task(task: str, yaml_file: Path, files: dict[str, str]) -> None:
    """Point the task's own YAML (in the copy of the fork) at local files: its dataset keys are
    appended, and the last occurrence of a YAML key wins (its ``include`` is untouched)."""
    text = yaml_file.read_text(encoding="utf-8")
    if f"task: {task}" not in text:
        raise SystemExit(f"{yaml_file}: not the task {task}")
    data = "\n".join(f"    {k}: {v}" for k, v in files.items())
    yaml_file.write_text(text.rstrip("\n") + "\n# fixture: the dataset replaced by hand-made local documents\n"
                         f"dataset_path: json\ndataset_name: null\ndataset_kwargs:\n  data_files:\n{data}\n",
                         encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fork", required=True, help="folder holding the fork's lm_eval package (git archive of the branch)")
    p.add_argument("--python", default=sys.executable, help="interpreter with lm-eval's dependencies")
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    fork = Path(args.fork).resolve()
    lb = fork / "lm_eval" / "tasks" / "leaderboard"
    sys.path.insert(0, str(ROOT))
    from tinybench_builder.registry.prompts_v2 import fewshot_material

    choices = {s: v["choices"] for s, v in fewshot_material()["bbh"].items()}
    out = Path(args.out)
    with tempfile.TemporaryDirectory(prefix="lb2-fixtures-") as tmp_:
        tmp = Path(tmp_)
        # a copy of the fork whose models/__init__ imports the dummy model only, and whose four
        # imports of torch/transformers (used by code the dummy model never runs) may fail
        code = tmp / "code"
        shutil.copytree(fork / "lm_eval", code / "lm_eval")
        (code / "lm_eval" / "models" / "__init__.py").write_text(
            "from types import SimpleNamespace\n\nfrom . import dummy  # noqa: F401\n\n"
            "# evaluator.simple_evaluate asks isinstance(lm, lm_eval.models.huggingface.HFLM)\n"
            "huggingface = SimpleNamespace(HFLM=type('HFLM', (), {}))\n")
        for rel, line, stand_in in _OPTIONAL_IMPORTS:
            f = code / "lm_eval" / rel
            text = f.read_text(encoding="utf-8")
            if text.count(line + "\n") != 1:
                raise SystemExit(f"{f}: expected the line {line!r} once")
            f.write_text(text.replace(line + "\n", f"try:\n    {line}\nexcept ImportError:\n    {stand_in}\n"),
                         encoding="utf-8")

        data = tmp / "data"
        lb = code / "lm_eval" / "tasks" / "leaderboard"  # the copy's tasks are modified, not the fork's
        content: dict[str, list[dict]] = {}
        for sub, docs in _bbh_docs(choices).items():
            _task(f"leaderboard_bbh_{sub}", lb / "bbh_mc" / f"{sub}.yaml", {"test": _write_json(data / f"bbh_{sub}.jsonl", docs)})
        for sub, docs in _gpqa_docs().items():
            _task(f"leaderboard_gpqa_{sub}", lb / "gpqa" / f"gpqa_{sub}_zeroshot.yaml",
                  {"train": _write_json(data / f"gpqa_{sub}.jsonl", docs)})
        for sub, docs in _math_docs().items():
            f = _write_json(data / f"math_{sub}.jsonl", docs)
            _task(f"leaderboard_math_{sub}_hard", lb / "math" / f"{MATH_FILES[sub]}.yaml", {"train": f, "test": f})
        for sub, docs in _musr_docs().items():
            _task(f"leaderboard_musr_{sub}", lb / "musr" / f"musr_{sub}.yaml", {sub: _write_json(data / f"musr_{sub}.jsonl", docs)})
        content["mmlu_pro_validation"] = _mmlu_pro_docs(6, 9000, "validation")
        _task("leaderboard_mmlu_pro", lb / "mmlu_pro" / "mmlu_pro.yaml",
              {"test": _write_json(data / "mmlu_pro_test.jsonl", _mmlu_pro_docs(8, 100, "test")),
               "validation": _write_json(data / "mmlu_pro_validation.jsonl", content["mmlu_pro_validation"])})
        _task("leaderboard_ifeval", lb / "ifeval" / "ifeval.yaml", {"train": _write_json(data / "ifeval.jsonl", _ifeval_docs())})
        content["arc_train"] = _arc_docs(27, "train")
        (lb / "arc_challenge").mkdir()
        (lb / "arc_challenge" / "arc_challenge.yaml").write_text(ARC_YAML.format(
            train=_write_json(data / "arc_train.jsonl", content["arc_train"]),
            test=_write_json(data / "arc_test.jsonl", _arc_docs(8, "test"))))

        env = {**os.environ, "PYTHONPATH": str(code), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
               "TOKENIZERS_PARALLELISM": "false"}
        runs = [(["leaderboard_bbh", "leaderboard_gpqa", "leaderboard_math_hard", "leaderboard_musr",
                  "leaderboard_mmlu_pro", "leaderboard_ifeval"], []),
                (["leaderboard_arc_challenge"], ["--num_fewshot", "25"])]
        results = tmp / "results"
        for names, extra in runs:
            cmd = [args.python, "-m", "lm_eval", "--model", "dummy", "--tasks", ",".join(names),
                   "--output_path", str(results), "--log_samples",
                   "--seed", "0,1234,None,1234", *extra]
            run = subprocess.run(cmd, env=env, cwd=tmp, capture_output=True, text=True)
            if run.returncode:
                print(run.stdout[-3000:], run.stderr[-6000:], file=sys.stderr)
                return 1
        if out.exists():
            shutil.rmtree(out)
        (out / "details").mkdir(parents=True)
        n = 0
        for f in sorted(results.rglob("*.json*")):
            with gzip.open(out / "details" / (f.name + ".gz"), "wb", compresslevel=9) as fh:
                data_bytes = f.read_bytes()
                fh.write(data_bytes)
            n += 1
        for name, rows in content.items():
            _write_json(out / "content" / f"{name}.jsonl", rows)
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"{out}: {n} details files, {size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
