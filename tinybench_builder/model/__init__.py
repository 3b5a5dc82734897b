"""Stage 2, model: a score matrix -> the estimator side files (IRT, anchors, regression, calibration).

:func:`fit_estimator` fits the multidimensional 2PL IRT model (:mod:`tinybench_builder.model.irt`), draws
the anchors (:mod:`tinybench_builder.model.anchors`: a stratified random sample, or the original k-means
design), fits the regression and calibrates the estimate and its interval on held-out training
models (cross-fitting, :mod:`tinybench_builder.model.fitting`; what it measures there:
:mod:`tinybench_builder.model.report`); :class:`FitOptions` holds its settings.
The result is a :class:`tinybench_builder.estimator.TinyEstimator` and a validation report.
"""

from tinybench_builder.model.extend import extend_estimator
from tinybench_builder.model.fitting import FitResult, fit_estimator
from tinybench_builder.model.memory import keep_freed_blocks
from tinybench_builder.model.options import FitOptions, check_binarize
from tinybench_builder.model.report import report_markdown
from tinybench_builder.params import DESIGNS  # the one list (tinybench_builder/params.py), exported here as before

__all__ = ["fit_estimator", "extend_estimator", "FitResult", "FitOptions", "DESIGNS", "check_binarize", "report_markdown",
           "keep_freed_blocks"]
