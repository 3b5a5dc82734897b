"""Open LLM Leaderboard v2 details for tests, from the files the leaderboard's own code wrote.

``tests/data/leaderboard_v2/details/`` holds one run of every leaderboard task by the leaderboard's
lm-eval fork (dummy model, hand-made documents; ``scripts/leaderboard_v2_fixtures.py``): the
records are in the exact v2 details format. :func:`write_details` lays them out as a details
folder of several models (``<org>__<model>/results_<ts>.json`` and ``samples_<task>_<ts>.jsonl``),
each model's per-example scores drawn from a simple IRT model (the records' other fields are the
fork's, unchanged).
"""

from __future__ import annotations

import gzip
import json
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "leaderboard_v2"
DETAILS = FIXTURES / "details"
CONTENT = FIXTURES / "content"
_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<ts>\d{4}-\d{2}-\d{2}T[\d.-]+)\.jsonl\.gz$")
_RESULTS = re.compile(r"^results_(?P<ts>\d{4}-\d{2}-\d{2}T[\d.-]+)\.json\.gz$")
#: per-example score keys of each task family (docs/SOURCE_FORMATS.md section 2.2)
METRIC_KEYS = {"leaderboard_ifeval": ("prompt_level_strict_acc", "inst_level_strict_acc", "prompt_level_loose_acc",
                                      "inst_level_loose_acc"),
               "leaderboard_math": ("exact_match",), "leaderboard_mmlu_pro": ("acc",),
               "leaderboard_arc_challenge": ("acc", "acc_norm"), "leaderboard_bbh": ("acc_norm",),
               "leaderboard_gpqa": ("acc_norm",), "leaderboard_musr": ("acc_norm",)}


def metric_keys(task: str) -> tuple[str, ...]:
    return next(v for k, v in METRIC_KEYS.items() if task == k or task.startswith(k + "_"))


@lru_cache(maxsize=1)
def samples() -> dict[str, tuple[str, list[dict]]]:
    """task -> (run timestamp, the records of its samples file, in file order)."""
    out = {}
    for f in sorted(DETAILS.iterdir()):
        m = _SAMPLES.match(f.name)
        if m:
            with gzip.open(f, "rt", encoding="utf-8") as fh:
                out[m["task"]] = (m["ts"], [json.loads(line) for line in fh])
    return out


@lru_cache(maxsize=1)
def results() -> dict[str, dict]:
    """run timestamp -> its results json."""
    out = {}
    for f in sorted(DETAILS.iterdir()):
        m = _RESULTS.match(f.name)
        if m:
            with gzip.open(f, "rt", encoding="utf-8") as fh:
                out[m["ts"]] = json.load(fh)
    return out


def content_rows(name: str) -> list[dict]:
    """``arc_train`` or ``mmlu_pro_validation``: the documents the prompts' examples come from."""
    return [json.loads(line) for line in (CONTENT / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]


def write_details(root: Path, n_models: int = 12, seed: int = 0, tasks=None) -> list[str]:
    """A v2 details folder of ``n_models`` models under ``root``; returns the model names.

    Each model's scores are Bernoulli draws of ``sigmoid(theta_m - b_j)`` (one ability per model,
    one difficulty per document), so the matrix has the structure IRT fits.
    """
    rng = np.random.default_rng(seed)
    chosen = {t: v for t, v in samples().items() if tasks is None or any(t == x or t.startswith(x + "_") for x in tasks)}
    difficulty = {t: rng.normal(0.0, 1.0, len(recs)) for t, (_, recs) in chosen.items()}
    theta = np.linspace(-1.5, 1.5, n_models)
    models = [f"org{i % 3}/model-{i:02d}" for i in range(n_models)]
    for model, ability in zip(models, theta):
        folder = root / model.replace("/", "__")  # a details repo's own folder (SOURCE_FORMATS.md 2.1)
        folder.mkdir(parents=True)
        used_ts = set()
        for task, (ts, recs) in chosen.items():
            used_ts.add(ts)
            p = 1.0 / (1.0 + np.exp(-(ability - difficulty[task])))
            hit = rng.random(len(recs)) < p
            with open(folder / f"samples_{task}_{ts}.jsonl", "w", encoding="utf-8") as fh:
                for rec, ok in zip(recs, hit):
                    fh.write(json.dumps(_scored(task, rec, bool(ok)), ensure_ascii=False) + "\n")
        for ts in used_ts:
            res = json.loads(json.dumps(results()[ts]))
            res["model_name"], res["model_name_sanitized"] = model, model.replace("/", "__")
            res["config"]["model_args"] = f"pretrained={model},dtype=bfloat16"
            (folder / f"results_{ts}.json").write_text(json.dumps(res, indent=2), encoding="utf-8")
    return models


def _scored(task: str, rec: dict, ok: bool) -> dict:
    out = dict(rec)
    for key in metric_keys(task):
        old = rec[key]
        if isinstance(old, list):  # IFEval's instruction-level results: one bool per instruction
            out[key] = [ok] * len(old)
        elif isinstance(old, bool):
            out[key] = ok
        elif isinstance(old, int):
            out[key] = int(ok)
        else:
            out[key] = float(ok)
    return out
