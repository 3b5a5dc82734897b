"""Hidden staging copies that killed runs leave behind (``.NAME.building-<pid>-<host>``,
``.NAME.old-...``, ``.NAME.<pid>-<host>-<hex>.tmp``) are removed by the next run that writes the
same target, when provably theirs: this machine, the process gone (issue 21). Anything else
next to the target is kept."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tinybench_builder.cli.main import main, release_main
from tinybench_builder.files import HOST_TAG, remove_stale, sibling
from tinybench_builder.read.simulate import simulate_responses
from helpers.builds import ROOT


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _plant(target: Path) -> tuple[list[Path], list[Path]]:
    """Leftovers next to ``target``: (those a later run must remove, those it must keep)."""
    dead, live, other_host = _dead_pid(), os.getppid(), "0badf00d"
    name = target.name
    stale, kept = [], []
    for pid, host, bucket in ((dead, HOST_TAG, stale), (live, HOST_TAG, kept), (dead, other_host, kept)):
        for kind in ("building", "old"):
            d = target.parent / f".{name}.{kind}-{pid}-{host}"
            (d / "sub").mkdir(parents=True)
            (d / "sub" / "x.parquet").write_bytes(b"half written")
            bucket.append(d)
        f = target.parent / f".{name}.{pid}-{host}-deadbeef.tmp"
        f.write_bytes(b"")
        bucket.append(f)
    for look_alike in (f".{name}.notes", f".{name}.building-{dead}", f".{name}.{dead}-deadbeef.tmp", f"{name}.tmp"):
        (target.parent / look_alike).write_text("not a leftover of this tool")
        kept.append(target.parent / look_alike)
    link = target.parent / f".{name}.building-{dead}-{HOST_TAG}x"
    link.symlink_to(target.parent / look_alike)
    kept.append(link)
    return stale, kept


def _check(stale, kept):
    assert [p.name for p in stale if os.path.lexists(p)] == []
    assert [p.name for p in kept if not os.path.lexists(p)] == []


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    m, _ = simulate_responses(n_models=20, n_items=40, n_dims=1, seed=1)
    path = tmp_path_factory.mktemp("m") / "m.parquet"
    m.write(path)
    return path


def test_fit_removes_the_stale_staging_copies_of_its_output(tmp_path, matrix):
    out = tmp_path / "tiny"
    stale, kept = _plant(out)
    assert main(["fit", str(matrix), "--anchors", "8", "--dims", "1", "--out", str(out), "--quiet"]) == 0
    _check(stale, kept)
    assert (out / "manifest.json").is_file()


def test_build_removes_the_stale_staging_copies_of_its_output(tmp_path, matrix):
    import pandas as pd

    from tinybench_builder.read.matrix import ResponseMatrix

    items = ResponseMatrix.read(matrix).items
    content = tmp_path / "c.parquet"
    pd.DataFrame({"item_id": items, "question": [f"q{i}" for i in items]}).to_parquet(content)
    spec = tmp_path / "spec.toml"
    spec.write_text('name = "tinyProbe"\nlicense = "mit"\ncitation = "@misc{x, title={X}}"\n')
    out = tmp_path / "tinyProbe"
    stale, kept = _plant(out)
    assert main(["build", "--spec", str(spec), "--responses", str(matrix), "--content", f"test={content}",
                 "--anchors", "8", "--dims", "1", "--out", str(out), "--quiet"]) == 0
    _check(stale, kept)


def test_ingest_removes_the_stale_temporary_files_of_its_output(tmp_path, matrix):
    out = tmp_path / "scores.parquet"
    stale, kept = _plant(out)
    assert main(["ingest", str(matrix), "--out", str(out), "--progress", "none", "--jobs", "1"]) == 0
    _check(stale, kept)


def test_release_removes_the_stale_copies_of_its_builds_and_summary(tmp_path, monkeypatch):
    from tinybench_builder.release import publish
    from helpers.folders import fake_build, fake_config

    monkeypatch.setattr(publish, "build_benchmark", fake_build)
    cfg = fake_config(tmp_path / "cfg")
    out = tmp_path / "out"
    out.mkdir()
    stale, kept = _plant(out / "tinyAlpacaEval")
    s2, k2 = _plant(out / "release.json")
    assert release_main(["--config", str(cfg), "--release-version", "1.0.0", "--out", str(out), "--no-previous",
                         "--quiet"]) == 0
    _check(stale + s2, kept + k2)


def test_remove_stale_only_touches_its_target_siblings(tmp_path):
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    stale_a, _ = _plant(a)
    stale_b, _ = _plant(b)
    assert sorted(remove_stale(a)) == sorted(stale_a)
    assert all(os.path.lexists(p) for p in stale_b)
    assert sibling(a, "building").name == f".a.parquet.building-{os.getpid()}-{HOST_TAG}"


_STAGE_AND_WAIT = """
import sys, time
from pathlib import Path
from tinybench_builder.cli.main import install_signal_handlers
from tinybench_builder.layout import staging
install_signal_handlers()
with staging(sys.argv[1]) as tmp:
    (tmp / "half.txt").write_text("x")
    print("staged", flush=True)
    time.sleep(60)
"""


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_run_leaves_nothing_that_the_next_run_keeps(tmp_path, matrix, sig):
    """SIGTERM: the run cleans up itself; SIGKILL: the next run removes what it left."""
    out = tmp_path / "tiny"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", _STAGE_AND_WAIT, str(out)], stdout=subprocess.PIPE, text=True,
                            env=env)
    assert proc.stdout.readline().strip() == "staged"
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(".tiny.building-")]
    assert left == [f".tiny.building-{proc.pid}-{HOST_TAG}"]
    proc.send_signal(sig)
    assert proc.wait(timeout=30) == (-signal.SIGKILL if sig == signal.SIGKILL else 128 + signal.SIGTERM)
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert left == ([f".tiny.building-{proc.pid}-{HOST_TAG}"] if sig == signal.SIGKILL else [])
    assert main(["fit", str(matrix), "--anchors", "8", "--dims", "1", "--out", str(out), "--quiet"]) == 0
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("length", [245, 250, 255])
def test_output_names_up_to_name_max_work(tmp_path, matrix, length):
    """The hidden siblings of a long name are shortened (cut + a hash), never longer than NAME_MAX."""
    fit_out = tmp_path / ("f" * length)
    assert main(["fit", str(matrix), "--anchors", "8", "--dims", "1", "--out", str(fit_out), "--quiet"]) == 0
    assert main(["fit", str(matrix), "--anchors", "8", "--dims", "1", "--out", str(fit_out), "--quiet"]) == 0  # replace
    table = tmp_path / ("t" * (length - 8) + ".parquet")
    assert main(["ingest", str(matrix), "--out", str(table), "--progress", "none", "--jobs", "1"]) == 0
    est = tmp_path / ("e" * (length - 4) + ".csv")
    assert main(["estimate", str(fit_out), str(matrix), "--out", str(est)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([fit_out.name, table.name, est.name])
    for kind in ("tmp", "building", "old"):
        assert len(sibling(fit_out, kind).name) <= 255
    assert sibling(fit_out, "building") != sibling(tmp_path / ("f" * (length - 1) + "g"), "building")
