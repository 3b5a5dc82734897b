"""Readers against the real files in ../shared/data (skipped when absent)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tinybench_builder.read.ingest import detect_source, ingest
from tinybench_builder.read.sources import alpaca_eval, legacy_pickle, lm_eval
from helpers.sources import SHARED_DATA

pytestmark = [pytest.mark.slow, pytest.mark.realdata]

if not SHARED_DATA.is_dir():
    pytest.skip(f"no shared data at {SHARED_DATA}", allow_module_level=True)

RAW = SHARED_DATA / "raw"
RESP = SHARED_DATA / "responses"
CONTENT = SHARED_DATA / "content"


def _need(*paths):
    for p in paths:
        if not p.exists():
            pytest.skip(f"missing {p}")


def _same_rows(m, table):
    ref = pd.read_parquet(table)
    assert set(m.models) <= set(ref.index)
    assert list(m.items) == [str(c) for c in ref.columns]
    np.testing.assert_array_equal(m.scores, ref.loc[m.models].to_numpy(dtype=float))


def test_lm_eval_samples_match_wmdp_bio():
    _need(RAW / "lm_eval_samples", RESP / "wmdp_bio.parquet")
    src = RAW / "lm_eval_samples"
    assert detect_source(src) == "lm_eval"
    m = lm_eval.read(src)
    assert len(m.models) == len(list(src.iterdir()))
    assert all("/" in name for name in m.models)  # pretrained= from the results json
    _same_rows(m, RESP / "wmdp_bio.parquet")
    assert m.item_info["question"].notna().all()


def test_alpaca_eval_annotations_match_alpaca_eval_2():
    _need(RAW / "alpaca_eval", RESP / "alpaca_eval_2.parquet", CONTENT / "alpaca_eval.parquet")
    m = ingest([RAW / "alpaca_eval"], content=CONTENT / "alpaca_eval.parquet")
    assert m.shape[1] == 805
    _same_rows(m, RESP / "alpaca_eval_2.parquet")
    m2 = alpaca_eval.read(RAW / "alpaca_eval")  # without content: instruction text ids
    assert m2.items == list(pd.read_parquet(CONTENT / "alpaca_eval.parquet")["instruction"])


@pytest.mark.parametrize("entry", ["wmdp_bio", "wmdp_cyber"])
def test_legacy_pickle_matches_matrices(entry):
    pkl = RAW / "legacy_pickle" / "wmdp_data.pkl"
    _need(pkl, RESP / f"{entry}.parquet")
    m = legacy_pickle.read(pkl, task=entry)
    ref = pd.read_parquet(RESP / f"{entry}.parquet")
    assert m.models == list(ref.index) and m.items == list(ref.columns)
    np.testing.assert_array_equal(m.scores, ref.to_numpy(dtype=float))


def test_lm_eval_and_pickle_agree_when_merged():
    _need(RAW / "lm_eval_samples", RAW / "legacy_pickle" / "wmdp_data.pkl")
    m = ingest([RAW / "legacy_pickle" / "wmdp_data.pkl", RAW / "lm_eval_samples"], task="wmdp_bio")
    assert m.shape == (64, 1273)  # no conflicts: the same scores
