"""Small fake tiny-dataset folders for the publishing and release tests.

:func:`make_folder` writes, in the project's folder format (``tinybench_builder.layout``: our manifest,
written last; the folder swapped in atomically), one config ``default`` with a ``test`` split,
a card with ``configs:`` and a changelog, real estimator side files (so
``TinyEstimator.from_hub`` works on them) and ``estimator.py``. :func:`fake_build` has the
signature of ``tinybench_builder.dataset.build.build_benchmark`` (the release's build contract) and makes such
a folder in a fraction of a second. :func:`write_config` / :func:`fake_config` write release
configs.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np

from tinybench_builder import layout

REPO = "tinyOrg/tinyFake"
N_ITEMS = 30
DATA = "data/test-00000-of-00001.parquet"


def _anchors(seed: int, k: int) -> list[int]:
    return sorted(np.random.default_rng(seed).choice(N_ITEMS, size=k, replace=False).tolist())


def make_folder(out, *, version="1.0.0", seed=0, k=5, extra=None, previous=None, name="tinyFake",
                sub_estimator=None, meta=None) -> Path:
    """A tiny-benchmark folder (deterministic for the same arguments); replaces an earlier one.

    ``extra``: {relpath: text} more files; ``sub_estimator``: also save the estimator in that
    subfolder (per-config layout); ``meta``: more manifest fields; ``previous``: the previous
    release's folder, compared in the changelog.
    """
    import pandas as pd

    from tinybench_builder.estimator import TinyEstimator

    anchors = _anchors(seed, k)
    item_ids = [f"q{j}" for j in range(N_ITEMS)]
    rng = np.random.default_rng(1000 + seed)
    strata = np.arange(N_ITEMS) % k
    strata[np.asarray(anchors)] = np.arange(k)  # anchor i represents stratum i
    est = TinyEstimator(
        item_ids=item_ids, anchor_positions=anchors, anchor_weights=np.full(k, 1.0 / k),
        A=rng.normal(1.0, 0.2, size=(N_ITEMS, 1)), b=rng.normal(size=N_ITEMS), balance=np.ones(N_ITEMS),
        scenario_index=np.zeros(N_ITEMS, int), scenario_names=[name],
        strata=strata, design="kmeans", prior_mean=np.zeros(1), prior_cov=np.eye(1),
        metadata={"benchmark": name, "version": version},
    )
    rows = {"item_id": [item_ids[a] for a in anchors], "question": [f"question {a} (seed {seed})" for a in anchors]}
    lines = ["## Changelog", "", f"### v{version}", ""]
    if previous is not None:
        prev = layout.read_manifest(previous)
        prev_anchors = set(pd.read_parquet(Path(previous) / DATA)["item_id"])
        now = set(rows["item_id"])
        lines += [f"Previous release: v{prev['version']}.",
                  f"Anchors in: {sorted(now - prev_anchors)}; anchors out: {sorted(prev_anchors - now)}."]
    else:
        lines += ["First release."]
    readme = textwrap.dedent(f"""\
        ---
        pretty_name: {name}
        license: mit
        configs:
        - config_name: default
          data_files:
          - split: test
            path: data/test-*
        ---
        # {name}

        {k} anchors of a fake benchmark (tests).

        """) + "\n".join(lines) + "\n"
    with layout.staging(out) as tmp:
        est.save(tmp)
        if sub_estimator:
            est.save(tmp / sub_estimator)
        layout.copy_estimator_code(tmp)
        (tmp / "data").mkdir()
        pd.DataFrame(rows).to_parquet(tmp / DATA, index=False)
        (tmp / layout.CARD_NAME).write_text(readme, encoding="utf-8")
        for rel, text in (extra or {}).items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_text(text, encoding="utf-8")
        layout.write_manifest(tmp, {"format": layout.DATASET_FORMAT, "schema_version": layout.MANIFEST_SCHEMA_VERSION,
                                    "name": name, "version": version, **(meta or {})})
    return Path(out)


def fake_build(benchmark, responses, content=None, options=None, *, out, previous=None, templates=None,
               progress=False):
    """Stand-in for ``tinybench_builder.dataset.build.build_benchmark`` (same signature). ``responses`` may name a
    JSON file of options: ``{"extra": {relpath: text}, "fail": "message"}``."""
    from tinybench_builder.dataset.options import BuildOptions

    options = options if options is not None else BuildOptions()
    name = benchmark if isinstance(benchmark, str) else benchmark.name
    opts = {}
    rpath = Path(responses if isinstance(responses, str) else responses[0])
    if rpath.suffix == ".json" and rpath.is_file():
        opts = json.loads(rpath.read_text())
    if opts.get("fail"):
        raise ValueError(opts["fail"])
    return make_folder(out, version=options.version, seed=options.seed, k=options.anchors or 5,
                       extra=opts.get("extra"), previous=previous, name=name,
                       meta={"repo_id": options.repo_id, "tag": options.tag, "content": content,
                             "responses": str(responses)})


def rewrite(folder: Path, rel: str, fn) -> None:
    """Edit a file and refresh the manifest (so only the intended problem remains)."""
    p = Path(folder) / rel
    p.write_text(fn(p.read_text()))
    layout.refresh_manifest(folder)


def write_config(folder: Path, body: str, name: str = "release.toml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_text(textwrap.dedent(body), encoding="utf-8")
    return p


def spec_release_config(folder: Path, spec: Path, responses: Path, content: Path, *, anchors: int,
                        seed: int | None = None, name: str = "release.toml") -> Path:
    """A config releasing the benchmark of the spec file ``spec`` from ``responses`` and the test
    split's ``content`` (the build's default seed when ``seed`` is None)."""
    return write_config(folder, f"""\
        [release]
        org = "tinyOrg"

        [[benchmark]]
        spec = "{spec}"
        responses = "{responses}"
        content = {{ test = "{content}" }}
        anchors = {anchors}
        {'' if seed is None else f'seed = {seed}'}
        """, name=name)


def fake_config(folder: Path, *, seed: int = 0, options: dict | None = None, name: str = "tinyAlpacaEval") -> Path:
    """A config releasing one registered benchmark; ``responses`` is a JSON of fake_build options."""
    (folder / "inputs").mkdir(parents=True, exist_ok=True)
    (folder / "inputs" / "responses.json").write_text(json.dumps(options or {}))
    return write_config(folder, f"""\
        [release]
        org = "tinyOrg"

        [[benchmark]]
        name = "{name}"
        responses = "inputs/responses.json"
        content = {{ test = "tatsu-lab/alpaca_eval" }}
        anchors = 5
        seed = {seed}
        """)
