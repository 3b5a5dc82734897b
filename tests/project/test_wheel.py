"""The wheel holds the library only: no benchmark script, no cache, but every data file the package reads."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # builds a wheel in an isolated environment (setuptools from the index)


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    # Built from a copy of the files a clone has: pip builds in the source tree (its build/), which
    # other tests running at the same time, or a build folder left in the checkout, must not share.
    source = tmp_path_factory.mktemp("source")
    ignore = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".*_cache")
    shutil.copytree(ROOT, source, ignore=ignore, dirs_exist_ok=True)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(source), "-w", str(out)],
                          capture_output=True, text=True)
    if proc.returncode != 0 and ("No matching distribution" in proc.stderr or "Could not find a version" in proc.stderr):
        pytest.skip(f"pip wheel could not build (no setuptools from the package index?): {proc.stderr[-500:]}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (wheel,) = out.glob("tinybench_builder-*.whl")
    return zipfile.ZipFile(wheel).namelist()


def test_the_wheel_holds_only_the_library(wheel_names):
    tops = {name.split("/")[0] for name in wheel_names}
    assert tops == {"tinybench_builder", next(t for t in tops if t.endswith(".dist-info"))}, tops
    assert not [n for n in wheel_names if "/bench/" in n or n.startswith("benchmarks/") or "/cache/" in n]


def test_the_wheel_holds_the_data_the_package_reads(wheel_names):
    for name in ("tinybench_builder/py.typed", "tinybench_builder/estimator.py", "tinybench_builder/adaptive.py",
                 "tinybench_builder/dataset_cards/tiny_benchmark.md", "tinybench_builder/dataset_cards/accuracy.json",
                 "tinybench_builder/registry/leaderboard_v2_fewshot.json",
                 "tinybench_builder/registry/registered/index.toml", "tinybench_builder/registry/registered/citations.bib"):
        assert name in wheel_names, name


def test_the_wheel_holds_every_registered_spec_file(wheel_names):
    """The registered benchmarks are package data: a spec file each (tests/registry/test_registry_files.py)."""
    from tinybench_builder.registry import REGISTRY

    specs = sorted(n for n in wheel_names if n.startswith("tinybench_builder/registry/registered/tiny"))
    assert specs == sorted(f"tinybench_builder/registry/registered/{name}.toml" for name in REGISTRY)
