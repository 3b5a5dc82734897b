"""A small, in-memory, Hugging Face Hub-compatible HTTP server (test fixture only).

It speaks enough of the Hub protocol for the real ``huggingface_hub`` (2.x) and ``datasets``
clients: repo creation, preupload, classic LFS batch upload (Xet must be disabled on the
client with ``HF_HUB_DISABLE_XET=1``), ndjson commits, branches, tags, refs, repo info,
tree listing, paths-info and ``resolve`` downloads (HEAD/GET, Range). See
``/work/shared/docs/HUB_PROTOCOL.md``.

Stdlib only. Typical use::

    with HubServer(token="hf_test") as hub:
        env = hub.client_env(tmp_path, token="hf_test")
        proc = run_client("from huggingface_hub import HfApi; ...", env)

The client libraries read ``HF_ENDPOINT`` at import time: always run them in a subprocess
(:func:`run_client`) with the environment from :meth:`HubServer.client_env`.

Fault injection (thread-safe)::

    hub.inject_fault("http500", r"/commit/", times=1)        # answer 500 once
    hub.inject_fault("drop", r"^/__lfs__/", method="PUT")    # read part of the body, close the socket
    hub.inject_fault("http409", r"/tag/")                    # any "httpNNN" works

Every request is recorded in ``hub.requests`` as ``(method, path)`` (path without the query
string) and in ``hub.log`` with more detail (query, bearer token, status).
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlencode

__all__ = ["HubServer", "Fault", "run_client", "DEFAULT_TOKEN"]

DEFAULT_TOKEN = "hf_testhub_dummy_token_0123456789"

REPO_TYPES = ("model", "dataset", "space")
_PLURAL = {"models": "model", "datasets": "dataset", "spaces": "space"}
_URL_PREFIX = {"model": "", "dataset": "datasets/", "space": "spaces/"}

# Patterns of the default .gitattributes the Hub writes into every new repo (abridged).
DEFAULT_LFS_PATTERNS = (
    "*.7z", "*.arrow", "*.bin", "*.bz2", "*.ckpt", "*.ftz", "*.gz", "*.h5", "*.joblib",
    "*.lfs.*", "*.lz4", "*.mds", "*.mlmodel", "*.model", "*.msgpack", "*.npy", "*.npz",
    "*.onnx", "*.ot", "*.parquet", "*.pb", "*.pickle", "*.pkl", "*.pt", "*.pth", "*.rar",
    "*.safetensors", "saved_model/**/*", "*.tar.*", "*.tar", "*.tflite", "*.tgz", "*.wasm",
    "*.xz", "*.zip", "*.zst", "*tfevents*",
    # audio / images
    "*.mp3", "*.ogg", "*.wav", "*.flac", "*.jpg", "*.jpeg", "*.png", "*.webp", "*.gif",
)
DEFAULT_GITATTRIBUTES = "".join(
    f"{p} filter=lfs diff=lfs merge=lfs -text\n" for p in DEFAULT_LFS_PATTERNS
).encode()

LFS_SIZE_THRESHOLD = 10 * 1024 * 1024  # the Hub stores files >= 10 MB in LFS whatever their type

_SHA1_RE = re.compile(r"^[0-9a-f]{40}$")


# --------------------------------------------------------------------------- objects


def git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(sha256: str, size: int) -> bytes:
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + (
        f"{int((ts % 1) * 1000):03d}Z"
    )


@dataclass(frozen=True)
class Blob:
    data: bytes
    lfs: bool
    sha256: str
    git_oid: str  # git blob sha1 (of the pointer file for LFS blobs)

    @classmethod
    def make(cls, data: bytes, lfs: bool) -> "Blob":
        sha256 = hashlib.sha256(data).hexdigest()
        git_oid = git_blob_oid(lfs_pointer(sha256, len(data)) if lfs else data)
        return cls(data=data, lfs=lfs, sha256=sha256, git_oid=git_oid)

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def pointer_size(self) -> int:
        return len(lfs_pointer(self.sha256, len(self.data)))

    @property
    def etag(self) -> str:
        return self.sha256 if self.lfs else self.git_oid


@dataclass
class Commit:
    oid: str
    parent: str | None
    title: str
    message: str
    date: float
    files: dict[str, Blob]


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    private: bool
    created_at: float
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    tag_messages: dict[str, str] = field(default_factory=dict)
    prs: dict[int, str] = field(default_factory=dict)
    lfs: dict[str, bytes] = field(default_factory=dict)  # sha256 -> content

    @property
    def url_path(self) -> str:
        return f"{_URL_PREFIX[self.repo_type]}{self.repo_id}"


@dataclass
class Fault:
    """An injected fault; ``remaining`` counts down to 0, ``hits`` counts matched requests."""

    kind: str
    pattern: re.Pattern
    remaining: int
    method: str | None = None
    hits: int = 0

    @property
    def status(self) -> int | None:
        m = re.fullmatch(r"http(\d{3})", self.kind)
        return int(m.group(1)) if m else None


class HubError(Exception):
    def __init__(self, status: int, message: str, code: str | None = None, headers: dict | None = None,
                 extra: dict | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.headers = headers or {}
        self.extra = extra or {}  # more fields for the JSON error body


@dataclass
class _Response:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json; charset=utf-8"


def _json(obj: Any, status: int = 200, headers: dict | None = None) -> _Response:
    return _Response(status=status, body=json.dumps(obj).encode(), headers=headers or {})


def parse_card_data(readme: bytes) -> dict | None:
    """Parse the YAML front matter of a README (pyyaml if available, else a tiny fallback)."""
    text = readme.decode("utf-8", errors="replace")
    if not text.startswith("---"):
        return None
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        return None
    block = "\n".join(lines[1:end])
    try:
        import yaml  # type: ignore

        data = yaml.safe_load(block)
    except ImportError:  # minimal "key: scalar" parse
        data = {}
        for line in block.splitlines():
            if line and not line.startswith((" ", "-", "#")) and ":" in line:
                k, v = line.split(":", 1)
                data[k.strip()] = v.strip() or None
    return data if isinstance(data, dict) else None


# --------------------------------------------------------------------------- server


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "TestHub/1.0"

    def log_message(self, format, *args):  # noqa: A002 - silence stderr logging
        pass

    def _dispatch(self):
        self.server.hub._handle(self)  # type: ignore[attr-defined]

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = _dispatch


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True


class HubServer:
    """In-memory Hub-compatible server on 127.0.0.1.

    Args:
        port: 0 picks a free port.
        token: if set, write requests must carry ``Authorization: Bearer <token>`` (else 401),
            and private repos are hidden from requests without it.
        username: namespace used when ``create_repo`` gets no organization (and by whoami).
        tree_page_size: entries per ``tree`` page (the Hub uses 1000; 50 with expand).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        token: str | None = None,
        username: str = "tester",
        tree_page_size: int = 1000,
        tree_page_size_expand: int = 50,
    ):
        self.host = host
        self.port = port
        self.token = token
        self.username = username
        self.tree_page_size = tree_page_size
        self.tree_page_size_expand = tree_page_size_expand
        self._lock = threading.RLock()
        self._repos: dict[tuple[str, str], Repo] = {}
        self._uploads: dict[str, tuple[tuple[str, str], str, int]] = {}
        self._faults: list[Fault] = []
        self._counter = 0
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.requests: list[tuple[str, str]] = []
        self.log: list[dict] = []
        self.seen_tokens: set[str] = set()

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> "HubServer":
        if self._httpd is not None:
            return self
        self._httpd = _HTTPServer((self.host, self.port), _Handler)
        self._httpd.hub = self  # type: ignore[attr-defined]
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1}, name="test-hub", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> "HubServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"

    url = endpoint

    def client_env(self, home: str | os.PathLike, token: str | None = None, offline: bool = False) -> dict:
        """Environment for a client subprocess pointed at this server (isolated ``HF_HOME``)."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not (k.startswith(("HF_", "HUGGINGFACE_")) or k in ("HUGGING_FACE_HUB_TOKEN",))
        }
        home = Path(home)
        home.mkdir(parents=True, exist_ok=True)
        no_proxy = ",".join(x for x in (env.get("NO_PROXY") or env.get("no_proxy"), "127.0.0.1", "localhost") if x)
        env.update(
            HF_ENDPOINT=self.endpoint,
            HF_HUB_DISABLE_XET="1",
            HF_HOME=str(home),
            HF_TOKEN=token or self.token or DEFAULT_TOKEN,
            HF_HUB_DISABLE_TELEMETRY="1",
            HF_HUB_DISABLE_PROGRESS_BARS="1",
            NO_PROXY=no_proxy,
            no_proxy=no_proxy,
            PYTHONUNBUFFERED="1",
        )
        if offline:
            env["HF_HUB_OFFLINE"] = "1"
            env["HF_DATASETS_OFFLINE"] = "1"
        return env

    # ------------------------------------------------------------------ faults & logs

    def inject_fault(self, kind: str, path_regex: str, times: int = 1, method: str | None = None) -> Fault:
        """Make the next ``times`` requests whose path matches ``path_regex`` (``re.search``) fail.

        kinds: ``"drop"`` (read part of the request body, then close the connection without
        answering), ``"httpNNN"`` e.g. ``"http500"``, ``"http409"``, ``"http503"`` (consume the
        body and answer that status with a JSON error, nothing is applied). ``method`` restricts
        to one HTTP method. Returns the live :class:`Fault` (``hits``/``remaining``).
        """
        if kind != "drop" and not re.fullmatch(r"http\d{3}", kind):
            raise ValueError(f"unknown fault kind {kind!r}")
        fault = Fault(kind=kind, pattern=re.compile(path_regex), remaining=times, method=method and method.upper())
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def clear_log(self) -> None:
        with self._lock:
            self.requests.clear()
            self.log.clear()
            self.seen_tokens.clear()

    def _take_fault(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.remaining > 0 and (fault.method in (None, method)) and fault.pattern.search(path):
                    fault.remaining -= 1
                    fault.hits += 1
                    return fault
        return None

    # ------------------------------------------------------------------ direct (non-HTTP) helpers

    def create_repo(self, repo_id: str, repo_type: str = "dataset", private: bool = False) -> Repo:
        """Create a repo directly (with the Hub's initial ``.gitattributes`` commit)."""
        with self._lock:
            key = (repo_type, repo_id)
            if key in self._repos:
                raise HubError(409, f"You already created this {repo_type} repo")
            repo = Repo(repo_type=repo_type, repo_id=repo_id, private=private, created_at=time.time())
            self._repos[key] = repo
            self._new_commit(repo, None, {".gitattributes": Blob.make(DEFAULT_GITATTRIBUTES, False)}, "initial commit", "")
            return repo

    def commit_files(
        self,
        repo_id: str,
        files: dict[str, bytes | None],
        message: str = "seed",
        *,
        repo_type: str = "dataset",
        branch: str = "main",
    ) -> str:
        """Commit directly (no HTTP): ``files`` maps path -> bytes (None deletes). Returns the oid."""
        with self._lock:
            repo = self.get_repo(repo_id, repo_type)
            head = repo.commits[repo.branches[branch]]
            tree = dict(head.files)
            for path, data in files.items():
                if data is None:
                    tree.pop(path, None)
                else:
                    tree[path] = Blob.make(data, self._is_lfs_path(head, path, data[:512], len(data)))
                    if tree[path].lfs:
                        repo.lfs[tree[path].sha256] = data
            commit = self._new_commit(repo, head.oid, tree, message, "")
            repo.branches[branch] = commit.oid
            return commit.oid

    def get_repo(self, repo_id: str, repo_type: str = "dataset") -> Repo:
        with self._lock:
            try:
                return self._repos[(repo_type, repo_id)]
            except KeyError:
                raise KeyError(f"no {repo_type} repo {repo_id!r}") from None

    def has_repo(self, repo_id: str, repo_type: str = "dataset") -> bool:
        with self._lock:
            return (repo_type, repo_id) in self._repos

    def refs(self, repo_id: str, repo_type: str = "dataset") -> dict:
        """``{"branches": {name: oid}, "tags": {name: oid}}``."""
        with self._lock:
            repo = self.get_repo(repo_id, repo_type)
            return {"branches": dict(repo.branches), "tags": dict(repo.tags)}

    def history(self, repo_id: str, revision: str = "main", repo_type: str = "dataset") -> list[Commit]:
        """First-parent history, newest first."""
        with self._lock:
            repo = self.get_repo(repo_id, repo_type)
            out, oid = [], self._resolve(repo, revision).oid
            while oid is not None:
                c = repo.commits[oid]
                out.append(c)
                oid = c.parent
            return out

    def files(self, repo_id: str, revision: str = "main", repo_type: str = "dataset") -> dict[str, bytes]:
        with self._lock:
            repo = self.get_repo(repo_id, repo_type)
            return {p: b.data for p, b in self._resolve(repo, revision).files.items()}

    # ------------------------------------------------------------------ internals: repo state

    def _new_commit(self, repo: Repo, parent: str | None, files: dict[str, Blob], title: str, message: str) -> Commit:
        self._counter += 1
        now = time.time()
        tree = self._tree_oid(files, "")
        raw = f"tree {tree}\nparent {parent or ''}\nauthor {self.username} {now:.6f} {self._counter}\n\n{title}\n\n{message}"
        oid = hashlib.sha1(raw.encode()).hexdigest()
        commit = Commit(oid=oid, parent=parent, title=title, message=message, date=now, files=files)
        repo.commits[oid] = commit
        if parent is None:
            repo.branches["main"] = oid
        return commit

    @staticmethod
    def _tree_oid(files: dict[str, Blob], prefix: str) -> str:
        h = hashlib.sha1(b"tree\0")
        for p in sorted(files):
            if not prefix or p.startswith(prefix + "/"):
                h.update(f"{p} {files[p].git_oid}\n".encode())
        return h.hexdigest()

    def _resolve(self, repo: Repo, revision: str) -> Commit:
        rev = revision
        if rev in repo.branches:
            return repo.commits[repo.branches[rev]]
        if rev in repo.tags:
            return repo.commits[repo.tags[rev]]
        if rev.startswith("refs/heads/") and rev[11:] in repo.branches:
            return repo.commits[repo.branches[rev[11:]]]
        if rev.startswith("refs/tags/") and rev[10:] in repo.tags:
            return repo.commits[repo.tags[rev[10:]]]
        m = re.fullmatch(r"refs/pr/(\d+)", rev)
        if m and int(m.group(1)) in repo.prs:
            return repo.commits[repo.prs[int(m.group(1))]]
        if _SHA1_RE.match(rev) and rev in repo.commits:
            return repo.commits[rev]
        raise HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")

    def _repo(self, repo_type: str, repo_id: str, h: "_Handler | None" = None) -> Repo:
        repo = self._repos.get((repo_type, repo_id))
        if repo is None or (repo.private and self.token is not None and self._bearer(h) != self.token):
            raise HubError(404 if repo is None or self.token is None else 401, "Repository not found", "RepoNotFound")
        return repo

    def _is_lfs_path(self, commit: Commit | None, path: str, sample: bytes, size: int) -> bool:
        if size == 0:
            return False
        if size >= LFS_SIZE_THRESHOLD or b"\0" in sample:
            return True
        patterns: list[str] = list(DEFAULT_LFS_PATTERNS)
        if commit is not None and ".gitattributes" in commit.files:
            patterns = [
                line.split()[0]
                for line in commit.files[".gitattributes"].data.decode(errors="replace").splitlines()
                if "filter=lfs" in line and line.split() and not line.startswith("#")
            ]
        name = path.rsplit("/", 1)[-1]
        for pat in patterns:
            if "/" in pat:
                if fnmatch.fnmatch(path, pat.replace("**/", "*")):
                    return True
            elif fnmatch.fnmatch(name, pat):
                return True
        return False

    def _last_commit(self, repo: Repo, commit: Commit, path: str, is_dir: bool) -> Commit:
        def snap(c: Commit):
            if is_dir:
                return tuple((p, b.git_oid) for p, b in sorted(c.files.items()) if p.startswith(path + "/"))
            b = c.files.get(path)
            return b.git_oid if b else None

        cur = commit
        cur_snap = snap(cur)
        while cur.parent is not None:
            parent = repo.commits[cur.parent]
            if snap(parent) != cur_snap:
                return cur
            cur = parent
        return cur

    # ------------------------------------------------------------------ internals: HTTP

    @staticmethod
    def _bearer(h: "_Handler | None") -> str | None:
        if h is None:
            return None
        auth = h.headers.get("Authorization") or ""
        return auth[7:].strip() if auth.lower().startswith("bearer ") else None

    def _require_write(self, h: _Handler) -> None:
        if self.token is not None and self._bearer(h) != self.token:
            raise HubError(401, "Invalid credentials in Authorization header")

    @staticmethod
    def _read_body(h: _Handler, limit: int | None = None) -> bytes:
        te = (h.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            out = bytearray()
            while True:
                line = h.rfile.readline()
                if not line:
                    break
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while h.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                out += h.rfile.read(size)
                h.rfile.readline()
                if limit is not None and len(out) >= limit:
                    break
            return bytes(out)
        length = int(h.headers.get("Content-Length") or 0)
        if limit is not None:
            length = min(length, limit)
        return h.rfile.read(length) if length > 0 else b""

    def _drop(self, h: _Handler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        chunked = "chunked" in (h.headers.get("Transfer-Encoding") or "").lower()
        if length > 1 or chunked:  # read (roughly) half of the body: the drop happens mid-upload
            self._read_body(h, limit=max(1, length // 2) if length else 1)
        h.close_connection = True
        try:
            h.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _handle(self, h: _Handler) -> None:
        method = h.command
        raw_path, _, query = h.path.partition("?")
        token = self._bearer(h)
        entry = {"method": method, "path": raw_path, "query": query, "token": token, "status": None,
                 "range": h.headers.get("Range")}
        with self._lock:
            self.requests.append((method, raw_path))
            self.log.append(entry)
            if token:
                self.seen_tokens.add(token)

        fault = self._take_fault(method, raw_path)
        if fault is not None and fault.kind == "drop":
            entry["status"] = "dropped"
            self._drop(h)
            return
        body = self._read_body(h) if method in ("POST", "PUT", "PATCH", "DELETE") else b""
        try:
            if fault is not None:
                raise HubError(fault.status or 500, f"Injected fault {fault.kind}")
            resp = self._route(h, method, raw_path, parse_qs(query, keep_blank_values=True), body)
        except HubError as e:
            headers = dict(e.headers)
            if e.code:
                headers["X-Error-Code"] = e.code
            headers["X-Error-Message"] = e.message.encode("ascii", "replace").decode()
            resp = _json({"error": e.message, **e.extra}, status=e.status, headers=headers)
        except Exception as e:  # pragma: no cover - server bug: answer 500 with the reason
            resp = _json({"error": f"test hub internal error: {type(e).__name__}: {e}"}, status=500)
        entry["status"] = resp.status
        self._write(h, resp, head=(method == "HEAD"))

    @staticmethod
    def _write(h: _Handler, resp: _Response, head: bool) -> None:
        try:
            h.send_response(resp.status)
            headers = {"Content-Type": resp.content_type, **resp.headers}
            if "Content-Length" not in headers:
                headers["Content-Length"] = str(len(resp.body))
            for k, v in headers.items():
                h.send_header(k, v)
            h.end_headers()
            if not head and resp.body:
                h.wfile.write(resp.body)
            h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            h.close_connection = True

    # -- routing

    _REPO_ACTIONS = {
        "revision", "tree", "paths-info", "preupload", "commit", "commits", "tag", "branch", "refs",
        "xet-write-token", "xet-read-token", "settings", "discussions", "lfs-files", "treesize",
        "parquet", "croissant",
    }

    @classmethod
    def _split_repo(cls, rest: list[str], actions: set[str]) -> tuple[str, list[str]]:
        """Split ``[org, name, action, ...]`` or ``[name, action, ...]`` into (repo_id, tail)."""
        if len(rest) >= 2 and rest[1] not in actions:
            return unquote(rest[0]) + "/" + unquote(rest[1]), rest[2:]
        return unquote(rest[0]), rest[1:]

    def _route(self, h: _Handler, method: str, path: str, q: dict, body: bytes) -> _Response:
        segs = path.strip("/").split("/")
        if not segs or segs == [""]:
            raise HubError(404, "Not Found")
        if segs[0] == "api":
            return self._route_api(h, method, segs[1:], q, body)
        if segs[0] == "__lfs__":
            return self._lfs_object(h, method, segs[1:], body)
        # /{prefix}{repo}/resolve/..., /{prefix}{repo}.git/info/lfs/objects/...
        repo_type = _PLURAL.get(segs[0]) if segs[0] in ("datasets", "spaces") else None
        rest = segs[1:] if repo_type else segs
        repo_type = repo_type or "model"
        for i in (0, 1):
            if i < len(rest) and rest[i].endswith(".git"):
                repo_id = "/".join(unquote(s) for s in rest[: i + 1])[:-4]
                return self._git_route(h, method, repo_type, repo_id, rest[i + 1 :], body)
        repo_id, tail = self._split_repo(rest, {"resolve", "raw", "blob", "commit", "tree"})
        if tail and tail[0] == "resolve" and len(tail) >= 3 and method in ("GET", "HEAD"):
            return self._resolve_file(h, repo_type, repo_id, unquote(tail[1]), unquote("/".join(tail[2:])))
        if not tail and method == "GET":  # repo page: enough for "does it exist"
            repo = self._repo(repo_type, repo_id, h)
            return _Response(body=f"<html><body>{repo.repo_id}</body></html>".encode(), content_type="text/html")
        raise HubError(404, "Not Found")

    def _route_api(self, h: _Handler, method: str, segs: list[str], q: dict, body: bytes) -> _Response:
        if segs == ["repos", "create"] and method == "POST":
            return self._api_create_repo(h, body)
        if segs == ["repos", "delete"] and method == "DELETE":
            return self._api_delete_repo(h, body)
        if segs == ["validate-yaml"] and method == "POST":
            return self._api_validate_yaml(body)
        if segs == ["whoami-v2"] and method == "GET":
            if self.token is not None and self._bearer(h) != self.token:
                raise HubError(401, "Invalid credentials in Authorization header")
            return _json({"type": "user", "id": "0" * 24, "name": self.username, "fullname": self.username,
                          "orgs": [], "auth": {"type": "access_token", "accessToken": {"role": "write"}}})
        if len(segs) >= 2 and segs[0] in _PLURAL:
            repo_type = _PLURAL[segs[0]]
            repo_id, tail = self._split_repo(segs[1:], self._REPO_ACTIONS)
            return self._repo_api(h, method, repo_type, repo_id, tail, q, body)
        raise HubError(404, "Not Found")

    def _repo_api(self, h, method, repo_type, repo_id, tail, q, body) -> _Response:
        action = tail[0] if tail else ""
        args = [unquote(s) for s in tail[1:]]
        with self._lock:
            if action in ("xet-write-token", "xet-read-token"):
                self._repo(repo_type, repo_id, h)
                raise HubError(404, "This test Hub has no Xet support: run the client with HF_HUB_DISABLE_XET=1")
            if action == "" and method == "GET":
                repo = self._repo(repo_type, repo_id, h)
                return self._api_info(repo, repo.commits[repo.branches["main"]] if "main" in repo.branches else None, q)
            if action == "revision" and method == "GET" and args:
                repo = self._repo(repo_type, repo_id, h)
                return self._api_info(repo, self._resolve(repo, "/".join(args)), q)
            if action == "tree" and method == "GET" and args:
                return self._api_tree(h, repo_type, repo_id, args[0], "/".join(args[1:]), q)
            if action == "paths-info" and method == "POST" and args:
                return self._api_paths_info(h, repo_type, repo_id, "/".join(args), body)
            if action == "preupload" and method == "POST" and args:
                return self._api_preupload(h, repo_type, repo_id, "/".join(args), body)
            if action == "commit" and method == "POST" and args:
                return self._api_commit(h, repo_type, repo_id, "/".join(args), q, body)
            if action == "commits" and method == "GET" and args:
                repo = self._repo(repo_type, repo_id, h)
                out, c = [], self._resolve(repo, "/".join(args))
                while True:
                    out.append({"id": c.oid, "title": c.title, "message": c.message, "date": _iso(c.date),
                                "authors": [{"user": self.username, "avatar": ""}]})
                    if c.parent is None:
                        break
                    c = repo.commits[c.parent]
                return _json(out)
            if action == "refs" and method == "GET":
                repo = self._repo(repo_type, repo_id, h)
                data = {
                    "branches": [{"name": n, "ref": f"refs/heads/{n}", "targetCommit": o} for n, o in repo.branches.items()],
                    "tags": [{"name": n, "ref": f"refs/tags/{n}", "targetCommit": o} for n, o in repo.tags.items()],
                    "converts": [],
                }
                if q.get("include_prs"):
                    data["pullRequests"] = [{"name": f"refs/pr/{n}", "ref": f"refs/pr/{n}", "targetCommit": o}
                                            for n, o in repo.prs.items()]
                return _json(data)
            if action == "tag" and args and method in ("POST", "DELETE"):
                return self._api_tag(h, method, repo_type, repo_id, "/".join(args), body)
            if action == "branch" and args and method in ("POST", "DELETE"):
                return self._api_branch(h, method, repo_type, repo_id, "/".join(args), body)
            if action == "settings" and method == "PUT":
                self._require_write(h)
                repo = self._repo(repo_type, repo_id, h)
                payload = json.loads(body or b"{}")
                if "private" in payload:
                    repo.private = bool(payload["private"])
                if payload.get("visibility") in ("public", "private"):
                    repo.private = payload["visibility"] == "private"
                return _json({})
        raise HubError(404, "Not Found")

    # -- endpoints

    def _api_create_repo(self, h, body) -> _Response:
        self._require_write(h)
        payload = json.loads(body or b"{}")
        name = payload.get("name")
        if not name:
            raise HubError(400, "Missing repo name")
        repo_type = payload.get("type") or "model"
        if repo_type not in REPO_TYPES:
            raise HubError(400, f"Invalid repo type {repo_type!r}")
        repo_id = f"{payload.get('organization') or self.username}/{name}"
        private = bool(payload.get("private")) or payload.get("visibility") == "private"
        url = f"{self.endpoint}/{_URL_PREFIX[repo_type]}{repo_id}"
        with self._lock:
            if (repo_type, repo_id) in self._repos:
                raise HubError(409, f"You already created this {repo_type} repo", extra={"url": url})
            self.create_repo(repo_id, repo_type, private=private)
        return _json({"url": url, "name": repo_id, "id": repo_id})

    def _api_delete_repo(self, h, body) -> _Response:
        self._require_write(h)
        payload = json.loads(body or b"{}")
        repo_type = payload.get("type") or "model"
        repo_id = f"{payload.get('organization') or self.username}/{payload.get('name')}"
        with self._lock:
            self._repo(repo_type, repo_id, h)
            del self._repos[(repo_type, repo_id)]
        return _Response(body=b"OK", content_type="text/plain")

    def _api_validate_yaml(self, body) -> _Response:
        payload = json.loads(body or b"{}")
        content = payload.get("content") or ""
        if content.startswith("---"):
            lines = content.splitlines()
            end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
            if end is None:
                return _json({"errors": [{"message": "YAML front matter is not closed"}], "warnings": []}, 400)
            try:
                import yaml  # type: ignore

                data = yaml.safe_load("\n".join(lines[1:end]))
            except ImportError:
                data = {}
            except Exception as e:  # yaml.YAMLError
                return _json({"errors": [{"message": f"Invalid YAML: {e}"}], "warnings": []}, 400)
            if data is not None and not isinstance(data, dict):
                return _json({"errors": [{"message": "YAML metadata must be a mapping"}], "warnings": []}, 400)
        return _json({"errors": [], "warnings": []})

    def _sibling(self, path: str, blob: Blob, blobs: bool) -> dict:
        d: dict[str, Any] = {"rfilename": path}
        if blobs:
            d["size"] = blob.size
            d["blobId"] = blob.git_oid
            if blob.lfs:
                d["lfs"] = {"size": blob.size, "sha256": blob.sha256, "pointerSize": blob.pointer_size}
        return d

    def _api_info(self, repo: Repo, commit: Commit | None, q: dict) -> _Response:
        blobs = (q.get("blobs") or ["false"])[-1].lower() in ("1", "true")
        card = None
        if commit is not None and "README.md" in commit.files:
            card = parse_card_data(commit.files["README.md"].data)
        files = commit.files if commit is not None else {}
        info: dict[str, Any] = {
            "_id": hashlib.sha1(f"{repo.repo_type}/{repo.repo_id}".encode()).hexdigest()[:24],
            "id": repo.repo_id,
            "author": repo.repo_id.split("/")[0] if "/" in repo.repo_id else None,
            "sha": commit.oid if commit else None,
            "lastModified": _iso(commit.date if commit else repo.created_at),
            "createdAt": _iso(repo.created_at),
            "private": repo.private,
            "gated": False,
            "disabled": False,
            "downloads": 0,
            "likes": 0,
            "tags": [t for t in (card or {}).get("tags", []) or [] if isinstance(t, str)],
            "cardData": card,
            "siblings": [self._sibling(p, b, blobs) for p, b in sorted(files.items())],
            "usedStorage": sum(len(v) for v in repo.lfs.values()),
        }
        if repo.repo_type == "model":
            info["modelId"] = repo.repo_id
        if repo.repo_type == "dataset" and card and isinstance(card.get("description"), str):
            info["description"] = card["description"]
        return _json(info)

    def _entry(self, repo: Repo, commit: Commit, path: str, expand: bool) -> dict:
        if path in commit.files:
            blob = commit.files[path]
            d: dict[str, Any] = {"type": "file", "oid": blob.git_oid, "size": blob.size, "path": path}
            if blob.lfs:
                d["lfs"] = {"oid": blob.sha256, "size": blob.size, "pointerSize": blob.pointer_size}
            is_dir = False
        else:
            d = {"type": "directory", "oid": self._tree_oid(commit.files, path), "size": 0, "path": path}
            is_dir = True
        if expand:
            lc = self._last_commit(repo, commit, path, is_dir)
            d["lastCommit"] = {"id": lc.oid, "title": lc.title, "date": _iso(lc.date)}
            if not is_dir:
                d["securityFileStatus"] = {"status": "safe", "avScan": {"virusFound": False, "virusNames": None},
                                           "pickleImportScan": None}
        return d

    @staticmethod
    def _dirs(files: dict[str, Blob]) -> set[str]:
        out = set()
        for p in files:
            parts = p.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                out.add("/".join(parts[:i]))
        return out

    def _api_tree(self, h, repo_type, repo_id, rev, path, q) -> _Response:
        repo = self._repo(repo_type, repo_id, h)
        commit = self._resolve(repo, unquote(rev))
        path = path.strip("/")
        recursive = (q.get("recursive") or ["false"])[-1].lower() in ("1", "true")
        expand = (q.get("expand") or ["false"])[-1].lower() in ("1", "true")
        dirs = self._dirs(commit.files)
        if path and path not in dirs:
            if path in commit.files:
                raise HubError(400, f"{path} is a file, not a directory")
            raise HubError(404, f"Entry not found: {path}", "EntryNotFound",
                           headers={"X-Repo-Commit": commit.oid})
        prefix = path + "/" if path else ""
        names = [p for p in list(commit.files) + sorted(dirs) if p.startswith(prefix)]
        if not recursive:
            names = [p for p in names if "/" not in p[len(prefix):]]
        # directories first, then files, each sorted (like the Hub)
        names = sorted(set(names), key=lambda p: (p not in dirs, p))
        page_size = self.tree_page_size_expand if expand else self.tree_page_size
        start = int((q.get("cursor") or ["0"])[-1] or 0)
        page = names[start : start + page_size]
        headers = {}
        if start + page_size < len(names):
            params = {"recursive": str(recursive).lower(), "expand": str(expand).lower(), "cursor": str(start + page_size)}
            repo_path = f"{repo_type}s/{repo_id}"
            url = f"{self.endpoint}/api/{repo_path}/tree/{quote(unquote(rev), safe='')}"
            if path:
                url += "/" + quote(path, safe="/")
            headers["Link"] = f'<{url}?{urlencode(params)}>; rel="next"'
        return _json([self._entry(repo, commit, p, expand) for p in page], headers=headers)

    def _api_paths_info(self, h, repo_type, repo_id, rev, body) -> _Response:
        repo = self._repo(repo_type, repo_id, h)
        commit = self._resolve(repo, rev)
        ctype = (h.headers.get("Content-Type") or "").lower()
        if "json" in ctype:
            payload = json.loads(body or b"{}")
            paths, expand = payload.get("paths", []), bool(payload.get("expand"))
            paths = [paths] if isinstance(paths, str) else paths
        else:
            form = parse_qs(body.decode(), keep_blank_values=True)
            paths = form.get("paths", [])
            expand = (form.get("expand") or ["false"])[-1].lower() in ("1", "true")
        dirs = self._dirs(commit.files)
        out = []
        for p in paths:
            p = p.strip("/")
            if p in commit.files or p in dirs:
                out.append(self._entry(repo, commit, p, expand))
        return _json(out)

    def _api_preupload(self, h, repo_type, repo_id, rev, body) -> _Response:
        self._require_write(h)
        repo = self._repo(repo_type, repo_id, h)
        commit = self._resolve(repo, rev)
        payload = json.loads(body or b"{}")
        out = []
        for f in payload.get("files", []):
            path = f["path"]
            sample = base64.b64decode(f.get("sample") or "")
            size = int(f.get("size") or 0)
            lfs = self._is_lfs_path(commit, path, sample, size)
            item: dict[str, Any] = {"path": path, "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False}
            existing = commit.files.get(path)
            if existing is not None:
                item["oid"] = existing.sha256 if existing.lfs else existing.git_oid
            out.append(item)
        return _json({"files": out, "commitOid": commit.oid})

    def _git_route(self, h, method, repo_type, repo_id, tail, body) -> _Response:
        if tail[:3] != ["info", "lfs", "objects"] or method != "POST":
            raise HubError(404, "Not Found")
        op = tail[3] if len(tail) > 3 else ""
        with self._lock:
            repo = self._repo(repo_type, repo_id, h)
            if op == "batch":
                self._require_write(h)
                payload = json.loads(body or b"{}")
                operation = payload.get("operation", "upload")
                objects = []
                for obj in payload.get("objects", []):
                    oid, size = obj["oid"], int(obj["size"])
                    item: dict[str, Any] = {"oid": oid, "size": size, "authenticated": True}
                    if operation == "upload":
                        if oid not in repo.lfs:
                            upload_id = secrets.token_hex(12)
                            self._uploads[upload_id] = ((repo_type, repo_id), oid, size)
                            item["actions"] = {
                                "upload": {"href": f"{self.endpoint}/__lfs__/{upload_id}", "expires_in": 86400},
                                "verify": {"href": f"{self.endpoint}/{repo.url_path}.git/info/lfs/objects/verify"},
                            }
                    else:  # download
                        if oid in repo.lfs:
                            upload_id = secrets.token_hex(12)
                            self._uploads[upload_id] = ((repo_type, repo_id), oid, size)
                            item["actions"] = {"download": {"href": f"{self.endpoint}/__lfs__/{upload_id}"}}
                        else:
                            item["error"] = {"code": 404, "message": "Object does not exist"}
                    objects.append(item)
                return _Response(
                    body=json.dumps({"transfer": "basic", "objects": objects, "hash_algo": "sha256"}).encode(),
                    content_type="application/vnd.git-lfs+json",
                )
            if op == "verify":
                self._require_write(h)
                payload = json.loads(body or b"{}")
                data = repo.lfs.get(payload.get("oid", ""))
                if data is None or len(data) != int(payload.get("size", -1)):
                    raise HubError(404, "LFS object not found")
                return _json({"success": True})
        raise HubError(404, "Not Found")

    def _lfs_object(self, h, method, segs, body) -> _Response:
        """The signed-URL stand-in: PUT stores raw bytes, GET returns them. No auth needed."""
        with self._lock:
            target = self._uploads.get(segs[0]) if segs else None
        if target is None:
            raise HubError(404, "Unknown upload id")
        key, oid, size = target
        if method == "PUT":
            if len(body) != size or hashlib.sha256(body).hexdigest() != oid:
                raise HubError(400, f"Uploaded content does not match oid/size (got {len(body)} bytes)")
            with self._lock:
                repo = self._repos.get(key)
                if repo is None:
                    raise HubError(404, "Repository not found")
                repo.lfs[oid] = body
            return _Response(body=b"", headers={"ETag": f'"{hashlib.md5(body).hexdigest()}"'}, content_type="text/plain")
        if method in ("GET", "HEAD"):
            with self._lock:
                data = self._repos[key].lfs.get(oid)
            if data is None:
                raise HubError(404, "Not Found")
            return _Response(body=data, content_type="application/octet-stream")
        raise HubError(405, "Method not allowed")

    def _api_commit(self, h, repo_type, repo_id, rev, q, body) -> _Response:
        self._require_write(h)
        repo = self._repo(repo_type, repo_id, h)
        create_pr = (q.get("create_pr") or ["0"])[-1] in ("1", "true", "True")
        lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
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
        head = repo.commits[head_oid]
        tree = dict(head.files)
        for line in lines[1:]:
            key, value = line.get("key"), line.get("value") or {}
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
        commit = self._new_commit(repo, head_oid, tree, header.get("summary") or "", header.get("description") or "")
        pr_url = None
        if create_pr and pr_num is None:
            pr_num = max(repo.prs, default=0) + 1
            pr_url = f"{self.endpoint}/{repo.url_path}/discussions/{pr_num}"
        if pr_num is not None:
            repo.prs[pr_num] = commit.oid
        else:
            repo.branches[rev] = commit.oid
        return _json({
            "success": True,
            "commitOid": commit.oid,
            "commitUrl": f"{self.endpoint}/{repo.url_path}/commit/{commit.oid}",
            "pullRequestUrl": pr_url,
            "hookOutput": "",
        })

    def _api_tag(self, h, method, repo_type, repo_id, arg, body) -> _Response:
        self._require_write(h)
        repo = self._repo(repo_type, repo_id, h)
        if method == "DELETE":
            if arg not in repo.tags:
                raise HubError(404, f"Invalid rev id: {arg}", "RevisionNotFound")
            del repo.tags[arg]
            repo.tag_messages.pop(arg, None)
            return _json({})
        payload = json.loads(body or b"{}")
        tag = payload.get("tag")
        if not tag:
            raise HubError(400, "Missing tag name")
        commit = self._resolve(repo, arg)
        if tag in repo.tags:
            raise HubError(409, f"Tag {tag} already exists")
        repo.tags[tag] = commit.oid
        repo.tag_messages[tag] = payload.get("message") or ""
        return _json({})

    def _api_branch(self, h, method, repo_type, repo_id, branch, body) -> _Response:
        self._require_write(h)
        repo = self._repo(repo_type, repo_id, h)
        if method == "DELETE":
            if branch not in repo.branches:
                raise HubError(404, f"Invalid rev id: {branch}", "RevisionNotFound")
            if branch == "main":
                raise HubError(403, "Cannot delete the default branch")
            del repo.branches[branch]
            return _json({})
        if branch.startswith("refs/"):
            raise HubError(400, f"Invalid reference for a branch: {branch}")
        payload = json.loads(body or b"{}")
        start = self._resolve(repo, payload.get("startingPoint") or "main")
        if branch in repo.branches:
            raise HubError(409, f"Reference already exists: refs/heads/{branch}")
        repo.branches[branch] = start.oid
        return _json({})

    def _resolve_file(self, h, repo_type, repo_id, rev, path) -> _Response:
        with self._lock:
            repo = self._repo(repo_type, repo_id, h)
            commit = self._resolve(repo, rev)
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
        rng = h.headers.get("Range")
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
        return _Response(status=status, body=data, headers=headers, content_type=ctype)


# --------------------------------------------------------------------------- client helper


def run_client(code: str, env: dict, timeout: float = 180, cwd: str | os.PathLike | None = None) -> subprocess.CompletedProcess:
    """Run ``python -c code`` with ``env`` (see :meth:`HubServer.client_env`); never raises on failure."""
    return subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
