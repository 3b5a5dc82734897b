"""Versions that say what they keep: ``update_from`` in a release and the versioning rule.

* :func:`update_sources`: the folder each benchmark's build keeps the design of
  (``update_from = "previous"``: the previous release, fetched from the Hub; or a local folder);
* :func:`check_versions`: after the builds, the rule (:func:`tinybench_builder.release.config.version_rule`):
  a patch or minor version must keep the previous version's anchors (ids, order and strata of
  every config it had; configs may be added); new anchors need a new major version. A release
  that breaks it is refused before anything is published, naming the rule and the configs.
  The summary (``release.json``) records each benchmark's design hash and what it keeps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Mapping

from tinybench_builder import layout
from tinybench_builder.dataset import design_changes
from tinybench_builder.release.config import UPDATE_FROM_PREVIOUS, ReleaseConfig, ReleaseError, version_rule

__all__ = ["needs_previous", "update_sources", "check_versions"]


def needs_previous(config: ReleaseConfig) -> set[str]:
    """The benchmarks whose build needs the previous release from the Hub (``update_from = "previous"``)."""
    return {e.name for e in config.benchmarks if e.update_from == UPDATE_FROM_PREVIOUS}


def update_sources(config: ReleaseConfig, previous: Mapping[str, Path | None],
                   log: Callable[[str], None]) -> dict[str, Path | None]:
    """``{name: folder whose design the build keeps, or None}``. ``previous``: the fetched releases."""
    out: dict[str, Path | None] = {}
    for e in config.benchmarks:
        if e.update_from == UPDATE_FROM_PREVIOUS:
            out[e.name] = previous.get(e.name)
            if out[e.name] is None:
                log(f'note: {e.name}: update_from = "previous", but the repository has no earlier release: a first '
                    "release, with a fresh design")
        else:
            out[e.name] = Path(e.update_from) if e.update_from is not None else None
    return out


def check_versions(config: ReleaseConfig, version: str, folders: Mapping[str, Path],
                   previous: Mapping[str, Path | None], tags: Mapping[str, str | None], summary: dict,
                   log: Callable[[str], None]) -> None:
    """Apply the versioning rule to every benchmark whose previous version is known (a fetched
    release, or the folder it was updated from); record the designs in ``summary``; refuse
    (:class:`ReleaseError`) a release that breaks the rule, naming every benchmark that does."""
    refused = []
    for e in config.benchmarks:
        folder = folders[e.name]
        manifest = layout.read_manifest(folder)
        entry = summary["benchmarks"].setdefault(e.name, {})
        design = manifest.get("design") or {}
        entry["design"] = {"hash": design.get("hash"), "re_estimates": list(design.get("re_estimates") or [])}
        prev = previous.get(e.name)
        prev_version = tags.get(e.name)
        if prev is None and isinstance(e.update_from, Path):
            prev, prev_version = e.update_from, None
        if prev is None:
            entry["design"]["rule"] = "not checked: no previous version known (first release, or not fetched)"
            continue
        if prev_version is None:
            prev_version = layout.read_manifest(prev).get("version")
        changes = design_changes(prev, folder)
        entry["design"].update(previous=prev_version, kept=not changes)
        problem = version_rule(prev_version, version, changes) if prev_version else None
        if problem:
            refused.append(f"{e.name}: {problem}")
            entry["design"]["rule"] = "broken"
        else:
            entry["design"]["rule"] = "kept" if not changes else "new major version"
            if not changes:
                log(f"{e.name}: keeps the design of {prev_version} ({str(design.get('hash'))[:12]}): results logged "
                    f"against it stay valid")
    if refused:
        raise ReleaseError("release refused by the versioning rule: " + " | ".join(refused))
