"""The content of a build: the rows of every (config, split) and how response items map onto them.

* :func:`load_content` reads every split a config needs (the tiny split, the full splits, the
  few-shot pool): a local parquet/CSV/JSON(L) file or dataset folder, a Hub dataset
  (``hub:owner/name``, ``datasets.load_dataset``) or, for ``content_from="source"`` configs
  (HELM), the item content the responses carry (:func:`source_content`).
* :func:`match_content` checks that every response item is a content row: with
  ``item_order="harness_v1"`` response ids are first mapped from the v0.3 harness evaluation
  order to upstream rows (:func:`remap_item_order`), and when the responses carry item text it
  must match the row's (:func:`check_item_text`).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from tinybench_builder.progress import get_logger
from tinybench_builder.registry import BenchmarkSpec, ConfigSpec
from tinybench_builder.errors import BuildError
from tinybench_builder.layout import input_record
from tinybench_builder.read import ResponseMatrix, subscenario_of
from tinybench_builder.dataset.responses import ConfigItems

log = get_logger(__name__)

__all__ = [
    "INPUT_COLUMN", "IDS_ONLY", "ID_COLUMNS", "DOC_COLUMN", "ContentTable", "logged_prompts", "parse_content_args",
    "content_value", "local_tiny_content", "config_splits", "fewshot_split", "content_item_ids", "source_content", "load_content", "remap_item_order", "check_item_text",
    "match_content", "check_hub_dataset",
]

INPUT_COLUMN = "input_formatted"
#: ``ContentTable.source["kind"]`` of content that is the item ids only (no text was available)
IDS_ONLY = "ids-only"
#: columns derived from the item id (``content_from="source"``), present even without item text:
#: the id within the subscenario (HELM's ``instance_id``, lm-eval's ``doc_id``) and the subscenario
ID_COLUMNS = ("instance_id", "doc_id", "subscenario")
#: ``item_info`` column of the lm-eval reader holding each record's ``doc`` as JSON (v2 details)
DOC_COLUMN = "doc_json"


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


def content_value(spec: BenchmarkSpec, content: Mapping[str, str], config: ConfigSpec, split: str) -> str | None:
    """The value given for ``config``'s ``split``: ``CONFIG/SPLIT`` (or ``CONFIG:SPLIT``), or ``SPLIT``
    for a single-config benchmark; None when not given."""
    for key in (f"{config.name}/{split}", f"{config.name}:{split}"):
        if key in content:
            return content[key]
    if len(spec.configs) == 1 and split in content:
        return content[split]
    return None


def _check_content_keys(spec: BenchmarkSpec, content: Mapping[str, str]) -> None:
    valid = set()
    for c in spec.configs:
        for s in config_splits(c):
            valid |= {f"{c.name}/{s}", f"{c.name}:{s}"}
            if len(spec.configs) == 1:
                valid.add(s)
    bad = [k for k in content if k not in valid]
    if bad:
        raise BuildError(f"--content: {spec.name} has no split {bad[0]!r}; use one of: {', '.join(sorted(valid))}")


def _read_local_table(path: Path, id_column: str = "item_id") -> pa.Table:
    name = path.name.lower()
    try:
        if name.endswith((".parquet", ".pq")):
            return pq.read_table(path)
        if name.endswith((".csv", ".csv.gz", ".tsv")):
            from tinybench_builder.read import check_csv_shape

            check_csv_shape(path, sep="\t" if name.endswith(".tsv") else ",")  # no trailing commas, duplicate names
            df = pd.read_csv(path, sep="\t" if name.endswith(".tsv") else ",", dtype={id_column: str},
                             keep_default_na=False)
            return pa.Table.from_pandas(df, preserve_index=False)
        if name.endswith(".jsonl"):
            from tinybench_builder.inputs import iter_records

            return pa.Table.from_pylist([rec for _, rec in iter_records(path)])
        if name.endswith(".json"):
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict):  # column -> values
                return pa.table(data)
            return pa.Table.from_pylist(data)
    except RecursionError:
        raise BuildError(f"{path}: cannot read content: the JSON is nested too deeply") from None
    except (OSError, ValueError, pa.ArrowException) as exc:
        msg = str(exc)
        raise BuildError(msg if msg.startswith(str(path)) else f"{path}: cannot read content: {msg}") from exc
    raise BuildError(f"{path}: unknown content format (use parquet, CSV, JSON or JSON lines)")


def check_hub_dataset(dataset_id: str, what: str, timeout: float = 10.0) -> None:
    """Fail fast (BuildError) when the Hub dataset ``dataset_id`` cannot be had: the Hub does not
    answer (offline: ``datasets`` would retry for half a minute, then raise a traceback) or has no
    such dataset. With ``HF_HUB_OFFLINE`` set nothing is asked (the cache is used)."""
    import os

    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        return
    from huggingface_hub import HfApi
    from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError

    try:
        HfApi().dataset_info(dataset_id, timeout=timeout)
    except GatedRepoError:
        return  # load_dataset says what access it needs
    except RepositoryNotFoundError:
        raise BuildError(f"{what}: the Hub has no dataset {dataset_id!r} (or it is private); pass a local copy "
                         "with --content SPLIT=PATH") from None
    except HfHubHTTPError as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status in (401, 403):
            return
        raise BuildError(f"{what} comes from the Hub dataset {dataset_id!r}, and the Hub answered HTTP {status}; "
                         "retry later, or pass a local copy with --content SPLIT=PATH") from None
    except Exception as exc:  # noqa: BLE001 - no network, DNS, proxy, timeout
        raise BuildError(
            f"{what} comes from the Hub dataset {dataset_id!r}, and the Hub cannot be reached "
            f"({type(exc).__name__}); pass a local copy with --content SPLIT=PATH (parquet, CSV, JSON or a saved "
            "dataset folder), or set HF_HUB_OFFLINE=1 to use a copy in the Hugging Face cache") from None


def _load_hub(dataset_id: str, config: str | None, split: str, what: str = "content") -> pa.Table:
    """An upstream Hub dataset split (``datasets.load_dataset``; needs the network or a cache)."""
    import datasets

    try:
        ds = datasets.load_dataset(dataset_id, config, split=split)
    except (OSError, ValueError, FileNotFoundError) as exc:  # ConnectionError is an OSError
        raise BuildError(f"{what}: cannot load {dataset_id!r} ({config or 'default'}, split {split!r}): "
                         f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}") from None
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
        what = f"the content of config {config.name!r} split {split!r}"
        check_hub_dataset(ds_id, what)
        table = _load_hub(ds_id, config.upstream_config, upstream_split, what)
        return table, {"kind": "hub", "id": ds_id, "config": config.upstream_config, "split": upstream_split}
    path = Path(value)
    if path.is_file():
        return _read_local_table(path, config.item_id_column), input_record(path)
    if path.is_dir():  # a local dataset folder (saved Hub repo)
        table = _load_hub(str(path), config.upstream_config, config.upstream_splits.get(split, split),
                          f"content folder {path}")
        return table, input_record(path)
    if re.fullmatch(r"[\w.-]+/[\w.-]+", value) and not value.lower().endswith((".parquet", ".csv", ".json", ".jsonl")):
        return _one_content(f"hub:{value}", config, split)
    raise FileNotFoundError(f"content for split {split!r}: no such file {value!r} (a Hub id needs 'hub:' or 'owner/name')")


def content_item_ids(table: pa.Table, wanted: Iterable[str] | None = None, id_column: str = "item_id") -> list[str]:
    """Item ids of the content rows.

    The ``id_column`` (``item_id``) column when present; else ``<value>.<index within value>`` of
    the string column whose values cover the subscenario prefixes of ``wanted`` (MMLU's
    ``subject``); else the row position.
    """
    if id_column in table.column_names:
        return [str(v) for v in table.column(id_column).to_pylist()]
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
    lists them. Columns the reader did not give are empty. When the reader gave no item text
    at all (a score table), the rows carry the item ids only: the table has just the id
    columns and its source is ``{"kind": "ids-only"}`` (the card says so; ``release --push``
    refuses it unless allowed).
    """
    info = matrix.item_info
    cols = [c for c in (config.columns or ()) if c != INPUT_COLUMN] or \
        [c for c in (info.columns if info is not None else []) if c not in ("scenario",)]
    text = [c for c in cols if c not in ID_COLUMNS]
    has_docs = info is not None and DOC_COLUMN in info.columns and info[DOC_COLUMN].iloc[list(columns)].notna().any()
    if text and not has_docs and (info is None or not any(c in info.columns and info[c].iloc[list(columns)].notna().any()
                                                          for c in text)):
        cols = [c for c in cols if c in ID_COLUMNS and (c != "subscenario" or any(map(subscenario_of, content_ids)))]
        source = {"kind": IDS_ONLY, "name": "item ids only (the responses carry no item text)"}
    else:
        source = {"kind": "source", "name": "item content of the responses"}
    data: dict[str, list] = {"item_id": [str(c) for c in content_ids]}
    docs = _documents(info, columns)
    for c in cols:
        if c in ("instance_id", "doc_id") and (info is None or c not in info):
            data[c] = [cid[len(subscenario_of(cid)) + 1:] if subscenario_of(cid) else cid for cid in content_ids]
            if c == "doc_id" and all(v.isdigit() for v in data[c]):
                data[c] = [int(v) for v in data[c]]  # lm-eval's doc_id is an integer
        elif c == "subscenario":
            data[c] = [subscenario_of(cid) for cid in content_ids]
        elif info is not None and c in info:
            vals = info[c].iloc[list(columns)].tolist()
            data[c] = [None if (v is None or (isinstance(v, float) and math.isnan(v))) else
                       (v.tolist() if isinstance(v, np.ndarray) else v) for v in vals]
        elif docs is not None:  # a field of the records' documents (lm-eval logs, v2 details)
            data[c] = [d.get(c) if isinstance(d, dict) else None for d in docs]
        else:
            data[c] = [None] * len(content_ids)
    table = pa.table({k: pa.array(v) for k, v in data.items()})
    # all-empty columns: strings rather than the null type
    table = pa.Table.from_arrays([a.cast(pa.string()) if pa.types.is_null(a.type) else a for a in table.columns],
                                 names=table.column_names)
    return ContentTable(table, list(data["item_id"]), source)


def _documents(info: pd.DataFrame | None, columns: Sequence[int]) -> list | None:
    """The records' documents (``doc_json``, JSON text) of the given items, parsed; None if absent."""
    if info is None or DOC_COLUMN not in info.columns:
        return None
    out = []
    for v in info[DOC_COLUMN].iloc[list(columns)].tolist():
        try:
            out.append(json.loads(v) if isinstance(v, str) else None)
        except ValueError:
            out.append(None)
    return out


def logged_prompts(config: ConfigSpec, matrix: ResponseMatrix, items: ConfigItems) -> dict[str, str]:
    """Content id -> the prompt the evaluation logged for it (lm-eval records' ``arg_0``, which v2
    details carry), for the items whose responses came with one."""
    info = matrix.item_info
    if info is None or "prompt" not in info.columns:
        return {}
    vals = info["prompt"].iloc[list(items.columns)].tolist()
    return {cid: v for cid, v in zip(items.content_ids, vals) if isinstance(v, str)}


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
        for split in config_splits(c):
            value = content_value(spec, content, c, split)
            if value is None and getattr(c, "content_from", "upstream") == "source" and split == c.tiny_split:
                if source is None or c.name not in source:
                    raise BuildError(f"config {c.name!r} takes its content from the responses; none given")
                out[(c.name, split)] = source[c.name]
                continue
            if value is None and out.get((c.name, c.tiny_split), None) is not None and \
                    out[(c.name, c.tiny_split)].source.get("kind") == IDS_ONLY:
                continue  # rows of item ids only: no prompt to render, no few-shot split to carry
            table, source_rec = _one_content(value, c, split)
            if c.content_from == "local" and c.item_id_column not in table.column_names:
                raise BuildError(f"config {c.name!r}, split {split!r}: the content has no column "
                                 f"{c.item_id_column!r} (the spec's item_id_column); it has: "
                                 f"{', '.join(table.column_names)}")
            # the full splits' ids follow the tiny split's kind of id (MMLU dev: <subject>.<index>)
            ids = content_item_ids(table, (wanted or {}).get(c.name), c.item_id_column)
            out[(c.name, split)] = ContentTable(table, ids, source_rec)
            expected = getattr(c, "eval_size", None) if split == c.tiny_split else \
                (getattr(c, "split_sizes", None) or {}).get(split)
            if expected and table.num_rows != expected:
                log.warning(f"note: {spec.name} config {c.name!r} split {split!r}: the content has "
                            f"{table.num_rows} rows, the upstream split has {expected}")
    return out


# =============================================================================== item order
#: text of an item as readers give it (item_info) and as the content holds it, first present wins
_ITEM_TEXT = ("question", "instruction", "query", "input", "problem", "prompt", "sentence", "example")
_CONTENT_TEXT = ("question", "instruction", "sentence", "problem", "ctx", "ctx_a", "input")


def remap_item_order(config: ConfigSpec, items: ConfigItems, content_ids: Sequence[str]) -> None:
    """Response ids in the harness v0.3 evaluation order -> upstream ids (in place).

    The Open LLM Leaderboard v1 details list examples in the order the v0.3 harness
    evaluated them (``random.Random(42).shuffle`` of each task's documents); row ``p`` of a
    task with ``n`` documents is upstream document ``harness_v1_order(n)[p]``. A task is a
    subscenario (MMLU subject) or the whole config; ``n`` is counted in the content.
    """
    from tinybench_builder.registry import harness_v1_order

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


def check_item_text(matrix: ResponseMatrix, items: ConfigItems, ct: ContentTable, where: str,
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


def fewshot_split(config: ConfigSpec) -> str | None:
    """The split the renderer draws few-shot examples from (``ConfigSpec.fewshot_split``)."""
    if config.renderer is None or not int(getattr(config, "num_fewshot", 0) or 0):
        return None
    return getattr(config, "fewshot_split", None) or None


def config_splits(config: ConfigSpec) -> list[str]:
    """Content splits a config needs: the tiny split, the full splits, the few-shot pool."""
    out = [config.tiny_split, *config.full_splits]
    few = fewshot_split(config)
    if few and few not in out:
        out.append(few)
    return out


def local_tiny_content(spec: BenchmarkSpec, content: Mapping[str, str] | None) -> str | None:
    """A single-config benchmark's tiny-split content when it is a local file, else None.

    :func:`tinybench_builder.dataset.responses.read_responses` passes it to the readers: AlpacaEval annotations
    name their items by instruction, which the content maps to its ``item_id``.
    """
    if len(spec.configs) != 1 or not content:
        return None
    c = spec.configs[0]
    value = content_value(spec, dict(content), c, c.tiny_split)
    return value if value is not None and Path(value).is_file() else None


def match_content(spec: BenchmarkSpec, matrix: ResponseMatrix, assigned: Mapping[str, ConfigItems],
                  contents: Mapping[tuple[str, str], ContentTable], item_order: str = "upstream") -> None:
    """Check that every response item of every config is a row of its tiny-split content.

    With ``item_order="harness_v1"`` the response ids are first mapped to upstream rows
    (:func:`remap_item_order`, in place); when the responses carry item text it is checked
    against the rows (:func:`check_item_text`). Raises :class:`BuildError`.
    """
    for c in spec.configs:
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
