"""Card text that comes from data (spec fields, file names, column names, scenario names, model names, item ids)
cannot inject Markdown or raw HTML into the dataset card (issue 21): the Hub renders the card as
Markdown with HTML. Normal names look as they did."""

from __future__ import annotations

import html
import json
import re

import pandas as pd
import pytest

from tinybench_builder.cli.main import main
from tinybench_builder.dataset.markdown import code, fenced, text
from tinybench_builder.read.matrix import ResponseMatrix
from tinybench_builder.read.simulate import simulate_responses

markdown_it = pytest.importorskip("markdown_it")

N_ITEMS, N_MODELS, K = 40, 24, 10
PRETTY = "Tiny <img src=x onerror=alert(1)> *bold* [link](javascript:alert(1)) `tick` | pipe"
DESCRIPTION = ("# Not a heading\n\n<script>alert(1)</script>\n```\n<b>out of a fence</b>\n\n"
               "![track](http://evil.example/x.png) [click](http://evil.example) <http://evil.example> &lt; ~~s~~")
CITATION = "@misc{x, title={X}}\n```\n<script>alert(2)</script>\n# Heading\n~~~"
SCENARIO = "sc<b>1</b>|x`"
COLUMN = "col`<i>x</i>|y"
ITEM = "i<b>{}</b>*"
MODEL = "org/m<b>{}</b>_[x](y)|`"
RESPONSES = "r<b>x<i>`[y](z)|&lt;.parquet"


def _render(card: str) -> str:
    """The card's body as the Hub shows it: CommonMark with GFM tables and strikethrough, raw HTML on."""
    body = card.split("---\n", 2)[2]
    return markdown_it.MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).render(body)


def _tags(rendered: str) -> set[str]:
    return {m.lower() for m in re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)", rendered)}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    m, _ = simulate_responses(n_models=N_MODELS, n_items=N_ITEMS, n_dims=1, seed=4)
    items = [ITEM.format(j) for j in range(N_ITEMS)]
    m = ResponseMatrix(m.scores, [MODEL.format(i) for i in range(N_MODELS)], items)
    matrix = tmp / RESPONSES
    m.write(matrix)
    content = tmp / "c.parquet"
    pd.DataFrame({"item_id": items, COLUMN: [f"q{j}" for j in range(N_ITEMS)]}).to_parquet(content)
    spec = tmp / "spec.toml"
    spec.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in {
        "name": "tinyProbe", "pretty_name": PRETTY, "description": DESCRIPTION, "license": "mit",
        "citation": CITATION, "item_id_column": "item_id", "scenario": SCENARIO}.items()))
    outs = []
    for seed, prev in ((0, None), (1, tmp / "v1")):
        out = tmp / f"v{seed + 1}"
        argv = ["build", "--spec", str(spec), "--responses", str(matrix), "--content", f"test={content}",
                "--anchors", str(K), "--seed", str(seed), "--release-version", f"1.{seed}.0", "--out", str(out), "--quiet"]
        assert main(argv + (["--previous", str(prev)] if prev else [])) == 0
        outs.append(out)
    return outs[1]


def test_the_card_renders_no_html_or_markdown_from_data(hostile):
    card = (hostile / "README.md").read_text()
    rendered = _render(card)
    # only the elements the template itself makes
    assert _tags(rendered) <= {"h1", "h2", "h3", "p", "strong", "em", "code", "pre", "a", "img", "table", "thead",
                               "tbody", "tr", "th", "td", "ul", "li", "br"}, _tags(rendered)
    assert "<script" not in rendered and "<b>" not in rendered and "<i>" not in rendered and "<del>" not in rendered
    assert re.findall(r'<img [^>]*src="([^"]*)"', rendered) == ["validation.png"]
    assert set(re.findall(r'<a href="([^"]*)"', rendered)) == {"https://arxiv.org/abs/2402.14992"}
    headings = re.findall(r"<h[1-6]>(.*?)</h[1-6]>", rendered)
    assert html.unescape(re.sub(r"<[^>]+>", "", headings[0])) == PRETTY
    assert not any(h.startswith("Not a heading") or h == "Heading" for h in headings), headings
    # the hostile text is shown as text (escaped), not dropped
    for shown in ("&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;img src=x onerror=alert(1)&gt;",
                  "&lt;script&gt;alert(2)&lt;/script&gt;", "&amp;lt;", "# Not a heading"):
        assert shown in rendered, shown
    # the citation stays in its code block, whole
    blocks = re.findall(r'<pre><code class="language-bibtex">(.*?)</code></pre>', rendered, re.S)
    assert html.unescape(blocks[-1]).strip() == CITATION


def _cells(row: str) -> list[str]:
    return [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]


def test_table_cells_and_code_spans_hold_their_value(hostile):
    rendered = _render((hostile / "README.md").read_text())
    tables = [[_cells(r) for r in re.findall(r"<tr>(.*?)</tr>", t, re.S)]
              for t in re.findall(r"<table>(.*?)</table>", rendered, re.S)]
    validation = [t for t in tables if "random-k" in t[0]]
    assert validation and all(row[0] == SCENARIO for t in validation for row in t[1:]), validation
    changes = [t for t in tables if t[0][:2] == ["scenario", "metric"]]  # the changelog's
    assert changes and all(row[0] == SCENARIO for row in changes[0][1:])
    spans = {html.unescape(s) for s in re.findall(r"<code>(.*?)</code>", rendered, re.S)}
    assert {COLUMN, RESPONSES} <= spans
    assert any(ITEM.format(j) in spans for j in range(N_ITEMS))  # the changelog's anchors in/out


def test_the_yaml_header_keeps_the_values_exactly(hostile):
    from huggingface_hub import DatasetCard

    assert DatasetCard.load(hostile / "README.md").data.pretty_name == PRETTY


def test_normal_names_look_as_before():
    for name in ("tinyWMDP-bio", "tinyWMDP_bio", "ARC-Challenge", "wmt_14", "v1.0.0", "weighted_alpaca_eval_gpt4_turbo",
                 "alpaca_eval_2.parquet", "HELM Lite (5 scenarios)", "63", "0.0123", "A, B and C."):
        assert text(name) == name
    assert code("ARC-Challenge") == "`ARC-Challenge`" and code("a b") == "`a b`"
    assert fenced("@article{x,\n  title={T}\n}", "bibtex") == "```bibtex\n@article{x,\n  title={T}\n}\n```"


def test_code_spans_and_fences_outlast_backticks():
    assert code("a`b") == "``a`b``" and code("`x") == "`` `x ``" and code("a``b") == "```a``b```"
    assert code("a|b", cell=True) == "`a\\|b`" and code("a\nb") == "`a b`"
    assert fenced("x\n```\ny", "bibtex").startswith("````bibtex\n") and fenced("x\n```\ny", "bibtex").endswith("\n````")
    assert text("<b>") == "\\<b\\>" and text("a\n\n# b") == "a # b"
    assert text("a\n\n# b\n- c\n\n1. d", paragraphs=True) == "a\n\n\\# b - c\n\n1\\. d"


HOSTILE_TEXT = ["1) x", "1. x", "+ x", "- x", "===", "---", "# h", "###### h", "> q", "*a*", "_a_", "__a__", "a_b_c",
                "a\\", "\\*", "&amp;", "&#60;", "<!-- x -->", "[a]: http://x", "<http://x>", "![a](b)", "[a](b)",
                "~~~", "```", "~~a~~", "| a | b |", "<div>x</div>", "a  \nb", "x\r\n\r\n# y", "`a`", "    code",
                "\u2028# z", "a\x00b"]


@pytest.mark.parametrize("value", HOSTILE_TEXT)
def test_text_and_code_render_as_the_value_itself(value):
    md = markdown_it.MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    shown = " ".join(re.sub(r"[\x00-\x1f\x7f\u2028\u2029]", " ", value).split())
    got = md.render(f"x {text(value)}\n").strip()
    assert got.startswith("<p>") and got.endswith("</p>") and _tags(got) == {"p"}, got
    assert " ".join(html.unescape(got[3:-4]).split()) == f"x {shown}"
    got = md.render(f"{text(value)}\n").strip()  # at the start of a line
    assert _tags(got) <= {"p"} and " ".join(html.unescape(re.sub(r"</?p>", "", got)).split()) == shown, got
    got = md.render(f"| a |\n|---|\n| {code(value, cell=True)} |\n").strip()
    in_code = re.sub(r"[\x00-\x1f\x7f\u2028\u2029]+", " ", value)
    assert _cells(re.findall(r"<tr>(.*?)</tr>", got, re.S)[1]) == [in_code], got
