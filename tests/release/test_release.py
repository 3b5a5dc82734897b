"""Releases (tinybench_builder.release.publish, tinybench_builder.release.config, the `release` command / release.py): config
parsing, CLI errors, build + validate without --push, and full releases with --push against the
loopback Hub (in a fresh process: `helpers.client.run_in_client`).

Most tests build with `helpers.folders.fake_build` (the build_benchmark contract, tiny folders,
patched in for `tinybench_builder.release.publish.build_benchmark`); `test_end_to_end_real_build` runs the real
builder through the release.py script.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tinybench_builder.release import publish
from tinybench_builder.cli.main import main as builder_main
from tinybench_builder.cli.main import release_main
from helpers import hub_clients
from helpers.builds import ROOT, SHARED
from helpers.client import run_in_client
from helpers.folders import DATA, fake_build, fake_config, write_config
from helpers.hub import HubServer

RELEASE_PY = ROOT / "release.py"


@pytest.fixture
def fake(monkeypatch):
    """The release builds with fake_build (the build contract, a fraction of a second per folder)."""
    monkeypatch.setattr(publish, "build_benchmark", fake_build)


# --------------------------------------------------------------------------- config


def test_load_config_resolves_paths_against_the_config_folder(tmp_path, monkeypatch):
    from tinybench_builder.release.config import load_config

    cfg_dir = tmp_path / "cfg"
    (cfg_dir / "data").mkdir(parents=True)
    (cfg_dir / "data" / "r1.parquet").write_bytes(b"x")
    (cfg_dir / "data" / "r2").mkdir()
    (cfg_dir / "data" / "test.parquet").write_bytes(b"x")
    write_config(cfg_dir, """\
        [release]
        org = "tinyBenchmarks"
        private = true

        [[benchmark]]
        name = "tinyMMLU"
        responses = ["data/r1.parquet", "data/r2"]
        content = { test = "data/test.parquet", dev = "cais/mmlu" }
        anchors = 50
        seed = 3

        [[benchmark]]
        name = "tinyAlpacaEval"
        responses = "data/r1.parquet"
        content = { test = "hub:tatsu-lab/alpaca_eval" }
        repo = "someone/tinyAE"
        """)
    monkeypatch.chdir(tmp_path)  # not the config's folder
    c = load_config("cfg/release.toml")
    assert c.org == "tinyBenchmarks" and c.private is True
    mmlu, ae = c.benchmarks
    assert mmlu.responses == (cfg_dir / "data" / "r1.parquet", cfg_dir / "data" / "r2")
    assert mmlu.content == {"test": str(cfg_dir / "data" / "test.parquet"), "dev": "cais/mmlu"}
    assert (mmlu.anchors, mmlu.seed, mmlu.repo_id(c.org)) == (50, 3, "tinyBenchmarks/tinyMMLU")
    assert mmlu.responses_arg() == [str(cfg_dir / "data" / "r1.parquet"), str(cfg_dir / "data" / "r2")]
    opts = mmlu.build_options(c.org, "v1.2.0")
    assert (opts.anchors, opts.seed, opts.version, opts.repo_id, opts.tag) == (50, 3, "1.2.0", "tinyBenchmarks/tinyMMLU",
                                                                               "v1.2.0")
    assert ae.responses == (cfg_dir / "data" / "r1.parquet",) and ae.responses_arg() == str(ae.responses[0])
    assert ae.content == {"test": "hub:tatsu-lab/alpaca_eval"} and ae.anchors is None
    assert ae.repo_id(c.org) == "someone/tinyAE"
    assert [b.name for b in c.select(["tinyAlpacaEval"]).benchmarks] == ["tinyAlpacaEval"]


BAD_CONFIGS = {
    "bad_toml": ('[release\norg = "x"\n', "not valid TOML"),
    "no_release": ('[[benchmark]]\nname = "tinyMMLU"\nresponses = "r"\n', "missing [release]"),
    "bad_org": ('[release]\norg = "a b"\n', "org must be"),
    "unknown_key": ('[release]\norg = "o"\nendpoint = "x"\n', "unknown key(s) in [release]"),
    "no_benchmarks": ('[release]\norg = "o"\n', "nothing to release"),
    "unknown_benchmark": ('[release]\norg = "o"\n[[benchmark]]\nname = "tinyNope"\nresponses = "r.parquet"\n',
                          "unknown tiny benchmark; registered:"),
    "benchmark_typo": ('[release]\norg = "o"\n[[benchmark]]\nname = "tinyMMLU"\nresponse = "r.parquet"\n',
                       "unknown key(s) ['response']"),
    "missing_responses": ('[release]\norg = "o"\n[[benchmark]]\nname = "tinyMMLU"\nresponses = "nope.parquet"\n',
                          "responses 'nope.parquet' not found"),
    "missing_content": (('[release]\norg = "o"\n[[benchmark]]\nname = "tinyMMLU"\nresponses = "r.parquet"\n'
                         'content = { test = "./nope.parquet" }\n'), "content for split 'test'"),
    "bad_anchors": ('[release]\norg = "o"\n[[benchmark]]\nname = "tinyMMLU"\nresponses = "r.parquet"\nanchors = 0\n',
                    "anchors must be a positive integer"),
    "twice": ('[release]\norg = "o"\n' + '[[benchmark]]\nname = "tinyMMLU"\nresponses = "r.parquet"\n' * 2, "listed twice"),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_bad_configs_exit_2_with_a_message(case, tmp_path, capsys, fake):
    body, message = BAD_CONFIGS[case]
    (tmp_path / "r.parquet").write_bytes(b"x")
    cfg = tmp_path / "release.toml"
    cfg.write_text(body)
    assert release_main(["--config", str(cfg), "--release-version", "1.0.0", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow  # tens of seconds (pytest --durations)
def test_release_script_help_and_errors_without_traceback(tmp_path):
    """The real script, in a fresh process: --help, and a bad version (exit 2, one line, no traceback)."""
    cfg = fake_config(tmp_path)

    def run(*args):
        return subprocess.run([sys.executable, str(RELEASE_PY), *args], capture_output=True, text=True, timeout=60,
                              cwd=tmp_path)

    h = run("--help")
    assert h.returncode == 0 and "--push" in h.stdout and "HF_ENDPOINT" in h.stdout and "docs/RELEASE.md" in h.stdout
    assert h.stdout.startswith("usage: release.py ")
    p = run("--config", str(cfg), "--release-version", "1.0")
    assert p.returncode == 2 and "invalid version '1.0'" in p.stderr and "Traceback" not in p.stderr, p.stderr


@pytest.mark.parametrize("args, message", [
    (["--release-version", "v1.0.0-rc1"], "invalid version"),
    (["--config", "nope.toml", "--release-version", "1.0.0"], "not found"),
    (["--release-version", "1.0.0", "--only", "tinyMMLU"], "--only tinyMMLU: not in"),
])
def test_cli_errors_exit_2_with_one_line(args, message, tmp_path, capsys, monkeypatch):
    cfg = fake_config(tmp_path)
    monkeypatch.chdir(tmp_path)
    argv = args if "--config" in args else ["--config", str(cfg), *args]
    assert release_main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1, err
    with pytest.raises(SystemExit) as exc:  # argparse usage error
        release_main(["--release-version", "1.0.0"])
    assert exc.value.code == 2 and "--config" in capsys.readouterr().err


def test_release_subcommand_is_release_py(capsys):
    """`tinybench-builder release` / `python -m tinybench_builder release` and release.py are one command."""
    with pytest.raises(SystemExit):
        builder_main(["release", "--help"])
    sub = capsys.readouterr().out
    with pytest.raises(SystemExit):
        release_main(["--help"])
    script = capsys.readouterr().out
    body = lambda text: text[text.index("\n\n"):]  # noqa: E731 - after the usage lines
    assert body(sub) == body(script) and "--push" in sub


def test_versions_and_previous_tag_selection():
    from tinybench_builder.release.config import ConfigError, latest_release_below, parse_version, version_tag

    assert parse_version("1.2.3") == (1, 2, 3) and parse_version("v0.10.0") == (0, 10, 0)
    assert version_tag("1.0.0") == "v1.0.0"
    for bad in ("1.0", "1.0.0.0", "01.0.0", "1.0.0-rc1", "latest", "", "1.x.0"):
        with pytest.raises(ConfigError, match="invalid version"):
            parse_version(bad)
    tags = ["v1.0.0", "v1.2.0", "v1.10.0", "v2.0.0", "nightly", "v1.1.0-rc1", "1.5.0"]
    assert latest_release_below(tags, "1.10.0") == "v1.2.0"
    assert latest_release_below(tags, "1.11.0") == "v1.10.0"
    assert latest_release_below(tags, "3.0.0") == "v2.0.0"
    assert latest_release_below(tags, "1.0.0") is None
    assert latest_release_below([], "1.0.0") is None


def test_repository_configs_cover_the_registry():
    """release.toml lists every registered tiny benchmark (when you register one, add its sources)."""
    from tinybench_builder.registry.benchmarks import REGISTRY
    from tinybench_builder.release.config import load_config

    full = load_config(ROOT / "release.toml", check_paths=False)
    assert full.org == "tinyBenchmarks"
    assert sorted(b.name for b in full.benchmarks) == sorted(REGISTRY), "release.toml must list every registered benchmark"
    local = load_config(ROOT / "release-local.toml", check_paths=SHARED.is_dir())
    assert [b.name for b in local.benchmarks] == ["tinyAlpacaEval", "tinyGSM8k", "tinyHELM", "tinyWMDP_bio", "tinyIFEval",
                                                  "tinyArcChallengeV2", "tinyOpenLLMLeaderboardV2"]
    helm, wmdp, *v2 = local.benchmarks[2:]
    assert sorted(helm.responses_by_config) == ["gsm", "math_chain_of_thought", "med_qa", "mmlu", "openbookqa"]
    assert helm.allow_missing_content and not wmdp.allow_missing_content
    assert all(b.allow_missing_content for b in v2)  # the v2 matrices carry no documents
    assert sorted(v2[2].responses_by_config) == ["arc_challenge", "ifeval"]
    assert wmdp.spec is not None and wmdp.spec.configs[0].harness_task == "tinyWMDP_bio"
    if SHARED.is_dir():
        assert local.benchmarks[0].responses == (SHARED / "responses" / "alpaca_eval_2.parquet",)


# --------------------------------------------------------------------------- without --push


def test_build_and_validate_without_push(tmp_path, capsys, monkeypatch, fake):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    cfg = fake_config(tmp_path / "cfg", options={"extra": {"notes/readme.txt": "hello\n"}})
    out = tmp_path / "out"
    args = ["--config", str(cfg), "--release-version", "1.0.0", "--out", str(out), "--no-previous", "--quiet"]
    assert release_main(args) == 0
    captured = capsys.readouterr()
    assert "not published" in captured.out and "tinyOrg/tinyAlpacaEval" in captured.out
    folder = out / "tinyAlpacaEval"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["version"] == "1.0.0" and manifest["tag"] == "v1.0.0" and manifest["repo_id"] == "tinyOrg/tinyAlpacaEval"
    assert manifest["content"] == {"test": "tatsu-lab/alpaca_eval"}
    summary = json.loads((out / "release.json").read_text())
    assert summary["tag"] == "v1.0.0"
    b = summary["benchmarks"]["tinyAlpacaEval"]
    assert b["validation"]["configs"] == {"default": {"test": 5}} and b["validation"]["anchors"] == 5
    assert "published" not in b
    # a second run replaces the earlier build (atomically: the build swaps its new folder in)
    first = (folder / "manifest.json").read_bytes()
    assert release_main(args) == 0
    assert (folder / "manifest.json").read_bytes() == first
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]  # no temporary folder left
    # ... but not once someone put a file of their own in it: that file is never deleted
    (folder / "stale.txt").write_text("my notes")
    assert release_main(args) == 1
    assert "stale.txt" in capsys.readouterr().err and (folder / "stale.txt").read_text() == "my notes"


def test_build_failure_and_foreign_out_folder(tmp_path, capsys, fake):
    cfg = fake_config(tmp_path / "cfg", options={"fail": "no scores for task 'x'"})
    out = tmp_path / "out"
    assert release_main(["--config", str(cfg), "--release-version", "1.0.0", "--out", str(out), "--no-previous", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "error: building tinyAlpacaEval failed: ValueError: no scores for task 'x'" in err and "Traceback" not in err

    cfg = fake_config(tmp_path / "cfg2")
    (out / "tinyAlpacaEval").mkdir(parents=True, exist_ok=True)
    (out / "tinyAlpacaEval" / "precious.txt").write_text("not a build")
    assert release_main(["--config", str(cfg), "--release-version", "1.0.0", "--out", str(out), "--no-previous", "--quiet"]) == 1
    assert "is not a tiny-benchmark build folder" in capsys.readouterr().err
    assert (out / "tinyAlpacaEval" / "precious.txt").exists()


def test_an_interrupted_build_keeps_the_previous_one(tmp_path, monkeypatch, fake):
    """A build that fails midway leaves the earlier build in place (the release deletes nothing itself)."""
    monkeypatch.delenv("HF_TOKEN", raising=False)
    cfg = fake_config(tmp_path / "cfg")
    out = tmp_path / "out"
    args = ["--config", str(cfg), "--release-version", "1.0.0", "--out", str(out), "--no-previous", "--quiet"]
    assert release_main(args) == 0
    before = {p.relative_to(out).as_posix(): p.read_bytes() for p in (out / "tinyAlpacaEval").rglob("*") if p.is_file()}

    def dies_while_writing(*a, **kw):
        from tinybench_builder import layout

        with layout.staging(kw["out"]) as tmp:
            (tmp / "half.txt").write_text("half written")
            raise KeyboardInterrupt

    monkeypatch.setattr(publish, "build_benchmark", dies_while_writing)
    assert release_main(args) == 130
    after = {p.relative_to(out).as_posix(): p.read_bytes() for p in (out / "tinyAlpacaEval").rglob("*") if p.is_file()}
    assert after == before
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]


# --------------------------------------------------------------------------- with --push


def _all_text(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


@pytest.mark.slow  # tens of seconds (pytest --durations)
def test_push_releases_previous_changelog_idempotence_and_no_token_leak(tmp_path):
    token = "hf_DISTINCTIVE_release_token_4f9a2c71e0"
    cfg = fake_config(tmp_path / "cfg", seed=1)
    # the same seed: the same anchors (a minor version must keep them: the versioning rule)
    leak_cfg = fake_config(tmp_path / "leak", seed=1, options={"extra": {"leak.txt": f"token={token}\n"}})
    out1, out2, out3, out_leak = (tmp_path / n for n in ("out1", "out2", "out3", "out_leak"))
    common = ["--config", str(cfg), "--push", "--quiet"]
    runs = [
        common + ["--release-version", "1.0.0", "--out", str(out1)],
        common + ["--release-version", "1.1.0", "--out", str(out2)],
        common + ["--release-version", "1.1.0", "--out", str(out3)],  # identical re-run
        ["--config", str(leak_cfg), "--push", "--quiet", "--release-version", "1.2.0", "--out", str(out_leak)],
    ]
    with HubServer(token=token) as hub:
        env = hub.client_env(tmp_path / "hf_home", token=token)
        proc = run_in_client(env, hub_clients.release_cli, runs, cwd=tmp_path)
        codes = proc.result["codes"]
        assert codes == [0, 0, 0, 1], proc.stdout + proc.stderr[-3000:]
        repo_id = "tinyOrg/tinyAlpacaEval"
        refs = hub.refs(repo_id)
        s1 = json.loads((out1 / "release.json").read_text())["benchmarks"]["tinyAlpacaEval"]
        s2 = json.loads((out2 / "release.json").read_text())["benchmarks"]["tinyAlpacaEval"]
        s3 = json.loads((out3 / "release.json").read_text())["benchmarks"]["tinyAlpacaEval"]
        assert s1["published"]["action"] == "committed" and s2["published"]["action"] == "committed"
        assert s3["published"] == {**s2["published"], "action": "unchanged"}
        assert refs["tags"] == {"v1.0.0": s1["published"]["commit"], "v1.1.0": s2["published"]["commit"]}
        assert refs["branches"]["main"] == s2["published"]["commit"]
        assert len(hub.history(repo_id)) == 3  # the Hub's initial commit + one per version
        # v1.1.0 was built against the fetched v1.0.0: its changelog says so
        assert s1["previous"] is None and s2["previous"] == "v1.0.0" and s3["previous"] == "v1.0.0"
        readme = hub.files(repo_id, "v1.1.0")["README.md"].decode()
        assert "Previous release: v1.0.0." in readme
        assert hub.files(repo_id, "v1.0.0")[DATA] == (out1 / "tinyAlpacaEval" / DATA).read_bytes()
        # the leaking build was refused before anything was sent
        assert "leak.txt contains the Hub token; refusing to publish it" in proc.stderr
        assert "v1.2.0" not in refs["tags"]
        # the token was used ...
        assert hub.seen_tokens == {token}
    # ... and never printed, logged or written (outside the deliberately leaking build)
    assert token not in proc.stdout and token not in proc.stderr
    for out in (out1, out2, out3):
        assert token.encode() not in _all_text(out)
    assert (out_leak / "tinyAlpacaEval" / "leak.txt").exists()
    assert token.encode() not in (out_leak / "release.json").read_bytes() if (out_leak / "release.json").exists() else True


def test_push_needs_a_token(tmp_path, monkeypatch, capsys, fake):
    import huggingface_hub.constants

    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC_RESOURCE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_TOKEN_PATH", str(tmp_path / "no-saved-token"))
    cfg = fake_config(tmp_path / "cfg")
    assert release_main(["--config", str(cfg), "--release-version", "1.0.0", "--push", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "--push needs a Hub token" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()  # refused before building anything


# --------------------------------------------------------------------------- the real builder


@pytest.mark.slow
def test_end_to_end_real_build(tmp_path):
    """release.py with the real build_benchmark on a small simulated benchmark: publish v1.0.0,
    re-run it (deterministic build: no new commit), v1.1.0 with another seed (new anchors: refused
    by the versioning rule, nothing published), v2.0.0 with it (changelog against the fetched
    v1.0.0), then consumers at each tag."""
    import pandas as pd

    from tinybench_builder.read.simulate import simulate_responses

    data = tmp_path / "inputs"
    data.mkdir()
    m, _ = simulate_responses(n_models=24, n_items=80, n_dims=1, seed=0)
    m.write(data / "responses.parquet")
    pd.DataFrame({"item_id": m.items, "instruction": [f"instruction {i}" for i in m.items], "output": "ref",
                  "generator": "gpt4_1106_preview", "dataset": "sim"}).to_parquet(data / "content.parquet", index=False)
    cfgs = []
    for seed in (0, 1):
        cfgs.append(write_config(tmp_path, f"""\
            [release]
            org = "tinyOrg"

            [[benchmark]]
            name = "tinyAlpacaEval"
            responses = "inputs/responses.parquet"
            content = {{ test = "inputs/content.parquet" }}
            anchors = 8
            seed = {seed}
            """, name=f"release-{seed}.toml"))
    repo = "tinyOrg/tinyAlpacaEval"
    token = "hf_e2e_token_5b1d0c9a77"
    with HubServer(token=token) as hub:
        env = hub.client_env(tmp_path / "hf_home", token=token)
        first = subprocess.run([sys.executable, str(RELEASE_PY), "--config", str(cfgs[0]), "--release-version", "1.0.0",
                                "--push", "--quiet", "--out", str(tmp_path / "out1")],
                               env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert first.returncode == 0, first.stderr[-4000:]
        assert "committed" in first.stdout
        v1 = hub.refs(repo)["tags"]["v1.0.0"]
        runs = [["--config", str(cfgs[0]), "--release-version", "1.0.0", "--push", "--quiet", "--out", str(tmp_path / "out1b")],
                ["--config", str(cfgs[1]), "--release-version", "1.1.0", "--push", "--quiet", "--out", str(tmp_path / "out2")],
                ["--config", str(cfgs[1]), "--release-version", "2.0.0", "--push", "--quiet", "--out", str(tmp_path / "out3")]]
        run = run_in_client(env, hub_clients.release_then_consume, runs, repo, ["v1.0.0", "v2.0.0"])
        res = run.result
        assert res["codes"] == [0, 1, 0]
        assert "a patch or minor version must keep the previous version's anchors" in run.stderr
        refs = hub.refs(repo)
        assert "v1.1.0" not in refs["tags"]
        assert refs["tags"]["v1.0.0"] == v1 and len(hub.history(repo)) == 3  # the re-run made no commit
        card = hub.files(repo, "v2.0.0")["README.md"].decode()
        assert "(previous: 1.0.0)" in card
        assert hub.seen_tokens == {token}
    folder1 = tmp_path / "out1" / "tinyAlpacaEval"
    manifest = json.loads((folder1 / "manifest.json").read_text())
    assert manifest["tag"] == "v1.0.0" and manifest["repo_id"] == repo
    tiny = pd.read_parquet(folder1 / manifest["configs"]["default"]["splits"]["test"]["path"])
    assert res["v1.0.0"]["instructions"] == tiny["instruction"].tolist()
    assert len(res["v1.0.0"]["anchors"]) == 8 and 0.0 <= res["v1.0.0"]["gpirt"] <= 1.0
    assert res["v1.0.0"]["anchors"] != res["v2.0.0"]["anchors"]
    for out in ("out1", "out1b", "out3"):
        assert token.encode() not in _all_text(tmp_path / out)
    assert token not in first.stdout + first.stderr
