"""Releases of what real data supports: the README's main job (release-local.toml, every real tiny
benchmark of ../shared/data, each loading with load_dataset), bundles built from the configs that
have responses (given per config), rows with item ids only when no text came with the responses
(refused by --push unless the config allows it), and the config's `spec = ...` entries."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tinybench_builder.cli.main import release_main
from tinybench_builder.layout import read_manifest
from tinybench_builder.release.config import ConfigError, load_config
from tinybench_builder.read.simulate import simulate_responses
from helpers import hub_clients
from helpers.builds import ROOT, SHARED
from helpers.client import run_in_client
from helpers.folders import write_config
from helpers.hub import HubServer

pytestmark = pytest.mark.slow  # end to end: each test takes seconds to minutes


def _helm_tables(folder, configs=("gsm", "mmlu"), n_items=(70, 60)):
    """Per-config score tables like ../shared/data/responses/helm_lite_*.parquet (instance order, no text)."""
    folder.mkdir(parents=True, exist_ok=True)
    m, _ = simulate_responses(n_models=36, n_items=sum(n_items), n_dims=1, seed=4)
    out, start = {}, 0
    for c, n in zip(configs, n_items):
        frame = pd.DataFrame(m.scores[:, start:start + n], index=pd.Index(m.models, name="model"),
                             columns=[str(j) for j in range(n)])
        start += n
        out[c] = folder / f"helm_lite_{c}.parquet"
        frame.to_parquet(out[c])
    return out


def _config(folder, tables, allow: bool | None = None):
    table = ", ".join(f'{c} = "{p}"' for c, p in tables.items())
    return write_config(folder, f"""\
        [release]
        org = "tinyOrg"

        [[benchmark]]
        name = "tinyHELM"
        responses = {{ {table} }}
        anchors = 10
        {"" if allow is None else f"allow_missing_content = {str(allow).lower()}"}
        """)


def test_a_partial_bundle_without_text_is_built_and_pushed_only_when_allowed(tmp_path):
    tables = _helm_tables(tmp_path / "responses")
    refused, allowed = _config(tmp_path / "c1", tables), _config(tmp_path / "c2", tables, allow=True)
    common = ["--release-version", "1.0.0", "--push", "--quiet", "--no-previous"]
    with HubServer() as hub:
        env = hub.client_env(tmp_path / "hf_home")
        proc = run_in_client(env, hub_clients.release_cli,
                             [["--config", str(refused), "--out", str(tmp_path / "o1"), *common],
                              ["--config", str(allowed), "--out", str(tmp_path / "o2"), *common]], fake=False)
        assert proc.result["codes"] == [1, 0], proc.stderr[-3000:]
        assert "not publishing: the rows of tinyHELM (config(s) gsm, mmlu) carry item ids only" in proc.stderr
        assert "allow_missing_content = true" in proc.stderr
        assert hub.refs("tinyOrg/tinyHELM")["tags"].keys() == {"v1.0.0"}  # only the allowed run published
    folder = tmp_path / "o2" / "tinyHELM"
    man = read_manifest(folder)
    assert list(man["configs"]) == ["gsm", "mmlu"] and man["content_missing"] == ["gsm", "mmlu"]
    assert man["configs_absent"] == ["openbookqa", "med_qa", "legalbench", "math_chain_of_thought", "narrative_qa",
                                     "natural_qa_closedbook", "natural_qa_openbook_longans", "wmt_14"]
    rows = pd.read_parquet(folder / "gsm" / "test-00000-of-00001.parquet")
    assert list(rows.columns) == ["item_id", "instance_id"] and len(rows) == 10
    assert all(i == f"gsm.{j}" for i, j in zip(rows["item_id"], rows["instance_id"]))  # the estimator's ids
    card = (folder / "README.md").read_text()
    assert "This build holds 2 of the 10 configs" in card and "The examples' text is not included" in card
    est = json.loads((folder / "estimator.json").read_text())
    assert est["scenarios"] == ["gsm", "mmlu"] and len(est["anchor_ids"]) == 20  # one joint fit, per-scenario estimates


def test_release_config_spec_and_per_config_responses_are_checked(tmp_path):
    spec = ROOT / "specs" / "tinyWMDP_bio.toml"
    (tmp_path / "r.parquet").write_bytes(b"")

    def load(body):
        return load_config(write_config(tmp_path, "[release]\norg = \"o\"\n\n[[benchmark]]\n" + body))

    entry = load(f'spec = "{spec}"\nresponses = "r.parquet"\n').benchmarks[0]
    assert entry.name == "tinyWMDP_bio" and entry.build_target() is entry.spec
    with pytest.raises(ConfigError, match="name 'tinyX' differs from the spec's name 'tinyWMDP_bio'"):
        load(f'name = "tinyX"\nspec = "{spec}"\nresponses = "r.parquet"\n')
    with pytest.raises(ConfigError, match="spec file .*nope.toml not found"):
        load('spec = "nope.toml"\nresponses = "r.parquet"\n')
    with pytest.raises(ConfigError, match="unknown tiny benchmark.*give spec ="):
        load('name = "tinyWMDP_bio"\nresponses = "r.parquet"\n')
    with pytest.raises(ConfigError, match=r"responses for unknown config\(s\) \['gsm8k'\]; tinyHELM has: openbookqa"):
        load('name = "tinyHELM"\nresponses = { gsm8k = "r.parquet" }\n')
    with pytest.raises(ConfigError, match="responses per config .* are for bundles; tinyGSM8k has one config"):
        load('name = "tinyGSM8k"\nresponses = { main = "r.parquet" }\n')
    with pytest.raises(ConfigError, match="allow_missing_content must be true or false"):
        load('name = "tinyGSM8k"\nresponses = "r.parquet"\nallow_missing_content = "yes"\n')


@pytest.mark.realdata
@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is absent")
def test_the_main_job_releases_every_real_tiny_benchmark(tmp_path):
    """`python release.py --config release-local.toml --release-version 1.0.0`: seven real tiny benchmarks,
    each validated (every config/split loads with load_dataset), tinyHELM from its five scenarios,
    the Open LLM Leaderboard v2's from its two real matrices (ids only)."""
    from datasets import load_dataset

    out = tmp_path / "release"
    assert release_main(["--config", str(ROOT / "release-local.toml"), "--release-version", "1.0.0", "--out", str(out),
                         "--no-previous", "--quiet"]) == 0
    summary = json.loads((out / "release.json").read_text())["benchmarks"]
    assert list(summary) == ["tinyAlpacaEval", "tinyGSM8k", "tinyHELM", "tinyWMDP_bio", "tinyIFEval",
                             "tinyArcChallengeV2", "tinyOpenLLMLeaderboardV2"]
    # each config's pool split: every item (IFEval's 541 prompts, ARC-Challenge's 1,172 questions)
    assert summary["tinyIFEval"]["validation"]["configs"] == {"default": {"test": 100, "pool": 541}}
    assert summary["tinyOpenLLMLeaderboardV2"]["validation"]["configs"] == {"ifeval": {"test": 100, "pool": 541},
                                                                           "arc_challenge": {"test": 100, "pool": 1172}}
    v2 = read_manifest(out / "tinyOpenLLMLeaderboardV2")
    assert v2["content_missing"] == ["arc_challenge", "ifeval"] and "harness_tasks" not in v2
    assert v2["configs_absent"] == ["bbh", "math_hard", "gpqa", "musr", "mmlu_pro"]
    # HELM Lite's 500, 1,000, 1,000, 437 and 567 instances
    assert summary["tinyHELM"]["validation"]["configs"] == {c: {"test": 100, "pool": n} for c, n in (
        ("openbookqa", 500), ("gsm", 1000), ("med_qa", 1000), ("math_chain_of_thought", 437), ("mmlu", 567))}
    assert summary["tinyGSM8k"]["validation"]["configs"] == {"main": {"test": 100, "train": 7473, "pool": 1319}}
    gsm = load_dataset(str(out / "tinyGSM8k"), "main", cache_dir=str(tmp_path / "cache"))
    # the published tinyGSM8k train split's size, plus the item_id column every split carries now
    assert gsm["train"].data.table.drop_columns(["item_id"]).nbytes == 27_470_490
    assert gsm["test"]["item_id"] == json.loads((out / "tinyGSM8k" / "estimator.json").read_text())["anchor_ids"]
    wmdp = load_dataset(str(out / "tinyWMDP_bio"), split="test", cache_dir=str(tmp_path / "cache"))
    assert wmdp.column_names == ["item_id", "question", "choices", "answer", "input_formatted"]
    assert (out / "tinyWMDP_bio" / "lm_eval" / "tinyWMDP_bio.yaml").is_file()
    assert (out / "tinyWMDP_bio" / "lm_eval" / "tinyWMDP_bio_pool.yaml").is_file()
    pool = load_dataset(str(out / "tinyWMDP_bio"), split="pool", cache_dir=str(tmp_path / "cache"))
    assert pool.num_rows == 1273 and pool.column_names == wmdp.column_names
    assert read_manifest(out / "tinyHELM")["content_missing"] == ["gsm", "math_chain_of_thought", "med_qa", "mmlu",
                                                                  "openbookqa"]
