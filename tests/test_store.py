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


def _store_one_batch_short_of_a_full_row_group(path) -> None:
    """A table of 122,000 rows (192-byte strings, some 23 MB) in one row group, then five batches of 200, each in an open
    of its own (a row group each): the fifth's checkpoint carries the table past a full row group (122,880 rows), and
    DuckDB's merge re-reads the large one."""
    with connect(path) as connection:
        connection.execute("CREATE TABLE notes (text VARCHAR)")
        connection.execute("INSERT INTO notes SELECT repeat(md5(i::VARCHAR), 6) FROM range(122000) r(i)")
    for _ in range(5):
        with connect(path) as connection:
            connection.execute("INSERT INTO notes SELECT repeat(md5(i::VARCHAR), 6) FROM range(200) r(i)")


def test_the_checkpoint_after_a_write_runs_under_the_cap_and_leaves_the_limit_as_it_was(tmp_path, monkeypatch):
    """What DuckDB holds right after the checkpoint that merges the large row group: uncapped, the blocks it re-read stay
    in its buffer pool; capped, they were let go as it went. Either way the limit is DuckDB's own again after."""
    import evalcore.store.db as db

    held: dict[str, list[float]] = {"capped": [], "uncapped": []}
    limits: list[str] = []
    checkpoint_capped = db._checkpoint_capped

    def observed(connection) -> bool:
        usable = checkpoint_capped(connection)
        if db.CHECKPOINT_MEMORY is None:  # the close would checkpoint uncapped: done here, to be seen
            connection.execute("CHECKPOINT")
        row = connection.execute("SELECT sum(memory_usage_bytes) FROM duckdb_memory()").fetchone()
        held["uncapped" if db.CHECKPOINT_MEMORY is None else "capped"].append(row[0] / 1e6)
        limits.append(_memory_limit(connection))
        return usable

    monkeypatch.setattr(db, "_checkpoint_capped", observed)
    monkeypatch.setattr(db, "CHECKPOINT_MEMORY", 8 * 1024 * 1024)
    _store_one_batch_short_of_a_full_row_group(tmp_path / "capped.duckdb")
    monkeypatch.setattr(db, "CHECKPOINT_MEMORY", None)
    _store_one_batch_short_of_a_full_row_group(tmp_path / "uncapped.duckdb")
    fresh = duckdb.connect()
    assert set(limits) == {_memory_limit(fresh)}
    fresh.close()
    assert held["uncapped"][-1] > 10  # the merge's blocks, some 14 MB
    assert held["capped"][-1] < 8
    with connect(tmp_path / "capped.duckdb", read_only=True) as connection:
        assert connection.execute("SELECT count(*) FROM notes").fetchone() == (123000,)


def test_a_checkpoint_duckdb_gives_up_under_the_cap_is_made_uncapped(tmp_path, monkeypatch):
    """Under too tight a cap DuckDB gives the merge up and its instance with it (a "fatal" error): the close checkpoints
    again in a new instance, uncapped, so no WAL is left behind and every row is kept."""
    import evalcore.store.db as db

    monkeypatch.setattr(db, "CHECKPOINT_MEMORY", 1024 * 1024)
    path = tmp_path / "e.duckdb"
    _store_one_batch_short_of_a_full_row_group(path)
    assert not path.with_name(path.name + ".wal").exists()
    with connect(path, read_only=True) as connection:
        assert connection.execute("SELECT count(*) FROM notes").fetchone() == (123000,)


def test_a_cap_duckdb_refuses_loses_nothing(tmp_path, monkeypatch):
    """A limit DuckDB refuses (below what it holds: here 1 byte) leaves the close to checkpoint uncapped; every row is kept."""
    import evalcore.store.db as db

    monkeypatch.setattr(db, "CHECKPOINT_MEMORY", -(2**40))
    path = tmp_path / "e.duckdb"
    with connect(path) as connection:
        connection.execute("CREATE TABLE notes (text VARCHAR)")
        connection.execute("INSERT INTO notes SELECT repeat('x', 200) FROM range(20000)")
    assert not path.with_name(path.name + ".wal").exists()
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
