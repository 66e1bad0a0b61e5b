"""A conformance run is stored with the era it found; a store written before the era was recorded migrates and reads NULL."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb

from evalcore.conformance.runner import CheckReport, SuiteReport
from evalcore.dashboard import queries
from evalcore.store.conformance import conformance_runs, latest_conformance_run, record_conformance_run
from evalcore.store.db import MIGRATIONS, connect
from tests.builders import migrate_to

ERA_MIGRATION = next(index for index, step in enumerate(MIGRATIONS) if isinstance(step, str) and "ADD COLUMN era " in step)


def _report(era: str, summary: str) -> SuiteReport:
    checks = (CheckReport("discover.responds", "discover", "t", "spec", "MUST", 5, 5, "pass", "ok"),)
    return SuiteReport("http://127.0.0.1:1/mcp", "http", 5, "readonly", datetime.now(UTC), 0.5, "abc", "Demo 1", checks, era=era, era_summary=summary)  # type: ignore[arg-type]


def test_the_era_is_stored_with_the_run_and_read_by_every_reader(tmp_path):
    db = tmp_path / "evals.duckdb"
    summary = "era: dual-era (server/discover lists 2026-07-28; legacy initialize accepted (2025-11-25))"
    run_id = record_conformance_run(db, _report("dual-era", summary))
    latest = latest_conformance_run(db)
    assert latest is not None and latest["run_id"] == run_id
    assert (latest["era"], latest["era_summary"]) == ("dual-era", summary)
    assert conformance_runs(db)[0]["era"] == "dual-era"
    assert list(queries.conformance_runs(db)["era"]) == ["dual-era"]
    assert list(queries.latest_conformance_verdict(db)["era"]) == ["dual-era"]


def _store_before_the_era(path: Path) -> None:
    connection = duckdb.connect(str(path))
    migrate_to(connection, ERA_MIGRATION)
    connection.execute(
        "INSERT INTO conformance_runs VALUES ('old', ?, 'http://127.0.0.1:1/mcp', 'http', '2026-07-28', 5, true, 0.5, 'readonly', NULL, 'fp', '0')",
        [datetime(2026, 1, 1, tzinfo=UTC)],
    )
    connection.close()


def test_a_store_from_before_the_era_migrates_and_its_old_runs_read_no_era(tmp_path):
    db = tmp_path / "old.duckdb"
    _store_before_the_era(db)
    with connect(db) as connection:  # a writer's connection migrates
        assert connection.execute("SELECT era, era_summary FROM conformance_runs WHERE run_id = 'old'").fetchone() == (None, None)
    record_conformance_run(db, _report("modern-only", "era: modern-only (legacy initialize refused)"))
    eras = {row["run_id"]: row["era"] for row in conformance_runs(db)}
    assert eras.pop("old") is None and list(eras.values()) == ["modern-only"]
