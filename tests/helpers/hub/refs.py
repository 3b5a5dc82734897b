"""Protocol: refs (branches, tags, PR refs) and the commit list."""

from __future__ import annotations

import json

from .objects import HubError, Response, iso, json_response
from .request import Request, repo_of, require_write
from .store import resolve


def list_refs(hub, req: Request) -> Response:
    """``GET /api/<type>s/<repo>/refs``: ``{branches, tags, converts}`` (+ ``pullRequests``)."""
    repo = repo_of(hub, req)
    data = {
        "branches": [{"name": n, "ref": f"refs/heads/{n}", "targetCommit": o} for n, o in repo.branches.items()],
        "tags": [{"name": n, "ref": f"refs/tags/{n}", "targetCommit": o} for n, o in repo.tags.items()],
        "converts": [],
    }
    if req.query.get("include_prs"):
        data["pullRequests"] = [{"name": f"refs/pr/{n}", "ref": f"refs/pr/{n}", "targetCommit": o}
                                for n, o in repo.prs.items()]
    return json_response(data)


def create_tag(hub, req: Request) -> Response:
    """``POST /api/<type>s/<repo>/tag/<rev>`` ``{tag, message}``; 409 if the tag exists."""
    require_write(hub, req)
    repo = repo_of(hub, req)
    payload = json.loads(req.body or b"{}")
    tag = payload.get("tag")
    if not tag:
        raise HubError(400, "Missing tag name")
    commit = resolve(repo, "/".join(req.args))
    if tag in repo.tags:
        raise HubError(409, f"Tag {tag} already exists")
    repo.tags[tag] = commit.oid
    repo.tag_messages[tag] = payload.get("message") or ""
    return json_response({})


def delete_tag(hub, req: Request) -> Response:
    """``DELETE /api/<type>s/<repo>/tag/<tag>``."""
    require_write(hub, req)
    repo = repo_of(hub, req)
    tag = "/".join(req.args)
    if tag not in repo.tags:
        raise HubError(404, f"Invalid rev id: {tag}", "RevisionNotFound")
    del repo.tags[tag]
    repo.tag_messages.pop(tag, None)
    return json_response({})


def create_branch(hub, req: Request) -> Response:
    """``POST /api/<type>s/<repo>/branch/<branch>`` ``{startingPoint}``; 409 if it exists."""
    require_write(hub, req)
    repo = repo_of(hub, req)
    branch = "/".join(req.args)
    if branch.startswith("refs/"):
        raise HubError(400, f"Invalid reference for a branch: {branch}")
    payload = json.loads(req.body or b"{}")
    start = resolve(repo, payload.get("startingPoint") or "main")
    if branch in repo.branches:
        raise HubError(409, f"Reference already exists: refs/heads/{branch}")
    repo.branches[branch] = start.oid
    return json_response({})


def delete_branch(hub, req: Request) -> Response:
    """``DELETE /api/<type>s/<repo>/branch/<branch>`` (never ``main``)."""
    require_write(hub, req)
    repo = repo_of(hub, req)
    branch = "/".join(req.args)
    if branch not in repo.branches:
        raise HubError(404, f"Invalid rev id: {branch}", "RevisionNotFound")
    if branch == "main":
        raise HubError(403, "Cannot delete the default branch")
    del repo.branches[branch]
    return json_response({})


def list_commits(hub, req: Request) -> Response:
    """``GET /api/<type>s/<repo>/commits/<rev>``: first-parent history, newest first."""
    repo = repo_of(hub, req)
    out, c = [], resolve(repo, "/".join(req.args))
    while True:
        out.append({"id": c.oid, "title": c.title, "message": c.message, "date": iso(c.date),
                    "authors": [{"user": hub.username, "avatar": ""}]})
        if c.parent is None:
            break
        c = repo.commits[c.parent]
    return json_response(out)
