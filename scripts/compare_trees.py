#!/usr/bin/env python
"""Compare two trees of output files byte for byte, and say why any file differs.

::

    python scripts/compare_trees.py OLD NEW                     # two builds, e.g. build/release-1.0.0 of two checkouts
    python scripts/compare_trees.py --test-runs BEFORE AFTER    # two `pytest -n 2 --basetemp=DIR` runs

**Builds** (the default): for a change that must leave every output as it was (issue 27), two
builds of the same inputs, one on the code before and one after, must hold the same files with
the same bytes, but ``estimator.py`` itself (``--allow NAME`` to allow other names) and what
follows from its bytes: its ``sha256`` and ``size`` in every ``manifest.json`` (the ``files``
table) and the ``manifest_sha256`` of each benchmark in ``release.json``. A ``manifest.json`` (or
``release.json``) counts as the same when it is equal once those entries are dropped.
``--strip REGEX`` drops matching path components before files are paired; when two files of one
tree then have the same path, they are paired with their byte-identical counterparts where there
are some. ``__pycache__`` folders are skipped (compiled files record their source's time). Prints
a summary and every difference; exit 1 when a file differs (other than allowed), or is in one tree
only.

**Test runs** (``--test-runs``): what two runs of the test suite wrote (CONTRIBUTING.md, the house
rules). Files are keyed by (the test's folder without its trailing numbers, the path inside it
with 40-hex commit ids, process ids and dates replaced): the xdist workers split the tests
differently from run to run. A key's files compare as a multiset of sha256. A key whose files
differ is compared again with normalisers, each of which names a reason the bytes may differ
between two runs of the same code (timings, the loopback Hub's commit ids, ports, lm-eval's run
date, zip member times of a test's own ``numpy.savez``, the fresh clone's copy of the repository;
with ``--allow``, the allowed files and what follows from their bytes, as for builds); what still
differs is listed as UNEXPLAINED (exit 1). Files of tests that exist on one side only are listed by
test.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import zipfile
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


# --- test-suite runs (--test-runs) ---

SHA = re.compile(r"(?<![0-9a-f])[0-9a-f]{40}(?![0-9a-f])")  # git/Hub commit ids (not sha256: 64)
PIDS = re.compile(r"(?<=[.-])\d{3,7}(?=[-./]|$)")  # .a.parquet.25433-..., building-25433
TIMING = re.compile(r'"(seconds|fit_seconds|predict_seconds|estimate_ms_per_model|ms_per_call|ms)": [-0-9.e]+')


def key_of(test: str, rel: str) -> tuple[str, str]:
    rel = SHA.sub("SHA", rel)
    rel = re.sub(r"popen-gw\d", "popen-gwN", rel)  # the xdist worker in the datasets lock names
    rel = re.sub(r"-test-[0-9a-f]{12}/", "-test-CODE/", rel)  # the adaptive bench's cache: its code hash
    rel = re.sub(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d", "DATE", rel)  # lm-eval's output names
    rel = re.sub(r"^pids/\d+$", "pids/PID", rel)
    return re.sub(r"[\d-]+$", "", test), PIDS.sub("PID", rel)


def index(root: Path) -> dict[tuple[str, str], list[tuple[str, Path]]]:
    """(test, path) key -> the (sha256, file) pairs of a test-suite run's basetemp ``root``."""
    out = defaultdict(list)
    for worker in sorted(root.iterdir()):
        if not worker.is_dir():
            continue
        for test in sorted(worker.iterdir()):
            if test.is_symlink() or not test.is_dir():
                continue
            for dirpath, _, filenames in os.walk(test):
                for f in filenames:
                    p = Path(dirpath) / f
                    if p.is_symlink():
                        continue
                    try:
                        sha = digest(p)
                    except OSError:
                        continue
                    out[key_of(test.name, p.relative_to(test).as_posix())].append((sha, p))
    return out


def npz_equal(a: bytes, b: bytes) -> bool:
    """The same members with the same bytes (the .npy files); only the zip's metadata may differ."""
    try:
        za, zb = zipfile.ZipFile(io.BytesIO(a)), zipfile.ZipFile(io.BytesIO(b))
    except zipfile.BadZipFile:
        return False
    return za.namelist() == zb.namelist() and all(za.read(n) == zb.read(n) for n in za.namelist())


def normalised(rel: str, data: bytes) -> bytes:
    text = data.decode("utf-8", "replace")
    text = TIMING.sub(r'"\1": T', text)
    text = SHA.sub("SHA", text)  # Hub commit ids (in release.json, URLs, the datasets cache)
    text = re.sub(r'"code": "[0-9a-f]{12}"', '"code": CODE', text)
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", text)
    # lm-eval's results files: the run's date and duration, functions' addresses
    text = re.sub(r'"date": [0-9.]+', '"date": D', text)
    text = re.sub(r'"git_hash": "[0-9a-f]{7}"', '"git_hash": G', text)  # the checkout lm-eval ran in
    text = re.sub(r'"total_evaluation_time_seconds": "[0-9.]+"', '"total_evaluation_time_seconds": T', text)
    text = re.sub(r" at 0x[0-9a-f]+>", " at ADDR>", text)
    return text.encode()


ROOT = Path(__file__).resolve().parents[1]
_TRACKED: set[str] = set()


def _repository_copy(rel: str) -> bool:
    """Whether ``rel`` (inside the fresh-clone test's clone) is the repository's own file, not an output."""
    if not _TRACKED:
        listed = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True, check=True)
        _TRACKED.update(listed.stdout.splitlines())
    return rel in _TRACKED or rel.startswith((".git/", "build/lib/")) or rel.split("/")[0].endswith(".egg-info")


def explain(test: str, rel: str, pa: list[Path], pb: list[Path], allowed: set[str] = frozenset()) -> str | None:
    """Why the files differ, or None."""
    if Path(rel).name in allowed:
        return f"allowed to differ ({', '.join(sorted(allowed))})"
    if test.startswith("test_readme_command_") and _repository_copy(rel.removeprefix("clone/")):
        return "the fresh clone's copy of the repository (its sources, git objects, build/lib, egg-info)"
    if "/refs/" in rel:
        return "Hub ref files: the loopback Hub's commit ids (they hash the commit's time)"
    if rel.endswith(".pyc"):
        return ".pyc header: the source's mtime"
    if rel.endswith(".whl"):
        return "the wheel of the changed sources"
    if len(pa) != len(pb):
        return None
    if allowed and len(pa) == 1 and same_but_allowed(pa[0], pb[0], allowed):
        return "identical but the allowed files' hashes and sizes"
    A = sorted(p.read_bytes() for p in pa)
    B = sorted(p.read_bytes() for p in pb)
    if rel.endswith(".npz"):
        if all(a in B or any(npz_equal(a, b) for b in B) for a in A):
            return ".npz written by the test with numpy.savez (zip member times); every member's bytes are equal"
        return None
    if sorted(normalised(rel, a) for a in A) == sorted(normalised(rel, b) for b in B):
        return "timings, Hub commit ids, the benchmark scripts' code hash, the test server's port, lm-eval's run date/duration/git_hash and function addresses only"
    return None


def compare_test_runs(before: Path, after: Path, allowed: set[str]) -> int:
    """Print what two test-suite runs wrote that differs, and why; 1 when a difference is unexplained."""
    a, b = index(before), index(after)
    same = 0
    reasons: dict[str, int] = defaultdict(int)
    unexplained, only_a, only_b = [], [], []
    for key in sorted(set(a) | set(b)):
        ha, hb = sorted(h for h, _ in a.get(key, [])), sorted(h for h, _ in b.get(key, []))
        if ha == hb:
            same += len(ha)
        elif not ha:
            only_b.append(key)
        elif not hb:
            only_a.append(key)
        else:
            why = explain(*key, [p for _, p in a[key]], [p for _, p in b[key]], allowed)
            if why:
                reasons[why] += 1
            else:
                unexplained.append((key, [str(p) for _, p in a[key]], [str(p) for _, p in b[key]]))
    print(f"identical files: {same}")
    for why, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
        print(f"  differ, explained ({n} keys): {why}")
    tests_a, tests_b = {k[0] for k in a}, {k[0] for k in b}
    for name, only, other in (("only before", only_a, tests_b), ("only after", only_b, tests_a)):
        new_tests = sorted({k[0] for k in only if k[0] not in other})
        rest = [k for k in only if k[0] in other
                and not (k[0].startswith("test_readme_command_") and _repository_copy(k[1].removeprefix("clone/")))]
        print(f"{name}: {len(only)} keys; tests found only on that side: {new_tests}; other keys: {len(rest)}")
        for k in rest:
            print("   ", *k)
    print(f"UNEXPLAINED: {len(unexplained)}")
    for key, pa, pb in unexplained:
        print("   ", *key, pa[:2], pb[:2])
    return 1 if unexplained else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("old", type=Path, help="the tree before (a build folder, or a --basetemp folder)")
    parser.add_argument("new", type=Path, help="the tree after")
    parser.add_argument("--test-runs", action="store_true",
                        help="the trees are two test-suite runs' --basetemp folders (keyed by test, normalisers)")
    parser.add_argument("--allow", action="append", default=None, metavar="NAME",
                        help="a file name allowed to differ (builds: default estimator.py; repeat for more)")
    parser.add_argument("--strip", default=None, metavar="REGEX",
                        help="builds: drop path components matching this (e.g. 'popen-gw[0-9]+')")
    args = parser.parse_args(argv)
    for root in (args.old, args.new):
        if not root.is_dir():
            parser.error(f"{root}: not a folder")
    if args.test_runs:
        if args.strip:
            parser.error("--strip is for builds: test runs are keyed by test already")
        return compare_test_runs(args.old, args.new, set(args.allow or []))
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
