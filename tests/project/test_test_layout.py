"""tests/ mirrors the package: one folder per stage, so a change to a stage finds its tests there."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
PACKAGE = TESTS.parent / "tinybench_builder"
#: folders that are not a stage of the package: the modules under the stages, end-to-end runs,
#: the benchmark scripts, the repository's own rules, and the shared helpers and fixtures
OTHERS = {"kernel", "e2e", "benchmarks", "project", "helpers", "data"}


def _stages() -> set[str]:
    return {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}


def test_every_stage_of_the_package_has_its_test_folder():
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and not p.name.startswith((".", "__"))}
    assert _stages() - folders == set(), "a stage without a test folder"
    assert folders - _stages() - OTHERS == set(), "a test folder that is neither a stage nor one of OTHERS"


def test_no_test_file_is_left_at_the_top_and_names_are_unique():
    assert sorted(p.name for p in TESTS.glob("test_*.py")) == []
    names = [p.name for p in TESTS.rglob("test_*.py") if "helpers" not in p.parts]
    # pytest imports test modules by their base name (no __init__.py in the folders)
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def test_test_folders_are_not_packages():
    # an __init__.py would make tests/release/ the package ``release``, beside the repository's release.py
    assert [str(p.relative_to(TESTS)) for p in TESTS.glob("*/__init__.py") if p.parent.name != "helpers"] == []
