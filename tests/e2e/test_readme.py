"""The README's snippets run as written: the quick start (ingest -> fit -> estimate), the Python
snippet next to the folder `fit` wrote, the adaptive command, every `ingest` example of "Reading
evaluation outputs" and the build of "Your own benchmark", each on small fixture inputs named as in
the README (or the example data the repository ships), in a fresh process from a scratch folder.
(tests/project/test_readme_front_page.py, in the fast loop: every other command parses, the README stays a
front page, its accuracy summary is docs/BENCHMARKS.md's.)

The commands are taken from README.md itself (a `python -m tinybench_builder ...` line is run with this
interpreter), so editing a snippet changes what is run here.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from helpers.builds import ROOT
from helpers.markdown import block as _block, shell_commands as _shell_commands
from helpers.sources import (alpaca_annotations, helm_stat, lm_record, lm_results, write_alpaca, write_helm_run,
                             write_legacy_pickle, write_lm_eval_run, write_v1_details, write_v1_results)

pytestmark = pytest.mark.slow  # end to end: each test takes seconds to minutes

BENCHMARKS = ROOT / "docs" / "BENCHMARKS.md"


def _commands(code: str) -> list[list[str]]:
    """The `python -m tinybench_builder ...` lines of a bash block, comments removed, as argv lists."""
    out = []
    for line in code.splitlines():
        line = line.split("  #", 1)[0].strip()
        if line.startswith("python -m tinybench_builder "):
            out.append([sys.executable] + shlex.split(line)[1:])
    return out


def _env() -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    env.pop("HF_TOKEN", None)
    return env


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, (argv, proc.stdout[-2000:], proc.stderr[-3000:])
    return proc


# --------------------------------------------------------------------------- fixtures named as in the README
def _lm_eval_outputs(root: Path, n_models: int = 36, n_docs: int = 240) -> None:
    """wmdp_bio (0/1 acc, from a 1-D IRT model so that the fit has something to find) and gsm8k
    (two filters) for ``n_models`` models, lm-eval 0.4.7 layout."""
    rng = np.random.default_rng(0)
    theta, b = rng.normal(size=n_models), rng.normal(size=n_docs)
    p = 1 / (1 + np.exp(-(theta[:, None] - b[None, :])))
    y = (rng.random(p.shape) < p).astype(float)
    for k in range(n_models):
        model = f"org/model-{k}"
        bio = [lm_record(i, float(y[k, i]), version="0.4.7") for i in range(n_docs)]
        gsm = [lm_record(i, float((i + k) % 2), "exact_match", version="0.4.7", filter=f)
               for i in range(8) for f in ("strict-match", "flexible-extract")]
        results = lm_results(model, {"wmdp_bio": n_docs, "gsm8k": 8},
                             filters={"gsm8k": ["strict-match", "flexible-extract"]})
        write_lm_eval_run(root, model, {"wmdp_bio": bio, "gsm8k": gsm}, results=results)


def _new_models(path: Path, n_docs: int = 240) -> None:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame((rng.random((3, n_docs)) < 0.6).astype(float), columns=[str(i) for i in range(n_docs)],
                         index=pd.Index(["new-a", "new-b", "new-c"], name="model"))
    frame.to_parquet(path)


def _ingest_inputs(d: Path) -> None:
    """Every input of the README's ingest examples, small."""
    _lm_eval_outputs(d / "lm_eval_outputs", n_models=3, n_docs=6)
    ts = "2023-09-18T03-05-58.053951"
    for k in range(2):
        model_dir = d / "details" / f"details_org__m{k}"
        write_v1_details(model_dir, "harness|hendrycksTest-anatomy|5", ts, [1.0, float(k), 0.0])
        write_v1_results(model_dir, ts, f"org/m{k}")
        bbh = {f"leaderboard_bbh_{s}": [lm_record(i, 0.0, "acc", extra={"acc_norm": float((i + k) % 2)})
                                        for i in range(3)] for s in ("navigate", "snarks")}
        write_lm_eval_run(d / "v2_details", f"org/m{k}", bbh, "2024-06-16T22-34-46.256992",
                          results=lm_results(f"org/m{k}", {t: 3 for t in bbh}, metric="acc_norm",
                                             group_subtasks={"leaderboard_bbh": list(bbh)}))
        write_alpaca(d / "alpaca_eval" / "results", f"org/m{k}",
                     alpaca_annotations(f"org/m{k}", ["q one", "q two", "q three"], [2.0, 1.0, 1.5 + k / 4]))
        stats = [{"instance_id": f"id{i}", "train_trial_index": 0, "stats": [helm_stat("exact_match", float(i == k))]}
                 for i in range(3)]
        write_helm_run(d / "benchmark_output" / "runs" / "v1.0.0", f"mmlu:subject=anatomy,model=org_m{k}", f"org/m{k}",
                       ["mmlu"], {"subject": "anatomy"}, stats)
    pd.DataFrame({"item_id": ["0", "1", "2"], "instruction": ["q one", "q two", "q three"]}).to_parquet(
        d / "alpaca_eval.parquet", index=False)
    write_legacy_pickle(d / "wmdp_data.pkl", ["a", "b"], {"wmdp_bio": np.eye(2), "wmdp_cyber": np.ones((3, 2))})
    pd.DataFrame({"model": ["x", "y"], "q1": [1.0, 0.0], "q2": [0.5, ""]}).to_csv(d / "old_scores.csv", index=False)
    pd.DataFrame({"model": ["z", "z"], "item": ["q1", "q3"], "score": [1.0, 0.0]}).to_parquet(
        d / "more_models.parquet", index=False)


# --------------------------------------------------------------------------- tests
@pytest.mark.slow
def test_quick_start_then_the_python_snippet(tmp_path):
    commands = _commands(_block("Quick start: fit and estimate from a score matrix", "bash"))
    assert [c[3] for c in commands] == ["ingest", "fit", "estimate"]
    _lm_eval_outputs(tmp_path / "lm_eval_outputs")
    _new_models(tmp_path / "new_models.parquet")
    for argv in commands:
        _run(argv, tmp_path)
    estimates = pd.read_csv(tmp_path / "estimates.csv")
    assert list(estimates["model"]) == ["new-a", "new-b", "new-c"]
    assert estimates["score"].between(0, 1).all() and (estimates["ci_low"] <= estimates["ci_high"]).all()

    # the adaptive-evaluation command, on the folder and the table of the quick start
    adaptive = _commands(_block("Adaptive evaluation: all items, asked where they tell most", "bash"))
    assert [c[3] for c in adaptive] == ["adaptive"]
    proc = _run(adaptive[0], tmp_path)
    assert "60 asked, score" in proc.stderr and proc.stdout.count("True") == 3  # three models, each done

    snippet = _block("Quick start: fit and estimate from a score matrix", "python", "TinyEstimator")
    (tmp_path / "snippet.py").write_text(snippet + "\nprint('SNIPPET-OK', k, A.shape)\n", encoding="utf-8")
    env = _env()
    env.pop("PYTHONPATH")  # nothing but the folder's estimator.py
    proc = subprocess.run([sys.executable, "snippet.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and "SNIPPET-OK 100 (240," in proc.stdout, proc.stderr


def test_every_ingest_example_runs(tmp_path):
    code = _block("Reading evaluation outputs (`tinybench-builder ingest`)", "bash", "wmdp_data.pkl")
    commands = _commands(code)
    assert len(commands) >= 8
    _ingest_inputs(tmp_path)
    for argv in commands:
        proc = _run(argv, tmp_path)
        out = argv[argv.index("--out") + 1]
        table = pd.read_parquet(tmp_path / out)
        assert len(table) >= 1 and table.shape[1] >= 1, (argv, proc.stdout)
    assert pd.read_parquet(tmp_path / "gsm8k.parquet").shape == (3, 8)
    assert sorted(pd.read_parquet(tmp_path / "merged.parquet").index) == ["x", "y", "z"]


def test_the_bench_command_runs_as_written(monkeypatch):
    """`python -m benchmarks.ingest_speed --models 500` (docs/BENCHMARKS.md) needs no other option: a
    temporary work folder is made and removed (the timing itself is replaced here)."""
    text = BENCHMARKS.read_text(encoding="utf-8")
    assert "`python -m benchmarks.ingest_speed`, or `--models 500`" in text
    from benchmarks import ingest_speed

    seen = {}

    def fake_bench(args, engines, workdir):
        seen.update(models=args.models, workdir=workdir, existed=workdir.is_dir())
        return 0

    monkeypatch.setattr(ingest_speed, "_bench", fake_bench)
    assert ingest_speed.main(["--models", "500"]) == 0
    assert seen["models"] == 500 and seen["existed"] and not seen["workdir"].exists()


@pytest.mark.slow
def test_your_own_benchmark_build_runs_on_the_shipped_example(tmp_path):
    """The `build` of "Your own benchmark: build and release", on the example data of examples/wmdp_bio/
    (relative paths as written, from a scratch folder holding copies of specs/ and examples/)."""
    import shutil

    code = _block("Your own benchmark: build and release", "bash", "--spec")
    builds = [c for c in _shell_commands(code) if c[:4] == ["python", "-m", "tinybench_builder", "build"]]
    assert len(builds) == 1
    for folder in ("specs", "examples"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    argv = [sys.executable, *builds[0][1:]]
    _run(argv, tmp_path)
    out = tmp_path / argv[argv.index("--out") + 1]
    assert (out / "manifest.json").is_file() and (out / "lm_eval" / "tinyWMDP_bio.yaml").is_file()
    rows = pd.read_parquet(out / "default" / "test-00000-of-00001.parquet")
    assert len(rows) == 100 and list(rows.columns)[0] == "item_id"
