"""Check a built tiny-benchmark folder before it is published (:func:`validate_folder`).

* the manifest is ours and lists every other file with its exact sha256 and size
  (:func:`tinybench_builder.layout.verify_manifest`; hidden files are ignored and never published);
* no file contains the configured Hub token;
* ``README.md`` parses with ``DatasetCard.load`` and declares ``configs:``;
* every config/split loads with ``load_dataset(folder, config)`` with the splits the card
  declares, and equals the parquet files its ``data_files`` select (same columns, same rows,
  NaN-aware);
* every estimator (``estimator.json`` + ``irt_parameters.npz``, at the root or per config) loads,
  and, given the benchmark's spec, the folder has its configs (a bundle: some of them), the
  anchors add up to the rows of their tiny splits and every pool split holds one row per item of
  its estimator; ``adaptive.py`` sits next to ``estimator.py`` (adaptive evaluation).

``huggingface_hub`` and ``datasets`` are imported inside the function.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Mapping

from tinybench_builder import layout
from tinybench_builder.registry import BenchmarkSpec
from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.release.config import ReleaseError

__all__ = ["validate_folder", "configured_tokens"]


def configured_tokens() -> list[str]:
    """The configured Hub token(s), to make sure none ends up in a published file."""
    values = {os.environ.get(k) for k in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")}
    try:
        from huggingface_hub import get_token

        values.add(get_token())
    except Exception:  # noqa: BLE001 - no huggingface_hub / unreadable token file  # pragma: no cover
        pass
    return [v for v in values if v and len(v) >= 8]


def validate_folder(folder: str | os.PathLike, spec: BenchmarkSpec | None = None, *, check_token: bool = True) -> dict:
    """Check a built folder (see the module docstring); ReleaseError names the first problem.

    Returns a summary ``{"files": n, "configs": {config: {split: rows}}, "anchors": k}``.
    """
    folder = Path(folder)
    where = str(folder)
    if not folder.is_dir():
        raise ReleaseError(f"{folder} is not a folder")
    files = layout.listed_files(folder, with_manifest=True)
    if layout.MANIFEST_NAME not in files:
        raise ReleaseError(f"{where}: no {layout.MANIFEST_NAME}")
    try:
        problems = layout.verify_manifest(folder)
    except ValueError as exc:
        raise ReleaseError(str(exc)) from None
    if problems:
        raise ReleaseError(f"{where}: {problems[0]}")
    if check_token:
        _check_no_token(folder, files, where)
    configs = _card_configs(folder, files, where)
    summary: dict[str, Any] = {"files": len(files), "configs": _round_trip(folder, configs, where)}
    n_anchors, est_dirs = _estimators(folder, files, where)
    if est_dirs:
        summary["anchors"] = n_anchors
    if spec is not None:
        if not est_dirs:
            raise ReleaseError(f"{where}: no estimator side files ({', '.join(layout.ESTIMATOR_FILES)})")
        declared = dict(configs)
        expected = 0
        known = {c.name for c in spec.configs}
        for c in spec.configs:
            if c.name not in declared:
                if spec.joint and set(declared) <= known:  # a bundle built from the configs that had responses
                    continue
                raise ReleaseError(f"{where}: the card has no config {c.name!r} (registry: {spec.name})")
            if c.tiny_split not in summary["configs"][c.name]:
                raise ReleaseError(f"{where}: config {c.name!r} has no tiny split {c.tiny_split!r}")
            expected += summary["configs"][c.name][c.tiny_split]
        unknown = [n for n in declared if n not in known]
        if unknown:
            raise ReleaseError(f"{where}: the card has config(s) {unknown} that {spec.name} does not have")
        if expected != n_anchors:
            raise ReleaseError(f"{where}: the estimator(s) have {n_anchors} anchors, the tiny splits hold {expected} rows")
        _check_pools(folder, summary["configs"], where)
    if est_dirs and layout.ADAPTIVE_CODE not in files:
        raise ReleaseError(f"{where}: no {layout.ADAPTIVE_CODE} next to {layout.ESTIMATOR_CODE} "
                           "(TinyEstimator.adaptive needs it)")
    return summary


def _check_pools(folder: Path, rows: dict, where: str) -> None:
    """Every config's pool split holds one row per item of its estimator (adaptive evaluation)."""
    manifest = layout.read_manifest(folder)
    for name, c in (manifest.get("configs") or {}).items():
        pool = c.get("pool_split")
        if not pool:
            continue
        est = TinyEstimator.load(layout.estimator_folder(folder, c.get("estimator", "")))
        n = len(layout.config_item_ids(est, c["scenario"]))
        got = rows.get(name, {}).get(pool)
        if got != n:
            raise ReleaseError(f"{where}: config {name!r}: the {pool} split holds {got} rows, its estimator "
                               f"{n} items")


def _check_no_token(folder: Path, files: list[str], where: str) -> None:
    tokens = [t.encode() for t in configured_tokens()]
    if tokens:
        for rel in files:
            data = (folder / rel).read_bytes()
            if any(t in data for t in tokens):
                raise ReleaseError(f"{where}: {rel} contains the Hub token; refusing to publish it")


def _card_configs(folder: Path, files: list[str], where: str) -> list[tuple[str, dict[str, list[str]]]]:
    """``[(config_name, {split: [globs]})]`` from the card's ``configs:`` YAML."""
    from huggingface_hub import DatasetCard

    if layout.CARD_NAME not in files:
        raise ReleaseError(f"{where}: no {layout.CARD_NAME} (dataset card)")
    card_where = f"{where}/{layout.CARD_NAME}"
    try:
        card = DatasetCard.load(folder / layout.CARD_NAME)
    except Exception as exc:  # noqa: BLE001 - any parse failure is a validation error
        raise ReleaseError(f"{card_where}: the card does not parse: {exc}") from None
    configs = card.data.to_dict().get("configs")
    if not isinstance(configs, list) or not configs:
        raise ReleaseError(f"{card_where}: the card has no `configs:` section")
    out = []
    for c in configs:
        if not isinstance(c, dict) or not isinstance(c.get("config_name"), str):
            raise ReleaseError(f"{card_where}: a `configs:` entry has no config_name: {c!r}")
        data_files = c.get("data_files")
        splits: dict[str, list[str]] = {}
        if isinstance(data_files, str):
            splits["train"] = [data_files]
        elif isinstance(data_files, list):
            for d in data_files:
                if not isinstance(d, dict) or "split" not in d or "path" not in d:
                    raise ReleaseError(f"{card_where}: config {c['config_name']!r}: data_files entries need split and path")
                paths = d["path"] if isinstance(d["path"], list) else [d["path"]]
                splits.setdefault(str(d["split"]), []).extend(str(p) for p in paths)
        else:
            raise ReleaseError(f"{card_where}: config {c['config_name']!r} has no data_files")
        out.append((c["config_name"], splits))
    return out


def _round_trip(folder: Path, configs: list[tuple[str, dict[str, list[str]]]], where: str) -> dict:
    """``{config: {split: rows}}``: every split loads with ``load_dataset`` and equals its parquet files."""
    import glob

    import pyarrow as pa
    import pyarrow.parquet as pq
    from datasets import load_dataset

    out = {}
    with tempfile.TemporaryDirectory(prefix="tinybench-validate-") as cache:
        for name, splits in configs:
            matches = {}
            for split, globs in splits.items():
                matches[split] = sorted({p for g in globs for p in glob.glob(str(folder / g), recursive=True)})
                if not matches[split]:
                    raise ReleaseError(f"{where}: config {name!r} split {split!r}: no file matches {globs}")
            try:
                ds = load_dataset(str(folder), name, cache_dir=cache)
            except Exception as exc:  # noqa: BLE001 - any load failure is a validation error
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
            out[name] = rows
    return out


def _estimators(folder: Path, files: list[str], where: str) -> tuple[int, list[Path]]:
    """(total anchors, estimator folders): every estimator's side files load."""
    est_dirs = sorted({Path(rel).parent for rel in files if Path(rel).name in layout.ESTIMATOR_FILES})
    n_anchors = 0
    for d in est_dirs:
        try:
            n_anchors += len(TinyEstimator.load(folder / d).anchor_ids)
        except Exception as exc:  # noqa: BLE001 - any load failure is a validation error
            raise ReleaseError(f"{where}: the estimator side files in {d.as_posix()}/ do not load: {exc}") from None
    return n_anchors, est_dirs


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:  # NaN
        return True
    if isinstance(a, Mapping) and isinstance(b, Mapping):
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
    except Exception:  # noqa: BLE001 - types that do not cast: compare values
        pass
    return all(_same_value(a.column(n).to_pylist(), b.column(n).to_pylist()) for n in a.column_names)
