"""One writer: the same inputs give the same folder bytes whichever way the build is started (the
Python API, `tinybench-builder build`, a release) and re-rendering a finished folder's card changes nothing.
(Two identical builds, the second replacing the first: tests/dataset/test_dataset.py.)"""

from __future__ import annotations

import shutil

import pytest

from tinybench_builder.dataset import cards

from tinybench_builder.release import publish
from tinybench_builder.cli.main import main
from tinybench_builder.dataset.options import BuildOptions
from tinybench_builder.model.options import FitOptions
from tinybench_builder.dataset.build import build_benchmark
from tinybench_builder.release.config import load_config
from helpers.builds import all_bytes, write_fixture
from helpers.folders import write_config

pytestmark = pytest.mark.slow  # end to end: each test takes seconds to minutes


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return write_fixture("tinyGSM8k", tmp_path_factory.mktemp("identity") / "inputs")


def test_api_and_cli_write_the_same_bytes(inputs, tmp_path):
    responses, content = inputs
    options = BuildOptions(anchors=8, seed=2, version="1.2.0", repo_id="tinyOrg/tinyGSM8k",
                           fit=FitOptions(n_dims=1, n_seeds=2))
    api = build_benchmark("tinyGSM8k", responses, content, options, out=tmp_path / "api")
    argv = ["build", "tinyGSM8k", "--responses", responses, "--anchors", "8", "--seed", "2", "--dims", "1",
            "--kmeans-seeds", "2", "--release-version", "1.2.0", "--repo-id", "tinyOrg/tinyGSM8k", "--quiet",
            "--out", str(tmp_path / "cli")]
    for split, path in content.items():
        argv += ["--content", f"{split}={path}"]
    assert main(argv) == 0
    assert all_bytes(tmp_path / "cli") == all_bytes(api)
    # the card rendered from the plan in memory is the card rendered from the written folder
    again = tmp_path / "again"
    shutil.copytree(api, again)
    cards.write_card(again)
    assert all_bytes(again) == all_bytes(api)


@pytest.mark.slow
def test_a_release_writes_what_the_api_writes(inputs, tmp_path, monkeypatch):
    """The release builds with the registry's fit settings; so does this API call."""
    monkeypatch.delenv("HF_TOKEN", raising=False)
    responses, content = inputs
    cfg = write_config(tmp_path, f"""\
        [release]
        org = "tinyOrg"

        [[benchmark]]
        name = "tinyGSM8k"
        responses = "{responses}"
        content = {{ test = "{content['test']}", train = "{content['train']}" }}
        anchors = 8
        seed = 1
        """)
    summary = publish.run_release(load_config(cfg), "2.0.0", out=tmp_path / "release", previous="none", progress=False)
    released = tmp_path / "release" / "tinyGSM8k"
    assert summary["benchmarks"]["tinyGSM8k"]["folder"] == str(released)
    api = build_benchmark("tinyGSM8k", responses, content,
                          BuildOptions(anchors=8, seed=1, version="2.0.0", repo_id="tinyOrg/tinyGSM8k", tag="v2.0.0"),
                          out=tmp_path / "api")
    assert all_bytes(released) == all_bytes(api)
