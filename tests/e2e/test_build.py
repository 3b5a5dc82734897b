"""`tinybench-builder build` end to end for every registered benchmark (hand-made content in each upstream
schema, simulated responses): each config/split loads with datasets.load_dataset from the folder,
the tiny split holds the anchors in estimator order, input_formatted is rendered where the registry
has a renderer, the estimator loads and the manifest hashes match."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from tinybench_builder.registry.benchmarks import REGISTRY
from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.layout import (POOL_SPLIT, config_anchor_ids, config_item_ids, load_estimators, read_manifest,
                            verify_manifest)
from helpers.builds import anchors_for, built, make_content, read_split

NAMES = sorted(REGISTRY)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.getbasetemp() / "builds"


@pytest.mark.parametrize("name", NAMES)
def test_build_every_benchmark(name, root, tmp_path):
    from datasets import load_dataset

    spec = REGISTRY[name]
    folder = built(root, name)
    assert verify_manifest(folder) == []
    manifest = read_manifest(folder)
    assert manifest["name"] == name and list(manifest["configs"]) == [c.name for c in spec.configs]
    estimators = load_estimators(folder)
    k = anchors_for(name)
    for c in spec.configs:
        est = estimators[c.name]
        anchors = config_anchor_ids(est, c.scenario)
        assert len(anchors) == k
        loaded = load_dataset(str(folder), c.name, cache_dir=str(tmp_path / "cache"))
        assert set(loaded) == set(c.splits) | {POOL_SPLIT}
        for split in (*c.splits, POOL_SPLIT):
            ds = loaded[split]
            direct = pq.read_table(folder / manifest["configs"][c.name]["splits"][split]["path"])
            # every split starts with the row's id (the tiny split's: the estimator's item id)
            assert ds.column_names == ["item_id", *c.columns]
            assert ds.num_rows == direct.num_rows
            assert ds.to_dict() == direct.to_pydict()
            if c.renderer:
                assert all(isinstance(t, str) and t for t in ds["input_formatted"])
            else:
                assert "input_formatted" not in ds.column_names
        tiny = read_split(folder, c.name, c.tiny_split)
        assert len(tiny) == k
        assert list(tiny["item_id"]) == anchors  # est.estimate(dict(zip(tiny.item_id, scores))) works
        # the pool: every item of the config in estimator order, the anchors' rows exactly the tiny split's
        paths = {s: folder / v["path"] for s, v in manifest["configs"][c.name]["splits"].items()}
        pool, items = pq.read_table(paths[POOL_SPLIT]), config_item_ids(est, c.scenario)
        assert pool.num_rows == len(items) == sum(1 for s in est.scenario_index if est.scenarios[s] == c.scenario)
        at = {iid: j for j, iid in enumerate(items)}
        assert pool.take([at[a] for a in anchors]).to_pylist() == pq.read_table(paths[c.tiny_split]).to_pylist()
        if c.content_from == "upstream":  # row i is anchor i: compare with the content of its item id
            content = make_content(c, c.tiny_split, 10_000).set_index("item_id")
            prefix = f"{c.scenario}." if len(spec.configs) > 1 else ""
            for i, a in enumerate(anchors):
                first = next(col for col in c.columns if col != "input_formatted")
                want = content.loc[a[len(prefix):], first]
                got = tiny[first].iloc[i]
                assert (got == want) if not hasattr(got, "keys") else True
        for col, names in c.class_labels.items():  # ClassLabel (tinyMMLU's answer: A-D)
            assert loaded[c.tiny_split].features[col].names == list(names)


def test_tiny_rows_follow_anchor_ids_exactly(root):
    """Single benchmark: row i of the tiny split is the content row of est.anchor_ids[i]."""
    folder = built(root, "tinyGSM8k")
    est = TinyEstimator.load(folder)
    c = REGISTRY["tinyGSM8k"].configs[0]
    content = make_content(c, "test", 10_000).set_index("item_id")
    tiny = read_split(folder, "main", "test")
    assert list(tiny["question"]) == [content.loc[a, "question"] for a in est.anchor_ids]
    # the rendered prompt ends with the row's own question
    assert all(t.endswith("Question: " + q + "\nAnswer:") for t, q in zip(tiny["input_formatted"], tiny["question"]))


def test_bundle_is_one_joint_estimator(root):
    folder = built(root, "tinyOpenLLMLeaderboard")
    spec = REGISTRY["tinyOpenLLMLeaderboard"]
    est = TinyEstimator.load(folder)
    assert est.scenarios == [c.scenario for c in spec.configs]
    assert len(est.anchor_ids) == 3 * len(spec.configs)
    manifest = read_manifest(folder)
    assert [e["path"] for e in manifest["estimators"]] == [""]
    # per-config rows in anchor order: estimate from the rows' scores works for the bundle
    res = est.estimate([1.0] * len(est.anchor_ids))
    assert set(res["scenarios"]) == set(est.scenarios)
    # the original API, from the built folder: evaluate(y, 'lb') keyed by the original names
    from tinybench_builder.estimator import evaluate

    out = evaluate([1.0] * len(est.anchor_ids), "lb", source=folder)
    assert list(out) == [c.original_scenario or c.scenario for c in spec.configs]
    assert all({"irt", "pirt", "gpirt"} <= set(v) for v in out.values())


def test_helm_content_comes_from_the_responses(root):
    folder = built(root, "tinyHELM")
    tiny = read_split(folder, "gsm", "test")
    assert list(tiny.columns) == ["item_id", *REGISTRY["tinyHELM"].config("gsm").columns]
    est = TinyEstimator.load(folder)
    ids = config_anchor_ids(est, "gsm")
    assert [f"gsm.{s}.{i}" for s, i in zip(tiny["subscenario"], tiny["instance_id"])] == ids
    assert list(tiny["item_id"]) == ids  # a bundle's rows carry the estimator's (scenario-prefixed) ids
    assert all(q.startswith("gsm input ") for q in tiny["question"])
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["inputs"]["content"]["gsm/test"]["kind"] == "source"
