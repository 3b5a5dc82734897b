#!/usr/bin/env python
"""Write examples/wmdp_bio/ (the real example shipped with the repository) from ../shared/data.

    python scripts/make_example_data.py [--shared ../shared/data]

The matrix becomes a long table (model, item int16, score int8) and both files are written with
zstd: 28.5 KB and 148 KB instead of 695 KB and 260 KB. examples/wmdp_bio/README.md states the
source and the licence; tests/e2e/test_fresh_clone.py checks the values against ../shared/data.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shared", default=str(ROOT.parent / "shared" / "data"), help="the development data folder")
    args = p.parse_args(argv)
    shared = Path(args.shared)
    wide = pd.read_parquet(shared / "responses" / "wmdp_bio.parquet")
    if not np.isin(wide.to_numpy(), (0.0, 1.0)).all():
        print("error: the WMDP-bio matrix is not 0/1 (cannot store it as int8)", file=sys.stderr)
        return 1
    long = wide.stack().rename("score").reset_index()
    long.columns = ["model", "item", "score"]
    long["score"] = long["score"].astype("int8")
    long["item"] = long["item"].astype(int).astype("int16")
    out = ROOT / "examples" / "wmdp_bio"
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pandas(long, preserve_index=False), out / "responses.parquet",
                   compression="zstd", compression_level=19, use_dictionary=["model"])
    content = pd.read_parquet(shared / "content" / "wmdp_bio.parquet")
    pq.write_table(pa.Table.from_pandas(content, preserve_index=False), out / "content.parquet",
                   compression="zstd", compression_level=19)
    for f in sorted(out.glob("*.parquet")):
        print(f"{f.relative_to(ROOT)}: {f.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
