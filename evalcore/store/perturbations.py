"""I/O layer: record and read perturbation sweeps (`evalcore perturb`): a baseline run, its perturbed arms, the report.

Each arm is also stored as a comparison with the baseline (`store.comparisons`, candidate_kind `perturbation`).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from evalcore import __version__
from evalcore.store.db import connect, report_rows
from evalcore.store.export import export_query

# One row per sweep x perturbation x model (tool empty), then per (model, tool): each stored report's rows, flattened.
_COUNTS = ", ".join(
    f"CAST(json_extract(v, '$.{arm}.{count}') AS INTEGER) AS {arm}_{count}"
    for arm in ("baseline", "perturbed")
    for count in ("correct", "scored", "errored", "attempts")
)
EXPORT_SQL = f"""
WITH sensitivity_rows AS (
    SELECT p.perturb_id, p.created_at, p.baseline_run_id, p.golden_path, p.alpha, e.value AS v, 0 AS scope_order
    FROM perturbations p, json_each(json_extract(p.report_json, '$.models')) e
    UNION ALL
    SELECT p.perturb_id, p.created_at, p.baseline_run_id, p.golden_path, p.alpha, e.value, 1
    FROM perturbations p, json_each(json_extract(p.report_json, '$.tools')) e
)
SELECT perturb_id, created_at, baseline_run_id, golden_path, alpha,
       json_extract_string(v, '$.perturbation') AS perturbation, json_extract_string(v, '$.model') AS model,
       json_extract_string(v, '$.tool') AS tool, {_COUNTS},
       CAST(json_extract(v, '$.drop') AS DOUBLE) AS drop,
       CAST(json_extract(v, '$.ci[0]') AS DOUBLE) AS ci_low, CAST(json_extract(v, '$.ci[1]') AS DOUBLE) AS ci_high,
       CAST(json_extract(v, '$.pValue') AS DOUBLE) AS p_value, CAST(json_extract(v, '$.qValue') AS DOUBLE) AS q_value,
       json_extract_string(v, '$.verdict') AS verdict
FROM sensitivity_rows
ORDER BY created_at, perturb_id, scope_order, perturbation, model, tool
"""


def write_perturbation(path: Path, *, perturb_id: str, baseline_run_id: str, golden_path: str, alpha: float, failed: bool, report: dict[str, Any]) -> None:
    with connect(path) as connection:
        connection.execute(
            "INSERT INTO perturbations (perturb_id, created_at, baseline_run_id, golden_path, alpha, failed, report_json, evalcore_version) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [perturb_id, datetime.now(UTC), baseline_run_id, golden_path, alpha, failed, json.dumps(report), __version__],
        )


def list_perturbations(path: Path) -> list[dict[str, Any]]:
    """Every stored sweep, newest first, with its report parsed (`report`)."""
    return report_rows(path, "perturbations")


def perturbations_export(path: Path, file_format: Literal["csv", "parquet"] = "csv") -> bytes:
    """Every stored sweep's sensitivity rows as CSV or Parquet bytes, written by DuckDB (no rows: a header only; no store: b"")."""
    return export_query(path, EXPORT_SQL, [], file_format, "perturbations")
