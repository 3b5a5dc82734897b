"""Stage 2, model: a score matrix -> the estimator side files (IRT, anchors, regression, calibration).

:func:`fit_estimator` fits the multidimensional 2PL IRT model (:mod:`builder.model.irt`), draws
the anchors (:mod:`builder.model.anchors`: a stratified random sample, or the original k-means
design), fits the regression and calibrates the estimate and its interval on held-out training
models (cross-fitting, :mod:`builder.model.fitting`); :class:`FitOptions` holds its settings.
The result is a :class:`builder.estimator.TinyEstimator` and a validation report.
"""

from builder.model.extend import extend_estimator
from builder.model.fitting import FitResult, fit_estimator, report_markdown
from builder.model.memory import keep_freed_blocks
from builder.model.options import FitOptions, check_binarize
from builder.params import DESIGNS  # the one list (builder/params.py), exported here as before

__all__ = ["fit_estimator", "extend_estimator", "FitResult", "FitOptions", "DESIGNS", "check_binarize", "report_markdown",
           "keep_freed_blocks"]
