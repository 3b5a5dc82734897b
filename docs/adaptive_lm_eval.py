"""Adaptive evaluation of a model with lm-evaluation-harness (0.4.9 or later): the recipe of docs/ADAPTIVE.md.

::

    pip install "lm-eval[hf]>=0.4.9"
    path=$(hf download tinyBenchmarks/tinyWMDP_bio --repo-type dataset --revision v1.0.0 --quiet)
    python adaptive_lm_eval.py "$path" --model hf --model-args pretrained=<model> --budget 200 --batch 32

``FOLDER`` is a tiny benchmark release (what ``snapshot_download(repo, repo_type="dataset",
revision=tag)`` gives): its ``estimator.py`` and ``adaptive.py`` choose the items, its
``lm_eval/<task>_pool.yaml`` task (the same prompts as the tiny task, over the ``pool`` split:
every item, row j = item j of the estimator) evaluates each batch through lm-eval's Python API
with ``samples=``, on ONE model object built once. Needs nothing of tinybench-builder.

What lm-eval's ``samples`` needs (lm-eval 0.4.9-0.4.13, see docs/ADAPTIVE.md): the doc ids of a
batch sorted and unique (an unsorted list mislabels ``doc_id`` in the logged samples), never an
empty list (it would evaluate every document), and no ``cache_requests`` (its cache key ignores
the sample ids). ``--local`` points the task files at FOLDER instead of the Hub (offline).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path


def local_tasks(folder: Path) -> Path:
    """A copy of ``folder/lm_eval`` whose tasks read the data from ``folder`` (not the Hub)."""
    out = Path(tempfile.mkdtemp(prefix="tiny_tasks_"))
    for f in (folder / "lm_eval").iterdir():
        text = f.read_text(encoding="utf-8")
        if f.suffix == ".yaml":  # the task files are written one field per line
            lines = [f"dataset_path: {json.dumps(str(folder))}" if line.startswith("dataset_path:")
                     else "dataset_kwargs: {}" if line.startswith("dataset_kwargs:") else line
                     for line in text.splitlines()]
            text = "\n".join(lines) + "\n"
        (out / f.name).write_text(text, encoding="utf-8")
    return out


def filters(res: dict, task: str) -> set:
    """The filters of a task's logged samples."""
    return {smp.get("filter") for smp in res["samples"][task]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=Path, help="a tiny benchmark release folder")
    ap.add_argument("--config", default=None,
                    help="the config whose estimator runs the session (default: the first; a bundle's configs "
                         "share one and are evaluated together)")
    ap.add_argument("--budget", type=int, default=200, help="items to ask (default 200)")
    ap.add_argument("--batch", type=int, default=32, help="items per lm-eval call (default 32)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default="hf", help="lm-eval model type (hf, vllm, dummy, ...)")
    ap.add_argument("--model-args", default="", help="lm-eval model_args, e.g. pretrained=<model>")
    ap.add_argument("--local", action="store_true", help="read the data from FOLDER instead of the Hub")
    ap.add_argument("--filter", default="strict-match",
                    help="the lm-eval filter read when a task has several (GSM8K; default strict-match, as "
                         "`tinybench-builder estimate`)")
    args = ap.parse_args(argv)

    import lm_eval
    from lm_eval.api.registry import get_model
    from lm_eval.tasks import TaskManager

    logging.getLogger("lm_eval").setLevel(logging.ERROR)
    folder = args.folder.resolve()
    sys.dont_write_bytecode = True  # no __pycache__ in the release folder (its manifest lists every file)
    sys.path.insert(0, str(folder))  # the release's estimator.py and adaptive.py
    # the tasks' functions module: in the Hub cache lm-eval imports it by name (it resolves the task
    # files' links into blobs/, where the module is not)
    sys.path.insert(0, str(folder / "lm_eval"))
    from estimator import TinyEstimator

    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    first = args.config or next(iter(manifest["configs"]))
    path = manifest["configs"][first]["estimator"]  # "" = the root; a bundle's configs share one estimator
    est = TinyEstimator.load(folder / path if path else folder)
    # every item of the estimator -> (its config's pool task, its row there, the metric the estimator was fitted on)
    where = {}
    for info in manifest["configs"].values():
        if info["estimator"] != path:
            continue
        task = info["harness_task"] + "_pool"  # lm_eval/<task>_pool.yaml: the task over the pool split
        k = est.scenarios.index(info["scenario"])
        rows = [i for i, s in zip(est.item_ids, est.scenario_index) if s == k]  # row j of the pool = rows[j]
        where.update({item: (task, j, info["harness_metric"]) for j, item in enumerate(rows)})
    if len(where) != len(est.item_ids):
        raise SystemExit("some items of the estimator have no lm-eval pool task in this release")

    tasks = local_tasks(folder) if args.local else folder / "lm_eval"
    tm = TaskManager(include_defaults=False, include_path=str(tasks))  # our task files only: fast, no clash
    lm = get_model(args.model).create_from_arg_string(args.model_args)  # the model, built ONCE

    s = est.adaptive(budget=args.budget, seed=args.seed)
    while not s.done:
        ids = s.next_items(args.batch)
        samples: dict = {}
        for i in ids:
            samples.setdefault(where[i][0], set()).add(where[i][1])
        samples = {t: sorted(rows) for t, rows in samples.items()}  # sorted, unique, never empty
        res = lm_eval.simple_evaluate(model=lm, tasks=sorted(samples), task_manager=tm, samples=samples,
                                      log_samples=True, bootstrap_iters=0, cache_requests=False)
        item_of = {(t, j): i for i, (t, j, _) in where.items() if t in samples}
        got = {}
        for t in samples:
            for smp in res["samples"][t]:  # one record per document and filter (GSM8K has two filters)
                if smp.get("filter", args.filter) != args.filter and len(filters(res, t)) > 1:
                    continue
                item = item_of[(t, smp["doc_id"])]
                got[item] = float(smp[where[item][2]])
        if set(got) - set(ids):
            raise SystemExit(f"lm-eval evaluated other documents than asked: {sorted(set(got) - set(ids))[:5]}")
        lost = [i for i in ids if i not in got]  # no result (a failed document): skipped, another item is asked
        if lost:
            print(f"{len(lost)} asked item(s) without a result: skipped ({lost[:3]}...)", flush=True)
        r = s.record({**{i: None for i in lost}, **got})
        print(f"{r['n_asked']:5d} asked: score {r['score']:.4f} [{r['ci_low']:.4f}, {r['ci_high']:.4f}]", flush=True)
    print(json.dumps(s.result(), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
