"""Files the tools name after a user's path (``<out stem>.failed.txt``) are never written through
a symbolic link or over a file that is not ours (issue 21)."""

from __future__ import annotations

import argparse

import pytest

from tinybench_builder.cli.ingest import add_ingest_arguments, run_ingest, write_failures
from tinybench_builder.files import write_sidecar
from tinybench_builder.read.matrix import ResponseMatrix
from tinybench_builder.read.sources import _common
from tinybench_builder.read.sources._common import UnitFailure, read_unit
from helpers.ingest_trees import write_lm_eval_tree

MINE = "my notes, not a list of failed models\n"


def _parse(argv):
    parser = argparse.ArgumentParser()
    add_ingest_arguments(parser)
    return parser.parse_args(argv)


class _FailOne:
    def __init__(self, bad):
        self.bad = bad

    def __call__(self, unit):
        if unit.source.endswith(self.bad):
            raise OSError(5, "Input/output error")
        return read_unit(unit)


@pytest.fixture
def failing(tmp_path, monkeypatch):
    root = write_lm_eval_tree(tmp_path / "lm", n_models=3)
    monkeypatch.setattr(_common, "read_unit", _FailOne("org__m1"))
    monkeypatch.setattr(_common.time, "sleep", lambda s: None)
    out = tmp_path / "res" / "bio.parquet"
    out.parent.mkdir()
    return root, out, ["--out", str(out), "--jobs", "1", "--retries", "0", "--progress", "none"]


def _user_file_behind_a_link(out):
    target = out.parent / "mine.txt"
    target.write_text(MINE)
    (out.parent / "bio.failed.txt").symlink_to(target)
    return target


def _user_file(out):
    target = out.parent / "bio.failed.txt"
    target.write_text(MINE)
    return target


@pytest.mark.parametrize("make", [_user_file_behind_a_link, _user_file])
def test_the_failed_list_never_replaces_a_user_file(make, failing, capsys):
    root, out, argv = failing
    target = make(out)
    assert run_ingest(_parse([str(root), *argv])) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "bio.failed.txt" in err and err.count("\n") == 1, err
    assert target.read_text() == MINE and not out.exists()  # refused before the reading


def test_a_failed_list_of_an_earlier_run_is_replaced(failing, capsys):
    root, out, argv = failing
    assert run_ingest(_parse([str(root), *argv])) == 3
    first = (out.parent / "bio.failed.txt").read_text()
    assert run_ingest(_parse([str(root), *argv])) == 3
    assert (out.parent / "bio.failed.txt").read_text() == first
    assert ResponseMatrix.read(out).models == ["org/m0", "org/m2"]
    assert [p.name for p in out.parent.iterdir() if p.name.startswith(".")] == []


def test_the_write_itself_refuses_a_link_that_appeared_after_the_check(tmp_path):
    out = tmp_path / "bio.parquet"
    target = _user_file_behind_a_link(out)
    with pytest.raises(OSError, match="symbolic link"):
        write_failures([UnitFailure("org/m", "src", "OSError: x", 1)], out)
    assert target.read_text() == MINE and (tmp_path / "bio.failed.txt").is_symlink()
    (tmp_path / "bio.failed.txt").unlink()
    (tmp_path / "bio.failed.txt").mkdir()
    with pytest.raises(OSError, match="not a regular file"):
        write_sidecar(tmp_path / "bio.failed.txt", "# x\n", header="# x")


def test_write_sidecar_writes_and_rewrites_its_own_file(tmp_path):
    p = tmp_path / "a.txt"
    write_sidecar(p, "# ours\n1\n", header="# ours")
    write_sidecar(p, "# ours\n2\n", header="# ours")
    assert p.read_text() == "# ours\n2\n"
    p.write_text("# someone else's\n")
    with pytest.raises(FileExistsError, match="not written by this tool"):
        write_sidecar(p, "# ours\n3\n", header="# ours")
    assert p.read_text() == "# someone else's\n"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["a.txt"]


# --------------------------------------------------------------------------- issue 29, item 1
class _FailAll:
    def __call__(self, unit):
        raise OSError(5, "Input/output error")


def test_a_successful_rerun_removes_the_failed_list_of_the_earlier_run(failing, monkeypatch):
    """The list of an earlier partial run named models that the re-run has read: it must go with the new output."""
    root, out, argv = failing
    assert run_ingest(_parse([str(root), *argv])) == 3
    assert (out.parent / "bio.failed.txt").is_file()
    monkeypatch.setattr(_common, "read_unit", read_unit)  # the model reads now
    assert run_ingest(_parse([str(root), *argv])) == 0
    assert ResponseMatrix.read(out).models == ["org/m0", "org/m1", "org/m2"]
    assert sorted(p.name for p in out.parent.iterdir()) == ["bio.parquet"]  # no stale list, no temporary file


def test_a_rerun_that_fails_for_other_models_rewrites_the_list(failing, monkeypatch):
    root, out, argv = failing
    assert run_ingest(_parse([str(root), *argv])) == 3
    monkeypatch.setattr(_common, "read_unit", _FailOne("org__m2"))
    assert run_ingest(_parse([str(root), *argv])) == 3
    listed = [line.split("\t")[0] for line in (out.parent / "bio.failed.txt").read_text().splitlines()[1:]]
    assert listed == ["org/m2"] and ResponseMatrix.read(out).models == ["org/m0", "org/m1"]


def test_a_run_that_writes_nothing_leaves_the_earlier_output_and_its_list(failing, monkeypatch, capsys):
    """Every model failed: nothing is written, so the earlier output keeps the list that describes it."""
    root, out, argv = failing
    assert run_ingest(_parse([str(root), *argv])) == 3
    before = (out.read_bytes(), (out.parent / "bio.failed.txt").read_text())
    monkeypatch.setattr(_common, "read_unit", _FailAll())
    capsys.readouterr()
    assert run_ingest(_parse([str(root), *argv])) == 3
    err = capsys.readouterr().err
    assert "3 of 3 model(s) could not be read after their retries; nothing written" in err, err
    assert (out.read_bytes(), (out.parent / "bio.failed.txt").read_text()) == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["bio.failed.txt", "bio.parquet"]


def test_a_failed_write_of_the_output_leaves_the_earlier_list(failing, monkeypatch):
    root, out, argv = failing
    assert run_ingest(_parse([str(root), *argv])) == 3
    before = (out.read_bytes(), (out.parent / "bio.failed.txt").read_text())
    monkeypatch.setattr(_common, "read_unit", read_unit)

    def full_disk(self, path, layout="wide"):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ResponseMatrix, "write", full_disk)
    assert run_ingest(_parse([str(root), *argv])) == 2
    assert (out.read_bytes(), (out.parent / "bio.failed.txt").read_text()) == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["bio.failed.txt", "bio.parquet"]
