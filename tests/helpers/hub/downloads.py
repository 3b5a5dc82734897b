"""Protocol: file downloads (``HEAD``/``GET /<prefix><repo>/resolve/<rev>/<path>``, with ``Range``)."""

from __future__ import annotations

import re

from .objects import HubError, Response
from .request import Request, repo_of
from .store import resolve


def resolve_file(hub, req: Request) -> Response:
    """The file at a revision, with the headers ``hf_hub_download`` needs: ``X-Repo-Commit``,
    ``ETag`` (``X-Linked-Etag`` and ``X-Linked-Size`` for LFS files); ``Range`` gives 206.
    A missing file is 404 ``EntryNotFound`` with ``X-Repo-Commit``. ``req.args`` = [rev, path]."""
    rev, path = req.args
    repo = repo_of(hub, req)
    commit = resolve(repo, rev)
    blob = commit.files.get(path)
    if blob is None:
        raise HubError(404, f"Entry not found: {path}", "EntryNotFound", headers={"X-Repo-Commit": commit.oid})
    headers = {
        "X-Repo-Commit": commit.oid,
        "ETag": f'"{blob.etag}"',
        "Accept-Ranges": "bytes",
        "Content-Disposition": f'inline; filename="{path.rsplit("/", 1)[-1]}"',
    }
    if blob.lfs:
        headers["X-Linked-Etag"] = f'"{blob.sha256}"'
        headers["X-Linked-Size"] = str(blob.size)
    ctype = "text/plain; charset=utf-8" if not blob.lfs else "application/octet-stream"
    data, status = blob.data, 200
    rng = req.headers.get("Range")
    if rng:
        m = re.fullmatch(r"\s*bytes=(\d*)-(\d*)\s*", rng)
        if m and (m.group(1) or m.group(2)):
            size = blob.size
            if m.group(1):
                start = int(m.group(1))
                end = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
            else:
                start, end = max(0, size - int(m.group(2))), size - 1
            if start >= size or start > end:
                raise HubError(416, "Requested range not satisfiable", headers={
                    "Content-Range": f"bytes */{size}", "X-Repo-Commit": commit.oid})
            data, status = blob.data[start : end + 1], 206
            headers["Content-Range"] = f"bytes {start}-{end}/{size}"
    return Response(status=status, body=data, headers=headers, content_type=ctype)
