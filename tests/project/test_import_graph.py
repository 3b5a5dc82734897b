"""scripts/import_graph.py: the package's stages import only backwards and only what earlier stages
export; and the check does catch each kind of problem (on a small made-up package)."""

from __future__ import annotations

import importlib
import importlib.util
import textwrap

import tinybench_builder
from helpers.builds import ROOT


def _script():
    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "scripts" / "import_graph.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_package_graph_is_clean(capsys):
    graph = _script()
    assert graph.main([]) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert "no cycle, no arrow going back up" in out
    assert all(f"[{stage}]" in out for stage in graph.STAGES) and "[kernel]" in out


def test_every_stage_exports_what_its_all_lists_and_the_package_api_resolves():
    graph = _script()
    for stage, names in graph.stage_exports(ROOT).items():
        module = importlib.import_module(f"tinybench_builder.{stage}")
        assert module.__doc__, stage
        missing = [n for n in names or () if not hasattr(module, n)]
        assert not missing, (stage, missing)
    for name in tinybench_builder.__all__:
        assert getattr(tinybench_builder, name) is not None, name
    assert set(tinybench_builder.__all__) <= set(dir(tinybench_builder))


def _write_package(root, files):
    for name, text in files.items():
        path = root / (name.removeprefix("../") if name.startswith("../") else f"tinybench_builder/{name}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def test_the_check_finds_cycles_upward_arrows_private_names_and_strays(tmp_path, capsys):
    graph = _script()
    _write_package(tmp_path, {
        "__init__.py": "__version__ = '0'\n",
        "estimator.py": "from tinybench_builder.read.matrix import ResponseMatrix\n",   # standalone must import nothing
        "layout.py": "from tinybench_builder.dataset import build\n",                 # the kernel imports a stage
        "read/__init__.py": '"""Read."""\nfrom tinybench_builder.read.matrix import ResponseMatrix\n__all__ = ["ResponseMatrix"]\n',
        "read/matrix.py": "ResponseMatrix = 1\n_helper = 2\ndef f():\n    from tinybench_builder.dataset.build import build\n",
        "read/_private.py": "x = 1\n",
        "model/__init__.py": "__all__ = []\n",                             # no docstring
        "model/fit.py": "from tinybench_builder.read.matrix import _helper\nfrom tinybench_builder.read._private import x\n",
        "registry/__init__.py": '"""Registry: no __all__."""\n',
        "dataset/__init__.py": '"""Dataset."""\n__all__ = ["build"]\n',
        "dataset/build.py": "from tinybench_builder.dataset.cards import card\nfrom tinybench_builder.read import ResponseMatrix\nbuild = 1\n",
        "dataset/cards.py": "from tinybench_builder.dataset.build import build\ncard = 1\n",   # cycle build <-> cards
        "dataset/plan.py": "from tinybench_builder.read.matrix import ResponseMatrix\n",  # exported: fine
        "../benchmarks/__init__.py": '"""Benchmarks."""\n',
        "../benchmarks/speed.py": "from tinybench_builder.read.matrix import _helper\nfrom tinybench_builder.model.fit import f\n",
        "cli/__init__.py": '"""CLI."""\n__all__ = []\n',
        "cli/run.py": "from benchmarks.speed import x\n",                    # the package never imports a benchmark
        "stray/x.py": "x = 1\n",                                                # in no stage
    })
    assert graph.main(["--root", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "import cycle: tinybench_builder.dataset.build <-> tinybench_builder.dataset.cards" in out
    assert "arrow going back up: tinybench_builder.read.matrix (read) imports tinybench_builder.dataset.build (dataset)" in out
    assert "tinybench_builder.estimator must stay standalone but imports tinybench_builder.read.matrix" in out
    assert "tinybench_builder.layout is kernel but imports tinybench_builder.dataset" in out
    assert "tinybench_builder.model.fit imports tinybench_builder.read.matrix._helper, which the read stage does not export" in out
    assert "tinybench_builder.model.fit imports tinybench_builder.read._private.x, which the read stage does not export" in out
    assert "benchmarks.speed imports the private tinybench_builder.read.matrix._helper of the read stage" in out
    assert "benchmarks.speed imports tinybench_builder.model.fit" not in out    # bench may read public internals
    assert "arrow going back up: tinybench_builder.cli.run (cli) imports the benchmark script benchmarks.speed" in out
    assert "tinybench_builder.dataset.plan" not in out                              # an exported name, by its module
    assert "tinybench_builder.registry (the stage's __init__.py) has no __all__" in out
    assert "tinybench_builder.model (the stage's __init__.py) has no docstring" in out
    assert "tinybench_builder.stray.x is in no stage" in out
    assert graph.main(["--root", str(tmp_path), "--dot"]) == 0
    assert '"tinybench_builder.dataset.cards" -> "tinybench_builder.dataset.build";' in capsys.readouterr().out


def test_a_stage_export_may_share_its_name_with_a_submodule(tmp_path, capsys):
    graph = _script()
    _write_package(tmp_path, {
        "__init__.py": "",
        "read/__init__.py": '"""Read."""\nfrom tinybench_builder.read.ingest import ingest\n__all__ = ["ingest"]\n',
        "read/ingest.py": "def ingest():\n    pass\n",
        "model/__init__.py": '"""Model."""\n__all__ = []\n',
        "model/fit.py": "from tinybench_builder.read import ingest\n",
    })
    assert graph.main(["--root", str(tmp_path)]) == 0, capsys.readouterr().out


def test_the_size_check_flags_long_modules_but_the_standalone_estimator():
    graph = _script()
    assert graph.size_problems({"tinybench_builder.read.ingest": 650, "tinybench_builder.estimator": 1200}) == []
    found = graph.size_problems({"tinybench_builder.dataset.build": graph.MAX_LINES + 1})
    assert len(found) == 1 and "tinybench_builder.dataset.build" in found[0]


def test_the_length_check_flags_long_functions_and_classes_even_in_the_standalone_estimator(tmp_path, capsys,
                                                                                            monkeypatch):
    graph = _script()
    lines = graph.MAX_FUNCTION_LINES

    def body(n, indent="    "):
        return "\n".join(f"{indent}x{i} = {i}" for i in range(n))

    _write_package(tmp_path, {
        "__init__.py": "",
        # the module-size exemption of the standalone estimator does not cover its functions and classes
        "estimator.py": (f"def at_the_limit():\n{body(lines - 1)}\n\n"        # def line + 119 = 120 lines: fine
                         f"@staticmethod\ndef decorated():\n{body(lines - 1)}\n\n"  # the decorator counts: 121
                         f"class Facade:\n    def method(self):\n{body(lines, '        ')}\n\n"  # a method of 121
                         f"class Big:\n{body(graph.MAX_CLASS_LINES)}\n"),   # 401 lines
        "read/__init__.py": '"""Read."""\n__all__ = []\n',
        "read/long.py": f"def exempted():\n{body(lines + 5)}\n\ndef short():\n    pass\n",
    })
    monkeypatch.setattr(graph, "LONG_FOR_NOW", {"tinybench_builder.read.long.exempted": "being split",
                                                "tinybench_builder.read.long.short": "split already"})
    assert graph.main(["--root", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "at_the_limit" not in out and "exempted" not in out
    assert "tinybench_builder.estimator.decorated is a function of 121 lines (over 120)" in out
    assert "tinybench_builder.estimator.Facade.method is a function of 121 lines (over 120)" in out
    assert "tinybench_builder.estimator.Facade is a class" not in out       # 123 lines: under 400
    assert "tinybench_builder.estimator.Big is a class of 401 lines (over 400)" in out
    assert "tinybench_builder.read.long.short has 2 lines now (not over 120): remove it from LONG_FOR_NOW" in out
    assert "tinybench_builder.estimator has" not in out  # 770 lines: over the module size, exempt from that only


def test_the_estimator_facade_and_every_function_of_the_package_are_measured():
    graph = _script()
    sizes = graph.definition_sizes(ROOT)
    kind, n = sizes["tinybench_builder.estimator.TinyEstimator"]
    assert kind == "class" and 100 < n <= graph.MAX_CLASS_LINES
    assert sizes["tinybench_builder.estimator.TinyEstimator.estimate"][0] == "function"
    assert all(n <= graph.MAX_FUNCTION_LINES for name, (k, n) in sizes.items()
               if k == "function" and name.startswith(("tinybench_builder.estimator.", "tinybench_builder.model.")))
    assert not any(name.startswith("benchmarks.") for name in sizes)  # the rule is the package's


def test_the_benchmark_scripts_name_no_file_of_the_folder_format():
    """benchmarks/ reads built folders through the names tinybench_builder.layout exports (a renamed side
    file must not leave a benchmark reading a file that is not there any more)."""
    import ast

    from tinybench_builder import layout

    names = {layout.MANIFEST_NAME, layout.CARD_NAME, layout.VALIDATION_NAME, layout.VALIDATION_MD_NAME,
             layout.PLOT_NAME, layout.ESTIMATOR_CODE, layout.ADAPTIVE_CODE, layout.ESTIMATOR_JSON,
             layout.ESTIMATOR_NPZ, layout.ITEM_ID_COLUMN, f"{layout.HARNESS_DIR}/"}
    found = []
    for path in sorted((ROOT / "benchmarks").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value  # the name itself, or a short path holding it (not a docstring's mention)
                hits = [n for n in names if text == n or (("." in n or "/" in n) and n in text and len(text) < 80)]
                if hits:
                    found.append(f"{path.name}:{node.lineno}: {text!r} ({', '.join(hits)})")
    assert not found, "\n".join(found)
