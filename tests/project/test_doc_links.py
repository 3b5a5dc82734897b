"""Every relative link of the documentation resolves: README.md, CONTRIBUTING.md, CHANGELOG.md and
docs/*.md. A link's file (or folder) must exist in the repository, and its ``#anchor`` must be a
heading of the target file (GitHub's anchor of it) or an explicit ``<a id=...>``. Links inside code
blocks and code spans are not links (the files are parsed as CommonMark with markdown-it-py, as GitHub
renders them); web addresses are not checked (no network here)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from urllib.parse import unquote

from helpers.builds import ROOT

DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]

EXPLICIT_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")
_MD = MarkdownIt("commonmark").enable("table")


def _tokens(path: Path):
    return _MD.parse(path.read_text(encoding="utf-8"))


def github_anchor(text: str) -> str:
    """The anchor GitHub gives a heading of rendered text ``text``: lowercased, punctuation other than
    ``-`` and ``_`` dropped, spaces as ``-``."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor of a Markdown file: its headings (a repeated one gets -1, -2, ...) and explicit
    ``<a id=...>`` ones."""
    found: set[str] = set(EXPLICIT_ANCHOR.findall(path.read_text(encoding="utf-8")))
    seen: dict[str, int] = {}
    tokens = _tokens(path)
    for i, tok in enumerate(tokens):
        if tok.type != "heading_open":
            continue
        text = "".join(c.content for c in tokens[i + 1].children or [] if c.type in ("text", "code_inline"))
        base = github_anchor(text)
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def _links(path: Path) -> list[tuple[int, str]]:
    """(line, target) of every link and image of the file (code is not parsed for links)."""
    out = []
    for tok in _tokens(path):
        if tok.type != "inline":
            continue
        for child in tok.children or []:
            target = child.attrGet("href") if child.type == "link_open" else \
                child.attrGet("src") if child.type == "image" else None
            if target is not None:
                out.append(((tok.map or [0])[0] + 1, str(target)))
    return out


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """``FILE:LINE: target (why)`` for every relative link of ``path`` that does not resolve."""
    problems = []
    for lineno, target in _links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        dest = path if not file_part else (path.parent / unquote(file_part)).resolve()
        where = f"{path.relative_to(root)}:{lineno}: {target}"
        if root.resolve() not in dest.parents and dest != root.resolve():
            problems.append(f"{where} (outside the repository)")
        elif not dest.exists():
            problems.append(f"{where} (no such file)")
        elif anchor and (dest.suffix != ".md" or unquote(anchor) not in anchors(dest)):
            problems.append(f"{where} (no such anchor in {dest.name})")
    return problems


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path):
    assert path.is_file()
    assert broken_links(path) == []


def test_the_checker_finds_broken_links_and_anchors(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "B.md").write_text("# The `b` guide: part 1\n\n## Same\n\n## Same\n\n<a id=\"here\"></a>\n")
    page = tmp_path / "A.md"
    page.write_text("# Top\n\n"
                    "[ok](docs/B.md) [ok](docs/B.md#the-b-guide-part-1) [ok](docs/B.md#same-1) [ok](docs/B.md#here)\n"
                    "[ok](#top) [web](https://example.org/x#y) `[not a link](nowhere.md)`\n"
                    "```\n[in a code block](nowhere.md)\n```\n"
                    "[gone](docs/C.md) [bad anchor](docs/B.md#nope) [bad](#nope) [out](../outside.md)\n"
                    "[a reference][ref]\n\n[ref]: docs/gone.md\n")
    (tmp_path.parent / "outside.md").write_text("# x\n")
    problems = broken_links(page, tmp_path)
    assert [p.split(": ", 1)[1] for p in problems] == [
        "docs/C.md (no such file)", "docs/B.md#nope (no such anchor in B.md)", "#nope (no such anchor in A.md)",
        "../outside.md (outside the repository)", "docs/gone.md (no such file)"], problems
