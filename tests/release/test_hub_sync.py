"""tinybench_builder.release.hub_sync against the loopback Hub (tests/helpers/hub) with the REAL clients.

The clients read HF_ENDPOINT at import time, so every Hub call runs in a fresh process
(`helpers.client.run_in_client` with a function of `helpers.hub_clients`). The folders are
small fakes (`helpers.folders.make_folder`) with real estimator side files, so
`TinyEstimator.from_hub` can be tested on them.
"""

from __future__ import annotations

import hashlib

import pytest

from helpers import hub_clients
from helpers.client import run_in_client
from helpers.folders import DATA, REPO, make_folder
from helpers.hub import Blob

pytestmark = pytest.mark.slow  # end to end: each test takes seconds to minutes


# --------------------------------------------------------------------------- a published repo (module)


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """One server: tinyFake v1.0.0 (re-published: idempotent), v1.1.0, and refused attempts."""
    from helpers.hub import DEFAULT_TOKEN, HubServer

    tmp = tmp_path_factory.mktemp("published")
    a = make_folder(tmp / "a", version="1.0.0", seed=1, extra={"notes/old.txt": "only in 1.0.0\n"})
    a_again = make_folder(tmp / "a_again", version="1.0.0", seed=1, extra={"notes/old.txt": "only in 1.0.0\n"})
    b = make_folder(tmp / "b", version="1.1.0", seed=2, sub_estimator="other")
    b_as_v1 = make_folder(tmp / "b_as_v1", version="1.0.0", seed=2)
    older = make_folder(tmp / "older", version="1.0.1", seed=3)
    with HubServer(token=DEFAULT_TOKEN) as hub:
        env = hub.client_env(tmp / "hf_home", token=DEFAULT_TOKEN)
        steps = [["publish", "v1", str(a), "1.0.0"], ["state", "state_v1"],
                 ["publish", "v1_again", str(a_again), "1.0.0"], ["state", "state_v1_again"],
                 ["publish", "v11", str(b), "1.1.0"], ["state", "state_v11"],
                 ["publish", "v11_again", str(b), "v1.1.0"],
                 ["publish", "v1_other", str(b_as_v1), "1.0.0"],
                 ["publish", "older", str(older), "1.0.1"], ["state", "state_end"]]
        out = run_in_client(env, hub_clients.publish_steps, REPO, steps).result
        yield hub, out, {"a": a, "b": b}, tmp


def test_publish_commits_once_and_tags(published):
    hub, out, folders, _ = published
    v1 = out["v1"]["ok"]
    assert v1["action"] == "committed" and v1["tag"] == "v1.0.0"
    assert out["state_v1"]["tags"] == {"v1.0.0": v1["commit"]} and out["state_v1"]["main"] == v1["commit"]
    # the tagged commit holds exactly the folder (+ the Hub's .gitattributes)
    files = hub.files(REPO, "v1.0.0")
    local = {p.relative_to(folders["a"]).as_posix(): p.read_bytes() for p in folders["a"].rglob("*") if p.is_file()}
    assert {k: v for k, v in files.items() if k != ".gitattributes"} == local
    # binaries went through LFS, one commit for the whole folder
    repo = hub.get_repo(REPO)
    tagged = repo.commits[repo.tags["v1.0.0"]]
    assert tagged.files[DATA].lfs and tagged.files["irt_parameters.npz"].lfs and not tagged.files["README.md"].lfs
    assert tagged.parent is not None and repo.commits[tagged.parent].parent is None  # initial commit, then ours


def test_republish_identical_is_a_no_op(published):
    _, out, _, _ = published
    assert out["v1_again"] == {"ok": {"repo_id": REPO, "tag": "v1.0.0", "commit": out["v1"]["ok"]["commit"],
                                      "action": "unchanged"}}
    assert out["state_v1_again"] == out["state_v1"]  # no new commit, no new tag
    assert out["v11_again"]["ok"]["action"] == "unchanged"


def test_new_version_deletes_stale_files_and_keeps_old_tag(published):
    hub, out, folders, _ = published
    v11 = out["v11"]["ok"]
    assert v11["action"] == "committed" and out["state_v11"]["commits"] == out["state_v1"]["commits"] + 1
    assert out["state_v11"]["tags"] == {"v1.0.0": out["v1"]["ok"]["commit"], "v1.1.0": v11["commit"]}
    assert "notes/old.txt" in hub.files(REPO, "v1.0.0")
    assert "notes/old.txt" not in hub.files(REPO, "v1.1.0")  # CommitOperationDelete
    assert hub.files(REPO, "v1.1.0")[DATA] == (folders["b"] / DATA).read_bytes()


def test_existing_tag_with_other_content_and_older_versions_are_refused(published):
    hub, out, _, _ = published
    err = out["v1_other"]["error"]
    assert "tag v1.0.0 already exists" in err and "never moved" in err
    assert "older than the latest release v1.1.0" in out["older"]["error"]
    # nothing moved: same tags, same main, no new commit
    end = out["state_end"]
    assert end["tags"] == out["state_v11"]["tags"] and end["main"] == out["state_v11"]["main"]
    assert end["commits"] == out["state_v11"]["commits"]


def test_consumers_load_each_tag_then_work_offline(published, tmp_path):
    """load_dataset at each tag; from_hub at each tag (sha256-checked); then offline from the cache."""
    hub, out, folders, _ = published
    env = hub.client_env(tmp_path / "hf_home", token=None)
    tags = ["v1.0.0", "v1.1.0"]
    online = run_in_client(env, hub_clients.consume_releases, REPO, tags, subfolder=["other", "v1.1.0"]).result
    # a per-config estimator in a subfolder, checked against the root manifest
    sub = online.pop("sub")
    assert sub == online["v1.1.0"]["anchors"]
    import pandas as pd

    for tag, key in (("v1.0.0", "a"), ("v1.1.0", "b")):
        expect = pd.read_parquet(folders[key] / DATA).to_dict(orient="list")
        assert online[tag]["rows"] == expect
        assert online[tag]["anchors"] == expect["item_id"]
    assert online["v1.0.0"]["anchors"] != online["v1.1.0"]["anchors"]

    n_before = len(hub.requests)
    offline = run_in_client({**env, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"},
                            hub_clients.consume_releases, REPO, tags, offline=True).result
    assert offline == online
    assert len(hub.requests) == n_before, "offline consumers must not touch the server"


def test_from_hub_refuses_tampered_files(published, tmp_path):
    hub, out, _, _ = published
    env = hub.client_env(tmp_path / "hf_home", token=None)
    # 1) someone commits a different irt_parameters.npz to main without updating the manifest
    npz = bytearray(hub.files(REPO, "v1.1.0")["irt_parameters.npz"])
    npz[-30] ^= 0xFF
    hub.commit_files(REPO, {"irt_parameters.npz": bytes(npz)}, "tamper")
    # 2) the server serves other bytes for estimator.json at the v1.0.0 tag itself
    repo = hub.get_repo(REPO)
    tagged = repo.commits[repo.tags["v1.0.0"]]
    original = tagged.files["estimator.json"]
    tagged.files["estimator.json"] = Blob.make(original.data.replace(b'"confidence"', b' "confidence"', 1), False)
    try:
        res = run_in_client(env, hub_clients.from_hub_each, REPO, ["main", "v1.0.0", "v1.1.0"]).result
    finally:
        tagged.files["estimator.json"] = original
    assert "irt_parameters.npz has sha256" in res["main"]["error"] and "refusing" in res["main"]["error"]
    assert "estimator.json has sha256" in res["v1.0.0"]["error"]
    assert res["v1.1.0"] == {"ok": 5}


# --------------------------------------------------------------------------- faults


def _publish_twice(folder) -> list[list]:
    """Publish ``folder`` as 1.0.0, look, publish it again, look."""
    return [["publish", "first", str(folder), "1.0.0"], ["state", "after_first"],
            ["publish", "second", str(folder), "1.0.0"], ["state", "after_second"]]


FAULTS = {
    # the commit POST answers 500 (huggingface_hub does not retry commits)
    "commit_http500": dict(kind="http500", path_regex=r"/commit/main$", method="POST"),
    # the connection drops while the commit request is sent
    "commit_drop": dict(kind="drop", path_regex=r"/commit/main$", method="POST"),
    # an LFS upload fails for good (a 4xx is not retried): the commit is never sent
    "lfs_upload_rejected": dict(kind="http403", path_regex=r"^/__lfs__/", method="PUT"),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_failed_upload_publishes_nothing_and_rerun_converges(fault, hub_server, hub_env, tmp_path):
    folder = make_folder(tmp_path / "f", version="1.0.0", seed=4)
    f = hub_server.inject_fault(**FAULTS[fault], times=1)
    out = run_in_client(hub_env, hub_clients.publish_steps, REPO, _publish_twice(folder)).result
    assert f.hits == 1
    err = out["first"]["error"]
    assert "the commit failed" in err and "No tag was created" in err and "re-run" in err
    assert out["after_first"]["tags"] == {} and out["after_first"]["commits"] == 1  # only the Hub's initial commit
    second = out["second"]["ok"]
    assert second["action"] == "committed"
    assert out["after_second"]["tags"] == {"v1.0.0": second["commit"]} and out["after_second"]["commits"] == 2
    assert hub_server.files(REPO, "v1.0.0")[DATA] == (folder / DATA).read_bytes()


def test_tag_failure_leaves_no_tag_and_rerun_only_tags(hub_server, hub_env, tmp_path):
    folder = make_folder(tmp_path / "f", version="1.0.0", seed=5)
    f = hub_server.inject_fault("http409", r"/tag/", times=1, method="POST")
    out = run_in_client(hub_env, hub_clients.publish_steps, REPO, _publish_twice(folder)).result
    assert f.hits == 1
    err = out["first"]["error"]
    assert "creating tag v1.0.0 failed" in err and "HTTP 409" in err and "No tag was created" in err
    assert out["after_first"]["tags"] == {} and out["after_first"]["commits"] == 2  # content reached main
    second = out["second"]["ok"]
    assert second["action"] == "tagged" and second["commit"] == out["after_first"]["main"]
    assert out["after_second"]["commits"] == 2  # no new commit
    assert out["after_second"]["tags"] == {"v1.0.0": out["after_first"]["main"]}
    commits = [e for e in hub_server.log if e["method"] == "POST" and e["path"].endswith("/commit/main")]
    assert len(commits) == 1


def test_publish_release_plans_everything_before_writing(hub_server, hub_env, tmp_path):
    """A refused tag in one repository stops the release before any repository changes."""
    ok = make_folder(tmp_path / "ok", version="1.0.0", seed=6)
    clash = make_folder(tmp_path / "clash", version="1.0.0", seed=7)
    hub_server.create_repo("tinyOrg/tinyClash")
    oid = hub_server.commit_files("tinyOrg/tinyClash", {"README.md": b"something else\n"})
    hub_server.get_repo("tinyOrg/tinyClash").tags["v1.0.0"] = oid
    out = run_in_client(hub_env, hub_clients.publish_release_all,
                        {"tinyOrg/tinyOk": str(ok), "tinyOrg/tinyClash": str(clash)}, "1.0.0").result
    assert "nothing was published" in out["error"] and "tinyOrg/tinyClash: tag v1.0.0 already exists" in out["error"]
    assert not hub_server.has_repo("tinyOrg/tinyOk")
    assert hub_server.refs("tinyOrg/tinyClash")["tags"] == {"v1.0.0": oid}


# --------------------------------------------------------------------------- pure functions (no Hub)


def test_compare_trees():
    from tinybench_builder.release.hub_sync import LocalFile, RemoteFile, compare_trees

    local = {"a.txt": LocalFile("a.txt", 1, "s" * 64, "g" * 40), "d.parquet": LocalFile("d.parquet", 9, "p" * 64, "x" * 40),
             "new.txt": LocalFile("new.txt", 1, "n" * 64, "m" * 40)}
    remote = {"a.txt": RemoteFile("a.txt", 1, "g" * 40, None), "d.parquet": RemoteFile("d.parquet", 9, "ptr", "q" * 64),
              ".gitattributes": RemoteFile(".gitattributes", 5, "h" * 40, None), "gone.txt": RemoteFile("gone.txt", 1, "k" * 40, None)}
    assert compare_trees(local, remote) == {"added": ["new.txt"], "changed": ["d.parquet"], "deleted": ["gone.txt"],
                                            "same": ["a.txt"]}
    # an LFS file listed without LFS metadata is recognised by its pointer's git blob id
    data = b"\0binary" * 10
    blob = Blob.make(data, lfs=True)
    lf = LocalFile("x.bin", len(data), hashlib.sha256(data).hexdigest(), "g" * 40)
    assert compare_trees({"x.bin": lf}, {"x.bin": RemoteFile("x.bin", len(data), blob.git_oid, None)})["same"] == ["x.bin"]
