"""Benchmark scripts (accuracy, speed). Not part of the test run.

Run ``python -m tinybench_builder.bench.accuracy --help`` or ``python -m tinybench_builder.bench.speed --help``.
Every table records the BLAS thread count it was measured with (:func:`blas_threads`):
timings depend on it.
"""


__all__ = ["blas_threads"]


def blas_threads() -> int:
    """The number of threads the loaded BLAS libraries use now (1 when none is loaded)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return 1
    counts = [int(p.get("num_threads") or 1) for p in threadpool_info() if p.get("user_api") == "blas"]
    return max(counts, default=1)
