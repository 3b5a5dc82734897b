"""Your own tiny benchmark, end to end, as docs/BUILD.md's walk-through (WMDP-bio) takes it: lm-eval
outputs of many models -> `ingest` -> `build --spec specs/tinyWMDP_bio.toml` -> logs of the tiny
task -> `estimate` -> a release config with `spec = ...` -> `release --push` to the loopback Hub ->
consumers at the tag. The data is made here in the shape of WMDP-bio (the walk-through uses the real
matrix of ../shared/data); the spec is the repository's own file.

With ``TINYBENCH_LM_EVAL_PYTHON`` set to a Python that has lm-evaluation-harness, the released task
file is also run by lm-eval itself (its ``dummy`` model) and `estimate` reads those logs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tinybench_builder.cli.main import main
from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.estimate.harness_logs import estimate_from_logs
from tinybench_builder.layout import read_manifest
from tinybench_builder.read.simulate import simulate_responses
from helpers import hub_clients
from helpers.builds import ROOT
from helpers.client import run_in_client
from helpers.folders import spec_release_config
from helpers.hub import HubServer
from helpers.sources import lm_record, write_lm_eval_run

pytestmark = pytest.mark.slow  # end to end: each test takes seconds to minutes

SPEC = ROOT / "specs" / "tinyWMDP_bio.toml"
N_ITEMS, N_MODELS, K = 60, 30, 20
TS = "2025-02-01T10-00-00.000000"



def _spec_release_config(folder, matrix, content):
    """A release config publishing the repository's tinyWMDP_bio spec from ``matrix`` and ``content``."""
    return spec_release_config(folder, SPEC, matrix, content, anchors=K)

def _question(j: int) -> str:
    return f"Which agent {j} spreads by aerosol?"


def _choices(j: int) -> list[str]:
    return [f"agent {j}-{c}" for c in "abcd"]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """lm-eval --log_samples outputs of N_MODELS models on wmdp_bio, and the questions with item ids."""
    tmp = tmp_path_factory.mktemp("custom")
    m, _ = simulate_responses(n_models=N_MODELS, n_items=N_ITEMS, n_dims=1, seed=3)
    logs = tmp / "lm_eval_outputs"
    for i, model in enumerate(m.models):
        write_lm_eval_run(logs, f"org/{model}", {"wmdp_bio": [
            lm_record(j, float(m.scores[i, j]), question=_question(j)) for j in range(N_ITEMS)]})
    content = tmp / "wmdp_bio_questions.parquet"
    pd.DataFrame({"item_id": [str(j) for j in range(N_ITEMS)], "question": [_question(j) for j in range(N_ITEMS)],
                  "choices": [_choices(j) for j in range(N_ITEMS)], "answer": [j % 4 for j in range(N_ITEMS)]}
                 ).to_parquet(content)
    return tmp, logs, content, m


def _tiny_task_logs(root, model: str, rows: pd.DataFrame, scores) -> None:
    """lm-eval logs of the tiny task: one record per row, the row as ``doc``, in shuffled order."""
    recs = []
    for i, row in enumerate(rows.to_dict("records")):
        doc = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in row.items()}
        recs.append(lm_record(i, float(scores[i])) | {"doc": doc})
    order = np.random.default_rng(5).permutation(len(recs))
    write_lm_eval_run(root, model, {"tinyWMDP_bio": [recs[i] for i in order]}, ts=TS)


def test_your_own_tiny_benchmark_from_ingest_to_push(inputs, tmp_path, capsys):
    tmp, logs, content, m = inputs
    # 1. ingest: lm-eval outputs -> one score matrix
    matrix = tmp_path / "wmdp_bio.parquet"
    assert main(["ingest", str(logs), "--task", "wmdp_bio", "--out", str(matrix), "--progress", "none"]) == 0
    # 2. build from the spec file
    build = tmp_path / "build" / "tinyWMDP_bio"
    assert main(["build", "--spec", str(SPEC), "--responses", str(matrix), "--content", f"test={content}",
                 "--anchors", str(K), "--release-version", "1.0.0", "--repo-id", "tinyOrg/tinyWMDP_bio", "--out", str(build),
                 "--quiet"]) == 0
    man = read_manifest(build)
    assert man["name"] == "tinyWMDP_bio" and man["spec"]["name"] == "tinyWMDP_bio"
    rows = pd.read_parquet(build / "default" / "test-00000-of-00001.parquet")
    est = TinyEstimator.load(build)
    assert list(rows.columns) == ["item_id", "question", "choices", "answer", "input_formatted"]
    assert rows["item_id"].tolist() == est.anchor_ids and len(rows) == K
    j = int(rows["item_id"][0])
    assert rows["input_formatted"][0] == (
        "The following are multiple choice questions (with answers) about biology.\n"
        f"{_question(j)}\nA. agent {j}-a\nB. agent {j}-b\nC. agent {j}-c\nD. agent {j}-d\nAnswer:")
    card = (build / "README.md").read_text()
    assert "license: mit" in card and "@article{li2024wmdp" in card and "--include_path" in card
    assert (build / "lm_eval" / "tinyWMDP_bio.yaml").is_file()
    # 3. a new model's lm-eval logs of the tiny task -> its estimate
    y = (np.random.default_rng(2).random(K) < 0.5).astype(float)
    _tiny_task_logs(tmp_path / "results", "org/new-model", rows, y)
    out = tmp_path / "estimates.csv"
    assert main(["estimate", str(build), str(tmp_path / "results"), "--out", str(out)]) == 0
    got = pd.read_csv(out)
    assert got["model"].tolist() == ["org/new-model"]
    assert got["score"][0] == pytest.approx(est.estimate(y)["score"])
    # 4. release it: a release config naming the spec, --push to the Hub; consumers at the tag
    cfg = _spec_release_config(tmp_path / "release", matrix, content)
    rel = tmp_path / "rel"
    with HubServer() as hub:
        env = hub.client_env(tmp_path / "hf_home")
        got = run_in_client(env, hub_clients.release_then_load,
                            [["--config", str(cfg), "--release-version", "1.0.0", "--out", str(rel), "--push", "--quiet"]],
                            "tinyOrg/tinyWMDP_bio", "v1.0.0").result
        assert got["codes"] == [0]
        assert hub.refs("tinyOrg/tinyWMDP_bio")["tags"].keys() == {"v1.0.0"}
    # the release built the same folder as the CLI (same inputs and seed)
    assert (rel / "tinyWMDP_bio" / "manifest.json").read_bytes() == (build / "manifest.json").read_bytes()
    assert got["columns"] == ["item_id", "question", "choices", "answer", "input_formatted"]
    assert [r["item_id"] for r in got["rows"]] == got["anchors"] == est.anchor_ids
    assert "lm_eval/tinyWMDP_bio.yaml" in got["files"] and "manifest.json" in got["files"]
    assert got["score"] == pytest.approx(est.estimate([1.0] * K)["score"])


def test_a_spec_file_is_checked(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "tinyMMLU"\nlicense = "mit"\ncitation = "@misc{x, title={X}}"\n')
    assert main(["build", "--spec", str(bad), "--responses", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "'tinyMMLU' is a registered tiny benchmark" in capsys.readouterr().err
    bad.write_text('name = "tinyX"\nlicense = "mit"\ncitation = "@misc{x, title={X}}"\nprompt = "{{ q "\n')
    assert main(["build", "--spec", str(bad), "--responses", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "prompt: not a valid jinja2 template" in capsys.readouterr().err
    bad.write_text('name = "tinyX"\nlicense = "mit"\ncitation = "@misc{x, title={X}}"\nlicence = "mit"\n')
    assert main(["build", "--spec", str(bad), "--responses", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "unknown key(s) ['licence']" in capsys.readouterr().err
    assert main(["build", "tinyMMLU", "--spec", str(SPEC), "--responses", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "NAME or --spec FILE.toml (one of them)" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_the_spec_item_id_column_must_be_in_the_content(inputs, tmp_path, capsys):
    tmp, _, content, m = inputs
    matrix = tmp_path / "m.parquet"
    m.write(matrix)
    other = tmp_path / "c.parquet"
    pd.read_parquet(content).rename(columns={"item_id": "id"}).to_parquet(other)
    assert main(["build", "--spec", str(SPEC), "--responses", str(matrix), "--content", f"test={other}",
                 "--out", str(tmp_path / "o"), "--quiet"]) == 2
    assert "the content has no column 'item_id' (the spec's item_id_column)" in capsys.readouterr().err


LM_EVAL_PYTHON = os.environ.get("TINYBENCH_LM_EVAL_PYTHON")


def _lm_eval(hub, tmp_path, folder, out, *extra):
    proc = subprocess.run([LM_EVAL_PYTHON, "-m", "lm_eval", "--model", "dummy", "--include_path",
                           str(folder / "lm_eval"), "--tasks", "tinyWMDP_bio", "--log_samples",
                           "--output_path", str(out), *extra],
                          env=hub.client_env(tmp_path / "hf_home2"), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [results] = list(out.rglob("results_*.json"))
    return json.loads(results.read_text())["results"]["tinyWMDP_bio"], proc.stdout


@pytest.mark.slow
@pytest.mark.skipif(not LM_EVAL_PYTHON, reason="set TINYBENCH_LM_EVAL_PYTHON to a Python with lm-evaluation-harness")
def test_lm_eval_runs_the_released_task_file(inputs, tmp_path):
    """lm-eval itself (its dummy model) runs the task file of the release from the loopback Hub: its
    results table shows the estimate of the release's estimator (`score` and its interval), the same
    as `estimate` on its logs, and the plain anchor mean beside it; with --limit too."""
    tmp, _, content, m = inputs
    matrix = tmp_path / "m.parquet"
    m.write(matrix)
    cfg = _spec_release_config(tmp_path / "release", matrix, content)
    rel = tmp_path / "rel"
    with HubServer() as hub:
        run_in_client(hub.client_env(tmp_path / "hf_home"), hub_clients.release_cli,
                      [["--config", str(cfg), "--release-version", "1.0.0", "--out", str(rel), "--push", "--quiet"]],
                      fake=False)
        folder = rel / "tinyWMDP_bio"
        table, stdout = _lm_eval(hub, tmp_path, folder, tmp_path / "results")
        limited, _ = _lm_eval(hub, tmp_path, folder, tmp_path / "limited", "--limit", "7")
    [samples] = list((tmp_path / "results").rglob("samples_tinyWMDP_bio_*.jsonl"))
    recs = [json.loads(line) for line in samples.read_text().splitlines()]
    rows = pd.read_parquet(folder / "default" / "test-00000-of-00001.parquet")
    assert sorted(r["arguments"]["gen_args_0"]["arg_0"] for r in recs) == sorted(rows["input_formatted"])
    est = TinyEstimator.load(folder)
    for got, logs, n in ((table, tmp_path / "results", K), (limited, tmp_path / "limited", 7)):
        frame, _ = estimate_from_logs(folder, logs)
        assert frame["n_answered"][0] == n
        # the table's numbers are the estimate of the logged rows (lm-eval rounds nothing in the JSON)
        assert got["score,none"] == pytest.approx(frame["score"][0], abs=1e-12)
        assert got["score_ci_low,none"] == pytest.approx(frame["ci_low"][0], abs=1e-12)
        assert got["score_ci_high,none"] == pytest.approx(frame["ci_high"][0], abs=1e-12)
        [samples] = list(logs.rglob("samples_tinyWMDP_bio_*.jsonl"))
        recs = [json.loads(line) for line in samples.read_text().splitlines()]
        by_row = {r["doc"]["item_id"]: float(r["anchor_mean"]) for r in recs}
        assert got["anchor_mean,none"] == pytest.approx(np.mean(list(by_row.values())))
        # acc as lm-eval computes it: the argmax of the choices' log-likelihoods is the answer
        for r in recs:
            lls = [float(x[0]) for x in r["filtered_resps"]]
            assert r["anchor_mean"] == float(int(np.argmax(lls)) == int(r["doc"]["answer"]))
        assert got["score,none"] == pytest.approx(est.estimate(by_row)["score"], abs=1e-12)
    assert limited["score_ci_high,none"] - limited["score_ci_low,none"] > table["score_ci_high,none"] - table[
        "score_ci_low,none"]
    for name in ("score", "score_ci_low", "score_ci_high", "anchor_mean"):
        assert f"|{name}" in stdout.replace(" ", "")  # the rows of lm-eval's printed table


def _documented_recipe() -> tuple[list[str], list[str]]:
    """docs/ADAPTIVE.md's lm-eval recipe: the `hf download` line and the `python docs/adaptive_lm_eval.py` line."""
    import shlex

    text = (ROOT / "docs" / "ADAPTIVE.md").read_text(encoding="utf-8")
    block = text[text.index("## With lm-evaluation-harness"):]
    block = block[block.index("```bash") + len("```bash"):]
    lines = block[:block.index("```")].strip().splitlines()
    download = next(ln for ln in lines if ln.startswith("path=$(hf download "))
    recipe = next(ln for ln in lines if ln.startswith("python docs/adaptive_lm_eval.py "))
    return shlex.split(download[len("path=$("):-1]), shlex.split(recipe)


@pytest.mark.slow
@pytest.mark.skipif(not LM_EVAL_PYTHON, reason="set TINYBENCH_LM_EVAL_PYTHON to a Python with lm-evaluation-harness")
def test_adaptive_lm_eval_recipe_runs_as_documented(inputs, tmp_path):
    """docs/ADAPTIVE.md's recipe, its two commands as written there (the release downloaded with `hf download`,
    then docs/adaptive_lm_eval.py), run by lm-eval itself (its dummy model instead of `hf`, the tinyOrg release of
    the loopback Hub instead of tinyBenchmarks'): every batch is evaluated through lm-eval's Python API from the
    Hub, and the session ends with the budget asked and an interval."""
    tmp, _, content, m = inputs
    matrix = tmp_path / "m.parquet"
    m.write(matrix)
    cfg = _spec_release_config(tmp_path / "release", matrix, content)
    download, recipe = _documented_recipe()
    assert download[:2] == ["hf", "download"] and download[2] == "tinyBenchmarks/tinyWMDP_bio"
    assert recipe[:3] == ["python", "docs/adaptive_lm_eval.py", "$path"] and "--model" in recipe
    download[2] = "tinyOrg/tinyWMDP_bio"  # our loopback Hub's organisation
    budget, batch = 24, 8
    args = recipe[3:]
    args[args.index("--model") + 1] = "dummy"  # lm-eval's own stand-in model (no GPU, no weights)
    i = args.index("--model-args")
    del args[i:i + 2]
    args[args.index("--budget") + 1], args[args.index("--batch") + 1] = str(budget), str(batch)
    hf = str(Path(LM_EVAL_PYTHON).with_name("hf"))
    with HubServer() as hub:
        run_in_client(hub.client_env(tmp_path / "hf_home"), hub_clients.release_cli,
                      [["--config", str(cfg), "--release-version", "1.0.0", "--out", str(tmp_path / "rel"), "--push",
                        "--quiet"]], fake=False)
        env = hub.client_env(tmp_path / "hf_home2")
        got = subprocess.run([hf, *download[1:]], env=env, capture_output=True, text=True, timeout=300)
        assert got.returncode == 0, got.stderr[-3000:]
        path = Path(got.stdout.strip().splitlines()[-1])
        assert (path / "adaptive.py").is_file() and (path / "lm_eval" / "tinyWMDP_bio_pool.yaml").is_file()
        run = subprocess.run([LM_EVAL_PYTHON, str(ROOT / recipe[1]), str(path), *args], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=900)
        assert run.returncode == 0, run.stderr[-3000:]
    progress = [ln for ln in run.stdout.splitlines() if " asked: score " in ln]
    assert [int(ln.split()[0]) for ln in progress] == list(range(batch, budget + 1, batch))
    result = json.loads(run.stdout[run.stdout.index("{"):])
    assert result["done"] and result["n_asked"] == budget and result["n_used"] == budget
    assert 0 <= result["ci_low"] <= result["score"] <= result["ci_high"] <= 1
    assert not (path / "__pycache__").exists()  # nothing written into the downloaded release


@pytest.mark.slow
@pytest.mark.skipif(not LM_EVAL_PYTHON, reason="set TINYBENCH_LM_EVAL_PYTHON to a Python with lm-evaluation-harness")
def test_the_readme_lm_eval_path_runs_as_written(inputs, tmp_path):
    """The README's "Evaluate a model with a released tiny benchmark", its three commands as written there
    (`hf download` of a release, `lm_eval` on its task file, `estimate` on the logs), against the loopback Hub
    (tinyOrg instead of tinyBenchmarks) with lm-eval's dummy model instead of `hf`."""
    from helpers.markdown import block, shell_commands

    tmp, _, content, m = inputs
    matrix = tmp_path / "m.parquet"
    m.write(matrix)
    cfg = _spec_release_config(tmp_path / "release", matrix, content)
    download, lm_eval, estimate = shell_commands(block("Evaluate a model with a released tiny benchmark", "bash"))
    assert download[:3] == ["hf", "download", "tinyBenchmarks/tinyWMDP_bio"] and lm_eval[0] == "lm_eval"
    assert estimate[:4] == ["python", "-m", "tinybench_builder", "estimate"]
    folder = download[download.index("--local-dir") + 1]
    assert lm_eval[lm_eval.index("--include_path") + 1] == f"{folder}/lm_eval" and estimate[4] == folder
    download[2] = "tinyOrg/tinyWMDP_bio"  # our loopback Hub's organisation
    lm_eval[lm_eval.index("--model") + 1] = "dummy"  # lm-eval's own stand-in model (no GPU, no weights)
    i = lm_eval.index("--model_args")
    del lm_eval[i:i + 2]
    with HubServer() as hub:
        run_in_client(hub.client_env(tmp_path / "hf_home"), hub_clients.release_cli,
                      [["--config", str(cfg), "--release-version", "1.0.0", "--out", str(tmp_path / "rel"), "--push",
                        "--quiet"]], fake=False)
        env = hub.client_env(tmp_path / "hf_home2")
        for argv in ([str(Path(LM_EVAL_PYTHON).with_name("hf")), *download[1:]],
                     [LM_EVAL_PYTHON, "-m", "lm_eval", *lm_eval[1:]]):
            run = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
            assert run.returncode == 0, (argv, run.stderr[-3000:])
        est = subprocess.run([sys.executable, *estimate[1:]], env={**env, "PYTHONPATH": str(ROOT)}, cwd=tmp_path,
                             capture_output=True, text=True, timeout=300)
        assert est.returncode == 0, est.stderr[-3000:]
    frame, _ = estimate_from_logs(tmp_path / folder, tmp_path / "results")
    assert frame["n_answered"][0] == K
    assert f"{frame['score'][0]:.4f}" in est.stdout, est.stdout  # the printed estimate is the logs' estimate
