"""Versions that keep every earlier result valid (issue 17) and consumers' inputs (issue 20, item 4).

* ``build --update-from``: the design (item set, anchor ids and order, strata, weights) kept byte for
  byte, the IRT model / regression / calibration refitted on more models, new items in the IRT
  fit only; results logged against the previous version estimated by the new one;
* the versioning rule on the loopback Hub with the real clients: a minor version with new anchors is
  refused naming the rule, ``update_from = "previous"`` keeps them, a major version may change them;
* never silently wrong across versions: positional input, item ids, tables and lm-eval logs of
  another design refused naming both versions; the offline-revision case;
* a bundle grown by a config, the new items calibrated against the kept IRT parameters: old results
  estimate exactly as before;
* full rows, full-benchmark logs, ``simulate --holdout`` and the ``--help`` demo as written.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from tinybench_builder.dataset.build import build_benchmark
from tinybench_builder.dataset.versions import design_changes
from tinybench_builder.errors import BuildError
from tinybench_builder.estimate import estimate_table
from tinybench_builder.estimate.harness_logs import estimate_from_logs
from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.layout import read_manifest
from tinybench_builder.read import SourceError
from tinybench_builder.read.matrix import ResponseMatrix
from tinybench_builder.read.simulate import simulate_responses
from tinybench_builder.release.config import version_rule
from helpers.builds import ROOT, fast, read_split, write_fixture
from helpers.client import run_in_client
from helpers.folders import spec_release_config, write_config
from helpers.hub import HubServer
from helpers.sources import lm_record, write_lm_eval_run
from helpers import hub_clients, version_clients

TS = "2025-03-01T10-00-00.000000"
K = 10


def _tiny_path(folder, config="all"):
    man = read_manifest(folder)
    return folder / man["configs"][config]["splits"][man["configs"][config]["tiny_split"]]["path"]


@pytest.fixture(scope="module")
def mmlu(tmp_path_factory):
    """tinyMMLU 1.0.0 (20 of the 40 models, 70 of the 90 questions), 1.1.0 updated from it with all of
    them, and 2.0.0 a fresh design (another seed) on all of them."""
    tmp = tmp_path_factory.mktemp("versions")
    responses, content = write_fixture("tinyMMLU", tmp / "in")
    m = ResponseMatrix.read(responses)
    m.select_models(np.arange(20)).select_items(np.arange(70)).write(tmp / "in" / "v1.parquet")
    v1 = build_benchmark("tinyMMLU", str(tmp / "in" / "v1.parquet"), content, fast(anchors=K, version="1.0.0"),
                         out=tmp / "v1")
    v11 = build_benchmark("tinyMMLU", responses, content, fast(anchors=K, version="1.1.0"), out=tmp / "v11",
                          update_from=v1)
    v2 = build_benchmark("tinyMMLU", responses, content, fast(anchors=K, version="2.0.0", seed=5), out=tmp / "v2",
                         previous=v11)
    return {"v1": v1, "v11": v11, "v2": v2, "matrix": m, "content": content, "responses": responses, "tmp": tmp}


def _logs(root, model, rows: pd.DataFrame, scores, design=None, version=None):
    """lm-eval logs of the tiny task (rows as ``doc``), with the task metadata our task files record."""
    recs = []
    for i, (row, s) in enumerate(zip(rows.to_dict("records"), scores)):
        doc = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in row.items()}
        recs.append({"doc_id": i, "doc": doc, "target": doc["answer"], "arguments": {},
                     "resps": [], "filtered_resps": [], "filter": "none", "metrics": ["acc_norm"],
                     "acc_norm": float(s)})
    d = root / model.replace("/", "__")
    d.mkdir(parents=True, exist_ok=True)
    with open(d / f"samples_tinyMMLU_{TS}.jsonl", "w") as fh:
        for r in recs[::-1]:  # order does not matter
            fh.write(json.dumps(r) + "\n")
    meta = {"version": 1.0, **({"dataset_version": version} if version else {}), **({"design": design} if design else {})}
    (d / f"results_{TS}.json").write_text(json.dumps({
        "results": {"tinyMMLU": {"alias": "tinyMMLU", "acc_norm,none": 0.5}},
        "configs": {"tinyMMLU": {"task": "tinyMMLU", "metadata": meta}},
        "config": {"model": "hf", "model_args": f"pretrained={model}"},
        "n-samples": {"tinyMMLU": {"original": len(recs), "effective": len(recs)}}}))
    return root


# ============================================================================ build --update-from
def test_update_keeps_the_design_byte_for_byte(mmlu):
    v1, v11 = mmlu["v1"], mmlu["v11"]
    for split in ("test-00000-of-00001.parquet", "dev-00000-of-00001.parquet"):
        assert (v1 / "all" / split).read_bytes() == (v11 / "all" / split).read_bytes()
    e1, e11 = TinyEstimator.load(v1), TinyEstimator.load(v11)
    assert e11.item_ids == e1.item_ids and e11.anchor_ids == e1.anchor_ids  # the item set and the anchors
    for name in ("strata", "anchor_strata", "anchor_positions", "anchor_weights", "balance", "scenario_index"):
        assert np.array_equal(getattr(e11, name), getattr(e1, name)), name
    assert e11.design_hash == e1.design_hash
    assert not np.array_equal(e11.A, e1.A)  # ... and the IRT model refitted
    rep = json.loads((v11 / "validation.json").read_text())
    assert rep["n_models"] == 40 and json.loads((v1 / "validation.json").read_text())["n_models"] == 20
    assert rep["kept_design"]["irt_only_items"] == 20  # the 20 new questions joined the IRT fit only
    man = read_manifest(v11)
    assert man["design"]["hash"] == read_manifest(v1)["design"]["hash"] == e1.design_hash
    assert man["design"]["re_estimates"] == ["1.0.0"]
    assert man["design"]["updated_from"] == {"version": "1.0.0", "design_hash": e1.design_hash}
    moved = man["previous"]["configs"]["all"]
    assert moved["design_kept"] and moved["estimates_moved"]["models"] == 20  # the models both versions know
    card = (v11 / "README.md").read_text()
    assert "This version re-estimates the results of version 1.0.0" in card
    assert "same 10 anchors in the same order and strata" in card and "| all | 20 |" in card
    assert design_changes(v1, v11) == [] and version_rule("1.0.0", "1.1.0", []) is None
    # the lm-eval task files record the design (lm-eval copies it into its results file)
    assert e1.design_hash in (v11 / "lm_eval" / "tinyMMLU_tb.yaml").read_text()  # lm-eval has a tinyMMLU: ours is suffixed
    # how it was built: what was kept, what was fitted again, where the new questions went
    assert ("Updated from version 1.0.0 (`--update-from`): its design kept as it was (the 70 examples, the 10 "
            "anchors" in card and "with 20 examples new since 1.0.0 in the IRT fit only" in card)
    assert "on **90 examples**" in card and "on **70 examples**" in (v1 / "README.md").read_text()


@pytest.mark.slow
def test_build_update_from_on_the_command_line(mmlu, tmp_path):
    """`build --update-from` as docs/BUILD.md writes it: no --anchors (the kept design's), the same
    tiny-split bytes; a folder that is not a build, or of another benchmark, is one error line."""
    content = mmlu["content"]
    base = [sys.executable, "-m", "tinybench_builder", "build", "tinyMMLU", "--responses", mmlu["responses"],
            "--content", f"test={content['test']}", "--content", f"dev={content['dev']}", "--release-version", "1.1.0"]
    run = subprocess.run([*base, "--update-from", str(mmlu["v1"]), "--out", str(tmp_path / "v11")],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert _tiny_path(tmp_path / "v11").read_bytes() == _tiny_path(mmlu["v1"]).read_bytes()
    man = read_manifest(tmp_path / "v11")
    assert man["design"]["updated_from"]["version"] == "1.0.0" and man["parameters"]["anchors"] == K
    assert "This version re-estimates the results of version 1.0.0" in (tmp_path / "v11" / "README.md").read_text()
    for bad, says in ((tmp_path / "nothing", "manifest.json not found"), (mmlu["tmp"] / "in", "manifest.json not found")):
        run = subprocess.run([*base, "--update-from", str(bad), "--out", str(tmp_path / "o")],
                             capture_output=True, text=True, timeout=600)
        lines = run.stderr.strip().splitlines()
        assert run.returncode == 2 and lines[-1].startswith(f"error: --update-from {bad}") and says in lines[-1]
    assert not (tmp_path / "o").exists()


def test_results_logged_against_the_previous_version_are_estimated(mmlu, tmp_path):
    v1, v11 = mmlu["v1"], mmlu["v11"]
    e1, e11 = TinyEstimator.load(v1), TinyEstimator.load(v11)
    rows = read_split(v1, "all", "test")
    y = (np.random.default_rng(0).random(K) < 0.6).astype(float)
    want = e11.estimate(y)["score"]
    assert e11.estimate(y, version="1.0.0")["score"] == want  # by position, declared
    assert e11.estimate(dict(zip(rows["item_id"], y)), version="v1.0.0")["score"] == want  # by id
    assert e11.estimate(y, version=e1.design_hash[:10])["score"] == want  # by design hash
    logs = _logs(tmp_path / "logs", "org/m", rows, y, design=e1.design_hash, version="1.0.0")
    frame, _ = estimate_from_logs(v11, logs, version="1.0.0")  # from lm-eval logs of v1.0.0's task file
    assert frame["score"][0] == pytest.approx(want)


def test_update_refuses_what_it_cannot_keep(mmlu, tmp_path):
    m, content = mmlu["matrix"], mmlu["content"]
    e1 = TinyEstimator.load(mmlu["v1"])
    lost = [j for j, i in enumerate(m.items) if i != e1.item_ids[3]]
    m.select_items(lost).write(tmp_path / "lost.parquet")
    with pytest.raises(ValueError, match="lack 1 of the 70 items of the design being kept"):
        build_benchmark("tinyMMLU", str(tmp_path / "lost.parquet"), content, fast(anchors=K), out=tmp_path / "o",
                        update_from=mmlu["v1"])
    with pytest.raises(BuildError, match="an update keeps them"):
        build_benchmark("tinyMMLU", mmlu["responses"], content, fast(anchors=K + 2), out=tmp_path / "o",
                        update_from=mmlu["v1"])
    with pytest.raises(BuildError, match="holds 'tinyMMLU', not 'tinyGSM8k'"):
        r, c = write_fixture("tinyGSM8k", tmp_path / "gsm")
        build_benchmark("tinyGSM8k", r, c, fast(anchors=K), out=tmp_path / "o", update_from=mmlu["v1"])


# ============================================================================ never silently wrong
def test_another_design_is_refused_naming_both_versions(mmlu, tmp_path, capsys):
    e11, e2 = TinyEstimator.load(mmlu["v11"]), TinyEstimator.load(mmlu["v2"])
    assert e2.anchor_ids != e11.anchor_ids
    y = np.ones(K)
    with pytest.raises(ValueError, match=r"tinyMMLU 2\.0\.0 cannot be estimated by tinyMMLU 1\.1\.0"):
        e11.estimate(y, version="2.0.0")  # a v2.0.0 vector given to v1.1.0
    with pytest.raises(ValueError, match=r"tinyMMLU 1\.1\.0 cannot be estimated by tinyMMLU 2\.0\.0"):
        e2.estimate(y, version="1.1.0")  # a new design re-estimates nothing
    with pytest.raises(ValueError, match=r"design deadbeef00 cannot be estimated by tinyMMLU 1\.1\.0"):
        e11.estimate(y, version="deadbeef00")
    rows2 = read_split(mmlu["v2"], "all", "test")
    with pytest.raises(ValueError, match=r"(not an item|not one of the 10 anchors) of tinyMMLU 1\.1\.0"):
        e11.estimate(dict(zip(rows2["item_id"], y)))  # v2.0.0's rows by id (some are not even v1.1.0's items)
    # a table of v2.0.0's tiny split given to v1.1.0 (tinybench-builder estimate DIR TABLE)
    pd.DataFrame([y], columns=list(rows2["item_id"]), index=pd.Index(["m"], name="model")).to_parquet(tmp_path / "t.parquet")
    with pytest.raises(ValueError, match=r"none of the 10 anchor items is a column .*other item.s. of tinyMMLU 1\.1\.0"):
        estimate_table(mmlu["v11"], tmp_path / "t.parquet")  # no v1.1.0 anchor among v2.0.0's rows
    with pytest.raises(ValueError, match=r"tinyMMLU 2\.0\.0 cannot be estimated"):
        estimate_table(mmlu["v11"], tmp_path / "t.parquet", version="2.0.0")
    assert len(estimate_table(mmlu["v2"], tmp_path / "t.parquet", version="2.0.0")) == 1
    # the same on the command line: tinybench-builder estimate DIR TABLE --results-from VERSION
    from tinybench_builder.cli.main import main

    assert main(["estimate", str(mmlu["v11"]), str(tmp_path / "t.parquet"), "--results-from", "2.0.0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "tinyMMLU 2.0.0 cannot be estimated by tinyMMLU 1.1.0" in err[0]
    rows1 = read_split(mmlu["v1"], "all", "test")
    pd.DataFrame([y], columns=list(rows1["item_id"]), index=pd.Index(["m"], name="model")).to_parquet(tmp_path / "t1.parquet")
    assert main(["estimate", str(mmlu["v11"]), str(tmp_path / "t1.parquet"), "--results-from", "1.0.0"]) == 0
    assert f"{e11.estimate(y, version='1.0.0')['score']:.4f}" in capsys.readouterr().out
    # lm-eval logs of v2.0.0's task file and rows, given to the v1.1.0 folder
    logs = _logs(tmp_path / "logs2", "org/m", rows2, y, design=e2.design_hash, version="2.0.0")
    with pytest.raises(SourceError, match=r"results of tinyMMLU 2\.0\.0 .* not of tinyMMLU 1\.1\.0"):
        estimate_from_logs(mmlu["v11"], logs)
    assert len(estimate_from_logs(mmlu["v2"], logs)[0]) == 1


def test_rows_of_another_revision_under_a_task_file_are_detected(mmlu, tmp_path):
    """lm-eval with v1.0.0's task file, offline, served v2.0.0's rows (datasets serves the newest
    cached revision): the v1.1.0 folder (v1.0.0's design) refuses them and says why; the v2.0.0
    folder, whose rows they are, estimates them and notes the task file's version."""
    e1 = TinyEstimator.load(mmlu["v1"])
    rows2 = read_split(mmlu["v2"], "all", "test")
    logs = _logs(tmp_path / "logs", "org/m", rows2, np.ones(K), design=e1.design_hash, version="1.0.0")
    with pytest.raises(SourceError, match="the rows it ran are not.*newest cached revision"):
        estimate_from_logs(mmlu["v11"], logs)
    frame, notes = estimate_from_logs(mmlu["v2"], logs)
    assert len(frame) == 1 and any("the task file was tinyMMLU 1.0.0's" in n for n in notes)


# ============================================================================ a bundle grows by a config
def test_a_bundle_gains_a_config_and_old_results_estimate_as_before(tmp_path):
    matrix, _ = write_fixture("tinyHELM", tmp_path / "in")
    scen = matrix.item_info["scenario"].to_numpy()
    old = ["openbookqa", "gsm", "med_qa", "mmlu"]
    four = matrix.select_items(np.flatnonzero(np.isin(scen, old)))
    five = matrix.select_items(np.flatnonzero(np.isin(scen, old + ["math_chain_of_thought"])))
    v1 = build_benchmark("tinyHELM", four, None, fast(anchors=3, version="1.0.0"), out=tmp_path / "v1")
    # no anchors given: the kept configs' 3 each, also for the config added
    v11 = build_benchmark("tinyHELM", five, None, fast(version="1.1.0"), out=tmp_path / "v11", update_from=v1)
    e1, e11 = TinyEstimator.load(v1), TinyEstimator.load(v11)
    assert list(read_manifest(v11)["configs"]) == ["openbookqa", "gsm", "med_qa", "math_chain_of_thought", "mmlu"]
    assert e11.anchor_ids[:12] == e1.anchor_ids and len(e11.anchor_ids) == 15  # the old anchors, then the new
    for c in old:  # the other configs' rows and designs are kept
        assert (v1 / c / "test-00000-of-00001.parquet").read_bytes() == (v11 / c / "test-00000-of-00001.parquet").read_bytes()
    assert design_changes(v1, v11) == [] and version_rule("1.0.0", "1.1.0", design_changes(v1, v11)) is None
    # the kept items' IRT parameters and the prior are held fixed; the new items are calibrated against them
    assert np.array_equal(e11.A[: len(e1.item_ids)], e1.A) and np.array_equal(e11.b[: len(e1.item_ids)], e1.b)
    assert np.array_equal(e11.prior_mean, e1.prior_mean) and np.isfinite(e11.A).all()
    # results logged against 1.0.0 (its four configs, by position) estimate as they did
    Y = (np.random.default_rng(1).random((5, 12)) < 0.5).astype(float)
    for a, b in zip(e1.estimate(Y), e11.estimate(Y, version="1.0.0")):
        for s in old:
            for key in ("score", "ci_low", "ci_high"):
                assert b["scenarios"][s][key] == pytest.approx(a["scenarios"][s][key], abs=1e-12)
    full = e11.estimate(np.ones(15))["scenarios"]["math_chain_of_thought"]
    assert 0 <= full["score"] <= 1 and full["n_answered"] == 3
    rep = json.loads((v11 / "validation.json").read_text())
    kept = {r["scenario"]: r.get("kept_from") for r in rep["table"]}
    assert kept == {"openbookqa": "1.0.0", "gsm": "1.0.0", "med_qa": "1.0.0", "math_chain_of_thought": None,
                    "mmlu": "1.0.0"}
    man = read_manifest(v11)
    assert man["design"]["re_estimates"] == ["1.0.0"] and man["design"]["hash"] != read_manifest(v1)["design"]["hash"]
    card = (v11 / "README.md").read_text()
    assert "this version adds configs" in card
    assert ("Grown from version 1.0.0 (`--update-from`): the configs of 1.0.0 kept as they were" in card
            and "the items of math_chain_of_thought calibrated against the kept IRT parameters held fixed" in card)
    assert read_manifest(v11)["parameters"]["anchors"] == 3


# ============================================================================ the versioning rule on the Hub
def _sim_inputs(folder):
    from tinybench_builder.read.simulate import simulate_responses

    folder.mkdir(parents=True, exist_ok=True)
    m, _ = simulate_responses(n_models=24, n_items=80, n_dims=1, seed=0)
    m.select_models(np.arange(16)).write(folder / "first.parquet")
    m.write(folder / "all.parquet")
    pd.DataFrame({"item_id": m.items, "instruction": [f"instruction {i}" for i in m.items], "output": "ref",
                  "generator": "gpt4_1106_preview", "dataset": "sim"}).to_parquet(folder / "content.parquet", index=False)


def _config(folder, name, responses, seed, update_from=None):
    return write_config(folder, f"""\
        [release]
        org = "tinyOrg"

        [[benchmark]]
        name = "tinyAlpacaEval"
        responses = "inputs/{responses}"
        content = {{ test = "inputs/content.parquet" }}
        anchors = 8
        seed = {seed}
        {'' if update_from is None else f'update_from = "{update_from}"'}
        """, name=name)


@pytest.mark.slow
def test_release_rule_update_from_previous_and_the_offline_revision(tmp_path):
    _sim_inputs(tmp_path / "inputs")
    first = _config(tmp_path, "first.toml", "first.parquet", 0)
    reseed = _config(tmp_path, "reseed.toml", "all.parquet", 1)
    update = _config(tmp_path, "update.toml", "all.parquet", 1, update_from="previous")
    repo, data = "tinyOrg/tinyAlpacaEval", "default/test-00000-of-00001.parquet"
    runs = [[*args, "--push", "--quiet", "--out", str(tmp_path / out)] for args, out in (
        (["--config", str(first), "--release-version", "1.0.0"], "o1"),
        (["--config", str(reseed), "--release-version", "1.1.0"], "o2"),    # new anchors in a minor version: refused
        (["--config", str(update), "--release-version", "1.1.0"], "o3"),    # the previous release's design kept
        (["--config", str(reseed), "--release-version", "2.0.0"], "o4"))]   # new anchors in a major version
    with HubServer() as hub:
        env = hub.client_env(tmp_path / "hf_home")
        proc = run_in_client(env, hub_clients.release_cli, runs, fake=False, cwd=tmp_path)
        assert proc.result["codes"] == [0, 1, 0, 0], proc.stderr[-3000:]
        assert ("1.1.0 is a minor version of 1.0.0 but changes its design (config 'default' has other anchors"
                in proc.stderr)
        assert "a patch or minor version must keep the previous version's anchors" in proc.stderr
        assert "new anchors need a new major version (2.0.0)" in proc.stderr
        assert set(hub.refs(repo)["tags"]) == {"v1.0.0", "v1.1.0", "v2.0.0"}
        files = {t: hub.files(repo, t) for t in ("v1.0.0", "v1.1.0", "v2.0.0")}
        assert files["v1.1.0"][data] == files["v1.0.0"][data] != files["v2.0.0"][data]  # same rows, same bytes
        summary = json.loads((tmp_path / "o3" / "release.json").read_text())["benchmarks"]["tinyAlpacaEval"]
        assert summary["design"]["kept"] and summary["design"]["previous"] == "v1.0.0"
        assert summary["design"]["re_estimates"] == ["1.0.0"]
        m1 = json.loads(files["v1.1.0"]["manifest.json"])
        assert m1["design"]["updated_from"]["version"] == "1.0.0"
        assert json.loads(files["v2.0.0"]["manifest.json"])["design"]["re_estimates"] == []
        # consumers: both revisions cached online, then offline
        online = run_in_client(env, version_clients.cache_revisions, repo, ["v1.0.0", "v2.0.0"]).result
        offline = run_in_client({**env, "HF_HUB_OFFLINE": "1"}, version_clients.offline_revision, repo,
                                "v1.0.0").result
    v1_rows = online["v1.0.0"]["rows"]
    assert v1_rows == online["v1.0.0"]["anchors"] != online["v2.0.0"]["anchors"]
    # the paths our tools and docs use read v1.0.0's rows and estimator offline
    assert offline["snapshot_rows"] == v1_rows and offline["from_hub_rows"] == v1_rows
    assert offline["anchors"] == v1_rows and offline["same_estimator"]
    assert offline["hub_estimate"] == pytest.approx(offline["direct_estimate"])  # tinybench-builder estimate hub:...@v1.0.0
    assert "give the revision the results were made against, e.g. hub:tinyOrg/tinyAlpacaEval@v1.0.0" in \
        offline["no_revision"]
    # load_dataset(repo, revision=...) offline may serve another cached revision; if it does, those rows
    # are never estimated silently by the v1.0.0 estimator: refused when none is one of its anchors, else
    # estimated from the anchors among them (a partial run, issue 29) with a warning naming the others
    served = offline["estimate_of_served"]
    if offline["served_by_load_dataset"] != v1_rows:
        if "error" in served:
            assert "not one of the 8 anchors of tinyAlpacaEval 1.0.0" in served["error"]
        else:
            assert len(served["warnings"]) == 1 and "label(s) are not used" in served["warnings"][0], served
    else:
        assert "score" in served and served["warnings"] == []
    print("offline load_dataset(repo, revision='v1.0.0') served v1.0.0's rows:",
          offline["served_by_load_dataset"] == v1_rows)


@pytest.mark.slow
def test_release_update_from_a_local_folder(tmp_path, monkeypatch, capsys):
    """`update_from = "FOLDER"` (a local build of the previous version, no Hub): the release keeps its
    design, release.json says so, and the tiny split's bytes are the previous version's."""
    from tinybench_builder.cli.main import release_main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    _sim_inputs(tmp_path / "inputs")
    first = _config(tmp_path, "first.toml", "first.parquet", 0)
    assert release_main(["--config", str(first), "--release-version", "1.0.0", "--out", str(tmp_path / "o1"),
                         "--quiet"]) == 0
    update = _config(tmp_path, "update.toml", "all.parquet", 1, update_from="o1/tinyAlpacaEval")  # relative: the config's folder
    assert release_main(["--config", str(update), "--release-version", "1.1.0", "--out", str(tmp_path / "o2"),
                         "--quiet"]) == 0
    summary = json.loads((tmp_path / "o2" / "release.json").read_text())["benchmarks"]["tinyAlpacaEval"]["design"]
    assert summary["kept"] and summary["previous"] == "1.0.0" and summary["rule"] == "kept"
    assert summary["re_estimates"] == ["1.0.0"]
    assert _tiny_path(tmp_path / "o2" / "tinyAlpacaEval", "default").read_bytes() == \
        _tiny_path(tmp_path / "o1" / "tinyAlpacaEval", "default").read_bytes()
    bad = _config(tmp_path, "bad.toml", "all.parquet", 1, update_from="nowhere")
    capsys.readouterr()
    assert release_main(["--config", str(bad), "--release-version", "1.1.0", "--out", str(tmp_path / "o3")]) == 2
    assert "update_from 'nowhere' is not a folder" in capsys.readouterr().err


# ============================================================================ consumers (issue 20, item 4)
def test_full_rows_are_read_by_their_anchor_labels(mmlu, tmp_path):
    e11 = TinyEstimator.load(mmlu["v11"])
    m = mmlu["matrix"]
    row = pd.Series(m.scores[0], index=m.items)  # every item of the benchmark
    want = e11.estimate({a: row[a] for a in e11.anchor_ids})["score"]
    assert e11.estimate(row)["score"] == want
    frame = pd.DataFrame(m.scores[:3], columns=m.items, index=m.models[:3])
    got = [r["score"] for r in e11.estimate(frame)]
    # (a batch of rows and a single row may differ in the last bit: the estimator's arithmetic is vectorised)
    assert got[0] == pytest.approx(want, abs=1e-12) and len(got) == 3
    with pytest.warns(UserWarning, match=r"1 label\(s\) are not used \('model'"):  # a partial row (issue 29)
        assert e11.estimate(frame[e11.anchor_ids[:5]].reset_index(names="model")) == \
            e11.estimate(frame[e11.anchor_ids[:5]])
    assert e11.estimate(frame.reset_index(names="model"))[0]["score"] == got[0]  # a full row: other labels ignored
    # the CLI (tinybench-builder estimate DIR TABLE) takes the same full rows and gives the same estimates
    frame.rename_axis("model").to_parquet(tmp_path / "full.parquet")
    table = estimate_table(mmlu["v11"], tmp_path / "full.parquet")
    assert list(table["score"]) == pytest.approx(got, abs=1e-12)
    others = [i for i in m.items if i not in e11.anchor_ids][:2]
    partial = frame[e11.anchor_ids[:5] + others]  # ... and both read the anchors of partial rows of other items
    partial.rename_axis("model").to_parquet(tmp_path / "partial.parquet")  # (issue 29: they were refused)
    with pytest.warns(UserWarning, match=f"2 label\\(s\\) are not used \\({others[0]!r}"):
        api = [r["score"] for r in e11.estimate(partial)]
    assert api == [r["score"] for r in e11.estimate(frame[e11.anchor_ids[:5]])]
    table = estimate_table(mmlu["v11"], tmp_path / "partial.parquet")
    assert list(table["score"]) == pytest.approx(api, abs=1e-12)
    only_others = frame[others].rename_axis("model")  # not a single anchor: refused by both
    only_others.to_parquet(tmp_path / "others.parquet")
    with pytest.raises(ValueError, match=f"item '{others[0]}' is not one of the 10 anchors of tinyMMLU 1.1.0"):
        e11.estimate(only_others)
    with pytest.raises(ValueError, match="none of the 10 anchor items is a column.*2 other item.s. of tinyMMLU 1.1.0"):
        estimate_table(mmlu["v11"], tmp_path / "others.parquet")


def test_full_benchmark_logs_give_the_estimate_and_the_exact_score(tmp_path):
    """`tinybench-builder estimate DIR LOGS` on lm-eval logs of the full benchmark (wmdp_bio, not tinyWMDP_bio):
    the anchors' documents give the estimate, and the logs' exact full score comes with it."""
    n_items, n_models = 60, 30
    m, _ = simulate_responses(n_models=n_models + 1, n_items=n_items, n_dims=1, seed=3)
    m.select_models(np.arange(n_models)).write(tmp_path / "wmdp.parquet")
    pd.DataFrame({"item_id": [str(j) for j in range(n_items)], "question": [f"Question {j}?" for j in range(n_items)],
                  "choices": [["a", "b", "c", "d"]] * n_items, "answer": [j % 4 for j in range(n_items)]}
                 ).to_parquet(tmp_path / "q.parquet")
    from tinybench_builder.registry import load_spec_file

    spec = load_spec_file(ROOT / "specs" / "tinyWMDP_bio.toml")
    folder = build_benchmark(spec, str(tmp_path / "wmdp.parquet"), {"test": str(tmp_path / "q.parquet")},
                             fast(anchors=K, version="1.0.0"), out=tmp_path / "tiny")
    y = m.scores[n_models]
    write_lm_eval_run(tmp_path / "logs", "org/new-model",
                      {"wmdp_bio": [lm_record(j, float(y[j])) for j in range(n_items)]}, ts=TS)
    frame, notes = estimate_from_logs(folder, tmp_path / "logs")
    est = TinyEstimator.load(folder)
    assert frame["score"][0] == pytest.approx(est.estimate({a: y[int(a)] for a in est.anchor_ids})["score"])
    assert frame["full_score"][0] == pytest.approx(y.mean())
    assert any("logs of the full benchmark (wmdp_bio, 60 documents)" in n and "exact score" in n for n in notes)


def test_simulate_holdout_draws_new_models_from_the_same_items():
    m, p = simulate_responses(n_models=30, n_items=50, seed=4)
    m2, p2 = simulate_responses(n_models=30, n_items=50, seed=4, holdout=5)
    assert np.array_equal(m.scores, m2.scores, equal_nan=True)  # the matrix is the same with or without them
    h = p2["holdout"]
    assert h.shape == (5, 50) and h.items == m.items and not np.isnan(h.scores).any()
    assert np.allclose(p2["holdout_truth"], h.scores.mean(1)) and np.array_equal(p2["A"], p["A"])


@pytest.mark.slow
def test_the_help_demo_runs_as_written(tmp_path):
    """The first three examples of `python -m tinybench_builder --help`, run as they are written."""
    from tinybench_builder.cli.main import build_parser

    lines = [ln.split("#")[0].strip() for ln in build_parser().epilog.splitlines() if ln.strip().startswith("python")]
    demo = lines[:3]
    assert [shlex.split(c)[3] for c in demo] == ["simulate", "fit", "estimate"]
    for cmd in demo:
        argv = shlex.split(cmd)
        assert argv[:3] == ["python", "-m", "tinybench_builder"]
        # run in a scratch folder: the package from this checkout even where it is not installed
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
        proc = subprocess.run([sys.executable, *argv[1:]], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, f"{cmd}\n{proc.stderr[-2000:]}"
    out = pd.read_csv(tmp_path / "estimates.csv")
    assert len(out) == 20 and out["score"].between(0, 1).all()


# ============================================================================ lm-eval itself, offline
LM_EVAL_PYTHON = os.environ.get("TINYBENCH_LM_EVAL_PYTHON")


@pytest.mark.slow
@pytest.mark.skipif(not LM_EVAL_PYTHON, reason="set TINYBENCH_LM_EVAL_PYTHON to a Python with lm-evaluation-harness")
def test_lm_eval_offline_with_an_older_task_file_is_never_estimated_silently(tmp_path):
    """The issue's case with lm-eval itself (its ``dummy`` model): tinyWMDP_bio v1.0.0 and v2.0.0 (another
    design) released to the loopback Hub, both task files run online (both revisions cached), then
    v1.0.0's task file offline. lm-eval copies the task file's design hash into its results file;
    whatever rows the offline run was served, `tinybench-builder estimate` with the v1.0.0 folder estimates
    them only if they are v1.0.0's rows, and otherwise refuses them saying why."""
    n_items = 60
    m, _ = simulate_responses(n_models=30, n_items=n_items, n_dims=1, seed=3)
    m.write(tmp_path / "wmdp.parquet")
    pd.DataFrame({"item_id": [str(j) for j in range(n_items)], "question": [f"Question {j}?" for j in range(n_items)],
                  "choices": [[f"c{j}{c}" for c in "abcd"] for j in range(n_items)], "answer": [j % 4 for j in range(n_items)]}
                 ).to_parquet(tmp_path / "q.parquet")
    spec = ROOT / "specs" / "tinyWMDP_bio.toml"
    configs = {}
    for version, seed in (("1.0.0", 0), ("2.0.0", 1)):
        configs[version] = spec_release_config(tmp_path, spec, tmp_path / "wmdp.parquet", tmp_path / "q.parquet",
                                               anchors=K, seed=seed, name=f"r{seed}.toml")
    runs = [["--config", str(configs[v]), "--release-version", v, "--out", str(tmp_path / f"rel{v}"), "--push",
             "--quiet"] for v in configs]
    folders = {v: tmp_path / f"rel{v}" / "tinyWMDP_bio" for v in configs}

    def lm_eval(version, out, env, check=True):
        proc = subprocess.run([LM_EVAL_PYTHON, "-m", "lm_eval", "--model", "dummy", "--include_path",
                               str(folders[version] / "lm_eval"), "--tasks", "tinyWMDP_bio", "--log_samples",
                               "--output_path", str(tmp_path / out)], env=env, capture_output=True, text=True,
                              timeout=900, cwd=tmp_path)
        assert not check or proc.returncode == 0, proc.stderr[-3000:]
        return tmp_path / out, proc

    with HubServer() as hub:
        assert run_in_client(hub.client_env(tmp_path / "hf_home"), hub_clients.release_cli, runs,
                             fake=False).result["codes"] == [0, 0]
        env = hub.client_env(tmp_path / "hf_consumer")
        online = {v: lm_eval(v, f"online{v}", env)[0] for v in configs}
    offline, proc = lm_eval("1.0.0", "offline", {**env, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"},
                            check=False)
    e1, e2 = (TinyEstimator.load(folders[v]) for v in configs)
    assert e1.anchor_ids != e2.anchor_ids
    # lm-eval records the task file's design hash and version in its results file
    [results] = list(online["1.0.0"].rglob("results_*.json"))
    meta = json.loads(results.read_text())["configs"]["tinyWMDP_bio"]["metadata"]
    assert meta["design"] == e1.design_hash and meta["dataset_version"] == "1.0.0"
    def rows_run(root):
        [samples] = list(root.rglob("samples_tinyWMDP_bio_*.jsonl"))
        return sorted(json.loads(line)["doc"]["item_id"] for line in samples.read_text().splitlines())

    for v, est in (("1.0.0", e1), ("2.0.0", e2)):  # online, every task file ran its own rows
        assert rows_run(online[v]) == sorted(est.anchor_ids)
        frame, _ = estimate_from_logs(folders[v], online[v])
        assert len(frame) == 1 and 0 <= frame["score"][0] <= 1
    if proc.returncode != 0:  # the task file's own scoring (tiny_utils) refused another release's rows in lm-eval
        assert "is the task file from another release?" in proc.stderr, proc.stderr[-3000:]
        print("offline lm-eval with v1.0.0's task file was served other rows: refused inside lm-eval")
        return
    ran = rows_run(offline)
    assert ran in (sorted(e1.anchor_ids), sorted(e2.anchor_ids))
    if ran == sorted(e1.anchor_ids):
        assert len(estimate_from_logs(folders["1.0.0"], offline)[0]) == 1
    else:  # served v2.0.0's rows under v1.0.0's task file: refused by v1.0.0, estimated by v2.0.0 with a note
        with pytest.raises(SourceError, match="the rows it ran are not its rows.*newest cached revision"):
            estimate_from_logs(folders["1.0.0"], offline)
        frame, notes = estimate_from_logs(folders["2.0.0"], offline)
        assert len(frame) == 1 and any("the task file was tinyWMDP_bio 1.0.0's" in n for n in notes)
    print("offline lm-eval with v1.0.0's task file ran v1.0.0's rows:", ran == sorted(e1.anchor_ids))
