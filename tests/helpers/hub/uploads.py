"""Protocol: uploads (preupload, the classic LFS batch API and its object store, ndjson commits)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
from typing import Any

from .objects import Blob, HubError, Response, json_response
from .request import Request, repo_of, require_write
from .store import is_lfs_path, resolve


def preupload(hub, req: Request) -> Response:
    """``POST /api/<type>s/<repo>/preupload/<rev>`` ``{files: [{path, sample, size}]}``: each file's
    ``uploadMode`` (``"lfs"`` for binaries, as the Hub decides) and the oid it has now."""
    require_write(hub, req)
    repo = repo_of(hub, req)
    commit = resolve(repo, "/".join(req.args))
    payload = json.loads(req.body or b"{}")
    out = []
    for f in payload.get("files", []):
        path = f["path"]
        sample = base64.b64decode(f.get("sample") or "")
        size = int(f.get("size") or 0)
        lfs = is_lfs_path(commit, path, sample, size)
        item: dict[str, Any] = {"path": path, "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False}
        existing = commit.files.get(path)
        if existing is not None:
            item["oid"] = existing.sha256 if existing.lfs else existing.git_oid
        out.append(item)
    return json_response({"files": out, "commitOid": commit.oid})


def lfs_batch(hub, req: Request) -> Response:
    """``POST /<prefix><repo>.git/info/lfs/objects/batch``: an upload (or download) href for each
    object the Hub does not hold yet; objects it holds get no ``actions``."""
    repo = repo_of(hub, req)
    require_write(hub, req)
    payload = json.loads(req.body or b"{}")
    operation = payload.get("operation", "upload")
    objects = []
    for obj in payload.get("objects", []):
        oid, size = obj["oid"], int(obj["size"])
        item: dict[str, Any] = {"oid": oid, "size": size, "authenticated": True}
        if operation == "upload":
            if oid not in repo.lfs:
                upload_id = secrets.token_hex(12)
                hub.store.uploads[upload_id] = ((req.repo_type, req.repo_id), oid, size)
                item["actions"] = {
                    "upload": {"href": f"{hub.endpoint}/__lfs__/{upload_id}", "expires_in": 86400},
                    "verify": {"href": f"{hub.endpoint}/{repo.url_path}.git/info/lfs/objects/verify"},
                }
        else:  # download
            if oid in repo.lfs:
                upload_id = secrets.token_hex(12)
                hub.store.uploads[upload_id] = ((req.repo_type, req.repo_id), oid, size)
                item["actions"] = {"download": {"href": f"{hub.endpoint}/__lfs__/{upload_id}"}}
            else:
                item["error"] = {"code": 404, "message": "Object does not exist"}
        objects.append(item)
    return Response(body=json.dumps({"transfer": "basic", "objects": objects, "hash_algo": "sha256"}).encode(),
                    content_type="application/vnd.git-lfs+json")


def lfs_verify(hub, req: Request) -> Response:
    """``POST /<prefix><repo>.git/info/lfs/objects/verify`` ``{oid, size}``: the object arrived."""
    repo = repo_of(hub, req)
    require_write(hub, req)
    payload = json.loads(req.body or b"{}")
    data = repo.lfs.get(payload.get("oid", ""))
    if data is None or len(data) != int(payload.get("size", -1)):
        raise HubError(404, "LFS object not found")
    return json_response({"success": True})


def lfs_object(hub, req: Request) -> Response:
    """``/__lfs__/<upload id>``, the signed-URL stand-in: PUT stores raw bytes (checked against the
    announced oid and size), GET returns them. No token needed (and none is sent)."""
    target = hub.store.uploads.get(req.args[0]) if req.args else None
    if target is None:
        raise HubError(404, "Unknown upload id")
    key, oid, size = target
    if req.method == "PUT":
        body = req.body
        if len(body) != size or hashlib.sha256(body).hexdigest() != oid:
            raise HubError(400, f"Uploaded content does not match oid/size (got {len(body)} bytes)")
        repo = hub.store.repos.get(key)
        if repo is None:
            raise HubError(404, "Repository not found")
        repo.lfs[oid] = body
        return Response(body=b"", headers={"ETag": f'"{hashlib.md5(body).hexdigest()}"'}, content_type="text/plain")
    if req.method in ("GET", "HEAD"):
        data = hub.store.repos[key].lfs.get(oid)
        if data is None:
            raise HubError(404, "Not Found")
        return Response(body=data, content_type="application/octet-stream")
    raise HubError(405, "Method not allowed")


def commit(hub, req: Request) -> Response:
    """``POST /api/<type>s/<repo>/commit/<rev>``, ``application/x-ndjson``: a ``header`` line
    ``{summary, description, parentCommit}``, then ``file`` (base64), ``lfsFile`` (an uploaded
    object), ``deletedFile`` and ``deletedFolder`` lines. One new commit on the branch (or PR);
    412 if ``parentCommit`` is not the branch head; 400 for binaries sent as regular files."""
    require_write(hub, req)
    repo = repo_of(hub, req)
    rev = "/".join(req.args)
    create_pr = (req.query.get("create_pr") or ["0"])[-1] in ("1", "true", "True")
    lines = [json.loads(line) for line in req.body.decode().splitlines() if line.strip()]
    if not lines or lines[0].get("key") != "header":
        raise HubError(400, "First line of the ndjson payload must be the header")
    header = lines[0]["value"]
    pr_num = None
    m = re.fullmatch(r"refs/pr/(\d+)", rev)
    if m:
        pr_num = int(m.group(1))
        if pr_num not in repo.prs:
            raise HubError(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        head_oid = repo.prs[pr_num]
    elif rev in repo.branches:
        head_oid = repo.branches[rev]
    elif rev in repo.tags or rev in repo.commits:
        raise HubError(400, f"Invalid rev id: {rev} (commits must target a branch)")
    else:
        raise HubError(404, f"Invalid rev id: {rev}", "RevisionNotFound")
    parent = header.get("parentCommit")
    if parent and parent != head_oid:
        raise HubError(412, "A commit has happened since. Please refresh and try again.")
    tree = dict(repo.commits[head_oid].files)
    for line in lines[1:]:
        _apply(repo, tree, line.get("key"), line.get("value") or {})
    new = hub.store.new_commit(repo, head_oid, tree, header.get("summary") or "", header.get("description") or "")
    pr_url = None
    if create_pr and pr_num is None:
        pr_num = max(repo.prs, default=0) + 1
        pr_url = f"{hub.endpoint}/{repo.url_path}/discussions/{pr_num}"
    if pr_num is not None:
        repo.prs[pr_num] = new.oid
    else:
        repo.branches[rev] = new.oid
    return json_response({
        "success": True,
        "commitOid": new.oid,
        "commitUrl": f"{hub.endpoint}/{repo.url_path}/commit/{new.oid}",
        "pullRequestUrl": pr_url,
        "hookOutput": "",
    })


def _apply(repo, tree: dict[str, Blob], key: str | None, value: dict) -> None:
    """One operation line of a commit, applied to ``tree``."""
    path = value.get("path", "")
    if key == "file":
        data = base64.b64decode(value.get("content") or "") if value.get("encoding", "base64") == "base64" \
            else (value.get("content") or "").encode()
        if b"\0" in data[:8000]:
            raise HubError(400, "Your push was rejected because it contains binary files. "
                                f"Please use LFS to store binary files. Offending file: {path}")
        tree[path] = Blob.make(data, lfs=False)
    elif key == "lfsFile":
        data = repo.lfs.get(value.get("oid", ""))
        if data is None or ("size" in value and int(value["size"]) != len(data)):
            raise HubError(400, "Your push was rejected because an LFS pointer pointed to a file that "
                                f"does not exist. Offending file: {path}")
        tree[path] = Blob.make(data, lfs=True)
    elif key == "deletedFile":
        if path not in tree:
            raise HubError(404, f"A file with this name doesn't exist: {path}", "EntryNotFound")
        del tree[path]
    elif key == "deletedFolder":
        prefix = path.rstrip("/") + "/"
        gone = [p for p in tree if p.startswith(prefix)]
        if not gone:
            raise HubError(404, f"A folder with this name doesn't exist: {path}", "EntryNotFound")
        for p in gone:
            del tree[p]
    elif key == "header":
        raise HubError(400, "Duplicate header line")
    else:
        raise HubError(400, f"Unknown commit operation {key!r}")
