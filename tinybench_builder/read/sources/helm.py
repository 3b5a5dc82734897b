"""HELM run folders (crfm-helm; SOURCE_FORMATS.md section 5).

``benchmark_output/runs/<suite>/<run_name>/`` holds ``run_spec.json``,
``per_instance_stats.json`` and (after ``helm-summarize``) ``instances.json``. For every run the
main metric of its HELM Lite run group is read (table :data:`LITE_MAIN`, from
``schema_lite.yaml``): the per-instance stat whose ``name.name`` is the main name and
``name.split`` the main split, without perturbation. Several train trials are averaged.

Item ids: ``<subscenario>.<instance_id>`` when the run group is split into runs by a scenario
argument (MMLU subject, MATH subject and level, LegalBench subset, WMT language pair), else
``<instance_id>``. ``task`` picks the run group (``mmlu``, ``gsm``, ...). The model name is
``run_spec.adapter_spec.model``; ``instances.json`` gives the content (input text, references).
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tinybench_builder.read.sources import SourceError
from tinybench_builder.read.matrix import natural_key
from tinybench_builder.inputs import read_json, walk_files
from tinybench_builder.read.sources._common import Block, ModelPart, Options, Unit, map_units
from tinybench_builder.read.sources.reduce import assemble

#: run group -> (main stat name, main split, scenario args that split the group into runs)
LITE_MAIN: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "narrative_qa": ("f1_score", "test", ()),
    "natural_qa_openbook_longans": ("f1_score", "valid", ()),
    "natural_qa_closedbook": ("f1_score", "valid", ()),
    "openbookqa": ("exact_match", "test", ()),
    "mmlu": ("exact_match", "test", ("subject",)),
    "math_chain_of_thought": ("math_equiv_chain_of_thought", "test", ("subject", "level")),
    "gsm": ("final_number_exact_match", "test", ()),
    "legalbench": ("quasi_exact_match", "test", ("subset",)),
    "med_qa": ("quasi_exact_match", "test", ()),
    "wmt_14": ("bleu_4", "test", ("language_pair",)),
}
RUN_SPEC = "run_spec.json"
STATS = "per_instance_stats.json"
INSTANCES = "instances.json"


def _run_args(name: str) -> dict[str, str]:
    """``mmlu:subject=anatomy,method=x,model=y`` -> {subject: anatomy, method: x, model: y}."""
    _, _, rest = name.partition(":")
    out = {}
    for piece in rest.split(","):
        k, sep, v = piece.partition("=")
        if sep:
            out[k.strip()] = v.strip()
    return out


def run_group(spec: dict) -> str:
    """The HELM Lite run group of a run spec (from ``groups``, else from the run name)."""
    for g in spec.get("groups") or []:
        if g in LITE_MAIN:
            return g
    name = str(spec.get("name", ""))
    scen = name.split(":", 1)[0]
    args = {**_run_args(name), **{str(k): str(v) for k, v in ((spec.get("scenario_spec") or {}).get("args") or {}).items()}}
    if scen == "natural_qa" and args.get("mode"):
        return f"natural_qa_{args['mode']}"
    if scen == "commonsense" and args.get("dataset"):
        return args["dataset"]
    if scen == "math" and str(args.get("use_chain_of_thought", "")).lower() == "true":
        return "math_chain_of_thought"
    groups = spec.get("groups") or []
    return str(groups[0]) if groups else scen


def subscenario(spec: dict, group: str) -> str:
    keys = LITE_MAIN.get(group, ("", "", ()))[2]
    if not keys:
        return ""
    args = {**_run_args(str(spec.get("name", ""))),
            **{str(k): str(v) for k, v in ((spec.get("scenario_spec") or {}).get("args") or {}).items()}}
    vals = [str(args[k]) for k in keys if k in args]
    return "_".join(vals).replace(".", "_")


def scan(path: str | Path, options: Options | None = None) -> list[Unit]:
    options = options or Options()
    path = Path(path)
    if not path.exists():
        raise SourceError(f"{path}: no such file or folder")
    if path.is_file():
        path = path.parent
    run_dirs = [f.parent for f in walk_files(path, max_depth=5) if f.name == RUN_SPEC]
    if not run_dirs:
        raise SourceError(f"{path}: no HELM runs ({RUN_SPEC}) found")
    by_model: dict[str, dict[tuple[str, str], list[dict]]] = defaultdict(lambda: defaultdict(list))
    groups_seen: set[str] = set()
    for d in sorted(run_dirs, key=lambda p: natural_key(str(p))):
        spec = read_json(d / RUN_SPEC)
        if not isinstance(spec, dict):
            raise SourceError(f"{d / RUN_SPEC}: not a run spec")
        model = ((spec.get("adapter_spec") or {}).get("model")) or _run_args(str(spec.get("name", ""))).get("model")
        if not model:
            raise SourceError(f"{d / RUN_SPEC}: no adapter_spec.model")
        group = run_group(spec)
        groups_seen.add(group)
        if options.task and options.task not in (group, str(spec.get("name", "")).split(":", 1)[0]):
            continue
        if group in LITE_MAIN:
            metric, split, _ = LITE_MAIN[group]
        elif options.metric:
            metric, split = options.metric, "test"
        else:
            raise SourceError(
                f"{d}: run group {group!r} is not a HELM Lite scenario; choose its metric with --metric "
                f"(or --task one of {', '.join(LITE_MAIN)})"
            )
        metric = options.metric or metric
        sub = subscenario(spec, group)
        by_model[str(model)][(group, sub)].append(
            {"dir": str(d), "group": group, "sub": sub, "metric": metric, "split": split, "name": spec.get("name")}
        )
    if not by_model:
        raise SourceError(f"{path}: no HELM runs for task {options.task!r}; run groups found: {', '.join(sorted(groups_seen))}")
    units = []
    for model, runs in by_model.items():
        chosen, notes = [], []
        for (group, sub), cands in runs.items():
            chosen.append(cands[-1])
            if len(cands) > 1:
                notes.append(
                    f"{model}: {group}{'/' + sub if sub else ''}: {len(cands)} runs, using {cands[-1]['dir']}"
                )
        units.append(Unit("helm", str(path), model, {"runs": chosen, "notes": notes}, options))
    return units


def read(path: str | Path, task: str | None = None, metric: str | None = None, workers: int | None = None):
    """Read HELM run folders (a suite folder, a ``runs`` folder or one run) into a matrix."""
    units = scan(path, Options(task=task, metric=metric))
    units[0].want_content = True
    return assemble(map_units(units, workers=workers))


def _stat_value(stat: dict) -> float:
    if stat.get("mean") is not None:
        return float(stat["mean"])
    count = stat.get("count") or 0
    return float(stat.get("sum", math.nan)) / count if count else math.nan


def read_run(run: dict, want_content: bool = False) -> tuple[Block, list[str]]:
    d = Path(run["dir"])
    metric, split = run["metric"], run["split"]
    stats = read_json(d / STATS) if (d / STATS).exists() else None
    if stats is None:
        raise SourceError(f"{d / STATS}: missing (the run has no per-instance stats)")
    if not isinstance(stats, list):
        raise SourceError(f"{d / STATS}: expected a list of per-instance stats")
    values: dict[str, list[float]] = {}
    seen_trials: dict[tuple[str, Any], float] = {}
    names_seen: set[str] = set()
    for i, entry in enumerate(stats):
        if not isinstance(entry, dict) or "instance_id" not in entry:
            raise SourceError(f"{d / STATS}: entry {i}: no instance_id")
        if entry.get("perturbation"):
            continue
        iid = str(entry["instance_id"])
        found = None
        for s in entry.get("stats") or []:
            name = s.get("name") or {}
            if name.get("split") != split or name.get("perturbation"):
                continue
            names_seen.add(str(name.get("name")))
            if name.get("name") == metric and not name.get("sub_split"):
                found = s
                break
        vals = values.setdefault(iid, [])
        if found is not None:
            try:
                v = _stat_value(found)
            except (TypeError, ValueError):
                raise SourceError(f"{d / STATS}: entry {i}: stat {metric} is not a number") from None
            key = (iid, entry.get("train_trial_index", 0))
            if key in seen_trials:
                if seen_trials[key] != v and not (math.isnan(v) and math.isnan(seen_trials[key])):
                    raise SourceError(
                        f"{d / STATS}: entry {i}: conflicting duplicate for instance {iid} "
                        f"(trial {key[1]}): {metric}={v!r} vs {seen_trials[key]!r}"
                    )
                continue
            seen_trials[key] = v
            vals.append(v)
    if not values:
        raise SourceError(f"{d / STATS}: no unperturbed instances")
    if not any(values.values()):
        raise SourceError(
            f"{d / STATS}: no per-instance stat {metric!r} on split {split!r}; "
            f"stats there: {', '.join(sorted(names_seen)) or 'none'} (choose with --metric)"
        )
    notes = []
    multi = sum(len(v) > 1 for v in values.values())
    if multi:
        notes.append(f"{run['name']}: {multi} instance(s) with several train trials, averaged")
    index = np.array(list(values), dtype=object)
    scores = np.array([float(np.mean(v)) if v else math.nan for v in values.values()])
    content = _instances(d, index) if want_content else None
    block = Block(run["group"], run["sub"], index, scores, content,
                  rank=list(LITE_MAIN).index(run["group"]) if run["group"] in LITE_MAIN else 1000, what=metric)
    return block, notes


def _instances(d: Path, index: np.ndarray) -> pd.DataFrame | None:
    if not (d / INSTANCES).exists():
        return None
    data = read_json(d / INSTANCES)
    rows: dict[str, dict[str, Any]] = {}
    for inst in data if isinstance(data, list) else []:
        if not isinstance(inst, dict) or inst.get("perturbation") or "id" not in inst:
            continue
        refs = inst.get("references") or []
        correct = [((r.get("output") or {}).get("text")) for r in refs if "correct" in (r.get("tags") or [])]
        rows.setdefault(str(inst["id"]), {
            "question": (inst.get("input") or {}).get("text"),
            "references": [((r.get("output") or {}).get("text")) for r in refs],
            "answer": correct[0] if correct else None,
        })
    return pd.DataFrame([rows.get(i, {"question": None, "references": None, "answer": None}) for i in index])


def read_unit(unit: Unit) -> ModelPart:
    part = ModelPart(unit.model, unit.source, notes=list(unit.payload.get("notes") or []))
    for run in unit.payload["runs"]:
        block, notes = read_run(run, unit.want_content)
        part.blocks.append(block)
        part.notes.extend(f"{unit.model}: {n}" for n in notes)
    return part
