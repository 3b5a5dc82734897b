"""Write a tiny benchmark as a Hub-ready dataset folder (``builder build``).

::

    build_benchmark("tinyMMLU", "mmlu_responses.parquet", {"test": "mmlu_test.parquet",
                    "dev": "mmlu_dev.parquet"}, out=Path("tinyMMLU"), version="1.0.0")

reads the responses (a score table or any source :func:`builder.ingest.ingest` reads), fits
the estimator (:func:`builder.fitting.fit_estimator`), and writes::

    README.md                             card (YAML: configs, licence, ...; cards.py)
    <config>/<split>-00000-of-00001.parquet   one file per config and split
    estimator.json, irt_parameters.npz    estimator side files (TinyEstimator.save)
    estimator.py                          the standalone estimator, copied as-is
    validation.json                       the out-of-fold validation report (incl. per-model arrays)
    validation.png                        estimated vs true scores of held-out models (matplotlib)
    manifest.json                         versions, build inputs and parameters, sha256 of every file

so that ``load_dataset(folder, config, split=...)`` gives what
``load_dataset("tinyBenchmarks/<name>", config, split=...)`` gives. The tiny split's rows
follow ``TinyEstimator.anchor_ids`` (restricted to the config's scenario), so a harness's
per-row results map onto the estimator positionally. A bundle (``spec.joint``) has one
estimator across its configs (one scenario per config); a benchmark with several
independent configs has one estimator per config, in the ``<config>/`` folder.

Same inputs and seed give byte-identical folders: parquet with fixed writer settings, no
timestamps, deterministic npz and PNG, and no absolute paths (inputs are named by their
base name and sha256).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from . import __version__
from .benchmarks import BenchmarkSpec, ConfigSpec, get_benchmark
from .estimator import MANIFEST_NAME, TinyEstimator
from .matrix import ResponseMatrix, subscenario_of

DATASET_FORMAT = "tinybenchmarks-dataset"
MANIFEST_SCHEMA_VERSION = 1
CARD_NAME = "README.md"
VALIDATION_NAME = "validation.json"
PLOT_NAME = "validation.png"
ESTIMATOR_CODE = "estimator.py"
INPUT_COLUMN = "input_formatted"
#: fit_estimator parameters a build may set (besides n_anchors and seed)
FIT_OPTIONS = ("n_dims", "n_seeds", "n_folds", "validation_fraction", "binarize", "irt_params", "embedding")

__all__ = [
    "build_benchmark", "data_path", "read_responses", "load_content", "parse_content_args", "remap_item_order",
    "check_item_text", "source_content", "config_anchor_ids", "load_estimators",
    "finalize_manifest", "read_manifest", "verify_manifest", "tiny_split_frame", "file_sha256",
    "DATASET_FORMAT", "MANIFEST_SCHEMA_VERSION",
]


class BuildError(ValueError):
    """Inputs that cannot make a tiny dataset (mismatched ids, missing columns...)."""


def data_path(config: str, split: str) -> str:
    """Repository path of a config's split: ``<config>/<split>-00000-of-00001.parquet``."""
    return f"{config}/{split}-00000-of-00001.parquet"


# =============================================================================== hashing
def file_sha256(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _input_record(path: Path) -> dict:
    """Name (base name only), kind, size and sha256 of an input file or folder."""
    if path.is_file():
        return {"name": path.name, "kind": "file", "size": path.stat().st_size, "sha256": file_sha256(path)}
    if path.is_dir():
        h = hashlib.sha256()
        n = 0
        for f in sorted(p for p in path.rglob("*") if p.is_file()):
            h.update(f"{f.relative_to(path).as_posix()}\0{file_sha256(f)}\n".encode())
            n += 1
        return {"name": path.name, "kind": "folder", "files": n, "sha256": h.hexdigest()}
    raise FileNotFoundError(f"no such file or folder: {path}")


def _matrix_sha256(m: ResponseMatrix) -> str:
    h = hashlib.sha256()
    h.update(json.dumps([m.models, m.items]).encode())
    h.update(np.ascontiguousarray(m.scores, dtype="<f8").tobytes())
    return h.hexdigest()


# =============================================================================== responses
def read_responses(spec: BenchmarkSpec, responses: Any,
                   content_file: str | os.PathLike | None = None) -> tuple[ResponseMatrix, list[dict]]:
    """The response matrix and its input records for the manifest.

    ``responses`` is a :class:`ResponseMatrix`, a score table (parquet/CSV), or one or more
    evaluation outputs read with :func:`builder.ingest.ingest` (``task`` = each config's
    ``source_task``; a bundle is read config by config and merged, item ids prefixed with
    the config's scenario). ``content_file`` (a single config's local tiny-split content) is
    passed to ``ingest``: AlpacaEval annotations name their items by instruction, which the
    content maps to its ``item_id``.
    """
    if isinstance(responses, ResponseMatrix):
        return responses, [{"name": "<ResponseMatrix>", "kind": "matrix", "models": responses.shape[0],
                            "items": responses.shape[1], "sha256": _matrix_sha256(responses)}]
    paths = [Path(responses)] if isinstance(responses, (str, os.PathLike)) else [Path(p) for p in responses]
    if not paths:
        raise BuildError("no responses given")
    for p in paths:
        if not p.exists():
            raise FileNotFoundError(f"responses: no such file or folder: {p}")
    records = [_input_record(p) for p in paths]
    from .sources.tables import is_table

    if len(paths) == 1 and paths[0].is_file() and is_table(paths[0]):
        return ResponseMatrix.read(paths[0]), records
    from .ingest import ingest

    if len(spec.configs) == 1:
        return ingest(paths, task=spec.configs[0].source_task or None, content=content_file), records
    parts = []
    for c in spec.configs:
        m = ingest(paths, task=c.source_task or None)
        info = pd.DataFrame({"scenario": c.scenario, "subscenario": list(m.subscenarios())},
                            index=[f"{c.scenario}.{i}" for i in m.items])
        parts.append(ResponseMatrix(m.scores, m.models, list(info.index), info))
    return _merge(parts), records


def _merge(parts: Sequence[ResponseMatrix]) -> ResponseMatrix:
    models = list(dict.fromkeys(m for p in parts for m in p.models))
    row = {m: i for i, m in enumerate(models)}
    items = [i for p in parts for i in p.items]
    Y = np.full((len(models), len(items)), np.nan)
    col = 0
    for p in parts:
        Y[np.array([row[m] for m in p.models])[:, None], np.arange(col, col + len(p.items))[None, :]] = p.scores
        col += len(p.items)
    info = pd.concat([p.item_info for p in parts])
    return ResponseMatrix(Y, models, items, info)


@dataclass
class _ConfigItems:
    """The response columns of one config and their content item ids."""

    config: ConfigSpec
    columns: list[int] = field(default_factory=list)
    content_ids: list[str] = field(default_factory=list)


def assign_items(spec: BenchmarkSpec, matrix: ResponseMatrix) -> dict[str, _ConfigItems]:
    """Which config each response item belongs to, and its id in the content.

    One config: every item, its id as is. Several: by ``item_info['scenario']`` (matching a
    config's scenario, source task or name) or by an item id prefix ``<scenario>.``; the
    prefix is removed to give the content id. Items of no config are dropped (noted on stderr).
    """
    out = {c.name: _ConfigItems(c) for c in spec.configs}
    if len(spec.configs) == 1:
        c = spec.configs[0]
        out[c.name].columns = list(range(len(matrix.items)))
        out[c.name].content_ids = list(matrix.items)
        return out
    scen = None
    if matrix.item_info is not None and "scenario" in matrix.item_info:
        scen = matrix.item_info["scenario"].astype(str).to_numpy()
    names = {}
    for c in spec.configs:
        for key in (c.scenario, c.source_task, c.name):
            if key:
                names.setdefault(key, c)
    dropped = []
    for j, item in enumerate(matrix.items):
        c = names.get(str(scen[j])) if scen is not None else None
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
        print(f"note: {len(dropped)} response item(s) belong to no config of {spec.name} and are ignored "
              f"(e.g. {dropped[0]!r})", file=sys.stderr)
    empty = [n for n, ci in out.items() if not ci.columns]
    if empty:
        raise BuildError(
            f"{spec.name}: no responses for config(s) {', '.join(empty)}; a bundle's items need a scenario "
            f"(item_info) or an id prefix '<scenario>.' (scenarios: {', '.join(c.scenario for c in spec.configs)})"
        )
    return out


# =============================================================================== content
@dataclass
class ContentTable:
    """One upstream split: its rows (arrow), item ids aligned with the rows, where it came from."""

    table: pa.Table
    item_ids: list[str]
    source: dict


def parse_content_args(values: Iterable[str] | None) -> dict[str, str]:
    """``["test=a.parquet", "dev=b.parquet"]`` -> ``{"test": "a.parquet", "dev": "b.parquet"}``.

    Keys are a split name, or ``CONFIG/SPLIT`` for benchmarks with several configs.
    """
    out: dict[str, str] = {}
    for v in values or ():
        key, sep, val = str(v).partition("=")
        if not sep or not key.strip() or not val.strip():
            raise BuildError(f"--content takes SPLIT=PATH (or CONFIG/SPLIT=PATH or SPLIT=HUB_ID), got {v!r}")
        if key.strip() in out:
            raise BuildError(f"--content: split {key.strip()!r} given twice")
        out[key.strip()] = val.strip()
    return out


def _content_key(spec: BenchmarkSpec, content: Mapping[str, str], config: ConfigSpec, split: str) -> str | None:
    for key in (f"{config.name}/{split}", f"{config.name}:{split}"):
        if key in content:
            return content[key]
    if len(spec.configs) == 1 and split in content:
        return content[split]
    return None


def _check_content_keys(spec: BenchmarkSpec, content: Mapping[str, str]) -> None:
    valid = set()
    for c in spec.configs:
        for s in _config_splits(c):
            valid |= {f"{c.name}/{s}", f"{c.name}:{s}"}
            if len(spec.configs) == 1:
                valid.add(s)
    bad = [k for k in content if k not in valid]
    if bad:
        raise BuildError(f"--content: {spec.name} has no split {bad[0]!r}; use one of: {', '.join(sorted(valid))}")


def _normalize_type(t: pa.DataType) -> pa.DataType:
    """large_string/large_list -> string/list (what the Hub datasets hold), recursively."""
    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_large_list(t) or pa.types.is_list(t):
        return pa.list_(_normalize_type(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _normalize_type(f.type)) for f in t])
    return t


def _read_local_table(path: Path) -> pa.Table:
    name = path.name.lower()
    try:
        if name.endswith((".parquet", ".pq")):
            return pq.read_table(path)
        if name.endswith((".csv", ".csv.gz", ".tsv")):
            df = pd.read_csv(path, sep="\t" if name.endswith(".tsv") else ",", dtype={"item_id": str},
                             keep_default_na=False)
            return pa.Table.from_pandas(df, preserve_index=False)
        if name.endswith(".jsonl"):
            from .sources._common import iter_records

            return pa.Table.from_pylist([rec for _, rec in iter_records(path)])
        if name.endswith(".json"):
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict):  # column -> values
                return pa.table(data)
            return pa.Table.from_pylist(data)
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise BuildError(f"{path}: cannot read content: {exc}") from exc
    raise BuildError(f"{path}: unknown content format (use parquet, CSV, JSON or JSON lines)")


def _load_hub(dataset_id: str, config: str | None, split: str) -> pa.Table:
    """An upstream Hub dataset split (``datasets.load_dataset``; needs the network or a cache)."""
    import datasets

    ds = datasets.load_dataset(dataset_id, config, split=split)
    table = ds.with_format("arrow")[:]
    return table.replace_schema_metadata(ds.features.arrow_schema.metadata)


def _one_content(value: str | None, config: ConfigSpec, split: str) -> tuple[pa.Table, dict]:
    if value is None:
        if not config.upstream:
            raise BuildError(f"config {config.name!r}: no content for split {split!r} and no upstream dataset; "
                             f"pass --content {split}=PATH")
        value = f"hub:{config.upstream}"
    if value.startswith("hub:"):
        ds_id, upstream_split = value[4:], config.upstream_splits.get(split, split)
        table = _load_hub(ds_id, config.upstream_config, upstream_split)
        return table, {"kind": "hub", "id": ds_id, "config": config.upstream_config, "split": upstream_split}
    path = Path(value)
    if path.is_file():
        return _read_local_table(path), _input_record(path)
    if path.is_dir():  # a local dataset folder (saved Hub repo)
        table = _load_hub(str(path), config.upstream_config, config.upstream_splits.get(split, split))
        return table, _input_record(path)
    if re.fullmatch(r"[\w.-]+/[\w.-]+", value) and not value.lower().endswith((".parquet", ".csv", ".json", ".jsonl")):
        return _one_content(f"hub:{value}", config, split)
    raise FileNotFoundError(f"content for split {split!r}: no such file {value!r} (a Hub id needs 'hub:' or 'owner/name')")


def content_item_ids(table: pa.Table, wanted: Iterable[str] | None = None) -> list[str]:
    """Item ids of the content rows.

    The ``item_id`` column when present; else ``<value>.<index within value>`` of the string
    column whose values cover the subscenario prefixes of ``wanted`` (MMLU's ``subject``);
    else the row position.
    """
    if "item_id" in table.column_names:
        return [str(v) for v in table.column("item_id").to_pylist()]
    n = table.num_rows
    wanted = set(map(str, wanted or ()))
    prefixes = {subscenario_of(w) for w in wanted} - {""}
    if prefixes:
        for name in table.column_names:
            t = table.schema.field(name).type
            if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
                continue
            values = [str(v) for v in table.column(name).to_pylist()]
            if prefixes <= set(values):
                counters: dict[str, int] = {}
                out = []
                for v in values:
                    out.append(f"{v}.{counters.get(v, 0)}")
                    counters[v] = counters.get(v, 0) + 1
                return out
    return [str(i) for i in range(n)]


def source_content(config: ConfigSpec, matrix: ResponseMatrix, columns: Sequence[int],
                   content_ids: Sequence[str]) -> ContentTable:
    """Content taken from the responses themselves (``content_from="source"``, e.g. HELM).

    One row per response item of the config: the registry's columns from
    ``matrix.item_info`` (what the reader found: question, references, answer...), plus
    ``instance_id`` (the id within its subscenario) and ``subscenario`` when the registry
    lists them. Columns the reader did not give are empty.
    """
    info = matrix.item_info
    cols = [c for c in (config.columns or ()) if c != INPUT_COLUMN] or \
        [c for c in (info.columns if info is not None else []) if c not in ("scenario",)]
    data: dict[str, list] = {"item_id": [str(c) for c in content_ids]}
    for c in cols:
        if c == "instance_id" and (info is None or c not in info):
            data[c] = [cid[len(subscenario_of(cid)) + 1:] if subscenario_of(cid) else cid for cid in content_ids]
        elif c == "subscenario":
            data[c] = [subscenario_of(cid) for cid in content_ids]
        elif info is not None and c in info:
            vals = info[c].iloc[list(columns)].tolist()
            data[c] = [None if (v is None or (isinstance(v, float) and math.isnan(v))) else
                       (v.tolist() if isinstance(v, np.ndarray) else v) for v in vals]
        else:
            data[c] = [None] * len(content_ids)
    table = pa.table({k: pa.array(v) for k, v in data.items()})
    # all-empty columns: strings rather than the null type
    table = pa.Table.from_arrays([a.cast(pa.string()) if pa.types.is_null(a.type) else a for a in table.columns],
                                 names=table.column_names)
    return ContentTable(table, list(data["item_id"]), {"kind": "source", "name": "item content of the responses"})


def load_content(
    spec: BenchmarkSpec, content: Mapping[str, str] | None = None, wanted: Mapping[str, Iterable[str]] | None = None,
    source: Mapping[str, ContentTable] | None = None,
) -> dict[tuple[str, str], ContentTable]:
    """Every (config, split) content table: a local file/folder given in ``content``, else the upstream.

    ``content`` maps ``SPLIT`` (or ``CONFIG/SPLIT``) to a parquet/CSV/JSON(L) file in the
    upstream dataset's schema (with an ``item_id`` column matching the responses, or rows
    in upstream order), a local dataset folder, or a Hub dataset id (``hub:owner/name``).
    Splits not given come from ``config.upstream`` via ``datasets.load_dataset``.
    ``wanted`` (config -> response item ids) helps derive item ids when there is no ``item_id``.
    ``source`` (config -> :func:`source_content`) serves configs with ``content_from="source"``
    whose content is not given.
    """
    content = dict(content or {})
    _check_content_keys(spec, content)
    out = {}
    for c in spec.configs:
        for split in _config_splits(c):
            value = _content_key(spec, content, c, split)
            if value is None and getattr(c, "content_from", "upstream") == "source":
                if source is None or c.name not in source:
                    raise BuildError(f"config {c.name!r} takes its content from the responses; none given")
                out[(c.name, split)] = source[c.name]
                continue
            table, source_rec = _one_content(value, c, split)
            ids = content_item_ids(table, (wanted or {}).get(c.name) if split == c.tiny_split else None)
            out[(c.name, split)] = ContentTable(table, ids, source_rec)
            expected = getattr(c, "eval_size", None) if split == c.tiny_split else \
                (getattr(c, "split_sizes", None) or {}).get(split)
            if expected and table.num_rows != expected:
                print(f"note: {spec.name} config {c.name!r} split {split!r}: the content has {table.num_rows} rows, "
                      f"the upstream split has {expected}", file=sys.stderr)
    return out


# =============================================================================== item order
ITEM_ORDERS = ("upstream", "harness_v1")
#: text of an item as readers give it (item_info) and as the content holds it, first present wins
_ITEM_TEXT = ("question", "instruction", "query", "input", "problem", "prompt", "sentence", "example")
_CONTENT_TEXT = ("question", "instruction", "sentence", "problem", "ctx", "ctx_a", "input")


def remap_item_order(config: ConfigSpec, items: _ConfigItems, content_ids: Sequence[str]) -> None:
    """Response ids in the harness v0.3 evaluation order -> upstream ids (in place).

    The Open LLM Leaderboard v1 details list examples in the order the v0.3 harness
    evaluated them (``random.Random(42).shuffle`` of each task's documents); row ``p`` of a
    task with ``n`` documents is upstream document ``harness_v1_order(n)[p]``. A task is a
    subscenario (MMLU subject) or the whole config; ``n`` is counted in the content.
    """
    from .prompts import harness_v1_order

    sizes: dict[str, int] = {}
    for cid in content_ids:
        sub = subscenario_of(cid)
        sizes[sub] = sizes.get(sub, 0) + 1
    orders: dict[str, list[int]] = {}
    out = []
    for cid in items.content_ids:
        sub, _, pos = cid.rpartition(".") if "." in cid else ("", "", cid)
        if not pos.isdigit() or sub not in sizes:
            raise BuildError(f"config {config.name!r}: item {cid!r} is not '<index>' or '<subscenario>.<index>'; "
                             "item_order='harness_v1' needs row positions")
        if sub not in orders:
            orders[sub] = harness_v1_order(sizes[sub], seed=getattr(config, "fewshot_seed", 42))
        p = int(pos)
        if p >= sizes[sub]:
            raise BuildError(f"config {config.name!r}: item {cid!r} beyond the {sizes[sub]} content rows")
        up = orders[sub][p]
        out.append(f"{sub}.{up}" if sub else str(up))
    items.content_ids = out


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[0-9a-z]+", text.lower()) if len(w) > 2 or w.isdigit()}


def check_item_text(matrix: ResponseMatrix, items: _ConfigItems, ct: ContentTable, where: str,
                    min_overlap: float = 0.5, max_bad: float = 0.2) -> int:
    """When the responses carry item text (``item_info``), check it against the content row.

    An item matches when at least ``min_overlap`` of the words of the shorter text occur in
    the other. More than ``max_bad`` mismatches mean the response ids are not the content's
    row ids (e.g. evaluation order instead of upstream order): :class:`BuildError`.
    Returns the number of items checked.
    """
    info = matrix.item_info
    if info is None:
        return 0
    icol = next((c for c in _ITEM_TEXT if c in info.columns), None)
    ccol = next((c for c in _CONTENT_TEXT if c in ct.table.column_names), None)
    if icol is None or ccol is None:
        return 0
    row_of = {cid: r for r, cid in enumerate(ct.item_ids)}
    texts = ct.table.column(ccol).to_pylist()
    item_texts = info[icol].tolist()
    checked, bad = 0, []
    for j, cid in zip(items.columns, items.content_ids):
        a, b = item_texts[j], texts[row_of[cid]] if cid in row_of else None
        if not isinstance(a, str) or not isinstance(b, str):
            continue
        wa, wb = _words(a), _words(b)
        if not wa or not wb:
            continue
        checked += 1
        if len(wa & wb) < min_overlap * min(len(wa), len(wb)):
            bad.append(cid)
    if checked and len(bad) > max_bad * checked:
        raise BuildError(
            f"{where}: the text of {len(bad)} of {checked} response items ({icol!r}) does not match the content "
            f"row of the same id ({ccol!r}), e.g. item {bad[0]!r}. The response ids are not the content's row ids; "
            "if the responses are in the v0.3 harness evaluation order (Open LLM Leaderboard v1 details), build "
            "with item_order='harness_v1' (--item-order harness_v1)"
        )
    return checked


# =============================================================================== fitting
@dataclass
class _Unit:
    """One estimator: its folder (``""`` = the root), its configs, the fit."""

    path: str
    configs: list[ConfigSpec]
    result: Any  # FitResult
    content_of: dict[str, dict[str, str]]  # config -> estimator item id -> content id


def _fit_units(spec, matrix, assigned, anchors, seed, fit_options, progress, version) -> list[_Unit]:
    from .fitting import fit_estimator

    groups = [spec.configs] if (spec.joint or len(spec.configs) == 1) else [[c] for c in spec.configs]
    units = []
    for configs in groups:
        cols, ids, scen, sub, content_of = [], [], [], [], {}
        for c in configs:
            ci = assigned[c.name]
            content_of[c.name] = {}
            for j, cid in zip(ci.columns, ci.content_ids):
                iid = cid if len(configs) == 1 else f"{c.scenario}.{cid}"
                cols.append(j)
                ids.append(iid)
                scen.append(c.scenario)
                sub.append(f"{c.scenario}.{subscenario_of(cid)}" if len(configs) > 1 else subscenario_of(cid))
                content_of[c.name][iid] = cid
        Y = matrix.scores[:, cols]
        keep = ~np.isnan(Y).all(axis=1)
        info = pd.DataFrame({"scenario": scen, "subscenario": sub}, index=ids)
        sub_m = ResponseMatrix(Y[keep], [m for m, k in zip(matrix.models, keep) if k], ids, info)
        metadata = {"benchmark": spec.name, "version": version,
                    "configs": {c.name: c.scenario for c in configs},
                    # estimator.evaluate(y, bench) answers with the original package's keys
                    "original_bench": spec.original_bench,
                    "original_scenarios": {c.scenario: c.original_scenario or c.scenario for c in configs}}
        result = fit_estimator(sub_m, n_anchors=anchors * len(configs), seed=seed, progress=progress,
                               metadata=metadata, **fit_options)
        path = "" if len(groups) == 1 else configs[0].name
        units.append(_Unit(path, list(configs), result, content_of))
    return units


def config_anchor_ids(est: TinyEstimator, scenario: str) -> list[str]:
    """The anchors of ``scenario`` in ``anchor_ids`` order: the tiny split's rows."""
    return [a for a, p in zip(est.anchor_ids, est.anchor_positions)
            if est.scenarios[est.scenario_index[p]] == scenario]


# =============================================================================== writing data
def _fewshot_split(config: ConfigSpec) -> str | None:
    """The split the renderer draws few-shot examples from (``ConfigSpec.fewshot_split``)."""
    if config.renderer is None or not int(getattr(config, "num_fewshot", 0) or 0):
        return None
    return getattr(config, "fewshot_split", None) or None


def _config_splits(config: ConfigSpec) -> list[str]:
    """Content splits a config needs: the tiny split, the full splits, the few-shot pool."""
    out = [config.tiny_split, *config.full_splits]
    few = _fewshot_split(config)
    if few and few not in out:
        out.append(few)
    return out


def _output_columns(config: ConfigSpec, table: pa.Table) -> list[str]:
    if config.columns:
        cols = [c for c in config.columns if c != INPUT_COLUMN]
    else:
        cols = [c for c in table.column_names if c not in ("item_id", INPUT_COLUMN)]
    return cols


def _split_table(config: ConfigSpec, split: str, ct: ContentTable, rows: Sequence[int] | None,
                 fewshot: dict[str, list[dict]], where: str) -> pa.Table:
    """The output table of one split: the chosen rows, the registry's columns, ``input_formatted``.

    ``rows`` are positions in the full upstream split (the anchors, for the tiny split) or
    None (the whole split); ``fewshot`` maps the few-shot split name to its rows.
    """
    import datasets

    table = ct.table if rows is None else ct.table.take(pa.array(rows, type=pa.int64()))
    cols = _output_columns(config, table)
    missing = [c for c in cols if c not in table.column_names]
    if missing:
        raise BuildError(f"{where}: content lacks column(s) {', '.join(missing)} (it has: "
                         f"{', '.join(table.column_names)})")
    src_features = datasets.Features.from_arrow_schema(ct.table.schema)
    arrays, names = [], list(cols)
    for c in cols:
        arr = table.column(c).combine_chunks()
        t = _normalize_type(arr.type)
        arrays.append(arr.cast(t) if t != arr.type else arr)
    if config.renderer is not None and (not config.columns or INPUT_COLUMN in config.columns):
        from .prompts import render_split

        texts = render_split(config, table.to_pylist(), fewshot, split=split, upstream_index=rows,
                             n_eval=ct.table.num_rows)
        if len(texts) != table.num_rows:
            raise BuildError(f"{where}: the renderer gave {len(texts)} prompts for {table.num_rows} rows")
        arrays.append(pa.array([str(t) for t in texts], type=pa.string()))
        names.append(INPUT_COLUMN)
    labels = dict(getattr(config, "class_labels", None) or {})
    for i, c in enumerate(cols):
        if c in labels:
            arrays[i] = _class_label_array(arrays[i], list(labels[c]), f"{where}, column {c!r}")
    out = pa.Table.from_arrays(arrays, names=names)
    features = datasets.Features.from_arrow_schema(out.schema)
    for c in cols:  # ClassLabel names: the registry's, else kept from the source (a Hub upstream)
        f = src_features.get(c)
        if c in labels:
            features[c] = datasets.ClassLabel(names=list(labels[c]))
        elif isinstance(f, datasets.ClassLabel):
            features[c] = f
    return pa.Table.from_arrays(out.columns, schema=features.arrow_schema)


def _class_label_array(arr: pa.Array, names: list[str], where: str) -> pa.Array:
    """Integer class indices from ints (checked) or label strings (``"A"`` -> 0)."""
    values = arr.to_pylist()
    out = []
    for v in values:
        if v is None:
            out.append(None)
            continue
        if isinstance(v, str):
            s = v.strip()
            if s in names:
                out.append(names.index(s))
                continue
            if s.lstrip("-").isdigit():
                v = int(s)
            else:
                raise BuildError(f"{where}: value {v!r} is not one of the class labels {names}")
        i = int(v)
        if not 0 <= i < len(names):
            raise BuildError(f"{where}: class index {i} out of range for labels {names}")
        out.append(i)
    return pa.array(out, type=pa.int64())


def _write_parquet(table: pa.Table, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="snappy", use_dictionary=True, write_statistics=True,
                   row_group_size=max(1, min(table.num_rows, 10_000)), data_page_version="1.0")


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return x if math.isfinite(x) else None
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    return obj


def write_json(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_jsonable(obj), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# =============================================================================== manifest
def read_manifest(folder: str | os.PathLike) -> dict:
    p = Path(folder) / MANIFEST_NAME
    if not p.is_file():
        raise FileNotFoundError(f"{p} not found: is {folder} a tiny dataset folder (built by `builder build`)?")
    try:
        manifest = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}: not valid JSON ({exc})") from exc
    if manifest.get("format") != DATASET_FORMAT:
        raise ValueError(f"{p}: not a tiny dataset manifest (format={manifest.get('format')!r})")
    return manifest


def _listed_files(folder: Path) -> list[str]:
    out = []
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_file() and rel != MANIFEST_NAME and not any(part.startswith(".") for part in rel.split("/")):
            out.append(rel)
    return out


def finalize_manifest(folder: str | os.PathLike) -> dict:
    """Recompute ``manifest["files"]`` (sha256 and size of every other file) and rewrite it."""
    folder = Path(folder)
    manifest = read_manifest(folder)
    manifest["files"] = {
        rel: {"sha256": file_sha256(folder / rel), "size": (folder / rel).stat().st_size}
        for rel in _listed_files(folder)
    }
    write_json(folder / MANIFEST_NAME, manifest)
    return manifest


def verify_manifest(folder: str | os.PathLike) -> list[str]:
    """Problems with a folder against its manifest (empty list = every file matches)."""
    folder = Path(folder)
    manifest = read_manifest(folder)
    problems = []
    files = manifest.get("files", {})
    for rel, meta in files.items():
        p = folder / rel
        if not p.is_file():
            problems.append(f"{rel}: missing")
        elif file_sha256(p) != meta.get("sha256"):
            problems.append(f"{rel}: sha256 differs from the manifest")
        elif p.stat().st_size != meta.get("size"):
            problems.append(f"{rel}: size differs from the manifest")
    for rel in _listed_files(folder):
        if rel not in files:
            problems.append(f"{rel}: not in the manifest")
    return problems


def tiny_split_frame(folder: str | os.PathLike, config: str | None = None) -> pd.DataFrame:
    """The tiny split of ``config`` (default: the only/first config) as a DataFrame, in row order."""
    manifest = read_manifest(folder)
    configs = manifest["configs"]
    name = config or next(iter(configs))
    if name not in configs:
        raise ValueError(f"no config {name!r}; configs: {', '.join(configs)}")
    c = configs[name]
    return pq.read_table(Path(folder) / c["splits"][c["tiny_split"]]["path"]).to_pandas()


# =============================================================================== build
def _fit_options(fit_options: Mapping[str, Any] | None) -> dict:
    opts = dict(fit_options or {})
    bad = [k for k in opts if k not in FIT_OPTIONS]
    if bad:
        raise BuildError(f"unknown fit option(s) {', '.join(bad)}; known: {', '.join(FIT_OPTIONS)}")
    return opts


def _effective_fit_options(opts: Mapping[str, Any]) -> dict:
    """Every fit option with its value for this build (given, else fit_estimator's default)."""
    import inspect

    from .fitting import fit_estimator

    defaults = {k: v.default for k, v in inspect.signature(fit_estimator).parameters.items()}
    return {k: opts.get(k, defaults.get(k)) for k in FIT_OPTIONS}


def _prepare_out(out: Path) -> Path:
    if out.exists():
        if not out.is_dir():
            raise NotADirectoryError(f"{out} exists and is not a folder")
        if any(out.iterdir()) and not (out / MANIFEST_NAME).is_file():
            raise BuildError(f"{out} is a non-empty folder that is not a tiny dataset; refusing to overwrite it")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.building-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    return tmp


def build_benchmark(
    name: str,
    responses: Any,
    content: Mapping[str, str] | None = None,
    anchors: int | None = None,
    seed: int = 0,
    *,
    out: str | os.PathLike,
    version: str = "0.0.0",
    previous: str | os.PathLike | None = None,
    repo_id: str | None = None,
    tag: str | None = None,
    fit_options: Mapping[str, Any] | None = None,
    progress: bool = False,
    templates: str | os.PathLike | None = None,
    item_order: str = "upstream",
) -> Path:
    """Fit, select anchors and write the tiny dataset folder ``out``; returns ``out``.

    Parameters
    ----------
    name : str
        Registered benchmark (:data:`builder.benchmarks.REGISTRY`).
    responses
        Score table path, evaluation output path(s) (:func:`builder.ingest.ingest`), or a
        :class:`ResponseMatrix`.
    content : dict, optional
        ``SPLIT`` (or ``CONFIG/SPLIT``) -> local parquet/CSV/JSON in the upstream schema,
        local dataset folder, or Hub id (``hub:owner/name``); default: the registry's upstream.
    anchors : int, optional
        Anchors per config (a bundle's estimator gets k x its configs). Default: the registry's.
    seed : int
        Seed of the fit; same inputs and seed give a byte-identical folder.
    out : path
        Output folder (replaced atomically; an existing folder must be a previous build or empty).
    version : str
        Dataset version written to the manifest and the card.
    previous : path, optional
        Folder of the previous version: the card's changelog lists anchors in/out and the
        change of the validation errors.
    repo_id, tag : str, optional
        Hub repository and release tag shown in the card's usage (default
        ``tinyBenchmarks/<name>`` and ``v<version>``).
    fit_options : dict, optional
        Extra :func:`fit_estimator` parameters (``n_dims``, ``n_seeds``, ``n_folds``...).
    item_order : {"upstream", "harness_v1"}
        How the response item ids index the content: upstream row ids (default), or row
        positions in the v0.3 harness evaluation order (Open LLM Leaderboard v1 details),
        mapped to upstream rows with :func:`remap_item_order`. When the responses carry item
        text, it is checked against the content (:func:`check_item_text`).
    """
    from .cards import write_card

    spec = get_benchmark(name)
    if not re.fullmatch(r"[0-9A-Za-z][0-9A-Za-z.+_-]*", str(version)):
        raise BuildError(f"version must look like 1.2.0, got {version!r}")
    k = int(anchors if anchors is not None else spec.anchors)
    if k < 1:
        raise BuildError(f"anchors must be positive, got {k}")
    opts = _fit_options(fit_options)
    out = Path(out)
    prev = Path(previous) if previous is not None else None
    if prev is not None:
        read_manifest(prev)  # fail early on a wrong folder

    if item_order not in ITEM_ORDERS:
        raise BuildError(f"item_order must be one of {ITEM_ORDERS}, got {item_order!r}")
    tiny_file = None
    if len(spec.configs) == 1 and content:
        value = _content_key(spec, dict(content), spec.configs[0], spec.configs[0].tiny_split)
        if value is not None and Path(value).is_file():
            tiny_file = value
    matrix, resp_records = read_responses(spec, responses, tiny_file)
    assigned = assign_items(spec, matrix)
    from_source = {c.name: source_content(c, matrix, assigned[c.name].columns, assigned[c.name].content_ids)
                   for c in spec.configs if getattr(c, "content_from", "upstream") == "source"}
    contents = load_content(spec, content, {n: ci.content_ids for n, ci in assigned.items()}, from_source)
    for c in spec.configs:  # every response item must be a content row
        ct = contents[(c.name, c.tiny_split)]
        if item_order == "harness_v1" and c.content_from != "source":
            remap_item_order(c, assigned[c.name], ct.item_ids)
        have = set(ct.item_ids)
        if len(have) != len(ct.item_ids):
            raise BuildError(f"config {c.name!r}, split {c.tiny_split!r}: duplicate item ids in the content")
        miss = [i for i in assigned[c.name].content_ids if i not in have]
        if miss:
            raise BuildError(
                f"config {c.name!r}: {len(miss)} response item(s) are not in the content of split "
                f"{c.tiny_split!r} (e.g. {miss[0]!r}; content ids look like {ct.item_ids[:3]})"
            )
        if c.content_from != "source":
            check_item_text(matrix, assigned[c.name], ct, f"config {c.name!r}")

    units = _fit_units(spec, matrix, assigned, k, seed, opts, progress, version)

    tmp = _prepare_out(out)
    try:
        configs_info: dict[str, dict] = {}
        estimators = []
        for u in units:
            est = u.result.estimator
            est.save(tmp / u.path if u.path else tmp)
            write_json(tmp / u.path / VALIDATION_NAME if u.path else tmp / VALIDATION_NAME, u.result.report)
            estimators.append({"path": u.path, "configs": [c.name for c in u.configs],
                               "scenarios": list(est.scenarios), "n_anchors": len(est.anchor_ids),
                               "n_items": len(est.item_ids), "n_models": int(u.result.report.get("n_models", 0)),
                               "n_dims": int(est.n_dims)})
            for c in u.configs:
                ct = contents[(c.name, c.tiny_split)]
                row_of = {cid: r for r, cid in enumerate(ct.item_ids)}
                rows = [row_of[u.content_of[c.name][a]] for a in config_anchor_ids(est, c.scenario)]
                few_name = _fewshot_split(c)
                few = {few_name: contents[(c.name, few_name)].table.to_pylist()} if few_name else {}
                splits = {}
                for split in (c.tiny_split, *c.full_splits):
                    table = _split_table(c, split, contents[(c.name, split)],
                                         rows if split == c.tiny_split else None, few,
                                         f"config {c.name!r}, split {split!r}")
                    rel = data_path(c.name, split)
                    _write_parquet(table, tmp / rel)
                    splits[split] = {"path": rel, "rows": table.num_rows, "columns": table.column_names}
                configs_info[c.name] = {
                    "scenario": c.scenario, "tiny_split": c.tiny_split, "splits": splits,
                    "estimator": u.path, "harness_task": c.harness_task,
                    "harness_metric": getattr(c, "harness_metric", None), "renderer": c.renderer,
                    "source_task": c.source_task, "metric": c.metric,
                }
        shutil.copyfile(Path(__file__).with_name(ESTIMATOR_CODE), tmp / ESTIMATOR_CODE)
        manifest = {
            "format": DATASET_FORMAT,
            "schema_version": MANIFEST_SCHEMA_VERSION,
            "name": spec.name,
            "pretty_name": spec.pretty_name,
            "version": str(version),
            "repo_id": repo_id or f"tinyBenchmarks/{spec.name}",
            "tag": tag or f"v{version}",
            "builder_version": __version__,
            "estimator_schema_version": _estimator_schema_version(),
            "joint": bool(spec.joint),
            "configs": configs_info,
            "estimators": estimators,
            "inputs": {
                "responses": resp_records,
                "content": {f"{c}/{s}": ct.source for (c, s), ct in contents.items()},
            },
            "parameters": {"anchors": k, "seed": int(seed), "item_order": item_order, **_effective_fit_options(opts)},
            "files": {},
        }
        write_json(tmp / MANIFEST_NAME, manifest)
        write_card(tmp, previous=prev, templates=templates)  # README.md + validation.png, then the file hashes
        if out.exists():
            old = out.parent / f".{out.name}.old-{os.getpid()}"
            os.replace(out, old)
            os.replace(tmp, out)
            shutil.rmtree(old)
        else:
            os.replace(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return out


def _estimator_schema_version() -> int:
    from .estimator import SCHEMA_VERSION

    return int(SCHEMA_VERSION)


def load_estimators(folder: str | os.PathLike) -> dict[str, TinyEstimator]:
    """Config name -> its estimator (a bundle's configs share one)."""
    folder = Path(folder)
    manifest = read_manifest(folder)
    cache: dict[str, TinyEstimator] = {}
    out = {}
    for name, c in manifest["configs"].items():
        p = c.get("estimator", "")
        if p not in cache:
            cache[p] = TinyEstimator.load(folder / p if p else folder)
        out[name] = cache[p]
    return out
