"""The README's two first commands on a fresh clone that has no ``../shared`` next to it.

The clone is the repository's files (tracked and new, not ignored) copied to a scratch folder
with nothing beside it, made a git repository of its own. Each command is read from the
README's first code block and run as written there after its ``pip install ... &&`` (the
packages are those of this interpreter): command 1 must release the real example shipped in
``examples/`` (``release-local.toml`` falls back to ``release-example.toml``), say so, and leave
``git status`` clean (its outputs are ignored); command 2, the whole test suite, must pass there
(``slow``: it is the suite once more).

The example data must also be the development data, value for value, when ``../shared/data``
is here, and build the same tiny benchmark.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from helpers.builds import ROOT
from helpers.sources import SHARED_DATA

#: set in the inner test run of a clone, so that it does not clone again
INNER = "TINYBENCH_FRESH_CLONE_INNER"
pytestmark = [pytest.mark.slow, pytest.mark.skipif(bool(os.environ.get(INNER)), reason="already inside a fresh-clone test run")]


def _readme_commands() -> list[list[str]]:
    """The two commands of the README's first code block, after ``pip install ... &&``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    out = []
    for line in block.strip().splitlines():
        assert line.startswith("pip install ") and " && " in line, line
        argv = shlex.split(line.split(" && ", 1)[1].split("  #", 1)[0])
        assert argv[0] == "python", argv
        out.append([sys.executable, *argv[1:]])
    assert len(out) == 2, block
    return out


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, env=env,
                          check=True, capture_output=True, text=True).stdout


def _fresh_clone(tmp_path: Path) -> Path:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout of the repository")
    files = _git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    clone = tmp_path / "clone"
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():  # a tracked file deleted in the working tree is not copied
            (clone / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, clone / rel)
    _git(clone, "init", "-q")
    _git(clone, "add", "-A")
    _git(clone, "commit", "-q", "-m", "fresh clone")
    assert not (clone.parent / "shared").exists()
    return clone


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {**env, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", INNER: "1"}


def test_readme_command_1_on_a_fresh_clone(tmp_path):
    clone = _fresh_clone(tmp_path)
    release, _ = _readme_commands()
    run = subprocess.run(release, cwd=clone, env=_env(), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    out = run.stdout
    assert ("data: examples/wmdp_bio (release-example.toml), the fallback of release-local.toml: "
            "none of its inputs exist here (nothing under ../shared/data)") in out, out
    assert "tinyWMDP_bio" in out and "built (not pushed)" in out, out
    folder = clone / "build" / "release-1.0.0" / "tinyWMDP_bio"
    assert (folder / "manifest.json").is_file()
    rows = pd.read_parquet(folder / "default" / "test-00000-of-00001.parquet")
    assert len(rows) == 100 and rows["question"].str.len().min() > 0  # real questions, not ids
    # the outputs are ignored by git: the clone is as clean as before
    assert _git(clone, "status", "--porcelain") == ""


@pytest.mark.slow
def test_readme_command_2_on_a_fresh_clone(tmp_path):
    clone = _fresh_clone(tmp_path)
    _, suite = _readme_commands()
    run = subprocess.run(suite + ["-p", "no:cacheprovider"], cwd=clone, env=_env(), capture_output=True,
                         text=True, timeout=7200)
    assert run.returncode == 0, run.stdout[-4000:]
    assert " passed" in run.stdout.splitlines()[-1], run.stdout[-2000:]
    assert _git(clone, "status", "--porcelain") == ""


# ---------------------------------------------------------------- the example is the real data
EXAMPLE = ROOT / "examples" / "wmdp_bio"


def test_example_files_are_small_and_documented():
    sizes = {f.name: f.stat().st_size for f in EXAMPLE.glob("*.parquet")}
    assert set(sizes) == {"responses.parquet", "content.parquet"}
    assert sum(sizes.values()) < 400_000, sizes
    readme = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    for needed in ("MIT licence", "xyzhu123/tinyBenchmarks", "cais/wmdp", "64 open 7-9B models"):
        assert needed in readme


@pytest.mark.realdata
@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="../shared/data is not available")
def test_example_equals_the_development_data():
    from tinybench_builder.read import ResponseMatrix

    mine = ResponseMatrix.read(EXAMPLE / "responses.parquet")
    dev = ResponseMatrix.read(SHARED_DATA / "responses" / "wmdp_bio.parquet")
    assert sorted(mine.models) == sorted(dev.models) and sorted(mine.items) == sorted(dev.items)
    rows = [mine.models.index(m) for m in dev.models]
    cols = [mine.items.index(i) for i in dev.items]
    assert np.array_equal(mine.scores[np.ix_(rows, cols)], dev.scores)
    pd.testing.assert_frame_equal(pd.read_parquet(EXAMPLE / "content.parquet"),
                                  pd.read_parquet(SHARED_DATA / "content" / "wmdp_bio.parquet"))


@pytest.mark.realdata
@pytest.mark.slow
@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="../shared/data is not available")
def test_example_builds_the_same_tiny_benchmark(tmp_path):
    from tinybench_builder import layout
    from tinybench_builder.dataset import BuildOptions, build_benchmark
    from tinybench_builder.registry import load_spec_file

    spec = load_spec_file(ROOT / "specs" / "tinyWMDP_bio.toml")
    opts = BuildOptions(version="1.0.0")
    a = build_benchmark(spec, str(EXAMPLE / "responses.parquet"), {"test": str(EXAMPLE / "content.parquet")},
                        opts, out=tmp_path / "example", progress=False)
    b = build_benchmark(spec, str(SHARED_DATA / "responses" / "wmdp_bio.parquet"),
                        {"test": str(SHARED_DATA / "content" / "wmdp_bio.parquet")}, opts,
                        out=tmp_path / "shared", progress=False)
    files = sorted(p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file())
    # every file is the same but the manifest and the card's "Inputs" line, which name the inputs
    # by file name and sha256 (the matrix is stored another way)
    def text(folder, rel):
        lines = (folder / rel).read_bytes().splitlines()
        return [x for x in lines if not x.startswith(b"* Inputs: ")] if rel == "README.md" else lines

    for rel in files:
        if rel != layout.MANIFEST_NAME:
            assert text(a, rel) == text(b, rel), rel
