"""I/O layer: short-lived DuckDB connections and the versioned schema.

No connection outlives one batch of work, so a dashboard can read the file
while a run writes it. The schema carries a version; each change adds a
migration to `MIGRATIONS` and never edits an old one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import duckdb

from evalcore.errors import StoreError

MIGRATIONS: tuple[str, ...] = (
    # 1: Layer 0 conformance runs and their per-check results
    """
    CREATE TABLE conformance_runs (
        run_id VARCHAR PRIMARY KEY,
        started_at TIMESTAMPTZ NOT NULL,
        target VARCHAR NOT NULL,
        transport VARCHAR NOT NULL,
        protocol_version VARCHAR NOT NULL,
        runs INTEGER NOT NULL,
        passed BOOLEAN NOT NULL,
        duration_s DOUBLE NOT NULL,
        tool_policy VARCHAR NOT NULL,
        server_name VARCHAR,
        server_fingerprint VARCHAR,
        evalcore_version VARCHAR NOT NULL
    );
    CREATE TABLE conformance_checks (
        run_id VARCHAR NOT NULL REFERENCES conformance_runs (run_id),
        check_id VARCHAR NOT NULL,
        family VARCHAR NOT NULL,
        title VARCHAR NOT NULL,
        spec VARCHAR NOT NULL,
        level VARCHAR NOT NULL,
        passes INTEGER NOT NULL,
        runs INTEGER NOT NULL,
        verdict VARCHAR NOT NULL,
        detail VARCHAR NOT NULL,
        PRIMARY KEY (run_id, check_id)
    );
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


@contextlib.contextmanager
def connect(path: Path, *, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open the store for one batch of work, migrating it first when writing."""
    try:
        if read_only:
            if not path.exists():
                raise StoreError(f"no results store at {path}; run a command that records results first")
            connection = duckdb.connect(str(path), read_only=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            connection = duckdb.connect(str(path))
    except duckdb.Error as exc:
        raise StoreError(f"cannot open the results store {path}: {exc}") from exc
    try:
        if not read_only:
            _migrate(connection, path)
        yield connection
    finally:
        connection.close()


def _migrate(connection: duckdb.DuckDBPyConnection, path: Path) -> None:
    connection.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = connection.execute("SELECT max(version) FROM schema_version").fetchone()
    current = row[0] if row and row[0] is not None else 0
    if current > SCHEMA_VERSION:
        raise StoreError(f"{path} has schema version {current}, newer than this evalcore ({SCHEMA_VERSION}); upgrade evalcore")
    for version in range(current + 1, SCHEMA_VERSION + 1):
        connection.execute("BEGIN TRANSACTION")
        try:
            connection.execute(MIGRATIONS[version - 1])
            connection.execute("INSERT INTO schema_version VALUES (?)", [version])
            connection.execute("COMMIT")
        except duckdb.Error as exc:
            connection.execute("ROLLBACK")
            raise StoreError(f"cannot migrate {path} to schema version {version}: {exc}") from exc
