"""The Hub side of a release: compare a folder with a repository, commit it once, tag it.

* :func:`plan_publish` compares a built folder with the repository (read-only: refs, the
  recursive tree listing and ``main``'s ``manifest.json``; LFS sha256 for LFS files, git blob
  ids for regular files) and decides: ``"commit"`` (commit + tag), ``"tag"`` (``main`` already
  holds the content) or ``"none"`` (already released). Refused before anything is written: a
  tag on other content (tags are never moved), a version older than the latest released one,
  and a version older than the build on ``main`` or another build of the same version there
  (the manifest says which: a push that committed and has not tagged yet holds its version).
* :func:`execute_plan` carries it out: ``create_repo`` if needed, ONE ``create_commit`` on
  ``main`` (every file added, remote files absent from the folder deleted, ``parent_commit`` =
  the compared ``main``), then the tag on the commit it returned, then a check that the tag
  holds exactly the folder. :func:`publish_folder` does both for one folder;
  :func:`publish_release` plans every repository before writing any.
* :func:`fetch_previous` downloads the latest earlier release (for the card's changelog).

Publishing is idempotent and resumable: identical content makes no commit; if a run stops
between the commit and the tag, re-running finds ``main`` holding the content and only tags it.

Concurrent pushes: the order rule is checked against what ``main`` holds, and the commit is
conditional (``parent_commit``: the Hub refuses it with 412 when ``main`` moved since it was
checked), so checking and moving ``main`` is one compare-and-swap. A push whose commit is
refused that way plans again against the new ``main`` (at most :data:`COMMIT_ATTEMPTS` times)
and either lands on top, only tags, or is refused with the reason; a push that fails says what
the repository holds afterwards (re-read), never a guess.
The endpoint and token come from the ``huggingface_hub`` environment (``HF_ENDPOINT``,
``HF_TOKEN`` or a saved login); the token is never read here except to check that one exists.
``huggingface_hub`` is imported inside the functions.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from tinybench_builder import layout
from tinybench_builder.errors import WaitTimeout, describe_error
from tinybench_builder.progress import bar, get_logger
from tinybench_builder.hub_requests import HUB_TIMEOUT_ENV, bound_hub_requests, hub_endpoint, hub_timed_out, hub_timeout
from tinybench_builder.release.config import ReleaseError, latest_release_below, parse_version, tag_version, version_tag

_log = get_logger(__name__)

__all__ = [
    "REPO_TYPE", "HUB_MANAGED", "LocalFile", "local_files", "RemoteFile", "remote_files", "compare_trees",
    "fetch_previous", "PublishPlan", "PublishResult", "plan_publish", "execute_plan", "publish_folder",
    "publish_release", "describe_error", "token_configured", "hub_api", "hub_timeout", "bound_hub_requests",
    "hub_failure", "HUB_TIMEOUT_ENV",
]

REPO_TYPE = "dataset"
#: plans + conditional commits tried when ``main`` keeps moving under a push (concurrent pushes)
COMMIT_ATTEMPTS = 3
#: Files the Hub manages itself; never deleted, never compared.
HUB_MANAGED = frozenset({".gitattributes"})


def hub_failure(exc: BaseException, what: str, then: str = "") -> Exception:
    """The error to raise for a Hub call that failed: :class:`WaitTimeout` (exit 5) when the
    server did not answer within the bound, else a :class:`ReleaseError` (exit 1)."""
    if hub_timed_out(exc):
        return WaitTimeout(f"{what}: the Hub at {hub_endpoint()} did not answer within {hub_timeout():g} s "
                           f"(a request's bound: {HUB_TIMEOUT_ENV}){'; ' + then if then else ''}")
    return ReleaseError(f"{what}: {describe_error(exc)}{'; ' + then if then else ''}")


def hub_api(api=None):
    """``api``, or a default ``HfApi()`` (endpoint and token from the environment); every Hub
    request is bounded (:func:`bound_hub_requests`)."""
    bound_hub_requests()
    if api is not None:
        return api
    from huggingface_hub import HfApi

    return HfApi()


def token_configured() -> bool:
    """Whether a Hub token is configured (``HF_TOKEN`` or a saved login); it is not returned."""
    try:
        from huggingface_hub import get_token

        return bool(get_token())
    except Exception:  # noqa: BLE001 - no token helper: the environment decides  # pragma: no cover
        return bool(os.environ.get("HF_TOKEN"))


# ============================================================================ the two trees
@dataclass(frozen=True)
class LocalFile:
    path: str  # relative, POSIX separators
    size: int
    sha256: str
    git_oid: str  # git blob sha1: what the Hub reports for non-LFS files

    @property
    def pointer_oid(self) -> str:
        """Git blob sha1 of this file's LFS pointer (the blob id the Hub reports for LFS files)."""
        pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{self.sha256}\nsize {self.size}\n".encode()
        return hashlib.sha1(b"blob %d\0" % len(pointer) + pointer).hexdigest()


def local_files(folder: str | os.PathLike) -> dict[str, LocalFile]:
    """Every file of ``folder`` (recursive, the manifest included, hidden files skipped: they are
    neither validated nor published) with its size, sha256 and git blob id."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ReleaseError(f"{folder} is not a folder")
    out = {}
    for rel in layout.listed_files(folder, with_manifest=True):
        d = layout.file_digest(folder / rel)
        out[rel] = LocalFile(rel, d.size, d.sha256, d.git_oid)
    return out


@dataclass(frozen=True)
class RemoteFile:
    path: str
    size: int
    blob_id: str
    lfs_sha256: str | None


def remote_files(repo_id: str, revision: str, api=None) -> dict[str, RemoteFile]:
    """The files of ``repo_id`` at ``revision`` (recursive tree listing; no downloads)."""
    from huggingface_hub.hf_api import RepoFile

    api = hub_api(api)
    out = {}
    for entry in api.list_repo_tree(repo_id, recursive=True, revision=revision, repo_type=REPO_TYPE):
        if isinstance(entry, RepoFile):
            out[entry.path] = RemoteFile(entry.path, entry.size, entry.blob_id,
                                         entry.lfs.sha256 if entry.lfs is not None else None)
    return out


def compare_trees(local: Mapping[str, LocalFile], remote: Mapping[str, RemoteFile]) -> dict[str, list[str]]:
    """``{"added", "changed", "deleted", "same"}`` paths going from ``remote`` to ``local``.

    Files the Hub manages itself (``.gitattributes``) are ignored unless the folder has one.
    A file is the same when its LFS sha256 matches or, without LFS metadata, when the git blob
    id is the file's (regular file) or its LFS pointer's.
    """
    diff: dict[str, list[str]] = {"added": [], "changed": [], "deleted": [], "same": []}
    for rel, lf in local.items():
        rf = remote.get(rel)
        if rf is None:
            diff["added"].append(rel)
        elif (rf.lfs_sha256 == lf.sha256) if rf.lfs_sha256 else (rf.blob_id in (lf.git_oid, lf.pointer_oid)):
            diff["same"].append(rel)
        else:
            diff["changed"].append(rel)
    for rel in remote:
        if rel not in local and rel not in HUB_MANAGED:
            diff["deleted"].append(rel)
    return {k: sorted(v) for k, v in diff.items()}


def _identical(diff: Mapping[str, list[str]]) -> bool:
    return not (diff["added"] or diff["changed"] or diff["deleted"])


def _refs(repo_id: str, api) -> tuple[bool, str | None, dict[str, str]]:
    """``(exists, main_oid, {tag: oid})`` of a dataset repo."""
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        refs = api.list_repo_refs(repo_id, repo_type=REPO_TYPE)
    except RepositoryNotFoundError:
        return False, None, {}
    main_oid = next((b.target_commit for b in refs.branches if b.name == "main"), None)
    return True, main_oid, {t.name: t.target_commit for t in refs.tags}


def fetch_previous(repo_id: str, version: str, dest: str | os.PathLike, api=None) -> tuple[str, Path] | None:
    """Download the latest release of ``repo_id`` tagged below ``version`` into ``dest``.

    Returns ``(tag, folder)`` or None when the repo does not exist or has no earlier
    ``vX.Y.Z`` tag. Hub errors propagate.
    """
    from huggingface_hub import snapshot_download

    api = hub_api(api)
    exists, _, tags = _refs(repo_id, api)
    if not exists:
        return None
    tag = latest_release_below(tags, version)
    if tag is None:
        return None
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    snapshot_download(repo_id, repo_type=REPO_TYPE, revision=tags[tag], local_dir=dest,
                      endpoint=getattr(api, "endpoint", None))
    shutil.rmtree(dest / ".cache", ignore_errors=True)  # snapshot_download's bookkeeping
    return tag, dest



# ============================================================================ publishing
@dataclass
class PublishPlan:
    """What publishing ``folder`` to ``repo_id`` as ``tag`` needs (computed read-only)."""

    repo_id: str
    folder: Path
    tag: str
    action: str  # "commit" (commit + tag), "tag" (main already holds it), "none" (already released)
    repo_exists: bool
    main_oid: str | None
    target_oid: str | None  # the commit to tag ("tag"/"none")
    diff: dict[str, list[str]]
    local: dict[str, LocalFile] = field(repr=False, default_factory=dict)
    private: bool = False

    def describe(self) -> str:
        if self.action == "none":
            return f"{self.repo_id}: {self.tag} already released on identical content ({(self.target_oid or '')[:12]}); nothing to do"
        if self.action == "tag":
            return f"{self.repo_id}: main already holds this content ({(self.target_oid or '')[:12]}); will tag it {self.tag}"
        d = self.diff
        return (f"{self.repo_id}: will commit {len(self.local)} files (new {len(d['added'])}, changed "
                f"{len(d['changed'])}, deleted {len(d['deleted'])}, unchanged {len(d['same'])}) and tag {self.tag}")


@dataclass
class PublishResult:
    repo_id: str
    tag: str
    commit: str
    action: str  # "committed", "tagged", "unchanged"

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def plan_publish(folder: str | os.PathLike, repo_id: str, version: str, api=None, *, private: bool = False) -> PublishPlan:
    """Compare ``folder`` with the repo (read-only) and decide what to do.

    Refuses (:class:`ReleaseError`) when the tag exists on other content, or when a newer
    ``vX.Y.Z`` release exists (publishing would move ``main`` back).
    """
    api = hub_api(api)
    folder = Path(folder)
    tag = version_tag(version)
    local = local_files(folder)
    try:
        exists, main_oid, tags = _refs(repo_id, api)
        if tag in tags:
            remote = remote_files(repo_id, tags[tag], api)
            diff = compare_trees(local, remote)
            if _identical(diff):
                return PublishPlan(repo_id, folder, tag, "none", True, main_oid, tags[tag], diff, local, private)
            changed = diff["added"] + diff["changed"] + diff["deleted"]
            raise ReleaseError(
                f"{repo_id}: tag {tag} already exists on commit {tags[tag][:12]} with different content "
                f"({len(changed)} file(s) differ, e.g. {', '.join(changed[:3])}); tags are never moved: "
                "release a new version instead")
        newer = sorted((v, t) for t in tags if (v := tag_version(t)) is not None and v > parse_version(version))
        if newer:
            raise ReleaseError(f"{repo_id}: {tag} is older than the latest release {newer[-1][1]}; "
                               "publishing it would move main back: release a higher version")
        remote = remote_files(repo_id, main_oid, api) if exists and main_oid else {}
        diff = compare_trees(local, remote)
        if exists and main_oid and _identical(diff):
            return PublishPlan(repo_id, folder, tag, "tag", True, main_oid, main_oid, diff, local, private)
        on_main = _build_on_main(repo_id, main_oid, remote, api)
    except ReleaseError:
        raise
    except Exception as exc:  # noqa: BLE001 - any client error becomes a ReleaseError
        raise hub_failure(exc, f"{repo_id}: could not read the repository") from None
    if on_main is not None and (v_main := parse_version(on_main)) >= parse_version(version):
        untagged = version_tag(on_main) not in tags or tags[version_tag(on_main)] != main_oid
        pending = (", not tagged yet: a push of it is running or was interrupted; re-run that push to finish it"
                   if untagged else "")
        if v_main > parse_version(version):
            raise ReleaseError(f"{repo_id}: main holds the build of {on_main} (commit {(main_oid or '')[:12]}{pending}); "
                               f"publishing {tag} would move main back: release a higher version")
        raise ReleaseError(f"{repo_id}: main holds another build of {tag} (commit {(main_oid or '')[:12]}{pending}); a "
                           "version is published once: release a new version for this build")
    return PublishPlan(repo_id, folder, tag, "commit", exists, main_oid, None, diff, local, private)


def _build_on_main(repo_id: str, main_oid: str | None, remote: Mapping[str, RemoteFile], api) -> str | None:
    """The version of the build ``main`` holds (its ``manifest.json``), None if it holds none of ours.

    A push that has committed and not tagged yet is visible only this way: its tag is missing
    but ``main``'s manifest names its version.
    """
    if not main_oid or layout.MANIFEST_NAME not in remote:
        return None
    path = api.hf_hub_download(repo_id, layout.MANIFEST_NAME, repo_type=REPO_TYPE, revision=main_oid)
    try:
        data = json.loads(Path(path).read_bytes())
        if isinstance(data, dict) and data.get("format") == layout.DATASET_FORMAT:
            version = str(data.get("version"))
            parse_version(version)
            return version
    except (ValueError, RecursionError, ReleaseError):
        pass
    return None


def _verify_tag(plan: PublishPlan, api) -> str:
    """The tag's commit if it holds exactly the folder's files; ReleaseError otherwise."""
    try:
        _, _, tags = _refs(plan.repo_id, api)
        oid = tags.get(plan.tag)
        remote = remote_files(plan.repo_id, oid, api) if oid else None
    except Exception as exc:  # noqa: BLE001 - any client error becomes a ReleaseError
        raise hub_failure(exc, f"{plan.repo_id}: could not check tag {plan.tag}",
                          "re-run the same command to check and finish") from None
    if oid is None:
        raise ReleaseError(f"{plan.repo_id}: tag {plan.tag} is missing after tagging")
    diff = compare_trees(plan.local, remote or {})
    if not _identical(diff):
        raise ReleaseError(f"{plan.repo_id}: tag {plan.tag} ({oid[:12]}) does not hold the released files: {diff}")
    return oid


def _tag(plan: PublishPlan, oid: str, api) -> None:
    from huggingface_hub.errors import HfHubHTTPError

    error: Exception
    try:
        api.create_tag(plan.repo_id, repo_type=REPO_TYPE, tag=plan.tag, revision=oid,
                       tag_message=f"{plan.repo_id.split('/')[-1]} {plan.tag}")
        return
    except HfHubHTTPError as exc:
        error = exc
    except Exception as exc:  # noqa: BLE001 - transport errors: the tag may or may not exist now
        error = exc
    # Did the tag land anyway (a lost answer, a concurrent identical release)? Say what is there.
    try:
        _, _, tags = _refs(plan.repo_id, api)
        tagged = tags.get(plan.tag)
        same = tagged is not None and _identical(compare_trees(plan.local, remote_files(plan.repo_id, tagged, api)))
    except Exception as exc:  # noqa: BLE001 - the tags could not be read back: say so
        raise ReleaseError(
            f"{plan.repo_id}: the content is on main (commit {oid[:12]}) but creating tag {plan.tag} failed: "
            f"{describe_error(error)}, and the tags could not be read back ({describe_error(exc)}): re-run the same "
            "command to check and finish (no new commit is made)") from None
    if same:
        return
    if tagged is None:
        if hub_timed_out(error):
            raise hub_failure(error, f"{plan.repo_id}: the content is on main (commit {oid[:12]}) but creating tag "
                              f"{plan.tag} failed", "no tag was created; re-run the same command to add it")
        raise ReleaseError(
            f"{plan.repo_id}: the content is on main (commit {oid[:12]}) but creating tag {plan.tag} failed: "
            f"{describe_error(error)}. No tag was created; re-run the same command to add it (no new commit is made)")
    raise ReleaseError(
        f"{plan.repo_id}: tag {plan.tag} was created meanwhile by another push, on commit {tagged[:12]} with other "
        f"content; this push's commit {oid[:12]} is on main without a tag: {plan.tag} is the other build. Release "
        "a new version for this one")


def execute_plan(plan: PublishPlan, api=None, *, message: str | None = None, attempt: int = 0) -> PublishResult:
    """Carry out a :class:`PublishPlan`: one ``create_commit`` (if needed), then the tag.

    The commit is conditional on the ``main`` the plan compared with (``parent_commit``); when
    ``main`` moved meanwhile (a concurrent push) the folder is planned again (``attempt``
    counts the plans, at most :data:`COMMIT_ATTEMPTS`).
    """
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    api = hub_api(api)
    if plan.action in ("none", "tag"):
        oid = plan.target_oid
        assert oid is not None  # the plan found the commit to tag
        if plan.action == "none":
            return PublishResult(plan.repo_id, plan.tag, oid, "unchanged")
        _tag(plan, oid, api)
        _verify_tag(plan, api)
        return PublishResult(plan.repo_id, plan.tag, oid, "tagged")
    if not plan.repo_exists:
        try:
            api.create_repo(plan.repo_id, repo_type=REPO_TYPE, exist_ok=True, private=plan.private)
        except Exception as exc:  # noqa: BLE001 - any client error becomes a ReleaseError
            raise hub_failure(exc, f"{plan.repo_id}: could not create the repository") from None
    ops: list = [CommitOperationAdd(path_in_repo=rel, path_or_fileobj=str(plan.folder / rel)) for rel in plan.local]
    ops += [CommitOperationDelete(path_in_repo=rel) for rel in plan.diff["deleted"]]
    d = plan.diff
    summary = message or f"Release {plan.tag}"
    description = (f"{plan.repo_id.split('/')[-1]} {plan.tag}: {len(d['added'])} new, {len(d['changed'])} changed, "
                   f"{len(d['deleted'])} deleted, {len(d['same'])} unchanged file(s).")
    try:
        # right before the commit: main (and the tags) as planned? The commit itself is conditional too.
        _, main_now, tags_now = _refs(plan.repo_id, api)
        if main_now != plan.main_oid or plan.tag in tags_now or _newer_tag(tags_now, plan.tag):
            return _replan(plan, api, message, attempt, "main or the tags changed since the plan")
        info = api.create_commit(plan.repo_id, repo_type=REPO_TYPE, operations=ops, commit_message=summary,
                                 commit_description=description, parent_commit=plan.main_oid)
    except ReleaseError:
        raise
    except Exception as exc:  # noqa: BLE001 - any client error becomes a ReleaseError (or a new plan)
        if _status(exc) in (409, 412):  # main moved between the check and the commit: nothing was written
            return _replan(plan, api, message, attempt, describe_error(exc))
        raise hub_failure(exc, f"{plan.repo_id}: the commit failed", _state_after(plan, api)) from None
    _tag(plan, info.oid, api)
    _verify_tag(plan, api)
    return PublishResult(plan.repo_id, plan.tag, info.oid, "committed")


def _status(exc: BaseException) -> int | None:
    return getattr(getattr(exc, "response", None), "status_code", None)


def _newer_tag(tags: Mapping[str, str], tag: str) -> bool:
    mine = tag_version(tag)
    return mine is not None and any((v := tag_version(t)) is not None and v > mine for t in tags)


def _replan(plan: PublishPlan, api, message: str | None, attempt: int, why: str) -> PublishResult:
    """``main`` moved under this push (a concurrent one): plan again against it and carry that out."""
    if attempt + 1 >= COMMIT_ATTEMPTS:
        raise ReleaseError(f"{plan.repo_id}: main kept moving while {plan.tag} was being committed ({why}; "
                           f"{COMMIT_ATTEMPTS} attempts): nothing of this push was committed or tagged; re-run "
                           "when the other pushes are done")
    again = plan_publish(plan.folder, plan.repo_id, plan.tag[1:], api, private=plan.private)
    return execute_plan(again, api, message=message, attempt=attempt + 1)


def _state_after(plan: PublishPlan, api) -> str:
    """What the repository holds after a failed commit, read back (a sentence for the error)."""
    try:
        again = plan_publish(plan.folder, plan.repo_id, plan.tag[1:], api, private=plan.private)
    except ReleaseError as exc:
        return f"The repository now refuses this push: {str(exc).split(': ', 1)[-1]}"
    except Exception as exc:  # noqa: BLE001 pragma: no cover - plan_publish wraps its errors
        return f"The repository could not be read back ({describe_error(exc)}): re-run the same command to check"
    if again.action == "none":
        return f"{plan.tag} is published on identical content nonetheless (commit {(again.target_oid or '')[:12]})"
    if again.action == "tag":
        return (f"The content reached main (commit {(again.target_oid or '')[:12]}) but no tag was created; re-run the same "
                "command to tag it (no new commit is made)")
    return (f"No tag was created and main is unchanged, so {plan.tag} is not published; re-run the same command "
            "to retry")


def publish_folder(folder: str | os.PathLike, repo_id: str, version: str, api=None, *,
                   private: bool = False, message: str | None = None) -> PublishResult:
    """Publish one built folder to ``repo_id`` as ``vX.Y.Z`` (see :func:`plan_publish`)."""
    api = hub_api(api)
    return execute_plan(plan_publish(folder, repo_id, version, api, private=private), api, message=message)


def publish_release(folders: Mapping[str, Path], version: str, api=None, *, private: bool = False,
                    progress: bool = True, log: Callable[[str], None] | None = None) -> list[PublishResult]:
    """Publish several folders (``{repo_id: folder}``): plan all first, then execute.

    Every repository is planned before anything is written, so a refused tag anywhere stops
    the release before any repository changes. Execution stops at the first failure
    (ReleaseError); re-running converges.
    """
    api = hub_api(api)
    log = log or _log.info
    plans, refused = [], []
    for repo_id, folder in bar(list(folders.items()), desc="plan", unit="repo", enabled=progress):
        try:
            plans.append(plan_publish(folder, repo_id, version, api, private=private))
        except ReleaseError as exc:
            refused.append(str(exc))
    if refused:
        raise ReleaseError("nothing was published: " + "; ".join(refused))
    for p in plans:
        log(p.describe())
    results = []
    for plan in bar(plans, desc="publish", unit="repo", enabled=progress):
        try:
            results.append(execute_plan(plan, api))
        except ReleaseError as exc:
            done = ", ".join(f"{r.repo_id}@{r.tag}" for r in results) or "none"
            raise ReleaseError(f"{exc} (published before the failure: {done}; re-run to finish)") from None
        r = results[-1]
        log(f"{r.repo_id}: {r.tag} -> {r.commit[:12]} ({r.action})")
    return results


