"""The registered benchmarks are spec files (tinybench_builder/registry/registered/*.toml) read by the users' loader.

``tests/data/registry_literals.json`` is the registry as the Python literals of
``registry/benchmarks.py`` and ``registry/leaderboard_v2.py`` gave it (commit 4b74d60, the last one
with the literals), written once by :func:`encode` below: every type (tuple, list, dict order,
int or float) and every value. The entries read from the files must be the same, so that every
build is byte for byte what it was.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from pathlib import Path

import pytest

from tinybench_builder.registry import REGISTRY, SpecError, load_spec_file, registered_spec_path, spec_from_mapping
from tinybench_builder.registry import specs
from tinybench_builder.registry.citations import bibliography
from tinybench_builder.registry.leaderboard_v2 import BBH_CHANCE, MUSR_CHANCE

ROOT = Path(__file__).resolve().parents[2]
LITERALS = Path(__file__).resolve().parents[1] / "data" / "registry_literals.json"


def encode(value):
    """A JSON value that keeps the Python types apart: tuples, dict order, ints and floats."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {type(value).__name__: {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {"dict": [[encode(k), encode(v)] for k, v in value.items()]}
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    raise TypeError(f"cannot encode {type(value)}")


def test_every_entry_read_from_its_file_equals_the_python_literal():
    frozen = json.loads(LITERALS.read_text(encoding="utf-8"))["registry"]
    assert [name for name, _ in frozen] == list(REGISTRY)  # the same entries, in the same order
    for name, entry in frozen:
        assert encode(REGISTRY[name]) == entry, name


def test_the_registered_files_are_the_registry():
    files = sorted(p.stem for p in specs.REGISTERED_DIR.glob("*.toml"))
    assert files == sorted([*REGISTRY, "index"])
    assert specs.registered_names() == tuple(REGISTRY)
    assert len(REGISTRY) == 17


@pytest.fixture
def registered_copy(tmp_path, monkeypatch):
    """A copy of the registered files that the loader reads instead (its cache emptied before and after)."""
    folder = tmp_path / "registered"
    shutil.copytree(specs.REGISTERED_DIR, folder)
    monkeypatch.setattr(specs, "REGISTERED_DIR", folder)
    specs._registered_files.cache_clear()
    yield folder
    specs._registered_files.cache_clear()


def _load_with(folder: Path, name: str, old: str, new: str):
    """The registered benchmarks with ``old`` replaced by ``new`` in ``name``'s file (restored after)."""
    path = folder / f"{name}.toml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    specs._registered_files.cache_clear()
    try:
        return specs.load_registered()
    finally:
        path.write_text(text, encoding="utf-8")
        specs._registered_files.cache_clear()


@pytest.mark.parametrize("old, new, message", [
    ("num_fewshot = 5", "num_fewshot = -5", r"tinyMMLU\.toml: \[configs\.all\]: num_fewshot must be an integer"),
    ('renderer = "mmlu"', 'renderer = "mmlu2"', r"tinyMMLU\.toml: \[configs\.all\]: unknown renderer 'mmlu2'"),
    ('split = "test"', 'split = "../test"', r"tinyMMLU\.toml: \[configs\.all\]: split must be a plain name"),
    ('fewshot_split = "dev"', 'fewshot_split = "train"', r"tinyMMLU\.toml: .*few-shot split 'train' is not a full split"),
    ('metric = "acc_norm"', 'metrics = "acc_norm"', r"tinyMMLU\.toml: \[configs\.all\]: \[harness\]: unknown key"),
    ('"hendryckstest2021"', '"hendryckstest2022"', r"tinyMMLU\.toml: citation: \['hendryckstest2022'\] not in"),
])
def test_a_registered_file_goes_through_the_users_checks(registered_copy, old, new, message):
    """The same loader, the same checks, one SpecError naming the file and the key."""
    with pytest.raises(SpecError, match=message):
        _load_with(registered_copy, "tinyMMLU", old, new)


def test_every_file_is_listed_in_the_index_and_named_after_its_benchmark(registered_copy):
    (registered_copy / "tinyExtra.toml").write_text('name = "tinyExtra"\n', encoding="utf-8")
    with pytest.raises(SpecError, match=r"index\.toml: .*not listed: \['tinyExtra'\]"):
        specs.load_registered()
    (registered_copy / "tinyExtra.toml").unlink()
    with pytest.raises(SpecError, match=r"tinyGSM8k\.toml: name must be the file's name"):
        _load_with(registered_copy, "tinyGSM8k", 'name = "tinyGSM8k"', 'name = "tinyGSM8K"')
    with pytest.raises(SpecError, match=r"tinyOpenLLMLeaderboard\.toml: \[configs\.mmlu\]: from = 'tinyMMLU/x'"):
        _load_with(registered_copy, "tinyOpenLLMLeaderboard", 'from = "tinyMMLU"', 'from = "tinyMMLU/x"')
    assert len(_load_with(registered_copy, "tinyGSM8k", "x", "x")) == 17  # restored


def test_the_chance_tables_of_the_files_are_the_leaderboards():
    assert REGISTRY["tinyBBH"].configs[0].chance == BBH_CHANCE
    assert list(REGISTRY["tinyBBH"].configs[0].chance) == list(BBH_CHANCE)  # the order normalization() uses
    assert REGISTRY["tinyMuSR"].configs[0].chance == MUSR_CHANCE


def test_citations_are_keys_of_the_shipped_bibliography():
    bib = bibliography()
    used = set()
    for path in specs.REGISTERED_DIR.glob("tiny*.toml"):
        keys = specs._read_toml(path)["citation"]
        assert isinstance(keys, list) and set(keys) <= set(bib), path.name
        used |= set(keys)
    assert set(bib) - used == {"polo2024tinybenchmarks"}  # every entry is cited (tinyBenchmarks by every card)
    base = {"name": "tinyX", "license": "mit", "item_id_column": "item_id"}
    assert spec_from_mapping({**base, "citation": ["hendryckstest2021"]}).source_citation == bib["hendryckstest2021"]
    with pytest.raises(SpecError, match=r"citation: \['nope'\] not in citations\.bib"):
        spec_from_mapping({**base, "citation": ["nope"]}, "x.toml")


# ------------------------------------------------------------------ what a user's spec can do with the new keys
BASE = {"name": "tinyMine", "license": "mit", "citation": "@misc{mine, title={Mine}}"}


def test_a_users_bundle_copies_registered_configs():
    """A user's bundle of two registered configs, the lm-eval tasks renamed (lm-eval has tinyGSM8k and tinyMMLU)."""
    spec = spec_from_mapping({**BASE, "configs": {
        "gsm8k": {"from": "tinyGSM8k", "harness": {"task": "mine_gsm8k"}},
        "mmlu": {"from": "tinyMMLU", "harness": {"task": "mine_mmlu"}, "num_fewshot": 0}}}, "mine.toml")
    assert spec.joint and [c.name for c in spec.configs] == ["gsm8k", "mmlu"]
    gsm = REGISTRY["tinyGSM8k"].configs[0]
    assert spec.configs[0] == dataclasses.replace(gsm, name="gsm8k", harness_task="mine_gsm8k")
    assert spec.configs[1].num_fewshot == 0 and spec.configs[1].harness_metric == "acc_norm"  # the rest copied
    assert spec.custom is not None  # a user's spec travels in the manifest
    with pytest.raises(SpecError, match="lm-evaluation-harness's own tasks"):
        spec_from_mapping({**BASE, "configs": {"gsm8k": {"from": "tinyGSM8k"}}}, "mine.toml")
    with pytest.raises(SpecError, match=r"tinyHELM has 10 configs; name one: \"tinyHELM/openbookqa\""):
        spec_from_mapping({**BASE, "configs": {"x": {"from": "tinyHELM"}}}, "mine.toml")
    with pytest.raises(SpecError, match="that config is a copy itself"):
        spec_from_mapping({**BASE, "configs": {"x": {"from": "tinyOpenLLMLeaderboard/mmlu"}}}, "mine.toml")


def test_a_users_spec_with_several_configs_and_defaults():
    spec = spec_from_mapping({**BASE, "split": "eval", "prompt": "{{ q }}", "configs": {
        "easy": {"harness": {"doc_to_choice": ["A", "B"], "doc_to_target": "answer"}},
        "hard": {"split": "test", "subscenario_weighting": "size", "chance": 0.25}}}, "mine.toml")
    easy, hard = spec.configs
    assert (easy.tiny_split, hard.tiny_split) == ("eval", "test")  # a default, and a table's own key
    assert (easy.scenario, easy.source_task, hard.scenario) == ("easy", "easy", "hard")
    assert easy.harness_task == "tinyMine_easy" and easy.renderer == hard.renderer == "template"
    assert hard.chance == 0.25 and hard.subscenario_weighting == "size"


def test_a_users_spec_may_name_a_registered_renderer():
    spec = spec_from_mapping({**BASE, "renderer": "mmlu", "columns": ["question", "subject", "choices", "answer"],
                              "full_splits": ["dev"], "num_fewshot": 5, "fewshot_split": "dev",
                              "fewshot_group": "subject", "harness": {"task": "mine", "metric": "acc"}})
    c = spec.configs[0]
    assert c.renderer == "mmlu" and c.columns == ("item_id", "question", "subject", "choices", "answer",
                                                  "input_formatted")
    assert c.harness_config is None and c.harness_metric == "acc"  # the renderer's lm-eval task
    with pytest.raises(SpecError, match="not both"):
        spec_from_mapping({**BASE, "renderer": "mmlu", "prompt": "{{ q }}"})
    with pytest.raises(SpecError, match="for the registered benchmarks only"):
        spec_from_mapping({**BASE, "original_bench": "mmlu"})


def test_every_key_is_documented_in_the_docstring_and_the_guide():
    keys = specs.BENCHMARK_KEYS | specs.CONFIG_KEYS | specs.HARNESS_KEYS | {"config", "from", "license"}
    guide = (ROOT / "docs" / "BUILD.md").read_text(encoding="utf-8")
    for key in sorted(keys):
        assert f"``{key}``" in specs.__doc__, key
        assert f"`{key}`" in guide, key


def test_the_users_example_spec_still_loads_as_before():
    spec = load_spec_file(ROOT / "specs" / "tinyWMDP_bio.toml")
    c = spec.configs[0]
    assert (c.name, c.scenario, c.tiny_split, c.columns, c.content_from) == ("default", "wmdp_bio", "test", (), "local")
    assert (c.harness_task, c.harness_metric, c.renderer) == ("tinyWMDP_bio", "acc", "template")


# ------------------------------------------------------------------ a registered file is a spec to copy
_REGISTERED_ONLY_LINE = re.compile(r"^(original_bench|original_scenario|legacy_scenarios) = .*\n", re.M)


def _copied(name: str) -> tuple[str, dict[str, str]]:
    """``name``'s registered file with the edits the guide names (docs/BUILD.md, *Starting from a
    registered benchmark*), as a user makes them in an editor; and the task each config gets."""
    text = registered_spec_path(name).read_text(encoding="utf-8")
    text = text.replace(f'name = "{name}"', f'name = "mine_{name}"', 1)
    text = _REGISTERED_ONLY_LINE.sub("", text)
    tasks = {c.name: f"mine_{c.harness_task}" if c.harness_task else None for c in REGISTRY[name].configs}
    text = re.sub(r'^task = "(\w+)"$', r'task = "mine_\1"', text, flags=re.M)
    # a table copied with `from` has no [harness] table in the file: it gets a task line
    text = re.sub(r'^(\[configs\.(\w+)\]\nfrom = "\w+")$', lambda m: f'{m[1]}\nharness = {{ task = "{tasks[m[2]]}" }}',
                  text, flags=re.M)
    return text, tasks


@pytest.mark.parametrize("name", list(REGISTRY))
def test_a_copy_of_a_registered_file_is_a_users_spec(tmp_path, name):
    """Every registered file, copied and given the guide's three edits, loads as your spec: the same
    configs (rows, prompts, fit, task settings) as the registered benchmark but for its names."""
    text, tasks = _copied(name)
    path = tmp_path / f"mine_{name}.toml"
    path.write_text(text, encoding="utf-8")
    mine, registered = load_spec_file(path), REGISTRY[name]
    assert mine.custom is not None and mine.name == f"mine_{name}" and mine.original_bench is None
    names_only = {"harness_task": None, "original_scenario": None, "legacy_scenarios": ()}
    for ours, theirs in zip(mine.configs, registered.configs, strict=True):
        assert ours.harness_task == tasks[theirs.name], theirs.name
        from_copy = "from" in specs._read_toml(path).get("configs", {}).get(theirs.name, {})
        keep = {"original_scenario": theirs.original_scenario, "legacy_scenarios": theirs.legacy_scenarios}
        assert dataclasses.replace(ours, **names_only) == dataclasses.replace(theirs, **names_only), theirs.name
        if not from_copy:  # a `from` keeps the registered config's original names: not the file's to write
            keep = {}
        assert all(getattr(ours, k) == v for k, v in keep.items()), theirs.name
    assert dataclasses.replace(mine, name=name, original_bench=registered.original_bench, custom=None,
                               configs=registered.configs) == registered


def test_an_unedited_copy_says_which_line_to_delete(tmp_path):
    text = registered_spec_path("tinyGSM8k").read_text(encoding="utf-8").replace(
        'name = "tinyGSM8k"', 'name = "mine"', 1)
    (tmp_path / "mine.toml").write_text(text, encoding="utf-8")
    with pytest.raises(SpecError, match=r"mine\.toml: original_bench: .*in a copy of a registered file: delete the "
                                        r"line"):
        load_spec_file(tmp_path / "mine.toml")
    with pytest.raises(SpecError, match=r"'tinyNope' is not a registered tiny benchmark \(registered: tinyMMLU, "):
        registered_spec_path("tinyNope")
    assert registered_spec_path("tinyHELM") == specs.REGISTERED_DIR / "tinyHELM.toml"


@pytest.mark.slow  # two builds of each
@pytest.mark.parametrize("name", ["tinyGSM8k", "tinyOpenLLMLeaderboard"])
def test_a_copy_builds_the_registered_rows_and_fit(tmp_path_factory, name):
    """Built from the same inputs, the copy (the guide's edits) has the registered build's rows, IRT
    parameters and validation byte for byte; its estimator differs by the benchmark's names only."""
    from helpers.builds import all_bytes, anchors_for, built, fast, write_fixture
    from tinybench_builder.dataset.build import build_benchmark

    registered = all_bytes(built(tmp_path_factory.getbasetemp() / "builds", name))
    folder = tmp_path_factory.mktemp("copy")
    responses, content = write_fixture(name, folder / "inputs")
    text, tasks = _copied(name)
    (folder / "mine.toml").write_text(text, encoding="utf-8")
    mine = all_bytes(build_benchmark(load_spec_file(folder / "mine.toml"), responses, content,
                                     fast(anchors=anchors_for(name), seed=0), out=folder / "out"))
    data = [p for p in registered if p.endswith(".parquet")]
    assert len(data) >= 3 * len(REGISTRY[name].configs)  # the tiny split, the pool, the full splits
    for path in (*data, "irt_parameters.npz", "validation.json", "validation.png", "estimator.py", "adaptive.py"):
        assert mine[path] == registered[path], path
    ours, theirs = (json.loads(files["estimator.json"]) for files in (mine, registered))
    names = ("benchmark", "original_bench", "original_scenarios")  # the original package's names: deleted
    assert [ours["metadata"].pop(k, None) for k in names][:2] == [f"mine_{name}", None]
    assert [theirs["metadata"].pop(k) for k in names][:2] == [name, REGISTRY[name].original_bench]
    assert ours == theirs
    assert {f"lm_eval/{t}.yaml" for t in tasks.values()} <= set(mine)
