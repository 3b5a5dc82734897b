"""scripts/import_graph.py: the package has no import cycle and no arrow going back up the README
picture; and the check does catch each kind of problem (on a small made-up package)."""

from __future__ import annotations

import importlib.util
import textwrap

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
    assert "no cycle, no arrow going back up" in out and "[folder]" in out and "layout" in out


def test_the_check_finds_cycles_upward_arrows_and_strays(tmp_path, capsys):
    graph = _script()
    files = {
        "__init__.py": "__version__ = '0'\n",
        "estimator.py": "from .matrix import ResponseMatrix\n",          # standalone must import nothing
        "matrix.py": "def f():\n    from .dataset import build\n",       # sources floor imports the folder floor
        "dataset.py": "from .cards import card\nbuild = 1\n",
        "cards.py": "from . import dataset\ncard = 1\n",                   # cycle dataset <-> cards
        "stray.py": "x = 1\n",                                             # on no floor
    }
    for name, text in files.items():
        (tmp_path / "builder" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "builder" / name).write_text(textwrap.dedent(text))
    assert graph.main(["--root", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "import cycle: builder.cards <-> builder.dataset" in out
    assert "arrow going back up: builder.matrix (sources) imports builder.dataset (folder)" in out
    assert "builder.estimator must stay standalone but imports builder.matrix" in out
    assert "builder.stray is on no floor" in out
    assert graph.main(["--root", str(tmp_path), "--dot"]) == 0
    assert '"builder.cards" -> "builder.dataset";' in capsys.readouterr().out


def test_the_size_check_flags_long_modules_but_the_standalone_estimator():
    graph = _script()
    assert graph.size_problems({"builder.ingest": 650, "builder.estimator": 1200}) == []
    found = graph.size_problems({"builder.dataset": graph.MAX_LINES + 1})
    assert len(found) == 1 and "builder.dataset" in found[0]
