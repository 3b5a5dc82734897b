"""Dataset cards of the tiny benchmarks: jinja2 templates in ``dataset_cards/`` + ``DatasetCardData``.

A card shows what :class:`CardInputs` holds: the manifest's fields, the validation reports and
every config's anchors, taken from a build plan in memory (:mod:`tinybench_builder.dataset.plan`) or read from a
built folder (:meth:`CardInputs.from_folder`). :func:`write_card_files` draws
``validation.png`` (estimated vs true scores of held-out models; needs the optional
``matplotlib``, skipped with a note otherwise) and renders ``README.md`` into a folder being
written; :func:`write_card` re-renders the card of a finished folder (e.g. with the previous
release, for the changelog) and refreshes its manifest, atomically. With a previous release the
changelog lists the anchors that came in and went out and the change of the validation errors
(:func:`changelog`).

Templates: ``dataset_cards/<benchmark name>.md`` when it exists (it may
``{% extends "tiny_benchmark.md" %}`` and override blocks), else ``tiny_benchmark.md``. The
YAML header is :class:`huggingface_hub.DatasetCardData` (licence, task categories, size
category, ``configs`` with their data files, pretty name), rendered as ``{{ card_data }}``.

Every value a template shows is escaped (:mod:`tinybench_builder.dataset.markdown`: the environment's
``finalize``) unless it is Markdown this module wrote: names, file names, descriptions and ids
come from users and their data, and the Hub renders the card as Markdown with raw HTML. The
filters ``code`` (``code(cell=True)`` in a table row), ``text(paragraphs=True)``, ``fenced``,
``py`` and ``sh`` show a value as a code span, text, a code block, a Python string literal or a
shell word.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tinybench_builder import layout
from tinybench_builder.registry import POLO2024_BIBTEX, REGISTRY, BenchmarkSpec, ConfigSpec, get_benchmark, size_category
from tinybench_builder.estimator import TinyEstimator
from tinybench_builder.model import report_markdown
from tinybench_builder.registry import FULL_SPLIT_RENDERERS
from tinybench_builder.dataset.markdown import Markdown, code, fenced, finalize, python_string, shell_word, text

def _templates_dir() -> Path:
    """``dataset_cards/`` of a source checkout, else the copy installed as tinybench_builder/dataset_cards."""
    here = Path(__file__).resolve()  # tinybench_builder/dataset/cards.py
    checkout = here.parents[2] / "dataset_cards"
    if checkout.is_dir():
        return checkout
    return here.parents[1] / "dataset_cards"


TEMPLATES_DIR = _templates_dir()
DEFAULT_TEMPLATE = "tiny_benchmark.md"
PLOT_DPI = 100

__all__ = ["CardInputs", "write_card", "write_card_files", "render_card", "card_data", "plot_validation",
           "changelog", "changelog_markdown", "versions_markdown", "size_category", "TEMPLATES_DIR"]


def card_data(manifest: dict, spec) -> Any:
    """The card's YAML metadata (``DatasetCardData``) for a built folder's manifest."""
    from huggingface_hub import DatasetCardData

    configs = []
    total = 0
    for name, c in manifest["configs"].items():
        files = []
        for split, s in c["splits"].items():
            files.append({"split": split, "path": s["path"]})
            total += int(s["rows"])
        configs.append({"config_name": name, "data_files": files})
    extra: dict[str, Any] = {}
    if getattr(spec, "task_ids", None):
        extra["task_ids"] = list(spec.task_ids)
    sources = list(getattr(spec, "source_datasets", ()) or ())
    if sources:
        extra["source_datasets"] = sources
    return DatasetCardData(
        license=spec.license,
        task_categories=list(spec.task_categories),
        size_categories=[size_category(total)],
        pretty_name=spec.pretty_name,
        language=["en"],
        tags=["tinybenchmarks", "irt", "evaluation"],
        configs=configs,
        **extra,
    )


# ============================================================================ what a card shows
@dataclass(frozen=True)
class CardInputs:
    """What a card shows: the manifest's fields (its ``files`` table is not needed), the
    validation report of every estimator ``[(estimator path, report)]`` and every config's
    anchor ids in row order. ``spec`` None: the registry's entry named in the manifest.

    Values are plain JSON values (what reading the written files gives back), so a card
    rendered from a plan in memory equals the one rendered from the folder.
    """

    manifest: dict
    reports: list[tuple[str, dict]]
    anchors: dict[str, list[str]]
    spec: BenchmarkSpec | None = None

    @classmethod
    def from_folder(cls, folder: str | os.PathLike, spec: BenchmarkSpec | None = None) -> "CardInputs":
        folder = Path(folder)
        manifest = layout.read_manifest(folder)
        return cls({k: v for k, v in manifest.items() if k != "files"}, _reports(folder, manifest),
                   _anchors_by_config(folder, manifest), spec)

    def benchmark(self) -> BenchmarkSpec:
        """``spec``, else the registry's entry, else the custom spec the manifest carries."""
        if self.spec is not None:
            return self.spec
        if self.manifest.get("spec") is not None and self.manifest["name"] not in REGISTRY:
            from tinybench_builder.registry import spec_from_mapping

            return spec_from_mapping(self.manifest["spec"], f"{self.manifest['name']} manifest spec")
        return get_benchmark(self.manifest["name"])


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _reports(folder: Path, manifest: dict) -> list[tuple[str, dict]]:
    """(estimator path, validation report) for every estimator of the folder."""
    out = []
    for e in manifest.get("estimators", [{"path": ""}]):
        p = layout.estimator_folder(folder, e["path"]) / layout.VALIDATION_NAME
        out.append((e["path"], _read_json(p) if p.is_file() else {}))
    return out


def _anchors_by_config(folder: Path, manifest: dict) -> dict[str, list[str]]:
    """Config -> its anchor ids, in row order (from the estimator side files)."""
    out = {}
    cache: dict[str, dict | None] = {}
    for name, c in manifest.get("configs", {}).items():
        p = c.get("estimator", "")
        if p not in cache:
            f = layout.estimator_folder(folder, p) / layout.ESTIMATOR_JSON
            cache[p] = _read_json(f) if f.is_file() else None
        meta = cache[p]
        if meta is None:
            continue
        if len(meta.get("scenarios", [])) <= 1:
            out[name] = list(meta["anchor_ids"])
        else:  # a bundle: the anchors of this config's scenario
            est = TinyEstimator.load(layout.estimator_folder(folder, p))
            out[name] = layout.config_anchor_ids(est, c["scenario"])
    return out


# ============================================================================ plot
def plot_validation(reports: list[tuple[str, dict]], path: str | os.PathLike) -> str | None:
    """Draw estimated vs true scores of the out-of-fold models; None on success, else a note.

    One panel per scenario; x = true full score, y = the score estimated from the anchors, bars =
    95% interval. Agg canvas (no pyplot, no display), fixed size and dpi, no software/date
    metadata: the PNG bytes are deterministic.
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        return ("Plot skipped: matplotlib is not installed (`pip install matplotlib`); "
                "the table above has the same validation.")
    panels = []
    for _, rep in reports:
        oof = rep.get("oof")
        if not oof:
            continue
        for s, name in enumerate(oof["scenarios"]):
            pts = [(t[s], g[s], lo[s], hi[s]) for t, g, lo, hi in
                   zip(oof["truth"], oof.get("score", oof.get("gpirt")), oof["ci_low"], oof["ci_high"])
                   if t[s] is not None and g[s] is not None]
            if pts:
                panels.append((name, pts))
    if not panels:
        return "Plot skipped: the validation report has no out-of-fold estimates."
    ncols = min(3, len(panels))
    nrows = (len(panels) + ncols - 1) // ncols
    fig = Figure(figsize=(4.2 * ncols, 4.2 * nrows), dpi=PLOT_DPI)
    FigureCanvasAgg(fig)
    for i, (name, pts) in enumerate(panels):
        ax = fig.add_subplot(nrows, ncols, i + 1)
        t = [p[0] for p in pts]
        g = [p[1] for p in pts]
        lo = [max(0.0, p[1] - p[2]) for p in pts]
        hi = [max(0.0, p[3] - p[1]) for p in pts]
        lim_lo = max(0.0, min(min(t), min(p[2] for p in pts)) - 0.03)
        lim_hi = min(1.0, max(max(t), max(p[3] for p in pts)) + 0.03)
        ax.plot([lim_lo, lim_hi], [lim_lo, lim_hi], color="0.6", lw=1, ls="--", zorder=1)
        ax.errorbar(t, g, yerr=[lo, hi], fmt="o", ms=3.5, color="#1f77b4", ecolor="#9ecae1", elinewidth=1,
                    capsize=0, zorder=2)
        mae = sum(abs(a - b) for a, b in zip(t, g)) / len(t)
        ax.set_xlim(lim_lo, lim_hi)
        ax.set_ylim(lim_lo, lim_hi)
        ax.set_aspect("equal")
        ax.set_title(f"{name}: {len(t)} held-out models, MAE {mae:.3f}", fontsize=9)
        ax.set_xlabel("true score (all examples)", fontsize=8)
        ax.set_ylabel("estimate from the anchors and 95% interval", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, color="0.92", lw=0.6)
    fig.subplots_adjust(left=0.8 / (4.2 * ncols), right=1 - 0.15 / (4.2 * ncols), bottom=0.55 / (4.2 * nrows),
                        top=1 - 0.35 / (4.2 * nrows), wspace=0.35, hspace=0.35)
    fig.savefig(path, format="png", dpi=PLOT_DPI, metadata={"Software": None})
    return None


# ============================================================================ changelog
def changelog(current: CardInputs, previous: CardInputs | None) -> dict:
    """What changed since ``previous`` (the card inputs of the previous release's folder).

    ``{"version", "previous_version", "anchors": {config: {"added", "removed", "kept"}},
    "errors": [{"scenario", "metric", "before", "after"}], "moved": {config: {...}}}``;
    ``previous_version`` is None (and the rest empty) for a first release. ``moved`` is the
    manifest's ``previous`` table (:func:`tinybench_builder.dataset.versions.compare`): per config, whether
    the design is kept and how the estimates of the models both versions know moved.
    """
    out: dict[str, Any] = {"version": current.manifest.get("version"), "previous_version": None, "anchors": {},
                           "errors": [], "moved": {}}
    if previous is None:
        return out
    out["previous_version"] = previous.manifest.get("version")
    recorded = current.manifest.get("previous") or {}
    if recorded.get("version") == out["previous_version"]:
        out["moved"] = dict(recorded.get("configs") or {})
    now_a, old_a = current.anchors, previous.anchors
    for name, ids in now_a.items():
        before = old_a.get(name)
        if before is None:
            out["anchors"][name] = {"added": list(ids), "removed": [], "kept": 0, "new_config": True}
            continue
        bset, nset = set(before), set(ids)
        out["anchors"][name] = {"added": [a for a in ids if a not in bset], "removed": [a for a in before if a not in nset],
                                "kept": len(bset & nset), "same_order": list(before) == list(ids)}
    for name in old_a:
        if name not in now_a:
            out["anchors"][name] = {"added": [], "removed": list(old_a[name]), "kept": 0, "dropped_config": True}
    old_rows = {r["scenario"]: r for _, rep in previous.reports for r in rep.get("table", [])}
    for _, rep in current.reports:
        for r in rep.get("table", []):
            o = old_rows.get(r["scenario"])
            for metric in ("score", "random", "spearman", "coverage"):
                # releases before the score existed reported gp-IRT as their estimate
                before = None if o is None else o.get(metric, o.get("gpirt") if metric == "score" else None)
                out["errors"].append({"scenario": r["scenario"], "metric": metric, "before": before,
                                      "after": r.get(metric)})
    return out


_METRIC_LABEL = {"score": "score MAE", "random": "random-k MAE", "spearman": "Spearman", "coverage": "95% coverage"}


def _fmt(v: Any, metric: str) -> str:
    if v is None or not isinstance(v, (int, float)):  # a tampered previous report holds anything
        return "n/a"
    return f"{v:.0%}" if metric == "coverage" else f"{v:.4f}" if metric != "spearman" else f"{v:.3f}"


def changelog_markdown(ch: dict, max_ids: int = 20) -> Markdown:
    """The changelog section's Markdown (names and ids escaped: they may come from a previous folder)."""
    if ch.get("previous_version") is None:
        return Markdown(f"* **{text(ch.get('version'))}**: first release of this build (no previous version to "
                        "compare with).")
    lines = [f"**{text(ch['version'])}** (previous: {text(ch['previous_version'])})", ""]
    for raw, a in ch["anchors"].items():
        name = code(raw)
        if a.get("new_config"):
            lines.append(f"* config {name}: new ({len(a['added'])} anchors)")
            continue
        if a.get("dropped_config"):
            lines.append(f"* config {name}: removed")
            continue
        if not a["added"] and not a["removed"]:
            kept = (f"same {a['kept']} anchors in the same order and strata: results logged against "
                    f"{text(ch['previous_version'])} are results of this version"
                    if (ch.get("moved") or {}).get(raw, {}).get("design_kept")
                    else f"same {a['kept']} anchors" + ("" if a.get("same_order", True) else ", in another order"))
            lines.append(f"* config {name}: {kept}")
            continue

        def ids(xs):
            shown = ", ".join(code(x) for x in xs[:max_ids])
            return shown + (f", ... {len(xs) - max_ids} more" if len(xs) > max_ids else "")

        prev = text(ch["previous_version"])
        lines.append(f"* config {name}: {a['kept']} anchors kept, {len(a['added'])} in, {len(a['removed'])} out: "
                     f"a new design; results logged against {prev} are estimated by {prev}'s estimator, not this one's")
        if a["added"]:
            lines.append(f"  * in: {ids(a['added'])}")
        if a["removed"]:
            lines.append(f"  * out: {ids(a['removed'])}")
    moved = {name: m["estimates_moved"] for name, m in ch.get("moved", {}).items() if m.get("estimates_moved")}
    if moved:
        lines += ["", (f"How the estimates of the models both versions know moved ({text(ch['previous_version'])}'s "
                       "estimator on its anchors -> this version's on its own; the same results when the design is "
                       "kept):"), "",
                  "| config | models | mean abs. change | max abs. change | rank correlation |",
                  "|---|---:|---:|---:|---:|"]
        for name, m in moved.items():
            rho = "n/a" if m.get("spearman") is None else f"{m['spearman']:.3f}"
            lines.append(f"| {text(name)} | {m['models']} | {m['mean_abs_change']:.4f} | {m['max_abs_change']:.4f} | "
                         f"{rho} |")
    if ch["errors"]:
        lines += ["", "Validation (out-of-fold), previous -> this version:", "",
                  "| scenario | metric | previous | this version | change |", "|---|---|---:|---:|---:|"]
        for e in ch["errors"]:
            b, a, m = e["before"], e["after"], e["metric"]
            delta = "n/a" if b is None or a is None else (
                f"{a - b:+.0%}" if m == "coverage" else f"{a - b:+.3f}" if m == "spearman" else f"{a - b:+.4f}")
            lines.append(f"| {text(e['scenario'])} | {_METRIC_LABEL[m]} | {_fmt(b, m)} | {_fmt(a, m)} | {delta} |")
    return Markdown("\n".join(lines))


def versions_markdown(manifest: dict) -> Markdown:
    """The card's statement of the design and of the earlier versions whose results this one estimates."""
    design = manifest.get("design") or {}
    if not design.get("hash"):
        return Markdown("")
    version = str(manifest.get("version"))
    lines = [(f"Design {code(str(design['hash'])[:12])} (full hash in `manifest.json`, `design.hash`): the sha256 of "
              "the anchor ids, their order and strata. Versions with the same design have the same tiny-split rows, "
              "so a result logged against one is a result of the other.")]
    configs = design.get("configs") or {}
    if len(configs) > 1:
        lines.append("Per config: " + ", ".join(f"{code(n)} {code(str(h)[:12])}" for n, h in configs.items()) + ".")
    earlier = [str(v) for v in design.get("re_estimates") or []]
    upd = design.get("updated_from") or {}
    if earlier:
        lines.append(f"This version re-estimates the results of version{'s' if len(earlier) > 1 else ''} "
                     f"{', '.join(text(v) for v in earlier)}: {'their' if len(earlier) > 1 else 'its'} anchors are kept"
                     + (" (this version adds configs)" if upd and upd.get("design_hash") != design["hash"] else "")
                     + f"; declare them, e.g. {code(f'est.estimate(scores, version={earlier[-1]!r})')}.")
    else:
        lines.append("It re-estimates no earlier version's results: results logged against an earlier version "
                     "are estimated by that version's estimator. Declare the version results were made against "
                     f"({code(f'est.estimate(scores, version={version!r})')}) and those of another design are "
                     "refused.")
    return Markdown(" ".join(lines))


# ============================================================================ rendering
def _environment(templates: Path):
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates)), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, autoescape=False, finalize=finalize)
    env.filters.update(py=python_string, sh=shell_word, code=code, text=text, fenced=fenced,
                       add_fewshot=lambda task: f"{task}|0")  # a lighteval task with its number of shots
    return env


def _full_split_note(sc: ConfigSpec, splits: dict) -> Markdown | str:
    """How the full splits' ``input_formatted`` was rendered (as the published datasets did)."""
    full = [s for s in sc.full_splits if s in splits]
    if not full or not sc.num_fewshot or sc.renderer in (None, "template"):
        return ""
    names = ", ".join(code(s) for s in full)
    if sc.full_split_sampler == "first_n":
        group = f" of the row's {code(sc.fewshot_group)}" if sc.fewshot_group else ""
        how = f"the first {sc.num_fewshot} {code(sc.fewshot_split)} rows{group} (the row itself when it is one of them)"
    else:
        how = (f"the same {sc.num_fewshot} {code(sc.fewshot_split)} examples for every row (lm-evaluation-harness's "
               f"few-shot sampler with seed {sc.full_split_seed}, drawn afresh for each row)")
    tail = ", then the row's raw text" if sc.renderer in FULL_SPLIT_RENDERERS else ""
    return Markdown(f"In {names}, as in the published tinyBenchmarks datasets, `input_formatted` holds {how}{tail}; "
                    "the tiny split holds the leaderboard's own prompts.")


_WEIGHTING = {
    "size": "every example counting the same (the leaderboard's score of this group: lm-eval's mean over all its "
            "examples)",
    "chance": "subtask k weighted by 1 / (1 - chance_k), its weight in the leaderboard's mean of normalised subtask "
              "scores",
}


#: the accuracy benchmark's numbers per matrix (``python -m benchmarks.accuracy --card-summary``)
ACCURACY_FILE = "accuracy.json"
_PROTOCOL_LABEL = {"interpolation": "interpolation (new models like the training ones)",
                   "extrapolation": "extrapolation (fit on the weakest 50%, test on the strongest 30%)"}


def accuracy_rows(manifest: dict, templates: Path) -> list[dict]:
    """The accuracy benchmark's rows for the matrices this folder was built from (matched by the
    responses' sha256 in ``templates/accuracy.json``); empty when it did not measure them."""
    f = templates / ACCURACY_FILE
    if not f.is_file():
        return []
    known = json.loads(f.read_text(encoding="utf-8")).get("matrices", {})
    out = []
    for rec in (manifest.get("inputs") or {}).get("responses") or []:
        entry = known.get(rec.get("sha256"))
        if entry is None:
            continue
        for protocol in (p for p in _PROTOCOL_LABEL if p in entry["protocols"]):
            out.append({"input": rec["name"], "config": rec.get("config", ""), "protocol": _PROTOCOL_LABEL[protocol],
                        "k": entry["k"], "seeds": len(entry["seeds"]), "date": entry["date"],
                        **entry["protocols"][protocol]})
    return out


def metric_notes(manifest: dict, spec: BenchmarkSpec) -> list[Markdown]:
    """Per config of an Open LLM Leaderboard v2 task: which score the estimator estimates and how
    the leaderboard's normalised score follows from it (Markdown list items; names as code spans)."""
    out = []
    for name, c in manifest["configs"].items():
        sc = next((x for x in spec.configs if x.name == name), None)
        if sc is None or not str(sc.source_task).startswith("leaderboard_"):
            continue
        how = _WEIGHTING.get(sc.subscenario_weighting, "")
        note = (f"{code(name)}: `score` estimates the mean {code(sc.metric)} over the full benchmark"
                + (f", {how}" if how else "") + ".")
        norm = c.get("normalization")
        if norm is None:
            note += " The leaderboard reports no normalised score for it."
        else:
            off, scale = float(norm["offset"]), float(norm["scale"])
            note += (f" The leaderboard's normalised score is `100 * max(0, (score - {off:.4f}) * {scale:.4f})`"
                     f"{' = `100 * score`' if off == 0 and scale == 1 else ''} (the same map turns `ci_low` and "
                     "`ci_high` into its interval)")
            note += (": exact unless a subtask is below its chance level, which the leaderboard clips at 0 subtask by "
                     "subtask." if isinstance(norm.get("chance"), dict) else ".")
        if sc.metric == "prompt_level_strict_acc":
            note += (" The leaderboard's IFEval column is the mean of prompt-level and instruction-level strict "
                     "accuracy; only the prompt-level half is estimated here.")
        out.append(Markdown(note))
    return out


#: what each renderer's rows need beyond the plain install: (lm-eval extras, lighteval packages)
_EXTRAS = {"lb2_ifeval": (("ifeval",), ("langdetect",)), "lb2_math": (("math",), ())}


def _harness_extras(manifest: dict, harness: list[str]) -> dict[str, Any]:
    """The card's values for the harness sections: the functions module, lm-eval's extras, the lighteval
    module, its tasks and the packages they need (:mod:`tinybench_builder.dataset.lighteval_tasks`)."""
    renderers = [c.get("renderer") or "" for n, c in manifest["configs"].items()
                 if c.get("harness_task") and n not in set(manifest.get("content_missing") or [])]
    lighteval = list(manifest.get("lighteval_tasks") or [])
    files = list(manifest.get("harness_tasks") or [])
    return dict(
        harness_utils=next((f for f in files if f.endswith(".py")), f"{layout.HARNESS_DIR}/tiny_utils_<id>.py"),
        harness_extras=sorted({e for r in renderers for e in _EXTRAS.get(r, ((), ()))[0]}),
        lighteval_file=lighteval[0] if lighteval else "", lighteval_tasks=harness if lighteval else [],
        lighteval_pool=[f"{t}_pool" for t in harness] if lighteval else [],
        lighteval_extras=sorted({e for r in renderers for e in _EXTRAS.get(r, ((), ()))[1]}),
        lighteval_winogrande="winogrande" in renderers,
    )


def render_card(card: CardInputs, previous: CardInputs | None = None,
                templates: str | os.PathLike | None = None, plot: str | None = None,
                plot_note: str | None = None) -> Any:
    """The :class:`huggingface_hub.DatasetCard` of ``card`` (nothing is written)."""
    from huggingface_hub import DatasetCard

    manifest = card.manifest
    spec = card.benchmark()
    templates = Path(templates) if templates is not None else TEMPLATES_DIR
    if not (templates / DEFAULT_TEMPLATE).is_file():
        raise FileNotFoundError(f"card templates not found in {templates} (expected {DEFAULT_TEMPLATE})")
    data = card_data(manifest, spec)
    reports = card.reports
    validation = []
    for path, rep in reports:
        if rep.get("table"):  # scenario names come from the data: escaped in the table
            shown = {**rep, "table": [{**r, "scenario": text(r.get("scenario"))} for r in rep["table"]]}
            validation.append({"title": code(path) if len(reports) > 1 else "",
                               "markdown": Markdown(report_markdown(shown))})
    configs = []
    for name, c in manifest["configs"].items():
        sc = next((x for x in spec.configs if x.name == name), None)
        tiny = c["splits"][c["tiny_split"]]
        configs.append({
            "name": name, "tiny_split": c["tiny_split"], "renderer": c.get("renderer"),
            "num_fewshot": int(getattr(sc, "num_fewshot", 0) or 0) if sc else 0,
            "fewshot_split": getattr(sc, "fewshot_split", None) if sc else None,
            "columns": tiny["columns"],
            "id_column": sc.item_id_column if sc and sc.item_id_column in tiny["columns"] else "",
            "full_split_note": _full_split_note(sc, c["splits"]) if sc else "",
            "splits": [{"name": s, **v} for s, v in c["splits"].items()],
            "pool_split": c.get("pool_split") if c.get("pool_split") in c["splits"] else "",
            "scenario": c.get("scenario", name),
        })
    estimators = []
    for e in manifest.get("estimators", []):
        estimators.append({"n_dims": "?", "kept": None, **e, "prefix": f"{e['path']}/" if e["path"] else ""})
    params = manifest.get("parameters", {})
    shown_params = {k: ("chosen by validation" if k == "n_dims" and v is None else v)
                    for k, v in params.items() if v is not None or k == "n_dims"}
    ch = changelog(card, previous)
    missing = set(manifest.get("content_missing") or [])
    harness = list(dict.fromkeys(c["harness_task"] for n, c in manifest["configs"].items()
                                 if c.get("harness_task") and n not in missing))  # rows of ids only: no task
    id_cols = [col for n, c in manifest["configs"].items() if n in missing
               for col in c["splits"][c["tiny_split"]]["columns"] if col in ("instance_id", "doc_id")]
    kwargs = dict(
        name=spec.name, pretty_name=spec.pretty_name,
        # the registry's descriptions are this project's Markdown; a spec file's is text from a user
        description=Markdown(spec.description) if spec.custom is None else spec.description or "",
        version=manifest["version"], tag=manifest.get("tag") or f"v{manifest['version']}",
        repo_id=manifest.get("repo_id") or f"tinyBenchmarks/{spec.name}",
        builder_version=manifest.get("builder_version", "?"),
        n_anchors=sum(e["n_anchors"] for e in manifest.get("estimators", [])),
        n_items=sum(e["n_items"] for e in manifest.get("estimators", [])),
        n_kmeans_seeds=params.get("n_seeds") or 10,
        design=params.get("design", "kmeans"),
        configs=configs, estimators=estimators, inputs=manifest.get("inputs", {}), parameters=shown_params,
        validation=validation, plot=plot, plot_note=Markdown(plot_note or ""),
        harness_tasks=harness, changelog=changelog_markdown(ch), versions=versions_markdown(manifest),
        harness_files=list(manifest.get("harness_tasks") or []),
        harness_pool_tasks=[Path(f).stem for f in manifest.get("harness_tasks") or [] if f.endswith("_pool.yaml")],
        harness_group=spec.name if len(harness) > 1 and manifest.get("harness_tasks") else "",
        harness_group_file=f"{layout.HARNESS_DIR}/{spec.name}.yaml",
        **_harness_extras(manifest, harness),
        configs_absent=list(manifest.get("configs_absent") or []),
        content_missing=list(manifest.get("content_missing") or []),
        missing_id_column=id_cols[0] if id_cols else "instance_id",
        metric_notes=metric_notes(manifest, spec),
        accuracy=accuracy_rows(manifest, templates),
        polo_bibtex=POLO2024_BIBTEX, source_citation=spec.source_citation.strip(), license=spec.license,
        license_notes=Markdown(getattr(spec, "license_notes", "") or ""),  # the registry's own text
    )
    env = _environment(templates)
    name = f"{spec.name}.md" if (templates / f"{spec.name}.md").is_file() else DEFAULT_TEMPLATE
    rendered = env.get_template(name).render(card_data=Markdown(data.to_yaml()), **kwargs)  # YAML-escaped
    return DatasetCard(rendered)


def write_card_files(folder: str | os.PathLike, card: CardInputs, previous: CardInputs | None = None,
                     templates: str | os.PathLike | None = None) -> Path:
    """Draw ``validation.png`` and render ``README.md`` into ``folder`` (a folder being written);
    returns the card's path. The manifest is not touched."""
    folder = Path(folder)
    plot_path = folder / layout.PLOT_NAME
    if plot_path.exists():
        plot_path.unlink()
    note = plot_validation(card.reports, plot_path)
    rendered = render_card(card, previous=previous, templates=templates,
                           plot=None if note else layout.PLOT_NAME, plot_note=note)
    out = folder / layout.CARD_NAME
    out.write_text(str(rendered), encoding="utf-8")
    return out


def write_card(folder: str | os.PathLike, previous: str | os.PathLike | None = None,
               templates: str | os.PathLike | None = None, spec: BenchmarkSpec | None = None) -> Path:
    """Re-render the card (and plot) of a finished folder and refresh its manifest's file table.

    Release engineering may call it on a built folder, e.g. with the previous release's folder
    for the changelog. The folder is rewritten atomically (a copy is changed, then swapped in).
    ``spec``: the benchmark (default: the registry's entry named in the manifest).
    """
    folder = Path(folder)
    card = CardInputs.from_folder(folder, spec)
    prev = CardInputs.from_folder(previous) if previous is not None else None
    with layout.staging(folder) as tmp:
        shutil.copytree(folder, tmp, dirs_exist_ok=True)
        write_card_files(tmp, card, previous=prev, templates=templates)
        layout.refresh_manifest(tmp)
    return folder / layout.CARD_NAME
