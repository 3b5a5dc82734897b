"""Stage 4, dataset: a Hub-ready tiny dataset folder from a benchmark's responses and content.

:func:`build_benchmark` reads the inputs (:mod:`builder.dataset.responses`,
:mod:`builder.dataset.content`), fits the estimators (stage 2), plans the folder without writing
(:mod:`builder.dataset.plan`) and writes it: the data parquet of every config and split, the
estimator side files, the lm-eval task files (:mod:`builder.dataset.harness_tasks`), the card
(:mod:`builder.dataset.cards`) and the manifest (:mod:`builder.layout`). :func:`import_original`
turns the original release's pickle into estimator side files. :class:`BuildOptions` holds a
build's settings.
"""

from builder.dataset.build import build_benchmark
from builder.dataset.content import parse_content_args
from builder.dataset.options import ITEM_ORDERS, LOCAL_NAMESPACE, BuildOptions, check_repo_id, hub_id_problem, own_namespace
from builder.dataset.original import check_reference, import_original
from builder.dataset.versions import config_hashes, design_changes

__all__ = ["build_benchmark", "BuildOptions", "ITEM_ORDERS", "check_repo_id", "hub_id_problem", "own_namespace", "LOCAL_NAMESPACE", "parse_content_args",
           "import_original", "check_reference", "design_changes", "config_hashes"]
