"""The DuckDB store: versioned schema, one transaction per run, read-only readers."""

from __future__ import annotations

import threading

import duckdb
import pytest

from evalcore.conformance.runner import SuiteReport
from evalcore.errors import StoreError
from evalcore.store.conformance import latest_conformance_run, record_conformance_run
from evalcore.store.db import SCHEMA_VERSION, connect, held_open
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


def test_a_reader_waits_out_a_writer_in_another_thread_of_the_same_process(tmp_path, monkeypatch):
    """The reader is refused while the writer is open, waits, and gets in once the writer closed.

    No sleep: the writer holds its connection until the reader has been refused at least once (seen through a
    recording `duckdb.connect`). Fails if `connect` gives up instead of waiting (StoreError), or if the reader got in
    while the writer was still open (refused stays unset and the writer would wait for ever: the join fails).
    """
    import threading

    db = tmp_path / "evals.duckdb"
    with connect(db):
        pass  # create and migrate
    writing, refused, closing = threading.Event(), threading.Event(), threading.Event()
    real_connect = duckdb.connect

    def recording_connect(*args, **kwargs):  # type: ignore[no-untyped-def]
        try:
            return real_connect(*args, **kwargs)
        except (duckdb.IOException, duckdb.ConnectionException):
            refused.set()
            raise

    def write_until_the_reader_was_refused() -> None:
        with connect(db) as connection:
            writing.set()
            assert refused.wait(120), "the reader was never refused while the writer was open"
            connection.execute("SELECT 1")
            closing.set()

    writer = threading.Thread(target=write_until_the_reader_was_refused)
    writer.start()
    assert writing.wait(120)
    monkeypatch.setattr(duckdb, "connect", recording_connect)
    with connect(db, read_only=True) as reader:  # DuckDB refuses this while the writer is open; connect waits
        assert refused.is_set() and closing.is_set()
        assert reader.execute("SELECT max(version) FROM schema_version").fetchone() == (SCHEMA_VERSION,)
    writer.join(120)
    assert not writer.is_alive()


def test_two_threads_each_hold_the_store_for_themselves_and_release_it_in_any_order(tmp_path):
    """Two runs side by side (a comparison's arms) store their batches from threads of their own, each inside its own
    `held_open`: one thread's block never takes over, or ends, the other's (the shared key once raised KeyError)."""
    import evalcore.store.db as db

    path = tmp_path / "e.duckdb"
    with connect(path) as connection:
        connection.execute("CREATE TABLE notes (text VARCHAR)")
    inside, release, errors = threading.Event(), threading.Event(), []

    def second() -> None:
        try:
            with held_open(path):
                assert (str(path.resolve()), threading.get_ident()) in db._HELD  # its own hold, not the first thread's
                with connect(path) as connection:
                    connection.execute("INSERT INTO notes VALUES ('second')")
                inside.set()
                assert release.wait(120)
        except BaseException as exc:  # reported to the test's thread
            errors.append(exc)
            inside.set()

    with held_open(path):
        other = threading.Thread(target=second)
        other.start()
        assert inside.wait(120)
        with connect(path) as connection:
            connection.execute("INSERT INTO notes VALUES ('first')")
    release.set()  # the first block ended before the second: the second still ends cleanly
    other.join(120)
    assert not other.is_alive() and errors == []
    assert db._HELD == {}
    with connect(path, read_only=True) as connection:
        assert sorted(connection.execute("SELECT text FROM notes").fetchall()) == [("first",), ("second",)]


def test_a_held_store_serves_every_connection_inside_and_is_closed_after(tmp_path):
    """Inside `held_open`, writers and readers share the one open database; afterwards the file is free again."""
    path = tmp_path / "e.duckdb"
    with held_open(path):
        with connect(path) as connection:
            connection.execute("CREATE TABLE notes (text VARCHAR)")
            connection.execute("INSERT INTO notes VALUES (?)", ["kept"])
        with connect(path, read_only=True) as connection:
            assert connection.execute("SELECT text FROM notes").fetchall() == [("kept",)]
        with held_open(path), connect(path) as connection:  # re-entrant
            connection.execute("INSERT INTO notes VALUES (?)", ["again"])
    reader = duckdb.connect(str(path), read_only=True)  # a fresh open in the other mode: nothing holds the file
    try:
        assert reader.execute("SELECT count(*) FROM notes").fetchone() == (2,)
    finally:
        reader.close()


def _memory_limit(connection) -> str:
    return connection.execute("SELECT current_setting('memory_limit')").fetchone()[0]


def test_the_last_writer_to_close_checkpoints_and_leaves_the_memory_limit_as_it_was(tmp_path):
    """The close of a store after writing checkpoints under `CHECKPOINT_MEMORY`; nothing stays in the WAL, and a store
    opened again in the same process has DuckDB's own memory limit."""
    path = tmp_path / "e.duckdb"
    fresh = duckdb.connect()
    default_limit = _memory_limit(fresh)
    fresh.close()
    with connect(path) as connection:
        connection.execute("CREATE TABLE notes (text VARCHAR)")
        connection.execute("INSERT INTO notes SELECT repeat('x', 200) FROM range(20000)")
        assert _memory_limit(connection) == default_limit  # the writes themselves are never capped
    assert not path.with_name(path.name + ".wal").exists()
    with connect(path) as connection:
        assert _memory_limit(connection) == default_limit
        assert connection.execute("SELECT count(*) FROM notes").fetchone() == (20000,)


@pytest.mark.parametrize("headroom", [0, -(2**40)], ids=["none", "refused"])
def test_the_tightest_cap_or_one_duckdb_refuses_loses_nothing(tmp_path, monkeypatch, headroom):
    """With no headroom above what DuckDB holds, the checkpoint still completes; a limit DuckDB refuses leaves the close
    to checkpoint uncapped. Either way every row is kept."""
    import evalcore.store.db as db

    monkeypatch.setattr(db, "CHECKPOINT_MEMORY", headroom)
    path = tmp_path / "e.duckdb"
    with connect(path) as connection:
        connection.execute("CREATE TABLE notes (text VARCHAR)")
        connection.execute("INSERT INTO notes SELECT repeat('x', 200) FROM range(20000)")
    with connect(path, read_only=True) as connection:
        assert connection.execute("SELECT count(*) FROM notes").fetchone() == (20000,)


def test_a_writer_still_open_in_another_thread_never_runs_under_the_cap(tmp_path):
    """DuckDB shares one instance among a process's connections to a file, and its memory limit is the instance's:
    when one thread's writer closes while another's is still writing, the cap must not reach the one still writing
    (its write could then fail for memory); the last to close checkpoints."""
    path = tmp_path / "e.duckdb"
    with connect(path) as connection:
        connection.execute("CREATE TABLE notes (text VARCHAR)")
    default_limit = None
    opened, first_closed, limits, errors = threading.Event(), threading.Event(), [], []

    def second() -> None:
        try:
            with connect(path) as connection:
                opened.set()
                assert first_closed.wait(120)
                limits.append(_memory_limit(connection))
                connection.execute("INSERT INTO notes VALUES ('second')")
        except BaseException as exc:  # reported to the test's thread
            errors.append(exc)
            opened.set()

    with connect(path) as connection:
        default_limit = _memory_limit(connection)
        other = threading.Thread(target=second)
        other.start()
        assert opened.wait(120)
        connection.execute("INSERT INTO notes VALUES ('first')")
    assert path.with_name(path.name + ".wal").exists()  # the first close did not checkpoint, so it set no cap
    first_closed.set()
    other.join(120)
    assert not other.is_alive() and errors == []
    assert limits == [default_limit]
    assert not path.with_name(path.name + ".wal").exists()  # the last close checkpointed
    with connect(path, read_only=True) as connection:
        assert sorted(connection.execute("SELECT text FROM notes").fetchall()) == [("first",), ("second",)]
