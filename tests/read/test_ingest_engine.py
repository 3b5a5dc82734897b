"""The machinery under ``ingest`` that does not need a cluster: the streaming reduce (any slot
order gives the same matrix), the failure rule (retries, failed models reported), progress."""

from __future__ import annotations

import argparse
import io

import numpy as np
import pandas as pd
import pytest

from tinybench_builder.cli.ingest import add_ingest_arguments, read_hub_models, run_ingest
from tinybench_builder.read.ingest import IncompleteIngest, ModelProgress, ingest, ingest_with_report
from tinybench_builder.read.matrix import ResponseMatrix
from tinybench_builder.read.sources import ModelUnavailable, SourceError, _common, helm, lm_eval, open_llm_leaderboard
from tinybench_builder.read.sources._common import Options, UnitFailure, read_unit, read_unit_retrying
from tinybench_builder.read.sources.reduce import MatrixReducer, unit_keys
from helpers.ingest_trees import write_helm_tree, write_lm_eval_tree, write_v1_tree


def _parse(argv):
    parser = argparse.ArgumentParser()
    add_ingest_arguments(parser)
    return parser.parse_args(argv)


def _same(a: ResponseMatrix, b: ResponseMatrix) -> None:
    assert a.models == b.models
    assert a.items == b.items
    np.testing.assert_array_equal(a.scores, b.scores)  # NaN in the same places
    pd.testing.assert_frame_equal(a.item_info, b.item_info)
    assert a.notes == b.notes


def _reduce(slots, order):
    reducer = MatrixReducer()
    for i in order:
        reducer.add_keys(i, unit_keys(slots[i]))
    reducer.build_index()
    for i in order:
        reducer.fill(i, slots[i])
    return reducer.finish()


@pytest.mark.parametrize("reader,writer", [(lm_eval, write_lm_eval_tree), (open_llm_leaderboard, write_v1_tree),
                                           (helm, write_helm_tree)])
def test_reduce_gives_the_same_matrix_whatever_the_order_of_the_slots(tmp_path, reader, writer):
    units = reader.scan(writer(tmp_path / "src"), Options())
    units[0].want_content = True
    slots = [read_unit(u) for u in units]
    local = _reduce(slots, range(len(slots)))
    assert local.shape[0] == len(slots) >= 5
    for seed in range(3):
        order = np.random.default_rng(seed).permutation(len(slots))
        _same(local, _reduce(slots, order))


def test_reduce_keeps_first_appearance_order_of_string_keys(tmp_path):
    m = ingest([write_helm_tree(tmp_path / "helm")], workers=1)
    # model 0 lacks id0 and id7: they come after its ids, in both subjects
    assert m.items[:3] == ["anatomy.id14", "anatomy.id21", "anatomy.id28"]
    assert m.items[10:12] == ["anatomy.id0", "anatomy.id7"]
    assert np.isnan(m.scores[0, 10:12]).all() and not np.isnan(m.scores[1:, 10:12]).any()


def test_reducer_drops_a_slot_that_fails_after_the_index(tmp_path):
    units = lm_eval.scan(write_lm_eval_tree(tmp_path / "lm", n_models=4), Options())
    slots = [read_unit(u) for u in units]
    reducer = MatrixReducer()
    for i, s in enumerate(slots):
        reducer.add_keys(i, unit_keys(s))
    reducer.build_index()
    reducer.drop(1)
    for i, s in enumerate(slots):
        reducer.fill(i, s)
    m = reducer.finish()
    assert m.models == ["org/m0", "org/m2", "org/m3"]
    assert not any(n.startswith("org/m1:") for n in m.notes)


# --------------------------------------------------------------------------- the failure rule
class _Flaky:
    """Stands in for read_unit: raises ``exc`` the first ``fails`` calls, then reads."""

    def __init__(self, exc, fails):
        self.exc, self.fails, self.calls = exc, fails, 0

    def __call__(self, unit):
        self.calls += 1
        if self.calls <= self.fails:
            raise self.exc
        return read_unit(unit)


def test_read_unit_retrying_follows_the_rule(tmp_path, monkeypatch):
    unit = lm_eval.scan(write_lm_eval_tree(tmp_path / "lm", n_models=1), Options())[0]
    flaky = _Flaky(ConnectionError("reset by peer"), fails=2)
    monkeypatch.setattr(_common, "read_unit", flaky)
    assert read_unit_retrying(unit, retries=2, backoff=0)[0].model == "org/m0"  # third attempt reads
    flaky = _Flaky(ConnectionError("reset by peer"), fails=99)
    monkeypatch.setattr(_common, "read_unit", flaky)
    got = read_unit_retrying(unit, retries=2, backoff=0)
    assert isinstance(got, UnitFailure) and got.attempts == 3 == flaky.calls
    assert got.error == "ConnectionError: reset by peer" and got.model == "org/m0"
    # bad input: raised at once, never retried
    flaky = _Flaky(SourceError("x.jsonl: line 3: invalid JSON"), fails=99)
    monkeypatch.setattr(_common, "read_unit", flaky)
    with pytest.raises(SourceError, match="line 3"):
        read_unit_retrying(unit, retries=2, backoff=0)
    assert flaky.calls == 1
    # a model that cannot be had: a failure at once
    flaky = _Flaky(ModelUnavailable("no details repo"), fails=99)
    monkeypatch.setattr(_common, "read_unit", flaky)
    got = read_unit_retrying(unit, retries=2, backoff=0)
    assert isinstance(got, UnitFailure) and got.attempts == 1 == flaky.calls


class _FailOne:
    """read_unit that always fails for one model folder."""

    def __init__(self, bad):
        self.bad = bad

    def __call__(self, unit):
        if unit.source.endswith(self.bad):
            raise OSError(5, "Input/output error")
        return read_unit(unit)


def test_a_model_that_keeps_failing_is_reported_not_dropped(tmp_path, monkeypatch):
    root = write_lm_eval_tree(tmp_path / "lm", n_models=4)
    monkeypatch.setattr(_common, "read_unit", _FailOne("org__m2"))
    monkeypatch.setattr(_common.time, "sleep", lambda s: None)
    with pytest.raises(IncompleteIngest) as info:
        ingest([root], workers=1, retries=1)
    exc = info.value
    assert [f.model for f in exc.failures] == ["org/m2"] and exc.failures[0].attempts == 2
    assert exc.matrix.models == ["org/m0", "org/m1", "org/m3"]
    assert any(n.startswith("org/m2: not read (") and "OSError" in n for n in exc.matrix.notes)
    result = ingest_with_report([root], workers=1, retries=0)
    assert result.failures[0].attempts == 1 and result.units == 4 and result.matrix.shape[0] == 3


def test_cli_writes_the_others_lists_the_failed_and_exits_3(tmp_path, monkeypatch, capsys):
    root = write_lm_eval_tree(tmp_path / "lm", n_models=4)
    monkeypatch.setattr(_common, "read_unit", _FailOne("org__m2"))
    monkeypatch.setattr(_common.time, "sleep", lambda s: None)
    out = tmp_path / "res" / "bio.parquet"
    rc = run_ingest(_parse([str(root), "--out", str(out), "--jobs", "1", "--retries", "1", "--progress", "none"]))
    cap = capsys.readouterr()
    assert rc == 3
    assert ResponseMatrix.read(out).models == ["org/m0", "org/m1", "org/m3"]
    assert "3 models x" in cap.out and "failed models: 1" in cap.out
    assert cap.err.startswith("error: 1 of 4 model(s) could not be read after their retries and are NOT in the matrix:")
    assert "org/m2" in cap.err and "OSError" in cap.err
    failed = (out.parent / "bio.failed.txt").read_text().splitlines()
    assert failed[0].startswith("#") and failed[1].split("\t")[:2] == ["org/m2", str(root / "org__m2")]
    assert read_hub_models(out.parent / "bio.failed.txt") == ["org/m2"]


def test_cli_summary_and_log_progress(tmp_path, capsys):
    root = write_lm_eval_tree(tmp_path / "lm", n_models=5)
    out = tmp_path / "o.parquet"
    assert run_ingest(_parse([str(root), "--out", str(out), "--jobs", "2", "--progress", "log"])) == 0
    cap = capsys.readouterr()
    assert "5 models x 60 items" in cap.out
    assert "read in " in cap.out and "on local process pool, 2 workers; failed models: 0" in cap.out
    lines = [ln for ln in cap.err.splitlines() if ln.startswith("reading: ")]
    assert lines[0].startswith("reading: 1/5 models (20%)") and lines[-1].startswith("reading: 5/5 models (100%)")
    assert len(lines) == 5


def test_progress_logs_every_tenth_and_counts_failures():
    stream = io.StringIO()
    seen = []
    bar = ModelProgress(40, mode="log", stream=stream, callback=lambda *a: seen.append(a))
    for k in range(40):
        bar(UnitFailure("m", "s", "E: x", 1) if k in (3, 30) else [])
    lines = stream.getvalue().splitlines()
    assert len(lines) == 10 and lines[0].startswith("reading: 4/40 models (10%), 1 failed")
    assert lines[-1].startswith("reading: 40/40 models (100%), 2 failed")
    assert seen[-1] == (40, 40, 2)
    quiet = io.StringIO()
    ModelProgress(3, mode="none", stream=quiet)([])
    assert quiet.getvalue() == ""


def test_cli_argument_errors(tmp_path, capsys):
    out = str(tmp_path / "o.parquet")
    assert run_ingest(_parse(["--out", out])) == 2
    assert "give at least one SOURCE, or --hub-models FILE" in capsys.readouterr().err
    lm = str(write_lm_eval_tree(tmp_path / "lm", n_models=1))
    assert run_ingest(_parse([lm, "--out", out, "--workers", "0"])) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err
    assert run_ingest(_parse([lm, "--out", out, "--retries", "-1"])) == 2
    assert "--retries must be 0 or more" in capsys.readouterr().err
    assert run_ingest(_parse(["--hub-models", str(tmp_path / "none.txt"), "--out", out])) == 2
    assert "none.txt: cannot read the model list" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        _parse([lm, "--out", out, "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"])
    assert "not allowed with argument" in capsys.readouterr().err


def test_read_hub_models(tmp_path):
    f = tmp_path / "models.txt"
    f.write_text("# leaderboard models\norg/a\n\n  org/b  # a comment\norg/c\tsome source\terror text\n")
    assert read_hub_models(f) == ["org/a", "org/b", "org/c"]
    f.write_text("# nothing\n")
    with pytest.raises(SourceError, match="no model ids"):
        read_hub_models(f)
    units = open_llm_leaderboard.hub_units(["org/a", "org/a", "gpt2"], Options(task="arc"))
    assert [u.model for u in units] == ["org/a", "gpt2"] and units[0].source == "hub:details_org__a"
    with pytest.raises(SourceError, match="not a model id"):
        open_llm_leaderboard.hub_units(["a/b/c"])


@pytest.mark.slow  # tens of seconds (pytest --durations)
def test_hub_models_on_the_local_pool_and_a_corrupt_file_on_the_hub(tmp_path):
    """The local engine downloads Hub details too; a corrupt file there is bad input: exit 2,
    the message names the file in its repo, nothing is written."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from helpers.hub import HubServer
    from helpers.ingest_trees import TS_NEW, v1_repo_files

    repo_root = Path(__file__).resolve().parents[2]
    with HubServer(token="hf_engine_test") as hub:
        for k in (0, 1):
            hub.create_repo(f"open-llm-leaderboard/details_org__v{k}")
            files = v1_repo_files(k)
            if k == 1:
                files[f"{TS_NEW}/details_harness|gsm8k|5_{TS_NEW}.parquet"] = b"PAR1 not really parquet"
            hub.commit_files(f"open-llm-leaderboard/details_org__v{k}", files)
        env = hub.client_env(tmp_path / "hf_home", token="hf_engine_test")
        env["PYTHONPATH"] = os.pathsep.join([str(repo_root)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
        models = tmp_path / "models.txt"
        out = tmp_path / "out.parquet"

        def run(*ids):
            models.write_text("\n".join(ids) + "\n")
            return subprocess.run([sys.executable, "-m", "tinybench_builder", "ingest", "--hub-models", str(models), "--task", "gsm8k",
                                   "--out", str(out), "--progress", "none"], env=env, capture_output=True, text=True,
                                  timeout=120, cwd=str(repo_root))

        ok = run("org/v0")
        assert ok.returncode == 0, ok.stderr
        assert "1 models x 1319 items" in ok.stdout and "this process (serial)" in ok.stdout
        out.unlink()
        bad = run("org/v0", "org/v1")
    assert bad.returncode == 2 and not out.exists()
    assert bad.stderr.startswith("error: hf://datasets/open-llm-leaderboard/details_org__v1/")
    assert "cannot read parquet" in bad.stderr and "Traceback" not in bad.stderr
