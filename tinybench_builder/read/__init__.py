"""Stage 1, read: evaluation outputs of any format -> one :class:`ResponseMatrix` (models x items).

Score tables (wide or long, parquet or CSV, read strictly) and the readers of
:mod:`tinybench_builder.read.sources` (lm-eval logs, Open LLM Leaderboard details, AlpacaEval, HELM, the
legacy pickle) all land in a :class:`ResponseMatrix`: scores in [0, 1], NaN = not evaluated
(a big wide parquet table is read straight into :class:`CompactScores`: 0/1 scores as bytes).
:func:`ingest` detects each source's format, reads it model by model (a local process pool or a
Dask cluster) and merges the parts; :func:`simulate_responses` makes a matrix from known IRT
parameters. Later stages use only the names below; the helpers every stage shares (reading JSON,
JSON lines and folders, document ids, restricted pickles, the bound on Hub requests) are kernel
modules: :mod:`tinybench_builder.inputs`, :mod:`tinybench_builder.safe_pickle`,
:mod:`tinybench_builder.hub_requests`.
"""

from tinybench_builder.read.compact import CompactScores, row_chunks
from tinybench_builder.read.csv_table import check_csv_shape
from tinybench_builder.read.ingest import FORMATS, IncompleteIngest, IngestResult, detect_source, ingest, ingest_with_report
from tinybench_builder.read.matrix import (MAX_PARQUET_COLUMNS, MatrixFormatError, ResponseMatrix, subscenario_of,
                                           table_format)
from tinybench_builder.read.simulate import simulate_responses
from tinybench_builder.read.sources import ModelUnavailable, SourceError
from tinybench_builder.read.sources._common import UnitFailure
from tinybench_builder.read.sources.dask_map import ClusterError
from tinybench_builder.read.sources.lighteval import (choose_run, is_lighteval_details, lighteval_runs, model_of,
                                                      pick_metric, read_details, record_item, record_value)
from tinybench_builder.read.sources.lm_eval import (
    is_results, model_name_from_folder, model_name_from_results, model_named_in_results, norm_ts, read_samples_file,
    results_ts, split_samples_name,
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
    # lm-eval ``--log_samples`` folders (the estimate stage reads logs of tiny tasks)
    "split_samples_name", "read_samples_file", "is_results", "results_ts", "norm_ts",
    "model_name_from_folder", "model_name_from_results", "model_named_in_results",
    # lighteval --save-details folders (the estimate stage reads details of tiny tasks)
    "is_lighteval_details", "lighteval_runs", "read_details", "record_item", "record_value", "pick_metric",
    "choose_run", "model_of",
]
