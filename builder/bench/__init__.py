"""Benchmark scripts (accuracy, speed). Not part of the test run.

Run ``python -m builder.bench.accuracy --help`` or ``python -m builder.bench.speed --help``.
"""
