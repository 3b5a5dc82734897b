"""docs/API.md from the public API's docstrings: every name of ``tinybench_builder.__all__``.

    python scripts/api_docs.py           # rewrite docs/API.md
    python scripts/api_docs.py --check   # exit 1 if docs/API.md is not what this script writes

For each public name: where it is defined (a link to the source file), its signature, and its
docstring. A docstring's first paragraph is shown as prose; the rest (numpydoc sections,
examples) as it is written, in a text block, so that nothing of it is reformatted. A class also
lists its public methods and properties (those the package defines, not ones inherited from
Python's built-in types). Only the standard library's ``inspect`` is used: the output depends on
the docstrings and signatures alone, so ``tests/project/test_api_docs.py`` can regenerate it and compare.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "API.md"
COMMAND = "python scripts/api_docs.py"

__all__ = ["COMMAND", "OUT", "render"]

HEADER = f"""# API reference

The public API of `tinybench_builder`: every name of `tinybench_builder.__all__`, importable as
`from tinybench_builder import NAME` (each is loaded on first use, so `import tinybench_builder` stays
cheap). This file is generated from the docstrings by `{COMMAND}`; do not edit it by hand
(`tests/project/test_api_docs.py` fails when it is stale). How the pieces fit together:
[CONCEPTS.md](CONCEPTS.md); the command line: `python -m tinybench_builder --help`.

`estimator.py` and `adaptive.py` are standalone (numpy and scipy only) and are shipped inside every
tiny dataset folder, so `TinyEstimator` and `AdaptiveSession` can also be imported from a
downloaded folder without this package (`from estimator import TinyEstimator`).
"""


def _inline(text: str) -> str:
    """Sphinx roles and double backquotes as Markdown code spans."""
    text = re.sub(r":(?:class|func|meth|mod|data|attr|exc|obj):`~?([^`]+)`", r"`\1`", text)
    return text.replace("``", "`")


def _doc(obj: Any) -> str:
    """The docstring as Markdown: the first paragraph as prose, the rest verbatim in a text block."""
    doc = inspect.getdoc(obj) or ""
    if not doc.strip():
        return "*(no docstring)*"
    first, _, rest = doc.strip().partition("\n\n")
    out = _inline(" ".join(line.strip() for line in first.splitlines()))
    if rest.strip():
        out += "\n\n```text\n" + rest.strip("\n") + "\n```"
    return out


class _Annotation(str):
    """An annotation kept as the source wrote it (the package uses postponed annotations: strings)."""

    def __repr__(self) -> str:
        return str(self)


def _signature(name: str, obj: Any, drop_first: bool = False) -> str | None:
    """``name(params) -> return``, one parameter a line when it is long."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):  # built-in bases (exceptions) have none
        return None
    params = list(sig.parameters.values())[1 if drop_first else 0:]
    params = [p.replace(annotation=_Annotation(p.annotation)) if isinstance(p.annotation, str) else p for p in params]
    ret = sig.return_annotation
    sig = sig.replace(parameters=params,
                      return_annotation=_Annotation(ret) if isinstance(ret, str) else ret)
    text = f"{name}{sig}"
    if len(text) <= 100 or len(params) < 2:
        return text
    parts, star = [], False  # one parameter a line, with the markers str(Signature) would put in
    for i, param in enumerate(params):
        if param.kind is param.KEYWORD_ONLY and not star:
            parts.append("*")
        star = star or param.kind in (param.KEYWORD_ONLY, param.VAR_POSITIONAL)
        parts.append(str(param))
        if param.kind is param.POSITIONAL_ONLY and (i + 1 == len(params) or params[i + 1].kind is not param.POSITIONAL_ONLY):
            parts.append("/")
    tail = "" if sig.return_annotation is inspect.Signature.empty else f" -> {inspect.formatannotation(sig.return_annotation)}"
    return f"{name}(\n" + "".join(f"    {part},\n" for part in parts) + f"){tail}"


def _source_link(module: str) -> str:
    path = Path(*module.split("."))
    rel = path.with_suffix(".py") if (ROOT / path.with_suffix(".py")).is_file() else path / "__init__.py"
    return f"[`{module}`](../{rel.as_posix()})"


def _members(cls: type) -> list[tuple[str, str, Any]]:
    """(name, kind, object) of the public methods and properties the package's classes define."""
    own = [c for c in cls.__mro__ if c.__module__.startswith("tinybench_builder")]
    out = []
    for name in sorted({n for c in own for n in vars(c)}):
        if name.startswith("_"):
            continue
        raw = next(vars(c)[name] for c in own if name in vars(c))
        if isinstance(raw, property):
            out.append((name, "property", raw))
        elif isinstance(raw, classmethod):
            out.append((name, "classmethod", getattr(cls, name)))
        elif isinstance(raw, staticmethod):
            out.append((name, "staticmethod", getattr(cls, name)))
        elif inspect.isfunction(raw):
            out.append((name, "method", raw))
    return out


def _section(name: str, obj: Any) -> list[str]:
    lines = [f"## `{name}`", ""]
    module = getattr(obj, "__module__", None)
    if inspect.isclass(obj) or inspect.isfunction(obj):
        kind = ("exception" if issubclass(obj, BaseException) else "class") if inspect.isclass(obj) else "function"
        lines += [f"*{kind}*, defined in {_source_link(module)}", ""]
        sig = _signature(name, obj)
        if sig:
            lines += ["```python", sig, "```", ""]
        if inspect.isclass(obj) and issubclass(obj, BaseException):
            bases = ", ".join(f"`{b.__name__}`" for b in obj.__bases__)
            lines += [f"Derives from {bases}; exit status {getattr(obj, 'exit_code', '?')} on the command line.", ""]
        lines += [_doc(obj), ""]
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for member, mkind, mobj in _members(obj):
                lines += [f"### `{name}.{member}`", "", f"*{mkind}*", ""]
                target = mobj.fget if isinstance(mobj, property) else mobj
                # a bound classmethod has no cls left; a plain function or staticmethod keeps all
                sig = None if isinstance(mobj, property) else _signature(member, target, drop_first=mkind == "method")
                if sig:
                    lines += ["```python", sig, "```", ""]
                lines += [_doc(target), ""]
    else:  # a value (a version string, the registry)
        defined = "tinybench_builder" if name == "__version__" else _value_module(name, obj)
        lines += [f"*{type(obj).__name__}*, defined in {_source_link(defined)}", ""]
        if isinstance(obj, str):
            lines += [f"The package's version, `{obj}`.", ""]
        else:
            lines += [_value_doc(name, obj), ""]
    return lines


#: where a public value is defined when that is not the module ``tinybench_builder`` imports it from
#: (a value has no ``__module__``; each candidate is checked against the object)
VALUE_HOMES = {"REGISTRY": "tinybench_builder.registry.benchmarks"}

#: what a public value is, for values whose type says too little (a plain dict)
VALUE_DOCS = {
    "REGISTRY": ("Every registered tiny benchmark: name -> `BenchmarkSpec` (configs, splits, columns, harness "
                 "prompt, upstream dataset, licence, citation). `get_benchmark(name)` reads one entry; a benchmark "
                 "of your own is a spec file instead (`load_spec_file`)."),
}


def _value_module(name: str, obj: Any) -> str:
    """The module that defines a public value: ``VALUE_HOMES``' entry if it still holds the object,
    else the module the package imports it from."""
    import tinybench_builder

    for home in (VALUE_HOMES.get(name), tinybench_builder._API[name]):
        if home and getattr(importlib.import_module(home), name, None) is obj:
            return home
    raise SystemExit(f"cannot tell where {name} is defined: update VALUE_HOMES in {COMMAND.split()[-1]}")


def _value_doc(name: str, obj: Any) -> str:
    """``VALUE_DOCS``' text, else the docstring of the value's class when the package defines it."""
    if name in VALUE_DOCS:
        return VALUE_DOCS[name]
    if type(obj).__module__.startswith("tinybench_builder"):
        return _doc(type(obj))
    raise SystemExit(f"{name} is a {type(obj).__name__} with no description: add one to VALUE_DOCS in "
                     f"{COMMAND.split()[-1]}")


def render() -> str:
    """The whole of docs/API.md."""
    import tinybench_builder

    names = list(tinybench_builder.__all__)
    toc = [f"* [`{n}`](#{_anchor(n)})" for n in names]
    body: list[str] = []
    for n in names:
        body += _section(n, getattr(tinybench_builder, n))
    text = "\n".join([HEADER, *toc, "", *body]).rstrip("\n") + "\n"
    return re.sub(r"\n{3,}", "\n\n", text)


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading that is one code span (lowercase; punctuation other than - and _
    dropped; spaces -> -)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if docs/API.md is stale (write nothing)")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.is_file() else ""
        if current != text:
            print(f"docs/API.md is stale: run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
