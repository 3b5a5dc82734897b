"""What goes into a tiny dataset folder: :func:`plan_folder`, a pure function of the build's inputs and fits.

The plan holds every data table (the tiny split's rows in anchor order, the full splits, the
registry's columns, ``input_formatted`` rendered, ClassLabel features), the estimators and
their validation reports, the manifest's fields (all but the file hashes) and what the card
shows. :func:`tinybench_builder.dataset.build.write_folder` writes it; nothing here touches the disk.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import pyarrow as pa

from tinybench_builder import __version__
from tinybench_builder import estimator as _estimator
from tinybench_builder.registry import REGISTRY, BenchmarkSpec, ConfigSpec
from tinybench_builder.dataset.cards import CardInputs
from tinybench_builder.dataset.options import BuildOptions
from tinybench_builder.errors import BuildError
from tinybench_builder.dataset.content import ID_COLUMNS, IDS_ONLY, INPUT_COLUMN, ContentTable, fewshot_split, logged_prompts
from tinybench_builder.dataset.harness_tasks import row_keys, task_files, task_name
from tinybench_builder.dataset.lighteval_tasks import lighteval_files
from tinybench_builder.layout import (DATASET_FORMAT, ITEM_ID_COLUMN, MANIFEST_SCHEMA_VERSION, POOL_SPLIT, config_anchor_ids,
                            config_design_hash, config_item_ids, data_path, dataset_design_hash, to_jsonable)
from tinybench_builder.read import ResponseMatrix
from tinybench_builder.dataset.responses import ConfigItems

__all__ = ["BuildInputs", "EstimatorFit", "DataFile", "FolderPlan", "plan_folder", "split_table", "with_item_ids"]


@dataclass(frozen=True)
class BuildInputs:
    """What a build read: the responses, their input records, the items of each config, the
    content, and the benchmark built (a bundle restricted to the configs that have responses)."""

    matrix: ResponseMatrix
    records: list[dict]
    assigned: dict[str, ConfigItems]
    contents: dict[tuple[str, str], ContentTable]
    spec: BenchmarkSpec


@dataclass(frozen=True)
class EstimatorFit:
    """One fitted estimator: its folder (``""`` = the root), its configs, the estimator and its
    validation report, and each config's map from estimator item id to content id."""

    path: str
    configs: tuple[ConfigSpec, ...]
    estimator: _estimator.TinyEstimator
    report: dict
    content_of: dict[str, dict[str, str]]
    #: the training matrix (estimator item ids): the changelog re-estimates its models
    matrix: ResponseMatrix | None = None


@dataclass(frozen=True)
class DataFile:
    """One data file: its repository path and its rows."""

    path: str
    table: pa.Table


@dataclass(frozen=True)
class FolderPlan:
    """Everything a folder holds: estimators (+ reports), data files, text files (the lm-eval
    task files, ``{path: text}``), the manifest's fields (all but ``files``, which the writer
    hashes last) and the card's inputs."""

    estimators: tuple[EstimatorFit, ...]
    data: tuple[DataFile, ...]
    manifest: dict
    card: CardInputs
    texts: tuple[tuple[str, str], ...] = ()


def plan_folder(spec: BenchmarkSpec, inputs: BuildInputs, fits: Sequence[EstimatorFit],
                options: BuildOptions, previous: Mapping | None = None, updated_from: Mapping | None = None) -> FolderPlan:
    """The folder of ``spec`` built from ``inputs`` and ``fits`` with ``options`` (pure).

    ``previous``: what changed since the previous version (:func:`tinybench_builder.dataset.versions.compare`),
    kept in the manifest for the card's changelog; ``updated_from``: the version whose design
    this build keeps (``build --update-from``).
    """
    contents = inputs.contents
    configs_info: dict[str, dict] = {}
    prompt_checks: dict[str, dict] = {}
    estimators = []
    data = []
    anchors_of: dict[str, list[str]] = {}
    row_ids: dict[str, tuple] = {}  # config -> (key column, row keys, anchor ids): the task files' table
    for fit in fits:
        est = fit.estimator
        estimators.append({"path": fit.path, "configs": [c.name for c in fit.configs],
                           "scenarios": list(est.scenarios), "n_anchors": len(est.anchor_ids),
                           "n_items": len(est.item_ids), "n_models": int(fit.report.get("n_models", 0)),
                           "n_dims": int(est.n_dims), **_update_of(fit.report)})
        for c in fit.configs:
            ct = contents[(c.name, c.tiny_split)]
            row_of = {cid: r for r, cid in enumerate(ct.item_ids)}
            anchors = config_anchor_ids(est, c.scenario)
            anchors_of[c.name] = list(est.anchor_ids) if len(est.scenarios) <= 1 else anchors
            rows = [row_of[fit.content_of[c.name][a]] for a in anchors]
            few_name = fewshot_split(c)
            few = {few_name: contents[(c.name, few_name)].table.to_pylist()} \
                if few_name and (c.name, few_name) in contents else {}
            check = _prompt_check(c, inputs, ct, few)
            if check is not None:
                prompt_checks[c.name] = check
            # the pool: every item of the config, in estimator order, rendered as the tiny split's
            # rows are (adaptive evaluation asks from all of them)
            pool_ids = config_item_ids(est, c.scenario)
            pool = [row_of[fit.content_of[c.name][iid]] for iid in pool_ids]
            splits = {}
            for split, sel in ((c.tiny_split, rows), *((s, None) for s in c.full_splits if (c.name, s) in contents),
                               (POOL_SPLIT, pool)):
                source = c.tiny_split if split == POOL_SPLIT else split
                table = split_table(c, source, contents[(c.name, source)], sel, few, f"config {c.name!r}, split {split!r}")
                ids = (anchors if split == c.tiny_split else pool_ids if split == POOL_SPLIT
                       else contents[(c.name, split)].item_ids)
                table = with_item_ids(c, table, ids)
                rel = data_path(c.name, split)
                data.append(DataFile(rel, table))
                if split == c.tiny_split and task_name(c) and contents[(c.name, split)].source.get("kind") != IDS_ONLY:
                    key, keys = row_keys(table.to_pylist(), c.item_id_column)
                    row_ids[c.name] = (key, keys, anchors)
                splits[split] = {"path": rel, "rows": table.num_rows, "columns": table.column_names}
            configs_info[c.name] = {
                "scenario": c.scenario, "tiny_split": c.tiny_split, "splits": splits,
                "pool_split": POOL_SPLIT, "estimator": fit.path, "harness_task": task_name(c),
                **({"harness_builtin_task": c.harness_task} if task_name(c) != c.harness_task else {}),
                "harness_metric": getattr(c, "harness_metric", None),
                "harness_metric_alternatives": list(getattr(c, "harness_metric_alternatives", ()) or ()),
                "renderer": c.renderer,
                "source_task": c.source_task, "metric": c.metric,
            }
            norm = (est.metadata.get("normalization") or {}).get(c.scenario)
            if norm is not None:  # the leaderboard's normalised score from the estimate (v2)
                configs_info[c.name]["normalization"] = norm
    config_hashes = {}
    for fit in fits:
        for c in fit.configs:
            config_hashes[c.name] = config_design_hash(fit.estimator, c.scenario)
    design = {"hash": dataset_design_hash([f.estimator for f in fits], config_hashes), "configs": config_hashes}
    # the earlier versions whose results this one estimates: those every estimator re-estimates
    kept = [[d["version"] for d in f.estimator.known_designs()[1:] if d["version"]] for f in fits]
    design["re_estimates"] = [v for v in kept[0] if all(v in k for k in kept[1:])] if kept else []
    if updated_from:
        design["updated_from"] = dict(updated_from)
    manifest: dict[str, Any] = {
        "format": DATASET_FORMAT,
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "name": spec.name,
        "pretty_name": spec.pretty_name,
        "version": str(options.version),
        "repo_id": options.repo_id_for(spec.name),
        "tag": options.tag_for(),
        "builder_version": __version__,
        "estimator_schema_version": int(_estimator.SCHEMA_VERSION),
        "joint": bool(spec.joint),
        "configs": configs_info,
        "estimators": estimators,
        "design": design,
        "inputs": {
            "responses": inputs.records,
            "content": {f"{c}/{s}": ct.source for (c, s), ct in contents.items()},
        },
        "parameters": {"anchors": options.anchors_for(spec.anchors), "seed": int(options.seed),
                       "item_order": options.item_order, **options.fit.record()},
    }
    if spec.custom is not None:  # a benchmark from a spec file: the folder describes it
        manifest["spec"] = spec.custom
    registered = REGISTRY.get(spec.name)
    if registered is not None and len(registered.configs) > len(spec.configs):  # a bundle built in part
        manifest["configs_absent"] = [c.name for c in registered.configs if c.name not in configs_info]
    missing = sorted({c for (c, _), ct in contents.items() if ct.source.get("kind") == IDS_ONLY})
    if missing:  # rows without item text: the card says so, `release --push` refuses unless allowed
        manifest["content_missing"] = missing
    if prompt_checks:  # the rendered prompts against those the evaluation logged (v2 details)
        manifest["prompt_check"] = prompt_checks
    if previous:
        manifest["previous"] = dict(previous)
    with_content = {n: i for n, i in configs_info.items() if n not in missing}
    texts = task_files(spec, with_content, manifest["repo_id"], manifest["tag"], manifest["version"], row_ids, design)
    if texts:
        manifest["harness_tasks"] = sorted(texts)
    lighteval = lighteval_files(spec, with_content, manifest["repo_id"], manifest["tag"], manifest["version"], row_ids,
                                design)
    if lighteval:  # the lighteval custom tasks (--custom-tasks), hashed in the manifest like every file
        manifest["lighteval_tasks"] = sorted(lighteval)
        texts = {**texts, **lighteval}
    manifest = to_jsonable(manifest)
    card = CardInputs(manifest, [(fit.path, to_jsonable(fit.report)) for fit in fits], anchors_of, spec)
    return FolderPlan(tuple(fits), tuple(data), manifest, card, tuple(sorted(texts.items())))


def _update_of(report: Mapping[str, Any]) -> dict[str, Any]:
    """``{"kept": ...}`` of an estimator entry when the fit kept a previous version's design
    (``build --update-from``; the card's *How it was built* says what was kept), else ``{}``."""
    kept, grown = report.get("kept_design"), report.get("extended")
    if kept:
        return {"kept": {"from": kept["version"], "irt_only_items": int(kept.get("irt_only_items", 0))}}
    if grown:
        return {"kept": {"from": grown["version"], "new_scenarios": list(grown["new_scenarios"]),
                           "calibration_models": int(grown["calibration_models"])}}
    return {}


# ============================================================================ data tables
def with_item_ids(config: ConfigSpec, table: pa.Table, ids: Sequence[str]) -> pa.Table:
    """``table`` with an ``item_id`` column first (the row's id; in the tiny split the estimator's
    item id), unless it already has one (``item_id`` or the config's own ``item_id_column``).

    Added to every split of a config, so that its splits share their columns (``load_dataset``
    of a config reads its splits with one schema).
    """
    import datasets

    if ITEM_ID_COLUMN in table.column_names or config.item_id_column in table.column_names:
        return table
    if len(ids) != table.num_rows:
        raise BuildError(f"config {config.name!r}: {len(ids)} item ids for {table.num_rows} rows")
    features = datasets.Features.from_arrow_schema(table.schema)
    out = datasets.Features({ITEM_ID_COLUMN: datasets.Value("string"), **features})
    return pa.Table.from_arrays([pa.array([str(i) for i in ids], type=pa.string()), *table.columns],
                                schema=out.arrow_schema)


def _normalize_type(t: pa.DataType) -> pa.DataType:
    """large_string/large_list -> string/list (what the Hub datasets hold), recursively."""
    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_large_list(t) or pa.types.is_list(t):
        return pa.list_(_normalize_type(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _normalize_type(f.type)) for f in t])
    return t


def _output_columns(config: ConfigSpec, table: pa.Table) -> list[str]:
    """The registry's columns, or (a custom benchmark) every content column, the item id first."""
    if config.columns:
        return [c for c in config.columns if c != INPUT_COLUMN]
    first = [config.item_id_column] if config.item_id_column in table.column_names else []
    return first + [c for c in table.column_names if c not in (config.item_id_column, INPUT_COLUMN)]


def split_table(config: ConfigSpec, split: str, ct: ContentTable, rows: Sequence[int] | None,
                fewshot: Mapping[str, list[dict]], where: str) -> pa.Table:
    """The output table of one split: the chosen rows, the registry's columns, ``input_formatted``.

    ``rows`` are positions in the full upstream split (the anchors, for the tiny split) or
    None (the whole split); ``fewshot`` maps the few-shot split name to its rows.
    """
    import datasets

    table = ct.table if rows is None else ct.table.take(pa.array(rows, type=pa.int64()))
    cols = _output_columns(config, table)
    if ct.source.get("kind") == IDS_ONLY:  # no item text was available: the id columns the table has
        cols = [c for c in cols if c in table.column_names]
    if "doc_id" in cols and "doc_id" not in table.column_names:  # the row's id in its split (lm-eval's doc_id)
        ids = [ct.item_ids[r] for r in (rows if rows is not None else range(ct.table.num_rows))]
        ids = [i.rpartition(".")[2] for i in ids]
        table = table.append_column("doc_id", pa.array([int(i) for i in ids] if all(i.isdigit() for i in ids) else ids))
    # the other ids derived from the responses' item ids exist where the content came from them
    cols = [c for c in cols if c in table.column_names or c not in ID_COLUMNS]
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
    if config.renderer is not None and (not config.columns or INPUT_COLUMN in config.columns) \
            and ct.source.get("kind") != IDS_ONLY:
        from tinybench_builder.registry import render_split

        texts = render_split(config, table.to_pylist(), dict(fewshot), split=split, upstream_index=rows,
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


def _prompt_check(config: ConfigSpec, inputs: BuildInputs, ct: ContentTable,
                  fewshot: Mapping[str, list[dict]]) -> dict | None:
    """Every item's rendered ``input_formatted`` against the prompt its responses logged (lm-eval
    records' ``arg_0``: v2 details carry it): ``{"checked", "equal", "differ"}`` and the first
    difference; None when nothing was logged or nothing is rendered. A difference is printed: a
    run with a chat template logs the chat-formatted prompt, which the plain prompt cannot equal."""
    if config.renderer is None or config.content_from != "source" or ct.source.get("kind") == IDS_ONLY \
            or config.name not in inputs.assigned:  # content from the records themselves (v2 details) only
        return None
    logged = logged_prompts(config, inputs.matrix, inputs.assigned[config.name])
    if not logged:
        return None
    from tinybench_builder.registry import render_split

    rows = ct.table.to_pylist()
    rendered = dict(zip(ct.item_ids, render_split(config, rows, dict(fewshot), n_eval=len(rows))))
    pairs = [(cid, rendered[cid], text) for cid, text in sorted(logged.items()) if cid in rendered]
    differ = [(cid, a, b) for cid, a, b in pairs if a != b]
    out: dict = {"checked": len(pairs), "equal": len(pairs) - len(differ), "differ": len(differ)}
    if differ:
        cid, a, b = differ[0]
        at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        out["first_difference"] = {"item": cid, "at": at, "rendered": a[max(0, at - 40): at + 40],
                                   "logged": b[max(0, at - 40): at + 40]}
        print(f"note: config {config.name!r}: {len(differ)} of {len(pairs)} rendered prompts differ from the "
              f"logged ones (first: item {cid!r} at character {at}: rendered {a[at:at + 30]!r}, logged "
              f"{b[at:at + 30]!r}); a run with a chat template logs the chat-formatted prompt", file=sys.stderr)
    return out


def _class_label_array(arr: pa.Array, names: list[str], where: str) -> pa.Array:
    """Integer class indices from ints (checked) or label strings (``"A"`` -> 0)."""
    values = arr.to_pylist()
    out: list[int | None] = []
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
