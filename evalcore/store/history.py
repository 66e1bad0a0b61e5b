"""I/O layer: read the per-run, per-case history of Layer 1 behaviour runs for drift detection (read-only)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from evalcore.drift import RunPoint
from evalcore.errors import StoreError
from evalcore.store.db import connect
from evalcore.store.queries import run_metric_sets

# One row per complete run x model x case; mode() is the most common model version the provider reported in that run.
# Passes and runs come from the run's metrics (`evalcore.scoring.metrics`), not from counting here.
_RUN_POINTS_SQL = """
SELECT a.model, a.case_id, r.run_id, r.run_date,
       r.server_fingerprint, mode(a.case_hash) AS case_hash, mode(a.model_version) AS model_version,
       r.golden_hash, r.server_tools_json, bool_or(a.simulated) AS simulated
FROM behaviour_attempts a
JOIN behaviour_runs r ON a.run_id = r.run_id
WHERE r.status = 'complete' AND (? IS NULL OR r.golden_path = ?)
GROUP BY a.model, a.case_id, r.run_id, r.run_date, r.started_at, r.server_fingerprint, r.golden_hash, r.server_tools_json
ORDER BY r.run_date, r.started_at, a.model, a.case_id
"""


def run_points(path: Path, golden_path: str | None = None) -> list[RunPoint]:
    """Passes/runs per complete run x model x case, ordered by run date then start time; [] without a store.

    `runs` is the case's scored attempts (errored ones are in no denominator); a case with none is left out.
    """
    if not path.exists():
        return []
    with connect(path, read_only=True) as connection:
        if not _has_behaviour_tables(connection):
            return []
        rows = connection.execute(_RUN_POINTS_SQL, [golden_path, golden_path]).fetchall()
    sets = run_metric_sets(path, sorted({row[2] for row in rows}))
    counts = {(run_id, s.model, s.case_id): (s.get("passes"), s.get("scored")) for run_id, (found, _) in sets.items() for s in found if s.scope == "case"}
    points = []
    for model, case_id, run_id, run_date, fingerprint, case_hash, model_version, golden_hash, tools_json, simulated in rows:
        passes, scored = counts.get((run_id, model, case_id), (None, None))
        if not scored or passes is None:
            continue
        points.append(
            RunPoint(
                model=model,
                case_id=case_id,
                run_id=run_id,
                run_date=run_date,
                passes=int(passes),
                runs=int(scored),
                server_fingerprint=fingerprint,
                case_hash=case_hash,
                model_version=model_version,
                golden_hash=golden_hash,
                server_tools_json=tools_json,
                simulated=bool(simulated),
            )
        )
    return points


def server_tools(path: Path, run_id: str) -> list[dict[str, Any]]:
    """The [{name, description}, ...] list stored with a behaviour run."""
    with connect(path, read_only=True) as connection:
        row = connection.execute("SELECT server_tools_json FROM behaviour_runs WHERE run_id = ?", [run_id]).fetchone()
    if row is None:
        raise StoreError(f"no behaviour run {run_id!r} in {path}; `python -m evalcore runs` lists them")
    tools = json.loads(row[0])
    return [t for t in tools if isinstance(t, dict)]


def count_behaviour_runs(path: Path, *, pid: int | None = None, since: datetime | None = None) -> int:
    """How many behaviour runs (any status) the store holds, or those one process started since a time; 0 without a store."""
    if not path.exists():
        return 0
    with connect(path, read_only=True) as connection:
        if not _has_behaviour_tables(connection):
            return 0
        row = connection.execute(
            "SELECT count(*) FROM behaviour_runs WHERE (? IS NULL OR pid = ?) AND (?::TIMESTAMPTZ IS NULL OR started_at >= ?::TIMESTAMPTZ)",
            [pid, pid, since, since],
        ).fetchone()
    return int(row[0]) if row else 0


def _has_behaviour_tables(connection: duckdb.DuckDBPyConnection) -> bool:
    row = connection.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", ["behaviour_runs"]).fetchone()
    return bool(row and row[0])
