"""Protocol: repositories (create, delete, info, settings, page), YAML validation, whoami, Xet probes."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .objects import REPO_TYPES, URL_PREFIX, Blob, Commit, HubError, Repo, Response, iso, json_response, parse_card_data
from .request import Request, repo_of, require_write
from .store import resolve


def create_repo(hub, req: Request) -> Response:
    """``POST /api/repos/create`` ``{name, organization, type, private}``; 409 if it exists."""
    require_write(hub, req)
    payload = json.loads(req.body or b"{}")
    name = payload.get("name")
    if not name:
        raise HubError(400, "Missing repo name")
    repo_type = payload.get("type") or "model"
    if repo_type not in REPO_TYPES:
        raise HubError(400, f"Invalid repo type {repo_type!r}")
    repo_id = f"{payload.get('organization') or hub.username}/{name}"
    private = bool(payload.get("private")) or payload.get("visibility") == "private"
    url = f"{hub.endpoint}/{URL_PREFIX[repo_type]}{repo_id}"
    if (repo_type, repo_id) in hub.store.repos:
        raise HubError(409, f"You already created this {repo_type} repo", extra={"url": url})
    hub.store.create_repo(repo_id, repo_type, private=private)
    return json_response({"url": url, "name": repo_id, "id": repo_id})


def delete_repo(hub, req: Request) -> Response:
    """``DELETE /api/repos/delete`` ``{name, organization, type}``."""
    require_write(hub, req)
    payload = json.loads(req.body or b"{}")
    req.repo_type = payload.get("type") or "model"
    req.repo_id = f"{payload.get('organization') or hub.username}/{payload.get('name')}"
    repo_of(hub, req)
    del hub.store.repos[(req.repo_type, req.repo_id)]
    return Response(body=b"OK", content_type="text/plain")


def validate_yaml(hub, req: Request) -> Response:
    """``POST /api/validate-yaml`` ``{content, repoType}``: the README's front matter must be a mapping."""
    payload = json.loads(req.body or b"{}")
    content = payload.get("content") or ""
    if content.startswith("---"):
        lines = content.splitlines()
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if end is None:
            return json_response({"errors": [{"message": "YAML front matter is not closed"}], "warnings": []}, 400)
        try:
            import yaml  # type: ignore

            data = yaml.safe_load("\n".join(lines[1:end]))
        except ImportError:
            data = {}
        except Exception as e:  # noqa: BLE001 - yaml.YAMLError
            return json_response({"errors": [{"message": f"Invalid YAML: {e}"}], "warnings": []}, 400)
        if data is not None and not isinstance(data, dict):
            return json_response({"errors": [{"message": "YAML metadata must be a mapping"}], "warnings": []}, 400)
    return json_response({"errors": [], "warnings": []})


def whoami(hub, req: Request) -> Response:
    """``GET /api/whoami-v2``."""
    if hub.token is not None and req.bearer != hub.token:
        raise HubError(401, "Invalid credentials in Authorization header")
    return json_response({"type": "user", "id": "0" * 24, "name": hub.username, "fullname": hub.username,
                          "orgs": [], "auth": {"type": "access_token", "accessToken": {"role": "write"}}})


def repo_info(hub, req: Request) -> Response:
    """``GET /api/<type>s/<repo>``: ``repo_info`` at ``main``."""
    repo = repo_of(hub, req)
    return _info(repo, repo.commits[repo.branches["main"]] if "main" in repo.branches else None, req)


def revision_info(hub, req: Request) -> Response:
    """``GET /api/<type>s/<repo>/revision/<rev>``."""
    repo = repo_of(hub, req)
    return _info(repo, resolve(repo, "/".join(req.args)), req)


def settings(hub, req: Request) -> Response:
    """``PUT /api/<type>s/<repo>/settings`` ``{private | visibility}``."""
    require_write(hub, req)
    repo = repo_of(hub, req)
    payload = json.loads(req.body or b"{}")
    if "private" in payload:
        repo.private = bool(payload["private"])
    if payload.get("visibility") in ("public", "private"):
        repo.private = payload["visibility"] == "private"
    return json_response({})


def no_xet(hub, req: Request) -> Response:
    """``.../xet-write-token/<rev>``: this Hub has no Xet (clients need ``HF_HUB_DISABLE_XET=1``)."""
    repo_of(hub, req)
    raise HubError(404, "This test Hub has no Xet support: run the client with HF_HUB_DISABLE_XET=1")


def repo_page(hub, req: Request) -> Response:
    """``GET /<prefix><repo>``: the repo's web page (enough for "does it exist")."""
    repo = repo_of(hub, req)
    return Response(body=f"<html><body>{repo.repo_id}</body></html>".encode(), content_type="text/html")


def _sibling(path: str, blob: Blob, blobs: bool) -> dict:
    d: dict[str, Any] = {"rfilename": path}
    if blobs:
        d["size"] = blob.size
        d["blobId"] = blob.git_oid
        if blob.lfs:
            d["lfs"] = {"size": blob.size, "sha256": blob.sha256, "pointerSize": blob.pointer_size}
    return d


def _info(repo: Repo, commit: Commit | None, req: Request) -> Response:
    blobs = req.flag("blobs")
    card = None
    if commit is not None and "README.md" in commit.files:
        card = parse_card_data(commit.files["README.md"].data)
    files = commit.files if commit is not None else {}
    info: dict[str, Any] = {
        "_id": hashlib.sha1(f"{repo.repo_type}/{repo.repo_id}".encode()).hexdigest()[:24],
        "id": repo.repo_id,
        "author": repo.repo_id.split("/")[0] if "/" in repo.repo_id else None,
        "sha": commit.oid if commit else None,
        "lastModified": iso(commit.date if commit else repo.created_at),
        "createdAt": iso(repo.created_at),
        "private": repo.private,
        "gated": False,
        "disabled": False,
        "downloads": 0,
        "likes": 0,
        "tags": [t for t in (card or {}).get("tags", []) or [] if isinstance(t, str)],
        "cardData": card,
        "siblings": [_sibling(p, b, blobs) for p, b in sorted(files.items())],
        "usedStorage": sum(len(v) for v in repo.lfs.values()),
    }
    if repo.repo_type == "model":
        info["modelId"] = repo.repo_id
    if repo.repo_type == "dataset" and card and isinstance(card.get("description"), str):
        info["description"] = card["description"]
    return json_response(info)


__all__ = ["create_repo", "delete_repo", "validate_yaml", "whoami", "repo_info", "revision_info", "settings",
           "no_xet", "repo_page"]
