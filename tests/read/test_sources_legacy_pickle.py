"""Legacy tinyBenchmarks pickle reader: restricted unpickler, entry choice, bad input."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from tinybench_builder.read.sources import SourceError, legacy_pickle
from helpers.sources import write_legacy_pickle, write_malicious_pickle


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_reads_entries(tmp_path, protocol):
    a = np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])  # (items, models)
    b = np.array([[0.25, 0.5, 1.0]])
    p = write_legacy_pickle(tmp_path / "x.pkl", ["m1", "org/m2", "m3"], {"bio": a, "cyber": b}, protocol=protocol)
    m = legacy_pickle.read(p, task="bio")
    assert m.models == ["m1", "org/m2", "m3"] and m.items == ["0", "1"]
    np.testing.assert_array_equal(m.scores, a.T)
    np.testing.assert_array_equal(legacy_pickle.read(p, task="cyber").scores, b.T)
    with pytest.raises(SourceError, match="holds 2 entries; choose one with --task: bio, cyber"):
        legacy_pickle.read(p)
    with pytest.raises(SourceError, match="no entry 'x'; entries: bio, cyber"):
        legacy_pickle.read(p, task="x")
    single = write_legacy_pickle(tmp_path / "y.pkl", ["m1", "m2"], {"only": np.eye(2)}, protocol=protocol)
    assert legacy_pickle.read(single).shape == (2, 2)


def test_malicious_pickle_refused_without_running(tmp_path):
    marker = tmp_path / "pwned"
    p = write_malicious_pickle(tmp_path / "evil.pkl", marker)
    with pytest.raises(SourceError, match=r"refused to load global (posix|os)\.system"):
        legacy_pickle.read(p)
    assert not marker.exists()


@pytest.mark.parametrize("payload", [
    b"cbuiltins\neval\n(S'1+1'\ntR.",  # protocol 0 GLOBAL of eval
    pickle.dumps(exec, protocol=4),  # STACK_GLOBAL builtins.exec
    pickle.dumps(getattr),
    pickle.dumps({"models": [], "data": {"x": {"correctness": np.ones(2)}}, "extra": np.random.default_rng(0)}),
])
def test_other_globals_refused(tmp_path, payload):
    p = tmp_path / "bad.pkl"
    p.write_bytes(payload)
    with pytest.raises(SourceError, match="refused to load global"):
        legacy_pickle.read(p)


def test_corrupt_and_wrong_structure(tmp_path):
    p = write_legacy_pickle(tmp_path / "x.pkl", ["a"], {"t": np.ones((3, 1))})
    raw = p.read_bytes()
    p.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(SourceError, match="x.pkl: not a readable pickle"):
        legacy_pickle.read(p)
    p.write_bytes(pickle.dumps([1, 2, 3]))
    with pytest.raises(SourceError, match="not a tinyBenchmarks pickle"):
        legacy_pickle.read(p)
    p.write_bytes(pickle.dumps({"models": ["a", "b"], "data": {"t": {"correctness": np.ones((3, 1))}}}))
    with pytest.raises(SourceError, match=r"shape \(3, 1\) does not match 2 models"):
        legacy_pickle.read(p)
