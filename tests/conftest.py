"""Shared pytest fixtures.

Hub fixtures: an in-memory Hugging Face Hub-compatible server (tests/hub_server.py) and the
environment for client subprocesses (the clients read HF_ENDPOINT at import time, so the real
`huggingface_hub` / `datasets` must run in a subprocess: see `hub_server.run_client`).
"""

import pytest

from hub_server import DEFAULT_TOKEN, HubServer

HUB_TOKEN = DEFAULT_TOKEN


@pytest.fixture
def hub_server():
    """A started HubServer on 127.0.0.1 (fresh state per test); write requests need HUB_TOKEN."""
    with HubServer(token=HUB_TOKEN) as server:
        yield server


@pytest.fixture
def hub_env(hub_server, tmp_path):
    """Env dict for client subprocesses: HF_ENDPOINT=<server>, HF_HUB_DISABLE_XET=1,
    HF_HOME=<tmp>, HF_TOKEN=HUB_TOKEN, no HF_HUB_OFFLINE. For offline runs use
    ``{**hub_env, "HF_HUB_OFFLINE": "1"}`` (same HF_HOME = same cache)."""
    return hub_server.client_env(tmp_path / "hf_home", token=HUB_TOKEN)
