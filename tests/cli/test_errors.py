"""One error hierarchy (tinybench_builder/errors.py) and one place in the CLI that turns errors into a line."""

import argparse

import pytest

from tinybench_builder import errors
from tinybench_builder.cli._run import error_line, run_command
from tinybench_builder.cli.main import main, release_main

#: every class, and where it was importable before it moved to tinybench_builder/errors.py
OLD_HOMES = {
    "BuildError": "tinybench_builder.errors",
    "MatrixFormatError": "tinybench_builder.read.matrix",
    "CsvFormatError": "tinybench_builder.read.csv_table",
    "SourceError": "tinybench_builder.read.sources",
    "SpecError": "tinybench_builder.registry.specs",
    "OriginalFormatError": "tinybench_builder.dataset.original",
    "ReleaseError": "tinybench_builder.release.config",
    "ConfigError": "tinybench_builder.release.config",
    "ClusterError": "tinybench_builder.read.sources.dask_map",
    "ModelUnavailable": "tinybench_builder.read.sources",
    "ReadFailed": "tinybench_builder.read.sources._common",
    "IncompleteIngest": "tinybench_builder.read.ingest",
    "PeersUnavailableError": "benchmarks.peers",
    "PeerWorkerError": "benchmarks.peers",
}
INPUT = {"BuildError", "MatrixFormatError", "CsvFormatError", "SourceError", "SpecError", "OriginalFormatError",
         "ConfigError"}


@pytest.mark.parametrize("name", sorted(OLD_HOMES))
def test_one_hierarchy_importable_where_it_was(name):
    import importlib

    cls = getattr(errors, name)
    assert getattr(importlib.import_module(OLD_HOMES[name]), name) is cls
    assert issubclass(cls, errors.TinybenchError)
    assert issubclass(cls, ValueError) == (name in INPUT), name
    assert cls.exit_code == (2 if name in INPUT or name == "ClusterError" else 3 if name == "IncompleteIngest" else 1)


def test_error_line_maps_each_kind():
    assert error_line(errors.SourceError("x.json: bad\n  line")) == (2, "x.json: bad line")
    assert error_line(errors.ReleaseError("tag refused")) == (1, "tag refused")
    assert error_line(FileNotFoundError(2, "No such file", "a.csv"))[0] == 2
    assert error_line(FileNotFoundError(2, "No such file", "a.csv"), bad_input=())[0] == 1  # release: only ConfigError
    code, line = error_line(KeyError("boom"))
    assert code == 1 and line.startswith("unexpected KeyError: ") and "--debug" in line
    code, line = error_line(MemoryError())  # its own status since issue 21 (was 1, "out of memory")
    assert code == errors.OUT_OF_MEMORY_EXIT == 4 and line.startswith("out of memory (a memory allocation failed)")
    assert error_line(errors.WaitTimeout("the Hub did not answer within 1 s")) == (5, "the Hub did not answer within 1 s")


def test_run_command_one_line_and_interrupt(capsys):
    def fail(args):
        raise errors.BuildError("seed must be\nan integer")

    assert run_command(fail, argparse.Namespace()) == 2
    assert capsys.readouterr().err == "error: seed must be an integer\n"

    def stop(args):
        raise KeyboardInterrupt

    assert run_command(stop, argparse.Namespace(), interrupted="stopped; nothing written") == 130
    assert capsys.readouterr().err == "stopped; nothing written\n"
    with pytest.raises(errors.BuildError):
        run_command(fail, argparse.Namespace(debug=True))


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_anywhere_shows_the_traceback(tmp_path, where, capsys):
    args = ["fit", str(tmp_path / "missing.parquet"), "--anchors", "10", "--out", str(tmp_path / "o")]
    assert main(args) == 2 and capsys.readouterr().err.startswith("error: ")
    with pytest.raises(OSError):
        main(["--debug", *args] if where == "before" else [*args, "--debug"])


def test_release_debug_and_exit_codes(tmp_path, capsys):
    bad = tmp_path / "r.toml"
    bad.write_text("[release]\norg = 'me'\n")
    assert release_main(["--config", str(bad), "--release-version", "1.0"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    with pytest.raises(errors.ConfigError):
        main(["release", "--config", str(bad), "--release-version", "1.0", "--debug"])
    with pytest.raises(errors.ConfigError):
        main(["--debug", "release", "--config", str(bad), "--release-version", "1.0"])
