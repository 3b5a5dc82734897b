"""Open LLM Leaderboard v1 details reader and the Hub download helpers (no network)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tinybench_builder.read.sources import SourceError
from tinybench_builder.read.sources import open_llm_leaderboard as oll
from helpers.sources import write_v1_details, write_v1_results

TS = "2023-09-18T03-05-58.053951"
TS_OLD = "2023-07-19T15:58:12.174583"  # early runs kept the colons
TS_NEW = "2024-01-05T10-00-00.000000"


@pytest.fixture
def small_rows(monkeypatch):
    """Shrink the expected row counts so fixtures stay tiny."""
    rows = {"arc": 4, "hellaswag": 3, "truthfulqa": 3, "winogrande": 2, "gsm8k": 2}
    for t in oll.V1_TASKS:
        if t.scenario in rows:
            monkeypatch.setattr(t, "rows", rows[t.scenario])
    monkeypatch.setattr(oll, "MMLU_ROWS", {"abstract_algebra": 3, "anatomy": 2})
    return rows


@pytest.mark.parametrize("layout", ["struct", "flat", "top"])
def test_three_score_layouts(tmp_path, small_rows, layout):
    d = tmp_path / "details_org__model"
    write_v1_details(d, "harness|arc:challenge|25", TS, [0, 1, 0, 1], layout=layout, metric="acc",
                     other={"acc_norm": [1, 1, 0, 0]})
    m = oll.read(tmp_path)
    assert m.models == ["org/model"]
    assert m.items == ["0", "1", "2", "3"]
    np.testing.assert_array_equal(m.scores[0], [1, 1, 0, 0])  # ARC -> acc_norm
    m = oll.read(tmp_path, metric="acc")
    np.testing.assert_array_equal(m.scores[0], [0, 1, 0, 1])


def test_early_colon_timestamps(tmp_path, small_rows):
    d = tmp_path / "details_org__model"
    p = write_v1_details(d, "harness|arc:challenge|25", TS_OLD, [1, 1, 1, 0], layout="top", other={"acc_norm": [1, 0, 1, 0]})
    assert ":" in p.parent.name and "|" in p.name
    m = oll.read(d)
    np.testing.assert_array_equal(m.scores[0], [1, 0, 1, 0])
    assert m.item_info.loc["0", "example"] == "Question 0?"


def test_all_six_benchmarks_metrics_and_ids(tmp_path, small_rows):
    d = tmp_path / "details_org__model"
    write_v1_details(d, "harness|arc:challenge|25", TS, [0] * 4, other={"acc_norm": [1] * 4})
    write_v1_details(d, "harness|hellaswag|10", TS, [0] * 3, other={"acc_norm": [1, 0, 1]})
    write_v1_details(d, "harness|hendrycksTest-abstract_algebra|5", TS, [1, 0, 1], other={"acc_norm": [0] * 3})
    write_v1_details(d, "harness|hendrycksTest-anatomy|5", TS, [0, 1], layout="top")
    write_v1_details(d, "harness|truthfulqa:mc|0", TS, [0.25, 0.5, 0.75], metric="mc2", other={"mc1": [0, 0, 1]})
    write_v1_details(d, "harness|winogrande|5", TS, [1, 0], layout="flat")
    write_v1_details(d, "harness|gsm8k|5", TS, [0, 1])
    m = oll.read(tmp_path)
    assert m.shape == (1, 4 + 3 + 5 + 3 + 2 + 2)
    assert m.items[:4] == ["arc.0", "arc.1", "arc.2", "arc.3"]
    assert "mmlu.abstract_algebra.2" in m.items and "mmlu.anatomy.1" in m.items
    row = dict(zip(m.items, m.scores[0]))
    assert row["arc.0"] == 1 and row["hellaswag.1"] == 0
    assert row["mmlu.abstract_algebra.0"] == 1 and row["mmlu.anatomy.1"] == 1
    assert row["truthfulqa.1"] == 0.5 and row["winogrande.0"] == 1 and row["gsm8k.1"] == 1
    assert m.notes == []
    # --task picks one benchmark; MMLU ids are <subject>.<index>
    mm = oll.read(tmp_path, task="mmlu")
    assert mm.items == ["abstract_algebra.0", "abstract_algebra.1", "abstract_algebra.2", "anatomy.0", "anatomy.1"]
    for alias in ("arc", "arc_challenge", "harness|arc:challenge|25", "harness_arc_challenge_25"):
        assert oll.read(tmp_path, task=alias).items == ["0", "1", "2", "3"]
    assert oll.read(tmp_path, task="hendrycksTest-anatomy").items == ["anatomy.0", "anatomy.1"]
    np.testing.assert_array_equal(oll.read(tmp_path, task="truthfulqa", metric="mc1").scores[0], [0, 0, 1])
    with pytest.raises(SourceError, match="no details for task 'drop'.*arc"):
        oll.read(tmp_path, task="drop")


def test_newest_complete_run_wins_partial_reported(tmp_path, small_rows):
    d = tmp_path / "details_org__a"
    write_v1_details(d, "harness|arc:challenge|25", TS, [0, 0, 0, 0], other={"acc_norm": [0, 0, 0, 0]})
    write_v1_details(d, "harness|arc:challenge|25", TS_NEW, [1, 1], other={"acc_norm": [1, 1]})  # --limit 2
    m = oll.read(d)
    np.testing.assert_array_equal(m.scores[0], [0, 0, 0, 0])
    assert any("newest complete" in n and TS in n for n in m.notes)
    # only a partial run: used, and reported
    e = tmp_path / "details_org__b"
    write_v1_details(e, "harness|arc:challenge|25", TS_NEW, [1, 1], other={"acc_norm": [1, 1]})
    m = oll.read(tmp_path)
    assert m.models == ["org/a", "org/b"]
    np.testing.assert_array_equal(m.scores[1], [1, 1, np.nan, np.nan])
    assert any("org/b: partial run" in n and "2 of 4 rows" in n for n in m.notes)
    assert m.summary()["partial_models"] == ["org/b"]


def test_mmlu_run_choice_and_version0_skipped(tmp_path, small_rows):
    d = tmp_path / "details_org__m"
    # newest run misses a subject; the older one is complete
    write_v1_details(d, "harness|hendrycksTest-abstract_algebra|5", TS, [0, 0, 0])
    write_v1_details(d, "harness|hendrycksTest-anatomy|5", TS, [0, 0])
    write_v1_details(d, "harness|hendrycksTest-abstract_algebra|5", TS_NEW, [1, 1, 1])
    m = oll.read(d, task="mmlu")
    np.testing.assert_array_equal(m.scores[0], [0, 0, 0, 0, 0])
    # a complete newest run of the old prompt (version 0) is skipped
    write_v1_details(d, "harness|hendrycksTest-anatomy|5", TS_NEW, [1, 1])
    np.testing.assert_array_equal(oll.read(d, task="mmlu").scores[0], [1] * 5)
    write_v1_results(d, TS_NEW, "org/m", mmlu_version=0)
    m = oll.read(d, task="mmlu")
    np.testing.assert_array_equal(m.scores[0], [0] * 5)
    assert any("version 0" in n for n in m.notes)


def test_model_name_from_results_when_folder_is_not_details(tmp_path, small_rows):
    d = tmp_path / "somefolder"
    write_v1_details(d, "harness|gsm8k|5", TS, [1, 0])
    write_v1_results(d, TS, "Org/Real-Name")
    assert oll.read(d).models == ["Org/Real-Name"]
    assert oll.model_from_folder("details_EleutherAI__pythia-1b") == "EleutherAI/pythia-1b"
    assert oll.model_from_folder("details_gpt2") == "gpt2"


def test_reads_only_the_metric_column(tmp_path, small_rows, monkeypatch):
    import pyarrow.parquet as pq

    d = tmp_path / "details_org__m"
    write_v1_details(d, "harness|gsm8k|5", TS, [1, 0])
    seen = []
    orig = pq.ParquetFile.read

    def spy(self, columns=None, **kw):
        seen.append(columns)
        return orig(self, columns=columns, **kw)

    monkeypatch.setattr(pq.ParquetFile, "read", spy)
    units = oll.scan(d)
    oll.read_unit(units[0])  # want_content False: scores only
    assert seen == [["metrics.acc"]]


def test_corrupt_parquet_names_file(tmp_path, small_rows):
    d = tmp_path / "details_org__m"
    p = write_v1_details(d, "harness|gsm8k|5", TS, [1, 0])
    p.write_bytes(p.read_bytes()[:100])
    with pytest.raises(SourceError) as err:
        oll.read(d)
    assert str(p) in str(err.value) and "corrupt" in str(err.value)
    p.write_bytes(b"not a parquet file at all")
    with pytest.raises(SourceError, match="cannot read parquet"):
        oll.read(d)


def test_missing_metric_lists_available(tmp_path, small_rows):
    d = tmp_path / "details_org__m"
    write_v1_details(d, "harness|truthfulqa:mc|0", TS, [0, 1, 0], metric="mc1")
    with pytest.raises(SourceError, match="no per-example metric 'mc2'; the file has: mc1"):
        oll.read(d)


def test_unknown_task_needs_metric(tmp_path, small_rows):
    d = tmp_path / "details_org__m"
    write_v1_details(d, "harness|drop|3", TS, [0.5, 0.25], metric="f1")
    m = oll.read(d)  # drop has a known default (f1)
    np.testing.assert_allclose(m.scores[0], [0.5, 0.25])
    write_v1_details(d, "custom|mytask|0", TS, [1, 0], metric="acc")
    with pytest.raises(SourceError, match="choose its metric"):
        oll.read(d, task="custom_mytask_0")
    assert oll.read(d, task="custom_mytask_0", metric="acc").items == ["0", "1"]


# --------------------------------------------------------------------------- downloads
REPO_FILES = [
    "README.md",
    f"results_{TS_OLD.replace(':', '-')}.json",
    f"results_{TS}.json",
    f"results_{TS_NEW}.json",
    f"{TS_OLD}/details_harness|arc:challenge|25_{TS_OLD}.parquet",
    f"{TS}/details_harness|arc:challenge|25_{TS}.parquet",
    f"{TS}/details_harness|gsm8k|5_{TS}.parquet",
    f"{TS_NEW}/details_harness|gsm8k|5_{TS_NEW}.parquet",
    *[f"{TS}/details_harness|hendrycksTest-{s}|5_{TS}.parquet" for s in oll.MMLU_ROWS],
    f"{TS_NEW}/details_harness|hendrycksTest-anatomy|5_{TS_NEW}.parquet",  # incomplete newer MMLU run
]


def test_select_v1_files():
    sel = oll.select_v1_files(REPO_FILES)
    assert f"{TS}/details_harness|arc:challenge|25_{TS}.parquet" in sel
    assert f"{TS_OLD}/details_harness|arc:challenge|25_{TS_OLD}.parquet" not in sel
    assert f"{TS_NEW}/details_harness|gsm8k|5_{TS_NEW}.parquet" in sel
    assert f"{TS}/details_harness|gsm8k|5_{TS}.parquet" not in sel
    mmlu = [f for f in sel if "hendrycksTest" in f]
    assert len(mmlu) == 57 and all(TS in f for f in mmlu)  # the complete run, not the newer partial one
    assert f"results_{TS}.json" in sel and f"results_{TS_NEW}.json" in sel
    assert f"results_{TS_OLD.replace(':', '-')}.json" not in sel and "README.md" not in sel
    only = oll.select_v1_files(REPO_FILES, tasks=["gsm8k"])
    assert only == sorted([f"{TS_NEW}/details_harness|gsm8k|5_{TS_NEW}.parquet", f"results_{TS_NEW}.json"])
    assert len(oll.select_v1_files(REPO_FILES, tasks=["arc"], all_runs=True)) == 4  # 2 parquet + 2 results


def test_select_v2_files():
    files = ["README.md", "org__m/results_2024-06-16T22-34-46.256992.json",
             "org__m/samples_leaderboard_bbh_navigate_2024-06-16T22-34-46.256992.json",
             "org__m/samples_leaderboard_bbh_navigate_2024-07-01T00-00-00.000000.jsonl",
             "org__m/results_2024-07-01T00-00-00.000000.json",
             "org__m/samples_leaderboard_ifeval_2024-06-16T22-34-46.256992.json"]
    assert oll.select_v2_files(files, tasks=["leaderboard_bbh"]) == [
        "org__m/results_2024-07-01T00-00-00.000000.json",
        "org__m/samples_leaderboard_bbh_navigate_2024-07-01T00-00-00.000000.jsonl"]
    assert len(oll.select_v2_files(files)) == 4


class FakeApi:
    def __init__(self, repos):
        self.repos = repos
        self.calls = []

    def list_repo_files(self, repo_id, repo_type=None):
        self.calls.append((repo_id, repo_type))
        if repo_id not in self.repos:
            raise FileNotFoundError(repo_id)  # stands in for RepositoryNotFoundError
        return self.repos[repo_id]


def test_download_v1_details_selects_and_fetches(tmp_path, small_rows):
    api = FakeApi({"open-llm-leaderboard-old/details_org__m": [
        f"{TS}/details_harness|gsm8k|5_{TS}.parquet", f"{TS_NEW}/details_harness|gsm8k|5_{TS_NEW}.parquet",
        f"results_{TS_NEW}.json"]})
    fetched = []

    def fake_download(repo_id, filename, repo_type, local_dir, token=None):
        fetched.append((repo_id, filename, repo_type))
        target = Path(local_dir) / filename
        if filename.endswith(".parquet"):
            write_v1_details(Path(local_dir), "harness|gsm8k|5", TS_NEW, [1, 0])
        else:
            write_v1_results(Path(local_dir), TS_NEW, "org/m")
        return str(target)

    with pytest.warns(UserWarning, match="org/missing"):
        folders = oll.download_v1_details(["org/m", "org/missing"], tmp_path, api=api, download=fake_download,
                                          progress=False, max_workers=2)
    assert folders == {"org/m": tmp_path / "details_org__m"}
    assert ("open-llm-leaderboard/details_org__m", "dataset") in api.calls  # tried the current org first
    assert sorted(f[1] for f in fetched) == [f"{TS_NEW}/details_harness|gsm8k|5_{TS_NEW}.parquet", f"results_{TS_NEW}.json"]
    assert all(f[2] == "dataset" for f in fetched)
    m = oll.read(folders["org/m"])
    assert m.models == ["org/m"] and m.shape == (1, 2)


def test_download_v2_details(tmp_path):
    files = ["org__m/samples_leaderboard_ifeval_2024-07-01T00-00-00.000000.jsonl",
             "org__m/results_2024-07-01T00-00-00.000000.json"]
    api = FakeApi({"open-llm-leaderboard/org__m-details": files})
    got = []
    oll.download_v2_details(["org/m"], tmp_path, api=api, progress=False,
                            download=lambda **kw: got.append(kw["filename"]) or "")
    assert sorted(got) == sorted(files)
