"""One natural order (tinybench_builder.read.matrix.natural_key): item ids and the readers' files.

There were two functions: ``read/matrix.py``'s (a tuple, the raw string last) ordered the items,
``read/sources/_common.py``'s (a list of texts and numbers) the HELM run folders. The orders are
checked here against both, as they were (commit 4b74d60), so that no output moved.
"""

from __future__ import annotations

import random
import re

import pytest

from tinybench_builder.read.matrix import natural_key
from tinybench_builder.read.sources import helm
from tinybench_builder.inputs import walk_files


def old_matrix_key(name):
    parts = re.split(r"(\d+)", str(name))
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts if p != ""), str(name)


def old_readers_key(text):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(text))]


def names(seed: int, n: int = 400) -> list[str]:
    rng = random.Random(seed)
    parts = ["a", "b", "mmlu", "abstract_algebra", ".", "_", "-", "/", "0", "00", "01", "1", "2", "9", "10", "007",
             "123", "x.1", "٣"]  # an Arabic-Indic digit: a digit run, as \d and int() take it
    return ["".join(rng.choice(parts) for _ in range(rng.randint(0, 5))) for _ in range(n)]


@pytest.mark.parametrize("seed", range(5))
def test_the_order_of_the_items_is_unchanged(seed):
    xs = names(seed)
    assert sorted(xs, key=natural_key) == sorted(xs, key=old_matrix_key)
    assert [natural_key(x) for x in xs] == [old_matrix_key(x) for x in xs]  # the very same keys


def test_the_order_of_the_helm_run_folders_is_unchanged(tmp_path):
    """The readers' key broke ties (``run01``/``run1``) by the order of the walk; the walk is sorted, so
    the raw string, which the one key compares last, gives the same order."""
    for rel in ("run1", "run01", "run10", "run2", "a0/x", "a00/x", "a0-b/x", "a/run_1", "a/run_01", "b2/c10",
                "b2/c9", "b02/c9", "m٣"):
        (tmp_path / rel).mkdir(parents=True)
        (tmp_path / rel / helm.RUN_SPEC).write_text("{}")
    runs = [f.parent for f in walk_files(tmp_path, max_depth=5) if f.name == helm.RUN_SPEC]
    assert len(runs) == 13
    assert sorted(runs, key=lambda p: natural_key(str(p))) == sorted(runs, key=lambda p: old_readers_key(str(p)))
    xs = sorted(names(7))  # any lexicographically sorted input: the same order as the stable list key's
    assert sorted(xs, key=natural_key) == sorted(xs, key=old_readers_key)


def test_a_digit_that_is_not_a_decimal_is_text():
    """"²" is a digit to str.isdigit but not a decimal to int(): both old keys raised ValueError on a
    name holding it alone between digit runs (an item id ``x2²``)."""
    for name in ("²", "x2²", "①", "q1①2"):
        with pytest.raises(ValueError):
            old_matrix_key(name)
        natural_key(name)
    assert sorted(["x2²", "x10", "x2", "x2a"], key=natural_key) == ["x2", "x2a", "x2²", "x10"]
