"""Compact storage of big matrices (issue 18): the same numbers as the float64 matrix, blocks of
rows or items that change no bit of a fit, views instead of copies, and the wide parquet table
streamed in and out of it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import tinybench_builder.estimator as estimator_module
import tinybench_builder.model.irt as irt_module
import tinybench_builder.read.compact as compact
import tinybench_builder.read.matrix as matrix_module
from tinybench_builder.model.fitting import fit_estimator, true_scores
from tinybench_builder.model.irt import IRTModel, binarize_scores, fit_abilities
from tinybench_builder.read.compact import CompactScores, row_chunks
from tinybench_builder.read.matrix import MatrixFormatError, ResponseMatrix
from tinybench_builder.read.simulate import simulate_responses


def _dense(n=450, N=70, seed=0, missing=0.2, soft=False):
    rng = np.random.default_rng(seed)
    Y = rng.random((n, N)) if soft else (rng.random((n, N)) < 0.6).astype(float)
    if missing:
        Y[rng.random((n, N)) < missing] = np.nan
    return Y


@pytest.mark.parametrize("soft", [False, True])
@pytest.mark.parametrize("missing", [0.0, 0.2])
def test_compact_holds_the_same_numbers(soft, missing, monkeypatch):
    monkeypatch.setattr(compact, "CHUNK_ELEMENTS", 192 * 70)  # several blocks of rows
    Y = _dense(soft=soft, missing=missing)
    c = CompactScores.from_dense(Y)
    assert c.binary == (not soft) and (c.mask is None) == (not missing)
    assert c.values.dtype == (np.float64 if soft else np.uint8)
    assert len(row_chunks(*Y.shape)) == 3
    np.testing.assert_array_equal(c.dense(), Y)
    obs = ~np.isnan(Y)
    Yf = np.where(obs, Y, 0.0)
    assert c.n_obs == obs.sum()
    np.testing.assert_array_equal(c.col_counts(), obs.sum(0))
    np.testing.assert_array_equal(c.row_counts(), obs.sum(1))
    np.testing.assert_array_equal(c.observed(), obs)
    # the same bits as numpy's own sums (rows added one after the other)
    assert np.array_equal(c.col_sums(), Yf.sum(0))
    assert np.array_equal(c.col_sums(via=np.float32), Yf.astype(np.float32).sum(0, dtype=np.float64))
    np.testing.assert_array_equal(c.observed_values(), Y[obs])
    rows, cols = np.array([5, 1, 88, 40]), np.array([3, 0, 69, 12, 12])
    v = c.view(rows)
    assert v.shape == (4, 70) and v.values is c.values  # a view: nothing copied
    np.testing.assert_array_equal(v.dense(), Y[rows])
    sub = v.dense(cols=cols)
    np.testing.assert_array_equal(sub, Y[rows][:, cols])
    # laid out as numpy lays out Y[rows][:, cols] (BLAS then takes the same path)
    assert sub.flags["F_CONTIGUOUS"] == Y[rows][:, cols].flags["F_CONTIGUOUS"]
    np.testing.assert_array_equal(v.view([2, 0]).dense(), Y[rows[[2, 0]]])
    t = c.take(rows, cols)
    assert t.rows is None
    np.testing.assert_array_equal(t.dense(), Y[rows][:, cols])
    Yb, Mb = c.block(slice(10, 20))
    assert Yb.dtype == np.float32
    np.testing.assert_array_equal(Yb, Yf[10:20].astype(np.float32))
    if missing:
        np.testing.assert_array_equal(Mb, obs[10:20])
    for thr in (0.5, 0.3):
        np.testing.assert_array_equal(c.binarized(thr).dense(), binarize_scores(Y, thr))


def test_row_chunks_are_aligned_and_never_one_row():
    for n in (1, 2, 63, 64, 65, 129, 1000):
        for width in (1, 7, 1000, 10**6):
            chunks = row_chunks(n, width, budget=192 * 100)
            assert chunks[0].start == 0 and chunks[-1].stop == n
            assert all(a.stop == b.start for a, b in zip(chunks, chunks[1:]))
            assert all(c.start % compact.ROW_ALIGN == 0 for c in chunks)
            assert n == 1 or all(c.stop - c.start >= 2 for c in chunks)


def _fits_in_one_block_and_in_many(soft: bool):
    """The whole pipeline (dimension choice, staged fit with Newton steps per item, the one
    hold-out's refit, estimator components) in one block, then in blocks of 192 rows / items."""
    saved = irt_module._STAGE_ITEMS, irt_module._DIMS_ITEMS, compact.CHUNK_ELEMENTS, estimator_module._BLOCK_ELEMENTS
    irt_module._STAGE_ITEMS, irt_module._DIMS_ITEMS = 300, 200  # the staged fit of big matrices, small
    try:
        matrix, _ = simulate_responses(n_models=420, n_items=600, n_dims=2, seed=5, missing=0.1, soft=soft,
                                       subscenarios=4)

        def fit():
            res = fit_estimator(matrix, n_anchors=40, seed=1, progress=False)
            est = res.estimator
            comp = est.components(matrix.scores[:, [matrix.items.index(a) for a in est.anchor_ids]])
            return res, comp

        ref = fit()
        assert ref[0].report["n_folds"] == 1  # the refit path (fit_abilities on every model)
        compact.CHUNK_ELEMENTS = estimator_module._BLOCK_ELEMENTS = 192 * 600
        assert len(row_chunks(420, 600)) == 3 and len(row_chunks(600, 420)) == 4
        return ref, fit()
    finally:
        irt_module._STAGE_ITEMS, irt_module._DIMS_ITEMS, compact.CHUNK_ELEMENTS, estimator_module._BLOCK_ELEMENTS = saved


def _differences(soft: bool, rtol: float = 0.0) -> list[str]:
    """What differs between the fit in one block and in many (bits with ``rtol=0``)."""
    (ref, ref_comp), (new, new_comp) = _fits_in_one_block_and_in_many(soft)
    same = (lambda a, b: np.array_equal(a, b, equal_nan=True)) if rtol == 0 else \
        (lambda a, b: np.allclose(a, b, rtol=rtol, atol=rtol, equal_nan=True))
    out = [] if list(new.estimator.anchor_ids) == list(ref.estimator.anchor_ids) else ["anchor_ids"]
    out += [name for name in ("A", "b") if not same(getattr(new.estimator, name), getattr(ref.estimator, name))]
    if rtol == 0 and new.estimator.params != ref.estimator.params:
        out.append("params")
    out += [key for key, value in ref_comp.items() if not same(new_comp[key], value)]
    if rtol == 0 and new.report["oof"] != ref.report["oof"]:
        out.append("oof")
    return out


@pytest.mark.parametrize("soft", [False, True])
def test_blocks_change_no_bit_of_the_fit_on_the_kernels_the_alignment_is_for(soft, tmp_path):
    """Blocks of rows start at multiples of ROW_ALIGN so that a product over a block gives, row by
    row, the bits of the product over all rows: true of OpenBLAS's Haswell kernels, which
    OPENBLAS_CORETYPE selects in a child process on any x86-64 machine with AVX2. (Other kernels,
    e.g. SkylakeX's, send small products to other code by size, so there the last bits may move:
    the next test bounds that.)"""
    import json
    import os
    import platform
    import subprocess
    import sys
    from pathlib import Path

    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("OpenBLAS's Haswell kernels are x86-64 kernels")
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    if " avx2" not in flags:
        pytest.skip("no AVX2: OpenBLAS cannot use its Haswell kernels here")
    here = Path(__file__).resolve().parent
    tests, root = here.parent, here.parents[1]
    code = (f"import json, test_compact; print(json.dumps(test_compact._differences({soft!r})))")
    env = {**os.environ, "OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_VERBOSE": "2",
           "PYTHONPATH": os.pathsep.join([str(here), str(tests), str(root), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    if "Haswell" not in proc.stdout + proc.stderr:
        pytest.skip(f"this numpy's BLAS did not report the Haswell kernels: {proc.stdout[-200:]}")
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("soft", [False, True])
def test_blocks_change_the_fit_by_rounding_only_on_any_kernel(soft):
    """On whatever kernels this machine's BLAS picks, blocks change the fit by rounding only:
    the same anchors, and parameters and components equal to 1e-9."""
    assert _differences(soft, rtol=1e-9) == []


def test_fit_on_a_view_is_the_fit_on_a_copy():
    matrix, _ = simulate_responses(n_models=60, n_items=120, n_dims=1, seed=2, missing=0.1)
    rows = np.array([0, 3, 4, 9, 10, 11, 20, 33, 34, 35, 50, 51, 52, 58, 59])
    a = IRTModel(n_dims=1).fit(matrix.scores[rows])
    b = IRTModel(n_dims=1).fit(matrix.compact.view(rows))
    assert np.array_equal(a.discrimination_, b.discrimination_) and np.array_equal(a.ability_, b.ability_)


def test_fit_abilities_in_blocks(monkeypatch):
    Y = _dense(n=300, N=50, seed=3)
    A = np.random.default_rng(1).normal(size=(50, 2))
    b = np.random.default_rng(2).normal(size=50)
    ref = fit_abilities(Y, A, b, np.zeros(2), np.eye(2))
    monkeypatch.setattr(compact, "CHUNK_ELEMENTS", 192 * 50)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        for got in (fit_abilities(Y, A, b, np.zeros(2), np.eye(2)),
                    fit_abilities(CompactScores.from_dense(Y), A, b, np.zeros(2), np.eye(2), pool=pool)):
            assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])


def test_true_scores_in_blocks(monkeypatch):
    Y = _dense(n=200, N=30, seed=4, soft=True)
    scen = np.repeat([0, 1, 2], 10)
    bal = np.random.default_rng(0).random(30)
    ref = true_scores(Y, bal, scen, 3)
    monkeypatch.setattr(compact, "CHUNK_ELEMENTS", 192 * 30)
    assert np.array_equal(true_scores(CompactScores.from_dense(Y), bal, scen, 3), ref, equal_nan=True)


def test_the_fit_never_makes_the_float_matrix(tmp_path):
    """A wide parquet table is read into compact storage, and fitting on it never asks for the
    float64 matrix."""
    m, _ = simulate_responses(n_models=40, n_items=90, n_dims=1, seed=3, missing=0.05)
    m.write(tmp_path / "m.parquet")
    read = ResponseMatrix.read(tmp_path / "m.parquet")
    assert read._dense is None and read.compact.binary
    fit_estimator(read, n_anchors=10, n_dims=1, progress=False)
    assert read._dense is None
    np.testing.assert_array_equal(read.scores, m.scores)


# ----------------------------------------------------------------------------- parquet
def _pandas_read(path):
    return ResponseMatrix.from_frame(pd.read_parquet(path), source=str(path))


@pytest.mark.parametrize("layout", ["index", "column", "float32", "unnamed_index", "soft"])
def test_streamed_parquet_is_the_pandas_read(tmp_path, layout, monkeypatch):
    monkeypatch.setattr(compact, "_BATCH_COLUMNS", 7)
    Y = _dense(n=30, N=40, seed=6, soft=layout == "soft")
    Y[3] = np.nan  # a model with no result at all
    models = [f"m{i}" for i in range(30)]
    df = pd.DataFrame(Y, columns=[f"it{j}" for j in range(40)])
    if layout == "column":
        df.insert(0, "model", models)
    else:
        df.index = pd.Index(models, name=None if layout == "unnamed_index" else "model")
    if layout == "float32":
        df = df.astype(np.float32)
    df.to_parquet(tmp_path / "t.parquet")
    got = ResponseMatrix.read(tmp_path / "t.parquet")
    ref = _pandas_read(tmp_path / "t.parquet")
    assert got._dense is None  # streamed
    assert got.models == ref.models and got.items == ref.items
    np.testing.assert_array_equal(got.scores, ref.scores)


def test_other_tables_take_the_pandas_reader(tmp_path):
    long = pd.DataFrame({"model": ["a", "a", "b"], "item": ["x", "y", "x"], "score": [1.0, 0.0, 0.5]})
    long.to_parquet(tmp_path / "long.parquet")
    m = ResponseMatrix.read(tmp_path / "long.parquet")
    assert m.shape == (2, 2) and np.isnan(m.scores[1, 1])
    ints = pd.DataFrame({"x": [1, 0], "y": [0, 1]}, index=pd.Index(["a", "b"], name="model"))
    ints.to_parquet(tmp_path / "ints.parquet")
    np.testing.assert_array_equal(ResponseMatrix.read(tmp_path / "ints.parquet").scores, [[1, 0], [0, 1]])
    bad = pd.DataFrame({"x": [1.0, 3.0], "y": [0.0, -1.0]}, index=pd.Index(["a", "b"], name="model"))
    bad.to_parquet(tmp_path / "bad.parquet")
    with pytest.raises(MatrixFormatError, match=r"found 2 value\(s\) outside, e.g. np.float64\(3.0\)"):
        ResponseMatrix.read(tmp_path / "bad.parquet")
    dup = pd.DataFrame({"x": [1.0, 0.0]}, index=pd.Index(["a", "a"], name="model"))
    dup.to_parquet(tmp_path / "dup.parquet")
    with pytest.raises(MatrixFormatError, match="duplicate model name: 'a'"):
        ResponseMatrix.read(tmp_path / "dup.parquet")
    nomodel = pd.DataFrame({"x": [1.0, 0.0]})
    nomodel.to_parquet(tmp_path / "nomodel.parquet")
    with pytest.raises(MatrixFormatError, match="needs the model names"):
        ResponseMatrix.read(tmp_path / "nomodel.parquet")


def test_big_tables_are_written_in_row_groups(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    monkeypatch.setattr(matrix_module, "BIG_TABLE_CELLS", 500)
    m, _ = simulate_responses(n_models=70, n_items=40, n_dims=1, seed=8, missing=0.1, soft=True)
    m.write(tmp_path / "big.parquet")
    assert pq.ParquetFile(tmp_path / "big.parquet").metadata.num_row_groups > 1
    for got in (ResponseMatrix.read(tmp_path / "big.parquet"), _pandas_read(tmp_path / "big.parquet")):
        assert got.models == m.models and got.items == m.items
        np.testing.assert_array_equal(got.scores, m.scores)


def test_simulation_in_blocks_draws_the_same_matrix(monkeypatch):
    """Drawn block by block, the simulated scores are those of one draw of the whole matrix
    (the formula as it was before blocks)."""
    from scipy.special import expit

    monkeypatch.setattr(compact, "CHUNK_ELEMENTS", 192 * 50)
    for soft in (False, True):
        m, truth = simulate_responses(n_models=450, n_items=50, n_dims=2, seed=4, missing=0.1, soft=soft)
        rng = np.random.default_rng(4)
        theta = rng.standard_normal((450, 2))
        A = np.abs(rng.normal(0.0, 1.0, (50, 2))) * (1.2 / np.sqrt(2)) + 0.1
        b = rng.normal(0.0, 1.5, 50)
        P = expit(theta @ A.T - b)
        Y = P.copy() if soft else (rng.random(P.shape) < P).astype(np.float64)
        Y[rng.random(Y.shape) < 0.1] = np.nan
        np.testing.assert_array_equal(m.scores, Y)
        np.testing.assert_array_equal(truth["P"], P)


def test_data_problems_are_found_in_compact_storage(monkeypatch):
    """The checks before a fit read big matrices block by block: the same findings either way."""
    from tinybench_builder.model.fitting import data_problem

    monkeypatch.setattr(compact, "CHUNK_ELEMENTS", 192 * 20)
    Y = _dense(n=400, N=20, seed=9)
    Y[250] = np.nan  # a model without scores, in the second block
    for scores in (Y, CompactScores.from_dense(Y)):
        m = ResponseMatrix(scores, [f"m{i}" for i in range(400)], [f"i{j}" for j in range(20)])
        assert "1 model(s) have no scores at all" in data_problem(m) and "m250" in data_problem(m)
    const = np.where(np.isnan(Y), np.nan, 1.0)
    const[250] = 1.0
    for scores in (const, CompactScores.from_dense(const)):
        m = ResponseMatrix(scores, [f"m{i}" for i in range(400)], [f"i{j}" for j in range(20)])
        assert data_problem(m).startswith("every score in the matrix is 1")
    fine = np.where(np.isnan(Y), 0.0, Y)
    assert data_problem(ResponseMatrix(CompactScores.from_dense(fine), [f"m{i}" for i in range(400)],
                                       [f"i{j}" for j in range(20)])) is None


def test_keep_freed_blocks_is_reentrant():
    from tinybench_builder.model import keep_freed_blocks
    from tinybench_builder.model import memory

    with keep_freed_blocks():
        with keep_freed_blocks():
            assert memory._depth in (0, 2)  # 0 where there is no glibc (nothing done)
        a = np.ones(10**7)  # a block far above glibc's default mmap threshold
        del a
    assert memory._depth == 0


def test_simulate_soft_from_the_command_line(tmp_path):
    from tinybench_builder.cli.main import main

    assert main(["simulate", "--models", "6", "--items", "9", "--soft", "--out", str(tmp_path / "s.parquet")]) == 0
    m = ResponseMatrix.read(tmp_path / "s.parquet")
    ref, _ = simulate_responses(n_models=6, n_items=9, soft=True)
    assert not m.compact.binary
    np.testing.assert_array_equal(m.scores, ref.scores)
