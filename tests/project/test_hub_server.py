"""End-to-end checks of the loopback Hub server (tests/helpers/hub) with the REAL clients.

`huggingface_hub` and `datasets` run in a fresh process (they read HF_ENDPOINT at import time):
`helpers.client.run_in_client` with a function of `helpers.hub_clients`.
Protocol reference: /work/shared/docs/HUB_PROTOCOL.md.
"""

from __future__ import annotations

import hashlib
import io
import json
import textwrap
import urllib.error
import urllib.request

import pandas as pd
import pytest

from helpers import hub_clients
from helpers.client import run_in_client
from helpers.hub import DEFAULT_TOKEN as HUB_TOKEN  # the token the conftest fixtures use
from helpers.hub import HubServer

pytestmark = pytest.mark.slow  # end to end: each test takes seconds to minutes

REPO = "tiny/bench"
PARQUET = "data/test-00000-of-00001.parquet"
README = textwrap.dedent(
    """\
    ---
    configs:
    - config_name: default
      data_files:
      - split: test
        path: data/test-*
    ---
    # tiny bench
    """
)
ROWS_V1 = {"q": ["a", "b", "c"], "y": [1, 2, 3]}
ROWS_V2 = {"q": ["a", "b", "c", "d"], "y": [1, 2, 3, 4]}


def _parquet(rows: dict) -> bytes:
    buf = io.BytesIO()
    pd.DataFrame(rows).to_parquet(buf, index=False)
    return buf.getvalue()


def _request(url: str, method: str = "GET", headers: dict | None = None, data: bytes | None = None):
    """(status, headers, body) via urllib, without raising on HTTP errors."""
    req = urllib.request.Request(url, method=method, headers=headers or {}, data=data)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


# ----------------------------------------------------------------- a published repo (module scope)

@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """One server for the module with REPO published twice (tags v1, v2) by the real client."""
    tmp = tmp_path_factory.mktemp("hubpub")
    (tmp / "v1.parquet").write_bytes(_parquet(ROWS_V1))
    (tmp / "v2.parquet").write_bytes(_parquet(ROWS_V2))
    with HubServer(token=HUB_TOKEN) as hub:
        env = hub.client_env(tmp / "hf_home_publisher", token=HUB_TOKEN)
        out = run_in_client(env, hub_clients.protocol_tour, REPO, PARQUET, README,
                            str(tmp / "v1.parquet"), str(tmp / "v2.parquet")).result
        yield hub, out, tmp


def test_publish_create_commit_tag_refs(published):
    hub, out, _ = published
    assert out["url"] == out["url_again"] == f"{hub.endpoint}/datasets/{REPO}"
    assert out["create_dup_status"] == 409
    assert out["v1"] != out["v2"]
    assert out["tags"] == {"v1": out["v1"], "v2": out["v2"]}
    assert out["branches"] == {"main": out["v2"]}
    assert out["dup_tag"] == ["HfHubHTTPError", 409]
    assert out["tags_after_delete"] == ["v1", "v2"]
    assert out["info"]["sha"] == out["v1"]
    assert out["info"]["siblings"] == [".gitattributes", "README.md", PARQUET]
    assert out["info"]["lfs"] == [PARQUET]
    assert out["info"]["configs"] == [{"config_name": "default", "data_files": [{"split": "test", "path": "data/test-*"}]}]
    assert sorted(out["files_v1"]) == [".gitattributes", "README.md", PARQUET]
    # each was caught by `except EntryNotFoundError` / RevisionNotFoundError / RepositoryNotFoundError
    assert (out["missing"], out["bad_rev"], out["bad_repo"]) == (
        "RemoteEntryNotFoundError", "RevisionNotFoundError", "RepositoryNotFoundError")
    assert out["readme_ok"]

    # server-side view: initial commit + 2 releases, one commit per release, parquet went through LFS
    hist = hub.history(REPO, "main")
    assert [c.oid for c in hist[:2]] == [out["v2"], out["v1"]] and len(hist) == 3
    assert hub.files(REPO, "v1")[PARQUET] == _parquet(ROWS_V1)
    puts = [e for e in hub.log if e["method"] == "PUT"]
    assert len(puts) == 2 and all(e["path"].startswith("/__lfs__/") for e in puts)
    # the token is sent to the Hub API, never to the (signed-URL stand-in) LFS upload href
    assert hub.seen_tokens == {HUB_TOKEN}
    assert all(e["token"] is None for e in puts)
    assert all(e["token"] == HUB_TOKEN for e in hub.log if e["path"].startswith("/api/") and e["method"] == "POST")


def test_load_dataset_by_tag_and_push_to_hub(published, tmp_path):
    hub, out, _ = published
    env = hub.client_env(tmp_path / "hf_home", token=HUB_TOKEN)
    got = run_in_client(env, hub_clients.load_revisions_and_push, REPO, ["v1", "v2", out["v1"]]).result
    assert got["v1"] == {"test": ROWS_V1}
    assert got["v2"] == {"test": ROWS_V2}
    assert got[out["v1"]] == {"test": ROWS_V1}
    assert got["pushed"] == {"x": [1, 2]}


def test_snapshot_download_then_offline(published, tmp_path):
    hub, out, _ = published
    env = hub.client_env(tmp_path / "hf_home", token=HUB_TOKEN)
    online = run_in_client(env, hub_clients.snapshots, REPO, ["v1", "v2"]).result
    assert online["v1"].endswith(out["v1"]) and online["v2"].endswith(out["v2"])

    n_before = len(hub.requests)
    offline = run_in_client({**env, "HF_HUB_OFFLINE": "1"}, hub_clients.offline_snapshots, REPO, ["v1", "v2"]).result
    assert offline["v1"] == {"path": online["v1"], "rows": ROWS_V1}
    assert offline["v2"] == {"path": online["v2"], "rows": ROWS_V2}
    assert offline["readme"].startswith(online["v1"])
    assert len(hub.requests) == n_before, "offline clients must not touch the server"


# ----------------------------------------------------------------- fault injection with the real client

def test_http500_on_commit_raises_and_leaves_no_commit(hub_server, hub_env):
    fault = hub_server.inject_fault("http500", r"^/api/datasets/tiny/faults/commit/", times=1)
    res = run_in_client(hub_env, hub_clients.commit_one_binary).result
    assert res == {"error": "HfHubHTTPError", "status": 500}  # the commit POST is not retried
    assert fault.hits == 1
    assert len(hub_server.history("tiny/faults")) == 1  # only the initial commit
    assert "data/x.bin" not in hub_server.files("tiny/faults")


def test_dropped_connection_on_commit_fails_without_commit(hub_server, hub_env):
    hub_server.inject_fault("drop", r"/commit/main$", times=1, method="POST")
    res = run_in_client(hub_env, hub_clients.commit_one_binary).result
    assert "oid" not in res and res["status"] is None  # a transport error (httpx RemoteProtocolError)
    assert len(hub_server.history("tiny/faults")) == 1


def test_dropped_connection_during_lfs_upload_is_retried(hub_server, hub_env):
    """huggingface_hub retries the LFS PUT (http_backoff, 1 s first wait): the commit succeeds."""
    fault = hub_server.inject_fault("drop", r"^/__lfs__/", times=1, method="PUT")
    res = run_in_client(hub_env, hub_clients.commit_one_binary).result
    assert fault.hits == 1
    assert "oid" in res, res
    puts = [e for e in hub_server.log if e["method"] == "PUT"]
    assert [e["status"] for e in puts] == ["dropped", 200]
    assert hub_server.files("tiny/faults")["data/x.bin"] == bytes(range(256)) * 64
    assert hub_server.history("tiny/faults")[0].oid == res["oid"]


# ----------------------------------------------------------------- raw protocol details (no client)


def test_resolve_headers_range_and_errors():
    with HubServer() as hub:
        hub.create_repo("o/r")
        text, blob = b"hello world\n", bytes(range(256)) * 4
        oid = hub.commit_files("o/r", {"a/b.txt": text, "m.npz": blob})
        base = f"{hub.endpoint}/datasets/o/r/resolve"

        st, h, body = _request(f"{base}/main/a/b.txt", "HEAD")
        assert st == 200 and body == b"" and h["X-Repo-Commit"] == oid
        assert h["Content-Length"] == str(len(text)) and h["ETag"].startswith('"') and "X-Linked-Etag" not in h

        st, h, _ = _request(f"{base}/{oid}/m.npz", "HEAD")
        sha = hashlib.sha256(blob).hexdigest()
        assert st == 200 and h["ETag"] == h["X-Linked-Etag"] == f'"{sha}"' and h["X-Linked-Size"] == str(len(blob))

        st, h, body = _request(f"{base}/main/m.npz", headers={"Range": "bytes=10-19"})
        assert st == 206 and body == blob[10:20] and h["Content-Range"] == f"bytes 10-19/{len(blob)}"
        st, _, body = _request(f"{base}/main/m.npz", headers={"Range": "bytes=-5"})
        assert st == 206 and body == blob[-5:]

        st, h, _ = _request(f"{base}/main/missing.txt", "HEAD")
        assert st == 404 and h["X-Error-Code"] == "EntryNotFound" and h["X-Repo-Commit"] == oid
        st, h, _ = _request(f"{base}/nobranch/a/b.txt")
        assert st == 404 and h["X-Error-Code"] == "RevisionNotFound"
        st, h, _ = _request(f"{hub.endpoint}/datasets/o/none/resolve/main/a/b.txt")
        assert st == 404 and h["X-Error-Code"] == "RepoNotFound"


def test_tree_paging_and_fault_api():
    with HubServer(tree_page_size=2) as hub:
        hub.create_repo("o/r")
        hub.commit_files("o/r", {f"d/f{i}.txt": b"x%d" % i for i in range(5)})
        url = f"{hub.endpoint}/api/datasets/o/r/tree/main/d?recursive=true"
        seen = []
        while url:
            st, h, body = _request(url)
            assert st == 200
            seen += [e["path"] for e in json.loads(body)]
            link = h.get("Link")
            url = link[1 : link.index(">")] if link else None
        assert seen == [f"d/f{i}.txt" for i in range(5)]

        f = hub.inject_fault("http503", r"/refs$", times=2)
        statuses = [_request(f"{hub.endpoint}/api/datasets/o/r/refs")[0] for _ in range(3)]
        assert statuses == [503, 503, 200] and f.hits == 2 and f.remaining == 0
        hub.inject_fault("drop", r"/refs$")
        with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):
            urllib.request.urlopen(f"{hub.endpoint}/api/datasets/o/r/refs", timeout=5)
        assert hub.requests[-1] == ("GET", "/api/datasets/o/r/refs")
        with pytest.raises(ValueError):
            hub.inject_fault("explode", ".")


def test_writes_need_the_token():
    with HubServer(token=HUB_TOKEN) as hub:
        url, body = f"{hub.endpoint}/api/repos/create", json.dumps({"name": "r", "organization": "o", "type": "dataset"}).encode()
        hdr = {"Content-Type": "application/json"}
        assert _request(url, "POST", hdr, body)[0] == 401
        assert _request(url, "POST", {**hdr, "Authorization": "Bearer wrong"}, body)[0] == 401
        assert _request(url, "POST", {**hdr, "Authorization": f"Bearer {HUB_TOKEN}"}, body)[0] == 200
        assert _request(url, "POST", {**hdr, "Authorization": f"Bearer {HUB_TOKEN}"}, body)[0] == 409
        assert _request(f"{hub.endpoint}/api/datasets/o/r")[0] == 200  # public reads need no token
        assert hub.seen_tokens == {"wrong", HUB_TOKEN}
