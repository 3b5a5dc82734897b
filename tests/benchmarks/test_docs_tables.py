"""``--write-docs``: the benchmark scripts put their tables into docs/BENCHMARKS.md, each between its
markers under one provenance line (command, commit, date, conditions), and leave the prose around
them alone. The scripts run here on small simulated data, into a scratch copy of the file."""

from __future__ import annotations

import re

import pytest

from benchmarks import docs_tables
from tinybench_builder.read.simulate import simulate_responses

PROSE = "# Benchmarks\n\nHand-written words before.\n\n<!-- table:x -->\nold\n<!-- /table:x -->\n\nAnd after.\n"
PROVENANCE = re.compile(r"^\*Measured by `python -m benchmarks\.(\w+) (.*)` at commit (\S+.*) on (\d{4}-\d\d-\d\d) "
                        r"\((\d+) cores, load [\d.]+ -> [\d.]+, \d+ BLAS threads?, numpy [\d.]+\)\.\*$")


@pytest.fixture
def docs(tmp_path, monkeypatch):
    path = tmp_path / "BENCHMARKS.md"
    path.write_text(PROSE, encoding="utf-8")
    monkeypatch.setattr(docs_tables, "DOCS", path)
    return path


def _section(text: str, section: str) -> list[str]:
    start, end = f"<!-- table:{section} -->", f"<!-- /table:{section} -->"
    assert text.count(start) == 1 and text.count(end) == 1, (section, text)
    return text.split(start, 1)[1].split(end, 1)[0].strip("\n").splitlines()


def test_a_section_is_replaced_in_place_and_the_prose_kept(docs):
    conditions = docs_tables.Conditions()
    docs_tables.write_section("x", "| a |\n|---|\n| 1 |", conditions, argv=["--seeds", "0", "--write-docs"],
                              module="accuracy")
    text = docs.read_text(encoding="utf-8")
    assert text.startswith("# Benchmarks\n\nHand-written words before.\n\n<!-- table:x -->\n")
    assert text.endswith("<!-- /table:x -->\n\nAnd after.\n") and "old" not in text
    lines = _section(text, "x")
    m = PROVENANCE.match(lines[0])
    assert m and m.group(1) == "accuracy" and m.group(2) == "--seeds 0", lines[0]  # --write-docs is not repeated
    assert lines[1:] == ["", "| a |", "|---|", "| 1 |"]
    # a new section goes at the end, under its title; a second write replaces it, once
    for value in ("1", "2"):
        docs_tables.write_section("new.one", f"value {value}", conditions, title="New one", argv=[], module="speed")
    text = docs.read_text(encoding="utf-8")
    assert text.count("## New one") == 1 and _section(text, "new.one")[-1] == "value 2"
    assert set(docs_tables.sections(docs)) == {"x", "new.one"}
    with pytest.raises(ValueError, match="section id"):
        docs_tables.write_section("Bad Id", "x", conditions)


def test_the_docs_file_itself_does_not_make_the_commit_dirty(tmp_path, monkeypatch):
    # an earlier table written into docs/BENCHMARKS.md is not a change of the code that measures the next one
    import subprocess

    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "BENCHMARKS.md").write_text("# Benchmarks\n")
    (repo / "code.py").write_text("x = 1\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "one"]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    monkeypatch.setattr(docs_tables, "ROOT", repo)
    monkeypatch.setattr(docs_tables, "DOCS", repo / "docs" / "BENCHMARKS.md")
    clean = docs_tables._commit()
    assert re.fullmatch(r"[0-9a-f]{7,}", clean), clean
    (repo / "docs" / "BENCHMARKS.md").write_text("# Benchmarks\n\na table\n")
    assert docs_tables._commit() == clean
    (repo / "code.py").write_text("x = 2\n")
    assert docs_tables._commit() == f"{clean} (with uncommitted changes)"


def test_accuracy_writes_both_protocols_with_their_goals(docs, tmp_path):
    from benchmarks import accuracy

    matrix, _ = simulate_responses(n_models=24, n_items=200, n_dims=1, seed=5)
    matrix.write(tmp_path / "sim.parquet")
    argv = ["--data-dir", str(tmp_path), "--datasets", "sim", "--seeds", "0", "--anchors", "20", "--dims", "1",
            "--jobs", "1", "--write-docs"]
    assert accuracy.main(argv) == 0
    text = docs.read_text(encoding="utf-8")
    for protocol, split in (("interpolation", "18/6"), ("extrapolation", "12/8")):
        lines = _section(text, f"accuracy.{protocol}")
        assert PROVENANCE.match(lines[0]).group(2) == " ".join(argv[:-1])
        assert any(line.startswith(f"| sim | {split} |") for line in lines)
        assert "Goals checked by the script:" in lines and any(line.startswith("- 95% intervals cover") for line in lines)
    assert "Hand-written words before." in text and "And after." in text


def test_speed_and_stability_write_their_tables(docs, tmp_path):
    from benchmarks import speed, stability

    assert speed.main(["--models", "40", "--items", "300", "--anchors", "20", "--dims", "1", "--repeats", "3",
                       "--original-repeats", "1", "--write-docs"]) == 0
    matrix, _ = simulate_responses(n_models=22, n_items=120, n_dims=1, seed=8)
    matrix.write(tmp_path / "Sim Matrix.parquet")
    assert stability.main([str(tmp_path / "Sim Matrix.parquet"), "--anchors", "12", "--write-docs"]) == 0
    text = docs.read_text(encoding="utf-8")
    assert any(line.startswith("| fit (whole pipeline) |") for line in _section(text, "speed"))
    lines = _section(text, "stability.sim_matrix")
    assert "| 2 BLAS threads | 12/12 | 0.0e+00 |" in lines and PROVENANCE.match(lines[0]).group(1) == "stability"


def test_ingest_memory_writes_one_table_per_configuration(docs):
    import argparse

    from benchmarks import ingest_memory

    row = {"layout": "long-csv", "output": "parquet", "models": 2000, "items": 5000, "rows": 10_000_000,
           "table_mib": 353.2, "matrix_mib": 76.3, "cap": 8 << 30, "status": 0, "seconds": 29.4, "peak_mib": 390.0,
           "baseline_peak_mib": 139.0, "read_baseline_peak_mib": 120.0, "peak_over_matrix": 5.11,
           "added_over_matrix": 3.29, "out_mib": 9.5, "read_seconds": 3.1, "read_peak_mib": 200.0, "checked": True}
    refused = {k: v for k, v in row.items() if k not in ("out_mib", "read_seconds", "read_peak_mib", "checked")}
    refused.update(output="long.csv", status=2)
    lines = ingest_memory.docs_table([row, refused]).splitlines()
    assert lines[2] == ("| long-csv (353 MiB), under `prlimit --as=8G` | 2,000 x 5,000 | 10,000,000 | 76 MiB "
                        "| `X.parquet` | 0 | 29 | 390 MiB | 5.11 | 3.29 | 9.5 MiB | 3.1 | 200 MiB | yes |")
    assert lines[3].endswith("| `X.csv --layout long` | 2 | 29 | 390 MiB | 5.11 | 3.29 | - | - | - | - |")
    assert lines[-1].endswith("ingest 139 MiB, read-back 120 MiB.")
    base = {"models": 2000, "items": 5000, "layout": "long-csv", "shuffle": False, "cap": None, "outputs": ["parquet"]}
    configs = [{}, {"cap": 8 << 30}, {"layout": "long-parquet"}, {"outputs": ["parquet", "long.csv"]}]
    ids = [ingest_memory.section_id(argparse.Namespace(**dict(base, **c))) for c in configs]
    assert ids == ["ingest_memory.long-csv.2000x5000", "ingest_memory.long-csv.2000x5000.cap8589934592",
                   "ingest_memory.long-parquet.2000x5000", "ingest_memory.long-csv.2000x5000.parquet-long_csv"]
