"""Out of memory is one clear line with its own exit status (4), never "bad input" with an empty
reason, and leaves no temporary file (issue 21). pyarrow's allocation failures are MemoryErrors."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from tinybench_builder.cli.main import main
from tinybench_builder.errors import OUT_OF_MEMORY_EXIT
from tinybench_builder.read.matrix import MAX_PARQUET_COLUMNS, ResponseMatrix
from helpers.builds import ROOT


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text("model,item,score\n" + "".join(f"m{i},{j},1\n" for i in range(3) for j in range(5)))
    return path


def _fail(*args, **kwargs):
    import pyarrow as pa

    raise pa.ArrowMemoryError("malloc of size 8589934592 failed")


@pytest.mark.parametrize("where", ["read", "write"])
def test_an_allocation_failure_is_one_line_and_exit_4(where, table, tmp_path, capsys, monkeypatch):
    from tinybench_builder.read import long_table

    if where == "read":
        monkeypatch.setattr(long_table, "read_long", _fail)
    else:
        monkeypatch.setattr(ResponseMatrix, "to_frame", _fail)
    out = tmp_path / "out.parquet"
    assert main(["ingest", str(table), "--out", str(out), "--progress", "none", "--jobs", "1"]) == OUT_OF_MEMORY_EXIT
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "out of memory" in err and "malloc of size 8589934592 failed" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.csv"]  # no output, no temporary file
    monkeypatch.setattr(ResponseMatrix, "read", _fail)
    assert main(["fit", str(table), "--anchors", "2", "--out", str(tmp_path / "o")]) == OUT_OF_MEMORY_EXIT
    assert "out of memory" in capsys.readouterr().err


def test_a_real_memory_limit_gives_exit_4(tmp_path):
    """Under an address-space limit too small for the matrix (prlimit-like, RLIMIT_AS)."""
    path = tmp_path / "long.csv"
    n, m = 300, 20000  # a 48 MB matrix
    # a small file, a big matrix: model i has the items j with (i + j) % 50 == 0 (all 20,000 in all)
    path.write_text("model,item,score\n" + "".join(f"m{i},{j},1\n" for i in range(n) for j in range(m)
                                                    if (i + j) % 50 == 0))
    code = ("import resource, sys\n"
            "from tinybench_builder.cli.main import main, build_parser\n"
            "build_parser()\n"  # every import done before the limit
            "import numpy, pyarrow, pandas, pyarrow.csv, pyarrow.parquet, scipy.special, tinybench_builder.read.long_table\n"
            # pyarrow's thread pools started before the limit too: a thread's stack counts in RLIMIT_AS,
            # and a thread that cannot start is a C++ abort (std::bad_alloc), not the MemoryError tested here
            f"pyarrow.csv.read_csv({str(path)!r}, read_options=pyarrow.csv.ReadOptions(block_size=1 << 16))\n"
            "soft, hard = resource.getrlimit(resource.RLIMIT_AS)\n"
            "resource.setrlimit(resource.RLIMIT_AS, (int(open('/proc/self/status').read().split('VmSize:')[1].split()[0]) * 1024 + (40 << 20), hard))\n"
            f"sys.exit(main(['ingest', {str(path)!r}, '--out', {str(tmp_path / 'o.parquet')!r}, '--progress', 'none', '--jobs', '1']))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1"))
    assert proc.returncode == OUT_OF_MEMORY_EXIT, (proc.returncode, proc.stderr[-2000:])
    assert proc.stderr.count("error:") == 1 and "out of memory" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.csv"]


def test_too_wide_for_parquet_is_refused_with_the_way_out(tmp_path):
    m = ResponseMatrix(np.zeros((1, MAX_PARQUET_COLUMNS + 1)), ["a"], [str(j) for j in range(MAX_PARQUET_COLUMNS + 1)])
    with pytest.raises(ValueError, match="too many columns for a wide parquet table.*write CSV"):
        m.write(tmp_path / "w.parquet")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # tens of seconds (pytest --durations)
def test_ingest_of_a_table_too_wide_for_parquet_is_one_error_line(tmp_path, capsys):
    """3 models x 1,000,000 items aborted with std::bad_alloc (no error line) and left an empty
    temporary file: now the command refuses with the way out (CSV), exit 2, and nothing is left."""
    n_items = MAX_PARQUET_COLUMNS + 1
    table = tmp_path / "long.csv"
    table.write_text("model,item,score\n" + "".join(f"a,{j},1\n" for j in range(n_items)))
    rc = main(["ingest", str(table), "--out", str(tmp_path / "w.parquet"), "--progress", "none", "--jobs", "1"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("error:") == 1 and err.startswith("error: "), (rc, err)
    assert "too many columns for a wide parquet table" in err and "write CSV instead" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.csv"]
    assert main(["ingest", str(table), "--out", str(tmp_path / "w.csv"), "--progress", "none", "--jobs", "1"]) == 0
    assert ResponseMatrix.read(tmp_path / "w.csv").shape == (1, n_items)
