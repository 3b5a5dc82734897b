"""AlpacaEval results: ``<model>/<annotator>/annotations.json`` (SOURCE_FORMATS.md section 4).

Each annotations file is a JSON list of pairwise judgements against the baseline. The score of
an example is ``preference - 1`` in [0, 1] (the probability that the model's output beats the
baseline), with ``preference == 0`` (a draw in some annotators) read as 1.5, ``null`` as NaN
and numeric strings as numbers.

Item ids: the instruction's position in the 805-instruction eval set when a content file with an
``instruction`` column is given (its ``item_id`` column if present, else its row position; e.g.
``content/alpaca_eval.parquet``), else the instruction text itself. ``task`` picks the annotator
folder (default ``weighted_alpaca_eval_gpt4_turbo``, the AlpacaEval 2.0 judge).
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

from tinybench_builder.read.sources import SourceError
from tinybench_builder.inputs import read_json, walk_files
from tinybench_builder.read.sources._common import (Block, ModelPart, Options, Unit, int_or_str, map_units, read_content_table, to_float)
from tinybench_builder.read.sources.reduce import assemble

DEFAULT_ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"
ANNOTATIONS = "annotations.json"
SCENARIO = "alpaca_eval"


def content_index(content: str | Path | pd.DataFrame) -> dict[str, list]:
    """instruction text -> item keys (in order of occurrence) from a content table."""
    df = content if isinstance(content, pd.DataFrame) else read_content_table(content)
    if "instruction" not in df.columns:
        raise SourceError(f"{content}: the content file has no 'instruction' column")
    keys = df["item_id"].astype(str).tolist() if "item_id" in df.columns else list(range(len(df)))
    keys = list(int_or_str(keys))
    out: dict[str, list] = defaultdict(list)
    for text, key in zip(df["instruction"].astype(str), keys):
        out[text].append(key)
    return dict(out)


def scan(path: str | Path, options: Options | None = None) -> list[Unit]:
    options = options or Options()
    path = Path(path)
    if not path.exists():
        raise SourceError(f"{path}: no such file or folder")
    if path.is_file():
        files = [path]
    else:
        files = [f for f in walk_files(path, max_depth=4) if f.name == ANNOTATIONS]
    if not files:
        raise SourceError(f"{path}: no AlpacaEval {ANNOTATIONS} files found")
    notes: list[str] = []
    if not path.is_file() and not (path / ANNOTATIONS).exists():
        annotators = sorted({f.parent.name for f in files})
        wanted = options.task or DEFAULT_ANNOTATOR
        if wanted not in annotators:
            if options.task is None and len(annotators) == 1:
                wanted = annotators[0]
                notes.append(f"AlpacaEval: no {DEFAULT_ANNOTATOR} annotations; using {wanted}")
            else:
                raise SourceError(
                    f"{path}: no annotations by {wanted!r}; annotators found: {', '.join(annotators)} (choose with --task)"
                )
        files = [f for f in files if f.parent.name == wanted]
    index_of = content_index(options.content) if options.content else None
    units = []
    for f in files:
        # <model>/<annotator>/annotations.json; other file names: the model is generator_2
        model = f.parent.parent.name if f.name == ANNOTATIONS else ""
        units.append(Unit("alpaca_eval", str(f), model, {"file": str(f), "index_of": index_of, "notes": notes}, options))
    return units


def read(path: str | Path, task: str | None = None, content: str | Path | None = None, workers: int | None = None):
    """Read AlpacaEval annotations (a results folder, a model folder or one file)."""
    units = scan(path, Options(task=task, content=str(content) if content is not None else None))
    units[0].want_content = True
    return assemble(map_units(units, workers=workers), content=content)


def read_unit(unit: Unit) -> ModelPart:
    path = Path(unit.payload["file"])
    index_of = unit.payload.get("index_of")
    data = read_json(path)
    if not isinstance(data, list):
        raise SourceError(f"{path}: expected a JSON list of annotations, got {type(data).__name__}")
    model = unit.model
    if not model:
        gen = next((r.get("generator_2") for r in data if isinstance(r, dict) and r.get("generator_2")), None)
        model = str(gen) if gen else path.stem
    stripped = {k.strip(): v for k, v in index_of.items()} if index_of else None
    seen: dict[str, int] = defaultdict(int)
    keys: list = []
    scores: list[float] = []
    rows: list[dict] = []
    out_of_range = 0
    for i, rec in enumerate(data):
        if not isinstance(rec, dict) or "instruction" not in rec:
            raise SourceError(f"{path}: record {i}: not an annotation (no 'instruction')")
        text = str(rec["instruction"])
        try:
            p = to_float(rec.get("preference"))
        except (TypeError, ValueError):
            raise SourceError(f"{path}: record {i}: preference {rec.get('preference')!r} is not a number") from None
        if p == 0.0:
            p = 1.5
        if not math.isnan(p):
            if 1.0 - 1e-9 <= p <= 2.0 + 1e-9:
                p = min(max(p, 1.0), 2.0)
            else:
                out_of_range += 1
                p = math.nan
        k = seen[text]
        seen[text] += 1
        if index_of is not None:
            cands = index_of.get(text) or (stripped.get(text.strip()) if stripped else None)
            if not cands:
                raise SourceError(
                    f"{path}: record {i}: instruction not in the content file ({text[:60]!r}...); "
                    "is it the same eval set?"
                )
            if k >= len(cands):
                raise SourceError(f"{path}: record {i}: instruction appears {k + 1} times, the content file has it {len(cands)}x")
            keys.append(cands[k])
        else:
            keys.append(text if k == 0 else f"{text} #{k + 1}")
        scores.append(p - 1.0)
        if unit.want_content:
            rows.append({"instruction": text, "dataset": rec.get("dataset")})
    part = ModelPart(model, str(path), notes=list(unit.payload.get("notes") or []))
    if out_of_range:
        part.notes.append(f"{model}: {out_of_range} preference(s) outside [1, 2] read as missing ({path})")
    if not keys:
        raise SourceError(f"{path}: no annotations (empty list)")
    index = int_or_str(keys) if index_of is not None else np.array(keys, dtype=object)
    expected = None
    if index_of is not None and index.dtype != object:
        expected = int(max(max(v) for v in index_of.values())) + 1
    frame = pd.DataFrame(rows) if rows else None
    part.blocks.append(Block(SCENARIO, "", index, np.array(scores, dtype=np.float64), frame, rank=0,
                             expected=expected, what="preference - 1"))
    return part
