"""Functions the tests run in a fresh Python pointed at the loopback Hub (:func:`helpers.client.run_in_client`).

Each takes and returns JSON values. The real ``huggingface_hub`` / ``datasets`` clients and the
project's own code run here, exactly as a user would run them.
"""

from __future__ import annotations

from typing import Any

# ============================================================================ releases (tinybench_builder.release.hub_sync, the CLI)


def repo_state(repo: str, api=None) -> dict:
    """Tags, ``main`` and the number of commits of ``repo``."""
    from huggingface_hub import HfApi

    api = api or HfApi()
    refs = api.list_repo_refs(repo, repo_type="dataset")
    return {"tags": {t.name: t.target_commit for t in refs.tags},
            "main": next(b.target_commit for b in refs.branches if b.name == "main"),
            "commits": len(api.list_repo_commits(repo, repo_type="dataset"))}


def publish_steps(repo: str, steps: list[list]) -> dict:
    """Run ``steps`` in order: ``["publish", label, folder, version]`` (``publish_folder``:
    ``{"ok": result}`` or ``{"error": message}``) or ``["state", label]`` (:func:`repo_state`)."""
    from huggingface_hub import HfApi

    from tinybench_builder.release.hub_sync import publish_folder
    from tinybench_builder.release.config import ReleaseError

    api = HfApi()
    out: dict[str, Any] = {}
    for step in steps:
        if step[0] == "publish":
            _, label, folder, version = step
            try:
                out[label] = {"ok": publish_folder(folder, repo, version, api).to_dict()}
            except ReleaseError as exc:
                out[label] = {"error": str(exc)}
        elif step[0] == "state":
            out[step[1]] = repo_state(repo, api)
        else:
            raise ValueError(f"unknown step {step!r}")
    return out


def publish_release_all(folders: dict[str, str], version: str) -> dict:
    """``publish_release({repo_id: folder}, version)``: ``{"ok": True}`` or ``{"error": message}``."""
    from tinybench_builder.release.hub_sync import publish_release
    from tinybench_builder.release.config import ReleaseError

    try:
        publish_release(folders, version, progress=False)
        return {"ok": True}
    except ReleaseError as exc:
        return {"error": str(exc)}


def consume_releases(repo: str, tags: list[str], *, offline: bool = False, subfolder: list[str] | None = None) -> dict:
    """Per tag, the ``test`` rows (``load_dataset``) and the anchors (``TinyEstimator.from_hub``).

    Online, each release's snapshot is also downloaded (what a user does to work offline
    later); offline, the documented pattern ``load_dataset(snapshot_download(..., revision=tag))``.
    ``subfolder``: ``[folder, tag]`` of a per-config estimator, returned as ``"sub"``.
    """
    from datasets import load_dataset
    from huggingface_hub import snapshot_download

    from tinybench_builder.estimator import TinyEstimator

    res: dict[str, Any] = {}
    for tag in tags:
        if offline:
            rows = load_dataset(snapshot_download(repo, repo_type="dataset", revision=tag))["test"].to_dict()
        else:
            rows = load_dataset(repo, revision=tag)["test"].to_dict()
            snapshot_download(repo, repo_type="dataset", revision=tag)
        res[tag] = {"rows": rows, "anchors": TinyEstimator.from_hub(repo, revision=tag).anchor_ids}
    if subfolder:
        res["sub"] = TinyEstimator.from_hub(repo, revision=subfolder[1], subfolder=subfolder[0]).anchor_ids
    return res


def from_hub_each(repo: str, revisions: list[str]) -> dict:
    """``TinyEstimator.from_hub`` at each revision: ``{"ok": n_anchors}`` or ``{"error": message}``."""
    from tinybench_builder.estimator import TinyEstimator

    res = {}
    for rev in revisions:
        try:
            res[rev] = {"ok": len(TinyEstimator.from_hub(repo, revision=rev).anchor_ids)}
        except ValueError as exc:
            res[rev] = {"error": str(exc)}
    return res


def release_cli(runs: list[list[str]], *, fake: bool = True) -> dict:
    """``release.py ARGS`` for each run (``tinybench_builder.cli.main.release_main``): ``{"codes": [...]}``.

    ``fake``: the release builds with :func:`helpers.folders.fake_build` instead of the real builder.
    """
    from unittest import mock

    from tinybench_builder.release import publish
    from tinybench_builder.cli.main import release_main
    from helpers.folders import fake_build

    codes = []
    with mock.patch.object(publish, "build_benchmark", fake_build if fake else publish.build_benchmark):
        for argv in runs:
            print("=== release.py " + " ".join(argv), flush=True)
            codes.append(release_main(argv))
    return {"codes": codes}


def release_then_consume(runs: list[list[str]], repo: str, tags: list[str]) -> dict:
    """Real releases (:func:`release_cli` without the fake), then per tag the tiny split's
    instructions, the anchors and a gp-IRT estimate from ``TinyEstimator.from_hub``."""
    from datasets import load_dataset

    from tinybench_builder.estimator import TinyEstimator

    res: dict[str, Any] = release_cli(runs, fake=False)
    for tag in tags:
        est = TinyEstimator.from_hub(repo, revision=tag)
        rows = load_dataset(repo, revision=tag)["test"]
        res[tag] = {"instructions": list(rows["instruction"]), "anchors": est.anchor_ids,
                    "gpirt": est.estimate([1.0] * len(est.anchor_ids))["gpirt"]}
    return res


def release_then_load(runs: list[list[str]], repo: str, tag: str, config: str | None = None,
                      split: str = "test") -> dict:
    """Real releases (:func:`release_cli`), then what a consumer gets at ``tag``: the split's
    columns and rows (``load_dataset``), the anchors and an estimate (``TinyEstimator.from_hub``)
    and the files of the release."""
    from datasets import load_dataset
    from huggingface_hub import HfApi

    from tinybench_builder.estimator import TinyEstimator

    res: dict[str, Any] = release_cli(runs, fake=False)
    rows = load_dataset(repo, config, split=split, revision=tag)
    est = TinyEstimator.from_hub(repo, revision=tag)
    res.update(columns=rows.column_names, rows=[{k: v for k, v in r.items() if isinstance(v, (str, int))}
                                                  for r in rows],
               anchors=est.anchor_ids, score=est.estimate([1.0] * len(est.anchor_ids))["score"],
               files=sorted(HfApi().list_repo_files(repo, repo_type="dataset", revision=tag)))
    return res


# ============================================================================ the loopback Hub itself (raw clients)


def protocol_tour(repo: str, parquet: str, readme: str, v1_file: str, v2_file: str) -> dict:
    """Create ``repo`` (twice: exist_ok, then 409), commit + tag two releases, a refused tag, a
    deleted tag, ``repo_info`` / ``list_repo_files`` at a tag, the client's not-found errors."""
    from huggingface_hub import CommitOperationAdd, HfApi, hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    api = HfApi()
    out: dict[str, Any] = {}
    out["url"] = str(api.create_repo(repo, repo_type="dataset"))
    out["url_again"] = str(api.create_repo(repo, repo_type="dataset", exist_ok=True))
    try:
        api.create_repo(repo, repo_type="dataset")
    except HfHubHTTPError as e:
        out["create_dup_status"] = e.response.status_code

    def release(rows_file: str, tag: str, msg: str) -> str:
        ops = [CommitOperationAdd("README.md", readme.encode()),
               CommitOperationAdd(parquet, open(rows_file, "rb").read())]
        info = api.create_commit(repo, repo_type="dataset", operations=ops, commit_message=msg)
        api.create_tag(repo, repo_type="dataset", tag=tag, revision=info.oid, tag_message=msg)
        return info.oid

    out["v1"] = release(v1_file, "v1", "release v1")
    out["v2"] = release(v2_file, "v2", "release v2")
    refs = api.list_repo_refs(repo, repo_type="dataset")
    out["branches"] = {b.name: b.target_commit for b in refs.branches}
    out["tags"] = {t.name: t.target_commit for t in refs.tags}
    try:
        api.create_tag(repo, repo_type="dataset", tag="v1", revision=out["v2"])
    except HfHubHTTPError as e:
        out["dup_tag"] = [type(e).__name__, e.response.status_code]
    api.create_tag(repo, repo_type="dataset", tag="tmp", revision="main")
    api.delete_tag(repo, repo_type="dataset", tag="tmp")
    out["tags_after_delete"] = sorted(t.name for t in api.list_repo_refs(repo, repo_type="dataset").tags)
    info = api.repo_info(repo, repo_type="dataset", revision="v1", files_metadata=True)
    out["info"] = {"sha": info.sha, "siblings": [s.rfilename for s in info.siblings],
                   "lfs": [s.rfilename for s in info.siblings if s.lfs],
                   "configs": info.card_data.to_dict().get("configs")}
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
    out["readme_ok"] = open(readme_path).read() == readme
    return out


def load_revisions_and_push(repo: str, revisions: list[str]) -> dict:
    """``load_dataset(repo, revision=rev)`` for each revision, then ``push_to_hub`` of a small
    dataset to ``tiny/pushed`` and ``load_dataset`` of it."""
    from datasets import Dataset, load_dataset

    res: dict[str, Any] = {}
    for rev in revisions:
        ds = load_dataset(repo, revision=rev)
        res[rev] = {split: ds[split].to_dict() for split in ds}
    Dataset.from_dict({"x": [1, 2]}).push_to_hub("tiny/pushed")
    res["pushed"] = load_dataset("tiny/pushed", split="train").to_dict()
    return res


def snapshots(repo: str, tags: list[str]) -> dict:
    """``{tag: snapshot_download(repo, revision=tag)}`` (the local folder)."""
    from huggingface_hub import snapshot_download

    return {t: snapshot_download(repo, repo_type="dataset", revision=t) for t in tags}


def offline_snapshots(repo: str, tags: list[str]) -> dict:
    """Offline: each tag's snapshot and its ``test`` rows, and ``hf_hub_download`` of the first tag's card."""
    from datasets import load_dataset
    from huggingface_hub import hf_hub_download, snapshot_download

    res: dict[str, Any] = {}
    for t in tags:
        path = snapshot_download(repo, repo_type="dataset", revision=t)
        res[t] = {"path": path, "rows": load_dataset(path)["test"].to_dict()}
    res["readme"] = hf_hub_download(repo, "README.md", repo_type="dataset", revision=tags[0])
    return res


def commit_one_binary(repo: str = "tiny/faults") -> dict:
    """Create ``repo`` if needed and commit one 16 KB binary file: ``{"oid"}`` or ``{"error", "status"}``."""
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi()
    api.create_repo(repo, repo_type="dataset", exist_ok=True)
    try:
        info = api.create_commit(repo, repo_type="dataset", commit_message="add",
                                 operations=[CommitOperationAdd("data/x.bin", bytes(range(256)) * 64)])
        return {"oid": info.oid}
    except Exception as e:  # noqa: BLE001 - the client's error is the test's result
        return {"error": type(e).__name__, "status": getattr(getattr(e, "response", None), "status_code", None)}


def interleaved_publish(repo: str, outer: list, inner: list, at: str) -> dict:
    """Two pushes interleaved: ``outer = [folder, version]`` is published, and when it reaches
    ``at`` (``"before_commit"``: planned, its commit not sent; ``"before_tag"``: committed, not
    tagged) ``inner`` is published from start to end. ``{"outer", "inner", "state"}``: each
    ``{"ok": result}`` or ``{"error": message}``, then :func:`repo_state` and main's files' blob ids."""
    from huggingface_hub import HfApi

    from tinybench_builder.errors import ReleaseError
    from tinybench_builder.release.hub_sync import publish_folder

    out: dict[str, Any] = {}

    def publish(label, folder, version, api):
        try:
            out[label] = {"ok": publish_folder(folder, repo, version, api).to_dict()}
        except ReleaseError as exc:
            out[label] = {"error": str(exc)}

    class Interleaving(HfApi):
        fired = False

        def _maybe(self, point):
            if point == at and not Interleaving.fired:
                Interleaving.fired = True
                publish("inner", inner[0], inner[1], HfApi())

        def create_commit(self, *args, **kwargs):
            self._maybe("before_commit")
            return super().create_commit(*args, **kwargs)

        def create_tag(self, *args, **kwargs):
            self._maybe("before_tag")
            return super().create_tag(*args, **kwargs)

    publish("outer", outer[0], outer[1], Interleaving())
    api = HfApi()
    out["state"] = repo_state(repo, api)
    out["main_files"] = {f.path: f.blob_id for f in api.list_repo_tree(repo, recursive=True, repo_type="dataset")
                         if hasattr(f, "blob_id")}
    return out


def races(cases: dict[str, dict]) -> dict:
    """:func:`interleaved_publish` for each case ``{repo: {"base": [folder, version] or None,
    "outer": [...], "inner": [...], "at": ...}}`` (the base release published first), in one process."""
    out = {}
    for repo, case in cases.items():
        if case.get("base"):
            out[repo] = {"base": publish_steps(repo, [["publish", "base", *case["base"]]])["base"]}
        else:
            out[repo] = {}
        out[repo].update(interleaved_publish(repo, case["outer"], case["inner"], case["at"]))
    return out


def timed_publish(folder: str, repo: str, version: str) -> dict:
    """``publish_folder`` timed: ``{"seconds", "error", "type"}`` (the error a stalled Hub gives)."""
    import time

    from tinybench_builder.errors import TinybenchError
    from tinybench_builder.release.hub_sync import publish_folder

    t0 = time.monotonic()
    try:
        publish_folder(folder, repo, version)
        return {"seconds": time.monotonic() - t0, "error": None, "type": None}
    except TinybenchError as exc:
        return {"seconds": time.monotonic() - t0, "error": str(exc), "type": type(exc).__name__,
                "exit_code": exc.exit_code}
