"""docs/API.md is what ``python scripts/api_docs.py`` writes from the docstrings of every public name."""

from __future__ import annotations

import importlib.util
import sys

import tinybench_builder
from helpers.builds import ROOT


def _api_docs():
    spec = importlib.util.spec_from_file_location("api_docs", ROOT / "scripts" / "api_docs.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["api_docs"] = module
    spec.loader.exec_module(module)
    return module


def test_api_md_is_current():
    api_docs = _api_docs()
    current = (ROOT / "docs" / "API.md").read_text(encoding="utf-8")
    assert current == api_docs.render(), f"docs/API.md is stale: run `{api_docs.COMMAND}` and commit it"


def test_api_md_covers_every_public_name_and_member():
    import inspect

    api_docs = _api_docs()
    text = (ROOT / "docs" / "API.md").read_text(encoding="utf-8")
    members = []
    for name in tinybench_builder.__all__:
        assert f"\n## `{name}`\n" in text, name
        obj = getattr(tinybench_builder, name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            members += [f"{name}.{member}" for member, _, _ in api_docs._members(obj)]
    # the methods and properties of the classes too, each with its docstring
    assert {"TinyEstimator.estimate", "TinyEstimator.load", "AdaptiveSession.next_items"} <= set(members)
    for member in members:
        assert f"\n### `{member}`\n" in text, member
    assert "(no docstring)" not in text


def test_a_changed_docstring_makes_it_stale(monkeypatch):
    api_docs = _api_docs()
    before = api_docs.render()
    monkeypatch.setattr(tinybench_builder.TinyEstimator.estimate, "__doc__", "Something else entirely.")
    after = api_docs.render()
    assert after != before and "Something else entirely." in after
    assert api_docs.main(["--check"]) == 1  # the file on disk no longer matches
