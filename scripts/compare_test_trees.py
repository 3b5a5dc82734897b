"""Compare the files two test-suite runs wrote, and explain every difference.

Shows that a change leaves every output of the suite byte for byte as it was (CONTRIBUTING.md,
the house rules)::

    git checkout OLD && python -m pytest -q -n 2 --basetemp=/tmp/before
    git checkout NEW && python -m pytest -q -n 2 --basetemp=/tmp/after
    python scripts/compare_test_trees.py /tmp/before /tmp/after      # exit status 1: unexplained differences

Files are keyed by (the test's folder without its trailing numbers, the path inside it with
40-hex commit ids, process ids and dates replaced): the xdist workers split the tests differently
from run to run. A key's files compare as a multiset of sha256. A key whose files differ is
compared again with the normalisers below, each of which names a reason the bytes may differ
between two runs of the same code (timings, the loopback Hub's commit ids, ports, lm-eval's run
date, zip member times of a test's own ``numpy.savez``, the fresh clone's copy of the
repository); what still differs is listed as UNEXPLAINED. Files of tests that exist on one side
only are listed by test.
"""
import hashlib
import io
import os
import re
import subprocess
import sys
import zipfile
from collections import defaultdict
from pathlib import Path


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


def index(root: Path):
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
                        data = p.read_bytes()
                    except OSError:
                        continue
                    out[key_of(test.name, p.relative_to(test).as_posix())].append(
                        (hashlib.sha256(data).hexdigest(), p))
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


def explain(test: str, rel: str, pa: list[Path], pb: list[Path]) -> str | None:
    """Why the files differ, or None."""
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
    A = sorted(p.read_bytes() for p in pa)
    B = sorted(p.read_bytes() for p in pb)
    if rel.endswith(".npz"):
        if all(a in B or any(npz_equal(a, b) for b in B) for a in A):
            return ".npz written by the test with numpy.savez (zip member times); every member's bytes are equal"
        return None
    if sorted(normalised(rel, a) for a in A) == sorted(normalised(rel, b) for b in B):
        return "timings, Hub commit ids, the benchmark scripts' code hash, the test server's port, lm-eval's run date/duration/git_hash and function addresses only"
    return None


def main(before: Path, after: Path) -> int:
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
            why = explain(*key, [p for _, p in a[key]], [p for _, p in b[key]])
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


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
