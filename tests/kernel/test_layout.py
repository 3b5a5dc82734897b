"""tinybench_builder.layout, the one owner of the folder format: the standalone estimator's own reader agrees
with it; verify, listing and input records; a folder is replaced atomically and only if we wrote it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tinybench_builder import estimator, layout
from tinybench_builder.errors import BuildError
from helpers.builds import built


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.getbasetemp() / "builds"


def test_the_standalone_estimator_reads_what_layout_writes(root, tmp_path, monkeypatch):
    """estimator.py keeps its own minimal manifest reader (it is shipped alone): same names, and
    TinyEstimator.from_hub's check accepts a folder layout wrote and refuses what verify_manifest flags."""
    assert estimator.MANIFEST_NAME == layout.MANIFEST_NAME
    assert (estimator.JSON_NAME, estimator.NPZ_NAME) == (layout.ESTIMATOR_JSON, layout.ESTIMATOR_NPZ)
    assert tuple(estimator.SIDE_FILES) == layout.ESTIMATOR_FILES
    folder = tmp_path / "release"
    shutil.copytree(built(root, "tinyGSM8k"), folder)
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", lambda *a, **kw: str(folder))  # the "Hub" is the folder
    est = estimator.TinyEstimator.from_hub("tinyBenchmarks/tinyGSM8k", revision="v0.0.0")
    assert est.anchor_ids == estimator.TinyEstimator.load(folder).anchor_ids
    manifest = layout.read_manifest(folder)
    for name in layout.ESTIMATOR_FILES:
        assert manifest["files"][name]["sha256"] == estimator._sha256(folder / name) == layout.file_sha256(folder / name)
    npz = folder / layout.ESTIMATOR_NPZ
    npz.write_bytes(npz.read_bytes() + b"\0")
    assert any(p.startswith(layout.ESTIMATOR_NPZ) for p in layout.verify_manifest(folder))
    with pytest.raises(ValueError, match="refusing a modified or corrupt file"):
        estimator.TinyEstimator.from_hub("tinyBenchmarks/tinyGSM8k", revision="v0.0.0")


def test_manifest_is_written_last_with_every_other_file(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.txt").write_text("x")
    (tmp_path / "README.md").write_text("card")
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "junk").write_text("hidden: never listed")
    m = layout.write_manifest(tmp_path, {"format": layout.DATASET_FORMAT, "name": "t"})
    assert list(m) == ["format", "name", "files"] and list(m["files"]) == ["README.md", "a/x.txt"]
    assert layout.read_manifest(tmp_path) == m and layout.verify_manifest(tmp_path) == []
    assert layout.listed_files(tmp_path, with_manifest=True) == ["README.md", "a/x.txt", "manifest.json"]
    (tmp_path / "a" / "x.txt").write_text("changed")
    (tmp_path / "new.txt").write_text("n")
    problems = layout.verify_manifest(tmp_path)
    assert problems[0].startswith("a/x.txt does not match the manifest sha256")
    assert problems[-1] == "file(s) not in the manifest: new.txt"
    assert layout.refresh_manifest(tmp_path)["name"] == "t" and layout.verify_manifest(tmp_path) == []
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "something-else", "files": {}}))
    with pytest.raises(ValueError, match="not a tiny dataset manifest"):
        layout.read_manifest(tmp_path)
    assert not layout.is_dataset_folder(tmp_path)


def test_input_records_name_inputs_by_base_name_and_content(tmp_path):
    for where in ("one", "two/deeper"):
        (tmp_path / where / "inputs" / "sub").mkdir(parents=True)
        (tmp_path / where / "inputs" / "a.json").write_text("{}")
        (tmp_path / where / "inputs" / "sub" / "b.txt").write_text("b")
    a, b = (layout.input_record(tmp_path / w / "inputs") for w in ("one", "two/deeper"))
    assert a == b == {"name": "inputs", "kind": "folder", "files": 2, "sha256": a["sha256"]}
    f = layout.input_record(tmp_path / "one" / "inputs" / "a.json")
    assert f == {"name": "a.json", "kind": "file", "size": 2, "sha256": layout.file_sha256(tmp_path / "one" / "inputs" / "a.json")}
    with pytest.raises(FileNotFoundError):
        layout.input_record(tmp_path / "nope")


def _ours(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data.txt").write_text(text)
    layout.write_manifest(folder, {"format": layout.DATASET_FORMAT, "name": "t"})
    return folder


def test_only_a_folder_we_wrote_is_replaced(tmp_path):
    layout.check_replaceable(tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    layout.check_replaceable(tmp_path / "empty")
    layout.check_replaceable(_ours(tmp_path / "ours", "v1"))
    for name, files in {"foreign": {"notes.txt": "keep me"},
                        "other_manifest": {"manifest.json": json.dumps({"files": {}})},
                        "hidden_only": {".DS_Store": "x"}}.items():
        (tmp_path / name).mkdir()
        for rel, text in files.items():
            (tmp_path / name / rel).write_text(text)
        with pytest.raises(BuildError, match="is not a tiny-benchmark build folder.*refusing to overwrite"):
            layout.check_replaceable(tmp_path / name)
        with pytest.raises(BuildError):
            with layout.staging(tmp_path / name) as tmp:
                (tmp / "x").write_text("never used")
        assert {p.name: p.read_text() for p in (tmp_path / name).iterdir()} == files
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(NotADirectoryError):
        layout.check_replaceable(tmp_path / "a_file")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_staging_swaps_in_a_finished_folder_or_changes_nothing(tmp_path, monkeypatch):
    out = _ours(tmp_path / "out", "v1")
    with pytest.raises(RuntimeError):
        with layout.staging(out) as tmp:
            _ours(tmp, "v2")
            raise RuntimeError("the build failed")
    assert (out / "data.txt").read_text() == "v1" and layout.verify_manifest(out) == []
    with layout.staging(out) as tmp:
        _ours(tmp, "v2")
        assert (out / "data.txt").read_text() == "v1"  # nothing changes until the folder is finished
    assert (out / "data.txt").read_text() == "v2"
    # the rename of the new folder fails: the previous one is put back
    real = os.replace
    calls = []

    def failing_second_rename(src, dst):
        calls.append((Path(src).name, Path(dst).name))
        if len(calls) == 2:
            raise OSError("disk full")
        return real(src, dst)

    monkeypatch.setattr(layout.os, "replace", failing_second_rename)
    with pytest.raises(OSError, match="disk full"):
        with layout.staging(out) as tmp:
            _ours(tmp, "v3")
    monkeypatch.setattr(layout.os, "replace", real)
    assert (out / "data.txt").read_text() == "v2" and layout.verify_manifest(out) == []
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_atomic_write_text(tmp_path):
    p = layout.atomic_write_text(tmp_path / "release.json", "one\n")
    layout.atomic_write_text(p, "two\n")
    assert p.read_text() == "two\n" and [q.name for q in tmp_path.iterdir()] == ["release.json"]
