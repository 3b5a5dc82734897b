"""Measured tables into ``docs/BENCHMARKS.md``, each under one provenance line, written by the scripts.

Every benchmark script that reports a table takes ``--write-docs``: the table (Markdown) replaces
its own section of ``docs/BENCHMARKS.md``, the text between ``<!-- table:ID -->`` and
``<!-- /table:ID -->``, and the line above the table says how it was measured::

    *Measured by `python -m benchmarks.accuracy --seeds 5` at commit 1a2b3c4 on 2026-12-02
    (2 cores, load 0.4 -> 1.9, 1 BLAS thread, numpy 2.4.6).*

Prose around the sections (what a table means, the goals it meets or misses) is written by hand
and never touched. A section that is not in the file yet is appended at its end under a heading.
``python -m benchmarks.docs_tables`` lists the sections and their provenance.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "BENCHMARKS.md"

__all__ = ["Conditions", "add_docs_arg", "provenance", "sections", "write_section", "write_sections"]


def add_docs_arg(parser: argparse.ArgumentParser) -> None:
    """The shared ``--write-docs`` option of the benchmark scripts."""
    parser.add_argument("--write-docs", action="store_true",
                        help="also write the table(s) into docs/BENCHMARKS.md under a provenance line "
                             "(command, commit, date, machine conditions)")


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:  # pragma: no cover - not on every platform
        return float("nan")


class Conditions:
    """The machine's state over a measurement: cores, load at the start and at the end, BLAS threads."""

    def __init__(self) -> None:
        self.load_start = _load()
        self.started = _dt.datetime.now(_dt.timezone.utc)

    def describe(self) -> str:
        import numpy as np

        try:
            from threadpoolctl import threadpool_info
            blas = max((int(p.get("num_threads") or 1) for p in threadpool_info() if p.get("user_api") == "blas"),
                       default=1)
        except ImportError:  # pragma: no cover - comes with scikit-learn
            blas = 1
        threads = "thread" if blas == 1 else "threads"
        return (f"{os.cpu_count()} cores, load {self.load_start:.1f} -> {_load():.1f}, {blas} BLAS {threads}, "
                f"numpy {np.__version__}")


def _commit() -> str:
    # docs/BENCHMARKS.md itself is left out of the check: an earlier table written into it by
    # another script is not a change of the code that measured this one
    docs = DOCS.resolve()
    exclude = [f":(exclude){docs.relative_to(ROOT.resolve()).as_posix()}"] if docs.is_relative_to(ROOT.resolve()) else []
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", *exclude],
                               cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{sha} (with uncommitted changes)" if dirty else sha


def provenance(conditions: Conditions, argv: list[str] | None = None, module: str | None = None) -> str:
    """The one line above a table: the command that wrote it, the commit, the date, the conditions."""
    argv = sys.argv[1:] if argv is None else argv
    argv = [a for a in argv if a != "--write-docs"]
    module = module or Path(sys.argv[0]).stem
    command = " ".join(["python -m", f"benchmarks.{module}", *map(shlex.quote, argv)])
    date = conditions.started.strftime("%Y-%m-%d")
    return f"*Measured by `{command}` at commit {_commit()} on {date} ({conditions.describe()}).*"


def _marks(section: str) -> tuple[str, str]:
    if not re.fullmatch(r"[a-z0-9_.:-]+", section):
        raise ValueError(f"section id {section!r}: use lowercase letters, digits and _.:-")
    return f"<!-- table:{section} -->", f"<!-- /table:{section} -->"


def write_section(section: str, markdown: str, conditions: Conditions, *, title: str | None = None,
                  argv: list[str] | None = None, module: str | None = None, path: Path | None = None) -> Path:
    """Replace section ``section`` of ``docs/BENCHMARKS.md`` with ``markdown`` under its provenance line."""
    path = DOCS if path is None else path  # read at call time: tests point DOCS at a scratch file
    start, end = _marks(section)
    body = f"{start}\n{provenance(conditions, argv, module)}\n\n{markdown.strip()}\n{end}"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        text = head + body + tail
    else:
        text = text.rstrip("\n") + f"\n\n## {title or section}\n\n{body}\n"
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def write_sections(tables: list[tuple[str, str, str]], conditions: Conditions, *, argv: list[str] | None,
                   module: str) -> None:
    """Write several ``(section id, title, markdown)`` tables of one run, each under the run's provenance
    line, and say on stderr where they went."""
    for section, title, markdown in tables:
        path = write_section(section, markdown, conditions, title=title, argv=argv, module=module)
        print(f"wrote table {section} into {path}", file=sys.stderr)


def sections(path: Path | None = None) -> dict[str, str]:
    """Section id -> its provenance line, for every table of the file."""
    path = DOCS if path is None else path
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    found = {}
    for m in re.finditer(r"<!-- table:([a-z0-9_.:-]+) -->\n(.*)\n", text):
        found[m.group(1)] = m.group(2)
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.docs_tables",
                                 description="List the tables of docs/BENCHMARKS.md and their provenance lines.")
    ap.parse_args(argv)
    for section, line in sections().items():
        print(f"{section}: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
