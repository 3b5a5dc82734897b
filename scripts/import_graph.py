#!/usr/bin/env python
"""The import graph of the ``tinybench_builder`` package, stage by stage: print it, fail on what breaks the stages.

::

    python scripts/import_graph.py           # the graph stage by stage, module sizes, problems (exit 1)
    python scripts/import_graph.py --dot     # the same graph for Graphviz (dot -Tsvg)

Every import counts, including the ones inside functions: a lazy import is still a dependency.

The package is a small kernel (the modules directly under ``tinybench_builder/``) and one folder per stage
of the pipeline, in the order data flows through them (:data:`STAGES`, the README picture).
A module may import the kernel, its own stage and the stages before it; an import of a later
stage is an arrow going back up. Across stages only what a stage exports may be imported: a
name listed in ``__all__`` of the stage's ``__init__.py``, never a private module or name (the
benchmark scripts, which measure internals, may import any public name of a public module).
The kernel imports only the kernel, and its standalone modules (:data:`STANDALONE`) import
nothing of the package (``estimator.py`` and ``adaptive.py`` are uploaded next to the data and must run alone).
The package's ``__init__.py`` (the public API, loaded lazily) and ``__main__.py`` are entry
points: like the benchmark scripts, they may import any public name of a public module. No import cycle, no module over
:data:`MAX_LINES` lines unless it is long on purpose, and every stage's ``__init__.py`` has a
docstring and an ``__all__``. In the package, no function or method is over :data:`MAX_FUNCTION_LINES`
lines and no class over :data:`MAX_CLASS_LINES` (from its ``def``/``class`` line or first decorator to
its last line, docstring and nested definitions included): the standalone estimator is exempt
from the module size only, not from these.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "tinybench_builder"

#: the stages, in the order data flows through them (a folder of tinybench_builder/ each)
STAGES: tuple[str, ...] = ("read", "model", "registry", "dataset", "release", "estimate", "cli")
#: the benchmark scripts, outside the package (``benchmarks/`` at the top of the repository): checked as a
#: last stage that nothing of the package may import
BENCHMARKS = "benchmarks"
#: kernel modules that import nothing of the package (``estimator.py`` loads ``adaptive.py`` by its path,
#: next to itself, as it does in a downloaded folder: both are shipped and run alone)
STANDALONE = ("tinybench_builder.estimator", "tinybench_builder.adaptive", "tinybench_builder.files", "tinybench_builder.errors")
#: kernel modules that are entry points: they may import any public name of a stage's public modules
ENTRY_POINTS = ("tinybench_builder", "tinybench_builder.__main__")
#: stages that may import any public name of another stage's public modules (they measure internals)
INTERNAL_READERS = (BENCHMARKS,)
MAX_LINES = 700
#: modules allowed over MAX_LINES, and why
LONG_ON_PURPOSE = {
    "tinybench_builder.estimator": "the one file shipped next to the data (`from estimator import TinyEstimator` must work "
                         "from a downloaded folder), so it cannot be split into modules",
    "tinybench_builder.adaptive": "shipped next to estimator.py and loaded by its path from a downloaded folder (numpy "
                        "and scipy only), so it cannot be split into modules either",
}


#: the longest function (or method) and class of the package, in lines
MAX_FUNCTION_LINES = 120
MAX_CLASS_LINES = 400
#: functions and classes over those limits that work in progress splits, and why; an entry that is no
#: longer over its limit is a problem too (remove it from here)
LONG_FOR_NOW: dict[str, str] = {}


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Module name -> file, for every ``.py`` file of the package and of the benchmark scripts."""
    out = {}
    for path in sorted([*(root / PACKAGE).rglob("*.py"), *(root / BENCHMARKS).rglob("*.py")]):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def stage_of(module: str) -> str | None:
    """The stage a module belongs to, or None for the kernel (modules directly under tinybench_builder/)."""
    parts = module.split(".")
    if parts[0] == BENCHMARKS:
        return BENCHMARKS
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in STAGES) else None


def _imports(module: str, is_package: bool, node: ast.ImportFrom | ast.Import, known: set[str],
             exports: dict[str, set[str] | None]):
    """``(target module, imported name or None)`` pairs of one import statement of ``module``.

    ``from tinybench_builder.<stage> import x`` is the name ``x`` when the stage exports it, even where a
    submodule has the same name (``tinybench_builder.read.ingest`` the module, ``ingest`` the function).
    """
    if isinstance(node, ast.Import):
        names = [(a.name, None) for a in node.names]
    else:
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        # ``from . import x`` / ``from .pkg import mod``: a submodule when it is one, else a name of the module
        stage = prefix.split(".")[1] if prefix.count(".") == 1 and prefix.startswith(PACKAGE + ".") else None
        exported = (exports.get(stage) or set()) if stage else set()
        names = [(f"{prefix}.{a.name}", None) if f"{prefix}.{a.name}" in known and a.name not in exported
                 else (prefix, a.name) for a in node.names]
    for name, imported in names:
        while name and name not in known:  # ``import tinybench_builder.x.y`` -> the longest known prefix
            name = name.rpartition(".")[0]
        if name in (PACKAGE, BENCHMARKS) or name.startswith((PACKAGE + ".", BENCHMARKS + ".")):
            yield name, imported


def import_table(root: Path = ROOT) -> dict[str, set[tuple[str, str | None]]]:
    """Module -> the ``(package module, imported name or None)`` pairs it imports (anywhere in the file)."""
    files = module_files(root)
    known = set(files)
    exports = stage_exports(root)
    table: dict[str, set[tuple[str, str | None]]] = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found: set[tuple[str, str | None]] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found |= set(_imports(module, path.name == "__init__.py", node, known, exports))
        table[module] = {(t, n) for t, n in found if t != module}
    return table


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the package modules it imports (anywhere in the file)."""
    return {m: {t for t, _ in pairs} for m, pairs in import_table(root).items()}


def stage_exports(root: Path = ROOT) -> dict[str, set[str] | None]:
    """Stage -> the names in ``__all__`` of its ``__init__.py`` (None: no ``__all__`` there)."""
    out: dict[str, set[str] | None] = {}
    for stage in STAGES:
        init = root / PACKAGE / stage / "__init__.py"
        if not init.is_file():
            continue
        out[stage] = None
        for node in ast.parse(init.read_text(encoding="utf-8")).body:
            if (isinstance(node, (ast.Assign, ast.AnnAssign))
                    and any(isinstance(t, ast.Name) and t.id == "__all__"
                            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))):
                try:
                    out[stage] = set(ast.literal_eval(node.value))
                except ValueError:
                    out[stage] = set()
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _private(dotted: str) -> bool:
    return any(part.startswith("_") and part != "__init__" for part in dotted.split("."))


def problems(table: dict[str, set[tuple[str, str | None]]], exports: dict[str, set[str] | None]) -> list[str]:
    """Cycles, arrows going back up, private or unexported names taken across stages, stray modules."""
    graph = {m: {t for t, _ in pairs} for m, pairs in table.items()}
    out = [f"import cycle: {' <-> '.join(c)}" for c in cycles(graph)]
    for stage, names in sorted(exports.items()):
        if names is None:
            out.append(f"tinybench_builder.{stage} (the stage's __init__.py) has no __all__: list what other stages may use")
    for module in sorted(table):
        stage = stage_of(module)
        if stage is not None and stage not in (*STAGES, BENCHMARKS):
            out.append(f"{module} is in no stage: put it in one of {', '.join(STAGES)} or directly under tinybench_builder/")
            continue
        if stage is None and module not in ENTRY_POINTS:
            bad = sorted({t for t, _ in table[module]} - {PACKAGE}) if module in STANDALONE else \
                sorted(t for t, _ in table[module] if stage_of(t) is not None)
            if bad:
                what = "must stay standalone but imports" if module in STANDALONE else "is kernel but imports"
                out.append(f"{module} {what} {', '.join(bad)}")
            continue
        for target, name in sorted(table[module], key=lambda p: (p[0], p[1] or "")):
            target_stage = stage_of(target)
            if target_stage is None or target_stage == stage:
                continue
            if target_stage == BENCHMARKS:
                out.append(f"arrow going back up: {module} ({stage or 'kernel'}) imports the benchmark script {target}")
                continue
            if target_stage not in STAGES:
                continue
            if stage is not None and stage in STAGES and STAGES.index(target_stage) > STAGES.index(stage):
                out.append(f"arrow going back up: {module} ({stage}) imports {target} ({target_stage})")
                continue
            what = f"{target}.{name}" if name else target
            if stage in INTERNAL_READERS or module in ENTRY_POINTS:
                if _private(what):
                    out.append(f"{module} imports the private {what} of the {target_stage} stage")
                continue
            exported = exports.get(target_stage) or set()
            if name is None or name not in exported:
                out.append(f"{module} imports {what}, which the {target_stage} stage does not export "
                           f"(add it to __all__ of tinybench_builder/{target_stage}/__init__.py, or import an exported name)")
    return out


def size_problems(sizes: dict[str, int]) -> list[str]:
    """Modules over MAX_LINES that are not long on purpose."""
    return [f"{m} has {n} lines (over ~{MAX_LINES}): split it by idea" for m, n in sorted(sizes.items())
            if n > MAX_LINES and m not in LONG_ON_PURPOSE]


def definition_sizes(root: Path = ROOT) -> dict[str, tuple[str, int]]:
    """Qualified name (``module.Class.method``, ``module.function.inner``) -> ``("function" | "class",
    lines)`` of every definition in the package's modules (not the benchmark scripts)."""
    out: dict[str, tuple[str, int]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}.{child.name}"
                start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                kind = "class" if isinstance(child, ast.ClassDef) else "function"
                out[name] = (kind, (child.end_lineno or child.lineno) - start + 1)
                visit(child, name)
            else:
                visit(child, prefix)  # definitions inside if/try blocks

    for module, path in module_files(root).items():
        if stage_of(module) != BENCHMARKS:
            visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), module)
    return out


def length_problems(sizes: dict[str, tuple[str, int]]) -> list[str]:
    """Functions over MAX_FUNCTION_LINES and classes over MAX_CLASS_LINES (but those of LONG_FOR_NOW), and
    entries of LONG_FOR_NOW that are no longer over their limit."""
    out = []
    for name, (kind, n) in sorted(sizes.items()):
        limit = MAX_CLASS_LINES if kind == "class" else MAX_FUNCTION_LINES
        if n > limit and name not in LONG_FOR_NOW:
            out.append(f"{name} is a {kind} of {n} lines (over {limit}): split it by job")
        elif n <= limit and name in LONG_FOR_NOW:
            out.append(f"{name} has {n} lines now (not over {limit}): remove it from LONG_FOR_NOW in "
                       "scripts/import_graph.py")
    return out


def docstring_problems(root: Path = ROOT) -> list[str]:
    """Stage packages without a docstring saying what the stage does."""
    out = []
    for stage in STAGES:
        init = root / PACKAGE / stage / "__init__.py"
        if init.is_file() and not ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))):
            out.append(f"tinybench_builder.{stage} (the stage's __init__.py) has no docstring saying what the stage does")
    return out


def line_counts(root: Path = ROOT) -> dict[str, int]:
    return {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in module_files(root).items()}


def render(graph: dict[str, set[str]], sizes: dict[str, int]) -> str:
    short = lambda m: m.removeprefix(PACKAGE + ".") if m != PACKAGE else PACKAGE  # noqa: E731
    lines = []
    groups = [("kernel", [m for m in sorted(graph) if stage_of(m) is None])]
    groups += [(s, [m for m in sorted(graph) if stage_of(m) == s]) for s in (*STAGES, BENCHMARKS)]
    groups.append(("(no stage)", [m for m in sorted(graph) if stage_of(m) not in (None, *STAGES, BENCHMARKS)]))
    for name, modules in groups:
        if not modules:
            continue
        lines.append(f"[{name}]")
        for m in modules:
            deps = ", ".join(short(d) for d in sorted(graph[m]) if d != PACKAGE) or "-"
            flag = ("" if sizes[m] <= MAX_LINES else "  (long on purpose: standalone)" if m in LONG_ON_PURPOSE
                    else "  (over ~%d lines)" % MAX_LINES)
            lines.append(f"  {short(m):<32} {sizes[m]:>5} lines  -> {deps}{flag}")
    return "\n".join(lines)


def dot(graph: dict[str, set[str]]) -> str:
    lines = ["digraph tinybench_builder {", "  rankdir=TB;", "  node [shape=box, fontsize=10];"]
    for m in sorted(graph):
        for d in sorted(graph[m]):
            if d != PACKAGE:
                lines.append(f'  "{d}" -> "{m}";')  # data flows from the imported module to the importer
    lines.append("}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--dot", action="store_true", help="print the graph in Graphviz format instead")
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root (default: this checkout)")
    args = parser.parse_args(argv)
    table = import_table(args.root)
    graph = {m: {t for t, _ in pairs} for m, pairs in table.items()}
    if args.dot:
        print(dot(graph))
        return 0
    sizes = line_counts(args.root)
    print(render(graph, sizes))
    found = (problems(table, stage_exports(args.root)) + size_problems(sizes) + docstring_problems(args.root)
             + length_problems(definition_sizes(args.root)))
    if found:
        print(f"\n{len(found)} problem(s):", *(f"  {p}" for p in found), sep="\n")
        return 1
    print(f"\nno cycle, no arrow going back up, nothing private or unexported taken across stages, "
          f"no module over ~{MAX_LINES} lines (but the standalone estimator), no function over "
          f"{MAX_FUNCTION_LINES} lines and no class over {MAX_CLASS_LINES} in the package"
          + (f" (but {len(LONG_FOR_NOW)} being split: LONG_FOR_NOW)" if LONG_FOR_NOW else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
