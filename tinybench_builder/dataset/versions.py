"""Versions of a tiny dataset: the design a build keeps, and what changed since the previous version.

* :func:`read_design` reads a previous version's folder for ``build --update-from``: its
  estimators by config, its version and design hash, checked against the benchmark built;
* :func:`keep_for` says which previous estimator each new estimator keeps the design of;
* :func:`compare` measures, for the models both versions know (the previous version's
  training models that are in this build's responses), how their estimates moved: each
  version's estimator on that version's anchors (the same results when the design is kept),
  per config: mean and max absolute change and Spearman rank correlation. The result goes
  into the manifest (``previous``) and the card's changelog.

A design is the anchor ids, their order and strata (:func:`tinybench_builder.estimator.design_hash`);
two versions with the same design hash have the same tiny-split rows, so every result logged
against one is a result of the other.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from tinybench_builder import layout
from tinybench_builder.errors import BuildError
from tinybench_builder.estimator import TinyEstimator

__all__ = ["PreviousDesign", "read_design", "keep_for", "compare", "config_hashes", "design_changes"]


@dataclass(frozen=True)
class PreviousDesign:
    """A previous version's folder: its manifest, version, design hash and estimators by config."""

    folder: Path
    manifest: dict
    estimators: dict[str, TinyEstimator]

    @property
    def version(self) -> str | None:
        return self.manifest.get("version")

    @property
    def design_hash(self) -> str:
        design = self.manifest.get("design") or {}
        if design.get("hash"):
            return str(design["hash"])
        ests = list({id(e): e for e in self.estimators.values()}.values())
        hashes = {name: layout.config_design_hash(e, self.manifest["configs"][name]["scenario"])
                  for name, e in self.estimators.items()}
        return layout.dataset_design_hash(ests, hashes)

    def anchors_per_config(self) -> int | None:
        """The anchors of each config, when every config has as many (else None)."""
        counts = {len(layout.config_anchor_ids(est, self.manifest["configs"][name]["scenario"]))
                  for name, est in self.estimators.items()}
        return counts.pop() if len(counts) == 1 else None

    def record(self) -> dict:
        """How the manifest names the design kept: ``{"version", "design_hash"}``."""
        return {"version": self.version, "design_hash": self.design_hash}


def read_design(folder: str | os.PathLike, benchmark: str) -> PreviousDesign:
    """The previous version of ``benchmark`` in ``folder`` (a tiny dataset folder), checked."""
    folder = Path(folder)
    try:
        manifest = layout.read_manifest(folder)
        estimators = layout.load_estimators(folder)
    except FileNotFoundError as exc:
        raise BuildError(f"--update-from {folder}: {exc}") from None
    except ValueError as exc:
        raise BuildError(f"--update-from {folder}: {exc}") from None
    if manifest.get("name") != benchmark:
        raise BuildError(f"--update-from {folder} holds {manifest.get('name')!r}, not {benchmark!r}")
    problems = layout.verify_manifest(folder)
    if problems:
        raise BuildError(f"--update-from {folder}: the folder does not match its manifest ({problems[0]})")
    return PreviousDesign(folder, manifest, estimators)


def keep_for(previous: PreviousDesign, configs: Sequence, path: str) -> TinyEstimator | None:
    """The previous estimator whose design the estimator of ``configs`` keeps (None: a new config
    of a dataset whose configs are fitted one by one gets a fresh design)."""
    found = {id(previous.estimators[c.name]): previous.estimators[c.name] for c in configs
             if c.name in previous.estimators}
    if len(found) > 1:
        raise BuildError(f"configs {', '.join(c.name for c in configs)} had separate estimators in version "
                         f"{previous.version}; an update keeps each estimator's design")
    return next(iter(found.values()), None)


def _training_models(folder: Path, path: str) -> list[str]:
    """The models an estimator was fitted on (its validation report; older reports: the models
    estimated out of fold)."""
    p = layout.estimator_folder(folder, path) / layout.VALIDATION_NAME
    if not p.is_file():
        return []
    try:
        rep = json.loads(p.read_text(encoding="utf-8"))
    except ValueError:
        return []
    return list(rep.get("training_models") or (rep.get("oof") or {}).get("models") or [])


def _spearman(a: np.ndarray, b: np.ndarray) -> float | None:
    from scipy.stats import spearmanr

    if len(a) < 3 or np.std(a) == 0 or np.std(b) == 0:
        return None
    return float(spearmanr(a, b).statistic)


def compare(previous: str | os.PathLike, fits: Sequence) -> dict:
    """What changed since the previous version in ``previous`` (a folder): the manifest's
    ``previous`` table (module docstring). ``fits`` are the build's
    :class:`~tinybench_builder.dataset.plan.EstimatorFit` (with their training matrix)."""
    folder = Path(previous)
    manifest = layout.read_manifest(folder)
    estimators = layout.load_estimators(folder)
    prev = PreviousDesign(folder, manifest, estimators)
    out: dict = {"version": prev.version, "design_hash": prev.design_hash, "configs": {}}
    for fit in fits:
        groups: dict[int, list] = {}
        for c in fit.configs:
            if c.name in estimators:
                groups.setdefault(id(estimators[c.name]), []).append(c)
            else:
                out["configs"][c.name] = {"new_config": True}
        for configs in groups.values():
            pe = estimators[configs[0].name]
            path = manifest["configs"][configs[0].name].get("estimator", "")
            moved = _moved(pe, fit, configs, _training_models(folder, path))
            for c in configs:
                kept = layout.config_design_hash(pe, c.scenario) == layout.config_design_hash(fit.estimator, c.scenario)
                out["configs"][c.name] = {"design_kept": kept, "estimates_moved": moved.get(c.scenario)}
    for name in manifest.get("configs", {}):
        if name not in out["configs"]:
            out["configs"][name] = {"dropped_config": True}
    return out


def _moved(pe: TinyEstimator, fit, configs, models: list[str]) -> dict:
    """Per scenario, how the estimates of ``models`` moved from ``pe`` to ``fit.estimator``."""
    m = fit.matrix
    if m is None or not models:
        return {}
    row = {name: i for i, name in enumerate(m.models)}
    col = {item: j for j, item in enumerate(m.items)}
    rows = [row[name] for name in models if name in row]
    if not rows or any(a not in col for a in pe.anchor_ids) or any(a not in col for a in fit.estimator.anchor_ids):
        return {}
    # only the anchors' columns, from the compact storage (never the whole matrix as floats)
    Y_prev = m.compact.dense(np.array(rows), np.array([col[a] for a in pe.anchor_ids]))
    Y_new = m.compact.dense(np.array(rows), np.array([col[a] for a in fit.estimator.anchor_ids]))
    ok = ~np.isnan(Y_prev).all(1) & ~np.isnan(Y_new).all(1)
    if not ok.any():
        return {}
    r_prev, r_new = pe.estimate(Y_prev[ok]), fit.estimator.estimate(Y_new[ok])
    out = {}
    def score(r, est, scenario):
        return r["scenarios"][scenario]["score"] if len(est.scenarios) > 1 else r["score"]

    for c in configs:
        a = np.array([score(r, pe, c.scenario) for r in r_prev])
        b = np.array([score(r, fit.estimator, c.scenario) for r in r_new])
        d = np.abs(b - a)
        out[c.scenario] = {"models": int(ok.sum()), "mean_abs_change": float(d.mean()),
                           "max_abs_change": float(d.max()), "spearman": _spearman(a, b),
                           "same_results": bool(pe.anchor_ids == fit.estimator.anchor_ids)}
    return out


def config_hashes(folder: str | os.PathLike) -> dict[str, str]:
    """Config -> design hash of a tiny dataset folder (its manifest's, or computed from its
    estimators for folders built before the manifest recorded designs)."""
    manifest = layout.read_manifest(folder)
    recorded = (manifest.get("design") or {}).get("configs")
    if recorded:
        return dict(recorded)
    if not manifest.get("configs"):  # a folder with a root estimator and no config table
        root = Path(folder) / layout.ESTIMATOR_JSON
        return {"default": TinyEstimator.load(folder).design_hash} if root.is_file() else {}
    estimators = layout.load_estimators(folder)
    return {name: layout.config_design_hash(est, manifest["configs"][name]["scenario"])
            for name, est in estimators.items()}


def design_changes(previous: str | os.PathLike, current: str | os.PathLike) -> list[str]:
    """How the design of the folder ``current`` departs from that of ``previous``: one line per
    config whose anchors (ids, order or strata) changed or that was dropped; empty when every
    config of ``previous`` keeps its design (configs added are allowed)."""
    old, new = config_hashes(previous), config_hashes(current)
    out = []
    for name, h in old.items():
        if name not in new:
            out.append(f"config {name!r} is dropped")
        elif new[name] != h:
            out.append(f"config {name!r} has other anchors (design {h[:12]} -> {new[name][:12]})")
    return out
