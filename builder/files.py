"""Writing output files safely: atomically, with the permissions the user's umask asks for.

::

    with atomic_output("estimates.csv") as tmp:   # a temporary sibling; renamed onto the target
        frame.to_csv(tmp, index=False)              # only when the block succeeds

``tempfile.mkstemp`` creates its file with mode 0600 whatever the umask, and ``os.replace``
keeps that mode: outputs written through it were unreadable by the user's group even when
their umask said otherwise. :func:`atomic_output` creates the temporary file with ``open``
(mode 0666 minus the umask, as any other file the user creates) and leaves nothing behind
on an error. :func:`same_file` tells whether an output path would replace an input.

This module imports nothing of the package: every floor may use it.
"""

from __future__ import annotations

import os
import secrets
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

__all__ = ["atomic_output", "same_file", "is_within"]


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
