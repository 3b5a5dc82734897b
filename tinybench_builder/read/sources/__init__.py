"""Readers: turn real evaluation outputs into :class:`~tinybench_builder.read.matrix.ResponseMatrix` objects.

One module per source format; every reader returns a ``ResponseMatrix``:

* :mod:`.lm_eval`: lm-evaluation-harness ``--log_samples`` folders (v0.4.0 - v0.4.x),
  also the Open LLM Leaderboard v2 details (same record format);
* :mod:`.open_llm_leaderboard`: Open LLM Leaderboard v1 details (parquet per task and run),
  v2 details, and thin Hub download helpers;
* :mod:`.alpaca_eval`: AlpacaEval ``<model>/<annotator>/annotations.json`` folders;
* :mod:`.helm`: HELM run folders (``run_spec.json``, ``per_instance_stats.json``, ``instances.json``);
* :mod:`.legacy_pickle`: the legacy tinyBenchmarks pickle, read with a restricted unpickler;
* :mod:`.tables`: wide/long parquet or CSV score tables (:meth:`ResponseMatrix.read`).

Item ids follow the matrix convention: ``<index>`` for a single task, ``<subscenario>.<index>``
for a task with subscenarios (MMLU subjects), and ``<scenario>.<...>`` when several tasks are
read into one matrix. :func:`tinybench_builder.read.ingest.ingest` detects the format and merges sources.
"""

from __future__ import annotations

from tinybench_builder.errors import ModelUnavailable, SourceError


__all__ = ["SourceError", "ModelUnavailable"]
