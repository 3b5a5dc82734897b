"""Which protocol piece answers a request: the route table of the loopback Hub.

Paths (``{type}s`` = ``models``, ``datasets`` or ``spaces``; a repo is ``org/name`` or ``name``)::

    /api/repos/create | /api/repos/delete | /api/validate-yaml | /api/whoami-v2
    /api/{type}s/{repo}[/{action}/{args...}]        API_ROUTES by (method, action)
    /[{type}s/]{repo}.git/info/lfs/objects/{batch|verify}
    /[{type}s/]{repo}/resolve/{rev}/{path}          downloads
    /[{type}s/]{repo}                               the repo page
    /__lfs__/{upload id}                            the LFS object store (signed-URL stand-in)
"""

from __future__ import annotations

from typing import Callable
from urllib.parse import unquote

from . import downloads, refs, repos, trees, uploads
from .objects import PLURAL, HubError, Response
from .request import Request, repo_of

Handler = Callable[..., Response]

#: ``/api/...`` paths that name no repository
TOP_ROUTES: dict[tuple[str, str], Handler] = {
    ("POST", "repos/create"): repos.create_repo,
    ("DELETE", "repos/delete"): repos.delete_repo,
    ("POST", "validate-yaml"): repos.validate_yaml,
    ("GET", "whoami-v2"): repos.whoami,
}
#: ``/api/{type}s/{repo}/{action}/...`` by (method, action); ``*`` = any method
API_ROUTES: dict[tuple[str, str], Handler] = {
    ("GET", ""): repos.repo_info,
    ("GET", "revision"): repos.revision_info,
    ("PUT", "settings"): repos.settings,
    ("*", "xet-write-token"): repos.no_xet,
    ("*", "xet-read-token"): repos.no_xet,
    ("GET", "refs"): refs.list_refs,
    ("POST", "tag"): refs.create_tag,
    ("DELETE", "tag"): refs.delete_tag,
    ("POST", "branch"): refs.create_branch,
    ("DELETE", "branch"): refs.delete_branch,
    ("GET", "commits"): refs.list_commits,
    ("GET", "tree"): trees.tree,
    ("POST", "paths-info"): trees.paths_info,
    ("POST", "preupload"): uploads.preupload,
    ("POST", "commit"): uploads.commit,
}
#: actions whose routes need at least one argument (a revision, a tag, a branch)
NEEDS_ARGS = {"revision", "tree", "paths-info", "preupload", "commit", "commits", "tag", "branch"}
#: path words that end a repository id (``org/name`` vs ``name/action``)
API_ACTIONS = {
    "revision", "tree", "paths-info", "preupload", "commit", "commits", "tag", "branch", "refs",
    "xet-write-token", "xet-read-token", "settings", "discussions", "lfs-files", "treesize",
    "parquet", "croissant",
}
FILE_ACTIONS = {"resolve", "raw", "blob", "commit", "tree"}
LFS_ROUTES: dict[str, Handler] = {"batch": uploads.lfs_batch, "verify": uploads.lfs_verify}


def split_repo(rest: list[str], actions: set[str]) -> tuple[str, list[str]]:
    """``[org, name, action, ...]`` or ``[name, action, ...]`` -> (repo_id, tail)."""
    if len(rest) >= 2 and rest[1] not in actions:
        return unquote(rest[0]) + "/" + unquote(rest[1]), rest[2:]
    return unquote(rest[0]), rest[1:]


def route(hub, req: Request) -> Response:
    """The answer of the handler for ``req`` (sets the request's repository and arguments)."""
    segs = req.path.strip("/").split("/")
    if not segs or segs == [""]:
        raise HubError(404, "Not Found")
    if segs[0] == "api":
        return _api(hub, req, segs[1:])
    if segs[0] == "__lfs__":
        req.args = segs[1:]
        return uploads.lfs_object(hub, req)
    repo_type = PLURAL.get(segs[0]) if segs[0] in ("datasets", "spaces") else None
    rest = segs[1:] if repo_type else segs
    req.repo_type = repo_type or "model"
    for i in (0, 1):
        if i < len(rest) and rest[i].endswith(".git"):
            req.repo_id = "/".join(unquote(s) for s in rest[: i + 1])[:-4]
            return _git_lfs(hub, req, rest[i + 1:])
    req.repo_id, tail = split_repo(rest, FILE_ACTIONS)
    if tail and tail[0] == "resolve" and len(tail) >= 3 and req.method in ("GET", "HEAD"):
        req.args = [unquote(tail[1]), unquote("/".join(tail[2:]))]
        return downloads.resolve_file(hub, req)
    if not tail and req.method == "GET":
        return repos.repo_page(hub, req)
    raise HubError(404, "Not Found")


def _api(hub, req: Request, segs: list[str]) -> Response:
    handler = TOP_ROUTES.get((req.method, "/".join(segs)))
    if handler is not None:
        return handler(hub, req)
    if len(segs) >= 2 and segs[0] in PLURAL:
        req.repo_type = PLURAL[segs[0]]
        req.repo_id, tail = split_repo(segs[1:], API_ACTIONS)
        action = tail[0] if tail else ""
        req.args = [unquote(s) for s in tail[1:]]
        handler = API_ROUTES.get((req.method, action)) or API_ROUTES.get(("*", action))
        if handler is not None and (req.args or action not in NEEDS_ARGS):
            return handler(hub, req)
    raise HubError(404, "Not Found")


def _git_lfs(hub, req: Request, tail: list[str]) -> Response:
    if tail[:3] != ["info", "lfs", "objects"] or req.method != "POST":
        raise HubError(404, "Not Found")
    handler = LFS_ROUTES.get(tail[3] if len(tail) > 3 else "")
    if handler is None:
        repo_of(hub, req)
        raise HubError(404, "Not Found")
    return handler(hub, req)
