"""End-to-end checks of the test Hub server (tests/hub_server.py) with the REAL clients.

`huggingface_hub` and `datasets` run in subprocesses (they read HF_ENDPOINT at import time).
Protocol reference: /work/shared/docs/HUB_PROTOCOL.md.
"""

from __future__ import annotations

import io
import json
import textwrap
import urllib.error
import urllib.request

import pandas as pd
import pytest

from hub_server import DEFAULT_TOKEN as HUB_TOKEN  # the token the conftest fixtures use
from hub_server import HubServer, run_client

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


def _run_json(code: str, env: dict) -> dict:
    """Run client code that prints one JSON object on its last stdout line."""
    proc = run_client(textwrap.dedent(code), env)
    assert proc.returncode == 0, f"client failed\nSTDOUT:\n{proc.stdout}\nSTDERR:\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _request(url: str, method: str = "GET", headers: dict | None = None, data: bytes | None = None):
    """(status, headers, body) via urllib, without raising on HTTP errors."""
    req = urllib.request.Request(url, method=method, headers=headers or {}, data=data)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


# ----------------------------------------------------------------- a published repo (module scope)

PUBLISH = """
    import json, os, sys
    from huggingface_hub import HfApi, CommitOperationAdd, hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    repo, parquet = {repo!r}, {parquet!r}
    api = HfApi()
    out = {{}}
    out["url"] = str(api.create_repo(repo, repo_type="dataset"))
    out["url_again"] = str(api.create_repo(repo, repo_type="dataset", exist_ok=True))
    try:
        api.create_repo(repo, repo_type="dataset")
    except HfHubHTTPError as e:
        out["create_dup_status"] = e.response.status_code

    def release(rows_file, tag, msg):
        ops = [CommitOperationAdd("README.md", {readme!r}.encode()),
               CommitOperationAdd(parquet, open(rows_file, "rb").read())]
        info = api.create_commit(repo, repo_type="dataset", operations=ops, commit_message=msg)
        api.create_tag(repo, repo_type="dataset", tag=tag, revision=info.oid, tag_message=msg)
        return info.oid

    out["v1"] = release({v1_file!r}, "v1", "release v1")
    out["v2"] = release({v2_file!r}, "v2", "release v2")
    refs = api.list_repo_refs(repo, repo_type="dataset")
    out["branches"] = {{b.name: b.target_commit for b in refs.branches}}
    out["tags"] = {{t.name: t.target_commit for t in refs.tags}}
    try:
        api.create_tag(repo, repo_type="dataset", tag="v1", revision=out["v2"])
    except HfHubHTTPError as e:
        out["dup_tag"] = [type(e).__name__, e.response.status_code]
    api.create_tag(repo, repo_type="dataset", tag="tmp", revision="main")
    api.delete_tag(repo, repo_type="dataset", tag="tmp")
    out["tags_after_delete"] = sorted(t.name for t in api.list_repo_refs(repo, repo_type="dataset").tags)
    info = api.repo_info(repo, repo_type="dataset", revision="v1", files_metadata=True)
    out["info"] = {{"sha": info.sha, "siblings": [s.rfilename for s in info.siblings],
                   "lfs": [s.rfilename for s in info.siblings if s.lfs],
                   "configs": info.card_data.to_dict().get("configs")}}
    out["files_v1"] = api.list_repo_files(repo, repo_type="dataset", revision="v1")
    try:
        hf_hub_download(repo, "nope.txt", repo_type="dataset", revision="v1")
    except EntryNotFoundError as e:
        out["missing"] = type(e).__name__
    try:
        hf_hub_download(repo, "README.md", repo_type="dataset", revision="v9")
    except RevisionNotFoundError as e:
        out["bad_rev"] = type(e).__name__
    try:
        api.repo_info("tiny/absent", repo_type="dataset")
    except RepositoryNotFoundError as e:
        out["bad_repo"] = type(e).__name__
    readme_path = hf_hub_download(repo, "README.md", repo_type="dataset", revision="v1")
    out["readme_ok"] = open(readme_path).read() == {readme!r}
    print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """One server for the module with REPO published twice (tags v1, v2) by the real client."""
    tmp = tmp_path_factory.mktemp("hubpub")
    (tmp / "v1.parquet").write_bytes(_parquet(ROWS_V1))
    (tmp / "v2.parquet").write_bytes(_parquet(ROWS_V2))
    with HubServer(token=HUB_TOKEN) as hub:
        env = hub.client_env(tmp / "hf_home_publisher", token=HUB_TOKEN)
        code = PUBLISH.format(repo=REPO, parquet=PARQUET, readme=README,
                              v1_file=str(tmp / "v1.parquet"), v2_file=str(tmp / "v2.parquet"))
        out = _run_json(code, env)
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
    got = _run_json(f"""
        import json
        from datasets import Dataset, load_dataset
        res = {{}}
        for rev in ("v1", "v2", {out["v1"]!r}):
            ds = load_dataset({REPO!r}, revision=rev)
            res[rev] = {{split: ds[split].to_dict() for split in ds}}
        Dataset.from_dict({{"x": [1, 2]}}).push_to_hub("tiny/pushed")
        res["pushed"] = load_dataset("tiny/pushed", split="train").to_dict()
        print(json.dumps(res))
    """, env)
    assert got["v1"] == {"test": ROWS_V1}
    assert got["v2"] == {"test": ROWS_V2}
    assert got[out["v1"]] == {"test": ROWS_V1}
    assert got["pushed"] == {"x": [1, 2]}


def test_snapshot_download_then_offline(published, tmp_path):
    hub, out, _ = published
    env = hub.client_env(tmp_path / "hf_home", token=HUB_TOKEN)
    online = _run_json(f"""
        import json
        from huggingface_hub import snapshot_download
        print(json.dumps({{t: snapshot_download({REPO!r}, repo_type="dataset", revision=t) for t in ("v1", "v2")}}))
    """, env)
    assert online["v1"].endswith(out["v1"]) and online["v2"].endswith(out["v2"])

    n_before = len(hub.requests)
    offline = _run_json(f"""
        import json
        from huggingface_hub import hf_hub_download, snapshot_download
        from datasets import load_dataset
        res = {{}}
        for t in ("v1", "v2"):
            path = snapshot_download({REPO!r}, repo_type="dataset", revision=t)
            ds = load_dataset(path)
            res[t] = {{"path": path, "rows": ds["test"].to_dict()}}
        res["readme"] = hf_hub_download({REPO!r}, "README.md", repo_type="dataset", revision="v1")
        print(json.dumps(res))
    """, {**env, "HF_HUB_OFFLINE": "1"})
    assert offline["v1"] == {"path": online["v1"], "rows": ROWS_V1}
    assert offline["v2"] == {"path": online["v2"], "rows": ROWS_V2}
    assert offline["readme"].startswith(online["v1"])
    assert len(hub.requests) == n_before, "offline clients must not touch the server"


# ----------------------------------------------------------------- fault injection with the real client

COMMIT_ONE = """
    import json, sys
    from huggingface_hub import HfApi, CommitOperationAdd
    api = HfApi()
    api.create_repo("tiny/faults", repo_type="dataset", exist_ok=True)
    res = {}
    try:
        info = api.create_commit("tiny/faults", repo_type="dataset", commit_message="add",
                                 operations=[CommitOperationAdd("data/x.bin", bytes(range(256)) * 64)])
        res["oid"] = info.oid
    except Exception as e:
        res["error"] = type(e).__name__
        res["status"] = getattr(getattr(e, "response", None), "status_code", None)
    print(json.dumps(res))
"""


def test_http500_on_commit_raises_and_leaves_no_commit(hub_server, hub_env):
    fault = hub_server.inject_fault("http500", r"^/api/datasets/tiny/faults/commit/", times=1)
    res = _run_json(COMMIT_ONE, hub_env)
    assert res == {"error": "HfHubHTTPError", "status": 500}  # the commit POST is not retried
    assert fault.hits == 1
    assert len(hub_server.history("tiny/faults")) == 1  # only the initial commit
    assert "data/x.bin" not in hub_server.files("tiny/faults")


def test_dropped_connection_on_commit_fails_without_commit(hub_server, hub_env):
    hub_server.inject_fault("drop", r"/commit/main$", times=1, method="POST")
    res = _run_json(COMMIT_ONE, hub_env)
    assert "oid" not in res and res["status"] is None  # a transport error (httpx RemoteProtocolError)
    assert len(hub_server.history("tiny/faults")) == 1


def test_dropped_connection_during_lfs_upload_is_retried(hub_server, hub_env):
    """huggingface_hub retries the LFS PUT (http_backoff, 1 s first wait): the commit succeeds."""
    fault = hub_server.inject_fault("drop", r"^/__lfs__/", times=1, method="PUT")
    res = _run_json(COMMIT_ONE, hub_env)
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
        sha = __import__("hashlib").sha256(blob).hexdigest()
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
