"""Shared pytest fixtures. The helpers themselves are in ``tests/helpers/`` (see its docstring).

The tests mirror the package's stages (``tests/read/``, ``tests/model/``, ... ``tests/cli/``), with
``tests/kernel/`` for the modules under the stages, ``tests/e2e/`` for end-to-end runs,
``tests/benchmarks/`` for the benchmark scripts and ``tests/project/`` for the repository's own
rules (layering, the wheel, the docs).

The fast loop, ``pytest -m "not slow"``: a test is ``slow`` when its file says so
(``pytestmark = pytest.mark.slow``) or its decorator does, and also, by what it uses, when it
takes a fixture of the loopback Hub (the real clients in a fresh process) or is ``realdata``.

Hub fixtures: the loopback Hugging Face Hub server (``helpers.hub``) and the environment for a
client process (the real clients read HF_ENDPOINT at import time: see ``helpers.client``).
"""

import pytest

from helpers.hub import DEFAULT_TOKEN, HubServer

HUB_TOKEN = DEFAULT_TOKEN

#: fixtures of the loopback Hub: a test that takes one starts the real clients in new processes
HUB_FIXTURES = {"hub_server", "hub_env"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HUB_FIXTURES & set(getattr(item, "fixturenames", ())) or item.get_closest_marker("realdata") is not None:
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
