"""Development builds of the tiny benchmarks from the shared data (``../shared/data``).

* tinyAlpacaEval, tinyGSM8k: REAL responses (63 models, AlpacaEval 2.0,
  ``responses/alpaca_eval_2.parquet``; 42 models, GSM8K, ``responses/gsm8k_zeroeval.parquet``)
  and the real content (as ``release-local.toml`` releases them).
* tinyMMLU, tinyWinogrande: SIMULATED responses (:func:`tinybench_builder.read.simulate.simulate_responses`:
  a 2PL model with random abilities and item parameters), one column per row of the real
  content, over the real content. The fitted IRT parameters and the validation table describe
  the simulation, not real models: these folders exercise the pipeline, they are not releases.

The split that is not in the shared data (Winogrande ``test``) comes from the upstream Hub
dataset (``datasets.load_dataset``; needs the network or a cache). Offline, ``--standin-missing``
uses the config's tiny-split content in its place (the manifest names the file used), so that
the folder can be built and inspected here.

    python scripts/build_examples.py --out build/examples                 # all four
    python scripts/build_examples.py --only tinyMMLU --fast --out /tmp/ex # quicker fit settings
    python scripts/build_examples.py --standin-missing --fast --out /tmp/ex

Real builds (from evaluation outputs) are described in docs/BUILD.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tinybench_builder.registry.benchmarks import get_benchmark  # noqa: E402
from tinybench_builder.dataset.options import BuildOptions  # noqa: E402
from tinybench_builder.model.options import FitOptions  # noqa: E402
from tinybench_builder.dataset.content import content_item_ids  # noqa: E402
from tinybench_builder.dataset.build import build_benchmark  # noqa: E402
from tinybench_builder.read.matrix import ResponseMatrix  # noqa: E402
from tinybench_builder.read.simulate import simulate_responses  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data"

#: benchmark -> (responses file or None for simulated, {split: content file})
EXAMPLES = {
    "tinyAlpacaEval": ("responses/alpaca_eval_2.parquet", {"test": "content/alpaca_eval.parquet"}),
    "tinyMMLU": (None, {"test": "content/mmlu_test.parquet", "dev": "content/mmlu_dev.parquet"}),
    "tinyGSM8k": ("responses/gsm8k_zeroeval.parquet", {"test": "content/gsm8k_test.parquet",
                                                       "train": "content/gsm8k_train.parquet"}),
    "tinyWinogrande": (None, {"validation": "content/winogrande_xl_validation.parquet",
                              "train": "content/winogrande_xl_train.parquet"}),
}


def simulated_responses(content_file: Path, out: Path, n_models: int, seed: int) -> Path:
    """A simulated score table whose item ids are the content's (``item_id``, else row positions)."""
    table = pq.read_table(content_file)
    ids = content_item_ids(table)
    m, _ = simulate_responses(n_models=n_models, n_items=len(ids), n_dims=2, seed=seed)
    out.parent.mkdir(parents=True, exist_ok=True)
    ResponseMatrix(m.scores, m.models, ids).write(out)
    return out


def build_one(name: str, data: Path, out: Path, args) -> Path:
    spec = get_benchmark(name)
    config = spec.configs[0]
    responses, content_files = EXAMPLES[name]
    content = {split: str(data / f) for split, f in content_files.items()}
    for split in config.splits:
        if split not in content and args.standin_missing:
            content[split] = content[config.tiny_split]
            print(f"{name}: split {split!r} is not in the shared data; using the {config.tiny_split!r} content as a "
                  "stand-in (--standin-missing; not a release)", file=sys.stderr)
    if responses is None:
        resp = simulated_responses(data / content_files[config.tiny_split],
                                   out / "_inputs" / f"{name}_responses_simulated.parquet", args.models, args.seed)
    else:
        resp = data / responses
    fit = FitOptions(n_dims=1, n_seeds=2) if args.fast else FitOptions()
    options = BuildOptions(anchors=args.anchors, seed=args.seed, version=args.version, fit=fit)
    return build_benchmark(spec, str(resp), content, options, out=out / name, progress=not args.quiet)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help=f"shared data folder (default {DEFAULT_DATA})")
    p.add_argument("--out", type=Path, required=True, help="output folder (one sub-folder per benchmark)")
    p.add_argument("--only", action="append", choices=sorted(EXAMPLES), help="build only this benchmark (repeatable)")
    p.add_argument("--models", type=int, default=100, help="simulated models (default 100)")
    p.add_argument("--anchors", type=int, default=None, help="anchors (default: the registry's, 100)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--version", default="0.0.0")
    p.add_argument("--fast", action="store_true", help="IRT dimension 1 and 2 k-means seeds (quicker)")
    p.add_argument("--standin-missing", action="store_true",
                   help="offline: use the tiny split's content for splits missing from the shared data")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    if not (args.data / "content").is_dir():
        p.error(f"{args.data} has no content/ folder")
    for name in args.only or list(EXAMPLES):
        folder = build_one(name, args.data, args.out, args)
        print(f"built {name} -> {folder}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
