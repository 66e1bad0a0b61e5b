"""I/O layer: record and read comparisons (`evalcore compare`): two stored behaviour runs linked as one, with the report."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from evalcore import __version__
from evalcore.store.db import connect


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
    if not path.exists():
        return []
    with connect(path, read_only=True) as connection:
        try:
            cursor = connection.execute("SELECT * FROM comparisons ORDER BY created_at DESC")
        except duckdb.CatalogException:  # a store no writer has migrated to schema 9 yet
            return []
        columns = [d[0] for d in cursor.description]
        rows = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
    for row in rows:
        row["report"] = json.loads(row.pop("report_json"))
    return rows
