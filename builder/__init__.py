"""Build, estimate and publish tiny versions of LLM benchmarks.

Data flows one way::

    sources -> ResponseMatrix -> IRT fit -> anchors + calibration
            -> estimator side files -> tiny dataset folder -> release
"""

__version__ = "0.1.0"
