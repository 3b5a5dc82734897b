"""tinybench_builder.dataset.cards: the card parses with DatasetCard.load and carries the metadata; its sections
(validation table, plot, usage, citations, changelog); the plot is skipped cleanly without
matplotlib; the changelog against a previous version; template overrides."""

from __future__ import annotations

import re

import shutil
import sys

import pytest

from tinybench_builder.dataset import cards
from tinybench_builder.registry.benchmarks import POLO2024_BIBTEX, REGISTRY
from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.layout import CARD_NAME, PLOT_NAME, config_anchor_ids, read_manifest, verify_manifest
from helpers.builds import built


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.getbasetemp() / "builds"


@pytest.mark.parametrize("name", ["tinyMMLU", "tinyOpenLLMLeaderboard"])
def test_card_parses_with_metadata(root, name):
    from huggingface_hub import DatasetCard

    spec = REGISTRY[name]
    folder = built(root, name)
    card = DatasetCard.load(folder / CARD_NAME)
    data = card.data.to_dict()
    assert data["license"] == spec.license
    assert data["task_categories"] == list(spec.task_categories)
    assert data["pretty_name"] == spec.pretty_name
    assert data["size_categories"] == ["n<1K"]
    man = read_manifest(folder)
    assert data["configs"] == [
        {"config_name": c.name,
         "data_files": [{"split": s, "path": man["configs"][c.name]["splits"][s]["path"]}
                        for s in (*c.splits, "pool")]}
        for c in spec.configs
    ]
    text = card.text
    for section in ("## How it was built", "## Validation", "## Usage", "## Changelog", "## Citation"):
        assert section in text
    assert "| scenario | models | random-k |" in text  # report_markdown's table
    assert f"![Estimated vs true scores of held-out models]({PLOT_NAME})" in text
    assert (folder / PLOT_NAME).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    repo, tag = man["repo_id"], man["tag"]
    # rows and estimator from one snapshot (one revision, also offline); never load_dataset(repo, revision=...),
    # which offline serves the newest cached revision
    assert f'load_dataset(path, "{spec.configs[0].name}", split="{spec.configs[0].tiny_split}")' in text
    code = "\n".join(re.findall(r"```python\n(.*?)```", text, flags=re.S))
    assert f'load_dataset("{repo}"' not in code and "version=" in code
    assert f'TinyEstimator.from_hub("{repo}", revision="{tag}")' in text
    assert f'snapshot_download("{repo}", repo_type="dataset", revision="{tag}")' in text
    assert "lm_eval --model hf" in text and spec.configs[0].harness_task in text
    assert "### Adaptive evaluation" in text and "est.adaptive(budget=200, seed=0)" in text
    assert f'load_dataset(path, "{spec.configs[0].name}", split="pool")' in text and "| `adaptive.py` |" in text
    if man.get("harness_tasks"):
        assert f"lm_eval/{man['configs'][spec.configs[0].name]['harness_task']}_pool.yaml" in text
    assert POLO2024_BIBTEX in text and spec.source_citation.strip() in text
    assert "first release" in text


def test_card_without_matplotlib_skips_the_plot(root, tmp_path, monkeypatch):
    folder = tmp_path / "copy"
    shutil.copytree(built(root, "tinyGSM8k"), folder)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # import raises ImportError
    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)
    cards.write_card(folder)
    assert not (folder / PLOT_NAME).exists()
    text = (folder / CARD_NAME).read_text()
    assert "Plot skipped: matplotlib is not installed" in text and PLOT_NAME not in text.split("## Files")[0]
    assert verify_manifest(folder) == []
    assert PLOT_NAME not in read_manifest(folder)["files"]


def test_changelog_against_the_previous_version(root, tmp_path):
    old = built(root, "tinyGSM8k", seed=0)
    new = tmp_path / "new"
    shutil.copytree(built(root, "tinyGSM8k", seed=1), new)
    ch = cards.changelog(cards.CardInputs.from_folder(new), cards.CardInputs.from_folder(old))
    a_old = config_anchor_ids(TinyEstimator.load(old), "gsm8k")
    a_new = config_anchor_ids(TinyEstimator.load(new), "gsm8k")
    entry = ch["anchors"]["main"]
    assert entry["added"] == [a for a in a_new if a not in a_old]
    assert entry["removed"] == [a for a in a_old if a not in a_new]
    assert entry["kept"] == len(set(a_old) & set(a_new))
    assert entry["added"] or entry["removed"]
    gp = next(e for e in ch["errors"] if e["metric"] == "score")
    assert gp["before"] is not None and gp["after"] is not None
    cards.write_card(new, previous=old)  # release engineering re-renders the card with the previous release
    text = (new / CARD_NAME).read_text()
    assert "(previous: 0.0.0)" in text and "anchors kept" in text
    assert "| gsm8k | score MAE |" in text
    if entry["added"]:
        assert f"`{entry['added'][0]}`" in text
    assert verify_manifest(new) == []
    # no previous version: the first-release line
    assert cards.changelog(cards.CardInputs.from_folder(new), None)["previous_version"] is None


def test_template_override(root, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(built(root, "tinyGSM8k"), folder)
    templates = tmp_path / "templates"
    shutil.copytree(cards.TEMPLATES_DIR, templates)
    (templates / "tinyGSM8k.md").write_text(
        '{% extends "tiny_benchmark.md" %}{% block intro %}A custom introduction for {{ pretty_name }}.{% endblock %}'
    )
    card = cards.render_card(cards.CardInputs.from_folder(folder), templates=templates, plot=PLOT_NAME)
    assert "A custom introduction for tinyGSM8k." in card.text
    assert card.data.to_dict()["license"] == "mit"
