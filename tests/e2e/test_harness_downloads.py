"""Every command of a card's harness sections, as written, on a release downloaded from the Hub (issue 28).

Releases of tinyWMDP_bio (v1.0.0, and v2.0.0 with another design) and of a second benchmark
(tinyWMDP_chem, the same spec under another name) are pushed to the loopback Hub; a consumer
downloads one with the real ``hf download`` (the Hub cache, whose files are symbolic links into
``blobs/``, or ``--local-dir``) and runs the bash block of the downloaded card's *lm-evaluation-harness*
or *lighteval* section line by line in bash, the model replaced by a stand-in (lm-eval's ``dummy``;
for lighteval, ``lighteval custom`` with tests/helpers/lighteval_model.py, log-likelihoods from a
hash of the request) and the ``pip install`` line checked rather than run. Then:

* the harness's results show ``score``, ``score_ci_low``, ``score_ci_high`` and ``anchor_mean``, and
  ``tinybench-builder estimate`` on the logs gives the same numbers to the last digit (also for a
  subset: ``--samples``, ``--limit``, ``--max-samples``), naming the model the results file names;
* nothing is written into the downloaded release (no ``__pycache__``: the runs have no
  ``PYTHONDONTWRITEBYTECODE`` of their own, the card's command sets it; the manifest still verifies);
* two releases in one lm-eval run each use their own functions module and estimator;
* the card's Python blocks (load, estimate, adaptive) run as written on the Hub cache.

lm-eval needs ``TINYBENCH_LM_EVAL_PYTHON`` (a Python with lm-eval 0.4.13), lighteval
``TINYBENCH_LIGHTEVAL_PYTHON`` (lighteval 0.13.0, CONTRIBUTING.md says how to make it); each test
skips without its harness.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tinybench_builder.estimate.harness_logs import estimate_from_logs
from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.layout import verify_manifest
from tinybench_builder.read.simulate import simulate_responses
from helpers import hub_clients
from helpers.builds import ROOT
from helpers.client import run_in_client
from helpers.folders import spec_release_config
from helpers.hub import HubServer

pytestmark = pytest.mark.slow

LM_EVAL_PYTHON = os.environ.get("TINYBENCH_LM_EVAL_PYTHON")
LIGHTEVAL_PYTHON = os.environ.get("TINYBENCH_LIGHTEVAL_PYTHON")
needs_lm_eval = pytest.mark.skipif(not LM_EVAL_PYTHON, reason="set TINYBENCH_LM_EVAL_PYTHON to a Python with "
                                                               "lm-evaluation-harness (0.4.13)")
needs_lighteval = pytest.mark.skipif(not LIGHTEVAL_PYTHON, reason="set TINYBENCH_LIGHTEVAL_PYTHON to a Python with "
                                                                  "lighteval 0.13.0 (CONTRIBUTING.md)")
HELPERS = Path(__file__).resolve().parents[1] / "helpers"
N_ITEMS, K = 60, 20
REPO = "tinyOrg/tinyWMDP_bio"


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """The loopback Hub with tinyWMDP_bio v1.0.0 and v2.0.0 (another seed: another design) and
    tinyWMDP_chem v1.0.0, released with the real builder and ``release --push``."""
    tmp = tmp_path_factory.mktemp("releases")
    m, _ = simulate_responses(n_models=30, n_items=N_ITEMS, n_dims=1, seed=3)
    m.write(tmp / "m.parquet")
    pd.DataFrame({"item_id": [str(j) for j in range(N_ITEMS)],
                  "question": [f"Which agent {j} spreads by aerosol?" for j in range(N_ITEMS)],
                  "choices": [[f"agent {j}-{c}" for c in "abcd"] for j in range(N_ITEMS)],
                  "answer": [j % 4 for j in range(N_ITEMS)]}).to_parquet(tmp / "q.parquet")
    bio = ROOT / "specs" / "tinyWMDP_bio.toml"
    chem = tmp / "tinyWMDP_chem.toml"  # a second benchmark: the same spec under another name and task
    chem.write_text(bio.read_text().replace('name = "tinyWMDP_bio"', 'name = "tinyWMDP_chem"')
                    .replace('task = "tinyWMDP_bio"', 'task = "tinyWMDP_chem"'))
    runs = []
    for spec, version, seed in ((bio, "1.0.0", 0), (bio, "2.0.0", 1), (chem, "1.0.0", 0)):
        cfg = spec_release_config(tmp, spec, tmp / "m.parquet", tmp / "q.parquet", anchors=K, seed=seed,
                                  name=f"{spec.stem}-{version}.toml")
        runs.append(["--config", str(cfg), "--release-version", version, "--out", str(tmp / f"{spec.stem}-{version}"),
                     "--push", "--quiet"])
    with HubServer() as server:
        got = run_in_client(server.client_env(tmp / "hf_home"), hub_clients.release_cli, runs, fake=False, timeout=900)
        assert got.result["codes"] == [0, 0, 0]
        yield server


def _card(hub, tmp_path, repo: str = REPO, tag: str = "v1.0.0") -> str:
    """The card of a release as the Hub serves it (fetched into a cache of its own: the consumer's stays empty)."""
    env = hub.client_env(tmp_path / "hf_card")
    return (Path(run_in_client(env, hub_clients.snapshots, repo, [tag]).result[tag]) / "README.md").read_text()


def _block(card: str, section: str) -> list[str]:
    """The commands of the first bash block of a card's section, continuation lines joined."""
    text = card[card.index(f"### {section}\n"):]
    text = text[text.index("```bash\n") + len("```bash\n"):]
    return text[:text.index("```")].replace("\\\n", " ").strip().splitlines()


def _consumer(hub, tmp_path, python: str) -> dict:
    """A consumer's environment: the loopback Hub, an empty cache, the harness's commands (``hf``,
    ``lm_eval``/``lighteval``) and this checkout's ``python`` on PATH, no bytecode switch of its own."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    wrapper = bindir / "python"  # a wrapper, not a link: a link to a venv's python runs as the base Python
    wrapper.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} \"$@\"\n")
    wrapper.chmod(0o755)
    env = hub.client_env(tmp_path / "hf_consumer")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPATH", None)
    env.update(HOME=str(tmp_path / "home"),
               PATH=os.pathsep.join((str(bindir), str(Path(python).parent), env.get("PATH", ""))))
    return env


def _run_block(lines: list[str], env: dict, cwd: Path) -> subprocess.CompletedProcess:
    """``lines`` in one bash, in order (``set -e``): the card's block as a consumer pastes it."""
    script = cwd / "card.sh"
    script.write_text("set -euo pipefail\n" + "\n".join(lines) + "\necho \"PATH_OF_RELEASE=$path\"\n")
    return subprocess.run(["bash", str(script)], env=env, cwd=cwd, capture_output=True, text=True, timeout=1500)


def _release_path(proc) -> Path:
    return Path(next(ln for ln in proc.stdout.splitlines() if ln.startswith("PATH_OF_RELEASE="))
                .split("=", 1)[1])


def _nothing_written(cache: Path, path: Path) -> None:
    """No bytecode anywhere in the consumer's Hub cache or the release; the release verifies."""
    assert not [p for p in (*cache.rglob("__pycache__"), *path.rglob("__pycache__"))]
    assert verify_manifest(path) == []


def _lm_eval_commands(card: str, extra: str = "", local_dir: Path | None = None) -> list[str]:
    lines = _block(card, "lm-evaluation-harness")
    install = lines.pop(0)
    assert install.startswith("pip install ") and '"lm-eval[hf]"' in install and "numpy scipy" in install
    out = []
    for line in lines:
        if line.startswith("path=$(hf download ") and local_dir is not None:
            line = line[:-1] + f" --local-dir {shlex.quote(str(local_dir))})"
        if " lm_eval " in f" {line}":
            assert "--model hf --model_args pretrained=<model>" in line
            line = line.replace("--model hf --model_args pretrained=<model>", "--model dummy") + extra
        out.append(line)
    return out


def _check_lm_eval_logs(path: Path, results: Path, proc, n: int, task: str = "tinyWMDP_bio") -> pd.DataFrame:
    """lm-eval's table = `estimate` on its logs (to the last digit); the model is the one the results name."""
    [res] = list(results.rglob("results_*.json"))
    table = json.loads(res.read_text())["results"][task]
    assert {"score,none", "score_ci_low,none", "score_ci_high,none", "anchor_mean,none"} <= set(table)
    frame, _ = estimate_from_logs(path, results, task=task)
    assert frame["n_answered"][0] == n
    assert table["score,none"] == frame["score"][0]
    assert table["score_ci_low,none"] == frame["ci_low"][0] and table["score_ci_high,none"] == frame["ci_high"][0]
    assert frame["model"].tolist() == ["dummy"]  # lm-eval's model type, not its random id of the folder
    printed = re.findall(r"^\s*dummy\s+([0-9.]+)\s", proc.stdout, flags=re.M)  # the card's `estimate` line
    assert printed and float(printed[-1]) == pytest.approx(frame["score"][0], abs=5e-5), proc.stdout[-2000:]
    return frame


@needs_lm_eval
def test_lm_eval_card_commands_in_the_hub_cache(hub, tmp_path):
    """The issue's failure: in the Hub cache lm-eval looked for the functions module beside the blob
    (ImportError); the card's command, as written, now runs and estimates, and writes nothing into the
    release."""
    env = _consumer(hub, tmp_path, LM_EVAL_PYTHON)
    proc = _run_block(_lm_eval_commands(_card(hub, tmp_path)), env, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    path = _release_path(proc)
    assert path.is_relative_to(tmp_path / "hf_consumer") and (path / "estimator.py").is_symlink()
    _check_lm_eval_logs(path, tmp_path / "results", proc, K)
    _nothing_written(tmp_path / "hf_consumer", path)


@needs_lm_eval
def test_lm_eval_card_commands_with_local_dir_and_samples(hub, tmp_path):
    """``hf download --local-dir`` (real files) and a subset of the rows (``--samples``): the estimate of
    the rows asked, the same in lm-eval's table and from `estimate`."""
    env = _consumer(hub, tmp_path, LM_EVAL_PYTHON)
    rows = [0, 2, 3, 5, 8, 13, 19]
    extra = " --samples " + shlex.quote(json.dumps({"tinyWMDP_bio": rows}))
    proc = _run_block(_lm_eval_commands(_card(hub, tmp_path), extra, tmp_path / "release"), env, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    path = _release_path(proc)
    assert path == tmp_path / "release" and not (path / "estimator.py").is_symlink()
    frame = _check_lm_eval_logs(path, tmp_path / "results", proc, len(rows))
    est = TinyEstimator.load(path)
    full = est.estimate(np.zeros(K))
    assert frame["ci_high"][0] - frame["ci_low"][0] > full["ci_high"] - full["ci_low"]  # fewer rows, a wider interval
    _nothing_written(tmp_path / "hf_consumer", path)


#: lm-eval's Python API over several include paths (its command line takes one), saving what
#: `lm_eval --log_samples --output_path results/` saves
_TWO_RELEASES = r"""
import json, sys
from lm_eval import simple_evaluate
from lm_eval.loggers import EvaluationTracker
from lm_eval.tasks import TaskManager

paths, tasks = json.loads(sys.argv[1]), sys.argv[2].split(",")
tracker = EvaluationTracker(output_path="results/")
res = simple_evaluate(model="dummy", tasks=tasks, task_manager=TaskManager(include_path=paths), log_samples=True,
                      limit=7, evaluation_tracker=tracker)
tracker.save_results_aggregated(results=res, samples=res["samples"])
for task in res["configs"]:
    tracker.save_results_samples(task_name=task, samples=res["samples"][task])
"""


@needs_lm_eval
def test_two_releases_in_one_lm_eval_run(hub, tmp_path):
    """tinyWMDP_bio v1.0.0, tinyWMDP_chem and tinyWMDP_bio v2.0.0 (another design) in one run from the Hub
    cache, the three ``lm_eval/`` on PYTHONPATH and as include paths (lm-eval runs the later of two
    tasks of one name: v2.0.0's): each task uses its own release's functions module and estimator.
    Under one shared module name v2.0.0's task would run with v1.0.0's rows table (refused as another
    release's rows) and the chem task would find no function of its own."""
    env = _consumer(hub, tmp_path, LM_EVAL_PYTHON)
    snaps = run_in_client(env, hub_clients.snapshots, REPO, ["v1.0.0", "v2.0.0"]).result  # the Hub cache
    chem = run_in_client(env, hub_clients.snapshots, "tinyOrg/tinyWMDP_chem", ["v1.0.0"]).result["v1.0.0"]
    paths = [Path(snaps["v1.0.0"]), Path(chem), Path(snaps["v2.0.0"])]
    dirs = [str(p / "lm_eval") for p in paths]
    script = tmp_path / "two.py"
    script.write_text(_TWO_RELEASES)
    proc = subprocess.run([LM_EVAL_PYTHON, str(script), json.dumps(dirs), "tinyWMDP_bio,tinyWMDP_chem"],
                          env={**env, "PYTHONPATH": os.pathsep.join(dirs), "PYTHONDONTWRITEBYTECODE": "1"},
                          cwd=tmp_path, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [res] = list((tmp_path / "results").rglob("results_*.json"))
    got = json.loads(res.read_text())
    assert got["configs"]["tinyWMDP_bio"]["metadata"]["dataset_version"] == "2.0.0"
    for path, task in ((paths[2], "tinyWMDP_bio"), (paths[1], "tinyWMDP_chem")):
        frame, _ = estimate_from_logs(path, tmp_path / "results", task=task)
        assert frame["n_answered"][0] == 7
        assert got["results"][task]["score,none"] == frame["score"][0]
        assert got["results"][task]["score_ci_low,none"] == frame["ci_low"][0]
    modules = {next((p / "lm_eval").glob("tiny_utils_*.py")).name for p in paths}
    assert len(modules) == 3
    _nothing_written(tmp_path / "hf_consumer", paths[0])


def _lighteval_commands(card: str, extra: str = "", local_dir: Path | None = None) -> list[str]:
    lines = _block(card, "lighteval")
    install = lines.pop(0)
    assert install.startswith('pip install "lighteval==0.13.0" "huggingface_hub<1" "xxhash<4" numpy scipy')
    out = []
    for line in lines:
        if line.startswith("path=$(hf download ") and local_dir is not None:
            line = line[:-1] + f" --local-dir {shlex.quote(str(local_dir))})"
        if " lighteval accelerate " in f" {line}":
            stand_in = f"lighteval custom stand-in {shlex.quote(str(HELPERS / 'lighteval_model.py'))}"
            assert 'lighteval accelerate "model_name=<model>"' in line
            line = line.replace('lighteval accelerate "model_name=<model>"', stand_in) + extra
        out.append(line)
    return out


def _lighteval_env(hub, tmp_path) -> dict:
    env = _consumer(hub, tmp_path, LIGHTEVAL_PYTHON)
    # no internet here: lighteval's own task list would fetch a file from GitHub (helpers/lighteval_site)
    env["PYTHONPATH"] = str(HELPERS / "lighteval_site")
    return env


def _check_lighteval_results(path: Path, results: Path, proc, n: int) -> pd.DataFrame:
    """lighteval's results = `estimate` on its details (to the last digit), the model named in the results."""
    [res] = list(results.rglob("results_*.json"))
    table = json.loads(res.read_text())["results"]["tinyWMDP_bio|0"]
    assert {"score", "score_ci_low", "score_ci_high", "anchor_mean"} <= set(table)
    assert "|tinyWMDP_bio:0|" in proc.stdout.replace(" ", "") and "|score_ci_high|" in proc.stdout.replace(" ", "")
    frame, _ = estimate_from_logs(path, results)
    assert frame["model"].tolist() == ["stand-in"] and frame["n_answered"][0] == n
    assert (table["score"], table["score_ci_low"], table["score_ci_high"]) == (
        frame["score"][0], frame["ci_low"][0], frame["ci_high"][0])
    [details] = list(results.rglob("details_tinyWMDP_bio|0_*.parquet"))
    recs = pd.read_parquet(details).to_dict("records")
    assert table["anchor_mean"] == pytest.approx(np.mean([r["metric"]["anchor_mean"] for r in recs]))
    printed = re.findall(r"^\s*stand-in\s+([0-9.]+)\s", proc.stdout, flags=re.M)  # the card's `estimate` line
    assert printed and float(printed[-1]) == pytest.approx(frame["score"][0], abs=5e-5), proc.stdout[-2000:]
    return frame


@needs_lighteval
def test_lighteval_card_commands_in_the_hub_cache(hub, tmp_path):
    """The card's lighteval block, as written, on the Hub cache: lighteval reads the rows of the snapshot,
    reports the release's estimate, and `estimate` reads its details to the same numbers."""
    env = _lighteval_env(hub, tmp_path)
    proc = _run_block(_lighteval_commands(_card(hub, tmp_path)), env, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    path = _release_path(proc)
    assert (path / "lighteval" / "tiny_tasks.py").is_symlink()
    _check_lighteval_results(path, tmp_path / "results", proc, K)
    _nothing_written(tmp_path / "hf_consumer", path)


@needs_lighteval
def test_lighteval_card_commands_with_local_dir_and_max_samples(hub, tmp_path):
    """``--local-dir`` and ``--max-samples 7`` (lighteval's shuffled first seven): the estimate of those rows."""
    env = _lighteval_env(hub, tmp_path)
    proc = _run_block(_lighteval_commands(_card(hub, tmp_path), " --max-samples 7", tmp_path / "release"), env,
                      tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    path = _release_path(proc)
    assert path == tmp_path / "release"
    _check_lighteval_results(path, tmp_path / "results", proc, 7)
    _nothing_written(tmp_path / "hf_consumer", path)


def test_the_cards_install_lines_name_what_each_path_needs(hub, tmp_path):
    """lm-eval's Hugging Face models need ``lm-eval[hf]``; lighteval 0.13.0 its working dependency pins;
    the file table calls a single task a task, not a group."""
    text = _card(hub, tmp_path)
    assert _block(text, "lm-evaluation-harness")[0] == 'pip install "lm-eval[hf]" numpy scipy'
    assert _block(text, "lighteval")[0] == 'pip install "lighteval==0.13.0" "huggingface_hub<1" "xxhash<4" numpy scipy'
    assert "| `lm_eval/tinyWMDP_bio.yaml` | lm-evaluation-harness task |" in text
    assert "group" not in re.search(r"\| `lm_eval/tinyWMDP_bio.yaml` \|[^\n]*", text).group(0)


def _python_blocks(card: str) -> str:
    """The ``python`` blocks of the card's *Usage* section before the harnesses, in order: one script."""
    usage = card[card.index("## Usage\n"):card.index("### lm-evaluation-harness\n")]
    return "\n".join(re.findall(r"```python\n(.*?)```", usage, flags=re.S))


def test_the_cards_python_blocks_run_as_written_on_the_hub_cache(hub, tmp_path):
    """The card's Python (load rows and estimator from one snapshot, estimate, adaptive evaluation) in a
    fresh Python with an empty Hub cache, ``my_model_score`` the only name the consumer supplies: it
    prints the estimates, and writes nothing into the snapshot (the estimator is imported from a file)."""
    env = _consumer(hub, tmp_path, sys.executable)
    script = tmp_path / "usage.py"
    script.write_text("def my_model_score(row):\n    return float(len(row['question']) % 2)\n\n"
                      + _python_blocks(_card(hub, tmp_path))
                      + "\nprint('PATH_OF_RELEASE=' + path)\n")
    proc = subprocess.run([sys.executable, str(script)], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    path = _release_path(proc)
    assert (path / "estimator.py").is_symlink()  # the Hub cache
    assert "'n_asked'" in proc.stdout and "'ci_low'" in proc.stdout  # s.result() of the adaptive session
    est = TinyEstimator.load(path)
    full = est.estimate(np.ones(K))
    assert f"{full['score']} {full['ci_low']} {full['ci_high']}" in proc.stdout  # the fixed split's estimate
    _nothing_written(tmp_path / "hf_consumer", path)
