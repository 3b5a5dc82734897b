#!/usr/bin/env python
"""Compare two trees of built folders byte for byte, allowing one file to differ: ``estimator.py``.

::

    python scripts/compare_trees.py OLD NEW                      # e.g. build/release-1.0.0 of two checkouts
    python scripts/compare_trees.py OLD NEW --strip 'popen-gw[0-9]+'   # two `pytest -n 2 --basetemp=DIR` runs

For a change to the standalone estimator that must leave every output as it was (issue 27): two
builds of the same inputs, one on the code before and one after, must hold the same files with
the same bytes, but ``estimator.py`` itself (``--allow NAME`` to allow other names) and what
follows from its bytes: its ``sha256`` and ``size`` in every ``manifest.json`` (the ``files``
table) and the ``manifest_sha256`` of each benchmark in ``release.json``. A ``manifest.json`` (or
``release.json``) counts as the same when it is equal once those entries are dropped.

``--strip REGEX`` drops matching path components before files are paired (pytest's per-worker
folders: a test may run on another worker in the other run); when two files of one tree then have
the same path, they are paired with their byte-identical counterparts where there are some.
``__pycache__`` folders are skipped (compiled files record their source's time). Prints a summary
and every difference; exit 1 when a file differs (other than allowed), or is in one tree only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

SKIP_DIRS = {"__pycache__"}


def files_of(root: Path, strip: re.Pattern | None) -> dict[str, list[Path]]:
    """Relative path (stripped components removed) -> the files of ``root`` at that path."""
    out: dict[str, list[Path]] = defaultdict(list)
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if not path.is_file() or path.is_symlink() or SKIP_DIRS & set(rel.parts):
            continue
        parts = [p for p in rel.parts if not (strip and strip.fullmatch(p))]
        out["/".join(parts)].append(path)
    return out


def digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def without_allowed(value, allowed: set[str]):
    """A JSON value without what follows from the allowed files' bytes: ``files`` entries named by
    them (at any depth of their path) and every ``manifest_sha256``."""
    if isinstance(value, dict):
        return {k: without_allowed(v, allowed) for k, v in value.items()
                if k != "manifest_sha256" and Path(k).name not in allowed}
    if isinstance(value, list):
        return [without_allowed(v, allowed) for v in value]
    return value


def same_but_allowed(a: Path, b: Path, allowed: set[str]) -> bool:
    """Two JSON files equal once the entries that follow from the allowed files are dropped."""
    if a.suffix != ".json":
        return False
    try:
        return without_allowed(json.loads(a.read_text("utf-8")), allowed) == \
            without_allowed(json.loads(b.read_text("utf-8")), allowed)
    except (ValueError, UnicodeDecodeError):
        return False


def pair(old: list[Path], new: list[Path]) -> list[tuple[Path | None, Path | None]]:
    """Pairs of the files at one (stripped) path: identical bytes first, the rest in order."""
    if len(old) == len(new) == 1:
        return [(old[0], new[0])]
    left, right = list(old), list(new)
    out: list[tuple[Path | None, Path | None]] = []
    by_digest = defaultdict(list)
    for p in right:
        by_digest[digest(p)].append(p)
    for p in list(left):
        match = by_digest.get(digest(p))
        if match:
            q = match.pop(0)
            right.remove(q)
            left.remove(p)
            out.append((p, q))
    out += list(zip(left, right))
    out += [(p, None) for p in left[len(right):]] + [(None, q) for q in right[len(left):]]
    return out


def compare(old_root: Path, new_root: Path, allowed: set[str], strip: re.Pattern | None) -> dict[str, list]:
    """``{"same", "allowed", "same_but_allowed", "differ", "only_old", "only_new"}`` -> relative paths."""
    old, new = files_of(old_root, strip), files_of(new_root, strip)
    out: dict[str, list] = {k: [] for k in ("same", "allowed", "same_but_allowed", "differ", "only_old", "only_new")}
    for rel in sorted(set(old) | set(new)):
        for a, b in pair(old.get(rel, []), new.get(rel, [])):
            if b is None:
                out["only_old"].append(rel)
            elif a is None:
                out["only_new"].append(rel)
            elif a.read_bytes() == b.read_bytes():
                out["same"].append(rel)
            elif Path(rel).name in allowed:
                out["allowed"].append(rel)
            elif same_but_allowed(a, b, allowed):
                out["same_but_allowed"].append(rel)
            else:
                out["differ"].append(rel)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--allow", action="append", default=None, metavar="NAME",
                        help="a file name allowed to differ (default: estimator.py; repeat for more)")
    parser.add_argument("--strip", default=None, metavar="REGEX",
                        help="drop path components matching this (e.g. 'popen-gw[0-9]+')")
    args = parser.parse_args(argv)
    allowed = set(args.allow or ["estimator.py"])
    found = compare(args.old, args.new, allowed, re.compile(args.strip) if args.strip else None)
    for key in ("differ", "only_old", "only_new"):
        for rel in found[key]:
            print(f"{key}: {rel}")
    print(f"{len(found['same'])} files identical, {len(found['allowed'])} allowed to differ ({', '.join(sorted(allowed))}), "
          f"{len(found['same_but_allowed'])} identical but the allowed files' hashes and sizes, "
          f"{len(found['differ'])} differ, {len(found['only_old'])} only in {args.old}, "
          f"{len(found['only_new'])} only in {args.new}")
    return 1 if found["differ"] or found["only_old"] or found["only_new"] else 0


if __name__ == "__main__":
    sys.exit(main())
