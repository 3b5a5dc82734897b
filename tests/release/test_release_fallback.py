"""``[release] fallback``: the config a fresh clone releases when none of the inputs exist."""

from __future__ import annotations

import pytest

from tinybench_builder.release import ConfigError, load_config

MAIN = """[release]
org = "o"
fallback = "example.toml"
[[benchmark]]
name = "tinyGSM8k"
responses = "../shared/gsm.parquet"
content = { test = "../shared/gsm_test.parquet" }
[[benchmark]]
name = "tinyAlpacaEval"
responses = "../shared/alpaca.parquet"
"""
EXAMPLE = """[release]
org = "o"
[[benchmark]]
name = "tinyAlpacaEval"
responses = "ex/alpaca.parquet"
"""


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "repo" / "ex").mkdir(parents=True)
    (tmp_path / "repo" / "main.toml").write_text(MAIN)
    (tmp_path / "repo" / "example.toml").write_text(EXAMPLE)
    (tmp_path / "repo" / "ex" / "alpaca.parquet").write_bytes(b"x")
    return tmp_path / "repo"


def test_all_inputs_present_uses_the_config(repo):
    shared = repo.parent / "shared"
    shared.mkdir()
    for name in ("gsm.parquet", "gsm_test.parquet", "alpaca.parquet"):
        (shared / name).write_bytes(b"x")
    c = load_config(repo / "main.toml")
    assert c.fallback_from is None and [b.name for b in c.benchmarks] == ["tinyGSM8k", "tinyAlpacaEval"]
    assert c.describe_inputs(repo) == "data: ../shared (main.toml)"


def test_no_input_present_releases_the_fallback_and_says_so(repo):
    c = load_config(repo / "main.toml")
    assert c.path == repo / "example.toml" and c.fallback_from == repo / "main.toml"
    assert [b.name for b in c.benchmarks] == ["tinyAlpacaEval"]
    assert c.describe_inputs(repo) == ("data: ex (example.toml), the fallback of main.toml: none of its inputs "
                                       "exist here (nothing under ../shared)")


def test_some_inputs_missing_is_an_error_naming_every_one(repo):
    (repo.parent / "shared").mkdir()
    (repo.parent / "shared" / "alpaca.parquet").write_bytes(b"x")
    with pytest.raises(ConfigError) as err:
        load_config(repo / "main.toml")
    msg = str(err.value)
    assert "benchmark 'tinyGSM8k': responses '../shared/gsm.parquet' not found" in msg
    assert "1 more input(s) missing: " in msg and msg.endswith("gsm_test.parquet")


def test_without_fallback_every_missing_input_is_named(repo):
    (repo / "main.toml").write_text(MAIN.replace('fallback = "example.toml"\n', ""))
    with pytest.raises(ConfigError, match=r"responses '../shared/gsm.parquet' not found .*2 more input\(s\) missing"):
        load_config(repo / "main.toml")


def test_a_fallback_with_missing_inputs_is_an_error(repo):
    (repo / "ex" / "alpaca.parquet").unlink()
    with pytest.raises(ConfigError, match="the fallback config has missing inputs too: .*ex/alpaca.parquet"):
        load_config(repo / "main.toml")


@pytest.mark.parametrize("value, message", [
    ('"nope.toml"', "its fallback config .*nope.toml is not there either"),
    ('"main.toml"', "fallback names the config itself"),
    ("3", "fallback must be the path of another release config"),
])
def test_bad_fallbacks(repo, value, message):
    (repo / "main.toml").write_text(MAIN.replace('"example.toml"', value))
    with pytest.raises(ConfigError, match=message):
        load_config(repo / "main.toml")


def test_unchecked_loading_ignores_the_fallback(repo):
    c = load_config(repo / "main.toml", check_paths=False)
    assert c.path == repo / "main.toml" and c.fallback == repo / "example.toml"


def test_an_input_read_by_several_benchmarks_counts_once(repo):
    """A bundle and its single benchmarks read the same files: still "none of the inputs exist"."""
    (repo / "main.toml").write_text(MAIN + '[[benchmark]]\nname = "tinyOpenLLMLeaderboardV2"\n'
                                           'responses = { ifeval = "../shared/alpaca.parquet" }\n')
    c = load_config(repo / "main.toml")
    assert c.fallback_from == repo / "main.toml"
    assert sorted(p.name for p in c.fallback_missing) == ["alpaca.parquet", "gsm.parquet", "gsm_test.parquet"]
