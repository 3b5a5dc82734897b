"""A release, start to end: build every benchmark of a release config, validate, publish.

``tinybench-builder release`` / ``python -m tinybench_builder release`` / ``python release.py`` run :func:`run_release`::

    python release.py --config release.toml --release-version 1.2.0            # build + validate only
    python release.py --config release.toml --release-version 1.2.0 --push     # ... and publish

0. every output folder is checked first (``out/<name>`` absent, empty or an earlier build;
   ``out/release.json`` absent or one of ours);
1. with ``push`` (or when asked), the previous release of each repository (the highest
   ``vX.Y.Z`` tag below the new version) is fetched for the card's changelog
   (:func:`tinybench_builder.release.hub_sync.fetch_previous`); a local build does not touch the network;
2. :func:`build_release` builds each benchmark into ``out/<name>``
   (:func:`tinybench_builder.dataset.build.build_benchmark`, which replaces an earlier build atomically; a
   folder that is not a build is never touched, and every target is checked before any build);
3. every folder is checked (:func:`tinybench_builder.release.validate.validate_folder`);
4. ``out/release.json`` records the version, the manifests' hashes and the validation summary;
5. with ``push``, :func:`tinybench_builder.release.hub_sync.publish_release` publishes each folder as one commit
   and a tag (all repositories are planned before any is written).

The config (:mod:`tinybench_builder.release.config`), the validation (:mod:`tinybench_builder.release.validate`) and the
Hub side (:mod:`tinybench_builder.release.hub_sync`) each live in their own module; this one only runs them.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Collection, Mapping, Protocol

from tinybench_builder import layout
from tinybench_builder.progress import bar, get_logger, quiet_libraries
from tinybench_builder.registry import BenchmarkSpec
from tinybench_builder.dataset import BuildOptions
from tinybench_builder.errors import BuildError
from tinybench_builder.dataset import build_benchmark
from tinybench_builder.release.hub_sync import describe_error, fetch_previous, hub_api, publish_release, token_configured
from tinybench_builder.release.config import ConfigError, ReleaseConfig, ReleaseError, default_out_dir, normalize_version, version_tag
from tinybench_builder.release.validate import validate_folder
from tinybench_builder.release.versions import check_versions, needs_previous, update_sources

_log = get_logger(__name__)

__all__ = ["BuildFn", "build_release", "run_release", "SUMMARY_NAME"]

SUMMARY_NAME = "release.json"
#: the marker of a release summary written by this tool (``out/release.json`` is replaced only then)
RELEASE_FORMAT = "tinybenchmarks-release"
#: ``previous``: fetch the previous releases when pushing (auto), always, or never
PREVIOUS_MODES = ("auto", "always", "none")


class BuildFn(Protocol):
    """What builds one benchmark: :func:`tinybench_builder.dataset.build.build_benchmark`'s signature."""

    def __call__(self, benchmark: str | BenchmarkSpec, responses: Any, content: Mapping[str, str] | None = None,
                 options: BuildOptions | None = None, *, out: str | os.PathLike,
                 previous: str | os.PathLike | None = None, templates: str | os.PathLike | None = None,
                 progress: bool = False, update_from: str | os.PathLike | None = None) -> Path: ...


def _log_to_stderr(message: str) -> None:
    """The default ``log`` of a release: the package's logger (never through a progress bar);
    ``note:`` and ``warning:`` lines are warnings (``-q`` keeps them), the others the steps."""
    _log.log(logging.WARNING if message.startswith(("note:", "warning:")) else logging.INFO, message)


def build_release(config: ReleaseConfig, version: str, out: str | os.PathLike, *,
                  previous: Mapping[str, Path | None] | None = None, build: BuildFn | None = None,
                  progress: bool = True, log: Callable[[str], None] | None = None,
                  update_from: Mapping[str, Path | None] | None = None) -> dict[str, Path]:
    """Build every benchmark of ``config`` into ``out/<name>``; returns ``{name: folder}``.

    Every target folder is checked first (absent, empty or an earlier build): a folder that is
    not a build stops the release before anything is built. ``update_from``: per benchmark, the
    folder whose design the build keeps (:func:`tinybench_builder.release.versions.update_sources`).
    """
    log = log or _log_to_stderr
    build = build or build_benchmark
    version = normalize_version(version)
    out = Path(out)
    check_release_out(config, out)
    out.mkdir(parents=True, exist_ok=True)
    folders = {}
    for entry in bar(config.benchmarks, desc="build", unit="benchmark", enabled=progress):
        target = out / entry.name
        keep = (update_from or {}).get(entry.name)
        try:
            got = build(entry.build_target(), entry.responses_arg(), dict(entry.content) if entry.content else None,
                        entry.build_options(config.org, version), out=target,
                        previous=(previous or {}).get(entry.name), progress=progress,
                        **({"update_from": keep} if keep is not None else {}))
        except ReleaseError:
            raise
        except Exception as exc:
            raise ReleaseError(f"building {entry.name} failed: {type(exc).__name__}: {exc}") from exc
        folders[entry.name] = Path(got) if got is not None else target
        log(f"built {entry.name} -> {folders[entry.name]}")
    return folders


def check_release_out(config: ReleaseConfig, out: str | os.PathLike) -> None:
    """Refuse (:class:`ReleaseError`) an ``out`` folder the release would clobber: a file, a
    ``release.json`` this tool did not write, or a benchmark folder that is not a build of ours
    (:func:`tinybench_builder.layout.check_replaceable`). Nothing is read from the network or built first."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ReleaseError(f"--out {out} is a file, not a folder: choose another --out")
    summary = out / SUMMARY_NAME
    if summary.exists() or summary.is_symlink():
        problem = None
        try:
            data = json.loads(summary.read_bytes()) if summary.is_file() and not summary.is_symlink() else None
        except (OSError, ValueError, RecursionError):
            data = None
        if not isinstance(data, dict) or data.get("format") != RELEASE_FORMAT:
            problem = f"{summary} exists and was not written by this tool (no \"format\": \"{RELEASE_FORMAT}\")"
        if problem:
            raise ReleaseError(f"{problem}; refusing to overwrite it: choose another --out or remove it")
    for entry in config.benchmarks:
        try:
            layout.check_replaceable(out / entry.name)
        except (BuildError, NotADirectoryError) as exc:
            raise ReleaseError(str(exc)) from None


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _fetch_previous_releases(config: ReleaseConfig, version: str, dest: Path, *, push: bool, progress: bool,
                             log: Callable[[str], None], summary: dict, api,
                             required: Collection[str] = ()) -> dict[str, Path | None]:
    """``{name: folder of the previous release or None}``; a Hub failure is fatal with ``push`` and
    for the benchmarks in ``required`` (``update_from = "previous"``)."""
    out: dict[str, Path | None] = {}
    for entry in bar(config.benchmarks, desc="previous", unit="repo", enabled=progress):
        repo_id = entry.repo_id(config.org)
        try:
            got = fetch_previous(repo_id, version, dest / entry.name, api)
        except Exception as exc:  # noqa: BLE001 - fatal with --push (or update_from = "previous"), a note otherwise
            if push or entry.name in required:
                raise ReleaseError(f"{repo_id}: could not fetch the previous release: {describe_error(exc)}") from None
            log(f"note: {repo_id}: the previous release could not be fetched ({_reason(exc)}); "
                "the changelog will not compare with it")
            got = None
        if got and not layout.is_dataset_folder(got[1]):
            log(f"warning: {repo_id}: previous release {got[0]} has no {layout.MANIFEST_NAME} of a tiny dataset; "
                "the changelog will not compare with it")
            got = None
        out[entry.name] = got[1] if got else None
        summary["benchmarks"].setdefault(entry.name, {})["previous"] = got[0] if got else None
        if got:
            log(f"{repo_id}: previous release {got[0]}")
    return out


def _reason(exc: BaseException) -> str:
    """A short reason for a failed Hub request: the kind of failure, not a stack of URLs."""
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if status:
        return f"the Hub answered HTTP {status}"
    names = {type(e).__name__ for e in (exc, exc.__cause__, exc.__context__) if e is not None}
    if names & {"ConnectError", "ConnectionError", "ConnectTimeout", "Timeout", "ReadTimeout", "LocalEntryNotFoundError",
                "OfflineModeIsEnabled", "gaierror"} or isinstance(exc, OSError):
        return "the Hub cannot be reached"
    return describe_error(exc)[:160]


def run_release(config: ReleaseConfig, version: str, *, out: str | os.PathLike | None = None, push: bool = False,
                previous: str = "auto", build: BuildFn | None = None, progress: bool = True,
                log: Callable[[str], None] | None = None, api=None) -> dict:
    """Build, validate and (with ``push``) publish a release; returns the summary written to
    ``out/release.json``.

    ``previous``: the previous release of each repository, for the card's changelog, is fetched
    from the Hub with ``"auto"`` only when pushing (a failure is then fatal), with ``"always"``
    also without ``push`` (a failure is then a note; skipped when ``HF_HUB_OFFLINE`` is set),
    and never with ``"none"``. ``build`` replaces :func:`tinybench_builder.dataset.build.build_benchmark` (same
    signature, :class:`BuildFn`). Every output folder is checked (:func:`check_release_out`)
    before anything else.
    """
    log = log or _log_to_stderr
    version = normalize_version(version)
    out = Path(out) if out is not None else default_out_dir(version)
    if previous not in PREVIOUS_MODES:
        raise ConfigError(f"previous must be one of {PREVIOUS_MODES}, got {previous!r}")
    if not progress:
        _quiet_clients()
    if push and not token_configured():
        raise ConfigError("--push needs a Hub token with write access: set HF_TOKEN (or run `hf auth login`)")
    if push and config.org_from == "local":
        raise ConfigError(f"--push needs the Hub namespace to publish to: give [release] org = \"...\" in {config.path}, "
                          "or a token whose own namespace (whoami) the Hub can tell")
    repo_ids = {e.name: e.repo_id(config.org) for e in config.benchmarks}
    check_release_out(config, out)
    summary: dict[str, Any] = {"format": RELEASE_FORMAT, "version": version, "tag": version_tag(version), "config": str(config.path),
                               "org": config.org, "benchmarks": {}}
    required = needs_previous(config)  # update_from = "previous": the build needs the previous release
    with tempfile.TemporaryDirectory(prefix="tinybench-previous-") as tmp:
        prev_folders: dict[str, Path | None] = {}
        wanted = previous == "always" or (previous == "auto" and push) or bool(required)
        if wanted and _offline() and not push:
            if required:
                raise ReleaseError(f'{", ".join(sorted(required))}: update_from = "previous" needs the previous '
                                   "release from the Hub, but HF_HUB_OFFLINE is set; give update_from the folder of "
                                   "a build of it instead")
            log("note: HF_HUB_OFFLINE is set: not fetching the previous releases (changelog without comparison)")
        elif wanted:
            api = hub_api(api)
            prev_folders = _fetch_previous_releases(config, version, Path(tmp), push=push, progress=progress,
                                                    log=log, summary=summary, api=api, required=required)
        folders = build_release(config, version, out, previous=prev_folders, build=build, progress=progress, log=log,
                                update_from=update_sources(config, prev_folders, log))
        tags = {name: b.get("previous") for name, b in summary["benchmarks"].items()}
        check_versions(config, version, folders, prev_folders, tags, summary, log)
    for name, folder in bar(list(folders.items()), desc="validate", unit="benchmark", enabled=progress):
        entry = next(e for e in config.benchmarks if e.name == name)
        report = validate_folder(folder, entry.benchmark())
        manifest_sha = layout.file_sha256(folder / layout.MANIFEST_NAME)
        summary["benchmarks"].setdefault(name, {}).update(
            {"repo_id": repo_ids[name], "folder": str(folder), "manifest_sha256": manifest_sha, "validation": report})
        log(f"validated {name}: {report['files']} files, configs {report['configs']}")
    _write_summary(out, summary)
    if push:
        _check_content(config, folders)
        results = publish_release({repo_ids[n]: f for n, f in folders.items()}, version, api,
                                  private=config.private, progress=progress, log=log)
        for name, r in zip(folders, results):
            summary["benchmarks"][name]["published"] = r.to_dict()
        _write_summary(out, summary)
    return summary


def _check_content(config: ReleaseConfig, folders: Mapping[str, Path]) -> None:
    """Refuse to push a build whose rows lack the examples' text (``content_missing`` in its
    manifest) unless its ``[[benchmark]]`` says ``allow_missing_content = true``; checked for
    every benchmark before any is published."""
    refused = []
    for entry in config.benchmarks:
        missing = layout.read_manifest(folders[entry.name]).get("content_missing") or []
        if missing and not entry.allow_missing_content:
            refused.append(f"{entry.name} (config(s) {', '.join(missing)})")
    if refused:
        raise ReleaseError(
            f"not publishing: the rows of {'; '.join(refused)} carry item ids only, without the examples' text. "
            "Give the content (--content / content = {...}, or evaluation outputs that hold it), or set "
            "allow_missing_content = true in the [[benchmark]] table to publish them as they are. "
            f"The builds are in {Path(next(iter(folders.values()))).parent}/")


def _quiet_clients() -> None:
    """No progress bars from huggingface_hub / datasets (``--quiet``): :func:`tinybench_builder.progress.quiet_libraries`."""
    quiet_libraries()


def _write_summary(out: Path, summary: dict) -> None:
    layout.atomic_write_text(out / SUMMARY_NAME, json.dumps(summary, indent=1) + "\n")
