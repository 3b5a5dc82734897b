"""Writing output files safely: atomically, with the permissions the user's umask asks for.

::

    with atomic_output("estimates.csv") as tmp:   # a temporary sibling; renamed onto the target
        frame.to_csv(tmp, index=False)              # only when the block succeeds

``tempfile.mkstemp`` creates its file with mode 0600 whatever the umask, and ``os.replace``
keeps that mode: outputs written through it were unreadable by the user's group even when
their umask said otherwise. :func:`atomic_output` creates the temporary file with ``open``
(mode 0666 minus the umask, as any other file the user creates) and leaves nothing behind
on an error. :func:`same_file` tells whether an output path would replace an input.

A file the tools name after a user's path (``<out stem>.failed.txt`` next to ``--out``) is a
*sidecar*: the user never named it, so it must not cost them a file. :func:`check_sidecar`
refuses one that is a symbolic link, not a regular file, or a regular file that does not start
with the header this tool writes; :func:`write_sidecar` checks again and writes it atomically
(a temporary sibling created with ``O_EXCL``, which never follows a link, then a rename, which
replaces a name and never writes through it).

A sidecar describes the output it sits beside, so it changes with that output and only with it
(:class:`SidecarUpdate`): its next state (new text, or no file) is checked and written aside
*before* the output is replaced, then put in place (renamed, or an earlier sidecar of ours
removed) right after the output's own rename. An output that is not written leaves the sidecar
as it was; only a process killed between the two renames can separate them.

Hidden siblings (the temporary file of :func:`atomic_output`, the staging and old folders of
:mod:`tinybench_builder.layout`) are named ``.<name>.<pid>-<host>-<hex>.tmp``, ``.<name>.building-<pid>-<host>``
and ``.<name>.old-<pid>-<host>`` (:func:`sibling`): ``<host>`` is a hash of this machine's name,
and ``.<name>`` is shortened (cut, plus a hash of the whole name) when the sibling's name would
exceed the folder's ``NAME_MAX``, so an output name of 245+ characters still works. A run killed
before it could clean up (SIGKILL, a power cut) leaves its sibling behind; the next run that
writes the same target removes those that are provably ours (:func:`remove_stale`): one of these
exact names, made on this machine (same host hash), by a process that is no longer alive.
Siblings of a live process, of another machine (a shared file system) or of any other name are
never touched.

This module imports nothing of the package: every floor may use it.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
import socket
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

__all__ = ["atomic_output", "same_file", "is_within", "check_sidecar", "write_sidecar", "SidecarUpdate",
           "sidecar_name", "sibling", "remove_stale", "HOST_TAG"]

#: this machine in the names of hidden siblings (a run on another host sharing the folder is not ours)
HOST_TAG = hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]
#: the longest suffix a sibling adds after ``.<name>``: ``.<pid, up to 10 digits>-<host>-<hex>.tmp``
_SUFFIX_MAX = 1 + 10 + 1 + 8 + 1 + 8 + 4
_KINDS = ("tmp", "building", "old")


def _name_max(folder: Path) -> int:
    try:
        return int(os.pathconf(folder if folder.exists() else ".", "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return 255


def _prefix(path: Path) -> str:
    """``.<name>``, or when a sibling's name would not fit ``NAME_MAX``, ``.<start of name>~<hash>``."""
    name = path.name
    limit = _name_max(path.parent) - _SUFFIX_MAX
    if len(("." + name).encode("utf-8", "surrogateescape")) <= limit:
        return "." + name
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    keep = name.encode("utf-8", "surrogateescape")[:max(0, limit - 14)].decode("utf-8", "ignore")
    return f".{keep}~{digest}"


def sidecar_name(path: str | os.PathLike, suffix: str) -> Path:
    """``<stem of path><suffix>`` next to ``path`` (``x.parquet`` -> ``x.failed.txt``), its stem cut and
    followed by a hash of the whole name when the result would exceed the folder's ``NAME_MAX``."""
    path = Path(path)
    name = path.stem + suffix
    limit = _name_max(path.parent)
    if len(name.encode("utf-8", "surrogateescape")) <= limit:
        return path.with_name(name)
    digest = hashlib.sha256(path.name.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    room = max(0, limit - len(suffix.encode()) - 13)
    keep = path.stem.encode("utf-8", "surrogateescape")[:room].decode("utf-8", "ignore")
    return path.with_name(f"{keep}~{digest}{suffix}")


def sibling(path: str | os.PathLike, kind: str) -> Path:
    """The hidden sibling of ``path`` this process uses: ``kind`` ``"tmp"`` (a new temporary file
    name, random each call), ``"building"`` or ``"old"`` (a folder; module docstring)."""
    path = Path(path)
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}")
    if kind == "tmp":
        return path.with_name(f"{_prefix(path)}.{os.getpid()}-{HOST_TAG}-{secrets.token_hex(4)}.tmp")
    return path.with_name(f"{_prefix(path)}.{kind}-{os.getpid()}-{HOST_TAG}")


def _alive(pid: int) -> bool:
    if os.name != "posix":  # pragma: no cover - no reliable check: never clean up
        return True
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: alive, another user's
        return True
    return True


def remove_stale(path: str | os.PathLike) -> list[Path]:
    """Remove the hidden siblings of ``path`` that earlier runs on this machine left behind
    (their process is gone); returns what was removed. Never follows a link."""
    path = Path(path)
    prefix = re.escape(_prefix(path))
    files = re.compile(prefix + r"\.(\d{1,10})-([0-9a-f]{8})-[0-9a-f]{8}\.tmp")
    folders = re.compile(prefix + r"\.(?:building|old)-(\d{1,10})-([0-9a-f]{8})")
    removed: list[Path] = []
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return removed
    for entry in entries:
        for rule, want_dir in ((files, False), (folders, True)):
            m = rule.fullmatch(entry.name)
            if not m or m.group(2) != HOST_TAG or _alive(int(m.group(1))):
                continue
            try:
                mode = os.lstat(entry.path).st_mode
            except OSError:
                continue
            if want_dir and stat.S_ISDIR(mode):
                shutil.rmtree(entry.path, ignore_errors=True)  # rmtree never follows links inside
            elif not want_dir and stat.S_ISREG(mode):
                try:
                    os.unlink(entry.path)
                except OSError:
                    continue
            else:
                continue
            removed.append(Path(entry.path))
    return removed


@contextmanager
def atomic_output(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary sibling of ``path`` to write; on success it is renamed onto ``path``.

    The temporary file exists (empty, created with the umask's permissions) when the block
    starts, so writers that open it by name keep those permissions. An error in the block
    removes it and leaves ``path`` as it was. ``path`` must not be a folder. Stale temporary
    files of killed runs next to ``path`` are removed first (:func:`remove_stale`).
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder; give a file name")
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(path)  # what killed runs left next to this target
    tmp = sibling(path, "tmp")
    with open(tmp, "xb"):  # O_EXCL; mode 0666 & ~umask
        pass
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether ``a`` and ``b`` name the same existing file (links and ``..`` resolved)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


def is_within(path: str | os.PathLike, folder: str | os.PathLike) -> bool:
    """Whether ``path`` is ``folder`` or lies inside it (after resolving links)."""
    p, f = Path(path).resolve(), Path(folder).resolve()
    return p == f or f in p.parents


def check_sidecar(path: str | os.PathLike, header: str) -> None:
    """Refuse (:class:`FileExistsError`) to write ``path`` unless it is absent or a regular file
    of ours: one whose text starts with ``header``, the first line this tool writes in it."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise FileExistsError(f"{path} is a symbolic link; refusing to write through it: remove it or choose "
                              "another output name")
    if not stat.S_ISREG(st.st_mode):
        raise FileExistsError(f"{path} exists and is not a regular file; refusing to replace it: remove it or "
                              "choose another output name")
    want = header.encode("utf-8")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        head = fh.read(len(want))
    if head != want:
        raise FileExistsError(f"{path} exists and was not written by this tool (it does not start with "
                              f"{header!r:.60}); refusing to overwrite it: move it away or choose another output name")


def write_sidecar(path: str | os.PathLike, text: str, header: str) -> Path:
    """Write ``text`` (which starts with ``header``) to ``path`` atomically, if :func:`check_sidecar` allows."""
    with SidecarUpdate(path, header, text) as update:
        written = update.commit()
    assert written is not None  # there was a text to write
    return written


class SidecarUpdate:
    """The next state of the sidecar ``path`` of an output: ``text`` (which starts with ``header``),
    or None for no sidecar (an earlier one of ours is removed).

    ::

        with SidecarUpdate(failed_txt, HEADER, text_or_none) as update:   # checked, written aside
            write_the_output()                                             # its own atomic rename
            update.commit()                                                # right after it

    Entering checks ``path`` (:func:`check_sidecar`: ``FileExistsError`` for a link or a file that
    is not ours) and writes the text to a temporary sibling, so that nothing about the sidecar can
    fail once the output is replaced but another check and a rename (or an unlink). Leaving the
    block without :meth:`commit` (the output failed) removes the temporary file and leaves
    ``path`` as it was.
    """

    def __init__(self, path: str | os.PathLike, header: str, text: str | None) -> None:
        if text is not None and not text.startswith(header):
            raise ValueError("a sidecar's text starts with its header")
        self.path = Path(path)
        self.header = header
        self.text = text
        self._tmp: Path | None = None
        self._ready = False

    def prepare(self) -> "SidecarUpdate":
        """Check ``path`` and write the text aside (once); ``FileExistsError`` when ``path`` is not ours."""
        if self._ready:
            return self
        check_sidecar(self.path, self.header)
        if self.text is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            remove_stale(self.path)  # what killed runs left next to this sidecar
            tmp = sibling(self.path, "tmp")
            try:
                with open(tmp, "x", encoding="utf-8") as fh:  # O_EXCL: never through a link
                    fh.write(self.text)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
            self._tmp = tmp
        self._ready = True
        return self

    def commit(self) -> Path | None:
        """Put the prepared state in place: the sidecar's path, or None when there is none now.
        Checked again first (a link or a file of someone else's that appeared since is never
        replaced or removed: ``FileExistsError``, the temporary file removed)."""
        self.prepare()
        try:
            check_sidecar(self.path, self.header)
            if self._tmp is not None:
                os.replace(self._tmp, self.path)  # replaces the name, never writes through it
                self._tmp = None
                return self.path
            try:
                os.unlink(self.path)  # an earlier sidecar of ours (check_sidecar said so), or nothing
            except FileNotFoundError:
                pass
            return None
        finally:
            self.discard()

    def discard(self) -> None:
        """Remove the prepared temporary file, if any; ``path`` stays as it is."""
        if self._tmp is not None:
            self._tmp.unlink(missing_ok=True)
            self._tmp = None

    def __enter__(self) -> "SidecarUpdate":
        return self.prepare()

    def __exit__(self, *exc_info: object) -> None:
        self.discard()
