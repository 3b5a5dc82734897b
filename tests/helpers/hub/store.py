"""The loopback Hub's state: repositories, their commits, branches, tags and LFS objects."""

from __future__ import annotations

import fnmatch
import hashlib
import re
import threading
import time

from .objects import DEFAULT_GITATTRIBUTES, DEFAULT_LFS_PATTERNS, LFS_SIZE_THRESHOLD, SHA1_RE, Blob, Commit, HubError, Repo


class Store:
    """Every repository, behind one re-entrant lock (``store.lock``).

    ``token``: when set, private repositories are visible only to requests that carry it.
    """

    def __init__(self, username: str, token: str | None):
        self.username = username
        self.token = token
        self.lock = threading.RLock()
        self.repos: dict[tuple[str, str], Repo] = {}
        self.uploads: dict[str, tuple[tuple[str, str], str, int]] = {}  # upload id -> (repo key, oid, size)
        self._counter = 0

    # ------------------------------------------------------------------ repositories
    def create_repo(self, repo_id: str, repo_type: str = "dataset", private: bool = False) -> Repo:
        """A new repo with the Hub's initial ``.gitattributes`` commit."""
        with self.lock:
            key = (repo_type, repo_id)
            if key in self.repos:
                raise HubError(409, f"You already created this {repo_type} repo")
            repo = Repo(repo_type=repo_type, repo_id=repo_id, private=private, created_at=time.time())
            self.repos[key] = repo
            self.new_commit(repo, None, {".gitattributes": Blob.make(DEFAULT_GITATTRIBUTES, False)}, "initial commit", "")
            return repo

    def get_repo(self, repo_id: str, repo_type: str = "dataset") -> Repo:
        with self.lock:
            try:
                return self.repos[(repo_type, repo_id)]
            except KeyError:
                raise KeyError(f"no {repo_type} repo {repo_id!r}") from None

    def visible_repo(self, repo_type: str, repo_id: str, bearer: str | None) -> Repo:
        """The repo as a request with token ``bearer`` sees it (``RepoNotFound`` otherwise)."""
        repo = self.repos.get((repo_type, repo_id))
        if repo is None or (repo.private and self.token is not None and bearer != self.token):
            raise HubError(404 if repo is None or self.token is None else 401, "Repository not found", "RepoNotFound")
        return repo

    # ------------------------------------------------------------------ commits
    def new_commit(self, repo: Repo, parent: str | None, files: dict[str, Blob], title: str, message: str) -> Commit:
        self._counter += 1
        now = time.time()
        tree = tree_oid(files, "")
        raw = f"tree {tree}\nparent {parent or ''}\nauthor {self.username} {now:.6f} {self._counter}\n\n{title}\n\n{message}"
        oid = hashlib.sha1(raw.encode()).hexdigest()
        commit = Commit(oid=oid, parent=parent, title=title, message=message, date=now, files=files)
        repo.commits[oid] = commit
        if parent is None:
            repo.branches["main"] = oid
        return commit

    def commit_files(self, repo_id: str, files: dict[str, bytes | None], message: str = "seed", *,
                     repo_type: str = "dataset", branch: str = "main") -> str:
        """Commit directly (no HTTP): ``files`` maps path -> bytes (None deletes). Returns the oid."""
        with self.lock:
            repo = self.get_repo(repo_id, repo_type)
            head = repo.commits[repo.branches[branch]]
            tree = dict(head.files)
            for path, data in files.items():
                if data is None:
                    tree.pop(path, None)
                else:
                    tree[path] = Blob.make(data, is_lfs_path(head, path, data[:512], len(data)))
                    if tree[path].lfs:
                        repo.lfs[tree[path].sha256] = data
            commit = self.new_commit(repo, head.oid, tree, message, "")
            repo.branches[branch] = commit.oid
            return commit.oid

    def history(self, repo_id: str, revision: str = "main", repo_type: str = "dataset") -> list[Commit]:
        """First-parent history, newest first."""
        with self.lock:
            repo = self.get_repo(repo_id, repo_type)
            out, oid = [], resolve(repo, revision).oid
            while oid is not None:
                c = repo.commits[oid]
                out.append(c)
                oid = c.parent
            return out


def resolve(repo: Repo, revision: str) -> Commit:
    """The commit of a branch, tag, ``refs/...`` name, PR ref or commit id (``RevisionNotFound``)."""
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
    if SHA1_RE.match(rev) and rev in repo.commits:
        return repo.commits[rev]
    raise HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")


def tree_oid(files: dict[str, Blob], prefix: str) -> str:
    h = hashlib.sha1(b"tree\0")
    for p in sorted(files):
        if not prefix or p.startswith(prefix + "/"):
            h.update(f"{p} {files[p].git_oid}\n".encode())
    return h.hexdigest()


def dirs(files: dict[str, Blob]) -> set[str]:
    """Every folder of the tree."""
    out = set()
    for p in files:
        parts = p.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            out.add("/".join(parts[:i]))
    return out


def is_lfs_path(commit: Commit | None, path: str, sample: bytes, size: int) -> bool:
    """Whether the Hub stores this file in LFS: big, binary, or matched by ``.gitattributes``."""
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


def last_commit(repo: Repo, commit: Commit, path: str, is_dir: bool) -> Commit:
    """The newest commit (first-parent) that changed ``path``."""
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
