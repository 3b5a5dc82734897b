"""Specs are shared like datasets: a spec file is untrusted input (issue 21).

A spec may not write outside the output folder (config, split and harness task names are plain
names), may not run code through its prompt template (rendered in jinja2's sandbox; includes,
imports and attribute escapes refused as spec errors), and may not inject markdown or HTML into
the card.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tinybench_builder.cli.main import main
from tinybench_builder.read.simulate import simulate_responses
from tinybench_builder.registry.specs import SpecError, spec_from_mapping

N_ITEMS, N_MODELS, K = 40, 24, 10
BASE = {"name": "tinyProbe", "license": "mit", "citation": "@misc{x, title={X}}", "item_id_column": "item_id"}


def _toml(data: dict) -> str:
    """A spec file's text (values as TOML basic strings: JSON strings are valid TOML)."""
    lines, tables = [], []
    for key, value in data.items():
        if isinstance(value, dict):
            tables.append(f"[{key}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in value.items()))
        else:
            lines.append(f"{key} = {json.dumps(value)}\n")
    return "".join(lines) + "\n".join(tables)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("probe")
    m, _ = simulate_responses(n_models=N_MODELS, n_items=N_ITEMS, n_dims=1, seed=4)
    matrix = tmp / "m.parquet"
    m.write(matrix)
    content = tmp / "c.parquet"
    pd.DataFrame({"item_id": [str(j) for j in m.items], "question": [f"q{j}" for j in range(N_ITEMS)],
                  "answer": [j % 4 for j in range(N_ITEMS)]}).to_parquet(content)
    return matrix, content


def _build(tmp_path, inputs, spec: dict, out="work/out/o"):
    matrix, content = inputs
    path = tmp_path / "spec.toml"
    path.write_text(_toml(spec))
    split = spec.get("split", "test")
    return main(["build", "--spec", str(path), "--responses", str(matrix), "--content", f"{split}={content}",
                 "--anchors", str(K), "--out", str(tmp_path / out), "--quiet"])


def _files(root) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


HARNESS = {"output_type": "multiple_choice", "doc_to_choice": ["A", "B", "C", "D"], "doc_to_target": "answer"}


@pytest.mark.parametrize("key,value", [
    ("config", "../../X"), ("config", "/tmp/abs"), ("config", "a/b"), ("config", ".."), ("config", "x\n"),
    ("split", "../../x"), ("split", "a\\b"), ("split", "te\x00st"), ("split", ".hidden"),
    ("harness.task", "tinyProbe\n"), ("harness.task", "../evil"), ("harness.task", "a..b"),
])
def test_spec_names_are_plain_names(key, value, tmp_path, inputs, capsys):
    spec = {**BASE, "prompt": "{{ question }}", "harness": dict(HARNESS)}
    if key.startswith("harness."):
        spec["harness"][key.split(".", 1)[1]] = value
    else:
        spec[key] = value
    with pytest.raises(SpecError, match="plain name"):
        spec_from_mapping(spec, "spec.toml")
    before = _files(tmp_path)
    assert _build(tmp_path, inputs, spec) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "plain name" in err, err
    assert _files(tmp_path) - before == {"spec.toml"}  # nothing written, inside or outside --out


def test_a_plain_spec_still_builds(tmp_path, inputs):
    spec = {**BASE, "config": "my-config.v2", "split": "test_2", "prompt": "Q: {{ question }}",
            "harness": {**HARNESS, "task": "tiny_probe-1.0"}}
    assert _build(tmp_path, inputs, spec, out="o") == 0
    assert (tmp_path / "o" / "my-config.v2" / "test_2-00000-of-00001.parquet").is_file()
    assert (tmp_path / "o" / "lm_eval" / "tiny_probe-1.0.yaml").is_file()


def test_the_last_check_before_writing_keeps_files_inside_the_folder(tmp_path):
    """Whatever a plan says (a spec, a tampered manifest), build writes only inside its folder."""
    from tinybench_builder.errors import BuildError
    from tinybench_builder.layout import child_path

    assert child_path(tmp_path, "a/b-00000-of-00001.parquet") == tmp_path / "a" / "b-00000-of-00001.parquet"
    for rel in ("../x", "/abs", "a/../../x", "a//b", "a\\b", "x\n.yaml", "", ".", "a/./b"):
        with pytest.raises(BuildError, match="not a plain relative path"):
            child_path(tmp_path, rel)


def test_a_release_refuses_such_a_spec_when_it_loads_the_config(tmp_path, inputs, capsys):
    from tinybench_builder.cli.main import release_main
    from helpers.folders import write_config

    matrix, content = inputs
    (tmp_path / "spec.toml").write_text(_toml({**BASE, "split": "../../x", "prompt": "{{ question }}"}))
    cfg = write_config(tmp_path, f'[release]\norg = "tinyOrg"\n\n[[benchmark]]\nspec = "spec.toml"\n'
                                 f'responses = "{matrix}"\ncontent = {{ test = "{content}" }}\n')
    before = _files(tmp_path)
    assert release_main(["--config", str(cfg), "--release-version", "1.0.0", "--out", str(tmp_path / "rel"), "--quiet"]) == 2
    assert "plain name" in capsys.readouterr().err
    assert _files(tmp_path) == before


# ------------------------------------------------------------------ prompts run in a sandbox
ESCAPES = [
    "{{ cycler.__init__.__globals__.os.system('touch PWNED') }}",
    "{{ joiner.__init__.__globals__['os'].system('touch PWNED') }}",
    "{{ question.__class__.__mro__[1].__subclasses__() }}",
    "{{ question|attr('__class__') }}",
    "{{ question['__class__'] }}",
    "{% include 'x.txt' %}",
    "{% import 'x.txt' as x %}{{ x }}",
    "{% from 'x.txt' import y %}{{ y }}",
    "{% extends 'x.txt' %}",
]


@pytest.mark.parametrize("prompt", ESCAPES)
def test_a_prompt_cannot_escape_its_row(prompt, tmp_path, inputs, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.txt").write_text("{% macro y() %}included{% endmacro %}included")
    with pytest.raises(SpecError, match="prompt"):
        spec_from_mapping({**BASE, "prompt": prompt}, "spec.toml")
    assert _build(tmp_path, inputs, {**BASE, "prompt": prompt}) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: spec.toml") or "spec.toml" in err, err
    assert "unexpected" not in err and err.count("\n") == 1, err
    assert not (tmp_path / "PWNED").exists() and not (tmp_path / "work").exists()


@pytest.mark.parametrize("key", ["doc_to_text", "doc_to_target", "doc_to_choice"])
def test_the_harness_templates_are_checked_too(key):
    """lm-eval renders them (outside our sandbox) on the machine of whoever runs the task."""
    harness = {**HARNESS, key: "{{ cycler.__init__.__globals__.os.system('id') }}"}
    with pytest.raises(SpecError, match=r"\[harness\].*" + key):
        spec_from_mapping({**BASE, "prompt": "{{ question }}", "harness": harness}, "spec.toml")


def test_escapes_built_at_render_time_are_stopped_by_the_sandbox():
    """What a static check cannot see (names assembled while rendering) the sandbox refuses."""
    from tinybench_builder.registry.prompts import render_template

    with pytest.raises(ValueError, match="unsafe|sandbox"):
        render_template("{{ question[('_' * 2) ~ 'class' ~ ('_' * 2)] }}", {"question": "q"})
    with pytest.raises(ValueError, match="unsafe|sandbox"):
        render_template("{{ (question * 1000000000)|length }}", {"question": "q"})
    with pytest.raises(ValueError, match="unsafe|sandbox"):
        render_template("{{ 9 ** 99999999 }}", {"question": "q"})
    with pytest.raises(ValueError, match="unsafe|sandbox"):
        render_template("{{ ((((10 ** 64) ** 64) ** 64) ** 64) ** 64 }}", {"question": "q"})
    with pytest.raises(ValueError, match="unsafe|sandbox|immutable"):
        render_template("{{ choices.append('x') }}{{ choices }}", {"choices": ["a"]})


def test_ordinary_prompts_render_as_before():
    from tinybench_builder.registry.prompts import render_template

    row = {"question": " Why? ", "choices": np.array(["a", "b"]), "n": 3}
    assert render_template("{{ question.strip() }}\n{% for c in choices %}{{ loop.index }}. {{ c }}\n{% endfor %}"
                           "{{ choices|join(', ') }} {{ n * 2 }} {{ '-' * 3 }} {{ choices[0]|upper }}\n", row) == (
        "Why?\n1. a\n2. b\na, b 6 --- A\n")
