#!/usr/bin/env python
"""The import graph of the ``builder`` package: print it, fail on a cycle or an arrow going back up.

::

    python scripts/import_graph.py           # the graph floor by floor, module sizes, problems (exit 1)
    python scripts/import_graph.py --dot     # the same graph for Graphviz (dot -Tsvg)

Every import counts, including the ones inside functions: a lazy import is still a dependency.

The floors follow the README "How it works" picture, from its top (sources) down to the entry
points. Data flows down the picture, so a module may import modules of its own floor or of a
floor above it; an import of a module on a lower floor is an arrow going back up (the earlier
stage would depend on a later one). Within a floor any import is allowed as long as there is
no cycle. The standalone modules import nothing of the package, and anyone may import them
(``estimator.py`` is uploaded next to the data and must run alone). A module on no floor is an
error too: when you add a module, put it on its floor here and in the README picture.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "builder"

#: (floor, module patterns), top of the README picture first
FLOORS: list[tuple[str, tuple[str, ...]]] = [
    ("sources", ("builder.matrix", "builder.csv_table", "builder.sources", "builder.sources.*", "builder.ingest", "builder.simulate")),
    ("irt", ("builder.irt",)),
    ("anchors", ("builder.anchors", "builder.calibrate", "builder.fitting")),
    ("registry", ("builder.benchmarks", "builder.prompts", "builder.specs")),
    ("folder", ("builder.config", "builder.layout", "builder.responses", "builder.content", "builder.harness_tasks",
                "builder.original",
                "builder.cards",
                "builder.plan", "builder.dataset")),
    ("release", ("builder.release_config", "builder.validate", "builder.hub_sync", "builder.publish")),
    ("consumers", ("builder.estimate_io", "builder.harness_logs")),
    ("entry points", ("builder.__main__", "builder.bench", "builder.bench.*")),
]
#: import nothing of the package; may be imported from any floor
STANDALONE = ("builder", "builder.estimator", "builder.files")
MAX_LINES = 700
#: modules allowed over MAX_LINES, and why
LONG_ON_PURPOSE = {
    "builder.estimator": "the one file shipped next to the data (`from estimator import TinyEstimator` must work "
                         "from a downloaded folder), so it cannot be split into modules",
}


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Module name -> file, for every ``.py`` file of the package."""
    out = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(module: str, is_package: bool, node: ast.ImportFrom | ast.Import, known: set[str]) -> set[str]:
    """The package modules an import statement of ``module`` refers to."""
    targets = set()
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        # ``from . import x`` / ``from .pkg import mod``: a submodule when it is one, else the module itself
        names = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in known else prefix for a in node.names]
    for name in names:
        while name and name not in known:  # ``import builder.x.y`` -> the longest known prefix
            name = name.rpartition(".")[0]
        if name == PACKAGE or name.startswith(PACKAGE + "."):
            targets.add(name)
    return targets


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the package modules it imports (anywhere in the file)."""
    files = module_files(root)
    known = set(files)
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        deps: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                deps |= _resolve(module, path.name == "__init__.py", node, known)
        deps.discard(module)
        graph[module] = deps
    return graph


def floor_of(module: str) -> int | None:
    for i, (_, patterns) in enumerate(FLOORS):
        if any(fnmatch.fnmatchcase(module, p) for p in patterns):
            return i
    return None


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


def problems(graph: dict[str, set[str]]) -> list[str]:
    """Cycles, arrows going back up, standalone modules that import the package, modules on no floor."""
    out = [f"import cycle: {' <-> '.join(c)}" for c in cycles(graph)]
    for module in sorted(graph):
        if module in STANDALONE:
            bad = sorted(d for d in graph[module] if d != PACKAGE)
            if bad:
                out.append(f"{module} must stay standalone but imports {', '.join(bad)}")
            continue
        floor = floor_of(module)
        if floor is None:
            out.append(f"{module} is on no floor: add it to FLOORS in scripts/import_graph.py and to the README picture")
            continue
        for dep in sorted(graph[module]):
            if dep in STANDALONE:
                continue
            dep_floor = floor_of(dep)
            if dep_floor is not None and dep_floor > floor:
                out.append(f"arrow going back up: {module} ({FLOORS[floor][0]}) imports {dep} ({FLOORS[dep_floor][0]})")
    return out


def size_problems(sizes: dict[str, int]) -> list[str]:
    """Modules over MAX_LINES that are not long on purpose."""
    return [f"{m} has {n} lines (over ~{MAX_LINES}): split it by idea" for m, n in sorted(sizes.items())
            if n > MAX_LINES and m not in LONG_ON_PURPOSE]


def line_counts(root: Path = ROOT) -> dict[str, int]:
    return {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in module_files(root).items()}


def render(graph: dict[str, set[str]], sizes: dict[str, int]) -> str:
    short = lambda m: m.removeprefix(PACKAGE + ".") if m != PACKAGE else PACKAGE  # noqa: E731
    lines = []
    groups = [("standalone", [m for m in sorted(graph) if m in STANDALONE])]
    for i, (name, _) in enumerate(FLOORS):
        groups.append((name, [m for m in sorted(graph) if m not in STANDALONE and floor_of(m) == i]))
    groups.append(("(no floor)", [m for m in sorted(graph) if m not in STANDALONE and floor_of(m) is None]))
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
    lines = ["digraph builder {", "  rankdir=TB;", "  node [shape=box, fontsize=10];"]
    for m in sorted(graph):
        for d in sorted(graph[m]):
            if d != PACKAGE:
                lines.append(f'  "{d}" -> "{m}";')  # data flows from the imported module to the importer
    lines.append("}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--dot", action="store_true", help="print the graph in Graphviz format instead")
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root (default: this checkout)")
    args = parser.parse_args(argv)
    graph = import_graph(args.root)
    if args.dot:
        print(dot(graph))
        return 0
    print(render(graph, line_counts(args.root)))
    found = problems(graph) + size_problems(line_counts(args.root))
    if found:
        print(f"\n{len(found)} problem(s):", *(f"  {p}" for p in found), sep="\n")
        return 1
    print(f"\nno cycle, no arrow going back up, no module over ~{MAX_LINES} lines (but the standalone estimator)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
