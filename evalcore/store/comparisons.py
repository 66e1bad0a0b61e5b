"""I/O layer: record and read comparisons (`evalcore compare`): two stored behaviour runs linked as one, with the report."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from evalcore import __version__
from evalcore.store.db import connect, report_rows
from evalcore.store.export import export_query

# One row per comparison x (model, case), then per model (case_id NULL): each stored report's verdict rows, flattened.
_COUNTS = ", ".join(
    f"CAST(json_extract(v, '$.{arm}.{count}') AS INTEGER) AS {arm}_{count}"
    for arm in ("baseline", "candidate")
    for count in ("passed", "scored", "errored", "attempts")
)
EXPORT_SQL = f"""
WITH verdict_rows AS (
    SELECT c.comparison_id, c.created_at, c.baseline_run_id, c.candidate_run_id, c.candidate_kind, c.alpha, e.value AS v, 0 AS scope_order
    FROM comparisons c, json_each(json_extract(c.report_json, '$.cases')) e
    UNION ALL
    SELECT c.comparison_id, c.created_at, c.baseline_run_id, c.candidate_run_id, c.candidate_kind, c.alpha, e.value, 1
    FROM comparisons c, json_each(json_extract(c.report_json, '$.models')) e
)
SELECT comparison_id, created_at, baseline_run_id, candidate_run_id, candidate_kind, alpha,
       json_extract_string(v, '$.model') AS model, json_extract_string(v, '$.case') AS case_id, {_COUNTS},
       CAST(json_extract(v, '$.delta') AS DOUBLE) AS delta,
       CAST(json_extract(v, '$.ci[0]') AS DOUBLE) AS ci_low, CAST(json_extract(v, '$.ci[1]') AS DOUBLE) AS ci_high,
       CAST(json_extract(v, '$.pValue') AS DOUBLE) AS p_value, CAST(json_extract(v, '$.qValue') AS DOUBLE) AS q_value,
       json_extract_string(v, '$.verdict') AS verdict, CAST(json_extract(v, '$.runsNeeded') AS INTEGER) AS runs_needed
FROM verdict_rows
ORDER BY created_at, comparison_id, scope_order, model, case_id
"""


def write_comparison(
    path: Path,
    *,
    comparison_id: str,
    baseline_run_id: str,
    candidate_run_id: str,
    candidate_kind: str,
    candidate: str,
    alpha: float,
    failed: bool,
    report: dict[str, Any],
) -> None:
    with connect(path) as connection:
        connection.execute(
            "INSERT INTO comparisons (comparison_id, created_at, baseline_run_id, candidate_run_id, candidate_kind, candidate, alpha, failed, "
            "report_json, evalcore_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [comparison_id, datetime.now(UTC), baseline_run_id, candidate_run_id, candidate_kind, candidate, alpha, failed, json.dumps(report), __version__],
        )


def list_comparisons(path: Path) -> list[dict[str, Any]]:
    """Every stored comparison, newest first, with its report parsed (`report`)."""
    return report_rows(path, "comparisons")


def comparisons_export(path: Path, file_format: Literal["csv", "parquet"] = "csv") -> bytes:
    """Every stored comparison's verdict rows as CSV or Parquet bytes, written by DuckDB (no rows: a header only; no store: b"")."""
    return export_query(path, EXPORT_SQL, [], file_format, "comparisons")
