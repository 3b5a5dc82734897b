"""scripts/compare_trees.py: two builds are the same but for estimator.py and what follows from its bytes."""

from __future__ import annotations

import importlib.util
import json

from helpers.builds import ROOT


def _script():
    spec = importlib.util.spec_from_file_location("compare_trees", ROOT / "scripts" / "compare_trees.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tree(root, estimator: str, extra: dict | None = None, worker: str = "popen-gw0"):
    folder = root / worker / "test_build0" / "tinyX"
    (folder / "cfg").mkdir(parents=True)
    (folder / "estimator.py").write_text(estimator)
    (folder / "cfg" / "test.parquet").write_bytes(b"rows")
    manifest = {"name": "tinyX", "files": {"estimator.py": {"sha256": str(hash(estimator)), "size": len(estimator)},
                                           "cfg/test.parquet": {"sha256": "abc", "size": 4}}}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (root / "release.json").write_text(json.dumps({"benchmarks": {"tinyX": {"manifest_sha256": str(hash(estimator)),
                                                                            "anchors": 100}}}))
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "estimator.cpython-311.pyc").write_text(estimator)
    for rel, text in (extra or {}).items():
        (folder / rel).write_text(text)
    return root


def test_estimator_py_and_its_hashes_may_differ_nothing_else(tmp_path, capsys):
    cmp = _script()
    old = _tree(tmp_path / "old", "old code")
    new = _tree(tmp_path / "new", "new code", worker="popen-gw1")
    assert cmp.main([str(old), str(new)]) == 1  # without --strip the workers' folders do not pair
    assert cmp.main([str(old), str(new), "--strip", "popen-gw[0-9]+"]) == 0
    out = capsys.readouterr().out.splitlines()[-1]
    # the parquet file; estimator.py; the manifest and release.json but for estimator.py's hash and size
    assert out.startswith("1 files identical, 1 allowed to differ (estimator.py), 2 identical but the allowed"), out
    other = _tree(tmp_path / "other", "new code", extra={"README.md": "another card"})
    assert cmp.main([str(old), str(other), "--strip", "popen-gw[0-9]+"]) == 1
    assert "only_new: test_build0/tinyX/README.md" in capsys.readouterr().out
    (other / "popen-gw0" / "test_build0" / "tinyX" / "cfg" / "test.parquet").write_bytes(b"other rows")
    (old / "popen-gw0" / "test_build0" / "tinyX" / "README.md").write_text("a card")
    assert cmp.main([str(old), str(other), "--strip", "popen-gw[0-9]+"]) == 1
    out = capsys.readouterr().out
    assert "differ: test_build0/tinyX/cfg/test.parquet" in out and "differ: test_build0/tinyX/README.md" in out
    # a manifest that differs in another entry than estimator.py's differs
    path = new / "popen-gw1" / "test_build0" / "tinyX" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["files"]["cfg/test.parquet"]["size"] = 5
    path.write_text(json.dumps(manifest))
    assert cmp.main([str(old), str(new), "--strip", "popen-gw[0-9]+"]) == 1
    assert "differ: test_build0/tinyX/manifest.json" in capsys.readouterr().out


def test_files_at_one_stripped_path_pair_with_their_identical_counterparts(tmp_path):
    cmp = _script()
    for root, order in ((tmp_path / "a", ("one", "two")), (tmp_path / "b", ("two", "one"))):
        for worker, text in zip(("popen-gw0", "popen-gw1"), order):
            (root / worker / "t0").mkdir(parents=True)
            (root / worker / "t0" / "f.txt").write_text(text)
    found = cmp.compare(tmp_path / "a", tmp_path / "b", {"estimator.py"}, cmp.re.compile("popen-gw[0-9]+"))
    assert found["same"] == ["t0/f.txt", "t0/f.txt"] and not found["differ"]


def _run(root, worker: str, files: dict[str, str]):
    for rel, text in files.items():
        path = root / worker / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_test_runs_are_keyed_by_test_and_differences_explained(tmp_path, capsys):
    cmp = _script()
    before = _run(tmp_path / "before", "popen-gw0", {"test_fit0/out.json": '{"seconds": 1.5, "score": 0.5}',
                                                     "test_fit0/estimator.py": "old code"})
    after = _run(tmp_path / "after", "popen-gw1", {"test_fit3/out.json": '{"seconds": 2.25, "score": 0.5}',
                                                   "test_fit3/estimator.py": "new code"})
    # another worker and test number; the timing is explained, estimator.py is not unless allowed
    assert cmp.main(["--test-runs", str(before), str(after)]) == 1
    out = capsys.readouterr().out
    assert "timings" in out and "UNEXPLAINED: 1" in out and "estimator.py" in out
    assert cmp.main(["--test-runs", str(before), str(after), "--allow", "estimator.py"]) == 0
    assert "UNEXPLAINED: 0" in capsys.readouterr().out
    (after / "popen-gw1" / "test_fit3" / "out.json").write_text('{"seconds": 2.25, "score": 0.6}')
    assert cmp.main(["--test-runs", str(before), str(after), "--allow", "estimator.py"]) == 1
    assert "UNEXPLAINED: 1" in capsys.readouterr().out
