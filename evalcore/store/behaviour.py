"""I/O layer: record, resume and read Layer 1 behaviour runs.

Every write is one transaction on a short-lived connection: a batch of
attempts is either wholly stored (acknowledged) or not at all, and no process
keeps the file open between batches. A run killed mid-way keeps status
`running` with a stale heartbeat; readers report it as crashed and
`--resume` finishes it without duplicating attempts (the primary key is
run x model x case x attempt).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import astuple, fields, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb

from evalcore import __version__
from evalcore.errors import StoreError
from evalcore.processes import process_exists
from evalcore.records import AttemptRecord, AttemptScore, CaseCell, JudgeVerdict, MetricSet, RobustnessScore, RunReport, Score, ToolCall
from evalcore.run_kinds import RunOutcome, eligibility, standing_kinds
from evalcore.store.db import connect, insert_rows

STALE_AFTER = timedelta(minutes=10)
# What `attempts` holds per attempt (its scores are rows of `attempt_scores`).
WRITTEN_COLUMNS = (
    "run_id, model, case_id, attempt, case_hash, case_kind, simulated, model_version, passed, reasons_json, tool_calls_json, "
    "final_text, stop_reason, error, latency_ms, input_tokens, output_tokens, cost_usd, retries, transcript_json, judge_json, "
    "cached_from, recorded_at, fault, error_kind, system_prompt"
)
SCORE_COLUMNS = "run_id, model, case_id, attempt, scorer, value, applies, reason, label"
# What `case_cells` holds per cell: its run, then a `CaseCell`'s fields, which the table's columns are named after.
CELL_COLUMNS = ", ".join(("run_id", *(field.name for field in fields(CaseCell))))
# What the `behaviour_attempts` compatibility view shows: the columns of schema 3.
ATTEMPT_COLUMNS = (
    "run_id, model, case_id, attempt, case_hash, case_kind, simulated, model_version, selection_correct, args_correct, "
    "sequence_correct, over_call, task_completed, passed, reasons_json, tool_calls_json, final_text, stop_reason, error, "
    "latency_ms, input_tokens, output_tokens, cost_usd, retries, transcript_json, judge_json, cached_from, recorded_at, "
    "fault, robustness_outcome, attack_attempted, refused, robustness_passed, error_kind"
)


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


def create_run(
    path: Path,
    *,
    run_id: str,
    run_date: date,
    golden_path: str,
    golden_hash: str,
    server_target: str,
    server_name: str | None,
    server_fingerprint: str,
    server_tools: Sequence[dict[str, Any]],
    models: Sequence[str],
    runs: int,
    config: dict[str, Any],
    kind: str = "run",
    plan: Mapping[str, Any] | None = None,
) -> None:
    """Record a run that starts now, with its kind and its plan (`evalcore.behaviour.plan.RunPlan.to_json`)."""
    now = datetime.now(UTC)
    _execute(
        path,
        "INSERT INTO behaviour_runs (run_id, started_at, status, run_date, golden_path, golden_hash, server_target, server_name, "
        "server_fingerprint, server_tools_json, models_json, runs, config_json, pid, heartbeat_at, evalcore_version, kind, plan_json) "
        "VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            run_id,
            now,
            run_date,
            golden_path,
            golden_hash,
            server_target,
            server_name,
            server_fingerprint,
            json.dumps(list(server_tools)),
            json.dumps(list(models)),
            runs,
            json.dumps(config),
            os.getpid(),
            now,
            __version__,
            kind,
            json.dumps(dict(plan)) if plan is not None else None,
        ],
    )


def write_attempts(path: Path, run_id: str, records: Sequence[AttemptRecord], *, replacing_errored: bool = False) -> None:
    """Store a batch of attempts and refresh the run's heartbeat, in one transaction.

    `replacing_errored` (a resume): an errored attempt stored under the same key is replaced in the same transaction,
    so until its rerun is stored it stays, and a crash loses nothing acknowledged.
    """
    now = datetime.now(UTC)
    rows = [_attempt_row(run_id, record, now) for record in records]
    score_rows = [_score_row(run_id, record, row) for record in records for row in record.score_rows()]
    with connect(path) as connection:
        try:
            connection.execute("BEGIN TRANSACTION")
            if replacing_errored and records:
                keys = ", ".join("(?, ?, ?)" for _ in records)
                errored = (
                    f"SELECT model, case_id, attempt FROM attempts WHERE run_id = ? AND error_kind IS NOT NULL AND (model, case_id, attempt) IN (VALUES {keys})"
                )
                key_values = [run_id, *(value for record in records for value in (record.model, record.case_id, record.attempt))]
                # The scores first, while the errored attempts they belong to are there to name them: nothing else keeps
                # an attempt's scores unique (schema 16).
                connection.execute(f"DELETE FROM attempt_scores WHERE run_id = ? AND (model, case_id, attempt) IN ({errored})", [run_id, *key_values])
                connection.execute(
                    f"DELETE FROM attempts WHERE run_id = ? AND error_kind IS NOT NULL AND (model, case_id, attempt) IN (VALUES {keys})", key_values
                )
            # One statement per table whatever the batch's size (`db.insert_rows`).
            insert_rows(connection, "attempts", WRITTEN_COLUMNS, rows)
            insert_rows(connection, "attempt_scores", SCORE_COLUMNS, score_rows)
            connection.execute("UPDATE behaviour_runs SET heartbeat_at = ?, pid = ? WHERE run_id = ?", [now, os.getpid(), run_id])
            connection.execute("COMMIT")
        except duckdb.Error as exc:
            connection.execute("ROLLBACK")
            raise StoreError(f"cannot store {len(rows)} attempts of run {run_id} in {path}: {exc}") from exc


def runs_without_metrics(path: Path) -> list[dict[str, Any]]:
    """Complete runs with attempts but no stored metrics (recorded by an evalcore older than schema 5): run_id, runs."""
    with connect(path, read_only=True) as connection:
        rows = connection.execute(
            "SELECT r.run_id, r.runs FROM behaviour_runs r WHERE r.status = 'complete' "
            "AND EXISTS (SELECT 1 FROM attempts a WHERE a.run_id = r.run_id) "
            "AND NOT EXISTS (SELECT 1 FROM run_metrics m WHERE m.run_id = r.run_id) ORDER BY r.started_at"
        ).fetchall()
    return [{"run_id": run_id, "runs": runs} for run_id, runs in rows]


def write_metrics(path: Path, run_id: str, metric_sets: Sequence[MetricSet]) -> None:
    """Store a run's metrics, replacing any stored before, in one transaction (the back-fill of runs stored without them)."""
    with connect(path) as connection:
        try:
            connection.execute("BEGIN TRANSACTION")
            _replace_metrics(connection, run_id, metric_sets)
            connection.execute("COMMIT")
        except duckdb.Error as exc:
            connection.execute("ROLLBACK")
            raise StoreError(f"cannot store the metrics of run {run_id} in {path}: {exc}") from exc


def finish_run(path: Path, report: RunReport, metric_sets: Sequence[MetricSet]) -> None:
    """Store a finished run: its metrics and matrix cells (replacing a resumed run's) in one transaction, then its gated
    report, its status and whether it is green (a baseline for later runs) in another.

    Each in an open of the store of its own (unless the caller holds it open): DuckDB keeps what a transaction wrote until
    the store closes, and the two together held some 30 MB more at 2,000 cases. Until the second lands the run is still
    running (crashed, if its process is gone): no reader takes its metrics for a finished run's, and a resume replaces them.
    """
    green = report.gate is not None and report.gate.green
    with connect(path) as connection:
        try:
            connection.execute("BEGIN TRANSACTION")
            _replace_metrics(connection, report.run_id, metric_sets)
            insert_rows(connection, "case_cells", CELL_COLUMNS, ((report.run_id, *astuple(cell)) for cell in report.case_cells()))
            connection.execute("COMMIT")
        except duckdb.Error as exc:
            connection.execute("ROLLBACK")
            raise StoreError(f"cannot store the metrics of run {report.run_id} in {path}: {exc}") from exc
    now = datetime.now(UTC)
    with connect(path) as connection:
        try:
            connection.execute(
                "UPDATE behaviour_runs SET status = 'complete', finished_at = ?, passed = ?, report_json = ?, error = NULL, heartbeat_at = ? WHERE run_id = ?",
                [now, green, report.json_text(), now, report.run_id],
            )
        except duckdb.Error as exc:
            raise StoreError(f"cannot store the end of run {report.run_id} in {path}: {exc}") from exc


def save_report(path: Path, report: RunReport) -> None:
    """Replace a finished run's stored report and whether it is green (with its drift, once the history was read): the
    `--out` document."""
    green = report.gate is not None and report.gate.green
    _execute(path, "UPDATE behaviour_runs SET report_json = ?, passed = ? WHERE run_id = ?", [report.json_text(), green, report.run_id])


def fail_run(path: Path, run_id: str, *, status: str, error: str) -> None:
    """Mark a run that stopped before its end (`failed`, `cancelled`), with the one-line reason."""
    now = datetime.now(UTC)
    _execute(
        path,
        "UPDATE behaviour_runs SET status = ?, finished_at = ?, passed = NULL, error = ?, heartbeat_at = ? WHERE run_id = ?",
        [status, now, error, now, run_id],
    )


def accept_baseline(path: Path, run_id: str) -> dict[str, Any]:
    """Make a complete run the baseline of later runs of its golden set by hand; the run (`load_run`).

    Refused, with the reason, for a run that may not be a baseline whatever a person says: another kind than a run
    (an arm, a replay), an unfinished run, or one with errored attempts (nothing was measured for them).
    """
    run = load_run(path, run_id)
    if run["effective_status"] != "complete" or not run.get("report_json"):
        raise StoreError(f"run {run_id} is {run['effective_status']}, not complete: only a finished run can be a baseline (`--resume {run_id}` finishes it)")
    with connect(path, read_only=True) as connection:
        row = connection.execute("SELECT count(*) FILTER (WHERE error_kind IS NOT NULL), count(*) FROM attempts WHERE run_id = ?", [run_id]).fetchone()
    errored, attempts = (int(row[0]), int(row[1])) if row else (0, 0)
    outcome = RunOutcome("complete", accepted=True, errored=errored, unscored_cases=0 if attempts else 1)
    allowed = eligibility(str(run.get("kind") or "run"), outcome)
    if not allowed.baseline:
        why = f"{errored} of its {attempts} attempts errored (`--resume {run_id}` reruns them)" if errored else allowed.reason
        if not attempts:
            why = "it stored no attempt"
        raise StoreError(f"run {run_id} cannot be a baseline: {why}")
    _execute(path, "UPDATE behaviour_runs SET baseline_accepted_at = ? WHERE run_id = ?", [datetime.now(UTC), run_id])
    return load_run(path, run_id)


def _replace_metrics(connection: duckdb.DuckDBPyConnection, run_id: str, metric_sets: Sequence[MetricSet]) -> None:
    rows = ((run_id, s.scope, s.model, s.case_id, metric, value) for s in metric_sets for metric, value in s.values.items())
    connection.execute("DELETE FROM run_metrics WHERE run_id = ?", [run_id])
    connection.execute("DELETE FROM case_cells WHERE run_id = ?", [run_id])  # taken from the same report, or none
    insert_rows(connection, "run_metrics", "run_id, scope, model, case_id, metric, value", rows)  # chunk by chunk, in order


def load_metrics(path: Path, run_id: str) -> list[MetricSet]:
    """A run's stored metric sets, in the order they were written (cases, models, run); [] for a run without them."""
    with connect(path, read_only=True) as connection:
        try:
            rows = connection.execute("SELECT scope, model, case_id, metric, value FROM run_metrics WHERE run_id = ? ORDER BY rowid", [run_id]).fetchall()
        except duckdb.CatalogException:  # a store older than schema 5, not yet migrated by a writer
            return []
    sets: dict[tuple[str, str, str], dict[str, float | None]] = {}
    for scope, model, case_id, metric, value in rows:
        sets.setdefault((scope, model, case_id), {})[metric] = value
    return [MetricSet(scope, model, case_id, values) for (scope, model, case_id), values in sets.items()]  # type: ignore[arg-type]


def load_run(path: Path, run_id: str) -> dict[str, Any]:
    if not path.exists():
        raise StoreError(f"no behaviour run {run_id!r}: there is no results store at {path}")
    with connect(path, read_only=True) as connection:
        cursor = connection.execute("SELECT * FROM behaviour_runs WHERE run_id = ?", [run_id])
        row = cursor.fetchone()
        if row is None:
            raise StoreError(f"no behaviour run {run_id!r} in {path}; `python -m evalcore runs` lists them")
        columns = [d[0] for d in cursor.description]
    run = dict(zip(columns, row, strict=True))
    run["effective_status"] = effective_status(run)
    return run


def list_runs(path: Path, limit: int = 100) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    with connect(path, read_only=True) as connection:
        cursor = connection.execute(
            "SELECT r.run_id, r.started_at, r.finished_at, r.status, r.run_date, r.golden_path, r.server_target, r.models_json, r.runs, "
            "r.passed, r.pid, r.heartbeat_at, r.error, r.kind, json_extract(r.report_json, '$.gate') AS gate_json, "
            "(SELECT count(*) FROM behaviour_attempts a WHERE a.run_id = r.run_id) AS attempts "
            "FROM behaviour_runs r ORDER BY r.started_at DESC LIMIT ?",
            [limit],
        )
        columns = [d[0] for d in cursor.description]
        runs = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
    for run in runs:
        run["effective_status"] = effective_status(run)
    return runs


def effective_status(run: dict[str, Any], now: datetime | None = None) -> str:
    """`crashed` for a run still marked running whose process is gone or whose heartbeat went stale."""
    if run.get("status") != "running":
        return str(run.get("status"))
    now = now or datetime.now(UTC)
    heartbeat = run.get("heartbeat_at")
    if heartbeat is not None and now - heartbeat > STALE_AFTER:
        return "crashed"
    pid = run.get("pid")
    if isinstance(pid, int) and not _process_alive(pid):
        return "crashed"
    return "running"


def attempt_count(path: Path, run_id: str) -> int:
    """How many attempts of a run are stored."""
    with connect(path, read_only=True) as connection:
        row = connection.execute("SELECT count(*) FROM attempts WHERE run_id = ?", [run_id]).fetchone()
    return int(row[0]) if row else 0


def errored_attempt_keys(path: Path, run_id: str) -> set[tuple[str, str, int]]:
    """(model, case, attempt) of a run's errored attempts (`evalcore.taxonomy`)."""
    with connect(path, read_only=True) as connection:
        rows = connection.execute("SELECT model, case_id, attempt FROM attempts WHERE run_id = ? AND error_kind IS NOT NULL", [run_id]).fetchall()
    return {(model, case_id, attempt) for model, case_id, attempt in rows}


def reopen_run(path: Path, run_id: str) -> None:
    """Mark a run being resumed as running again, by this process: a crash during the resume shows as one, and
    `--resume` can take it up again."""
    now = datetime.now(UTC)
    _execute(path, "UPDATE behaviour_runs SET status = 'running', finished_at = NULL, pid = ?, heartbeat_at = ? WHERE run_id = ?", [os.getpid(), now, run_id])


def load_attempt_records(path: Path, run_id: str) -> list[AttemptRecord]:
    """Every stored attempt of a run as its record, with its scores (model, case, attempt order)."""
    return [record_from_row(row) for row in load_attempts(path, run_id)]


def record_from_row(
    row: Mapping[str, Any],
    *,
    score: AttemptScore | None = None,
    calls: tuple[ToolCall, ...] | None = None,
    robustness: RobustnessScore | None = None,
) -> AttemptRecord:
    """A stored attempt row (`load_attempts`: the row with its `scores`) as the record it was written from; a reader that
    keeps more of the attempt than the store's columns (a shard file) gives its score, calls and robustness whole."""
    if calls is None:
        calls = tuple(ToolCall(c["id"], c["name"], c["arguments"]) for c in json.loads(row["tool_calls_json"] or "[]"))
    return AttemptRecord(
        model=row["model"],
        case_id=row["case_id"],
        attempt=int(row["attempt"]),
        case_hash=row["case_hash"],
        case_kind=row["case_kind"],
        simulated=bool(row["simulated"]),
        model_version=row["model_version"],
        score=score if score is not None else score_from_row(row),
        tool_calls=calls,
        final_text=row["final_text"],
        stop_reason=row["stop_reason"],
        error=row["error"],
        latency_ms=row["latency_ms"],
        input_tokens=row["input_tokens"],
        output_tokens=row["output_tokens"],
        cost_usd=row["cost_usd"],
        retries=int(row["retries"] or 0),
        transcript_json=row["transcript_json"],
        judge=_judge_verdict(row["judge_json"]) if row["judge_json"] else None,
        cached_from=row["cached_from"],
        robustness=robustness if robustness is not None else robustness_from_row(row),
        error_kind=row.get("error_kind"),
    )


def load_attempts(path: Path, run_id: str) -> list[dict[str, Any]]:
    """Every stored attempt of a run (the view's columns), each with its `scores`: the `Score`s of `attempt_scores`, in scorer order."""
    with connect(path, read_only=True) as connection:
        cursor = connection.execute(f"SELECT {ATTEMPT_COLUMNS} FROM behaviour_attempts WHERE run_id = ? ORDER BY model, case_id, attempt", [run_id])
        columns = [d[0] for d in cursor.description]
        rows = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
        scores = _scores(connection, "WHERE run_id = ?", [run_id])
    for row in rows:
        row["scores"] = scores.get((row["run_id"], row["model"], row["case_id"], row["attempt"]), ())
    return rows


def cached_attempts(path: Path, *, server_fingerprint: str, models: Sequence[str], exclude_run: str) -> list[tuple[AttemptRecord, str]]:
    """Stored attempts a new run may reuse, oldest first, each with its run's plan JSON, from which the runner recomputes
    the attempt's cache key (`RunPlan.attempt_key`). Only complete runs of the kinds that may serve the cache
    (`evalcore.run_kinds.eligibility`) with a stored plan, on the same server and model, never an errored attempt. Each
    record's `cached_from` names the run that made it."""
    if not path.exists():
        return []
    runs = (
        "SELECT run_id FROM behaviour_runs WHERE server_fingerprint = ? AND status = 'complete' AND plan_json IS NOT NULL "
        "AND list_contains(?, coalesce(kind, 'run')) AND run_id <> ?"
    )
    run_parameters = [server_fingerprint, list(standing_kinds()), exclude_run]
    with connect(path, read_only=True) as connection:
        cursor = connection.execute(
            f"SELECT {_qualified('a')}, r.plan_json AS run_plan_json FROM behaviour_attempts a JOIN behaviour_runs r ON a.run_id = r.run_id "
            f"WHERE a.run_id IN ({runs}) AND list_contains(?, a.model) AND a.error IS NULL AND a.error_kind IS NULL "
            "ORDER BY a.recorded_at",
            [*run_parameters, list(models)],
        )
        columns = [d[0] for d in cursor.description]
        rows = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
        scores = _scores(connection, f"WHERE run_id IN ({runs}) AND list_contains(?, model)", [*run_parameters, list(models)])
    for row in rows:
        row["scores"] = scores.get((row["run_id"], row["model"], row["case_id"], row["attempt"]), ())
    return [(replace(record_from_row(row), cached_from=row["cached_from"] or row["run_id"]), str(row["run_plan_json"])) for row in rows]


def last_green_report(path: Path, *, golden_path: str | None = None, golden_hash: str | None = None, exclude_run: str | None = None) -> dict[str, Any] | None:
    """The report of the newest run that may be a baseline (`evalcore.run_kinds.eligibility`: a run or merged run,
    complete, green or accepted by hand), optionally of one golden set (its identity and content hash); None when there
    is none."""
    found = _last_baseline(path, golden_path=golden_path, golden_hash=golden_hash, exclude_run=exclude_run)
    return json.loads(found[1]) if found else None


def changed_golden_baseline(path: Path, *, golden_path: str, golden_hash: str, exclude_run: str | None = None) -> str | None:
    """The newest baseline of this golden set's path made from other content (the file was edited since), or None."""
    found = _last_baseline(path, golden_path=golden_path, golden_hash=None, exclude_run=exclude_run)
    return found[0] if found and found[2] != golden_hash else None


def _last_baseline(path: Path, *, golden_path: str | None, golden_hash: str | None, exclude_run: str | None) -> tuple[str, str, str] | None:
    if not path.exists():
        return None
    kinds = list(standing_kinds())
    with connect(path, read_only=True) as connection:
        row = connection.execute(
            "SELECT run_id, report_json, golden_hash FROM behaviour_runs WHERE status = 'complete' AND (passed OR baseline_accepted_at IS NOT NULL) "
            "AND report_json IS NOT NULL AND list_contains(?, coalesce(kind, 'run')) "
            "AND (? IS NULL OR golden_path = ?) AND (? IS NULL OR golden_hash = ?) AND (? IS NULL OR run_id <> ?) "
            "ORDER BY started_at DESC LIMIT 1",
            [kinds, golden_path, golden_path, golden_hash, golden_hash, exclude_run, exclude_run],
        ).fetchone()
    return (str(row[0]), str(row[1]), str(row[2])) if row else None


def load_plan(path: Path, run_id: str) -> dict[str, Any] | None:
    """A run's stored plan document (`RunPlan.to_json`); None for a run stored before runs had one."""
    run = load_run(path, run_id)
    return json.loads(run["plan_json"]) if run.get("plan_json") else None


def score_from_row(row: Mapping[str, Any]) -> AttemptScore:
    """The score of a stored attempt row: its `scores` from `attempt_scores` (see `load_attempts`), else the view's columns."""
    reasons = tuple(json.loads(row["reasons_json"]))
    if row.get("scores"):
        return AttemptScore(tuple(row["scores"]), bool(row["passed"]), reasons)
    scores = [
        _column_score("selection", row["selection_correct"]),
        _column_score("arguments", row["args_correct"]),
        _column_score("sequence", row["sequence_correct"]),
        _column_score("over_call", row["over_call"]),
        _column_score("judge", row["task_completed"]),
    ]
    if row.get("robustness_outcome") is not None:
        scores.append(Score("robustness", 1.0 if row["robustness_passed"] else 0.0, True, (), row["robustness_outcome"]))
    if row.get("attack_attempted") is not None:
        scores.append(_column_score("attack_success", row["attack_attempted"]))
        scores.append(_column_score("refusal", bool(row["refused"])))
    return AttemptScore(tuple(scores), bool(row["passed"]), reasons)


def _column_score(scorer: str, verdict: bool | None) -> Score:
    return Score(scorer, None, False) if verdict is None else Score(scorer, 1.0 if verdict else 0.0, True)


def robustness_from_row(row: Mapping[str, Any]) -> RobustnessScore | None:
    """The Layer 2 verdicts of a stored attempt row; None for an attempt that ran without a fault.

    Its reasons are already part of the row's `reasons_json`, so they are not repeated here.
    """
    if row.get("fault") is None:
        return None
    return RobustnessScore(row["fault"], row["robustness_outcome"], row["attack_attempted"], row["refused"], bool(row["robustness_passed"]))


def _qualified(alias: str) -> str:
    return ", ".join(f"{alias}.{column.strip()}" for column in ATTEMPT_COLUMNS.split(","))


def stored_scores(connection: duckdb.DuckDBPyConnection, run_id: str) -> dict[tuple[str, str, int], tuple[Score, ...]]:
    """One run's `attempt_scores` per (model, case, attempt); {} for a store older than schema 4."""
    try:
        scores = _scores(connection, "WHERE run_id = ?", [run_id])
    except duckdb.CatalogException:
        return {}
    return {(model, case_id, attempt): found for (_, model, case_id, attempt), found in scores.items()}


def _scores(connection: duckdb.DuckDBPyConnection, where: str, parameters: list[Any]) -> dict[tuple[str, str, str, int], tuple[Score, ...]]:
    """`attempt_scores` rows as `Score`s per (run, model, case, attempt), in the order they were written (scorer order)."""
    found: dict[tuple[str, str, str, int], list[Score]] = {}
    cursor = connection.execute(
        f"SELECT run_id, model, case_id, attempt, scorer, value, applies, reason, label FROM attempt_scores {where} ORDER BY rowid", parameters
    )
    for run_id, model, case_id, attempt, scorer, value, applies, reason, label in cursor.fetchall():
        reasons = (reason,) if reason else ()
        found.setdefault((run_id, model, case_id, attempt), []).append(Score(scorer, value, bool(applies), reasons, label))
    return {key: tuple(scores) for key, scores in found.items()}


def _attempt_row(run_id: str, record: AttemptRecord, now: datetime) -> list[Any]:
    row = {**record.to_row(), "run_id": run_id, "recorded_at": now}  # the record's serialisation: secrets already removed
    row["system_prompt"] = system_prompt(row["transcript_json"])
    return [row[column.strip()] for column in WRITTEN_COLUMNS.split(",")]


def system_prompt(transcript_json: str | None) -> str | None:
    """The content of a transcript's first message when it is a system message, as the store keeps it for drift: the
    text as it is, other content as compact JSON (what DuckDB's `json_extract_string` gives, as schema 16 filled it
    for the attempts stored before); None without one."""
    try:
        messages = json.loads(transcript_json or "{}").get("messages") or []
    except (json.JSONDecodeError, AttributeError):
        return None
    first = messages[0] if isinstance(messages, list) and messages and isinstance(messages[0], dict) else {}
    if first.get("role") != "system" or first.get("content") is None:
        return None
    content = first["content"]
    return content if isinstance(content, str) else json.dumps(content, separators=(",", ":"), ensure_ascii=False)


def _score_row(run_id: str, record: AttemptRecord, score_row: tuple[Any, ...]) -> list[Any]:
    return [run_id, record.model, record.case_id, record.attempt, *score_row]


def _execute(path: Path, sql: str, parameters: list[Any]) -> None:
    with connect(path) as connection:
        try:
            connection.execute(sql, parameters)
        except duckdb.Error as exc:
            raise StoreError(f"cannot write to the results store {path}: {exc}") from exc


def _process_alive(pid: int) -> bool:
    return pid == os.getpid() or process_exists(pid)


def _judge_verdict(judge_json: str) -> JudgeVerdict:
    document = json.loads(judge_json)
    return JudgeVerdict(**{**document, "votes": tuple(document.get("votes") or ())})
