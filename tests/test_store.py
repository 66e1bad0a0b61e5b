"""The DuckDB store: versioned schema, one transaction per run, read-only readers."""

from __future__ import annotations

import duckdb
import pytest

from evalcore.conformance.runner import SuiteReport
from evalcore.errors import StoreError
from evalcore.store.conformance import latest_conformance_run, record_conformance_run
from evalcore.store.db import SCHEMA_VERSION, connect
from tests.builders import conformance_report


def test_record_and_read_back(tmp_path):
    db = tmp_path / "nested" / "evals.duckdb"
    first = record_conformance_run(db, conformance_report(passed_check=False))
    second = record_conformance_run(db, conformance_report())
    assert first != second
    latest = latest_conformance_run(db)
    assert latest is not None and latest["run_id"] == second and latest["passed"] is True
    assert [c["check_id"] for c in latest["checks"]] == ["discover.responds", "headers.method_required"]
    assert latest_conformance_run(db, target="http://elsewhere/mcp") is None


def test_schema_version_recorded_once(tmp_path):
    db = tmp_path / "evals.duckdb"
    record_conformance_run(db, conformance_report())
    record_conformance_run(db, conformance_report())
    with connect(db, read_only=True) as connection:
        versions = connection.execute("SELECT version FROM schema_version ORDER BY version").fetchall()
    assert versions == [(v,) for v in range(1, SCHEMA_VERSION + 1)]


def test_newer_schema_is_refused(tmp_path):
    db = tmp_path / "evals.duckdb"
    record_conformance_run(db, conformance_report())
    connection = duckdb.connect(str(db))
    connection.execute("INSERT INTO schema_version VALUES (?)", [SCHEMA_VERSION + 1])
    connection.close()
    with pytest.raises(StoreError, match="newer than this evalcore"):
        record_conformance_run(db, conformance_report())


def test_reading_a_missing_store_says_what_to_do(tmp_path):
    with pytest.raises(StoreError, match="run a command that records results first"):
        latest_conformance_run(tmp_path / "none.duckdb")


def test_a_failed_write_leaves_no_partial_run(tmp_path):
    db = tmp_path / "evals.duckdb"
    record_conformance_run(db, conformance_report())
    duplicate_checks = conformance_report()
    duplicate_checks = SuiteReport(**{**duplicate_checks.__dict__, "checks": duplicate_checks.checks + duplicate_checks.checks[:1]})
    with pytest.raises(StoreError):
        record_conformance_run(db, duplicate_checks)
    with connect(db, read_only=True) as connection:
        assert connection.execute("SELECT count(*) FROM conformance_runs").fetchone() == (1,)


def test_a_reader_waits_out_a_writer_in_another_thread_of_the_same_process(tmp_path):
    import threading
    import time

    db = tmp_path / "evals.duckdb"
    with connect(db):
        pass  # create and migrate
    writing, released = threading.Event(), threading.Event()

    def write_for_a_while() -> None:
        with connect(db) as connection:
            writing.set()
            time.sleep(0.3)
            connection.execute("SELECT 1")
        released.set()

    writer = threading.Thread(target=write_for_a_while)
    writer.start()
    writing.wait(10)
    with connect(db, read_only=True) as reader:  # DuckDB refuses this while the writer is open; connect waits
        assert released.is_set()
        assert reader.execute("SELECT max(version) FROM schema_version").fetchone() == (SCHEMA_VERSION,)
    writer.join(10)
