"""Text from data, made safe for the dataset card (Markdown with raw HTML, as the Hub renders it).

A card shows values that come from users and their data: a spec's ``pretty_name`` and
``description``, file names, content column names, scenario names, item ids, a previous
release's manifest. Pasted as they are, ``<script>``, ``[text](javascript:...)``, ``# heading``,
a ``|`` in a table cell or a backtick that ends a code span would become part of the card. The
card's template therefore escapes every value it shows unless it is :class:`Markdown` (text this
project wrote as Markdown); :func:`text`, :func:`code` and :func:`fenced` make such values:

* :func:`text`: Markdown and HTML punctuation backslash-escaped (CommonMark renders ``\\<`` as ``<``),
  line breaks and control characters as spaces, so a value stays inline text;
* :func:`code`: an inline code span whose backtick fence is longer than any run of backticks
  in the value (CommonMark's rule), ``|`` escaped inside table cells;
* :func:`fenced`: a fenced code block whose fence is longer than any run of backticks in it.

Values without special characters come out unchanged (``tinyWMDP_bio``, ``ARC-Challenge``,
``1.0.0``), so normal cards look exactly as before.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

__all__ = ["Markdown", "text", "code", "fenced", "python_string", "shell_word", "finalize"]


class Markdown(str):
    """Text that is Markdown already (written by this project, or escaped): pasted as it is."""


#: characters that start Markdown or HTML constructs anywhere in a line
_INLINE = re.compile(r"([\\`*\[\]<>&|~])")
#: _ starts emphasis only at a word's edge: escaped there, kept inside words (tinyWMDP_bio)
_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
#: a value at the start of a line could open a block: a heading, a list item, a rule or setext underline
#: (quotes, tables and fences start with characters escaped anywhere)
_BLOCK_START = re.compile(r"^()(#|[-+=](?=[\s=-]|$)|\d{1,9}[.)](?=\s|$))")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")


def _inline(value: Any) -> str:
    """One line: control characters and line breaks become single spaces."""
    return _CONTROL.sub(" ", str(value))


def text(value: Any, paragraphs: bool = False) -> Markdown:
    """``value`` as plain text in a Markdown line (module docstring).

    ``paragraphs``: keep blank-line breaks between paragraphs (a spec's description), each
    paragraph escaped as one line.
    """
    if isinstance(value, Markdown):
        return value
    if paragraphs:
        parts = [p for p in re.split(r"\n[ \t]*\n", str(value).replace("\r\n", "\n")) if p.strip()]
        return Markdown("\n\n".join(text(" ".join(p.split())) for p in parts))
    out = _INLINE.sub(r"\\\1", _inline(value).strip())  # leading spaces at a line start: a code block
    out = _UNDERSCORE.sub(r"\\_", out)
    m = _BLOCK_START.match(out)
    if m:  # a backslash before the marker's punctuation (a backslash before a digit is shown as is)
        at = m.end() - 1 if m.group(2)[0].isdigit() else m.end(1)
        out = f"{out[:at]}\\{out[at:]}"
    return Markdown(out)


def code(value: Any, cell: bool = False) -> Markdown:
    """``value`` as an inline code span; ``cell``: inside a table row (a ``|`` would end the cell)."""
    body = _inline(value)
    if not body:
        return Markdown('`""`')
    if cell:
        body = body.replace("|", "\\|")  # GFM: an escaped pipe inside a table cell, also in code
    fence = "`" * (max((len(r) for r in re.findall(r"`+", body)), default=0) + 1)
    if body.startswith("`") or body.endswith("`") or (body.startswith(" ") and body.endswith(" ") and body.strip()):
        body = f" {body} "  # CommonMark strips one space at each end
    return Markdown(f"{fence}{body}{fence}")


def fenced(value: Any, info: str = "") -> Markdown:
    """``value`` as a fenced code block (with the ``info`` string, e.g. ``bibtex``); the fence is
    longer than any run of backticks in it, so no line of the value can close the block."""
    body = str(value).replace("\r\n", "\n")
    fence = "`" * max(3, max((len(r) for r in re.findall(r"`+", body)), default=0) + 1)
    return Markdown(f"{fence}{info}\n{body}\n{fence}")


def python_string(value: Any) -> Markdown:
    """``value`` as a Python string literal (double quotes) for the card's example code: no value
    can end the string (and inject code) or the code block (a backtick is written ``\\u0060``)."""
    return Markdown(json.dumps(str(value)).replace("`", "\\u0060"))  # a JSON string is a Python literal


def shell_word(value: Any) -> Markdown:
    """``value`` as one shell word for the card's example commands (quoted only when it needs it)."""
    return Markdown(shlex.quote(_inline(value)))


def finalize(value: Any) -> Any:
    """The template's ``finalize``: every value it shows is escaped as :func:`text` unless it is
    :class:`Markdown` already (numbers pass: they cannot hold Markdown)."""
    if isinstance(value, Markdown) or isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return text(value)
