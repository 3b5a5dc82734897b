"""The responses of a build: the score matrix, its input records, and which config each item belongs to.

:func:`read_responses` reads a :class:`ResponseMatrix`, a score table or evaluation outputs
(:func:`tinybench_builder.read.ingest.ingest`), or for a bundle a mapping config -> such sources;
:func:`assign_items` splits its items over the benchmark's configs and gives each its id in the
content; :func:`present_configs` is the bundle restricted to the configs that have responses.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from tinybench_builder.progress import get_logger
from tinybench_builder.registry import BenchmarkSpec, ConfigSpec
from tinybench_builder.errors import BuildError
from tinybench_builder.layout import input_record, matrix_record
from tinybench_builder.read import CompactScores, ResponseMatrix, row_chunks

log = get_logger(__name__)

__all__ = ["read_responses", "ConfigItems", "assign_items", "present_configs"]


def read_responses(spec: BenchmarkSpec, responses: Any,
                   content_file: str | os.PathLike | None = None) -> tuple[ResponseMatrix, list[dict]]:
    """The response matrix and its input records for the manifest.

    ``responses`` is a :class:`ResponseMatrix`, a score table (parquet/CSV), or one or more
    evaluation outputs read with :func:`tinybench_builder.read.ingest.ingest` (``task`` = each config's
    ``source_task``; a bundle is read config by config and merged, item ids prefixed with
    the config's scenario). ``content_file`` (a single config's local tiny-split content) is
    passed to ``ingest``: AlpacaEval annotations name their items by instruction, which the
    content maps to its ``item_id``.
    """
    if isinstance(responses, ResponseMatrix):
        return responses, [matrix_record(responses)]
    if isinstance(responses, Mapping):
        return _read_by_config(spec, responses)
    paths = [Path(responses)] if isinstance(responses, (str, os.PathLike)) else [Path(p) for p in responses]
    if not paths:
        raise BuildError("no responses given")
    for p in paths:
        if not p.exists():
            raise FileNotFoundError(f"responses: no such file or folder: {p}")
    records = [input_record(p) for p in paths]
    from tinybench_builder.read import is_table

    if len(paths) == 1 and paths[0].is_file() and is_table(paths[0]):
        return ResponseMatrix.read(paths[0]), records
    from tinybench_builder.read import ingest

    if len(spec.configs) == 1:
        return ingest(paths, task=spec.configs[0].source_task or None, content=content_file), records
    parts = []
    for c in spec.configs:
        m = ingest(paths, task=c.source_task or None)
        parts.append(_scenario_part(c, m))
    return _merge(parts), records


def _scenario_part(c: ConfigSpec, m: ResponseMatrix) -> ResponseMatrix:
    """``m`` with its items named ``<scenario>.<item>``, keeping the item text the reader gave."""
    info = pd.DataFrame({"scenario": c.scenario, "subscenario": list(m.subscenarios())},
                        index=[f"{c.scenario}.{i}" for i in m.items])
    if m.item_info is not None:  # the item text a reader gave (HELM instances, lm-eval documents...)
        extra = m.item_info.drop(columns=[k for k in ("scenario", "subscenario") if k in m.item_info])
        info = pd.concat([info, extra.set_axis(info.index)], axis=1)
    return ResponseMatrix(m.storage, m.models, list(info.index), info)


def _paths(value: Any, where: str) -> list[Path]:
    paths = [Path(value)] if isinstance(value, (str, os.PathLike)) else [Path(p) for p in value]
    if not paths:
        raise BuildError(f"{where}: no responses given")
    for p in paths:
        if not p.exists():
            raise FileNotFoundError(f"{where}: no such file or folder: {p}")
    return paths


def _read_by_config(spec: BenchmarkSpec, responses: Mapping[str, Any]) -> tuple[ResponseMatrix, list[dict]]:
    """A bundle's responses given per config (``{"mmlu": "helm_mmlu.parquet", ...}``): each source
    is read alone (a score table, or evaluation outputs with the config's ``source_task``), its
    items named ``<scenario>.<item>``; configs not in the mapping have no responses."""
    from tinybench_builder.read import is_table

    names = [c.name for c in spec.configs]
    if len(names) < 2:
        raise BuildError(f"{spec.name} has one config: give its responses as a path, not per config")
    bad = [k for k in responses if k not in names]
    if bad:
        raise BuildError(f"responses for unknown config(s) {', '.join(map(repr, bad))}; {spec.name} has: "
                         f"{', '.join(names)}")
    parts, records = [], []
    for c in spec.configs:
        if c.name not in responses:
            continue
        paths = _paths(responses[c.name], f"responses of config {c.name!r}")
        records += [{"config": c.name, **input_record(p)} for p in paths]
        if len(paths) == 1 and paths[0].is_file() and is_table(paths[0]):
            m = ResponseMatrix.read(paths[0])
        else:
            from tinybench_builder.read import ingest

            m = ingest(paths, task=c.source_task or None)
        parts.append(_scenario_part(c, m))
    return _merge(parts), records


def _merge(parts: Sequence[ResponseMatrix]) -> ResponseMatrix:
    """The configs' matrices side by side (models in order of first appearance; a model a
    config lacks is not evaluated there), in compact storage: 0/1 scores as bytes."""
    models = list(dict.fromkeys(m for p in parts for m in p.models))
    row = {m: i for i, m in enumerate(models)}
    items = [i for p in parts for i in p.items]
    binary = all(p.compact.binary for p in parts)
    values = np.zeros((len(models), len(items)), dtype=np.uint8 if binary else np.float64)
    mask = np.zeros(values.shape, dtype=bool)
    col = 0
    for p in parts:
        rows = np.array([row[m] for m in p.models], dtype=np.int64)
        cols = slice(col, col + len(p.items))
        for sl in row_chunks(len(rows), len(p.items)):
            v, m = p.compact.block(sl, dtype=values.dtype)
            values[rows[sl], cols] = v
            mask[rows[sl], cols] = True if m is None else m
        col += len(p.items)
    info = pd.concat([p.item_info for p in parts])
    return ResponseMatrix(CompactScores(values, None if mask.all() else mask), models, items, info)


@dataclass
class ConfigItems:
    """The response columns of one config and their content item ids."""

    config: ConfigSpec
    columns: list[int] = field(default_factory=list)
    content_ids: list[str] = field(default_factory=list)


def assign_items(spec: BenchmarkSpec, matrix: ResponseMatrix) -> dict[str, ConfigItems]:
    """Which config each response item belongs to, and its id in the content.

    One config: every item, its id as is. Several: by ``item_info['scenario']`` (matching a
    config's scenario, source task or name) or by an item id prefix ``<scenario>.``; the
    prefix is removed to give the content id. Items of no config are dropped (noted on stderr).
    A bundle (``spec.joint``) may leave configs without items (:func:`present_configs`); a
    benchmark of independent configs may not.
    """
    out = {c.name: ConfigItems(c) for c in spec.configs}
    if len(spec.configs) == 1:
        c = spec.configs[0]
        out[c.name].columns = list(range(len(matrix.items)))
        out[c.name].content_ids = list(matrix.items)
        return out
    scen = None
    if matrix.item_info is not None and "scenario" in matrix.item_info:
        scen = matrix.item_info["scenario"].astype(str).to_numpy()
    names: dict[str, ConfigSpec] = {}
    for c in spec.configs:
        for key in (c.scenario, c.source_task, c.name):
            if key:
                names.setdefault(key, c)
    dropped: list[str] = []
    for j, item in enumerate(matrix.items):
        c = names.get(str(scen[j])) if scen is not None else None  # type: ignore[assignment]  # None: no config
        cid = item
        if c is not None:
            for key in (c.scenario, c.source_task, c.name):
                if key and item.startswith(key + "."):
                    cid = item[len(key) + 1:]
                    break
        else:
            for key in sorted(names, key=len, reverse=True):
                if item.startswith(key + "."):
                    c, cid = names[key], item[len(key) + 1:]
                    break
        if c is None:
            dropped.append(item)
            continue
        out[c.name].columns.append(j)
        out[c.name].content_ids.append(cid)
    if dropped:
        log.warning(f"note: {len(dropped)} response item(s) belong to no config of {spec.name} and are ignored "
                    f"(e.g. {dropped[0]!r})")
    empty = [n for n, ci in out.items() if not ci.columns]
    if empty and (not spec.joint or len(empty) == len(out)):
        raise BuildError(
            f"{spec.name}: no responses for config(s) {', '.join(empty)}; a bundle's items need a scenario "
            f"(item_info) or an id prefix '<scenario>.' (scenarios: {', '.join(c.scenario for c in spec.configs)})"
        )
    return out


def present_configs(spec: BenchmarkSpec, assigned: Mapping[str, ConfigItems]) -> BenchmarkSpec:
    """``spec``, or the bundle restricted to the configs that have responses (noted on stderr).

    A bundle is fitted jointly on the configs it has data for; the card says which are in it.
    """
    present = tuple(c for c in spec.configs if assigned[c.name].columns)
    if len(present) == len(spec.configs):
        return spec
    absent = [c.name for c in spec.configs if not assigned[c.name].columns]
    log.info(f"note: {spec.name}: no responses for config(s) {', '.join(absent)}; the bundle is built from "
             f"{', '.join(c.name for c in present)} (the card says so)")
    return dataclasses.replace(spec, configs=present)
