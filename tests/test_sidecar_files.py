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
