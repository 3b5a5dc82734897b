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

This module imports nothing of the package: every floor may use it.
"""

from __future__ import annotations

import os
import secrets
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

__all__ = ["atomic_output", "same_file", "is_within", "check_sidecar", "write_sidecar"]


@contextmanager
def atomic_output(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary sibling of ``path`` to write; on success it is renamed onto ``path``.

    The temporary file exists (empty, created with the umask's permissions) when the block
    starts, so writers that open it by name keep those permissions. An error in the block
    removes it and leaves ``path`` as it was. ``path`` must not be a folder.
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder; give a file name")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
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
    import stat

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
    if not text.startswith(header):
        raise ValueError("a sidecar's text starts with its header")
    check_sidecar(path, header)
    with atomic_output(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)
