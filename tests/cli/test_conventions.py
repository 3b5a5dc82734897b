"""Names and conventions (issue 20): --version on every command, --release-version (and the old
spelling), no default namespace of another organisation, output that suits a log file."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tinybench_builder import __version__
from tinybench_builder.cli.main import main, release_main
from helpers.client import run_in_client

COMMANDS = ["ingest", "fit", "estimate", "build", "import-original", "release", "simulate"]


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_version_on_every_command(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--version"] if command else ["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"tinybench-builder {__version__}"


def test_release_py_version_and_the_old_spelling(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        release_main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"tinybench-builder {__version__}"
    cfg = tmp_path / "r.toml"
    cfg.write_text('[release]\norg = "me"\n')
    assert release_main(["--config", str(cfg), "--version", "1.0.0"]) == 2  # the old spelling still parses
    err = capsys.readouterr().err
    assert "--version 1.0.0 is deprecated; use --release-version 1.0.0" in err and "nothing to release" in err
    assert release_main(["--config", str(cfg)]) == 2
    assert "give the release version: --release-version X.Y.Z" in capsys.readouterr().err


def test_no_default_namespace_of_another_organisation(monkeypatch, tmp_path):
    """Without a repository id or an org: the token's own namespace, or a local build."""
    from tinybench_builder.dataset import LOCAL_NAMESPACE, BuildOptions

    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # no saved login
    assert BuildOptions().repo_id_for("tinyX") == f"{LOCAL_NAMESPACE}/tinyX"
    assert BuildOptions(repo_id="someone/tinyX").repo_id_for("tinyX") == "someone/tinyX"


def _namespace_in_a_client() -> dict:
    from tinybench_builder.dataset import BuildOptions
    from tinybench_builder.release import load_config

    return {"build": BuildOptions().repo_id_for("tinyX"), "org": load_config("r.toml", check_paths=False).org}


def test_the_token_namespace_from_the_loopback_hub(hub_env, tmp_path):
    (tmp_path / "r.toml").write_text('[release]\n\n[[benchmark]]\nname = "tinyGSM8k"\nresponses = "r.parquet"\n')
    run = run_in_client(hub_env, _namespace_in_a_client, cwd=tmp_path)
    assert run.result == {"build": "tester/tinyX", "org": "tester"}  # the loopback Hub's whoami


def test_push_refuses_a_local_release(tmp_path, monkeypatch, capsys):
    (tmp_path / "r.parquet").write_bytes(b"x")
    cfg = tmp_path / "r.toml"
    cfg.write_text('[release]\n\n[[benchmark]]\nname = "tinyGSM8k"\nresponses = "r.parquet"\n')
    monkeypatch.setenv("HF_TOKEN", "hf_x")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # no whoami: the namespace is unknown
    assert release_main(["--config", str(cfg), "--release-version", "1.0.0", "--push", "--out", str(tmp_path / "o")]) == 2
    assert "--push needs the Hub namespace to publish to" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_a_log_file_gets_no_bars_and_quiet_is_quiet(tmp_path):
    """stderr is not a terminal: no bar, no cursor escapes; -q: nothing on stderr; --progress: a bar."""
    out = tmp_path / "s.parquet"
    base = [sys.executable, "-m", "tinybench_builder"]
    proc = subprocess.run(base + ["simulate", "--models", "12", "--items", "60", "--out", str(out)],
                          capture_output=True, text=True, check=True)
    assert proc.stderr.startswith("wrote 12 models x 60 items")
    fit = base + ["fit", str(out), "--anchors", "10", "--dims", "1", "--out", str(tmp_path / "t")]
    proc = subprocess.run(fit, capture_output=True, text=True, check=True)
    assert "%|" not in proc.stderr and "\x1b[" not in proc.stderr and "wrote " in proc.stderr
    proc = subprocess.run(fit + ["-q"], capture_output=True, text=True, check=True)
    assert proc.stderr == "" and "| scenario |" in proc.stdout
    proc = subprocess.run(fit + ["--progress"], capture_output=True, text=True, check=True)
    assert "fit: " in proc.stderr and "%|" in proc.stderr  # asked for: a bar even in a log
