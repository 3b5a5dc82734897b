"""Fidelity with the published tinyBenchmarks datasets, measured on the real content of
../shared/data (skipped when it is absent): the full splits have the published cards' sizes
(``num_bytes`` of the Hub's dataset_info: the arrow size of the split), which only the
published rendering gives, and the tiny split keeps the leaderboard's prompts.

Published numbers (the cards' ``dataset_info``): tinyGSM8k ``train`` 27,470,490 bytes for 7,473
rows; tinyWinogrande ``train`` 29,034,018 for 40,398; tinyMMLU ``dev`` 858,526 for 285. The
first two are met exactly, the third within one byte.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

from tinybench_builder.registry.benchmarks import get_benchmark
from tinybench_builder.dataset.content import ContentTable
from tinybench_builder.dataset.plan import split_table
from tinybench_builder.registry.prompts import fixed_sample
from helpers.builds import SHARED

CONTENT = SHARED / "content"
pytestmark = pytest.mark.realdata


def _table(name: str) -> pa.Table:
    path = CONTENT / f"{name}.parquet"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    return pa.Table.from_pandas(pd.read_parquet(path), preserve_index=False)


def _full_split(bench: str, split: str, table: pa.Table, pool: pa.Table) -> pa.Table:
    c = get_benchmark(bench).configs[0]
    ct = ContentTable(table, [str(i) for i in range(table.num_rows)], {"kind": "file"})
    return split_table(c, split, ct, None, {c.fewshot_split: pool.to_pylist()}, f"{bench} {split}")


def test_gsm8k_train_has_the_published_size():
    """Every row's shots are lm-eval 0.4's 1234-seeded sample of train, drawn afresh per row (the
    same 5 shots; a row may be its own shot). The leaderboard stream (harness_v1, self excluded)
    gave 174 bytes less per row."""
    train = _table("gsm8k_train")
    out = _full_split("tinyGSM8k", "train", train, train)
    assert out.num_rows == 7473 and out.nbytes == 27_470_490
    shots = fixed_sample(7473, 5)
    rows = train.to_pylist()
    head = "".join(f"Question: {rows[j]['question']}\nAnswer: {rows[j]['answer']}\n\n" for j in shots)
    assert all(t.startswith(head) for t in out.column("input_formatted").to_pylist()[:50])


def test_winogrande_train_has_the_published_size():
    """Fixed shots, then the row's raw sentence (the published train and test splits: the test
    rows have no answer to fill in). The leaderboard prompt (harness_v1 shots, the sentence up to
    the blank) gave 19.5 bytes more per row."""
    train = _table("winogrande_xl_train")
    out = _full_split("tinyWinogrande", "train", train, train)
    assert out.num_rows == 40398 and out.nbytes == 29_034_018
    sentences = train.column("sentence").to_pylist()
    texts = out.column("input_formatted").to_pylist()
    assert all(t.endswith("\n\n" + s) for t, s in zip(texts[:100], sentences[:100]))


def test_mmlu_dev_has_the_published_size():
    """Each dev row has its subject's first 5 dev rows as shots, itself included (the published
    split; with the row skipped, 4 shots, the split is 118 KB smaller). One byte apart, which only
    the raw ``question`` column can explain (prompts strip the question, and every dev row is also
    a shot of its subject's rows): a whitespace difference between content revisions."""
    dev = _table("mmlu_dev")
    out = _full_split("tinyMMLU", "dev", dev, dev)
    assert abs(out.nbytes - 858_526) <= 1
    assert all(t.count("\nAnswer: ") == 5 for t in out.column("input_formatted").to_pylist())


def test_winogrande_tiny_split_ends_with_the_gold_option():
    """The tiny split keeps the leaderboard prompt (harness_v1 shots) ending with the correct option."""
    val, train = _table("winogrande_xl_validation"), _table("winogrande_xl_train")
    c = get_benchmark("tinyWinogrande").configs[0]
    ct = ContentTable(val, [str(i) for i in range(val.num_rows)], {"kind": "file"})
    rows = list(range(0, 1267, 13))
    out = split_table(c, "validation", ct, rows, {"train": train.to_pylist()}, "winogrande validation")
    for r in out.to_pylist():
        assert r["input_formatted"].endswith(r["option" + r["answer"]])
        assert r["input_formatted"].count("\n\n") == 5
