"""One HTTP request as the protocol handlers see it, and the checks they share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .objects import HubError, Repo

if TYPE_CHECKING:  # pragma: no cover
    from .server import HubServer


@dataclass
class Request:
    """Method, path (no query), parsed query, body, headers and bearer token; after routing, the
    repository (``repo_type``, ``repo_id``) and the path arguments after the action (unquoted)."""

    method: str
    path: str
    query: dict[str, list[str]]
    body: bytes
    headers: Any
    bearer: str | None
    repo_type: str = ""
    repo_id: str = ""
    args: list[str] = field(default_factory=list)

    def flag(self, name: str) -> bool:
        """A boolean query parameter (``?recursive=true``)."""
        return (self.query.get(name) or ["false"])[-1].lower() in ("1", "true")


def require_write(hub: "HubServer", req: Request) -> None:
    """Writes need the server's token (when it has one)."""
    if hub.token is not None and req.bearer != hub.token:
        raise HubError(401, "Invalid credentials in Authorization header")


def repo_of(hub: "HubServer", req: Request) -> Repo:
    """The request's repository, as its token may see it."""
    return hub.store.visible_repo(req.repo_type, req.repo_id, req.bearer)
