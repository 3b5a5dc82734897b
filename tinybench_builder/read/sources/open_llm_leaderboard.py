"""Open LLM Leaderboard details: v1 (parquet per task and run) and v2 (lm-eval samples).

v1 (SOURCE_FORMATS.md section 1): a local folder laid out like the Hub dataset repo
``open-llm-leaderboard/details_<org>__<model>``::

    details_<org>__<model>/results_<ts>.json
    details_<org>__<model>/<ts>/details_harness|arc:challenge|25_<ts>.parquet

(early runs keep the colons of the timestamp). One row per example, in the leaderboard's
evaluation order (identical across models), so an item is its row position: ``<index>``, or
``<subject>.<index>`` for MMLU (``hendrycksTest-<subject>``). The per-example score may be a
``metrics`` struct, a flattened ``metrics.<m>`` column or a top-level ``<m>`` column; only
that column is read (pyarrow projection). Per model and task the newest run with full row
counts is used; partial runs are reported. MMLU runs of the old prompt (version 0) are skipped,
as the leaderboard did.

v2 (section 2): ``<org>__<model>/samples_<task>_<ts>.jsonl`` (early: ``.json``), read with
the lm-eval reader (:func:`read_v2`).

Download helpers (:func:`download_v1_details`, :func:`download_v2_details`) list a model's
repo files, select only the needed ones (:func:`select_v1_files`, :func:`select_v2_files`) and
fetch them in parallel with ``hf_hub_download`` (cached).
"""

from __future__ import annotations

import re
import warnings
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from tinybench_builder.errors import ReadFailed
from tinybench_builder.hub_requests import HUB_TIMEOUT_ENV, bound_hub_requests, hub_endpoint, hub_timed_out
from tinybench_builder.read.sources import ModelUnavailable, SourceError
from tinybench_builder.inputs import read_json, walk_files
from tinybench_builder.read.sources._common import Block, ModelPart, Options, Unit, map_units
from tinybench_builder.read.sources.reduce import assemble
from tinybench_builder.read.sources.lm_eval import TS_RE, norm_ts

#: rows per MMLU subject in the v1 details (sum 14042)
MMLU_ROWS: dict[str, int] = {
    "abstract_algebra": 100, "anatomy": 135, "astronomy": 152, "business_ethics": 100,
    "clinical_knowledge": 265, "college_biology": 144, "college_chemistry": 100,
    "college_computer_science": 100, "college_mathematics": 100, "college_medicine": 173,
    "college_physics": 102, "computer_security": 100, "conceptual_physics": 235, "econometrics": 114,
    "electrical_engineering": 145, "elementary_mathematics": 378, "formal_logic": 126, "global_facts": 100,
    "high_school_biology": 310, "high_school_chemistry": 203, "high_school_computer_science": 100,
    "high_school_european_history": 165, "high_school_geography": 198,
    "high_school_government_and_politics": 193, "high_school_macroeconomics": 390,
    "high_school_mathematics": 270, "high_school_microeconomics": 238, "high_school_physics": 151,
    "high_school_psychology": 545, "high_school_statistics": 216, "high_school_us_history": 204,
    "high_school_world_history": 237, "human_aging": 223, "human_sexuality": 131, "international_law": 121,
    "jurisprudence": 108, "logical_fallacies": 163, "machine_learning": 112, "management": 103,
    "marketing": 234, "medical_genetics": 100, "miscellaneous": 783, "moral_disputes": 346,
    "moral_scenarios": 895, "nutrition": 306, "philosophy": 311, "prehistory": 324,
    "professional_accounting": 282, "professional_law": 1534, "professional_medicine": 272,
    "professional_psychology": 612, "public_relations": 110, "security_studies": 245, "sociology": 201,
    "us_foreign_policy": 100, "virology": 166, "world_religions": 171,
}


class V1Task:
    def __init__(self, scenario: str, pattern: str, metric: str, rows: int | None, pipe: str):
        self.scenario = scenario
        self.pattern = re.compile(pattern)
        self.metric = metric
        self.rows = rows
        self.pipe = pipe  # file-name form, for fixtures and docs


#: the v1 benchmarks in leaderboard order: config-name pattern, headline metric, row count
V1_TASKS: list[V1Task] = [
    V1Task("arc", r"^harness_arc_challenge_\d+$", "acc_norm", 1172, "harness|arc:challenge|25"),
    V1Task("hellaswag", r"^harness_hellaswag_\d+$", "acc_norm", 10042, "harness|hellaswag|10"),
    V1Task("mmlu", r"^harness_hendrycksTest_(?P<sub>.+)_\d+$", "acc", None, "harness|hendrycksTest-{sub}|5"),
    V1Task("truthfulqa", r"^harness_truthfulqa_mc_\d+$", "mc2", 817, "harness|truthfulqa:mc|0"),
    V1Task("winogrande", r"^harness_winogrande_\d+$", "acc", 1267, "harness|winogrande|5"),
    V1Task("gsm8k", r"^harness_gsm8k_\d+$", "acc", 1319, "harness|gsm8k|5"),
    V1Task("drop", r"^harness_drop_\d+$", "f1", None, "harness|drop|3"),
]
V1_TOTAL_ROWS = 28659
MMLU_VERSION_KEY = "harness|hendrycksTest-abstract_algebra|5"
CONTENT_COLUMNS = ("example", "query", "choices", "gold", "gold_index")
_METRIC_NAMES = ("acc", "acc_norm", "mc1", "mc2", "em", "f1", "exact_match")

_DETAILS_RE = re.compile(r"^details_(?P<task>.+)_(?P<ts>[^_]+)\.parquet$")


def config_name(task_name: str) -> str:
    """``harness|arc:challenge|25`` -> ``harness_arc_challenge_25`` (the Hub config name)."""
    return re.sub(r"\W", "_", task_name)


def classify(task_name: str) -> tuple[str, str, str | None, int | None, int]:
    """(scenario, subscenario, default metric, expected rows, rank) of a details task name."""
    cfg = config_name(task_name)
    for rank, t in enumerate(V1_TASKS):
        m = t.pattern.match(cfg)
        if m:
            sub = m.groupdict().get("sub") or ""
            rows = MMLU_ROWS.get(sub) if t.scenario == "mmlu" else t.rows
            return t.scenario, sub, t.metric, rows, rank
    return cfg, "", None, None, len(V1_TASKS)


def task_selected(task: str | None, task_name: str) -> bool:
    """Does the ``--task`` value pick this details file? Accepts ``arc``, ``mmlu``,
    ``harness|arc:challenge|25``, ``harness_hendrycksTest_anatomy_5``, ``mmlu_anatomy`` ..."""
    if task is None:
        return True
    want = re.sub(r"\W", "_", task).strip("_").lower()
    cfg = config_name(task_name).lower()
    scenario, sub, *_ = classify(task_name)
    bare = cfg.removeprefix("harness_")
    noshot = re.sub(r"_\d+$", "", bare)
    cands = {scenario.lower(), cfg, bare, noshot}
    if scenario == "arc":
        cands.add("arc_challenge")
    if scenario == "truthfulqa":
        cands.add("truthfulqa_mc")
    if scenario == "mmlu":
        cands |= {"hendryckstest", "harness_hendryckstest", f"mmlu_{sub}".lower()}
    return want in cands


def split_details_name(name: str) -> tuple[str, str] | None:
    """``details_harness|gsm8k|5_2023-09-18T03-05-58.053951.parquet`` -> (task, ts)."""
    m = _DETAILS_RE.match(name)
    if not m or not TS_RE.match(m.group("ts")):
        return None
    return m.group("task"), m.group("ts")


def model_from_folder(name: str) -> str:
    """``details_EleutherAI__pythia-1b`` -> ``EleutherAI/pythia-1b``."""
    name = name.removeprefix("details_")
    return name.replace("__", "/", 1)


# --------------------------------------------------------------------------- scan
def scan(path: str | Path, options: Options | None = None) -> list[Unit]:
    """One unit per model folder holding ``details_*.parquet`` files."""
    options = options or Options()
    path = Path(path)
    if not path.exists():
        raise SourceError(f"{path}: no such file or folder")
    models: dict[Path, dict[str, Any]] = {}
    seen_tasks: set[str] = set()
    for f in walk_files(path):
        name = f.name
        parsed = split_details_name(name)
        if parsed:
            folder = f.parent.parent if TS_RE.match(f.parent.name) else f.parent
            seen_tasks.add(classify(parsed[0])[0])
            if not task_selected(options.task, parsed[0]):
                continue
            entry = models.setdefault(folder, {"files": [], "results": {}})
            entry["files"].append((parsed[0], norm_ts(parsed[1]), str(f)))
        elif name.startswith("results_") and name.endswith(".json"):
            folder = f.parent.parent if TS_RE.match(f.parent.name) else f.parent
            ts = name[len("results_"):-len(".json")]
            if TS_RE.match(ts):
                models.setdefault(folder, {"files": [], "results": {}})["results"][norm_ts(ts)] = str(f)
    units = []
    for folder, entry in models.items():
        if not entry["files"]:
            continue
        units.append(Unit("open_llm_leaderboard", str(folder), model_from_folder(folder.name), entry, options))
    if not units:
        if options.task and seen_tasks:
            raise SourceError(f"{path}: no details for task {options.task!r}; found: {', '.join(sorted(seen_tasks))}")
        raise SourceError(f"{path}: no Open LLM Leaderboard details parquet files found")
    return units


def read(path: str | Path, task: str | None = None, metric: str | None = None, workers: int | None = None,
         executor: str | None = None):
    """Read v1 details of one model folder or a folder of model folders into a matrix."""
    units = scan(path, Options(task=task, metric=metric))
    units[0].want_content = True
    return assemble(map_units(units, workers=workers, executor=executor))


def read_v2(path: str | Path, task: str | None = None, metric: str | None = None, filter: str | None = None,
            workers: int | None = None):
    """Leaderboard v2 details (``<org>__<model>/samples_<task>_<ts>.jsonl``): the lm-eval reader."""
    from tinybench_builder.read.sources import lm_eval

    return lm_eval.read(path, task=task, metric=metric, filter=filter, workers=workers)


# --------------------------------------------------------------------------- read one model
def _metric_column(schema, metric: str, path: str) -> str:
    import pyarrow as pa

    names = schema.names
    if "metrics" in names:
        typ = schema.field("metrics").type
        if pa.types.is_struct(typ) and metric in [typ.field(i).name for i in range(typ.num_fields)]:
            return f"metrics.{metric}"
    if f"metrics.{metric}" in names:
        return f"metrics.{metric}"
    if metric in names:
        return metric
    avail: list[str] = []
    if "metrics" in names and pa.types.is_struct(schema.field("metrics").type):
        typ = schema.field("metrics").type
        avail += [typ.field(i).name for i in range(typ.num_fields)]
    avail += [n[len("metrics."):] for n in names if n.startswith("metrics.")]
    avail += [n for n in names if n in _METRIC_NAMES]
    raise SourceError(f"{path}: no per-example metric {metric!r}; the file has: {', '.join(avail) or 'none'}")


def _open(path: str, shown: str | None = None):
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except Exception as exc:  # ArrowInvalid, OSError ...
        raise SourceError(f"{shown or path}: cannot read parquet ({exc}); the file is truncated or corrupt") from exc


def _read_scores(pf, path: str, metric: str) -> np.ndarray:
    col = _metric_column(pf.schema_arrow, metric, path)
    try:
        table = pf.read(columns=[col])
    except Exception as exc:
        raise SourceError(f"{path}: cannot read column {col!r} ({exc}); the file is truncated or corrupt") from exc
    arr = table.column(0)
    try:
        import pyarrow as pa
        import pyarrow.compute as pc

        if pa.types.is_struct(arr.type):  # ParquetFile.read keeps the struct, with only that field
            arr = pc.struct_field(arr, [arr.type.get_field_index(metric)])
        if pa.types.is_boolean(arr.type) or pa.types.is_integer(arr.type):
            arr = pc.cast(arr, pa.float64())
        elif pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
            arr = pc.cast(arr, pa.float64())
        return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.float64)
    except Exception as exc:
        raise SourceError(f"{path}: column {col!r} is not numeric ({exc})") from exc


def _read_content(pf, path: str) -> pd.DataFrame | None:
    cols = [c for c in CONTENT_COLUMNS if c in pf.schema_arrow.names]
    if not cols:
        return None
    try:
        table = pf.read(columns=cols)
    except Exception:  # noqa: BLE001 - an unreadable parquet is skipped
        return None
    return pd.DataFrame({c: table.column(c).to_pylist() for c in cols})


def _mmlu_version(results_path: str | None) -> int | None:
    if not results_path:
        return None
    data = read_json(results_path)
    v = (data.get("versions") or {}).get(MMLU_VERSION_KEY) if isinstance(data, dict) else None
    try:
        return int(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def read_unit(unit: Unit) -> ModelPart:
    entry = unit.payload
    opts = unit.options
    model = unit.model
    if "hub" in entry:  # a Hub repo: fetch this model's files first (into the worker's Hub cache)
        entry = fetch_hub_entry(unit)
    elif not Path(unit.source).name.startswith("details_") and entry["results"]:
        data = read_json(entry["results"][max(entry["results"])])
        name = ((data or {}).get("config_general") or {}).get("model_name") if isinstance(data, dict) else None
        if name:
            model = str(name)
    part = ModelPart(model, unit.source)

    # scenario -> sub -> ts -> (task_name, path)
    files: dict[str, dict[str, dict[str, tuple[str, str]]]] = defaultdict(lambda: defaultdict(dict))
    meta: dict[str, tuple[str | None, int]] = {}
    for task_name, ts, path in entry["files"]:
        scenario, sub, metric, _, rank = classify(task_name)
        meta[scenario] = (metric, rank)
        prev = files[scenario][sub].get(ts)
        if prev and prev[1] != path:
            raise SourceError(f"{path}: two details files for {task_name} in run {ts}: also {prev[1]}")
        files[scenario][sub][ts] = (task_name, path)

    for scenario in sorted(files, key=lambda s: meta[s][1]):
        default, rank = meta[scenario]
        metric = opts.metric or default
        if metric is None:
            raise SourceError(f"{unit.source}: unknown task {scenario!r}: choose its metric with --metric")
        subs = files[scenario]
        chosen = _choose_runs(scenario, subs, entry["results"], part, model, entry.get("fetch"))
        first_content = unit.want_content
        for sub in sorted(chosen):
            ts, (task_name, path), pf = chosen[sub]
            scores = _read_scores(pf, path, metric)
            content = _read_content(pf, path) if first_content else None
            _, _, _, rows, _ = classify(task_name)
            part.blocks.append(
                Block(scenario, sub, None, scores, content,
                      rank=rank, expected=rows, what=metric)
            )
    return part


def _choose_runs(scenario: str, subs: dict, results: dict[str, str], part: ModelPart, model: str,
                 fetch: Callable[[str], str] | None = None) -> dict:
    """sub -> (ts, (task_name, path), ParquetFile): newest run with full row counts.

    ``fetch`` maps a path of ``subs``/``results`` to a local file (Hub units download there, so
    that only the runs this search opens are fetched)."""
    local = fetch or (lambda path: path)
    all_ts = sorted({ts for runs in subs.values() for ts in runs}, reverse=True)
    skipped: list[str] = []
    if scenario == "mmlu":
        ok_ts = []
        for ts in all_ts:
            if _mmlu_version(local(results[ts]) if ts in results else None) == 0:
                skipped.append(ts)
                continue
            ok_ts.append(ts)
        if skipped:
            part.notes.append(f"{model}: mmlu: skipped run(s) {', '.join(skipped)} (old MMLU prompt, version 0)")
        all_ts = ok_ts
        if not all_ts:
            return {}
    opened: dict[tuple[str, str], Any] = {}

    def rows_ok(sub: str, ts: str) -> bool:
        task_name, path = subs[sub][ts]
        pf = opened.get((sub, ts)) or _open(local(path), path)
        opened[(sub, ts)] = pf
        expected = classify(task_name)[3]
        return expected is None or pf.metadata.num_rows == expected

    chosen: dict[str, Any] = {}
    if scenario == "mmlu":
        for ts in all_ts:  # newest run covering every subject with full rows
            if all(ts in subs.get(s, {}) for s in MMLU_ROWS) and all(rows_ok(s, ts) for s in MMLU_ROWS):
                chosen = {s: (ts, subs[s][ts], opened[(s, ts)]) for s in sorted(subs) if ts in subs[s]}
                if len(all_ts) > 1:
                    part.notes.append(f"{model}: mmlu: {len(all_ts)} runs, using the newest complete one ({ts})")
                return chosen
    partial: list[str] = []
    for sub in sorted(subs):
        runs = [ts for ts in all_ts if ts in subs[sub]]
        if not runs:
            continue
        good = next((ts for ts in runs if rows_ok(sub, ts)), None)
        ts = good or runs[0]
        if (sub, ts) not in opened:
            opened[(sub, ts)] = _open(local(subs[sub][ts][1]), subs[sub][ts][1])
        chosen[sub] = (ts, subs[sub][ts], opened[(sub, ts)])
        label = f"{scenario}/{sub}" if sub else scenario
        if good is None:
            n = opened[(sub, ts)].metadata.num_rows
            partial.append(f"{label} ({n} of {classify(subs[sub][ts][0])[3]} rows, run {ts})")
        elif scenario != "mmlu" and len(runs) > 1:
            part.notes.append(f"{model}: {label}: {len(runs)} runs, using the newest complete one ({ts})")
    if scenario == "mmlu":
        missing = sorted(set(MMLU_ROWS) - set(chosen))
        if missing:
            partial.append(f"mmlu: {len(missing)} of 57 subjects missing (e.g. {missing[0]})")
        if len(all_ts) > 1 or partial:
            part.notes.append(f"{model}: mmlu: no run covers all 57 subjects with full rows; newest file per subject")
    if partial:
        part.notes.append(f"{model}: partial run: {'; '.join(partial)}")
    return chosen


# --------------------------------------------------------------------------- Hub download
DEFAULT_ORGS = ("open-llm-leaderboard", "open-llm-leaderboard-old")


def hub_units(
    models: Sequence[str],
    options: Options | None = None,
    *,
    orgs: Sequence[str] = DEFAULT_ORGS,
    cache_dir: str | None = None,
    max_workers: int = 8,
) -> list[Unit]:
    """One unit per model whose v1 details are read from the Hub, not from a local folder.

    Nothing is fetched here: the unit's reader (on whichever worker runs it) lists the repo,
    downloads only the files :func:`select_v1_files` picks for ``options.task`` into
    huggingface_hub's cache (``cache_dir``, default the worker's ``HF_HUB_CACHE``), then reads
    them like a local folder. The endpoint and token come from the worker's environment
    (``HF_ENDPOINT``, ``HF_TOKEN``).
    """
    options = options or Options()
    seen: set[str] = set()
    units = []
    for model in models:
        model = model.strip()
        if not model or model in seen:
            continue
        if model.count("/") > 1 or any(c.isspace() for c in model):
            raise SourceError(f"{model!r}: not a model id (expected org/name)")
        seen.add(model)
        payload = {"hub": {"orgs": list(orgs), "cache_dir": cache_dir, "max_workers": max_workers}}
        units.append(Unit("open_llm_leaderboard", f"hub:{v1_repo_name(model)}", model, payload, options))
    return units


def fetch_hub_entry(unit: Unit) -> dict[str, Any]:
    """The ``{files, results}`` entry of :func:`scan` for a hub unit, read from the repo listing,
    with a ``fetch`` that downloads a file of it into the Hub cache on first use.

    Every run of the chosen task is listed, as in a local copy of the repo, so the same run is
    chosen and the same notes (superseded, partial runs) are made. The files that
    :func:`select_v1_files` picks (the newest run per task; the newest full MMLU run) are
    downloaded at once, in parallel; an older run only if the search for a complete run opens it.

    Raises
    ------
    ModelUnavailable : no details repo in any of the orgs (or a gated one), or no details for the task.
    Any huggingface_hub or network error otherwise (the caller retries those).
    """
    bound = bound_hub_requests()  # the Hub's HTTP client waits forever by default
    try:
        entry = _fetch_hub_entry(unit, bound)
    except Exception as exc:
        if hub_timed_out(exc):
            raise _hub_timeout(bound) from exc
        raise
    fetch = entry["fetch"]

    def bounded_fetch(path: str) -> str:
        try:
            return fetch(path)
        except Exception as exc:
            if hub_timed_out(exc):
                raise _hub_timeout(bound) from exc
            raise

    entry["fetch"] = bounded_fetch
    return entry


def _hub_timeout(bound: float) -> ReadFailed:
    """A timeout of the Hub, saying what was waited for (retried like any network error, then the
    model fails: exit 3)."""
    return ReadFailed(f"the Hub at {hub_endpoint()} did not answer in time (a request's bound: {bound:g} s, "
                      f"{HUB_TIMEOUT_ENV}; a download's read: HF_HUB_DOWNLOAD_TIMEOUT; metadata: HF_HUB_ETAG_TIMEOUT)")


def _fetch_hub_entry(unit: Unit, bound: float) -> dict[str, Any]:
    from huggingface_hub import HfApi, hf_hub_download
    from huggingface_hub.utils import GatedRepoError, RepositoryNotFoundError, disable_progress_bars

    disable_progress_bars()  # one bar per file on every worker would flood the client's terminal
    hub = unit.payload["hub"]
    api = HfApi()
    name = v1_repo_name(unit.model)
    info = None
    tried = []
    for org in hub["orgs"]:
        repo_id = f"{org}/{name}"
        try:
            info = api.repo_info(repo_id, repo_type="dataset", timeout=bound)  # its None beats the client's
            break
        except GatedRepoError as exc:
            raise ModelUnavailable(f"{repo_id}: gated repo; accept its terms on the Hub ({exc})") from exc
        except RepositoryNotFoundError:
            tried.append(repo_id)
    if info is None:
        raise ModelUnavailable(f"no details repo: {', '.join(tried)} not found")
    task = unit.options.task
    entry: dict[str, Any] = {"files": [], "results": {}}
    files = [s.rfilename for s in (getattr(info, "siblings", None) or [])]
    prefix = f"hf://datasets/{repo_id}/"  # how messages name a file of the repo
    for f in files:
        base = f.rsplit("/", 1)[-1]
        parsed = split_details_name(base)
        if parsed and task_selected(task, parsed[0]):
            entry["files"].append((parsed[0], norm_ts(parsed[1]), prefix + f))
        elif base.startswith("results_") and base.endswith(".json") and TS_RE.match(base[len("results_"):-len(".json")]):
            entry["results"][norm_ts(base[len("results_"):-len(".json")])] = prefix + f
    if not entry["files"]:
        what = f"task {task!r}" if task else "any task"
        raise ModelUnavailable(f"{repo_id}: no details files for {what}")

    local: dict[str, str] = {}

    def download(filename: str) -> str:
        return hf_hub_download(repo_id, filename, repo_type="dataset", revision=info.sha,
                               cache_dir=hub.get("cache_dir"))

    def fetch(path: str) -> str:
        filename = path.removeprefix(prefix)
        if filename not in local:
            local[filename] = download(filename)
        return local[filename]

    first = select_v1_files(files, [task] if task else None)
    with ThreadPoolExecutor(max_workers=max(1, int(hub.get("max_workers") or 8))) as pool:
        local.update(zip(first, pool.map(download, first)))
    entry["fetch"] = fetch
    return entry


def v1_repo_name(model: str) -> str:
    """``org/model`` -> ``details_org__model`` (the repo name inside the leaderboard org)."""
    return "details_" + model.replace("/", "__")


def v2_repo_name(model: str) -> str:
    return model.replace("/", "__") + "-details"


def select_v1_files(files: Iterable[str], tasks: Sequence[str] | None = None, all_runs: bool = False) -> list[str]:
    """Which files of a v1 details repo to fetch: per task the newest run (MMLU: the newest run
    holding all 57 subjects, else the newest file per subject), plus those runs' results json."""
    files = list(files)
    runs: dict[str, dict[str, dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
    results: dict[str, str] = {}
    for f in files:
        name = f.rsplit("/", 1)[-1]
        parsed = split_details_name(name)
        if parsed:
            task_name, ts = parsed
            if tasks and not any(task_selected(t, task_name) for t in tasks):
                continue
            scenario, sub, *_ = classify(task_name)
            runs[scenario][sub][norm_ts(ts)] = f
        elif name.startswith("results_") and name.endswith(".json"):
            ts = name[len("results_"):-len(".json")]
            if TS_RE.match(ts):
                results[norm_ts(ts)] = f
    out: set[str] = set()
    used_ts: set[str] = set()
    for scenario, subs in runs.items():
        if all_runs:
            for by_ts in subs.values():
                out.update(by_ts.values())
                used_ts.update(by_ts)
            continue
        all_ts = sorted({ts for s in subs.values() for ts in s}, reverse=True)
        if scenario == "mmlu":
            full = next((ts for ts in all_ts if all(ts in subs.get(s, {}) for s in MMLU_ROWS)), None)
            if full:
                out.update(subs[s][full] for s in subs if full in subs[s])
                used_ts.add(full)
                continue
        for by_ts in subs.values():
            ts = max(by_ts)
            out.add(by_ts[ts])
            used_ts.add(ts)
    out.update(results[ts] for ts in used_ts if ts in results)
    return sorted(out)


def select_v2_files(files: Iterable[str], tasks: Sequence[str] | None = None) -> list[str]:
    """Which files of a v2 details repo to fetch: newest samples file per task (+ its results)."""
    from tinybench_builder.read.sources.lm_eval import split_samples_name

    newest: dict[str, tuple[str, str]] = {}
    results: dict[str, str] = {}
    for f in files:
        name = f.rsplit("/", 1)[-1]
        parsed = split_samples_name(name)
        if parsed:
            task, ts = parsed
            if tasks and not any(task == t or task.startswith(t + "_") for t in tasks):
                continue
            ts = norm_ts(ts)
            if task not in newest or ts > newest[task][0]:
                newest[task] = (ts, f)
        elif name.startswith("results_") and name.endswith(".json"):
            results[norm_ts(name[len("results_"):-len(".json")])] = f
    out = {f for _, f in newest.values()}
    out.update(results[ts] for ts, _ in newest.values() if ts in results)
    return sorted(out)


def _download(
    models: Sequence[str],
    local_dir: str | Path,
    repo_name: Callable[[str], str],
    select: Callable[[list[str]], list[str]],
    orgs: Sequence[str],
    max_workers: int,
    token: str | None,
    api: Any,
    download: Callable[..., str] | None,
    progress: bool,
) -> dict[str, Path]:
    bound_hub_requests()  # the Hub's HTTP client waits forever by default
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi(token=token)
    if download is None:
        from huggingface_hub import hf_hub_download

        download = hf_hub_download
    local_dir = Path(local_dir)
    jobs: list[tuple[str, str, Path]] = []
    folders: dict[str, Path] = {}
    last: Exception | None = None
    for model in models:
        name = repo_name(model)
        for org in orgs:
            repo_id = f"{org}/{name}"
            try:
                files = list(api.list_repo_files(repo_id, repo_type="dataset"))
            except Exception as exc:  # noqa: BLE001 - RepositoryNotFoundError, GatedRepoError, HTTP errors
                last = exc
                continue
            wanted = select(files)
            target = local_dir / name
            folders[model] = target
            jobs.extend((repo_id, f, target) for f in wanted)
            break
        else:
            warnings.warn(f"{model}: no details repo found in {', '.join(orgs)} ({last})", stacklevel=3)

    def fetch(job: tuple[str, str, Path]) -> str:
        repo_id, filename, target = job
        return download(repo_id=repo_id, filename=filename, repo_type="dataset", local_dir=str(target), token=token)

    from tinybench_builder.progress import bar

    with bar(total=len(jobs), unit="file", desc="downloading", enabled=progress) as files_bar:
        with ThreadPoolExecutor(max_workers=max_workers) as pool:
            for _ in pool.map(fetch, jobs):
                files_bar.update(1)
    return folders


def download_v1_details(
    models: Sequence[str],
    local_dir: str | Path,
    tasks: Sequence[str] | None = None,
    *,
    orgs: Sequence[str] = DEFAULT_ORGS,
    all_runs: bool = False,
    max_workers: int = 8,
    token: str | None = None,
    api: Any = None,
    download: Callable[..., str] | None = None,
    progress: bool = True,
) -> dict[str, Path]:
    """Fetch the needed v1 details files of each model into ``local_dir/details_<org>__<model>/``.

    Only the selected files are downloaded (:func:`select_v1_files`), in parallel;
    ``hf_hub_download`` skips files already present. Returns ``{model: folder}``; the folders
    can be passed to :func:`read` / ``tinybench-builder ingest``. ``api``/``download`` are injectable for tests.
    """
    return _download(models, local_dir, v1_repo_name, lambda fs: select_v1_files(fs, tasks, all_runs),
                     orgs, max_workers, token, api, download, progress)


def download_v2_details(
    models: Sequence[str],
    local_dir: str | Path,
    tasks: Sequence[str] | None = None,
    *,
    orgs: Sequence[str] = ("open-llm-leaderboard",),
    max_workers: int = 8,
    token: str | None = None,
    api: Any = None,
    download: Callable[..., str] | None = None,
    progress: bool = True,
) -> dict[str, Path]:
    """Fetch the newest samples file per task of each model's v2 details repo (gated: accept the
    terms on the Hub first). Returns ``{model: folder}`` for :func:`read_v2`."""
    return _download(models, local_dir, v2_repo_name, lambda fs: select_v2_files(fs, tasks),
                     orgs, max_workers, token, api, download, progress)
