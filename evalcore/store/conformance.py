"""I/O layer: record and read Layer 0 conformance runs.

The store knows a suite report only by the fields it writes (`ConformanceRun`, which
`evalcore.conformance.runner.SuiteReport` has): it imports nothing above the records.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import duckdb

from evalcore.errors import StoreError
from evalcore.store.db import connect, insert_rows


class ConformanceCheck(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def family(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def spec(self) -> str: ...
    @property
    def level(self) -> str: ...
    @property
    def passes(self) -> int: ...
    @property
    def runs(self) -> int: ...
    @property
    def verdict(self) -> str: ...
    @property
    def detail(self) -> str: ...


class ConformanceRun(Protocol):
    """What a conformance run's record holds, as the store writes it."""

    @property
    def started_at(self) -> datetime: ...
    @property
    def target(self) -> str: ...
    @property
    def transport(self) -> str: ...
    @property
    def protocol_version(self) -> str: ...
    @property
    def runs(self) -> int: ...
    @property
    def passed(self) -> bool: ...
    @property
    def duration_s(self) -> float: ...
    @property
    def tool_policy(self) -> str: ...
    @property
    def server_name(self) -> str | None: ...
    @property
    def server_fingerprint(self) -> str | None: ...
    @property
    def evalcore_version(self) -> str: ...
    @property
    def era(self) -> str | None: ...
    @property
    def era_summary(self) -> str | None: ...
    @property
    def checks(self) -> Sequence[ConformanceCheck]: ...


def record_conformance_run(path: Path, report: ConformanceRun) -> str:
    """Store one suite report in a single transaction; returns its run id."""
    run_id = uuid.uuid4().hex[:12]
    with connect(path) as connection:
        try:
            connection.execute("BEGIN TRANSACTION")
            connection.execute(
                "INSERT INTO conformance_runs (run_id, started_at, target, transport, protocol_version, runs, passed, duration_s, "
                "tool_policy, server_name, server_fingerprint, evalcore_version, era, era_summary) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    run_id,
                    report.started_at,
                    report.target,
                    report.transport,
                    report.protocol_version,
                    report.runs,
                    report.passed,
                    report.duration_s,
                    report.tool_policy,
                    report.server_name,
                    report.server_fingerprint,
                    report.evalcore_version,
                    report.era,
                    report.era_summary,
                ],
            )
            if report.checks:  # a legacy-only server's run has its era and verdict but no checks
                insert_rows(
                    connection,
                    "conformance_checks",
                    "run_id, check_id, family, title, spec, level, passes, runs, verdict, detail",
                    [[run_id, c.id, c.family, c.title, c.spec, c.level, c.passes, c.runs, c.verdict, c.detail] for c in report.checks],
                )
            connection.execute("COMMIT")
        except duckdb.Error as exc:
            connection.execute("ROLLBACK")
            raise StoreError(f"cannot record the conformance run in {path}: {exc}") from exc
    return run_id


def latest_conformance_run(path: Path, target: str | None = None) -> dict[str, Any] | None:
    """The newest recorded run (optionally for one target) with its checks."""
    with connect(path, read_only=True) as connection:
        row = connection.execute(
            "SELECT run_id, started_at, target, passed, server_fingerprint, era, era_summary FROM conformance_runs "
            "WHERE ? IS NULL OR target = ? ORDER BY started_at DESC LIMIT 1",
            [target, target],
        ).fetchone()
        if row is None:
            return None
        checks = connection.execute(
            "SELECT check_id, passes, runs, verdict, detail FROM conformance_checks WHERE run_id = ? ORDER BY check_id", [row[0]]
        ).fetchall()
    keys = ("run_id", "started_at", "target", "passed", "server_fingerprint", "era", "era_summary")
    return {**dict(zip(keys, row, strict=True)), "checks": [dict(zip(("check_id", "passes", "runs", "verdict", "detail"), c, strict=True)) for c in checks]}


def conformance_runs(path: Path, limit: int = 50) -> list[dict[str, Any]]:
    """The newest recorded conformance runs, newest first (empty when there is no store yet)."""
    if not path.exists():
        return []
    with connect(path, read_only=True) as connection:
        cursor = connection.execute(
            "SELECT run_id, started_at, target, server_name, era, passed, runs, duration_s, server_fingerprint "
            "FROM conformance_runs ORDER BY started_at DESC LIMIT ?",
            [limit],
        )
        columns = [d[0] for d in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def conformance_checks(path: Path, run_id: str) -> list[dict[str, Any]]:
    """Per-check results of one run, in check-id order."""
    with connect(path, read_only=True) as connection:
        cursor = connection.execute(
            "SELECT check_id, level, passes, runs, verdict, detail, spec FROM conformance_checks WHERE run_id = ? ORDER BY check_id", [run_id]
        )
        columns = [d[0] for d in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
