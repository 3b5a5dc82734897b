"""One rule per shared parameter (tinybench_builder/params.py): the same refusal, the same words and exit
status 2 from the command line, a release config, a spec file, the options and the Python API."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tinybench_builder import params
from tinybench_builder.cli.main import main, release_main
from tinybench_builder.dataset import BuildOptions
from tinybench_builder.errors import BuildError, ConfigError, InputError, SpecError
from tinybench_builder.model import FitOptions, fit_estimator
from tinybench_builder.read import simulate_responses
from tinybench_builder.release import load_config
from helpers.folders import write_config

BIG_SEED = 1099511627776  # 2**40: the example


def test_int_rules_and_their_words():
    assert params.SEED.check(0) == 0 and params.SEED.check(np.int64(7)) == 7 and params.SEED.check(2**32 - 1) == 2**32 - 1
    for bad in (-1, 2**32, BIG_SEED, True, 1.0, "3", None):
        with pytest.raises(InputError, match=r"seed must be an integer from 0 to 2\*\*32 - 1"):
            params.SEED.check(bad)
    for bad in (0, -3, 2.0, False):
        with pytest.raises(InputError, match="anchors must be a positive integer"):
            params.ANCHORS.check(bad)
    assert params.DIMS.optional(None) is None and params.DIMS.check(3) == 3
    with pytest.raises(SpecError, match="here: anchors must be"):
        params.ANCHORS.check(0, "here: anchors", error=SpecError)
    assert params.ANCHORS.problem(5) is None and "positive integer" in params.ANCHORS.problem(0)


def test_choices_binarize_and_versions():
    assert params.DESIGN.check("kmeans") == "kmeans"
    with pytest.raises(InputError, match="design must be one of stratified, kmeans"):
        params.DESIGN.check("random")
    with pytest.raises(InputError, match="item_order must be one of upstream, harness_v1"):
        params.ITEM_ORDER.check("shuffled")
    assert params.check_binarize(True) is True and params.check_binarize(0.25) == 0.25
    for bad in (0, 1, 1.5, float("nan"), "0.5"):
        with pytest.raises(InputError, match="binarize must be"):
            params.check_binarize(bad)
    assert params.check_version("v1.2.0") == "1.2.0" and params.parse_version("10.0.3") == (10, 0, 3)
    for bad in ("1.0", "1.02.0", "1.0.0rc1", "1.0.0-rc1", "1.0.0.post1", "1!1.0.0", "1.0.0+local", "1.0.0.0", "x", ""):
        with pytest.raises(InputError, match=re.escape(f"invalid version {bad!r}")):
            params.check_version(bad)


def test_the_api_uses_the_rules():
    matrix, _ = simulate_responses(n_models=20, n_items=60, n_dims=1, seed=0)
    with pytest.raises(InputError, match="seed must be an integer from 0 to 2"):
        fit_estimator(matrix, n_anchors=10, seed=BIG_SEED)
    with pytest.raises(InputError, match="n_anchors must be a positive integer"):
        fit_estimator(matrix, n_anchors=0)
    with pytest.raises(InputError, match="design must be one of"):
        fit_estimator(matrix, n_anchors=10, design="random")
    with pytest.raises(InputError, match="seed must be"):
        simulate_responses(n_models=5, n_items=5, seed=-1)
    with pytest.raises(BuildError, match="seed must be an integer from 0 to 2"):
        BuildOptions(seed=BIG_SEED)
    with pytest.raises(BuildError, match="n_dims must be a positive integer"):
        FitOptions(n_dims=0)
    with pytest.raises(BuildError, match="design must be one of"):
        FitOptions(design="random")
    with pytest.raises(BuildError, match="invalid version '1.0'"):
        BuildOptions(version="1.0")
    assert BuildOptions(version="v2.1.0").version == "2.1.0"


def test_the_cli_uses_the_rules(tmp_path, capsys):
    for args, words in [(["--seed", str(BIG_SEED)], "argument --seed: must be an integer from 0 to 2**32 - 1"),
                        (["--anchors", "0"], "argument --anchors: must be a positive integer, got 0"),
                        (["--dims", "0"], "argument --dims: must be a positive integer, got 0"),
                        (["--design", "random"], "argument --design: invalid choice: 'random'")]:
        argv = ["fit", "x.csv", "--anchors", "5", "--out", str(tmp_path / "o"), *args]
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2 and words in capsys.readouterr().err
    assert main(["build", "tinyGSM8k", "--responses", "x.parquet", "--out", str(tmp_path / "b"),
                 "--release-version", "1.0"]) == 2
    assert "invalid version '1.0'" in capsys.readouterr().err


def test_a_release_config_breaking_a_rule_fails_at_load_with_exit_2(tmp_path, capsys, monkeypatch):
    """The issue's case: seed = 2**40 loaded, passed the output check, then failed in the build
    with exit 1 (and, with --push, after fetching the previous releases). Now: at config load."""
    (tmp_path / "r.parquet").write_bytes(b"")
    cfg = write_config(tmp_path, f"""\
        [release]
        org = "me"

        [[benchmark]]
        name = "tinyGSM8k"
        responses = "r.parquet"
        seed = {BIG_SEED}
        """)
    with pytest.raises(ConfigError, match=r"seed must be an integer from 0 to 2\*\*32 - 1 \(4294967295\), got 1099511627776"):
        load_config(cfg)
    from tinybench_builder.release import publish

    def no_build(*args, **kwargs):
        raise AssertionError("nothing may be built or fetched for a bad config")

    monkeypatch.setattr(publish, "build_benchmark", no_build)
    monkeypatch.setattr(publish, "fetch_previous", no_build)
    monkeypatch.setenv("HF_TOKEN", "hf_fake")
    assert release_main(["--config", str(cfg), "--release-version", "1.0.0", "--out", str(tmp_path / "out"), "--push"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "seed must be an integer from 0" in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_a_spec_breaking_a_rule(tmp_path):
    from tinybench_builder.registry import load_spec_file

    from pathlib import Path

    good = (Path(__file__).resolve().parents[2] / "specs" / "tinyWMDP_bio.toml").read_text()
    spec = tmp_path / "s.toml"
    spec.write_text("anchors = 0\n" + good.replace("\nanchors =", "\n# anchors ="))
    with pytest.raises(SpecError, match="anchors must be a positive integer, got 0"):
        load_spec_file(spec)


# ------------------------------------------------------------------ derived seeds
def test_derived_seeds_are_the_values_the_code_always_used():
    """Each stream's seed as the code computed it inline before params.derived_seed (commit 4b74d60):
    outputs stay bit-identical."""
    from tinybench_builder.params import SEED_STREAMS, derived_seed

    for seed in (0, 1, 4, 12345, 2**32 - 1):
        for r in range(4):
            assert derived_seed(seed, "partial_masks", r) == seed + r                      # model/fitting.py
            assert derived_seed(seed, "bench_dev_split", r) == 100 * seed + 10 + r        # benchmarks/protocols.py
            for dev_rep in (None, 0, 1):
                got = derived_seed(seed, "bench_adaptive_session", 0 if dev_rep is None else dev_rep + 1, r)
                assert got == 100_003 * seed + 1_009 * (0 if dev_rep is None else dev_rep + 1) + r
                d = 0 if dev_rep is None else dev_rep + 1
                for k in (1, 2):  # benchmarks/adaptive.py --sessions: above every session seed, apart per draw
                    extra = derived_seed(seed, "bench_adaptive_draw", d, r, k)
                    assert extra == 2**31 + 100_003 * seed + 1_009 * d + r + 2**32 * k
        assert derived_seed(seed, "random_baseline") == seed + 7919                        # model/report.py
        assert derived_seed(seed, "bench_random_k") == derived_seed(seed, "bench_versions_half") == 1000 + seed
        assert derived_seed(seed, "bench_partial_random") == 2000 + seed
    assert derived_seed(np.int64(3), "partial_masks", np.int64(2)) == 5 and type(derived_seed(3, "partial_masks", 2)) is int
    assert all(stream.why for stream in SEED_STREAMS.values())
    with pytest.raises(ValueError, match="no seed stream 'nope'; known: partial_masks"):
        derived_seed(0, "nope")
    with pytest.raises(ValueError, match="takes 1 index"):
        derived_seed(0, "partial_masks")


def test_no_seed_offset_is_written_outside_the_seed_rule():
    """The package and the benchmark scripts derive seeds through params.derived_seed (one place that says why)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    offset = re.compile(r"\bseed\s*[+*]\s*\w|\w\s*[+*]\s*seed\b")
    found = []
    for path in [*(root / "tinybench_builder").rglob("*.py"), *(root / "benchmarks").glob("*.py")]:
        if path.parent.name == "tinybench_builder" and path.name in ("estimator.py", "adaptive.py", "params.py"):
            continue  # the standalone files (they import nothing of the package), and the rule itself
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if offset.search(code) and "``" not in code and "derived_seed" not in code:
                found.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    assert not found, "\n".join(found)
