"""Benchmark scripts (accuracy, speed, memory, ...): outside the package, not in the wheel.

Run them from the repository's top: ``python -m benchmarks.accuracy --help``,
``python -m benchmarks.speed --help``. Their caches live in ``benchmarks/cache/``; tables go to
``docs/BENCHMARKS.md`` through :mod:`benchmarks.docs_tables` (``--write-docs``).
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
