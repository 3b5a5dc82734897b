"""Build a tiny benchmark as a Hub-ready dataset folder (``tinybench-builder build``): read, fit, plan, write.

::

    build_benchmark("tinyMMLU", "mmlu_responses.parquet", {"test": "mmlu_test.parquet", "dev": "mmlu_dev.parquet"},
                    BuildOptions(version="1.0.0"), out="tinyMMLU")

1. :func:`read_inputs`: the responses (:mod:`tinybench_builder.dataset.responses`: a score table or anything
   :func:`tinybench_builder.read.ingest.ingest` reads), each config's items, the content of every split
   (:mod:`tinybench_builder.dataset.content`), checked against each other;
2. :func:`fit_estimators`: :func:`tinybench_builder.model.fitting.fit_estimator` per estimator (a bundle,
   ``spec.joint``, has one across its configs; independent configs one each, in ``<config>/``);
3. :func:`tinybench_builder.dataset.plan.plan_folder`: what goes into the folder (pure);
4. :func:`write_folder`: writes it into a temporary sibling folder (estimators, reports, data,
   ``estimator.py``, plot and card, then the manifest, once, with the hashes of every other
   file) and swaps it into place (:func:`tinybench_builder.layout.staging`: an existing folder is replaced
   only if it is empty or a previous build).

The folder format is :mod:`tinybench_builder.layout`'s. ``load_dataset(folder, config, split=...)`` gives
what ``load_dataset("tinyBenchmarks/<name>", config, split=...)`` gives; the tiny split's rows
follow ``TinyEstimator.anchor_ids`` (restricted to the config's scenario). The same inputs and
seed give byte-identical folders: parquet with fixed writer settings, no timestamps,
deterministic npz and PNG, and no absolute paths (inputs are named by base name and sha256).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from tinybench_builder import layout
from tinybench_builder.registry import BenchmarkSpec, get_benchmark, normalization, subscenario_weights
from tinybench_builder.dataset.cards import CardInputs, write_card_files
from tinybench_builder.dataset.options import BuildOptions
from tinybench_builder.dataset.harness_tasks import check_task_names, task_name
from tinybench_builder.dataset.content import load_content, local_tiny_content, match_content, source_content
from tinybench_builder.model import extend_estimator, fit_estimator
from tinybench_builder.read import ResponseMatrix, subscenario_of
from tinybench_builder.dataset.plan import BuildInputs, EstimatorFit, FolderPlan, plan_folder
from tinybench_builder.dataset.responses import assign_items, present_configs, read_responses
from tinybench_builder.dataset.versions import PreviousDesign, compare, keep_for, read_design
from tinybench_builder.errors import BuildError
from tinybench_builder.layout import config_anchor_ids

__all__ = ["build_benchmark", "read_inputs", "fit_estimators", "write_folder"]


def build_benchmark(
    benchmark: str | BenchmarkSpec,
    responses: Any,
    content: Mapping[str, str] | None = None,
    options: BuildOptions | None = None,
    *,
    out: str | os.PathLike,
    previous: str | os.PathLike | None = None,
    templates: str | os.PathLike | None = None,
    progress: bool = False,
    update_from: str | os.PathLike | None = None,
) -> Path:
    """Fit, select anchors and write the tiny dataset folder ``out``; returns ``out``.

    Parameters
    ----------
    benchmark : str or BenchmarkSpec
        A registered benchmark (:data:`tinybench_builder.registry.benchmarks.REGISTRY`) or a spec.
    responses
        Score table path, evaluation output path(s) (:func:`tinybench_builder.read.ingest.ingest`), or a
        :class:`ResponseMatrix`.
    content : dict, optional
        ``SPLIT`` (or ``CONFIG/SPLIT``) -> local parquet/CSV/JSON in the upstream schema,
        local dataset folder, or Hub id (``hub:owner/name``); default: the registry's upstream.
    options : BuildOptions, optional
        Anchors, seed, version, repo id and tag shown in the card, item order, fit options.
    out : path
        Output folder (replaced atomically; an existing folder must be a previous build or empty).
    previous : path, optional
        Folder of the previous version: the card's changelog lists anchors in/out, how the
        estimates of the models both versions know moved, and the change of the validation
        errors. Default: ``update_from``.
    update_from : path, optional
        Folder of the previous version whose design this build keeps (``build --update-from``):
        its item set, anchor ids and order, strata and weights, so the tiny split's rows are
        the same (the same parquet bytes for the same content) and every result logged against
        it stays valid; the IRT model, the regression and the calibration are fitted again on
        ``responses`` (:func:`tinybench_builder.model.fitting.fit_estimator` ``keep_design``). Items the
        previous version lacks join the IRT fit only; a config it lacks (a bundle that grew)
        is calibrated against its IRT parameters held fixed (:mod:`tinybench_builder.model.extend`).
    templates : path, optional
        Card templates (default ``dataset_cards/``).
    progress : bool
        Progress bar of the fit.
    """
    spec = get_benchmark(benchmark) if isinstance(benchmark, str) else benchmark
    options = options if options is not None else BuildOptions()
    if not isinstance(options, BuildOptions):
        raise TypeError(f"options must be a BuildOptions (tinybench_builder.dataset.options), got {type(options).__name__}")
    options.anchors_for(spec.anchors)
    out = Path(out)
    layout.check_replaceable(out)  # fail before the fit, not after it
    # our lm-eval task names must not replace lm-eval's own tasks (a custom name is checked against
    # the lm-eval installed here, if any; the registered ones carry TASK_SUFFIX)
    check_task_names([n for n in (task_name(c) for c in spec.configs) if n], installed=spec.custom is not None)
    kept = read_design(update_from, spec.name) if update_from is not None else None
    if kept is not None and options.anchors is None and kept.anchors_per_config() is not None:
        # the kept design's anchors per config (also what a config added to a bundle gets)
        options = replace(options, anchors=kept.anchors_per_config())
    previous = update_from if previous is None else previous
    prev = CardInputs.from_folder(previous) if previous is not None else None
    inputs = read_inputs(spec, responses, content, options.item_order)
    fits = fit_estimators(inputs.spec, inputs, options, progress=progress, kept=kept)
    changes = compare(previous, fits) if previous is not None else None
    plan = plan_folder(inputs.spec, inputs, fits, options, previous=changes,
                       updated_from=kept.record() if kept is not None else None)
    return write_folder(plan, out, previous=prev, templates=templates)


def read_inputs(spec: BenchmarkSpec, responses: Any, content: Mapping[str, str] | None = None,
                item_order: str = "upstream") -> BuildInputs:
    """Read the responses and the content, assign items to configs, check that they match.

    ``responses`` may map a bundle's config names to their sources; a bundle is built from the
    configs that have responses (``BuildInputs.spec`` is the benchmark restricted to them).
    """
    matrix, records = read_responses(spec, responses, local_tiny_content(spec, content))
    assigned = assign_items(spec, matrix)
    spec = present_configs(spec, assigned)
    assigned = {c.name: assigned[c.name] for c in spec.configs}
    from_source = {c.name: source_content(c, matrix, assigned[c.name].columns, assigned[c.name].content_ids)
                   for c in spec.configs if getattr(c, "content_from", "upstream") == "source"}
    contents = load_content(spec, content, {n: ci.content_ids for n, ci in assigned.items()}, from_source)
    match_content(spec, matrix, assigned, contents, item_order)
    return BuildInputs(matrix, records, assigned, contents, spec)


def fit_estimators(spec: BenchmarkSpec, inputs: BuildInputs, options: BuildOptions,
                   progress: bool = False, kept: PreviousDesign | None = None) -> list[EstimatorFit]:
    """One fit per estimator: all configs together (a bundle, or a single config), else one per config.

    ``kept``: the previous version whose designs the estimators keep (``update_from``).
    """
    matrix, assigned = inputs.matrix, inputs.assigned
    k = options.anchors_for(spec.anchors)
    groups = [spec.configs] if (spec.joint or len(spec.configs) == 1) else [[c] for c in spec.configs]
    if kept is not None:
        dropped = [name for name in kept.manifest["configs"] if name not in {c.name for c in spec.configs}]
        if dropped:
            raise BuildError(f"--update-from: version {kept.version} has config(s) {', '.join(dropped)} that this "
                             "build has no responses for; an update keeps every config (a version without them "
                             "needs a fresh design: a new major version)")
    fits = []
    for configs in groups:
        cols, ids, scen, sub = [], [], [], []
        content_of: dict[str, Any] = {}
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
        # the configs' columns as a compact copy (bytes for 0/1 scores): never a float64 matrix
        Y = matrix.compact.take(cols=cols)
        keep = Y.row_counts() > 0
        if not keep.all():
            Y = Y.take(rows=np.flatnonzero(keep))
        info = pd.DataFrame({"scenario": scen, "subscenario": sub}, index=ids)
        sub_m = ResponseMatrix(Y, [m for m, k_ in zip(matrix.models, keep) if k_], ids, info)
        metadata: dict[str, Any] = {"benchmark": spec.name, "version": options.version,
                    "configs": {c.name: c.scenario for c in configs},
                    # estimator.evaluate(y, bench) answers with the original package's keys
                    "original_bench": spec.original_bench,
                    "original_scenarios": {c.scenario: c.original_scenario or c.scenario for c in configs}}
        weights, norms = _leaderboard_weighting(configs, assigned)
        if norms:  # the leaderboard's normalised score from the estimate (tinybench_builder.registry.leaderboard_v2)
            metadata["normalization"] = norms
        path = "" if len(groups) == 1 else configs[0].name
        design = keep_for(kept, configs, path) if kept is not None else None
        if design is not None and kept is not None and options.anchors is not None:
            kept_k = {c.name: len(config_anchor_ids(design, c.scenario)) for c in configs
                      if c.scenario in design.scenarios}
            if any(n != k for n in kept_k.values()):
                raise BuildError(f"--anchors {k}: the design kept from version {kept.version} has "
                                 f"{', '.join(f'{n} anchors in {c}' for c, n in kept_k.items())}; an update keeps "
                                 "them (leave --anchors out)")
        kwargs = dict(n_anchors=k * len(configs), seed=options.seed, progress=progress, metadata=metadata,
                      scenario_order=[c.scenario for c in configs], subscenario_weights=weights,
                      **options.fit.as_kwargs())
        if design is not None and set(c.scenario for c in configs) - set(design.scenarios):
            # a bundle that gained a config: the kept IRT parameters held fixed, the new items calibrated
            result = extend_estimator(design, sub_m, **kwargs)
        elif design is not None:
            result = fit_estimator(sub_m, keep_design=design, **kwargs)
        else:
            result = fit_estimator(sub_m, **kwargs)
        fits.append(EstimatorFit(path, tuple(configs), result.estimator, result.report, content_of, sub_m))
    return fits


def _leaderboard_weighting(configs, assigned) -> tuple[dict[str, float] | None, dict[str, dict]]:
    """The subscenario weights of the fit (labels as :func:`fit_estimators` names them; None: all
    equal) and each scenario's normalisation map, from the configs' ``subscenario_weighting``
    and ``chance`` (:func:`tinybench_builder.registry.subscenario_weights`, :func:`tinybench_builder.registry.normalization`)."""
    weights: dict[str, float] = {}
    norms: dict[str, dict] = {}
    for c in configs:
        counts: dict[str, int] = {}
        for cid in assigned[c.name].content_ids:
            counts[subscenario_of(cid)] = counts.get(subscenario_of(cid), 0) + 1
        for sub, w in (subscenario_weights(c, counts) or {}).items():
            weights[f"{c.scenario}.{sub}" if len(configs) > 1 else sub] = w
        norm = normalization(c, counts)
        if norm is not None:
            norms[c.scenario] = norm
    return weights or None, norms


def write_folder(plan: FolderPlan, out: str | os.PathLike, *, previous: CardInputs | None = None,
                 templates: str | os.PathLike | None = None) -> Path:
    """Write ``plan`` as the folder ``out`` (atomically; see :func:`tinybench_builder.layout.staging`).

    Every file is written into a temporary sibling folder, the card last but one and the
    manifest last (once, with the sha256 and size of every other file); then the folder is
    swapped into place. ``previous``: the card inputs of the previous release (changelog).
    """
    out = Path(out)
    with layout.staging(out) as tmp:
        for fit in plan.estimators:
            folder = layout.estimator_folder(tmp, fit.path)
            fit.estimator.save(folder)
            layout.write_json(folder / layout.VALIDATION_NAME, fit.report)
        for data in plan.data:
            layout.write_parquet(data.table, layout.child_path(tmp, data.path))
        for rel, text in plan.texts:  # the lm-eval task files and the lighteval custom tasks
            path = layout.child_path(tmp, rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        layout.copy_estimator_code(tmp)
        write_card_files(tmp, plan.card, previous=previous, templates=templates)
        layout.write_manifest(tmp, plan.manifest)
    return out
