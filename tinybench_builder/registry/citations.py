"""BibTeX of the tiny benchmarks' sources (and of tinyBenchmarks itself), for the cards.

The entries are data: ``registered/citations.bib``, shipped with the spec files. A spec's
``citation`` is BibTeX text or a list of this file's keys (:mod:`tinybench_builder.registry.specs`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

__all__ = ["BIBLIOGRAPHY", "bibliography", "POLO2024_BIBTEX"]

#: the shipped BibTeX entries (one blank line between entries)
BIBLIOGRAPHY = Path(__file__).with_name("registered") / "citations.bib"
_KEY = re.compile(r"@\w+\{([^,\s]+),")


def _entries(text: str, where: str) -> dict[str, str]:
    """Key -> entry text (from its ``@`` to its closing brace) of a BibTeX file we write ourselves."""
    out: dict[str, str] = {}
    start = text.find("@")
    while start >= 0:
        match = _KEY.match(text, start)
        if match is None:
            raise ValueError(f"{where}: an entry without a key at character {start}")
        depth, end = 0, start
        for end in range(text.index("{", start), len(text)):  # the entry ends where its braces balance
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                break
        else:
            raise ValueError(f"{where}: the entry {match.group(1)!r} has unbalanced braces")
        if match.group(1) in out:
            raise ValueError(f"{where}: two entries with the key {match.group(1)!r}")
        out[match.group(1)] = text[start:end + 1]
        start = text.find("@", end + 1)
    return out


@lru_cache(maxsize=1)
def bibliography() -> dict[str, str]:
    """Key -> BibTeX entry of :data:`BIBLIOGRAPHY`, in file order."""
    return _entries(BIBLIOGRAPHY.read_text(encoding="utf-8"), str(BIBLIOGRAPHY))


POLO2024_BIBTEX = bibliography()["polo2024tinybenchmarks"]
