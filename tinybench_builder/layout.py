"""The tiny-dataset folder format: its one owner.

A folder written by ``tinybench-builder build`` (a Hub dataset repository)::

    README.md                                  dataset card (tinybench_builder.dataset.cards)
    <config>/<split>-00000-of-00001.parquet    one file per config and split (:func:`data_path`); the
                                               ``pool`` split holds every item, in estimator order
    [<estimator path>/]estimator.json          estimator side files (TinyEstimator.save),
    [<estimator path>/]irt_parameters.npz      at the root or one per config
    [<estimator path>/]validation.json         the out-of-fold validation report
    lm_eval/<task>.yaml, lm_eval/tiny_utils_<id>.py  the lm-evaluation-harness task files (tinybench_builder.dataset.harness_tasks)
    lighteval/tiny_tasks.py                    the lighteval custom tasks (tinybench_builder.dataset.lighteval_tasks)
    estimator.py, adaptive.py                  the standalone estimator and its adaptive session, copied as-is
    validation.png                             the validation plot (optional matplotlib)
    manifest.json                              versions, inputs, parameters, sha256 + size of every other file

This module knows the names, writes and reads the manifest (written once, last, with the
hashes of every other file), verifies a folder against it, lists a folder's files (hidden files,
a name starting with ``.``, are never listed, hashed or published), hashes files and inputs,
writes JSON and parquet with the fixed settings that make builds byte-identical, and replaces a
folder atomically, but only a folder it can prove it wrote (:func:`ownership_problem`): empty,
or holding a manifest of ours (``"format": "tinybenchmarks-dataset"`` or
``"tinybenchmarks-fit"``) and nothing but the files that manifest lists, unchanged. A folder
with any other file (a user's notes, a ``.git`` folder, an edited card, a symbolic link) or a
manifest that merely looks like ours is never replaced.

``tinybench-builder fit`` writes a smaller folder (side files, ``estimator.py``, ``adaptive.py``, ``validation.json`` and
``validation.md``, and a manifest of format ``"tinybenchmarks-fit"`` listing them):
:func:`write_fit_folder`; it is replaced under the same rule.

``estimator.py`` keeps its own minimal reader of the manifest and side files (it is shipped
alone); a test keeps the two in agreement.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

import numpy as np

from tinybench_builder import estimator as _estimator
from tinybench_builder.errors import BuildError
from tinybench_builder.files import atomic_output, remove_stale, sibling

DATASET_FORMAT = "tinybenchmarks-dataset"
#: the manifest format of a ``tinybench-builder fit`` folder
FIT_FORMAT = "tinybenchmarks-fit"
#: manifests this project writes: a folder holding one (and only its files) may be replaced
OWN_FORMATS = (DATASET_FORMAT, FIT_FORMAT)
#: files that file browsers add to any folder they show: never a reason to keep a folder
OS_METADATA = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})
MANIFEST_SCHEMA_VERSION = 1
MANIFEST_NAME = "manifest.json"
CARD_NAME = "README.md"
VALIDATION_NAME = "validation.json"
VALIDATION_MD_NAME = "validation.md"
PLOT_NAME = "validation.png"
ESTIMATOR_CODE = "estimator.py"
#: the adaptive-evaluation session that ``estimator.py`` loads (TinyEstimator.adaptive)
ADAPTIVE_CODE = "adaptive.py"
#: the standalone code copied into every folder (numpy + scipy only)
CODE_FILES = (ESTIMATOR_CODE, ADAPTIVE_CODE)
ESTIMATOR_JSON = "estimator.json"
ESTIMATOR_NPZ = "irt_parameters.npz"
#: the estimator's side files (TinyEstimator.save writes them; from_hub checks them)
ESTIMATOR_FILES = (ESTIMATOR_JSON, ESTIMATOR_NPZ)
#: folder of the lm-evaluation-harness task files (tinybench_builder.dataset.harness_tasks)
HARNESS_DIR = "lm_eval"
#: the lighteval custom-task module (``--custom-tasks``; tinybench_builder.dataset.lighteval_tasks)
LIGHTEVAL_TASKS = "lighteval/tiny_tasks.py"
#: the split holding every item of a config's estimator, in estimator order: what adaptive
#: evaluation (TinyEstimator.adaptive) asks from; row j is ``config_item_ids(est, scenario)[j]``
POOL_SPLIT = "pool"
#: the column of every split that names its row: in the tiny split, the estimator's item id
ITEM_ID_COLUMN = "item_id"

__all__ = [
    "DATASET_FORMAT", "FIT_FORMAT", "OWN_FORMATS", "MANIFEST_SCHEMA_VERSION", "MANIFEST_NAME", "CARD_NAME",
    "VALIDATION_NAME", "PLOT_NAME", "ESTIMATOR_CODE", "ADAPTIVE_CODE", "CODE_FILES", "ESTIMATOR_JSON", "ESTIMATOR_NPZ",
    "ESTIMATOR_FILES", "HARNESS_DIR", "LIGHTEVAL_TASKS", "POOL_SPLIT",
    "data_path", "estimator_folder", "child_path", "name_problem", "file_sha256", "FileDigest", "file_digest", "input_record", "matrix_record",
    "is_hidden",
    "listed_files", "to_jsonable", "write_json", "write_parquet", "copy_estimator_code", "atomic_write_text",
    "write_manifest", "read_manifest", "verify_manifest", "refresh_manifest", "is_dataset_folder",
    "ITEM_ID_COLUMN", "config_anchor_ids", "config_item_ids", "config_design_hash", "dataset_design_hash", "load_estimators", "validation_rows", "tiny_split_frame", "ownership_problem", "check_replaceable", "replace_folder", "staging",
    "write_fit_folder",
]


# ============================================================================ names
def data_path(config: str, split: str) -> str:
    """Repository path of a config's split: ``<config>/<split>-00000-of-00001.parquet``."""
    return f"{config}/{split}-00000-of-00001.parquet"


def estimator_folder(folder: str | os.PathLike, path: str) -> Path:
    """The folder of an estimator: ``path`` is relative to ``folder`` (``""`` = the root)."""
    return child_path(folder, path) if path else Path(folder)


#: a name that becomes a path part of the folder (config, split, harness task): letters, digits, _ . -
#: starting with a letter, digit or _ (never hidden, never ``.`` or ``..``), at most 96 characters
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,95}")
#: datasets' rule for split names (``datasets.naming._split_re``), ASCII only
_SPLIT_NAME = re.compile(r"[A-Za-z0-9_]{1,96}(\.[A-Za-z0-9_]+)*")


def name_problem(value: object, what: str, split: bool = False) -> str | None:
    """Why ``value`` cannot be a plain name (a config, split or task name), or None.

    These names become file and folder names of the build (``<config>/<split>-...parquet``,
    ``lm_eval/<task>.yaml``): a path separator, ``..``, an absolute path or a control
    character would write outside the output folder or make names no one can type. A
    split also follows datasets' rule (``\\w+(\\.\\w+)*``, ASCII), so ``load_dataset`` reads it.
    """
    rule = _SPLIT_NAME if split else _PLAIN_NAME
    if isinstance(value, str) and rule.fullmatch(value) and ".." not in value and len(value) <= 96:
        return None
    allowed = "letters, digits, _ and single dots" if split else "letters, digits, _ . -, not starting with . or -"
    return (f"{what} must be a plain name ({allowed}; no path separators, '..', absolute paths or control "
            f"characters; at most 96 characters), got {value!r:.120}")


def child_path(folder: str | os.PathLike, rel: str) -> Path:
    """``folder / rel`` for a relative POSIX path that stays inside ``folder``; BuildError otherwise.

    The registry and the spec loader refuse names that are not plain names; this is the last
    check before a file is written, so that no name from a spec or a manifest ever writes
    outside the folder (absolute paths, ``..``, backslashes, control characters, empty parts).
    """
    parts = rel.split("/") if isinstance(rel, str) else []
    if (not parts or rel.startswith("/") or "\\" in rel
            or any(p in ("", ".", "..") or not p.isprintable() for p in parts)):
        raise BuildError(f"refusing to write {rel!r:.120}: not a plain relative path inside the folder")
    return Path(folder).joinpath(*parts)


# ============================================================================ hashing
def file_sha256(path: str | os.PathLike) -> str:
    return file_digest(path).sha256


@dataclass(frozen=True)
class FileDigest:
    """Size, sha256 and git blob id (sha1 of ``blob <size>\\0<data>``) of a file, from one read."""

    size: int
    sha256: str
    git_oid: str


def file_digest(path: str | os.PathLike) -> FileDigest:
    size = os.stat(path).st_size
    sha256 = hashlib.sha256()
    sha1 = hashlib.sha1(b"blob %d\0" % size)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            sha256.update(chunk)
            sha1.update(chunk)
    return FileDigest(size, sha256.hexdigest(), sha1.hexdigest())


def input_record(path: str | os.PathLike) -> dict:
    """How the manifest names an input: base name (never the path), kind, size or file count, sha256.

    A folder's sha256 is taken over its files' relative paths and hashes (all files, hidden included).
    """
    path = Path(path)
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


def matrix_record(m) -> dict:
    """How the manifest names an in-memory :class:`~tinybench_builder.read.matrix.ResponseMatrix`: its shape and a
    sha256 of its model and item ids and its scores (little-endian float64)."""
    h = hashlib.sha256()
    h.update(json.dumps([m.models, m.items]).encode())
    n, N = m.shape
    step = max(1, (1 << 22) // max(N, 1))  # blocks of rows: the bytes of the whole C-ordered matrix
    for start in range(0, n, step):
        h.update(np.ascontiguousarray(m.score_rows(slice(start, start + step)), dtype="<f8").tobytes())
    return {"name": "<ResponseMatrix>", "kind": "matrix", "models": m.shape[0], "items": m.shape[1],
            "sha256": h.hexdigest()}


# ============================================================================ listing
def is_hidden(rel: str) -> bool:
    """A path with a part starting with ``.``: never listed, hashed or published."""
    return any(part.startswith(".") for part in rel.split("/"))


def listed_files(folder: str | os.PathLike, *, with_manifest: bool = False) -> list[str]:
    """The folder's files (relative POSIX paths, sorted), hidden ones skipped; the manifest
    itself only with ``with_manifest``."""
    folder = Path(folder)
    out = []
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_file() and not is_hidden(rel) and (with_manifest or rel != MANIFEST_NAME):
            out.append(rel)
    return out


# ============================================================================ writing files
def to_jsonable(obj: Any) -> Any:
    """Plain JSON values: numpy scalars and arrays, tuples -> lists; NaN and infinities -> None.

    What a JSON round trip of a written file gives back, so in-memory values render like read ones.
    """
    if isinstance(obj, dict) or isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return x if math.isfinite(x) else None
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    return obj


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """JSON as every file of the folder is written: indent 1, UTF-8, keys in insertion order, newline."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_jsonable(obj), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def write_parquet(table, path: str | os.PathLike) -> None:
    """A data file with fixed writer settings (same table, same bytes)."""
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="snappy", use_dictionary=True, write_statistics=True,
                   row_group_size=max(1, min(table.num_rows, 10_000)), data_page_version="1.0")


def copy_estimator_code(folder: str | os.PathLike) -> Path:
    """The package's standalone ``estimator.py`` and ``adaptive.py`` (:data:`CODE_FILES`), copied
    as-is into ``folder``; returns the path of ``estimator.py``."""
    src = Path(_estimator.__file__).resolve().parent
    for name in CODE_FILES:
        shutil.copyfile(src / name, Path(folder) / name)
    return Path(folder) / ESTIMATOR_CODE


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``path`` through a temporary sibling and a rename: readers see the old or the new file."""
    with atomic_output(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


# ============================================================================ manifest
def _files_table(folder: Path) -> dict[str, dict]:
    out = {}
    for rel in listed_files(folder):
        d = file_digest(folder / rel)
        out[rel] = {"sha256": d.sha256, "size": d.size}
    return out


def write_manifest(folder: str | os.PathLike, fields: Mapping[str, Any]) -> dict:
    """Write ``manifest.json``: ``fields`` (format, versions, configs, inputs, parameters...) and
    ``files``, the sha256 and size of every other file now in ``folder``. Written last, once."""
    folder = Path(folder)
    manifest = {**fields, "files": _files_table(folder)}
    write_json(folder / MANIFEST_NAME, manifest)
    return manifest


def read_manifest(folder: str | os.PathLike) -> dict:
    """The manifest of a tiny dataset folder (FileNotFoundError / ValueError when it is not one)."""
    p = Path(folder) / MANIFEST_NAME
    if not p.is_file():
        raise FileNotFoundError(f"{p} not found: is {folder} a tiny dataset folder (built by `tinybench-builder build`)?")
    try:
        manifest = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ValueError(f"{p}: not valid JSON ({str(exc)[:200]})") from exc
    fmt = manifest.get("format") if isinstance(manifest, dict) else None
    if fmt == FIT_FORMAT:
        raise ValueError(f"{folder} was written by `tinybench-builder fit` (side files only), not a tiny dataset folder "
                         "(built by `tinybench-builder build`)")
    if fmt != DATASET_FORMAT:
        raise ValueError(f"{p}: not a tiny dataset manifest (format={fmt!r:.60})")
    if not isinstance(manifest.get("configs", {}), dict):
        raise ValueError(f"{p}: field 'configs' must be an object")
    return manifest


def is_dataset_folder(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` holds a manifest of this format (a folder this project wrote)."""
    try:
        read_manifest(folder)
        return True
    except (ValueError, FileNotFoundError):
        return False


def verify_manifest(folder: str | os.PathLike) -> list[str]:
    """Problems with a folder against its manifest (empty list = every file matches).

    Every listed file must exist with the listed sha256 (and size), and every other file of the
    folder (hidden ones excepted) must be listed.
    """
    folder = Path(folder)
    manifest = read_manifest(folder)
    listed = manifest.get("files")
    if not isinstance(listed, dict) or not listed:
        return [f'{MANIFEST_NAME} has no "files" table']
    problems = []
    for rel, meta in listed.items():
        p = folder / rel
        if not p.is_file():
            problems.append(f"{rel} is in the manifest but not in the folder")
            continue
        d = file_digest(p)
        want = meta.get("sha256") if isinstance(meta, dict) else None
        if want != d.sha256:
            problems.append(f"{rel} does not match the manifest sha256 (file {d.sha256[:12]}..., "
                            f"manifest {str(want)[:12]}...)")
        elif "size" in meta and int(meta["size"]) != d.size:
            problems.append(f"{rel} is {d.size} bytes, the manifest says {meta['size']}")
    unlisted = [rel for rel in listed_files(folder) if rel not in listed]
    if unlisted:
        problems.append(f"file(s) not in the manifest: {', '.join(unlisted[:5])}"
                        + (f" and {len(unlisted) - 5} more" if len(unlisted) > 5 else ""))
    return problems


def refresh_manifest(folder: str | os.PathLike) -> dict:
    """Recompute the ``files`` table of a finished folder whose files were rewritten (a card re-rendered)."""
    fields = {k: v for k, v in read_manifest(folder).items() if k != "files"}
    return write_manifest(folder, fields)


# ============================================================================ reading a folder
def config_anchor_ids(est: "_estimator.TinyEstimator", scenario: str) -> list[str]:
    """The anchors of ``scenario`` in ``anchor_ids`` order: the rows of that config's tiny split."""
    return [a for a, p in zip(est.anchor_ids, est.anchor_positions)
            if est.scenarios[est.scenario_index[p]] == scenario]


def config_item_ids(est: "_estimator.TinyEstimator", scenario: str) -> list[str]:
    """Every item of ``scenario`` in ``item_ids`` order: the rows of that config's pool split."""
    s = est.scenarios.index(scenario)
    return [iid for iid, k in zip(est.item_ids, est.scenario_index) if k == s]


def config_design_hash(est: "_estimator.TinyEstimator", scenario: str) -> str:
    """The design hash of one config of ``est`` (:func:`tinybench_builder.estimator.design_hash` of the
    config's anchors, in row order, and their strata); the estimator's own hash for one scenario."""
    if len(est.scenarios) <= 1:
        return est.design_hash
    keep = [i for i, p in enumerate(est.anchor_positions) if est.scenarios[est.scenario_index[p]] == scenario]
    return _estimator.design_hash([est.anchor_ids[i] for i in keep], [int(est.anchor_strata[i]) for i in keep])


def dataset_design_hash(estimators: list, config_hashes: Mapping[str, str]) -> str:
    """The design hash of a tiny dataset: its estimator's when it has one (the hash
    ``TinyEstimator.estimate(..., version=)`` accepts), else the sha256 of its configs' hashes."""
    if len(estimators) == 1:
        return estimators[0].design_hash
    text = "".join(f"{name}:{h}\n" for name, h in sorted(config_hashes.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_estimators(folder: str | os.PathLike) -> dict[str, "_estimator.TinyEstimator"]:
    """Config name -> its estimator (a bundle's configs share one)."""
    manifest = read_manifest(folder)
    cache: dict[str, _estimator.TinyEstimator] = {}
    out = {}
    for name, c in manifest["configs"].items():
        p = c.get("estimator", "")
        if p not in cache:
            cache[p] = _estimator.TinyEstimator.load(estimator_folder(folder, p))
        out[name] = cache[p]
    return out


def validation_rows(folder: str | os.PathLike) -> list[dict]:
    """The validation table of a folder (``fit`` or ``build``): one row per scenario of each
    estimator (its ``validation.json``), with ``random`` and ``score`` (out-of-fold MAE of
    random-k and of the estimate), ``spearman``, ``coverage`` (of the 95% interval) and ``models``."""
    folder = Path(folder)
    paths = sorted({estimator_folder(folder, c.get("estimator", "")) / VALIDATION_NAME
                    for c in read_manifest(folder).get("configs", {}).values()} or {folder / VALIDATION_NAME})
    rows: list[dict] = []
    for path in paths:
        if path.is_file():
            report = json.loads(path.read_text(encoding="utf-8"))
            rows.extend(dict(r) for r in report.get("table", []) if isinstance(r, dict))
    return rows


def tiny_split_frame(folder: str | os.PathLike, config: str | None = None):
    """The tiny split of ``config`` (default: the first config) as a DataFrame, in row order."""
    import pyarrow.parquet as pq

    configs = read_manifest(folder)["configs"]
    name = config or next(iter(configs))
    if name not in configs:
        raise ValueError(f"no config {name!r}; configs: {', '.join(configs)}")
    c = configs[name]
    return pq.read_table(Path(folder) / c["splits"][c["tiny_split"]]["path"]).to_pandas()


# ============================================================================ replacing a folder
def _entries(folder: Path) -> tuple[list[str], list[str]]:
    """(files, symbolic links) under ``folder``, relative POSIX paths, hidden ones included."""
    files, links = [], []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        base = Path(dirpath)
        for name in dirnames + filenames:
            p = base / name
            rel = p.relative_to(folder).as_posix()
            if p.is_symlink():
                links.append(rel)
            elif name in filenames:
                files.append(rel)
    return sorted(files), sorted(links)


def ownership_problem(folder: str | os.PathLike) -> str | None:
    """Why ``folder`` cannot be proved to be ours, or None when it can.

    Ours: it holds a manifest of one of :data:`OWN_FORMATS` whose ``files`` table lists every
    other file of the folder (hidden ones included; file-browser metadata such as ``.DS_Store``
    excepted) with its sha256, every one unchanged, and no symbolic link. A listed file that is
    gone is no reason to keep the folder.
    """
    folder = Path(folder)
    p = folder / MANIFEST_NAME
    if not p.is_file() or p.is_symlink():
        return f"no {MANIFEST_NAME} of ours"
    try:
        manifest = json.loads(p.read_bytes())
    except (ValueError, RecursionError):
        return f"its {MANIFEST_NAME} is not valid JSON"
    fmt = manifest.get("format") if isinstance(manifest, dict) else None
    if fmt not in OWN_FORMATS:
        return f"its {MANIFEST_NAME} is not one of ours (format={fmt!r:.60})"
    listed = manifest.get("files")
    if not isinstance(listed, dict) or not listed or not all(
            isinstance(m, dict) and isinstance(m.get("sha256"), str) for m in listed.values()):
        return f"its {MANIFEST_NAME} has no table of the files it wrote"
    files, links = _entries(folder)
    if links:
        return f"it holds symbolic link(s) we never write: {', '.join(links[:3])}"
    unlisted = [rel for rel in files if rel != MANIFEST_NAME and rel not in listed
                and rel.rsplit("/", 1)[-1] not in OS_METADATA]
    if unlisted:
        more = f" and {len(unlisted) - 3} more" if len(unlisted) > 3 else ""
        return f"it holds file(s) this tool did not write: {', '.join(unlisted[:3])}{more}"
    for rel in files:
        if rel in listed and file_sha256(folder / rel) != listed[rel]["sha256"]:
            return f"{rel} was changed after it was written"
    return None


def check_replaceable(out: str | os.PathLike) -> None:
    """Refuse to replace ``out`` unless it is absent, empty or provably ours (:func:`ownership_problem`).

    Raises :class:`NotADirectoryError` for a file and :class:`BuildError` (naming the reason)
    otherwise. Cheap enough to call before any slow work: it hashes the folder's files.
    """
    out = Path(out)
    if out.is_symlink():
        raise BuildError(f"{out} is a symbolic link; refusing to replace it: give the folder itself or a new name")
    cwd = Path.cwd().resolve()
    if out.resolve() == cwd or out.resolve() in cwd.parents:
        raise BuildError(f"{out} is the current folder or contains it; refusing to replace it: give a new output "
                         "folder")
    if not out.exists():
        return
    if not out.is_dir():
        raise NotADirectoryError(f"{out} exists and is a file, not a folder: give a folder name")
    if not any(out.iterdir()):
        return
    problem = ownership_problem(out)
    if problem:
        raise BuildError(f"{out} exists and is not a tiny-benchmark build folder written by this tool ({problem}); "
                         "refusing to overwrite it: move it away or choose another output folder")


def replace_folder(new: str | os.PathLike, out: str | os.PathLike) -> Path:
    """Move the finished folder ``new`` to ``out`` (same parent folder).

    An existing ``out`` (checked again: empty or ours) is renamed aside, ``new`` renamed into
    place, and the old one removed; if the second rename fails the old folder is put back.
    Readers see the old folder or the new one, never a mix.
    """
    new, out = Path(new), Path(out)
    if not out.exists():
        os.replace(new, out)
        return out
    check_replaceable(out)
    old = sibling(out, "old")
    if old.exists():
        shutil.rmtree(old)
    os.replace(out, old)
    try:
        os.replace(new, out)
    except BaseException:
        os.replace(old, out)
        raise
    shutil.rmtree(old)
    return out


@contextmanager
def staging(out: str | os.PathLike) -> Iterator[Path]:
    """A temporary sibling folder of ``out`` to write into; on success it replaces ``out``.

    ``out`` is checked first (absent, empty or ours); on an error nothing changes and the
    temporary folder is removed. Staging and old folders that killed runs left next to ``out``
    are removed first, when provably theirs (:func:`tinybench_builder.files.remove_stale`: this machine,
    the process gone).
    """
    check_replaceable(out)
    out = Path(os.path.abspath(out))  # a real parent for the temporary sibling, whatever the spelling
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(out)
    tmp = sibling(out, "building")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        yield tmp
        replace_folder(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


# ============================================================================ `tinybench-builder fit` folders
def write_fit_folder(out: str | os.PathLike, est: "_estimator.TinyEstimator", report: dict,
                     report_md: str) -> Path:
    """The folder of ``tinybench-builder fit``: side files, ``estimator.py``, ``validation.json`` and ``.md``,
    and a manifest (:data:`FIT_FORMAT`) listing them; written aside and swapped in atomically
    (:func:`staging`: an existing ``out`` must be empty or provably ours)."""
    out = Path(out)
    with staging(out) as tmp:
        est.save(tmp)
        copy_estimator_code(tmp)
        (tmp / VALIDATION_NAME).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        (tmp / VALIDATION_MD_NAME).write_text(report_md, encoding="utf-8")
        write_manifest(tmp, {"format": FIT_FORMAT, "schema_version": MANIFEST_SCHEMA_VERSION,
                             "written_by": "tinybench-builder fit"})
    return out
