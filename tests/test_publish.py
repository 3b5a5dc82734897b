"""builder.publish against the loopback Hub (tests/hub_server.py) with the REAL clients.

The clients read HF_ENDPOINT at import time, so every Hub call runs in a subprocess
(`hub_server.run_client`, env from the `hub_env` fixture). The folders are small fakes
written here (`make_folder`, `fake_build`: the build_benchmark contract) with real
estimator side files, so `TinyEstimator.from_hub` can be tested on them.

`make_folder` / `fake_build` are also imported by tests/test_release.py and, in
subprocesses, by `release.py` runs (`builder.publish.main(argv, build=fake_build)`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from hub_server import Blob, run_client

TESTS_DIR = Path(__file__).resolve().parent
REPO = "tinyOrg/tinyFake"
N_ITEMS = 30
DATA = "data/test-00000-of-00001.parquet"


# --------------------------------------------------------------------------- fake folders


def _anchors(seed: int, k: int) -> list[int]:
    return sorted(np.random.default_rng(seed).choice(N_ITEMS, size=k, replace=False).tolist())


def make_folder(out, *, version="1.0.0", seed=0, k=5, extra=None, previous=None, name="tinyFake",
                sub_estimator=None, meta=None):
    """A tiny-benchmark folder as build_benchmark writes it (deterministic for the same args).

    data parquet (config ``default``, split ``test``), README.md with ``configs:`` and a
    changelog, estimator.json + irt_parameters.npz (a real TinyEstimator), estimator.py,
    manifest.json listing every other file. ``extra``: {relpath: text} more files;
    ``sub_estimator``: also save the estimator in that subfolder (per-config layout);
    ``meta``: more manifest fields.
    """
    import pandas as pd

    from builder.estimator import TinyEstimator

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    anchors = _anchors(seed, k)
    item_ids = [f"q{j}" for j in range(N_ITEMS)]
    rng = np.random.default_rng(1000 + seed)
    est = TinyEstimator(
        item_ids=item_ids, anchor_positions=anchors, anchor_weights=np.full(k, 1.0 / k),
        A=rng.normal(1.0, 0.2, size=(N_ITEMS, 1)), b=rng.normal(size=N_ITEMS), balance=np.ones(N_ITEMS),
        scenario_index=np.zeros(N_ITEMS, int), scenario_names=[name],
        cluster=np.arange(N_ITEMS) % k, prior_mean=np.zeros(1), prior_cov=np.eye(1),
        metadata={"benchmark": name, "version": version},
    )
    est.save(out)
    if sub_estimator:
        est.save(out / sub_estimator)
    shutil.copyfile(Path(__file__).resolve().parents[1] / "builder" / "estimator.py", out / "estimator.py")
    (out / "data").mkdir(exist_ok=True)
    rows = {"item_id": [item_ids[a] for a in anchors], "question": [f"question {a} (seed {seed})" for a in anchors]}
    pd.DataFrame(rows).to_parquet(out / DATA, index=False)

    lines = [f"## Changelog", "", f"### v{version}", ""]
    if previous is not None:
        prev = json.loads((Path(previous) / "manifest.json").read_text())
        prev_anchors = set(pd.read_parquet(Path(previous) / DATA)["item_id"])
        now = set(rows["item_id"])
        lines += [f"Previous release: v{prev['version']}.",
                  f"Anchors in: {sorted(now - prev_anchors)}; anchors out: {sorted(prev_anchors - now)}."]
    else:
        lines += ["First release."]
    readme = textwrap.dedent(f"""\
        ---
        pretty_name: {name}
        license: mit
        configs:
        - config_name: default
          data_files:
          - split: test
            path: data/test-*
        ---
        # {name}

        {k} anchors of a fake benchmark (tests).

        """) + "\n".join(lines) + "\n"
    (out / "README.md").write_text(readme, encoding="utf-8")
    for rel, text in (extra or {}).items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text, encoding="utf-8")
    files = {}
    for p in sorted(out.rglob("*")):
        if p.is_file() and p.name != "manifest.json":
            data = p.read_bytes()
            files[p.relative_to(out).as_posix()] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    manifest = {"benchmark": name, "version": version, **(meta or {}), "files": files}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return out


def fake_build(benchmark, responses, content=None, options=None, *, out, previous=None, templates=None,
               progress=False):
    """Stand-in for builder.dataset.build_benchmark (same signature). ``responses`` may name a
    JSON file of options: {"extra": {relpath: text}, "fail": "message"}."""
    from builder.config import BuildOptions

    options = options or BuildOptions()
    name = benchmark if isinstance(benchmark, str) else benchmark.name
    opts = {}
    rpath = Path(responses if isinstance(responses, str) else responses[0])
    if rpath.suffix == ".json" and rpath.is_file():
        opts = json.loads(rpath.read_text())
    if opts.get("fail"):
        raise ValueError(opts["fail"])
    return make_folder(out, version=options.version, seed=options.seed, k=options.anchors or 5, extra=opts.get("extra"),
                       previous=previous, name=name,
                       meta={"repo_id": options.repo_id, "tag": options.tag, "content": content,
                             "responses": str(responses)})


# --------------------------------------------------------------------------- subprocess helpers


def run_json(code: str, env: dict, timeout: float = 120) -> dict:
    """Run client code (with tests/ on sys.path) that prints one JSON object last."""
    code = f"import sys; sys.path.insert(0, {str(TESTS_DIR)!r})\n" + textwrap.dedent(code)
    proc = run_client(code, env, timeout=timeout)
    assert proc.returncode == 0, f"client failed\nSTDOUT:\n{proc.stdout}\nSTDERR:\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


PUBLISH_FN = """
import json
from builder.publish import ReleaseError, publish_folder
from huggingface_hub import HfApi
api = HfApi()

def publish(folder, version, repo={repo!r}):
    try:
        return {{"ok": publish_folder(folder, repo, version, api).to_dict()}}
    except ReleaseError as e:
        return {{"error": str(e)}}

def state(repo={repo!r}):
    refs = api.list_repo_refs(repo, repo_type="dataset")
    return {{"tags": {{t.name: t.target_commit for t in refs.tags}},
            "main": next(b.target_commit for b in refs.branches if b.name == "main"),
            "commits": len(api.list_repo_commits(repo, repo_type="dataset"))}}
"""


def prelude(repo=REPO) -> str:
    return PUBLISH_FN.format(repo=repo)


def release_commits(hub, repo=REPO) -> list:
    """Commits on main other than the Hub's initial one, newest first."""
    return [c for c in hub.history(repo) if c.parent is not None]


# --------------------------------------------------------------------------- a published repo (module)


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """One server: tinyFake v1.0.0 (re-published: idempotent), v1.1.0, and refused attempts."""
    from hub_server import DEFAULT_TOKEN, HubServer

    tmp = tmp_path_factory.mktemp("published")
    a = make_folder(tmp / "a", version="1.0.0", seed=1, extra={"notes/old.txt": "only in 1.0.0\n"})
    a_again = make_folder(tmp / "a_again", version="1.0.0", seed=1, extra={"notes/old.txt": "only in 1.0.0\n"})
    b = make_folder(tmp / "b", version="1.1.0", seed=2, sub_estimator="other")
    b_as_v1 = make_folder(tmp / "b_as_v1", version="1.0.0", seed=2)
    older = make_folder(tmp / "older", version="1.0.1", seed=3)
    with HubServer(token=DEFAULT_TOKEN) as hub:
        env = hub.client_env(tmp / "hf_home", token=DEFAULT_TOKEN)
        out = run_json(prelude() + f"""
res = {{}}
res["v1"] = publish({str(a)!r}, "1.0.0"); res["state_v1"] = state()
res["v1_again"] = publish({str(a_again)!r}, "1.0.0"); res["state_v1_again"] = state()
res["v11"] = publish({str(b)!r}, "1.1.0"); res["state_v11"] = state()
res["v11_again"] = publish({str(b)!r}, "v1.1.0")
res["v1_other"] = publish({str(b_as_v1)!r}, "1.0.0")
res["older"] = publish({str(older)!r}, "1.0.1")
res["state_end"] = state()
print(json.dumps(res))
""", env)
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
    code = f"""
import json
from datasets import load_dataset
from huggingface_hub import snapshot_download
from builder.estimator import TinyEstimator
res = {{}}
for tag in ("v1.0.0", "v1.1.0"):
    ds = load_dataset({REPO!r}, revision=tag)
    res[tag] = {{"rows": ds["test"].to_dict(), "anchors": TinyEstimator.from_hub({REPO!r}, revision=tag).anchor_ids}}
    snapshot_download({REPO!r}, repo_type="dataset", revision=tag)  # caches the whole release for offline use
res["sub"] = TinyEstimator.from_hub({REPO!r}, revision="v1.1.0", subfolder="other").anchor_ids
print(json.dumps(res))
"""
    online = run_json(code, env)
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
    offline = run_json(f"""
import json
from huggingface_hub import snapshot_download
from datasets import load_dataset
from builder.estimator import TinyEstimator
res = {{}}
for tag in ("v1.0.0", "v1.1.0"):
    path = snapshot_download({REPO!r}, repo_type="dataset", revision=tag)   # the documented offline pattern
    res[tag] = {{"rows": load_dataset(path)["test"].to_dict(),
                 "anchors": TinyEstimator.from_hub({REPO!r}, revision=tag).anchor_ids}}
print(json.dumps(res))
""", {**env, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
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
        res = run_json(f"""
import json
from builder.estimator import TinyEstimator
res = {{}}
for rev in ("main", "v1.0.0", "v1.1.0"):
    try:
        res[rev] = {{"ok": len(TinyEstimator.from_hub({REPO!r}, revision=rev).anchor_ids)}}
    except ValueError as e:
        res[rev] = {{"error": str(e)}}
print(json.dumps(res))
""", env)
    finally:
        tagged.files["estimator.json"] = original
    assert "irt_parameters.npz has sha256" in res["main"]["error"] and "refusing" in res["main"]["error"]
    assert "estimator.json has sha256" in res["v1.0.0"]["error"]
    assert res["v1.1.0"] == {"ok": 5}


# --------------------------------------------------------------------------- faults


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
    out = run_json(prelude() + f"""
res = {{"first": publish({str(folder)!r}, "1.0.0")}}
res["after_first"] = state()
res["second"] = publish({str(folder)!r}, "1.0.0")
res["after_second"] = state()
print(json.dumps(res))
""", hub_env)
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
    out = run_json(prelude() + f"""
res = {{"first": publish({str(folder)!r}, "1.0.0")}}
res["after_first"] = state()
res["second"] = publish({str(folder)!r}, "1.0.0")
res["after_second"] = state()
print(json.dumps(res))
""", hub_env)
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
    out = run_json(f"""
import json
from builder.publish import ReleaseError, publish_release
try:
    publish_release({{"tinyOrg/tinyOk": {str(ok)!r}, "tinyOrg/tinyClash": {str(clash)!r}}}, "1.0.0", progress=False)
    print(json.dumps({{"ok": True}}))
except ReleaseError as e:
    print(json.dumps({{"error": str(e)}}))
""", hub_env)
    assert "nothing was published" in out["error"] and "tinyOrg/tinyClash: tag v1.0.0 already exists" in out["error"]
    assert not hub_server.has_repo("tinyOrg/tinyOk")
    assert hub_server.refs("tinyOrg/tinyClash")["tags"] == {"v1.0.0": oid}


# --------------------------------------------------------------------------- pure functions (no Hub)


def test_versions_and_previous_tag_selection():
    from builder.publish import ConfigError, latest_release_below, parse_version, version_tag

    assert parse_version("1.2.3") == (1, 2, 3) and parse_version("v0.10.0") == (0, 10, 0)
    assert version_tag("1.0.0") == "v1.0.0"
    for bad in ("1.0", "1.0.0.0", "01.0.0", "1.0.0-rc1", "latest", "", "1.x.0"):
        with pytest.raises(ConfigError, match="invalid version"):
            parse_version(bad)
    tags = ["v1.0.0", "v1.2.0", "v1.10.0", "v2.0.0", "nightly", "v1.1.0-rc1", "1.5.0"]
    assert latest_release_below(tags, "1.10.0") == "v1.2.0"
    assert latest_release_below(tags, "1.11.0") == "v1.10.0"
    assert latest_release_below(tags, "3.0.0") == "v2.0.0"
    assert latest_release_below(tags, "1.0.0") is None
    assert latest_release_below([], "1.0.0") is None


def test_compare_trees():
    from builder.publish import LocalFile, RemoteFile, compare_trees

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


def test_validate_folder_accepts_a_build_and_names_problems(tmp_path, monkeypatch):
    from builder.publish import ReleaseError, validate_folder

    monkeypatch.delenv("HF_TOKEN", raising=False)
    good = make_folder(tmp_path / "good", seed=8)
    report = validate_folder(good)
    assert report["configs"] == {"default": {"test": 5}} and report["anchors"] == 5 and report["files"] == 6

    def broken(name, mutate):
        folder = make_folder(tmp_path / name, seed=8)
        mutate(folder)
        with pytest.raises(ReleaseError) as exc:
            validate_folder(folder)
        return str(exc.value)

    assert "does not match the manifest sha256" in broken("tampered", lambda f: (f / "estimator.py").write_text("x"))
    assert "not in the manifest" in broken("unlisted", lambda f: (f / "stray.txt").write_text("x"))
    assert "no `configs:`" in broken("nocfg", lambda f: _rewrite(f, "README.md", lambda s: s.replace("configs:", "other:")))
    assert "no file matches" in broken("nofiles", lambda f: _rewrite(f, "README.md", lambda s: s.replace("data/test-*", "data/x-*")))
    monkeypatch.setenv("HF_TOKEN", "hf_secret_for_validate_0123456789")
    assert "contains the Hub token" in broken("token", lambda f: _rewrite(f, "estimator.py", lambda s: s + "# hf_secret_for_validate_0123456789\n"))


def _rewrite(folder: Path, rel: str, fn) -> None:
    """Edit a file and refresh its manifest entry (so only the intended problem remains)."""
    p = folder / rel
    p.write_text(fn(p.read_text()))
    m = json.loads((folder / "manifest.json").read_text())
    data = p.read_bytes()
    m["files"][rel] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    (folder / "manifest.json").write_text(json.dumps(m))
