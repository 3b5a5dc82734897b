"""Shared pytest fixtures. The helpers themselves are in ``tests/helpers/`` (see its docstring).

Hub fixtures: the loopback Hugging Face Hub server (``helpers.hub``) and the environment for a
client process (the real clients read HF_ENDPOINT at import time: see ``helpers.client``).
"""

import pytest

from helpers.hub import DEFAULT_TOKEN, HubServer

HUB_TOKEN = DEFAULT_TOKEN


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
