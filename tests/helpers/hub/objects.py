"""What the loopback Hub stores (blobs, commits, repositories) and how it answers (responses, errors)."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

REPO_TYPES = ("model", "dataset", "space")
#: ``/api/<plural>/...`` -> repo type
PLURAL = {"models": "model", "datasets": "dataset", "spaces": "space"}
#: repo type -> URL prefix of its pages and files
URL_PREFIX = {"model": "", "dataset": "datasets/", "space": "spaces/"}

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
DEFAULT_GITATTRIBUTES = "".join(f"{p} filter=lfs diff=lfs merge=lfs -text\n" for p in DEFAULT_LFS_PATTERNS).encode()
LFS_SIZE_THRESHOLD = 10 * 1024 * 1024  # the Hub stores files >= 10 MB in LFS whatever their type
SHA1_RE = re.compile(r"^[0-9a-f]{40}$")


def git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(sha256: str, size: int) -> bytes:
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{int((ts % 1) * 1000):03d}Z"


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
        return f"{URL_PREFIX[self.repo_type]}{self.repo_id}"


class HubError(Exception):
    """An error answer: status, message, ``X-Error-Code``, extra headers and JSON fields."""

    def __init__(self, status: int, message: str, code: str | None = None, headers: dict | None = None,
                 extra: dict | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.headers = headers or {}
        self.extra = extra or {}


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json; charset=utf-8"


def json_response(obj: Any, status: int = 200, headers: dict | None = None) -> Response:
    return Response(status=status, body=json.dumps(obj).encode(), headers=headers or {})


def error_response(e: HubError) -> Response:
    headers = dict(e.headers)
    if e.code:
        headers["X-Error-Code"] = e.code
    headers["X-Error-Message"] = e.message.encode("ascii", "replace").decode()
    return json_response({"error": e.message, **e.extra}, status=e.status, headers=headers)


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
