"""The fenced code blocks of a Markdown file, by section (the README's snippets are run as written)."""

from __future__ import annotations

import shlex
from pathlib import Path

from helpers.builds import ROOT

README = ROOT / "README.md"

__all__ = ["README", "block", "blocks", "shell_commands"]


def blocks(path: Path = README) -> list[tuple[str, str, str]]:
    """(section heading, language, code) of every fenced block of the file."""
    out, heading = [], ""
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#") and not line.startswith("#!"):
            heading = line.lstrip("#").strip()
        if line.startswith("```"):
            lang, body = line[3:].strip(), []
            i += 1
            while not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            out.append((heading, lang, "\n".join(body)))
        i += 1
    return out


def block(heading: str, lang: str, contains: str = "", path: Path = README) -> str:
    """The first ``lang`` block of section ``heading`` that contains ``contains``."""
    found = [code for h, lng, code in blocks(path) if h == heading and lng == lang and contains in code]
    assert found, f"no {lang} block in section {heading!r} of {path.name}"
    return found[0]


def shell_commands(code: str) -> list[list[str]]:
    """Every command line of a bash block (continuations joined, comments removed), as argv lists;
    ``path=$(cmd ...)`` gives ``cmd ...``."""
    out, pending = [], ""
    for line in code.splitlines():
        line = line.split("  #", 1)[0].rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = (pending + line).strip()
        pending = ""
        if not line or line.startswith("#"):
            continue
        if line.startswith("path=$(") and line.endswith(")"):
            line = line[len("path=$("):-1]
        out.append(shlex.split(line))
    return out
