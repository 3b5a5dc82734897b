"""Stage 6, estimate: full-score estimates of new models, from score tables or lm-eval logs.

:func:`estimate_table` reads only the anchor columns of a score table and estimates every row
with the folder's :class:`~tinybench_builder.estimator.TinyEstimator`; :func:`estimate_from_logs` matches
lm-evaluation-harness logs of a tiny task to the anchors by document; :func:`write_estimates`
writes the result as CSV, TSV, JSON or parquet; :func:`run_adaptive` runs adaptive sessions
(``TinyEstimator.adaptive``) against a table of known answers.
"""

from tinybench_builder.estimate.harness_logs import estimate_from_logs
from tinybench_builder.estimate.adaptive_run import run_adaptive
from tinybench_builder.estimate.tables import check_output, estimate_table, write_estimates

__all__ = ["estimate_table", "estimate_from_logs", "write_estimates", "check_output", "run_adaptive"]
