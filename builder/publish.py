"""Releases: build every tiny benchmark of a release config, validate, publish to the Hub.

``release.py`` (repository root) is a thin wrapper around :func:`main`::

    python release.py --config release.toml --version 1.2.0            # build + validate only
    python release.py --config release.toml --version 1.2.0 --push     # ... and publish

The steps, each usable alone:

* :func:`load_config` reads the release TOML (``[release]`` + ``[[benchmark]]`` tables).
* :func:`build_release` calls :func:`builder.dataset.build_benchmark` for every benchmark,
  passing the previous release (fetched with :func:`fetch_previous`) for the card's changelog.
* :func:`validate_folder` checks a built folder: manifest hashes and sizes, the card parses
  (``DatasetCard.load``), every config/split round-trips through ``load_dataset``, the
  estimator side files load, and no Hub token leaked into any file.
* :func:`plan_publish` / :func:`execute_plan` (or :func:`publish_folder` for one folder)
  publish a folder as ONE atomic ``create_commit`` on ``main`` (every file added, remote files
  absent from the folder deleted) and then tag the commit it returned ``vX.Y.Z``.

Publishing is idempotent and resumable. The remote tree (LFS sha256 / git blob ids) is
compared with the folder: identical content on ``main`` makes no new commit; an existing tag
on identical content is success; an existing tag on other content, or a version older than
the latest released one, is refused before anything is written, and tags are never moved.
If a run stops between the commit and the tag, no tag exists and re-running finds ``main``
already holding the content and only tags it.

The Hub endpoint and token come from the standard ``huggingface_hub`` environment
(``HF_ENDPOINT``, ``HF_TOKEN`` or a saved login). The token is never printed, logged or
written: this module never reads it except to check that one is configured and to make sure
it does not appear in the files about to be published.

``huggingface_hub`` and ``datasets`` are imported lazily (inside functions).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

__all__ = [
    "ReleaseError",
    "ConfigError",
    "BenchmarkEntry",
    "ReleaseConfig",
    "LocalFile",
    "PublishPlan",
    "PublishResult",
    "parse_version",
    "version_tag",
    "load_config",
    "default_out_dir",
    "build_release",
    "validate_folder",
    "local_files",
    "remote_files",
    "compare_trees",
    "latest_release_below",
    "fetch_previous",
    "plan_publish",
    "execute_plan",
    "publish_folder",
    "publish_release",
    "run_release",
    "main",
]

MANIFEST_NAME = "manifest.json"
README_NAME = "README.md"
REPO_TYPE = "dataset"
#: Files the Hub manages itself; never deleted, never compared.
HUB_MANAGED = frozenset({".gitattributes"})
#: File endings treated as local data files (not Hub dataset ids) in ``content``.
_DATA_SUFFIXES = (".parquet", ".csv", ".tsv", ".json", ".jsonl", ".arrow", ".pkl", ".pickle", ".txt", ".gz", ".zip")
_VERSION_RE = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
_TAG_RE = re.compile(r"^v((?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*))$")
_HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")
_NAME_RE = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}$")

BuildFn = Callable[..., Path]


class ReleaseError(Exception):
    """A problem the user can fix (config, version, refused tag, failed upload): the CLI
    prints its message and exits non-zero without a traceback."""


class ConfigError(ReleaseError):
    """A bad argument or release config (exit status 2)."""


# --------------------------------------------------------------------------- versions


def parse_version(version: str) -> tuple[int, int, int]:
    """``"1.2.0"`` -> ``(1, 2, 0)``; a leading ``v`` is accepted. ReleaseError otherwise."""
    text = str(version).strip()
    if text.startswith("v"):
        text = text[1:]
    m = _VERSION_RE.match(text)
    if not m:
        raise ConfigError(
            f"invalid version {version!r}: use MAJOR.MINOR.PATCH with plain numbers, e.g. 1.0.0"
        )
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def version_tag(version: str) -> str:
    """The Hub tag of a release: ``"1.2.0"`` -> ``"v1.2.0"``."""
    return "v" + ".".join(map(str, parse_version(version)))


def _tag_version(tag: str) -> tuple[int, int, int] | None:
    m = _TAG_RE.match(tag)
    return parse_version(m.group(1)) if m else None


def latest_release_below(tags: Iterable[str], version: str) -> str | None:
    """The highest ``vX.Y.Z`` tag strictly below ``version`` (other tags ignored), or None."""
    v = parse_version(version)
    best: tuple[tuple[int, int, int], str] | None = None
    for t in tags:
        tv = _tag_version(t)
        if tv is not None and tv < v and (best is None or tv > best[0]):
            best = (tv, t)
    return best[1] if best else None


# --------------------------------------------------------------------------- config


@dataclass(frozen=True)
class BenchmarkEntry:
    """One ``[[benchmark]]`` table of the release config (paths already resolved)."""

    name: str
    responses: tuple[Path, ...]
    content: dict[str, str] | None = None
    anchors: int | None = None
    seed: int = 0
    repo: str | None = None  # full repo id override; default <org>/<name>

    def repo_id(self, org: str) -> str:
        return self.repo or f"{org}/{self.name}"

    def build_kwargs(self) -> dict:
        responses: Any = str(self.responses[0]) if len(self.responses) == 1 else [str(p) for p in self.responses]
        return {"responses": responses, "content": dict(self.content) if self.content else None,
                "anchors": self.anchors, "seed": self.seed}


@dataclass(frozen=True)
class ReleaseConfig:
    """A parsed release config: ``org`` plus the benchmarks, in file order."""

    path: Path
    org: str
    benchmarks: tuple[BenchmarkEntry, ...]
    private: bool = False

    def select(self, names: Sequence[str] | None) -> "ReleaseConfig":
        """Only the benchmarks in ``names`` (ReleaseError if one is not in the config)."""
        if not names:
            return self
        known = [b.name for b in self.benchmarks]
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ConfigError(f"--only {', '.join(unknown)}: not in {self.path} (it has: {', '.join(known)})")
        return dataclasses.replace(self, benchmarks=tuple(b for b in self.benchmarks if b.name in names))


_RELEASE_KEYS = {"org", "private"}
_BENCHMARK_KEYS = {"name", "responses", "content", "anchors", "seed", "repo"}


def _load_toml(path: Path) -> dict:
    try:
        import tomllib  # Python >= 3.11
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"config file {path} not found") from None
    except IsADirectoryError:
        raise ConfigError(f"config {path} is a folder, not a TOML file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid UTF-8 TOML: {exc}") from None


def _is_local_path(value: str, base: Path) -> bool:
    """``content`` values: a local path, or else an upstream Hub dataset id."""
    if value.startswith("hub:"):
        return False
    if value.startswith(("/", "./", "../", "~", ".\\", "..\\")) or os.path.isabs(value):
        return True
    if value.lower().endswith(_DATA_SUFFIXES):
        return True
    return (base / value).exists()


def _resolve(value: str, base: Path) -> Path:
    p = Path(os.path.expanduser(value))
    return Path(os.path.normpath(p if p.is_absolute() else base / p))


def load_config(path: str | os.PathLike, *, check_paths: bool = True) -> ReleaseConfig:
    """Read and check a release config.

    Format::

        [release]
        org = "tinyBenchmarks"            # Hub namespace: repos are <org>/<name>
        private = false                   # optional: create new repos private

        [[benchmark]]
        name = "tinyAlpacaEval"           # a registered benchmark (builder.benchmarks)
        responses = "path/read/by/ingest" # or a list of paths (anything `builder ingest` reads)
        content = { test = "local path or upstream dataset id" }   # optional, per split
        anchors = 100                     # optional (default: the registry's)
        seed = 0                          # optional
        repo = "someone/tinyX"            # optional: override <org>/<name>

    Relative paths resolve against the config file's folder. ``content`` values are local
    paths when they start with ``/``, ``./``, ``../`` or ``~``, end with a data-file suffix or
    exist; anything else is an upstream Hub dataset id (``owner/name`` or ``hub:owner/name``). With
    ``check_paths`` local paths must exist. Raises :class:`ReleaseError` on any problem.
    """
    from .benchmarks import REGISTRY

    path = Path(path)
    data = _load_toml(path)
    base = path.resolve().parent
    where = str(path)

    unknown_top = set(data) - {"release", "benchmark"}
    if unknown_top:
        raise ConfigError(f"{where}: unknown top-level key(s) {sorted(unknown_top)}; expected [release] and [[benchmark]]")
    rel = data.get("release")
    if not isinstance(rel, dict):
        raise ConfigError(f"{where}: missing [release] table with org = \"...\"")
    bad = set(rel) - _RELEASE_KEYS
    if bad:
        raise ConfigError(f"{where}: unknown key(s) in [release]: {sorted(bad)} (known: {sorted(_RELEASE_KEYS)})")
    org = rel.get("org")
    if not isinstance(org, str) or not _NAME_RE.match(org):
        raise ConfigError(f"{where}: [release] org must be a Hub user or organization name, got {org!r}")
    private = rel.get("private", False)
    if not isinstance(private, bool):
        raise ConfigError(f"{where}: [release] private must be true or false, got {private!r}")

    tables = data.get("benchmark")
    if tables is None:
        raise ConfigError(f"{where}: no [[benchmark]] tables: nothing to release")
    if not isinstance(tables, list):
        raise ConfigError(f"{where}: write benchmarks as [[benchmark]] (an array of tables)")

    entries: list[BenchmarkEntry] = []
    seen: set[str] = set()
    for i, t in enumerate(tables, 1):
        ctx = f"{where}: [[benchmark]] #{i}"
        if not isinstance(t, dict):
            raise ConfigError(f"{ctx}: must be a table")
        bad = set(t) - _BENCHMARK_KEYS
        if bad:
            raise ConfigError(f"{ctx}: unknown key(s) {sorted(bad)} (known: {sorted(_BENCHMARK_KEYS)})")
        name = t.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{ctx}: missing name = \"...\"")
        ctx = f"{where}: benchmark {name!r}"
        if name not in REGISTRY:
            raise ConfigError(f"{ctx}: unknown tiny benchmark; registered: {', '.join(sorted(REGISTRY)) or '(none)'}")
        if name in seen:
            raise ConfigError(f"{ctx}: listed twice")
        seen.add(name)

        responses = t.get("responses")
        if isinstance(responses, str):
            responses = [responses]
        if not isinstance(responses, list) or not responses or not all(isinstance(r, str) and r for r in responses):
            raise ConfigError(f"{ctx}: responses must be a path or a list of paths (anything `builder ingest` reads)")
        resp_paths = tuple(_resolve(r, base) for r in responses)
        if check_paths:
            for r, p in zip(responses, resp_paths):
                if not p.exists():
                    raise ConfigError(f"{ctx}: responses {r!r} not found (looked at {p})")

        content = t.get("content")
        content_out: dict[str, str] | None = None
        if content is not None:
            if not isinstance(content, dict) or not all(isinstance(k, str) and isinstance(v, str) and v
                                                         for k, v in content.items()):
                raise ConfigError(f"{ctx}: content must be a table {{ split = \"path or dataset id\" }}")
            content_out = {}
            for split, value in content.items():
                if _is_local_path(value, base):
                    p = _resolve(value, base)
                    if check_paths and not p.exists():
                        raise ConfigError(f"{ctx}: content for split {split!r}: {value!r} not found (looked at {p})")
                    content_out[split] = str(p)
                elif _HUB_ID_RE.match(value.removeprefix("hub:")):
                    content_out[split] = value
                else:
                    raise ConfigError(f"{ctx}: content for split {split!r}: {value!r} is neither an existing "
                                       "path nor a Hub dataset id (owner/name)")

        anchors = t.get("anchors")
        if anchors is not None and (isinstance(anchors, bool) or not isinstance(anchors, int) or anchors < 1):
            raise ConfigError(f"{ctx}: anchors must be a positive integer, got {anchors!r}")
        seed = t.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ConfigError(f"{ctx}: seed must be a non-negative integer, got {seed!r}")
        repo = t.get("repo")
        if repo is not None and (not isinstance(repo, str) or not re.match(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$", repo)):
            raise ConfigError(f"{ctx}: repo must be \"owner/name\", got {repo!r}")
        entries.append(BenchmarkEntry(name=name, responses=resp_paths, content=content_out,
                                      anchors=anchors, seed=seed, repo=repo))
    if not entries:
        raise ConfigError(f"{where}: no [[benchmark]] tables: nothing to release")
    repos = [e.repo_id(org) for e in entries]
    dup = sorted({r for r in repos if repos.count(r) > 1})
    if dup:
        raise ConfigError(f"{where}: several benchmarks publish to {', '.join(dup)}")
    return ReleaseConfig(path=path, org=org, benchmarks=tuple(entries), private=private)


def default_out_dir(version: str) -> Path:
    """``build/release-X.Y.Z`` (relative to the working directory)."""
    return Path("build") / f"release-{'.'.join(map(str, parse_version(version)))}"


# --------------------------------------------------------------------------- local files


@dataclass(frozen=True)
class LocalFile:
    path: str  # relative, POSIX separators
    size: int
    sha256: str
    git_oid: str  # git blob sha1: what the Hub reports for non-LFS files

    @property
    def pointer_oid(self) -> str:
        """Git blob sha1 of this file's LFS pointer (the blob id the Hub reports for LFS files)."""
        pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{self.sha256}\nsize {self.size}\n".encode()
        return hashlib.sha1(b"blob %d\0" % len(pointer) + pointer).hexdigest()


def _hash_file(p: Path) -> tuple[int, str, str]:
    size = p.stat().st_size
    sha256 = hashlib.sha256()
    sha1 = hashlib.sha1(b"blob %d\0" % size)
    with open(p, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            sha256.update(chunk)
            sha1.update(chunk)
    return size, sha256.hexdigest(), sha1.hexdigest()


def local_files(folder: str | os.PathLike) -> dict[str, LocalFile]:
    """Every file under ``folder`` (recursive) with its size, sha256 and git blob id.

    Hidden files and folders (a name starting with ``.``) are skipped: they are neither
    validated nor published (the Hub's ``.gitattributes`` is left alone)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ReleaseError(f"{folder} is not a folder")
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_file() and not any(part.startswith(".") for part in rel.split("/")):
            size, sha, oid = _hash_file(p)
            out[rel] = LocalFile(rel, size, sha, oid)
    return out


# --------------------------------------------------------------------------- validation


def _token_values() -> list[str]:
    """The configured Hub token(s), to make sure none ends up in a published file."""
    values = {os.environ.get(k) for k in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")}
    try:
        from huggingface_hub import get_token

        values.add(get_token())
    except Exception:  # pragma: no cover - no huggingface_hub / unreadable token file
        pass
    return [v for v in values if v and len(v) >= 8]


def _card_configs(card_data: Mapping, where: str) -> list[tuple[str, dict[str, list[str]]]]:
    """``[(config_name, {split: [globs]})]`` from the card's ``configs:`` YAML."""
    configs = card_data.get("configs")
    if not isinstance(configs, list) or not configs:
        raise ReleaseError(f"{where}: the card has no `configs:` section")
    out = []
    for c in configs:
        if not isinstance(c, dict) or not isinstance(c.get("config_name"), str):
            raise ReleaseError(f"{where}: a `configs:` entry has no config_name: {c!r}")
        data_files = c.get("data_files")
        splits: dict[str, list[str]] = {}
        if isinstance(data_files, str):
            splits["train"] = [data_files]
        elif isinstance(data_files, list):
            for d in data_files:
                if not isinstance(d, dict) or "split" not in d or "path" not in d:
                    raise ReleaseError(f"{where}: config {c['config_name']!r}: data_files entries need split and path")
                paths = d["path"] if isinstance(d["path"], list) else [d["path"]]
                splits.setdefault(str(d["split"]), []).extend(str(p) for p in paths)
        else:
            raise ReleaseError(f"{where}: config {c['config_name']!r} has no data_files")
        out.append((c["config_name"], splits))
    return out


def validate_folder(folder: str | os.PathLike, spec: Any = None, *, check_token: bool = True) -> dict:
    """Check a built tiny-benchmark folder before it is published.

    * ``manifest.json`` lists every other file with its exact size and sha256;
    * ``README.md`` parses with ``DatasetCard.load`` and declares ``configs:``;
    * every config/split loads with ``load_dataset(folder, config)`` and equals the parquet
      files its ``data_files`` globs select (same columns, same rows);
    * ``estimator.json``/``irt_parameters.npz`` (when present) load with ``TinyEstimator``
      and, when ``spec`` (a :class:`~builder.benchmarks.BenchmarkSpec`) is given, the anchors
      are the rows of the configs' tiny splits, in order;
    * no file contains the configured Hub token.

    Returns a summary ``{"files": n, "configs": {config: {split: rows}}, "anchors": k}``;
    raises :class:`ReleaseError` naming the first problem.
    """
    import glob as _glob

    folder = Path(folder)
    where = str(folder)
    files = local_files(folder)
    # -- manifest
    mpath = folder / MANIFEST_NAME
    if MANIFEST_NAME not in files:
        raise ReleaseError(f"{where}: no {MANIFEST_NAME}")
    try:
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ReleaseError(f"{where}/{MANIFEST_NAME}: not valid JSON ({exc})") from None
    listed = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(listed, dict) or not listed:
        raise ReleaseError(f"{where}/{MANIFEST_NAME}: no \"files\" table")
    for rel, meta in listed.items():
        f = files.get(rel)
        if f is None:
            raise ReleaseError(f"{where}: {rel} is in the manifest but not in the folder")
        if not isinstance(meta, dict) or meta.get("sha256") != f.sha256:
            raise ReleaseError(f"{where}: {rel} does not match the manifest sha256 "
                               f"(file {f.sha256[:12]}..., manifest {str((meta or {}).get('sha256'))[:12]}...)")
        if "size" in meta and int(meta["size"]) != f.size:
            raise ReleaseError(f"{where}: {rel} is {f.size} bytes, the manifest says {meta['size']}")
    unlisted = sorted(set(files) - set(listed) - {MANIFEST_NAME})
    if unlisted:
        raise ReleaseError(f"{where}: file(s) not in the manifest: {', '.join(unlisted[:5])}")
    # -- secrets
    if check_token:
        tokens = [t.encode() for t in _token_values()]
        if tokens:
            for rel in files:
                data = (folder / rel).read_bytes()
                if any(t in data for t in tokens):
                    raise ReleaseError(f"{where}: {rel} contains the Hub token; refusing to publish it")
    # -- card
    if README_NAME not in files:
        raise ReleaseError(f"{where}: no {README_NAME} (dataset card)")
    from huggingface_hub import DatasetCard

    try:
        card = DatasetCard.load(folder / README_NAME)
    except Exception as exc:
        raise ReleaseError(f"{where}/{README_NAME}: the card does not parse: {exc}") from None
    configs = _card_configs(card.data.to_dict(), f"{where}/{README_NAME}")
    # -- load_dataset round trip
    import pyarrow as pa
    import pyarrow.parquet as pq
    from datasets import load_dataset

    summary: dict[str, Any] = {"files": len(files), "configs": {}}
    with tempfile.TemporaryDirectory(prefix="tinybench-validate-") as cache:
        for name, splits in configs:
            matches = {}
            for split, globs in splits.items():
                matches[split] = sorted({p for g in globs for p in _glob.glob(str(folder / g), recursive=True)})
                if not matches[split]:
                    raise ReleaseError(f"{where}: config {name!r} split {split!r}: no file matches {globs}")
            try:
                ds = load_dataset(str(folder), name, cache_dir=cache)
            except Exception as exc:
                raise ReleaseError(f"{where}: load_dataset(folder, {name!r}) failed: {type(exc).__name__}: {exc}") from None
            if set(ds) != set(splits):
                raise ReleaseError(f"{where}: config {name!r} loads splits {sorted(ds)}, the card declares {sorted(splits)}")
            rows = {}
            for split, matched in matches.items():
                tables = [pq.read_table(p) for p in matched]
                direct = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
                got = ds[split]
                if got.num_rows == 0:
                    raise ReleaseError(f"{where}: config {name!r} split {split!r} is empty")
                if got.column_names != direct.column_names or got.num_rows != direct.num_rows:
                    raise ReleaseError(
                        f"{where}: config {name!r} split {split!r}: load_dataset gives {got.num_rows} rows x "
                        f"{got.column_names}, the parquet has {direct.num_rows} x {direct.column_names}")
                if not _same_rows(got.data.table, direct):
                    raise ReleaseError(f"{where}: config {name!r} split {split!r}: load_dataset rows differ from the parquet")
                rows[split] = got.num_rows
            summary["configs"][name] = rows
    # -- estimator side files (at the root, or one per config in <config>/)
    from .estimator import JSON_NAME, NPZ_NAME, TinyEstimator

    est_dirs = sorted({Path(rel).parent for rel in files if Path(rel).name in (JSON_NAME, NPZ_NAME)})
    n_anchors = 0
    for d in est_dirs:
        try:
            n_anchors += len(TinyEstimator.load(folder / d).anchor_ids)
        except Exception as exc:
            raise ReleaseError(f"{where}: the estimator side files in {d.as_posix()}/ do not load: {exc}") from None
    if est_dirs:
        summary["anchors"] = n_anchors
    if spec is not None:
        if not est_dirs:
            raise ReleaseError(f"{where}: no estimator side files ({JSON_NAME}, {NPZ_NAME})")
        declared = dict(configs)
        expected = 0
        for c in spec.configs:
            if c.name not in declared:
                raise ReleaseError(f"{where}: the card has no config {c.name!r} (registry: {spec.name})")
            if c.tiny_split not in summary["configs"][c.name]:
                raise ReleaseError(f"{where}: config {c.name!r} has no tiny split {c.tiny_split!r}")
            expected += summary["configs"][c.name][c.tiny_split]
        if expected != n_anchors:
            raise ReleaseError(f"{where}: the estimator(s) have {n_anchors} anchors, the tiny splits hold {expected} rows")
    return summary


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:  # NaN
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    return a == b


def _same_rows(a, b) -> bool:
    """Two pyarrow tables hold the same columns and values (NaN equals NaN)."""
    if a.column_names != b.column_names or a.num_rows != b.num_rows:
        return False
    try:
        if a.replace_schema_metadata(None).equals(b.cast(a.schema).replace_schema_metadata(None)):
            return True
    except Exception:  # types that do not cast: compare values
        pass
    return all(_same_value(a.column(n).to_pylist(), b.column(n).to_pylist()) for n in a.column_names)


# --------------------------------------------------------------------------- remote side


def _api(api=None):
    if api is not None:
        return api
    from huggingface_hub import HfApi

    return HfApi()


@dataclass(frozen=True)
class RemoteFile:
    path: str
    size: int
    blob_id: str
    lfs_sha256: str | None


def remote_files(repo_id: str, revision: str, api=None) -> dict[str, RemoteFile]:
    """The files of ``repo_id`` at ``revision`` (recursive tree listing; no downloads)."""
    from huggingface_hub.hf_api import RepoFile

    api = _api(api)
    out = {}
    for entry in api.list_repo_tree(repo_id, recursive=True, revision=revision, repo_type=REPO_TYPE):
        if isinstance(entry, RepoFile):
            out[entry.path] = RemoteFile(entry.path, entry.size, entry.blob_id,
                                         entry.lfs.sha256 if entry.lfs is not None else None)
    return out


def compare_trees(local: Mapping[str, LocalFile], remote: Mapping[str, RemoteFile]) -> dict[str, list[str]]:
    """``{"added", "changed", "deleted", "same"}`` paths going from ``remote`` to ``local``.

    Files the Hub manages itself (``.gitattributes``) are ignored unless the folder has one.
    A file is the same when its LFS sha256 matches or, without LFS metadata, when the git blob
    id is the file's (regular file) or its LFS pointer's.
    """
    diff: dict[str, list[str]] = {"added": [], "changed": [], "deleted": [], "same": []}
    for rel, lf in local.items():
        rf = remote.get(rel)
        if rf is None:
            diff["added"].append(rel)
        elif (rf.lfs_sha256 == lf.sha256) if rf.lfs_sha256 else (rf.blob_id in (lf.git_oid, lf.pointer_oid)):
            diff["same"].append(rel)
        else:
            diff["changed"].append(rel)
    for rel in remote:
        if rel not in local and rel not in HUB_MANAGED:
            diff["deleted"].append(rel)
    return {k: sorted(v) for k, v in diff.items()}


def _identical(diff: Mapping[str, list[str]]) -> bool:
    return not (diff["added"] or diff["changed"] or diff["deleted"])


def _describe(exc: BaseException) -> str:
    """A one-line description of a client error (never includes request headers)."""
    status = getattr(getattr(exc, "response", None), "status_code", None)
    msg = " ".join(str(exc).split())
    if len(msg) > 400:
        msg = msg[:400] + "..."
    return f"{type(exc).__name__}{f' (HTTP {status})' if status else ''}: {msg}"


def _refs(repo_id: str, api) -> tuple[bool, str | None, dict[str, str]]:
    """``(exists, main_oid, {tag: oid})`` of a dataset repo."""
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        refs = api.list_repo_refs(repo_id, repo_type=REPO_TYPE)
    except RepositoryNotFoundError:
        return False, None, {}
    main_oid = next((b.target_commit for b in refs.branches if b.name == "main"), None)
    return True, main_oid, {t.name: t.target_commit for t in refs.tags}


def fetch_previous(repo_id: str, version: str, dest: str | os.PathLike, api=None) -> tuple[str, Path] | None:
    """Download the latest release of ``repo_id`` tagged below ``version`` into ``dest``.

    Returns ``(tag, folder)`` or None when the repo does not exist or has no earlier
    ``vX.Y.Z`` tag. Hub errors propagate.
    """
    from huggingface_hub import snapshot_download

    api = _api(api)
    exists, _, tags = _refs(repo_id, api)
    if not exists:
        return None
    tag = latest_release_below(tags, version)
    if tag is None:
        return None
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    snapshot_download(repo_id, repo_type=REPO_TYPE, revision=tags[tag], local_dir=dest,
                      endpoint=getattr(api, "endpoint", None))
    shutil.rmtree(dest / ".cache", ignore_errors=True)  # snapshot_download's bookkeeping
    return tag, dest


# --------------------------------------------------------------------------- publishing


@dataclass
class PublishPlan:
    """What publishing ``folder`` to ``repo_id`` as ``tag`` needs (computed read-only)."""

    repo_id: str
    folder: Path
    tag: str
    action: str  # "commit" (commit + tag), "tag" (main already holds it), "none" (already released)
    repo_exists: bool
    main_oid: str | None
    target_oid: str | None  # the commit to tag ("tag"/"none")
    diff: dict[str, list[str]]
    local: dict[str, LocalFile] = field(repr=False, default_factory=dict)
    private: bool = False

    def describe(self) -> str:
        if self.action == "none":
            return f"{self.repo_id}: {self.tag} already released on identical content ({self.target_oid[:12]}); nothing to do"
        if self.action == "tag":
            return f"{self.repo_id}: main already holds this content ({self.target_oid[:12]}); will tag it {self.tag}"
        d = self.diff
        return (f"{self.repo_id}: will commit {len(self.local)} files (new {len(d['added'])}, changed "
                f"{len(d['changed'])}, deleted {len(d['deleted'])}, unchanged {len(d['same'])}) and tag {self.tag}")


@dataclass
class PublishResult:
    repo_id: str
    tag: str
    commit: str
    action: str  # "committed", "tagged", "unchanged"

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def plan_publish(folder: str | os.PathLike, repo_id: str, version: str, api=None, *, private: bool = False) -> PublishPlan:
    """Compare ``folder`` with the repo (read-only) and decide what to do.

    Refuses (:class:`ReleaseError`) when the tag exists on other content, or when a newer
    ``vX.Y.Z`` release exists (publishing would move ``main`` back).
    """
    api = _api(api)
    folder = Path(folder)
    tag = version_tag(version)
    local = local_files(folder)
    try:
        exists, main_oid, tags = _refs(repo_id, api)
        if tag in tags:
            remote = remote_files(repo_id, tags[tag], api)
            diff = compare_trees(local, remote)
            if _identical(diff):
                return PublishPlan(repo_id, folder, tag, "none", True, main_oid, tags[tag], diff, local, private)
            changed = diff["added"] + diff["changed"] + diff["deleted"]
            raise ReleaseError(
                f"{repo_id}: tag {tag} already exists on commit {tags[tag][:12]} with different content "
                f"({len(changed)} file(s) differ, e.g. {', '.join(changed[:3])}); tags are never moved: "
                "release a new version instead")
        newer = sorted((v, t) for t in tags if (v := _tag_version(t)) is not None and v > parse_version(version))
        if newer:
            raise ReleaseError(f"{repo_id}: {tag} is older than the latest release {newer[-1][1]}; "
                               "publishing it would move main back: release a higher version")
        remote = remote_files(repo_id, main_oid, api) if exists and main_oid else {}
    except ReleaseError:
        raise
    except Exception as exc:
        raise ReleaseError(f"{repo_id}: could not read the repository: {_describe(exc)}") from None
    diff = compare_trees(local, remote)
    if exists and main_oid and _identical(diff):
        return PublishPlan(repo_id, folder, tag, "tag", True, main_oid, main_oid, diff, local, private)
    return PublishPlan(repo_id, folder, tag, "commit", exists, main_oid, None, diff, local, private)


def _verify_tag(plan: PublishPlan, api) -> str:
    """The tag's commit if it holds exactly the folder's files; ReleaseError otherwise."""
    try:
        _, _, tags = _refs(plan.repo_id, api)
        oid = tags.get(plan.tag)
        remote = remote_files(plan.repo_id, oid, api) if oid else None
    except Exception as exc:
        raise ReleaseError(f"{plan.repo_id}: could not check tag {plan.tag}: {_describe(exc)}; "
                           "re-run the same command to check and finish") from None
    if oid is None:
        raise ReleaseError(f"{plan.repo_id}: tag {plan.tag} is missing after tagging")
    diff = compare_trees(plan.local, remote)
    if not _identical(diff):
        raise ReleaseError(f"{plan.repo_id}: tag {plan.tag} ({oid[:12]}) does not hold the released files: {diff}")
    return oid


def _tag(plan: PublishPlan, oid: str, api) -> None:
    from huggingface_hub.errors import HfHubHTTPError

    try:
        api.create_tag(plan.repo_id, repo_type=REPO_TYPE, tag=plan.tag, revision=oid,
                       tag_message=f"{plan.repo_id.split('/')[-1]} {plan.tag}")
        return
    except HfHubHTTPError as exc:
        error = exc
    except Exception as exc:  # transport errors: the tag may or may not exist now
        error = exc
    # Did the tag land anyway (a lost answer, a concurrent identical release)?
    try:
        _verify_tag(plan, api)
        return
    except Exception:
        pass
    raise ReleaseError(
        f"{plan.repo_id}: the content is on main (commit {oid[:12]}) but creating tag {plan.tag} failed: "
        f"{_describe(error)}. No tag was created; re-run the same command to add it (no new commit is made)")


def execute_plan(plan: PublishPlan, api=None, *, message: str | None = None) -> PublishResult:
    """Carry out a :class:`PublishPlan`: one ``create_commit`` (if needed), then the tag."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    api = _api(api)
    if plan.action == "none":
        return PublishResult(plan.repo_id, plan.tag, plan.target_oid, "unchanged")
    if plan.action == "tag":
        _tag(plan, plan.target_oid, api)
        _verify_tag(plan, api)
        return PublishResult(plan.repo_id, plan.tag, plan.target_oid, "tagged")
    if not plan.repo_exists:
        try:
            api.create_repo(plan.repo_id, repo_type=REPO_TYPE, exist_ok=True, private=plan.private)
        except Exception as exc:
            raise ReleaseError(f"{plan.repo_id}: could not create the repository: {_describe(exc)}") from None
    ops: list = [CommitOperationAdd(path_in_repo=rel, path_or_fileobj=str(plan.folder / rel)) for rel in plan.local]
    ops += [CommitOperationDelete(path_in_repo=rel) for rel in plan.diff["deleted"]]
    d = plan.diff
    summary = message or f"Release {plan.tag}"
    description = (f"{plan.repo_id.split('/')[-1]} {plan.tag}: {len(d['added'])} new, {len(d['changed'])} changed, "
                   f"{len(d['deleted'])} deleted, {len(d['same'])} unchanged file(s).")
    try:
        info = api.create_commit(plan.repo_id, repo_type=REPO_TYPE, operations=ops, commit_message=summary,
                                 commit_description=description, parent_commit=plan.main_oid)
    except Exception as exc:
        raise ReleaseError(
            f"{plan.repo_id}: the commit failed: {_describe(exc)}. No tag was created, so {plan.tag} is not "
            "published; re-run the same command to retry (it picks up whatever reached main)") from None
    _tag(plan, info.oid, api)
    _verify_tag(plan, api)
    return PublishResult(plan.repo_id, plan.tag, info.oid, "committed")


def publish_folder(folder: str | os.PathLike, repo_id: str, version: str, api=None, *,
                   private: bool = False, message: str | None = None) -> PublishResult:
    """Publish one built folder to ``repo_id`` as ``vX.Y.Z`` (see :func:`plan_publish`)."""
    api = _api(api)
    return execute_plan(plan_publish(folder, repo_id, version, api, private=private), api, message=message)


def publish_release(folders: Mapping[str, Path], version: str, api=None, *, private: bool = False,
                    progress: bool = True, log: Callable[[str], None] | None = None) -> list[PublishResult]:
    """Publish several folders (``{repo_id: folder}``): plan all first, then execute.

    Every repository is planned before anything is written, so a refused tag anywhere stops
    the release before any repository changes. Execution stops at the first failure
    (ReleaseError); re-running converges.
    """
    from tqdm.auto import tqdm

    api = _api(api)
    log = log or (lambda s: tqdm.write(s, file=sys.stderr))
    plans, refused = [], []
    for repo_id, folder in tqdm(list(folders.items()), desc="plan", unit="repo", disable=not progress, file=sys.stderr):
        try:
            plans.append(plan_publish(folder, repo_id, version, api, private=private))
        except ReleaseError as exc:
            refused.append(str(exc))
    if refused:
        raise ReleaseError("nothing was published:\n  " + "\n  ".join(refused))
    for p in plans:
        log(p.describe())
    results = []
    for plan in tqdm(plans, desc="publish", unit="repo", disable=not progress, file=sys.stderr):
        try:
            results.append(execute_plan(plan, api))
        except ReleaseError as exc:
            done = ", ".join(f"{r.repo_id}@{r.tag}" for r in results) or "none"
            raise ReleaseError(f"{exc}\n(published before the failure: {done}; re-run to finish)") from None
        r = results[-1]
        log(f"{r.repo_id}: {r.tag} -> {r.commit[:12]} ({r.action})")
    return results


# --------------------------------------------------------------------------- build + run


def _default_build() -> BuildFn:
    try:
        from .dataset import build_benchmark
    except ImportError as exc:
        raise ReleaseError(f"builder.dataset.build_benchmark is not available: {exc}") from None
    return build_benchmark


def _prepare_out(folder: Path) -> None:
    """Remove an earlier build of this benchmark (only if it looks like one)."""
    if folder.exists():
        if folder.is_dir() and ((folder / MANIFEST_NAME).exists() or not any(folder.iterdir())):
            shutil.rmtree(folder)
        else:
            raise ReleaseError(f"{folder} exists and is not a tiny-benchmark build folder; "
                               "choose another --out or remove it")


def build_release(config: ReleaseConfig, version: str, out: str | os.PathLike, *,
                  previous: Mapping[str, Path | None] | None = None, build: BuildFn | None = None,
                  progress: bool = True, log: Callable[[str], None] | None = None) -> dict[str, Path]:
    """Build every benchmark of ``config`` into ``out/<name>``; returns ``{name: folder}``."""
    from tqdm.auto import tqdm

    log = log or (lambda s: tqdm.write(s, file=sys.stderr))
    build = build or _default_build()
    version = ".".join(map(str, parse_version(version)))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    folders = {}
    for entry in tqdm(config.benchmarks, desc="build", unit="benchmark", disable=not progress, file=sys.stderr):
        target = out / entry.name
        _prepare_out(target)
        prev = (previous or {}).get(entry.name)
        from .config import BuildOptions

        options = BuildOptions(anchors=entry.anchors, seed=entry.seed, version=version,
                               repo_id=entry.repo_id(config.org), tag=version_tag(version))
        responses = str(entry.responses[0]) if len(entry.responses) == 1 else [str(p) for p in entry.responses]
        try:
            got = build(entry.name, responses, dict(entry.content) if entry.content else None, options,
                        out=target, previous=prev, progress=progress)
        except ReleaseError:
            raise
        except Exception as exc:
            raise ReleaseError(f"building {entry.name} failed: {type(exc).__name__}: {exc}") from exc
        folders[entry.name] = Path(got) if got is not None else target
        log(f"built {entry.name} -> {folders[entry.name]}")
    return folders


def run_release(config: ReleaseConfig, version: str, *, out: str | os.PathLike | None = None, push: bool = False,
                previous: str = "auto", build: BuildFn | None = None, progress: bool = True,
                log: Callable[[str], None] | None = None, api=None) -> dict:
    """Build, validate and (with ``push``) publish a release; returns the summary written to
    ``out/release.json``.

    ``previous``: ``"auto"`` fetches each repo's latest earlier release for the changelog
    (a failure to reach the Hub is fatal with ``push``, a warning without), ``"none"`` skips it.
    """
    from tqdm.auto import tqdm

    from .benchmarks import get_benchmark

    log = log or (lambda s: tqdm.write(s, file=sys.stderr))
    version = ".".join(map(str, parse_version(version)))
    out = Path(out) if out is not None else default_out_dir(version)
    if not progress:
        _quiet_clients()
    if push and not _token_configured():
        raise ConfigError("--push needs a Hub token with write access: set HF_TOKEN (or run `hf auth login`)")
    repo_ids = {e.name: e.repo_id(config.org) for e in config.benchmarks}
    summary: dict[str, Any] = {"version": version, "tag": version_tag(version), "config": str(config.path),
                               "org": config.org, "benchmarks": {}}
    with tempfile.TemporaryDirectory(prefix="tinybench-previous-") as tmp:
        prev_folders: dict[str, Path | None] = {}
        if previous == "auto":
            if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on") and not push:
                log("HF_HUB_OFFLINE is set: not fetching previous releases (changelog without comparison)")
            else:
                api = _api(api)
                for entry in tqdm(config.benchmarks, desc="previous", unit="repo", disable=not progress, file=sys.stderr):
                    try:
                        got = fetch_previous(repo_ids[entry.name], version, Path(tmp) / entry.name, api)
                    except Exception as exc:
                        if push:
                            raise ReleaseError(f"{repo_ids[entry.name]}: could not fetch the previous release: "
                                               f"{_describe(exc)}") from None
                        log(f"warning: {repo_ids[entry.name]}: previous release not fetched ({_describe(exc)}); "
                            "the changelog will not compare with it")
                        got = None
                    if got and not (got[1] / MANIFEST_NAME).is_file():
                        log(f"warning: {repo_ids[entry.name]}: previous release {got[0]} has no {MANIFEST_NAME}; "
                            "the changelog will not compare with it")
                        got = None
                    prev_folders[entry.name] = got[1] if got else None
                    summary["benchmarks"].setdefault(entry.name, {})["previous"] = got[0] if got else None
                    if got:
                        log(f"{repo_ids[entry.name]}: previous release {got[0]}")
        elif previous != "none":
            raise ConfigError(f"previous must be 'auto' or 'none', got {previous!r}")
        folders = build_release(config, version, out, previous=prev_folders, build=build, progress=progress, log=log)
    for name, folder in tqdm(list(folders.items()), desc="validate", unit="benchmark", disable=not progress,
                             file=sys.stderr):
        report = validate_folder(folder, get_benchmark(name))
        manifest_sha = local_files(folder)[MANIFEST_NAME].sha256
        summary["benchmarks"].setdefault(name, {}).update(
            {"repo_id": repo_ids[name], "folder": str(folder), "manifest_sha256": manifest_sha, "validation": report})
        log(f"validated {name}: {report['files']} files, configs {report['configs']}")
    _write_summary(out, summary)
    if push:
        results = publish_release({repo_ids[n]: f for n, f in folders.items()}, version, api,
                                  private=config.private, progress=progress, log=log)
        for name, r in zip(folders, results):
            summary["benchmarks"][name]["published"] = r.to_dict()
        _write_summary(out, summary)
    return summary


def _quiet_clients() -> None:
    """No progress bars from huggingface_hub / datasets (``--quiet``)."""
    try:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    except Exception:  # pragma: no cover
        pass
    try:
        from datasets.utils.logging import disable_progress_bar

        disable_progress_bar()
    except Exception:  # pragma: no cover
        pass


def _token_configured() -> bool:
    try:
        from huggingface_hub import get_token

        return bool(get_token())
    except Exception:  # pragma: no cover
        return bool(os.environ.get("HF_TOKEN"))


def _write_summary(out: Path, summary: dict) -> None:
    tmp = out / "release.json.tmp"
    tmp.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, out / "release.json")


# --------------------------------------------------------------------------- CLI

DESCRIPTION = """\
Build every tiny benchmark listed in a release config, validate each folder (manifest hashes,
dataset card, load_dataset round trip of every config/split, estimator side files) and, with
--push, publish each to <org>/<name> on the Hub: one atomic commit, then the tag vX.Y.Z.

The Hub endpoint and token come from the huggingface_hub environment (HF_ENDPOINT, HF_TOKEN or a
saved login). Re-running a release is safe: identical content makes no new commit, an
interrupted release is completed, and an existing tag with other content is refused."""

EPILOG = """\
examples:
  python release.py --config release-local.toml --version 1.0.0          # build + validate
  python release.py --config release.toml --version 1.1.0 --push         # + publish
  python release.py --config release.toml --version 1.1.0 --only tinyAlpacaEval --out /tmp/rel

exit status: 0 success; 1 build, validation or publishing failed; 2 bad arguments or config.
See docs/RELEASE.md."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="release.py", description=DESCRIPTION, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", required=True, metavar="TOML", help="release config ([release] org + [[benchmark]] tables)")
    p.add_argument("--version", required=True, metavar="X.Y.Z", help="release version; the Hub tag is vX.Y.Z")
    p.add_argument("--push", action="store_true", help="publish to the Hub after building and validating")
    p.add_argument("--out", metavar="DIR", help="output folder (default: build/release-X.Y.Z); one sub-folder per benchmark")
    p.add_argument("--only", action="append", metavar="NAME", help="release only this benchmark of the config (repeatable)")
    p.add_argument("--no-previous", action="store_true",
                   help="do not fetch the previous release from the Hub (the card's changelog then has no comparison)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return p


def main(argv: Sequence[str] | None = None, *, build: BuildFn | None = None) -> int:
    """CLI entry point (``release.py``). ``build`` replaces ``build_benchmark`` (tests)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        version = ".".join(map(str, parse_version(args.version)))
        config = load_config(args.config).select(args.only)
        summary = run_release(config, version, out=args.out, push=args.push,
                              previous="none" if args.no_previous else "auto", build=build,
                              progress=not args.quiet)
    except ReleaseError as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, ConfigError) else 1
    except KeyboardInterrupt:
        print("interrupted: no tag was created for an unfinished repository; re-run to finish", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug or an unexpected library error: still one line, no token
        if args.debug:
            raise
        print(f"error: unexpected {_describe(exc)} (run with --debug for the traceback)", file=sys.stderr)
        return 1
    out = Path(args.out) if args.out else default_out_dir(version)
    lines = [f"release {summary['tag']} ({len(summary['benchmarks'])} benchmark(s)) in {out}/"]
    for name, b in summary["benchmarks"].items():
        pub = b.get("published")
        state = f"{pub['action']} {pub['commit'][:12]}" if pub else "built (not pushed)"
        lines.append(f"  {name:<28} {b['repo_id']:<40} {state}")
    if not args.push:
        lines.append("not published (add --push to publish)")
    print("\n".join(lines))
    return 0
