"""The numbers that matter, at the end of ``build`` and of a release: the validation of each folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from tinybench_builder import layout

__all__ = ["validation_table"]

_HEAD = ("benchmark", "scenario", "models", "random-k MAE", "score MAE", "score/random", "Spearman", "coverage")


def validation_table(folders: Mapping[str, str | os.PathLike]) -> str:
    """Per benchmark and scenario: the out-of-fold MAE of random-k and of the estimate, their
    ratio, the Spearman rank correlation and the 95% interval's coverage; then where each folder is.

    The numbers are those of the folder's ``validation.json`` (held-out training models: see the card).
    """
    rows = []
    for name, folder in folders.items():
        for r in layout.validation_rows(folder):
            rand, score = float(r.get("random", float("nan"))), float(r.get("score", float("nan")))
            rows.append((name, str(r.get("scenario", "")), str(r.get("models", "")), f"{rand:.4f}", f"{score:.4f}",
                         f"{score / rand:.2f}" if rand > 0 else "", f"{float(r.get('spearman', float('nan'))):.3f}",
                         f"{float(r.get('coverage', float('nan'))):.2f}"))
    if not rows:
        return ""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(_HEAD)]
    left = 2  # benchmark and scenario are text: left-aligned; numbers right-aligned

    def line(cells):
        return "  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = ["validation (out-of-fold, held-out training models; MAE of the full score):", line(_HEAD)]
    out += [line(r) for r in rows]
    out += [f"  {name}: {Path(folder)}/" for name, folder in folders.items()]
    return "\n".join(out)
