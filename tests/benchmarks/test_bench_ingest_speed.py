"""Smoke test of the ingest benchmark (its numbers are not checked here): both engines run on a
few fixture models, in their own processes, and must give the same matrix."""

import pytest

from benchmarks import ingest_speed

pytestmark = pytest.mark.slow  # end to end: each test takes seconds to minutes


def test_ingest_speed_compares_local_and_dask(tmp_path, capsys):
    pytest.importorskip("distributed")
    assert ingest_speed.main(["--models", "3", "--workdir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    import re

    assert re.search(r"\| local process pool \| 2 \| \d+ \| 3 \| 28659 \|", out), out
    assert re.search(r"\| Dask LocalCluster \| 2 \| \d+ \| 3 \| 28659 \|", out), out
    assert "| engine | workers | BLAS threads |" in out
    assert "matrices identical: yes" in out and "Dask task stream: the read tasks took" in out
    assert len(list((tmp_path / "details").glob("details_bench-org__model-*"))) == 3  # kept: --workdir given


def test_ingest_speed_rejects_an_unknown_engine(capsys):
    assert ingest_speed.main(["--models", "1", "--engines", "spark"]) == 2
    assert "unknown engine(s) spark" in capsys.readouterr().err
