"""tinybench_builder.dataset.build: determinism, manifest (hashes, inputs, no paths or secrets), content inputs
(parquet/CSV/JSON lines, Hub id through a stub), errors, the `build` CLI, and real builds from
../shared/data (tinyAlpacaEval from real responses; tinyMMLU content with simulated responses)."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from tinybench_builder.dataset import content as content_mod
from tinybench_builder import layout
from tinybench_builder.dataset import responses as responses_mod
from tinybench_builder.cli.main import main
from tinybench_builder.registry.benchmarks import REGISTRY
from tinybench_builder.dataset.options import BuildOptions
from tinybench_builder.errors import BuildError
from tinybench_builder.model.options import FitOptions
from tinybench_builder.dataset.content import parse_content_args
from tinybench_builder.dataset.build import build_benchmark
from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.layout import read_manifest, verify_manifest
from tinybench_builder.read.matrix import ResponseMatrix
from tinybench_builder.read.simulate import simulate_responses
from helpers.builds import SHARED, all_bytes, built, fast, make_content, read_split, write_fixture


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.getbasetemp() / "builds"


# ----------------------------------------------------------------------------- determinism
def test_same_inputs_and_seed_give_identical_bytes(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_SECRETtokenSHOULDneverLEAK")
    responses, content = write_fixture("tinyWinogrande", tmp_path / "in")
    a = build_benchmark("tinyWinogrande", responses, content, fast(anchors=10, seed=3), out=tmp_path / "a")
    ba = all_bytes(a)
    # the second build replaces the first in place (an earlier build may be overwritten)
    b = build_benchmark("tinyWinogrande", responses, content, fast(anchors=10, seed=3), out=a)
    bb = all_bytes(b)
    assert list(ba) == list(bb)
    for name in ba:
        assert ba[name] == bb[name], f"{name} differs between two identical builds"
    assert {"README.md", "manifest.json", "estimator.json", "irt_parameters.npz", "estimator.py",
            "validation.json", "validation.png"} <= set(ba)
    # no absolute paths, no user paths, no token in any file
    for name, data in ba.items():
        assert str(tmp_path).encode() not in data, name
        assert b"hf_SECRET" not in data, name


def test_another_seed_changes_the_anchors(root, tmp_path):
    a = TinyEstimator.load(built(root, "tinyGSM8k", seed=0))
    b = TinyEstimator.load(built(root, "tinyGSM8k", seed=1))
    assert a.anchor_ids != b.anchor_ids


# ----------------------------------------------------------------------------- manifest
def test_manifest_records_versions_inputs_parameters_and_hashes(root):
    folder = built(root, "tinyMMLU")
    m = read_manifest(folder)
    assert m["schema_version"] == layout.MANIFEST_SCHEMA_VERSION and m["format"] == layout.DATASET_FORMAT
    assert m["version"] == "0.0.0" and m["tag"] == "v0.0.0" and m["repo_id"].endswith("/tinyMMLU")
    assert m["repo_id"].split("/")[0] != "tinyBenchmarks"  # never a default organisation (test_conventions)
    assert m["builder_version"] and m["estimator_schema_version"] == 2
    assert m["parameters"]["anchors"] == 10 and m["parameters"]["seed"] == 0 and m["parameters"]["n_dims"] == 1
    resp = m["inputs"]["responses"][0]
    assert resp["name"] == "responses.parquet" and len(resp["sha256"]) == 64
    test_in = m["inputs"]["content"]["all/test"]
    assert test_in["name"] == "all_test.parquet"
    assert test_in["sha256"] == hashlib.sha256((folder.parent / "inputs" / "all_test.parquet").read_bytes()).hexdigest()
    files = m["files"]
    assert "manifest.json" not in files and "README.md" in files and "all/test-00000-of-00001.parquet" in files
    for rel, meta in files.items():
        data = (folder / rel).read_bytes()
        assert meta == {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    # our task file's name, and lm-eval's own task whose logs `estimate` reads too
    assert (m["configs"]["all"]["harness_task"], m["configs"]["all"]["harness_builtin_task"]) == ("tinyMMLU_tb",
                                                                                                  "tinyMMLU")
    assert verify_manifest(folder) == []
    # estimator.from_hub's lookup: manifest["files"][path]["sha256"] for the side files
    assert {"estimator.json", "irt_parameters.npz"} <= set(files)


def test_verify_manifest_reports_changes(root, tmp_path):
    import shutil

    folder = tmp_path / "copy"
    shutil.copytree(built(root, "tinyGSM8k"), folder)
    (folder / "estimator.json").write_text((folder / "estimator.json").read_text() + " ")
    (folder / "extra.txt").write_text("x")
    problems = verify_manifest(folder)
    assert any("estimator.json" in p for p in problems) and any("extra.txt" in p for p in problems)


# ----------------------------------------------------------------------------- content inputs
def test_csv_and_jsonl_content_give_the_same_dataset(tmp_path):
    from datasets import load_dataset

    spec = REGISTRY["tinyAlpacaEval"]
    c = spec.configs[0]
    df = make_content(c, "test", 80)
    m, _ = simulate_responses(n_models=30, n_items=80, n_dims=1, seed=2)
    responses = tmp_path / "r.csv"
    ResponseMatrix(m.scores, m.models, list(df["item_id"])).write(responses)
    df.to_csv(tmp_path / "c.csv", index=False)
    with open(tmp_path / "c.jsonl", "w") as fh:
        for rec in df.to_dict("records"):
            fh.write(json.dumps(rec) + "\n")
    a = build_benchmark("tinyAlpacaEval", responses, {"test": str(tmp_path / "c.csv")}, fast(anchors=8),
                        out=tmp_path / "a")
    b = build_benchmark("tinyAlpacaEval", responses, {"test": str(tmp_path / "c.jsonl")}, fast(anchors=8),
                        out=tmp_path / "b")
    assert read_split(a, "default", "test").equals(read_split(b, "default", "test"))
    ds = load_dataset(str(a), split="test", cache_dir=str(tmp_path / "cache"))  # the "default" config
    assert ds.num_rows == 8 and ds.column_names == ["item_id", *c.columns]


def test_content_from_the_hub_uses_datasets_load_dataset(tmp_path, monkeypatch):
    """No network here: datasets.load_dataset is replaced by a stub returning an in-memory Dataset."""
    import datasets

    c = REGISTRY["tinyAlpacaEval"].configs[0]
    df = make_content(c, "test", 60).drop(columns=["item_id"])  # upstream rows: ids are positions
    calls = []

    def fake_load(path, name=None, split=None, **kw):
        calls.append((path, name, split))
        return datasets.Dataset.from_pandas(df, preserve_index=False)

    monkeypatch.setattr(datasets, "load_dataset", fake_load)
    monkeypatch.setattr(content_mod, "check_hub_dataset", lambda dataset_id, what: calls.append(("checked", dataset_id)))
    m, _ = simulate_responses(n_models=30, n_items=60, n_dims=1, seed=1)
    out = build_benchmark("tinyAlpacaEval", m, None, fast(anchors=6), out=tmp_path / "o")
    assert calls == [("checked", "tatsu-lab/alpaca_eval"), ("tatsu-lab/alpaca_eval", "alpaca_eval_gpt4_baseline", "eval")]
    man = read_manifest(out)
    assert man["inputs"]["content"]["default/test"] == {"kind": "hub", "id": "tatsu-lab/alpaca_eval",
                                                        "config": "alpaca_eval_gpt4_baseline", "split": "eval"}
    assert man["inputs"]["responses"][0]["kind"] == "matrix"
    est = TinyEstimator.load(out)
    tiny = read_split(out, "default", "test")
    assert list(tiny["instruction"]) == [df["instruction"][int(a)] for a in est.anchor_ids]
    # an explicit hub: id for a split
    calls.clear()
    build_benchmark("tinyAlpacaEval", m, {"test": "hub:someone/alpaca_copy"}, fast(anchors=6), out=tmp_path / "o2")
    assert calls == [("checked", "someone/alpaca_copy"), ("someone/alpaca_copy", "alpaca_eval_gpt4_baseline", "eval")]


def test_content_item_ids_from_subject_column():
    t = pa.table({"subject": ["a", "a", "b"], "question": ["x", "y", "z"]})
    assert content_mod.content_item_ids(t, ["a.1", "b.0"]) == ["a.0", "a.1", "b.0"]
    assert content_mod.content_item_ids(t, ["0", "2"]) == ["0", "1", "2"]


def test_errors_are_clear(tmp_path):
    c = REGISTRY["tinyAlpacaEval"].configs[0]
    df = make_content(c, "test", 40)
    df.to_parquet(tmp_path / "c.parquet")
    m, _ = simulate_responses(n_models=20, n_items=41, n_dims=1, seed=0)
    bad = ResponseMatrix(m.scores, m.models, [str(i) for i in range(41)])  # item "40" is not in the content
    with pytest.raises(BuildError, match="not in the content"):
        build_benchmark("tinyAlpacaEval", bad, {"test": str(tmp_path / "c.parquet")}, BuildOptions(anchors=5),
                        out=tmp_path / "o")
    df.drop(columns=["generator"]).to_parquet(tmp_path / "c2.parquet")
    good = bad.select_items(np.arange(40))
    with pytest.raises(BuildError, match="lacks column"):
        build_benchmark("tinyAlpacaEval", good, {"test": str(tmp_path / "c2.parquet")}, fast(anchors=5),
                        out=tmp_path / "o")
    with pytest.raises(BuildError, match="no split"):
        build_benchmark("tinyAlpacaEval", good, {"dev": str(tmp_path / "c.parquet")}, BuildOptions(anchors=5),
                        out=tmp_path / "o")
    with pytest.raises(ValueError, match="unknown tiny benchmark"):
        build_benchmark("tinyNope", good, out=tmp_path / "o")
    (tmp_path / "precious").mkdir()
    (tmp_path / "precious" / "notes.txt").write_text("keep me")
    with pytest.raises(BuildError, match="refusing to overwrite"):
        build_benchmark("tinyAlpacaEval", good, {"test": str(tmp_path / "c.parquet")}, fast(anchors=5),
                        out=tmp_path / "precious")
    assert (tmp_path / "precious" / "notes.txt").read_text() == "keep me"
    assert not any(p.name.startswith(".o") for p in tmp_path.iterdir())  # no temporary folder left behind
    with pytest.raises(BuildError):
        parse_content_args(["test"])
    assert parse_content_args(["test=a.parquet", "all/dev=b.csv"]) == {"test": "a.parquet", "all/dev": "b.csv"}


def test_build_cli(tmp_path, capsys):
    responses, content = write_fixture("tinyGSM8k", tmp_path / "in")
    args = ["build", "tinyGSM8k", "--responses", responses, "--anchors", "10", "--seed", "0", "--dims", "1",
            "--kmeans-seeds", "2", "--quiet", "--release-version", "1.2.0", "--out", str(tmp_path / "out")]
    for split, path in content.items():
        args += ["--content", f"{split}={path}"]
    assert main(args) == 0
    m = read_manifest(tmp_path / "out")
    assert m["version"] == "1.2.0" and m["tag"] == "v1.2.0"
    assert main(["build", "tinyGSM8k", "--responses", responses, "--content", "nonsense",
                 "--out", str(tmp_path / "x")]) == 2
    assert "SPLIT=PATH" in capsys.readouterr().err


# ----------------------------------------------------------------------------- real data
needs_shared = pytest.mark.skipif(not (SHARED / "responses").is_dir(), reason="../shared/data is absent")


@needs_shared
@pytest.mark.realdata
def test_real_tinyalpacaeval(tmp_path):
    from datasets import load_dataset

    out = build_benchmark(
        "tinyAlpacaEval", SHARED / "responses" / "alpaca_eval_2.parquet",
        {"test": str(SHARED / "content" / "alpaca_eval.parquet")},
        BuildOptions(version="1.0.0", fit=FitOptions(n_dims=1, n_seeds=2, n_folds=3)), out=tmp_path / "tinyAlpacaEval",
    )
    est = TinyEstimator.load(out)
    assert len(est.anchor_ids) == 100 and len(est.item_ids) == 805
    ds = load_dataset(str(out), "default", split="test", cache_dir=str(tmp_path / "cache"))
    content = pd.read_parquet(SHARED / "content" / "alpaca_eval.parquet").set_index("item_id")
    assert ds["instruction"] == [content.loc[a, "instruction"] for a in est.anchor_ids]
    report = json.loads((out / "validation.json").read_text())
    row = report["table"][0]
    assert report["n_models"] == 63 and row["score"] < row["random"] and row["score"] < 0.03
    card = (out / "README.md").read_text()
    assert "63 models" in card and "| alpaca_eval | 63 |" in card
    # the shipped estimator on the real anchor results of the training models is close to the truth
    Y = pd.read_parquet(SHARED / "responses" / "alpaca_eval_2.parquet")
    gp = np.array([r["score"] for r in est.estimate(Y[est.anchor_ids].to_numpy())])
    assert np.nanmean(np.abs(gp - Y.mean(axis=1).to_numpy())) < 0.03


@needs_shared
@pytest.mark.realdata
def test_real_mmlu_content_with_simulated_responses(tmp_path):
    """Three real MMLU subjects (test + dev), simulated responses: input_formatted is the harness's 5-shot prompt."""
    from tinybench_builder.registry.prompts import render_mmlu

    subjects = ["astronomy", "marketing", "virology"]
    test = pd.read_parquet(SHARED / "content" / "mmlu_test.parquet")
    dev = pd.read_parquet(SHARED / "content" / "mmlu_dev.parquet")
    test = test[test["subject"].isin(subjects)]
    dev = dev[dev["subject"].isin(subjects)]
    test.to_parquet(tmp_path / "test.parquet")
    dev.to_parquet(tmp_path / "dev.parquet")
    m, _ = simulate_responses(n_models=40, n_items=len(test), n_dims=1, seed=5)
    matrix = ResponseMatrix(m.scores, m.models, list(test["item_id"]))
    out = build_benchmark("tinyMMLU", matrix, {"test": str(tmp_path / "test.parquet"), "dev": str(tmp_path / "dev.parquet")},
                          fast(anchors=15), out=tmp_path / "tinyMMLU")
    est = TinyEstimator.load(out)
    tiny = read_split(out, "all", "test")
    by_id = test.set_index("item_id")
    for i, a in enumerate(est.anchor_ids):
        row = by_id.loc[a]
        shots = dev[dev["subject"] == row["subject"]].head(5).to_dict("records")
        assert tiny["input_formatted"].iloc[i] == render_mmlu(row.to_dict(), shots)
        assert tiny["question"].iloc[i] == row["question"]
    dev_out = read_split(out, "all", "dev")
    assert len(dev_out) == len(dev) and list(dev_out.columns) == ["item_id", *REGISTRY["tinyMMLU"].configs[0].columns]
    assert list(dev_out["item_id"]) == list(dev["item_id"])  # the dev rows' own ids (<subject>.<index>)


# ----------------------------------------------------------------------------- item order
def test_item_text_check_and_harness_v1_order(tmp_path):
    """Responses in the v0.3 harness evaluation order (OLL v1 details rows) carry their text: the
    build refuses to pair them with upstream rows by position, and maps them with item_order."""
    from tinybench_builder.registry.prompts import harness_v1_order

    c = REGISTRY["tinyGSM8k"].configs[0]
    test = make_content(c, "test", 60)
    words = np.array(["apple", "river", "stone", "cloud", "tiger", "piano", "lemon", "orbit", "maple", "ocean",
                      "violet", "saddle", "copper", "falcon", "harbor", "meadow", "pepper", "quartz", "walnut", "zephyr"])
    rng = np.random.default_rng(0)
    test["question"] = [" ".join(rng.choice(words, 5, replace=False)) + "?" for _ in range(60)]
    train = make_content(c, "train", 30)
    test.to_parquet(tmp_path / "test.parquet")
    train.to_parquet(tmp_path / "train.parquet")
    content = {"test": str(tmp_path / "test.parquet"), "train": str(tmp_path / "train.parquet")}
    order = harness_v1_order(60)
    m, _ = simulate_responses(n_models=30, n_items=60, n_dims=1, seed=4)
    # row p of the details = upstream document order[p]; the reader gives id "p" and that document's text
    info = pd.DataFrame({"question": [test["question"][order[p]] for p in range(60)]}, index=[str(p) for p in range(60)])
    details = ResponseMatrix(m.scores, m.models, [str(p) for p in range(60)], info)
    with pytest.raises(BuildError, match="harness_v1"):
        build_benchmark("tinyGSM8k", details, content, fast(anchors=6), out=tmp_path / "bad")
    out = build_benchmark("tinyGSM8k", details, content, fast(anchors=6, item_order="harness_v1"), out=tmp_path / "ok")
    est = TinyEstimator.load(out)
    tiny = read_split(out, "main", "test")
    assert list(tiny["question"]) == [test["question"][int(a)] for a in est.anchor_ids]
    # details row j is upstream document order[j]: the estimator's items carry the upstream ids
    # (in the canonical, natural order of the ids)
    assert est.item_ids == [str(j) for j in range(60)]
    assert read_manifest(out)["parameters"]["item_order"] == "harness_v1"


@needs_shared
@pytest.mark.realdata
def test_responses_from_alpacaeval_annotations_use_the_content_ids():
    """Real AlpacaEval annotation folders name items by instruction; with the content they get its item_id."""
    spec = REGISTRY["tinyAlpacaEval"]
    m, records = responses_mod.read_responses(spec, SHARED / "raw" / "alpaca_eval",
                                        SHARED / "content" / "alpaca_eval.parquet")
    assert m.shape[0] == 2 and records[0]["kind"] == "folder" and records[0]["name"] == "alpaca_eval"
    table = pd.read_parquet(SHARED / "responses" / "alpaca_eval_2.parquet")
    for model in m.models:
        row = m.scores[m.models.index(model)]
        ref = table.loc[model, m.items].to_numpy(dtype=float)
        np.testing.assert_allclose(row, ref, equal_nan=True)
