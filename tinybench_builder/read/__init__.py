"""Stage 1, read: evaluation outputs of any format -> one :class:`ResponseMatrix` (models x items).

Score tables (wide or long, parquet or CSV, read strictly) and the readers of
:mod:`tinybench_builder.read.sources` (lm-eval logs, Open LLM Leaderboard details, AlpacaEval, HELM, the
legacy pickle) all land in a :class:`ResponseMatrix`: scores in [0, 1], NaN = not evaluated
(a big wide parquet table is read straight into :class:`CompactScores`: 0/1 scores as bytes).
:func:`ingest` detects each source's format, reads it model by model (a local process pool or a
Dask cluster) and merges the parts; :func:`simulate_responses` makes a matrix from known IRT
parameters. Later stages use only the names below.
"""

from tinybench_builder.read.compact import CompactScores, row_chunks
from tinybench_builder.read.csv_table import check_csv_shape
from tinybench_builder.read.hub_requests import (
    DEFAULT_HUB_TIMEOUT, HUB_TIMEOUT_ENV, bound_hub_requests, hub_endpoint, hub_timed_out, hub_timeout,
)
from tinybench_builder.read.ingest import FORMATS, IncompleteIngest, IngestResult, detect_source, ingest, ingest_with_report
from tinybench_builder.read.matrix import (MAX_PARQUET_COLUMNS, MatrixFormatError, ResponseMatrix, subscenario_of,
                                           table_format)
from tinybench_builder.read.simulate import simulate_responses
from tinybench_builder.read.sources import ModelUnavailable, SourceError
from tinybench_builder.read.sources._common import UnitFailure, doc_index, iter_records, read_json, walk_files
from tinybench_builder.read.sources.dask_map import ClusterError
from tinybench_builder.read.sources.legacy_pickle import safe_load
from tinybench_builder.read.sources.lm_eval import (
    is_results, model_name_from_folder, model_name_from_results, norm_ts, read_samples_file, results_ts,
    split_samples_name,
)
from tinybench_builder.read.sources.tables import is_table

__all__ = [
    # the matrix and score tables
    "ResponseMatrix", "MatrixFormatError", "MAX_PARQUET_COLUMNS", "subscenario_of", "table_format", "check_csv_shape", "is_table",
    "simulate_responses",
    # compact storage of big matrices (0/1 scores as bytes, a separate mask) and its row blocks
    "CompactScores", "row_chunks",
    # reading evaluation outputs
    "ingest", "ingest_with_report", "detect_source", "FORMATS", "IngestResult", "IncompleteIngest",
    "SourceError", "ModelUnavailable", "ClusterError", "UnitFailure",
    # file helpers of the readers, for the estimate stage's log reader and the content tables
    "walk_files", "read_json", "iter_records", "doc_index", "safe_load",
    # lm-eval ``--log_samples`` folders (the estimate stage reads logs of tiny tasks)
    "split_samples_name", "read_samples_file", "is_results", "results_ts", "norm_ts",
    "model_name_from_folder", "model_name_from_results",
    # the bound on every Hub request (readers of Hub models, and the release stage's pushes)
    "HUB_TIMEOUT_ENV", "DEFAULT_HUB_TIMEOUT", "hub_timeout", "bound_hub_requests", "hub_timed_out", "hub_endpoint",
]
