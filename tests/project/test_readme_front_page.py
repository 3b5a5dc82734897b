"""The README stays a front page, in the fast loop: at most 250 lines, starting with the two set-up
commands, without issue numbers or machine load; every command it shows parses with the program's
own argument parser (tests/e2e/test_readme.py runs the main ones); and its summary of measured accuracy
is the one of the full tables of docs/BENCHMARKS.md, so that the two cannot drift apart."""

from __future__ import annotations

import argparse
import re

from helpers.builds import ROOT
from helpers.markdown import README, blocks, shell_commands

BENCHMARKS = ROOT / "docs" / "BENCHMARKS.md"


def test_every_command_of_the_readme_parses():
    """Each `python -m tinybench_builder ...` and `python release.py ...` line of the README is accepted by the
    program's own argument parser (the ones the tests above do not run, too)."""
    from tinybench_builder.cli import main as cli

    seen = set()
    for heading, lang, code in blocks():
        if lang != "bash":
            continue
        for argv in shell_commands(code):
            if argv[:3] == ["python", "-m", "tinybench_builder"]:
                parser, args = cli.build_parser(), argv[3:]
            elif argv[:2] == ["python", "release.py"]:
                parser, args = None, argv[2:]
            else:
                continue
            if parser is None:
                from tinybench_builder.cli import release

                parser = release.add_release_arguments(argparse.ArgumentParser(prog="release.py"))
            try:
                parser.parse_args(args)
            except SystemExit as exc:  # argparse reports and exits 2
                raise AssertionError(f"README section {heading!r}: {' '.join(argv)} does not parse") from exc
            seen.add(args[0] if argv[1] == "-m" else "release.py")
    assert {"ingest", "fit", "estimate", "adaptive", "build", "release.py"} <= seen, seen


def test_the_readme_is_a_front_page():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    assert text.startswith("# ") and text.split("\n", 2)[2].startswith("```bash\npip install -e ")
    prose = "\n".join(line for line in text.splitlines() if not line.startswith(("|", "    ")))
    assert not re.search(r"\b[Ii]ssues? \d+", prose), "no issue numbers in the README"
    assert not re.search(r"\bload (average )?(of )?\d", prose), "machine load belongs in docs/BENCHMARKS.md"


def _table(lines: list[str], start: int) -> list[list[str]]:
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def _mean_row(section: str) -> dict[str, str]:
    """Column label -> the cell of the **mean** row of a docs/BENCHMARKS.md accuracy table."""
    text = BENCHMARKS.read_text(encoding="utf-8")
    body = text.split(f"<!-- table:{section} -->", 1)[1].split(f"<!-- /table:{section} -->", 1)[0].splitlines()
    head = next(i for i, line in enumerate(body) if line.startswith("| dataset |"))
    rows = _table(body, head)
    mean = next(r for r in rows if r[0] == "**mean**")
    return dict(zip(rows[0], mean))


def test_the_accuracy_summary_is_the_one_of_the_full_tables():
    """The README's "Measured accuracy" table restates the mean rows of the accuracy tables of
    docs/BENCHMARKS.md: ours, gp-IRT, the best BenchPred method and the mean coverage, the lowest
    error of each row in bold."""
    from benchmarks.accuracy import LABELS, OURS

    peers = [label for key, label in LABELS.items() if key not in OURS]
    lines = README.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| new models |"))
    summary = _table(lines, start)[2:]
    assert len(summary) == 2
    for row, protocol in zip(summary, ("interpolation", "extrapolation")):
        assert f"({protocol})" in row[0]
        mean = _mean_row(f"accuracy.{protocol}")
        best = min(peers, key=lambda label: float(mean[label]))
        plain = [cell.replace("**", "") for cell in row]
        assert plain[1:] == [mean["**score**"], mean["gp-IRT"], f"{mean[best]} ({best})",
                             mean["95% coverage"]], (protocol, row, mean)
        errors = [float(cell.split()[0]) for cell in plain[1:4]]
        bold = [i for i, cell in enumerate(row[1:4]) if cell.startswith("**")]
        assert bold == [errors.index(min(errors))], f"the lowest error is the bold one: {row}"
