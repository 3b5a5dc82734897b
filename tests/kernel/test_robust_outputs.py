"""Nothing lost: every command that writes replaces only what it provably wrote, refuses the rest
before the slow work starts, never writes over its own input, and creates files with the
permissions of the user's umask.

Each kind is checked on several folders that are not ours (user files, a manifest that only
looks like ours, a copied manifest plus a hidden folder, an edited build, a symbolic link, a
file where a folder should be) for every command that writes a folder: `fit`, `build` and
`release`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from pathlib import Path

import pandas as pd
import pytest

from tinybench_builder import layout

from tinybench_builder.release import publish
from tinybench_builder.cli.main import main, release_main
from tinybench_builder.errors import BuildError
from tinybench_builder.read.simulate import simulate_responses
from helpers.folders import fake_build, fake_config, make_folder


# --------------------------------------------------------------------------- folders that are not ours
def _user_folder(d: Path) -> dict:
    d.mkdir(parents=True)
    (d / "thesis.tex").write_text("my thesis")
    return {"thesis.tex": "my thesis"}


def _lookalike_manifest(d: Path) -> dict:
    """A manifest with our format string but no table of files: anyone can write that."""
    d.mkdir(parents=True)
    (d / "manifest.json").write_text(json.dumps({"format": layout.DATASET_FORMAT}))
    (d / "data.csv").write_text("a,b\n1,2\n")
    return {"manifest.json": None, "data.csv": "a,b\n1,2\n"}


def _copied_manifest_and_git(d: Path) -> dict:
    """An exact copy of a real build, plus a .git folder (someone cloned the released repo)."""
    make_folder(d)
    (d / ".git").mkdir()
    (d / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return {".git/HEAD": "ref: refs/heads/main\n"}


def _edited_build(d: Path) -> dict:
    make_folder(d)
    card = (d / "README.md").read_text() + "\nMy own notes on this benchmark.\n"
    (d / "README.md").write_text(card)
    return {"README.md": card}


def _edited_fit(d: Path) -> dict:
    m, _ = simulate_responses(n_models=20, n_items=40, n_dims=1, seed=0)
    m.write(d.parent / f"{d.name}.parquet")
    assert main(["fit", str(d.parent / f"{d.name}.parquet"), "--anchors", "5", "--dims", "1", "--quiet",
                 "--out", str(d)]) == 0
    text = (d / "validation.md").read_text() + "\nreviewed by me\n"
    (d / "validation.md").write_text(text)
    return {"validation.md": text}


def _symlink_to_build(d: Path) -> dict:
    target = d.parent / f"{d.name}-target"
    make_folder(target)
    d.symlink_to(target, target_is_directory=True)
    return {}


NOT_OURS = {
    "user folder": (_user_folder, "no manifest.json of ours"),
    "look-alike manifest": (_lookalike_manifest, "no table of the files"),
    "copied build + .git": (_copied_manifest_and_git, r"did not write: \.git/HEAD"),
    "edited card": (_edited_build, "README.md was changed"),
    "edited fit report": (_edited_fit, "validation.md was changed"),
    "symbolic link": (_symlink_to_build, "symbolic link"),
}


def _snapshot(d: Path) -> dict:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def responses(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("responses")
    m, _ = simulate_responses(n_models=24, n_items=60, n_dims=1, seed=1)
    m.write(d / "r.parquet")
    return d / "r.parquet"


@pytest.mark.parametrize("kind", sorted(NOT_OURS))
def test_fit_refuses_a_folder_it_did_not_write_before_fitting(kind, tmp_path, responses, capsys, monkeypatch):
    make, reason = NOT_OURS[kind]
    out = tmp_path / "out"
    make(out)
    before = _snapshot(out)

    def no_fit(*a, **kw):
        raise AssertionError("fitted before checking --out")

    monkeypatch.setattr("tinybench_builder.model.fitting.fit_estimator", no_fit)
    capsys.readouterr()
    assert main(["fit", str(responses), "--anchors", "5", "--quiet", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and len(err.splitlines()) == 1 and re.search(reason, err), err
    assert _snapshot(out) == before


@pytest.mark.parametrize("kind", sorted(NOT_OURS))
def test_build_refuses_a_folder_it_did_not_write_before_reading_inputs(kind, tmp_path, monkeypatch):
    from tinybench_builder.dataset import build as dataset

    make, reason = NOT_OURS[kind]
    out = tmp_path / "out"
    make(out)
    before = _snapshot(out)
    monkeypatch.setattr(dataset, "read_inputs", lambda *a, **kw: (_ for _ in ()).throw(AssertionError("read first")))
    with pytest.raises(BuildError, match=reason):
        dataset.build_benchmark("tinyAlpacaEval", "unused.parquet", None, out=out)
    assert _snapshot(out) == before


@pytest.mark.parametrize("kind", sorted(NOT_OURS))
def test_release_refuses_a_target_it_did_not_write_before_building_or_the_network(kind, tmp_path, capsys,
                                                                                   monkeypatch):
    make, reason = NOT_OURS[kind]
    cfg = fake_config(tmp_path / "cfg")
    out = tmp_path / "out"
    out.mkdir()
    make(out / "tinyAlpacaEval")
    before = _snapshot(out / "tinyAlpacaEval")
    monkeypatch.setattr(publish, "build_benchmark", lambda *a, **kw: pytest.fail("built before checking --out"))
    monkeypatch.setattr(publish, "fetch_previous", lambda *a, **kw: pytest.fail("asked the Hub first"))
    monkeypatch.setenv("HF_TOKEN", "hf_not_used_0123456789")
    assert release_main(["--config", str(cfg), "--release-version", "1.0.0", "--out", str(out), "--quiet", "--push"]) == 1
    err = capsys.readouterr().err
    assert re.search(reason, err) and "Traceback" not in err, err
    assert _snapshot(out / "tinyAlpacaEval") == before


def test_import_original_follows_the_same_rule(tmp_path, capsys):
    """`import-original --out` refuses a folder it did not write (before reading the pickle) and
    replaces its own."""
    from helpers.original_release import write_original_pickle

    pkl = tmp_path / "tinyBenchmarks.pkl"
    write_original_pickle(pkl)
    out = tmp_path / "out"
    _user_folder(out)
    assert main(["import-original", str(pkl), "--bench", "mmlu", "--out", str(out)]) == 2
    assert "no manifest.json of ours" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["thesis.tex"]
    out2 = tmp_path / "out2"
    for _ in range(2):
        assert main(["import-original", str(pkl), "--bench", "mmlu", "--out", str(out2)]) == 0
    assert layout.ownership_problem(out2) is None


def test_our_folders_are_replaced_and_fit_and_build_agree(tmp_path, responses, monkeypatch):
    """An empty folder, a fit folder and a build folder (unchanged, with a file browser's
    .DS_Store) are replaced by either command; a folder written by one command is ours for both."""
    out = tmp_path / "out"
    out.mkdir()
    args = ["fit", str(responses), "--anchors", "5", "--dims", "1", "--quiet", "--out", str(out)]
    assert main(args) == 0  # empty folder
    assert (out / "manifest.json").is_file() and layout.ownership_problem(out) is None
    (out / ".DS_Store").write_bytes(b"\0finder")
    assert main(args) == 0  # our fit folder
    make_folder(tmp_path / "built")
    shutil.rmtree(out)
    shutil.copytree(tmp_path / "built", out)
    assert main(args) == 0  # our build folder, replaced by fit
    assert json.loads((out / "manifest.json").read_text())["format"] == layout.FIT_FORMAT
    monkeypatch.setattr(publish, "build_benchmark", fake_build)
    fake_build("tinyAlpacaEval", str(responses), out=out)  # the fit folder, replaced by a build
    assert json.loads((out / "manifest.json").read_text())["format"] == layout.DATASET_FORMAT
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_fit_out_that_is_a_file_is_refused_before_fitting(tmp_path, responses, capsys, monkeypatch):
    monkeypatch.setattr("tinybench_builder.model.fitting.fit_estimator", lambda *a, **kw: pytest.fail("fitted first"))
    target = tmp_path / "notes.txt"
    target.write_text("keep")
    for out in (target, responses):
        assert main(["fit", str(responses), "--anchors", "5", "--out", str(out)]) == 2
        assert "is a file, not a folder" in capsys.readouterr().err
    assert target.read_text() == "keep"


def test_the_current_folder_is_never_replaced(tmp_path, responses, capsys, monkeypatch):
    """`--out .` (even an empty current folder, even one fit wrote) or a folder holding it."""
    monkeypatch.setattr("tinybench_builder.model.fitting.fit_estimator", lambda *a, **kw: pytest.fail("fitted first"))
    work = tmp_path / "work" / "here"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    for out in (".", "..", str(work), "../here/"):
        assert main(["fit", str(responses), "--anchors", "5", "--out", out]) == 2
        assert "is the current folder or contains it" in capsys.readouterr().err
    assert list(work.iterdir()) == [] and [p.name for p in (tmp_path / "work").iterdir()] == ["here"]


def test_release_refuses_a_summary_or_out_file_it_did_not_write(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(publish, "build_benchmark", fake_build)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    cfg = fake_config(tmp_path / "cfg")
    out = tmp_path / "out"
    out.mkdir()
    (out / "release.json").write_text('{"version": "my own file"}')
    args = ["--config", str(cfg), "--release-version", "1.0.0", "--out", str(out), "--quiet"]
    assert release_main(args) == 1
    assert "release.json exists and was not written by this tool" in capsys.readouterr().err
    assert (out / "release.json").read_text() == '{"version": "my own file"}'
    assert not (out / "tinyAlpacaEval").exists()
    (out / "release.json").unlink()
    assert release_main(args) == 0 and release_main(args) == 0  # its own summary is replaced
    assert json.loads((out / "release.json").read_text())["format"] == publish.RELEASE_FORMAT
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    assert release_main(["--config", str(cfg), "--release-version", "1.0.0", "--out", str(a_file), "--quiet"]) == 1
    assert "is a file, not a folder" in capsys.readouterr().err and a_file.read_text() == "x"


# --------------------------------------------------------------------------- estimate --out
@pytest.fixture(scope="module")
def fitted(tmp_path_factory, responses) -> Path:
    d = tmp_path_factory.mktemp("fitted")
    assert main(["fit", str(responses), "--anchors", "6", "--dims", "1", "--quiet", "--out", str(d / "tiny")]) == 0
    pd.read_parquet(responses).to_csv(d / "scores.csv")
    return d


@pytest.mark.parametrize("out, message", [
    ("{d}/scores.csv", "is the scores file being read"),
    ("{d}/sub/../scores.csv", "is the scores file being read"),
    ("{d}/link.csv", "is the scores file being read"),
    ("{d}/tiny/estimates.csv", "inside the tiny benchmark folder"),
    ("{d}/tiny/estimator.json", "unknown output format|inside the tiny benchmark folder"),
    ("{d}/tiny", "unknown output format|is a folder"),
    ("{d}/estimates.xlsx", "unknown output format '.xlsx'"),
    ("{d}/estimates", "unknown output format"),
])
def test_estimate_never_writes_over_an_input(fitted, out, message, capsys):
    d = fitted
    (d / "sub").mkdir(exist_ok=True)
    if not (d / "link.csv").exists():
        (d / "link.csv").symlink_to(d / "scores.csv")
    before = (d / "scores.csv").read_bytes(), _snapshot(d / "tiny")
    assert main(["estimate", str(d / "tiny"), str(d / "scores.csv"), "--out", out.format(d=d)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --out") and re.search(message, err), err
    assert ((d / "scores.csv").read_bytes(), _snapshot(d / "tiny")) == before


def test_estimate_out_inside_a_logs_folder(tmp_path, fitted, capsys):
    logs = tmp_path / "logs"
    logs.mkdir()
    assert main(["estimate", str(fitted / "tiny"), str(logs), "--out", str(logs / "estimates.json")]) == 2
    assert "inside the logs folder" in capsys.readouterr().err


def test_estimate_writes_the_format_its_name_says(fitted, tmp_path):
    frames = {}
    for name in ("e.csv", "e.tsv", "e.json", "e.parquet", "e.pq"):
        assert main(["estimate", str(fitted / "tiny"), str(fitted / "scores.csv"), "--out", str(tmp_path / name)]) == 0
    frames["csv"] = pd.read_csv(tmp_path / "e.csv")
    frames["tsv"] = pd.read_csv(tmp_path / "e.tsv", sep="\t")
    frames["json"] = pd.DataFrame(json.loads((tmp_path / "e.json").read_text()))
    frames["parquet"] = pd.read_parquet(tmp_path / "e.parquet")
    frames["pq"] = pd.read_parquet(tmp_path / "e.pq")
    assert (tmp_path / "e.parquet").read_bytes()[:4] == b"PAR1"
    for kind, f in frames.items():
        pd.testing.assert_frame_equal(f, frames["parquet"], check_exact=False, rtol=1e-12, obj=kind)
    assert "NaN" not in (tmp_path / "e.json").read_text()


def test_ingest_never_writes_over_a_source(tmp_path, capsys):
    pd.DataFrame({"model": ["a"], "q1": [1.0]}).to_csv(tmp_path / "a.csv", index=False)
    pd.DataFrame({"model": ["b"], "q1": [0.0]}).to_parquet(tmp_path / "b.parquet", index=False)
    before = (tmp_path / "a.csv").read_bytes(), (tmp_path / "b.parquet").read_bytes()
    cases = [
        (["ingest", "{d}/a.csv", "{d}/b.parquet", "--out", "{d}/b.parquet"], "is also a SOURCE"),
        (["ingest", "{d}/a.csv", "{d}/b.parquet", "--out", "{d}/./a.csv"], "is also a SOURCE"),
        (["ingest", "{d}/a.csv", "{d}/b.parquet", "--out", "{d}/m.parquet", "--items-out", "{d}/b.parquet"],
         "is also a SOURCE"),
        (["ingest", "{d}/a.csv", "--out", "{d}/m.parquet", "--items-out", "{d}/m.parquet"], "the same file"),
        (["ingest", "{d}/a.csv", "--out", "{d}"], "is a folder"),
        (["ingest", "{d}/a.csv", "--out", "{d}/m.json"], "give a .parquet"),
    ]
    for args, message in cases:
        assert main([a.format(d=tmp_path) for a in args]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and message in err, err
    assert ((tmp_path / "a.csv").read_bytes(), (tmp_path / "b.parquet").read_bytes()) == before
    assert not (tmp_path / "m.parquet").exists()


# --------------------------------------------------------------------------- permissions
@pytest.mark.parametrize("umask", [0o002, 0o027])
def test_outputs_respect_the_umask(tmp_path, umask, responses, fitted):
    """Files are created 0666 & ~umask and folders 0777 & ~umask, like any file the user creates
    (tempfile.mkstemp made them 0600 whatever the umask)."""
    old = os.umask(umask)
    try:
        assert main(["simulate", "--models", "4", "--items", "5", "--out", str(tmp_path / "sim.parquet")]) == 0
        assert main(["ingest", str(tmp_path / "sim.parquet"), "--out", str(tmp_path / "ing.parquet"),
                     "--progress", "none"]) == 0
        assert main(["estimate", str(fitted / "tiny"), str(fitted / "scores.csv"), "--out",
                     str(tmp_path / "e.csv")]) == 0
        assert main(["fit", str(responses), "--anchors", "5", "--dims", "1", "--quiet", "--out",
                     str(tmp_path / "fit")]) == 0
        layout.atomic_write_text(tmp_path / "summary.json", "{}")
    finally:
        os.umask(old)
    want_file, want_dir = 0o666 & ~umask, 0o777 & ~umask
    files = [tmp_path / n for n in ("sim.parquet", "ing.parquet", "e.csv", "summary.json")]
    files += sorted((tmp_path / "fit").iterdir())
    for f in files:
        assert stat.S_IMODE(f.stat().st_mode) == want_file, (f.name, oct(f.stat().st_mode))
    assert stat.S_IMODE((tmp_path / "fit").stat().st_mode) == want_dir
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


# --------------------------------------------------------------------------- the network
def test_a_local_release_never_asks_the_hub_and_asking_fails_calmly(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(publish, "build_benchmark", fake_build)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    calls = []

    def unreachable(repo_id, version, dest, api=None):
        calls.append(repo_id)
        raise OSError("[Errno -2] Name or service not known (https://huggingface.co/api/datasets/...)")

    monkeypatch.setattr(publish, "fetch_previous", unreachable)
    monkeypatch.setattr(publish, "hub_api", lambda api=None: object())
    cfg = fake_config(tmp_path / "cfg")
    args = ["--config", str(cfg), "--release-version", "1.0.0", "--out", str(tmp_path / "out"), "--quiet"]
    assert release_main(args) == 0
    err = capsys.readouterr().err
    assert calls == [] and "previous" not in err and "warning" not in err
    assert release_main(args + ["--fetch-previous"]) == 0
    err = capsys.readouterr().err
    notes = [line for line in err.splitlines() if "previous" in line]
    assert calls == ["tinyOrg/tinyAlpacaEval"] and len(notes) == 1, err
    assert notes[0].startswith("note: tinyOrg/tinyAlpacaEval: the previous release could not be fetched "
                               "(the Hub cannot be reached)"), notes
    assert "Traceback" not in err and "Errno" not in err
