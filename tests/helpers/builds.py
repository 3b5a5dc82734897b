"""Build fixtures (test_build.py, test_dataset.py, test_cards.py, test_harness_logs.py...): small
hand-made content in each registered benchmark's schema, simulated responses over it, fast fit
settings, and a cache of built folders so each benchmark is built once per session."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from tinybench_builder.registry.benchmarks import REGISTRY, ConfigSpec
from tinybench_builder.dataset.options import BuildOptions
from tinybench_builder.model.options import FitOptions
from tinybench_builder.layout import read_manifest
from tinybench_builder.read.matrix import ResponseMatrix
from tinybench_builder.read.simulate import simulate_responses

ROOT = Path(__file__).resolve().parents[2]  # the repository
SHARED = ROOT.parent / "shared" / "data"  # real data, next to the repository (never copied into it)
#: fast fit settings for tests (the procedure is the same, with fewer seeds and a fixed dimension)
FAST = FitOptions(n_dims=1, n_seeds=2, n_folds=2)
SUBJECTS = ("astronomy", "college_biology", "marketing")
N_MODELS = 40


def _choices(i: int, k: int = 4) -> list[str]:
    return [f"option {i}-{j}" for j in range(k)]


def make_row(c: ConfigSpec, i: int, split: str) -> dict:
    """One row in the upstream schema of config ``c`` (columns from the registry)."""
    r = c.renderer
    tag = f"{split} {i}"
    gen = {
        "question": f"Question {tag}: what is {i} plus {i}?",
        "answer": f"It is {2 * i}.\n#### {2 * i}" if r == "gsm8k" else i % 4,
        "choices": ({"text": _choices(i), "label": ["A", "B", "C", "D"]} if r == "arc" else _choices(i)),
        "id": f"Mercury_{split}_{i}",
        "answerKey": "ABCD"[i % 4],
        "ind": i, "activity_label": "Cooking", "ctx_a": f"A person opens a jar {tag}.", "ctx_b": "then they",
        "ctx": f"A person opens a jar {tag}. then they", "endings": _choices(i), "source_id": f"wikihow~{i}",
        "split": "val", "split_type": "indomain", "label": str(i % 4),
        "sentence": f"Alice thanked Bob {tag} because _ had helped.", "option1": "Alice", "option2": "Bob",
        "mc1_targets": {"choices": _choices(i, 3), "labels": [1, 0, 0]},
        "mc2_targets": {"choices": _choices(i, 3), "labels": [1, 1, 0]},
        "instruction": f"Write a haiku about {tag}.", "output": f"A haiku {tag}", "generator": "gpt4_1106_preview",
        "dataset": "helpful_base",
    }
    if r == "winogrande":
        gen["answer"] = "12"[i % 2]
    row = {}
    for col in c.columns:
        if col == "input_formatted":
            continue
        row[col] = gen.get(col, f"{col} {tag}")
    if r == "mmlu":
        row["subject"] = SUBJECTS[i % len(SUBJECTS)]
    return row


def make_content(c: ConfigSpec, split: str, n: int) -> pd.DataFrame:
    rows = [make_row(c, i, split) for i in range(n)]
    if c.renderer == "mmlu":  # upstream order: by subject; ids <subject>.<index within subject>
        rows.sort(key=lambda r: r["subject"])
        seen: dict[str, int] = {}
        for r in rows:
            r["item_id"] = f"{r['subject']}.{seen.get(r['subject'], 0)}"
            seen[r["subject"]] = seen.get(r["subject"], 0) + 1
    else:
        for i, r in enumerate(rows):
            r["item_id"] = str(i)
    return pd.DataFrame(rows)


def is_leaderboard_v2(name: str) -> bool:
    return all(c.source_task.startswith("leaderboard_") for c in REGISTRY[name].configs)


def write_fixture(name: str, folder: Path, n_items: int = 90, n_full: int = 30, seed: int = 0):
    """Content files and a responses table for benchmark ``name``; returns (responses, content dict).

    The Open LLM Leaderboard v2 benchmarks are built from v2 details written by the leaderboard's
    own code (helpers.leaderboard_v2): their rows are the details' documents."""
    spec = REGISTRY[name]
    folder.mkdir(parents=True, exist_ok=True)
    if is_leaderboard_v2(name):
        from helpers.leaderboard_v2 import CONTENT, write_details

        write_details(folder / "details", n_models=12, seed=seed)
        few = {"mmlu_pro": ("validation", CONTENT / "mmlu_pro_validation.jsonl"),
               "arc_challenge": ("train", CONTENT / "arc_train.jsonl")}
        content = {(f"{c.name}/{few[c.scenario][0]}" if len(spec.configs) > 1 else few[c.scenario][0]):
                   str(few[c.scenario][1]) for c in spec.configs if c.scenario in few}
        return str(folder / "details"), content
    content: dict[str, str] = {}
    ids, scen, info_rows = [], [], []
    bundle = len(spec.configs) > 1
    per = max(24, n_items // len(spec.configs)) if bundle else n_items
    for c in spec.configs:
        if c.content_from == "source":
            for i in range(per):
                cid = f"sub{i % 2}.inst{i}"
                ids.append(f"{c.scenario}.{cid}" if bundle else cid)
                scen.append(c.scenario)
                info_rows.append({"question": f"{c.scenario} input {i}", "references": [f"ref {i}", "other"],
                                  "answer": f"ref {i}"})
            continue
        for split in c.splits:
            df = make_content(c, split, per if split == c.tiny_split else n_full)
            key = f"{c.name}/{split}" if bundle else split
            path = folder / f"{c.name}_{split}.parquet"
            df.to_parquet(path)
            content[key] = str(path)
            if split == c.tiny_split:
                ids += [f"{c.scenario}.{i}" if bundle else i for i in df["item_id"]]
                scen += [c.scenario] * len(df)
                info_rows += [{} for _ in range(len(df))]
    m, _ = simulate_responses(n_models=N_MODELS, n_items=len(ids), n_dims=1, seed=seed)
    if any(c.content_from == "source" for c in spec.configs):
        info = pd.DataFrame(info_rows, index=ids)
        info["scenario"] = scen
        return ResponseMatrix(m.scores, m.models, ids, info), content
    responses = folder / "responses.parquet"
    ResponseMatrix(m.scores, m.models, ids).write(responses)
    return str(responses), content


def fast(**kwargs) -> BuildOptions:
    """Build options with the fast fit settings (``fast(anchors=10, seed=3)``)."""
    return BuildOptions(fit=FAST, **kwargs)


def anchors_for(name: str) -> int:
    return 3 if len(REGISTRY[name].configs) > 1 or is_leaderboard_v2(name) else 10


_CACHE: dict[tuple, Path] = {}


def built(tmp_root: Path, name: str, seed: int = 0, **kwargs) -> Path:
    """Build ``name`` from fixtures once per session (per seed and options: ``BuildOptions`` fields)."""
    from tinybench_builder.dataset.build import build_benchmark

    key = (name, seed, json.dumps(kwargs, sort_keys=True, default=str))
    if key not in _CACHE:
        d = tmp_root / f"{name}-{seed}-{len(_CACHE)}"
        responses, content = write_fixture(name, d / "inputs")
        _CACHE[key] = build_benchmark(name, responses, content, fast(anchors=anchors_for(name), seed=seed, **kwargs),
                                      out=d / "out")
    return _CACHE[key]


def read_split(folder: Path, config: str, split: str) -> pd.DataFrame:
    man = read_manifest(folder)
    return pd.read_parquet(folder / man["configs"][config]["splits"][split]["path"])


def _plain(v):
    """A row value as the datasets library gives it to a harness (lists, not numpy arrays)."""
    if isinstance(v, np.ndarray):
        return [_plain(x) for x in v.tolist()]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v.item() if isinstance(v, np.generic) else v


def split_rows(folder: Path, config: str, split: str) -> list[dict]:
    """The rows of a split of a built folder as ``datasets`` gives them to lm-eval and lighteval."""
    return [_plain(r) for r in read_split(folder, config, split).to_dict("records")]


def all_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def rng_perm(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).permutation(n)
