"""Shared pytest fixtures. The helpers themselves are in ``tests/helpers/`` (see its docstring).

The fast loop, ``pytest -m "not slow"``: besides the tests marked ``slow`` by hand, every test
that uses the loopback Hub (the real clients in a fresh process), the real data (``realdata``)
a file of :data:`SLOW_FILES` (Dask clusters, end-to-end builds and releases, benchmark scripts) or
one of :data:`SLOW_TESTS` (measured with ``--durations``) is ``slow``.

Hub fixtures: the loopback Hugging Face Hub server (``helpers.hub``) and the environment for a
client process (the real clients read HF_ENDPOINT at import time: see ``helpers.client``).
"""

import pytest

from helpers.hub import DEFAULT_TOKEN, HubServer

HUB_TOKEN = DEFAULT_TOKEN

#: whole files of end-to-end or cluster tests (each takes tens of seconds or more)
SLOW_FILES = {
    "test_hub_server.py", "test_hub_sync.py", "test_release_bundles.py", "test_ingest_dask.py",
    "test_custom_benchmark.py", "test_readme.py", "test_core_realdata.py", "test_sources_realdata.py",
    "test_fresh_clone.py", "test_identity.py", "test_release_races.py", "test_bench_ingest_speed.py", "test_bench.py",
    "test_bench_scale.py",
    "test_waits_and_paths.py",  # each test starts a command, a Dask cluster or a Hub client and waits out a bound
}
#: single tests of otherwise fast files that take tens of seconds (measured: pytest --durations)
SLOW_TESTS = {
    "test_anchors.py::test_stratified_sample_is_unbiased_for_any_scores",
    "test_cli.py::test_the_module_entry_point",
    "test_fitting.py::test_same_tiny_benchmark_whatever_the_blas_thread_count",
    "test_fitting.py::test_design_based_estimate_is_unbiased_when_the_irt_model_is_wrong",
    "test_release.py::test_push_releases_previous_changelog_idempotence_and_no_token_leak",
    "test_release.py::test_release_script_help_and_errors_without_traceback",
    "test_ingest_engine.py::test_hub_models_on_the_local_pool_and_a_corrupt_file_on_the_hub",
    "test_out_of_memory.py::test_ingest_of_a_table_too_wide_for_parquet_is_one_error_line",
    "test_long_output.py::test_the_wide_parquet_refusal_gives_the_long_table_and_its_command",
}
#: fixtures of the loopback Hub: a test that takes one starts the real clients in new processes
HUB_FIXTURES = {"hub_server", "hub_env"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if (item.path.name in SLOW_FILES or f"{item.path.name}::{item.originalname}" in SLOW_TESTS
                or HUB_FIXTURES & set(getattr(item, "fixturenames", ()))
                or item.get_closest_marker("realdata") is not None):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def hub_server():
    """A started HubServer on 127.0.0.1 (fresh state per test); write requests need HUB_TOKEN."""
    with HubServer(token=HUB_TOKEN) as server:
        yield server


@pytest.fixture
def hub_env(hub_server, tmp_path):
    """Env dict for a client process: HF_ENDPOINT=<server>, HF_HUB_DISABLE_XET=1,
    HF_HOME=<tmp>, HF_TOKEN=HUB_TOKEN, no HF_HUB_OFFLINE. For offline runs use
    ``{**hub_env, "HF_HUB_OFFLINE": "1"}`` (same HF_HOME = same cache)."""
    return hub_server.client_env(tmp_path / "hf_home", token=HUB_TOKEN)


@pytest.fixture
def package_log(caplog):
    """``caplog`` for the package's messages. The package logger has its own handler and does not
    propagate (one line per message where the root logger has handlers too), so pytest's handler,
    which sits on the root logger, is attached to it here for the test's length."""
    import logging

    logger = logging.getLogger("tinybench_builder")
    logger.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.DEBUG, logger="tinybench_builder"):
            yield caplog
    finally:
        logger.removeHandler(caplog.handler)
