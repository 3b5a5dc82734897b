"""tinybench_builder.release.validate: a built folder is checked before it is published (manifest, token, card,
load_dataset round trip, estimator side files); each problem is named."""

from __future__ import annotations

import pytest

from tinybench_builder.release.config import ReleaseError
from tinybench_builder.release.validate import validate_folder
from helpers.folders import make_folder, rewrite


def test_validate_folder_accepts_a_build_and_names_problems(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    good = make_folder(tmp_path / "good", seed=8)
    report = validate_folder(good)
    assert report["configs"] == {"default": {"test": 5}} and report["anchors"] == 5 and report["files"] == 7

    def broken(name, mutate):
        folder = make_folder(tmp_path / name, seed=8)
        mutate(folder)
        with pytest.raises(ReleaseError) as exc:
            validate_folder(folder)
        return str(exc.value)

    assert "does not match the manifest sha256" in broken("tampered", lambda f: (f / "estimator.py").write_text("x"))
    assert "not in the manifest" in broken("unlisted", lambda f: (f / "stray.txt").write_text("x"))
    assert "in the manifest but not in the folder" in broken("missing", lambda f: (f / "estimator.py").unlink())
    assert "not a tiny dataset manifest" in broken("foreign", lambda f: (f / "manifest.json").write_text('{"files": {}}'))
    assert "no `configs:`" in broken("nocfg", lambda f: rewrite(f, "README.md", lambda s: s.replace("configs:", "other:")))
    assert "no file matches" in broken("nofiles", lambda f: rewrite(f, "README.md", lambda s: s.replace("data/test-*", "data/x-*")))
    monkeypatch.setenv("HF_TOKEN", "hf_secret_for_validate_0123456789")
    assert "contains the Hub token" in broken("token", lambda f: rewrite(f, "estimator.py", lambda s: s + "# hf_secret_for_validate_0123456789\n"))
    (good / ".hidden").write_text("never published, never checked")  # hidden files are ignored
    monkeypatch.delenv("HF_TOKEN")
    assert validate_folder(good)["files"] == 7


def test_validate_folder_checks_the_registry_spec(tmp_path, monkeypatch):
    """Given the benchmark's spec, the card must declare its configs and the anchors fill its tiny splits."""
    from tinybench_builder.registry.benchmarks import REGISTRY

    monkeypatch.delenv("HF_TOKEN", raising=False)
    folder = make_folder(tmp_path / "f", seed=8)
    with pytest.raises(ReleaseError, match="the card has no config 'main'"):
        validate_folder(folder, REGISTRY["tinyGSM8k"])
    assert validate_folder(folder, REGISTRY["tinyAlpacaEval"])["anchors"] == 5  # config 'default', split 'test'
