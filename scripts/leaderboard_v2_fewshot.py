#!/usr/bin/env python
"""Write tinybench_builder/registry/leaderboard_v2_fewshot.json: the fixed prompt material of the Open LLM
Leaderboard v2 tasks, from the lm-evaluation-harness code the leaderboard ran.

    git -C LMEVAL_CHECKOUT archive adding_all_changess lm_eval/tasks/leaderboard | tar -x -C /tmp/lb
    python scripts/leaderboard_v2_fewshot.py /tmp/lb/lm_eval/tasks/leaderboard

The leaderboard ran the Hugging Face fork of lm-evaluation-harness (github.com/huggingface/
lm-evaluation-harness, branch ``adding_all_changess``, lm-eval 0.4.3; MIT licence). Two of its
tasks carry their in-context examples in the task files instead of drawing them from a split:

* BBH (``bbh_mc/<subtask>.yaml``): a ``description`` and three ``fewshot_config.samples``
  (``input``, ``target``; from BIG-Bench Hard, Suzgun et al. 2022, MIT) per subtask, and the
  subtask's ``doc_to_choice``. The description is stored *as the harness renders it*: lm-eval
  0.4.3 renders it with Jinja's default ``keep_trailing_newline=False``, which drops one trailing
  newline (here: the only one, so the description runs straight into the first ``Q:``);
* MATH-hard (``math/utils.py::list_fewshot_samples``): the four Minerva examples
  (``problem``, ``solution``), read from the source without importing it (it needs sympy).

Nothing else is needed to render the leaderboard's prompts from a row: IFEval, GPQA and MuSR are
zero-shot; MMLU-Pro and ARC draw their first rows of a split (the build's content).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tinybench_builder" / "registry" / "leaderboard_v2_fewshot.json"
SOURCE = ("huggingface/lm-evaluation-harness, branch adding_all_changess (lm-eval 0.4.3, the code the "
          "Open LLM Leaderboard v2 ran), lm_eval/tasks/leaderboard; MIT licence")


def _bbh(folder: Path) -> dict:
    import jinja2
    import yaml

    env = jinja2.Environment(undefined=jinja2.StrictUndefined)  # lm-eval 0.4.3's utils.env (no keep_trailing_newline)
    group = yaml.safe_load((folder / "bbh_mc" / "_leaderboard_bbh.yaml").read_text(encoding="utf-8"))
    template = yaml.safe_load((folder / "bbh_mc" / "_fewshot_template_yaml").read_text(encoding="utf-8"))
    if template.get("doc_to_text") != "Q: {{input}}\nA:" or template.get("doc_to_target") != "{{target}}":
        raise SystemExit(f"unexpected BBH template: {template}")
    out = {}
    for task in group["task"]:
        sub = task.removeprefix("leaderboard_bbh_")
        cfg = yaml.safe_load((folder / "bbh_mc" / f"{sub}.yaml").read_text(encoding="utf-8"))
        if cfg.get("task") != task or cfg.get("dataset_name") != sub:
            raise SystemExit(f"{sub}.yaml: unexpected task/dataset_name {cfg.get('task')!r}, {cfg.get('dataset_name')!r}")
        samples = cfg["fewshot_config"]["samples"]
        out[sub] = {
            "description": env.from_string(cfg["description"]).render(),
            "choices": [str(c) for c in cfg["doc_to_choice"]],
            "fewshot": [{"input": str(s["input"]), "target": str(s["target"])} for s in samples],
        }
    return out


def _math(folder: Path) -> list[dict]:
    tree = ast.parse((folder / "math" / "utils.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "list_fewshot_samples":
            ret = next(n for n in ast.walk(node) if isinstance(n, ast.Return))
            samples = ast.literal_eval(ret.value)
            return [{"problem": s["problem"], "solution": s["solution"]} for s in samples]
    raise SystemExit("math/utils.py has no list_fewshot_samples")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("leaderboard", help="the lm_eval/tasks/leaderboard folder of the leaderboard's fork")
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    folder = Path(args.leaderboard)
    data = {"source": SOURCE, "bbh": _bbh(folder), "math_hard": _math(folder)}
    text = json.dumps(data, indent=1, ensure_ascii=False, sort_keys=False) + "\n"
    Path(args.out).write_text(text, encoding="utf-8")
    print(f"{args.out}: {len(data['bbh'])} BBH subtasks, {len(data['math_hard'])} MATH examples, {len(text):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
