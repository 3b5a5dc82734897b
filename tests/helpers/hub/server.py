"""The loopback Hub server: lifecycle, client environment, fault injection, request log, HTTP plumbing."""

from __future__ import annotations

import os
import re
import socket
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

from .objects import Commit, HubError, Repo, Response, error_response, json_response
from .request import Request
from .routes import route
from .store import Store, resolve

DEFAULT_TOKEN = "hf_testhub_dummy_token_0123456789"


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


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "TestHub/1.0"

    def log_message(self, format, *args):
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

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, token: str | None = None, username: str = "tester",
                 tree_page_size: int = 1000, tree_page_size_expand: int = 50):
        self.host = host
        self.port = port
        self.token = token
        self.username = username
        self.tree_page_size = tree_page_size
        self.tree_page_size_expand = tree_page_size_expand
        self.store = Store(username, token)
        self._faults: list[Fault] = []
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
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="test-hub", daemon=True)
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
        """Environment for a client process pointed at this server (isolated ``HF_HOME``, Xet off)."""
        env = {k: v for k, v in os.environ.items()
               if not (k.startswith(("HF_", "HUGGINGFACE_")) or k in ("HUGGING_FACE_HUB_TOKEN",))}
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
        with self.store.lock:
            self._faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        with self.store.lock:
            self._faults.clear()

    def clear_log(self) -> None:
        with self.store.lock:
            self.requests.clear()
            self.log.clear()
            self.seen_tokens.clear()

    def _take_fault(self, method: str, path: str) -> Fault | None:
        with self.store.lock:
            for fault in self._faults:
                if fault.remaining > 0 and (fault.method in (None, method)) and fault.pattern.search(path):
                    fault.remaining -= 1
                    fault.hits += 1
                    return fault
        return None

    # ------------------------------------------------------------------ direct (non-HTTP) access for tests
    def create_repo(self, repo_id: str, repo_type: str = "dataset", private: bool = False) -> Repo:
        """Create a repo directly (with the Hub's initial ``.gitattributes`` commit)."""
        return self.store.create_repo(repo_id, repo_type, private)

    def commit_files(self, repo_id: str, files: dict[str, bytes | None], message: str = "seed", *,
                     repo_type: str = "dataset", branch: str = "main") -> str:
        """Commit directly (no HTTP): ``files`` maps path -> bytes (None deletes). Returns the oid."""
        return self.store.commit_files(repo_id, files, message, repo_type=repo_type, branch=branch)

    def get_repo(self, repo_id: str, repo_type: str = "dataset") -> Repo:
        return self.store.get_repo(repo_id, repo_type)

    def has_repo(self, repo_id: str, repo_type: str = "dataset") -> bool:
        with self.store.lock:
            return (repo_type, repo_id) in self.store.repos

    def refs(self, repo_id: str, repo_type: str = "dataset") -> dict:
        """``{"branches": {name: oid}, "tags": {name: oid}}``."""
        with self.store.lock:
            repo = self.get_repo(repo_id, repo_type)
            return {"branches": dict(repo.branches), "tags": dict(repo.tags)}

    def history(self, repo_id: str, revision: str = "main", repo_type: str = "dataset") -> list[Commit]:
        """First-parent history, newest first."""
        return self.store.history(repo_id, revision, repo_type)

    def files(self, repo_id: str, revision: str = "main", repo_type: str = "dataset") -> dict[str, bytes]:
        with self.store.lock:
            repo = self.get_repo(repo_id, repo_type)
            return {p: b.data for p, b in resolve(repo, revision).files.items()}

    # ------------------------------------------------------------------ HTTP
    @staticmethod
    def _bearer(h: _Handler) -> str | None:
        auth = h.headers.get("Authorization") or ""
        return auth[7:].strip() if auth.lower().startswith("bearer ") else None

    def _handle(self, h: _Handler) -> None:
        method = h.command
        raw_path, _, query = h.path.partition("?")
        token = self._bearer(h)
        entry = {"method": method, "path": raw_path, "query": query, "token": token, "status": None,
                 "range": h.headers.get("Range")}
        with self.store.lock:
            self.requests.append((method, raw_path))
            self.log.append(entry)
            if token:
                self.seen_tokens.add(token)
        fault = self._take_fault(method, raw_path)
        if fault is not None and fault.kind == "drop":
            entry["status"] = "dropped"
            _drop(h)
            return
        body = _read_body(h) if method in ("POST", "PUT", "PATCH", "DELETE") else b""
        try:
            if fault is not None:
                raise HubError(fault.status or 500, f"Injected fault {fault.kind}")
            req = Request(method, raw_path, parse_qs(query, keep_blank_values=True), body, h.headers, token)
            with self.store.lock:
                resp = route(self, req)
        except HubError as e:
            resp = error_response(e)
        except Exception as e:  # noqa: BLE001 - server bug: answer 500 with the reason  # pragma: no cover
            resp = json_response({"error": f"test hub internal error: {type(e).__name__}: {e}"}, status=500)
        entry["status"] = resp.status
        _write(h, resp, head=(method == "HEAD"))


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


def _drop(h: _Handler) -> None:
    """Read (roughly) half of the body, then close the connection without answering."""
    length = int(h.headers.get("Content-Length") or 0)
    chunked = "chunked" in (h.headers.get("Transfer-Encoding") or "").lower()
    if length > 1 or chunked:
        _read_body(h, limit=max(1, length // 2) if length else 1)
    h.close_connection = True
    try:
        h.connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _write(h: _Handler, resp: Response, head: bool) -> None:
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
