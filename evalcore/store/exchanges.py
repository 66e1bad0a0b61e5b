"""I/O layer: record and read the MCP exchanges of behaviour runs (`run_exchanges`), the recording a replay serves."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import duckdb

from evalcore.records import RecordedExchange
from evalcore.store.db import connect, insert_rows
from evalcore.store.export import export_query

EXPORT_SQL = "SELECT run_id, sequence, method, params_json, answer_json, failure, conversation FROM run_exchanges ORDER BY run_id, sequence"


def write_exchanges(path: Path, run_id: str, exchanges: Sequence[RecordedExchange]) -> None:
    """Append a run's recorded exchanges, numbered on from those it already has (a resumed run continues its recording)."""
    if not exchanges:
        return
    with connect(path) as connection:
        connection.execute("BEGIN TRANSACTION")
        row = connection.execute("SELECT coalesce(max(sequence), 0) FROM run_exchanges WHERE run_id = ?", [run_id]).fetchone()
        offset = int(row[0]) if row else 0
        rows = [[run_id, offset + number, *row[1:]] for number, row in enumerate(RecordedExchange.to_rows(exchanges), start=1)]
        insert_rows(connection, "run_exchanges", "run_id, sequence, method, params_json, answer_json, failure, conversation", rows)
        connection.execute("COMMIT")


def load_exchanges(path: Path, run_id: str, method: str | None = None) -> list[RecordedExchange]:
    """A run's recorded exchanges in their order (of one method, when given); [] for a run recorded before schema 11."""
    with connect(path, read_only=True) as connection:
        try:
            rows = connection.execute(
                "SELECT sequence, method, params_json, answer_json, failure, conversation FROM run_exchanges WHERE run_id = ? AND (? IS NULL OR method = ?) "
                "ORDER BY sequence",
                [run_id, method, method],
            ).fetchall()
        except duckdb.CatalogException:  # a store no writer has migrated to schema 11 yet
            return []
    return [exchange_from_row(row) for row in rows]


def exchange_from_row(row: Sequence[Any]) -> RecordedExchange:
    """A stored exchange (`RecordedExchange.to_rows`' columns: sequence, method, params, answer, failure, conversation) as its record."""
    sequence, method, params, answer, failure, conversation = row
    return RecordedExchange(int(sequence), method, json.loads(params), json.loads(answer) if answer else None, failure, conversation)


def exchanges_export(path: Path, file_format: Literal["csv", "parquet"] = "csv") -> bytes:
    """Every recorded exchange as CSV or Parquet bytes, written by DuckDB; b"" when there are none."""
    return export_query(path, EXPORT_SQL, [], file_format, "run_exchanges")
