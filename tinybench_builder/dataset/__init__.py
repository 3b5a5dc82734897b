"""Stage 4, dataset: a Hub-ready tiny dataset folder from a benchmark's responses and content.

:func:`build_benchmark` reads the inputs (:mod:`tinybench_builder.dataset.responses`,
:mod:`tinybench_builder.dataset.content`), fits the estimators (stage 2), plans the folder without writing
(:mod:`tinybench_builder.dataset.plan`) and writes it: the data parquet of every config and split, the
estimator side files, the lm-eval task files (:mod:`tinybench_builder.dataset.harness_tasks`), the card
(:mod:`tinybench_builder.dataset.cards`) and the manifest (:mod:`tinybench_builder.layout`). :func:`import_original`
turns the original release's pickle into estimator side files. :class:`BuildOptions` holds a
build's settings.
"""

from tinybench_builder.dataset.build import build_benchmark
from tinybench_builder.dataset.content import parse_content_args
from tinybench_builder.dataset.harness_tasks import ANCHOR_MEAN, TASK_SUFFIX, check_task_names
from tinybench_builder.dataset.options import ITEM_ORDERS, LOCAL_NAMESPACE, BuildOptions, check_repo_id, hub_id_problem, own_namespace
from tinybench_builder.dataset.original import check_reference, import_original
from tinybench_builder.dataset.versions import config_hashes, design_changes

__all__ = ["build_benchmark", "BuildOptions", "ITEM_ORDERS", "check_repo_id", "hub_id_problem", "own_namespace", "LOCAL_NAMESPACE", "parse_content_args",
           "import_original", "check_reference", "ANCHOR_MEAN", "TASK_SUFFIX", "check_task_names", "design_changes",
           "config_hashes"]
