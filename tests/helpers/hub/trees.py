"""Protocol: file listings (``list_repo_tree`` with paging, ``get_paths_info``)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlencode

from .objects import Commit, HubError, Repo, Response, iso, json_response
from .request import Request, repo_of
from .store import dirs, last_commit, resolve, tree_oid


def entry(repo: Repo, commit: Commit, path: str, expand: bool) -> dict:
    """A file or folder as the tree listing shows it (``lastCommit`` and security status with ``expand``)."""
    if path in commit.files:
        blob = commit.files[path]
        d: dict[str, Any] = {"type": "file", "oid": blob.git_oid, "size": blob.size, "path": path}
        if blob.lfs:
            d["lfs"] = {"oid": blob.sha256, "size": blob.size, "pointerSize": blob.pointer_size}
        is_dir = False
    else:
        d = {"type": "directory", "oid": tree_oid(commit.files, path), "size": 0, "path": path}
        is_dir = True
    if expand:
        lc = last_commit(repo, commit, path, is_dir)
        d["lastCommit"] = {"id": lc.oid, "title": lc.title, "date": iso(lc.date)}
        if not is_dir:
            d["securityFileStatus"] = {"status": "safe", "avScan": {"virusFound": False, "virusNames": None},
                                       "pickleImportScan": None}
    return d


def tree(hub, req: Request) -> Response:
    """``GET /api/<type>s/<repo>/tree/<rev>[/<path>]?recursive=&expand=&cursor=``, paged with a
    ``Link: <...>; rel="next"`` header (folders first, then files, each sorted, like the Hub)."""
    repo = repo_of(hub, req)
    rev, path = req.args[0], "/".join(req.args[1:])
    commit = resolve(repo, unquote(rev))
    path = path.strip("/")
    recursive, expand = req.flag("recursive"), req.flag("expand")
    folders = dirs(commit.files)
    if path and path not in folders:
        if path in commit.files:
            raise HubError(400, f"{path} is a file, not a directory")
        raise HubError(404, f"Entry not found: {path}", "EntryNotFound", headers={"X-Repo-Commit": commit.oid})
    prefix = path + "/" if path else ""
    names = [p for p in list(commit.files) + sorted(folders) if p.startswith(prefix)]
    if not recursive:
        names = [p for p in names if "/" not in p[len(prefix):]]
    names = sorted(set(names), key=lambda p: (p not in folders, p))
    page_size = hub.tree_page_size_expand if expand else hub.tree_page_size
    start = int((req.query.get("cursor") or ["0"])[-1] or 0)
    page = names[start : start + page_size]
    headers = {}
    if start + page_size < len(names):
        params = {"recursive": str(recursive).lower(), "expand": str(expand).lower(), "cursor": str(start + page_size)}
        url = f"{hub.endpoint}/api/{req.repo_type}s/{req.repo_id}/tree/{quote(unquote(rev), safe='')}"
        if path:
            url += "/" + quote(path, safe="/")
        headers["Link"] = f'<{url}?{urlencode(params)}>; rel="next"'
    return json_response([entry(repo, commit, p, expand) for p in page], headers=headers)


def paths_info(hub, req: Request) -> Response:
    """``POST /api/<type>s/<repo>/paths-info/<rev>``, form-encoded ``paths=...&expand=...`` (or JSON)."""
    repo = repo_of(hub, req)
    commit = resolve(repo, "/".join(req.args))
    ctype = (req.headers.get("Content-Type") or "").lower()
    if "json" in ctype:
        payload = json.loads(req.body or b"{}")
        paths, expand = payload.get("paths", []), bool(payload.get("expand"))
        paths = [paths] if isinstance(paths, str) else paths
    else:
        form = parse_qs(req.body.decode(), keep_blank_values=True)
        paths = form.get("paths", [])
        expand = (form.get("expand") or ["false"])[-1].lower() in ("1", "true")
    folders = dirs(commit.files)
    out = []
    for p in paths:
        p = p.strip("/")
        if p in commit.files or p in folders:
            out.append(entry(repo, commit, p, expand))
    return json_response(out)
