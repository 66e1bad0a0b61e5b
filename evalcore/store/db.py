"""I/O layer: short-lived DuckDB connections and the versioned schema.

No connection outlives one batch of work, so a dashboard can read the file
while a run writes it (`held_open` keeps one open for a burst of batches that
follow each other at once, such as those that end a run). A write connection redacts every parameter it is given
(`evalcore.redaction`): the records' columns arrive redacted already (their
serialisation is published, `evalcore.records`), and the rest (a run's target,
the server's tool list, its config, error text, conformance rows) is not a
record; so no secret reaches the file, its WAL, or anything later read from it
(reports, exports, pages). The schema carries a version; each change adds a
migration to `MIGRATIONS` (SQL, or a function of the connection) and never edits an old one.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import duckdb

from evalcore import redaction
from evalcore.errors import StoreError
from evalcore.store.golden_ids import unify_golden_paths

MIGRATIONS: tuple[str | Callable[[duckdb.DuckDBPyConnection], None], ...] = (
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
    # 2: Layer 1 behaviour runs and their attempts (one row per model x case x attempt)
    """
    CREATE TABLE behaviour_runs (
        run_id VARCHAR PRIMARY KEY,
        started_at TIMESTAMPTZ NOT NULL,
        finished_at TIMESTAMPTZ,
        status VARCHAR NOT NULL,           -- running | complete | failed | cancelled
        run_date DATE NOT NULL,            -- the date the run stands for (nightly date; the demo back-fills history)
        golden_path VARCHAR NOT NULL,
        golden_hash VARCHAR NOT NULL,
        server_target VARCHAR NOT NULL,
        server_name VARCHAR,
        server_fingerprint VARCHAR NOT NULL,
        server_tools_json VARCHAR NOT NULL, -- names and descriptions, for description diffs
        models_json VARCHAR NOT NULL,
        runs INTEGER NOT NULL,
        config_json VARCHAR NOT NULL,
        pid INTEGER,
        heartbeat_at TIMESTAMPTZ,
        error VARCHAR,
        passed BOOLEAN,
        report_json VARCHAR,
        evalcore_version VARCHAR NOT NULL
    );
    CREATE TABLE behaviour_attempts (
        run_id VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        case_id VARCHAR NOT NULL,
        attempt INTEGER NOT NULL,
        case_hash VARCHAR NOT NULL,
        case_kind VARCHAR NOT NULL,
        simulated BOOLEAN NOT NULL,
        model_version VARCHAR,
        selection_correct BOOLEAN NOT NULL,
        args_correct BOOLEAN,
        sequence_correct BOOLEAN,
        over_call BOOLEAN,
        task_completed BOOLEAN,
        passed BOOLEAN NOT NULL,
        reasons_json VARCHAR NOT NULL,
        tool_calls_json VARCHAR NOT NULL,
        final_text VARCHAR,
        stop_reason VARCHAR NOT NULL,
        error VARCHAR,
        latency_ms DOUBLE,
        input_tokens INTEGER,
        output_tokens INTEGER,
        cost_usd DOUBLE,
        retries INTEGER NOT NULL,
        transcript_json VARCHAR NOT NULL,
        judge_json VARCHAR,
        cached_from VARCHAR,
        recorded_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (run_id, model, case_id, attempt)
    );
    """,
    # 3: Layer 2 verdicts of attempts run under an injected fault or attack (NULL for other attempts)
    """
    ALTER TABLE behaviour_attempts ADD COLUMN fault VARCHAR;
    ALTER TABLE behaviour_attempts ADD COLUMN robustness_outcome VARCHAR;  -- retry | fallback | honest_error | claimed_success | not_reached | no_answer
    ALTER TABLE behaviour_attempts ADD COLUMN attack_attempted BOOLEAN;
    ALTER TABLE behaviour_attempts ADD COLUMN refused BOOLEAN;
    ALTER TABLE behaviour_attempts ADD COLUMN robustness_passed BOOLEAN;
    """,
    # 4: one golden set, one history: golden paths become the set's identity, however they were typed
    unify_golden_paths,
    # 5: scores leave their fixed columns for one narrow row per attempt x scorer (`attempt_scores`, see
    # evalcore.scoring.registry); the attempts move to `attempts`, and `behaviour_attempts` becomes a view
    # with its old columns, so readers of the old shape keep working. Existing rows are copied, not lost.
    """
    CREATE TABLE attempts (
        run_id VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        case_id VARCHAR NOT NULL,
        attempt INTEGER NOT NULL,
        case_hash VARCHAR NOT NULL,
        case_kind VARCHAR NOT NULL,
        simulated BOOLEAN NOT NULL,
        model_version VARCHAR,
        passed BOOLEAN NOT NULL,           -- every applicable gating score at its best value
        reasons_json VARCHAR NOT NULL,     -- the failing reasons of every scorer, in scorer order
        tool_calls_json VARCHAR NOT NULL,
        final_text VARCHAR,
        stop_reason VARCHAR NOT NULL,
        error VARCHAR,
        latency_ms DOUBLE,
        input_tokens INTEGER,
        output_tokens INTEGER,
        cost_usd DOUBLE,
        retries INTEGER NOT NULL,
        transcript_json VARCHAR NOT NULL,
        judge_json VARCHAR,
        cached_from VARCHAR,
        recorded_at TIMESTAMPTZ NOT NULL,
        fault VARCHAR,
        PRIMARY KEY (run_id, model, case_id, attempt)
    );
    CREATE TABLE attempt_scores (
        run_id VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        case_id VARCHAR NOT NULL,
        attempt INTEGER NOT NULL,
        scorer VARCHAR NOT NULL,           -- a registered scorer id
        value DOUBLE,                      -- 1 / 0 for a yes/no verdict; NULL exactly when it does not apply
        applies BOOLEAN NOT NULL,
        reason VARCHAR,                    -- why the value is not the best one (NULL for rows copied from schema 3)
        label VARCHAR,                     -- a categorical outcome (the robustness outcome)
        PRIMARY KEY (run_id, model, case_id, attempt, scorer)
    );
    INSERT INTO attempts
        SELECT run_id, model, case_id, attempt, case_hash, case_kind, simulated, model_version, passed, reasons_json, tool_calls_json,
               final_text, stop_reason, error, latency_ms, input_tokens, output_tokens, cost_usd, retries, transcript_json, judge_json,
               cached_from, recorded_at, fault
        FROM behaviour_attempts;
    INSERT INTO attempt_scores
        SELECT run_id, model, case_id, attempt, scorer, CASE WHEN verdict IS NULL THEN NULL WHEN verdict THEN 1.0 ELSE 0.0 END,
               verdict IS NOT NULL, NULL, label
        FROM (
            SELECT run_id, model, case_id, attempt, 'selection' AS scorer, selection_correct AS verdict, NULL AS label FROM behaviour_attempts
            UNION ALL SELECT run_id, model, case_id, attempt, 'arguments', args_correct, NULL FROM behaviour_attempts
            UNION ALL SELECT run_id, model, case_id, attempt, 'sequence', sequence_correct, NULL FROM behaviour_attempts
            UNION ALL SELECT run_id, model, case_id, attempt, 'over_call', over_call, NULL FROM behaviour_attempts
            UNION ALL SELECT run_id, model, case_id, attempt, 'judge', task_completed, NULL FROM behaviour_attempts
            UNION ALL SELECT run_id, model, case_id, attempt, 'robustness', robustness_passed, robustness_outcome
                FROM behaviour_attempts WHERE robustness_outcome IS NOT NULL
            UNION ALL SELECT run_id, model, case_id, attempt, 'attack_success', attack_attempted, NULL
                FROM behaviour_attempts WHERE attack_attempted IS NOT NULL
            UNION ALL SELECT run_id, model, case_id, attempt, 'refusal', coalesce(refused, false), NULL
                FROM behaviour_attempts WHERE attack_attempted IS NOT NULL
        );
    DROP TABLE behaviour_attempts;
    CREATE VIEW behaviour_attempts AS
        SELECT a.run_id, a.model, a.case_id, a.attempt, a.case_hash, a.case_kind, a.simulated, a.model_version,
               s.selection_correct, s.args_correct, s.sequence_correct, s.over_call, s.task_completed, a.passed, a.reasons_json,
               a.tool_calls_json, a.final_text, a.stop_reason, a.error, a.latency_ms, a.input_tokens, a.output_tokens, a.cost_usd,
               a.retries, a.transcript_json, a.judge_json, a.cached_from, a.recorded_at, a.fault, s.robustness_outcome,
               s.attack_attempted, s.refused, s.robustness_passed
        FROM attempts a LEFT JOIN (
            SELECT run_id, model, case_id, attempt,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'selection' AND applies) AS selection_correct,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'arguments' AND applies) AS args_correct,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'sequence' AND applies) AS sequence_correct,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'over_call' AND applies) AS over_call,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'judge' AND applies) AS task_completed,
                   first(label) FILTER (WHERE scorer = 'robustness' AND applies) AS robustness_outcome,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'attack_success' AND applies) AS attack_attempted,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'refusal' AND applies) AS refused,
                   coalesce(bool_or(value >= 1) FILTER (WHERE scorer = 'robustness' AND applies),
                            NOT bool_or(value >= 1) FILTER (WHERE scorer = 'attack_success' AND applies)) AS robustness_passed
            FROM attempt_scores GROUP BY run_id, model, case_id, attempt
        ) s ON a.run_id = s.run_id AND a.model = s.model AND a.case_id = s.case_id AND a.attempt = s.attempt;
    """,
    # 6: every metric of a run, computed once by evalcore.scoring.metrics at the end of the run (and of a resume),
    # per case (model and case_id set), per model (case_id '') and for the run (both ''). Readers never recompute them.
    """
    CREATE TABLE run_metrics (
        run_id VARCHAR NOT NULL,
        scope VARCHAR NOT NULL,            -- case | model | run
        model VARCHAR NOT NULL,
        case_id VARCHAR NOT NULL,
        metric VARCHAR NOT NULL,           -- e.g. pass_rate, pass_hat_k@3, selection_accuracy (see evalcore.scoring.metrics)
        value DOUBLE,                      -- NULL where the metric does not exist (nothing applies, price unknown)
        PRIMARY KEY (run_id, scope, model, case_id, metric)
    );
    """,
    # 7: a credential leak (scorer credential_leak) reads in the view as the report counts it: a successful attack,
    # not refused, not robust, whether or not the case planted an attack (evalcore.scoring.scorers.robustness_record).
    """
    CREATE OR REPLACE VIEW behaviour_attempts AS
        SELECT a.run_id, a.model, a.case_id, a.attempt, a.case_hash, a.case_kind, a.simulated, a.model_version,
               s.selection_correct, s.args_correct, s.sequence_correct, s.over_call, s.task_completed, a.passed, a.reasons_json,
               a.tool_calls_json, a.final_text, a.stop_reason, a.error, a.latency_ms, a.input_tokens, a.output_tokens, a.cost_usd,
               a.retries, a.transcript_json, a.judge_json, a.cached_from, a.recorded_at, a.fault, s.robustness_outcome,
               CASE WHEN s.leaked THEN true ELSE s.attack_attempted END AS attack_attempted,
               CASE WHEN s.leaked THEN false ELSE s.refused END AS refused,
               CASE WHEN s.leaked THEN false ELSE s.robustness_passed END AS robustness_passed
        FROM attempts a LEFT JOIN (
            SELECT run_id, model, case_id, attempt,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'selection' AND applies) AS selection_correct,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'arguments' AND applies) AS args_correct,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'sequence' AND applies) AS sequence_correct,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'over_call' AND applies) AS over_call,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'judge' AND applies) AS task_completed,
                   first(label) FILTER (WHERE scorer = 'robustness' AND applies) AS robustness_outcome,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'attack_success' AND applies) AS attack_attempted,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'refusal' AND applies) AS refused,
                   coalesce(bool_or(value >= 1) FILTER (WHERE scorer = 'robustness' AND applies),
                            NOT bool_or(value >= 1) FILTER (WHERE scorer = 'attack_success' AND applies)) AS robustness_passed,
                   coalesce(bool_or(value >= 1) FILTER (WHERE scorer = 'credential_leak' AND applies), false) AS leaked
            FROM attempt_scores GROUP BY run_id, model, case_id, attempt
        ) s ON a.run_id = s.run_id AND a.model = s.model AND a.case_id = s.case_id AND a.attempt = s.attempt;
    """,
    # 8: the era a conformance run found the server to speak (modern-only | dual-era | legacy-only; NULL before it was
    # recorded), and the report's one-line evidence for it (evalcore.conformance.era.EraProfile.summary).
    """
    ALTER TABLE conformance_runs ADD COLUMN era VARCHAR;
    ALTER TABLE conformance_runs ADD COLUMN era_summary VARCHAR;
    """,
    # 9: the error taxonomy (evalcore.taxonomy): an attempt's error kind (provider, judge; NULL when it was scored), and a
    # run accepted as a baseline by hand (`evalcore baseline accept`). Attempts whose model call failed were errored
    # before this column existed: they are marked provider errors.
    """
    ALTER TABLE attempts ADD COLUMN error_kind VARCHAR;
    UPDATE attempts SET error_kind = 'provider' WHERE stop_reason = 'model_error';
    ALTER TABLE behaviour_runs ADD COLUMN baseline_accepted_at TIMESTAMPTZ;
    CREATE OR REPLACE VIEW behaviour_attempts AS
        SELECT a.run_id, a.model, a.case_id, a.attempt, a.case_hash, a.case_kind, a.simulated, a.model_version,
               s.selection_correct, s.args_correct, s.sequence_correct, s.over_call, s.task_completed, a.passed, a.reasons_json,
               a.tool_calls_json, a.final_text, a.stop_reason, a.error, a.latency_ms, a.input_tokens, a.output_tokens, a.cost_usd,
               a.retries, a.transcript_json, a.judge_json, a.cached_from, a.recorded_at, a.fault, s.robustness_outcome,
               CASE WHEN s.leaked THEN true ELSE s.attack_attempted END AS attack_attempted,
               CASE WHEN s.leaked THEN false ELSE s.refused END AS refused,
               CASE WHEN s.leaked THEN false ELSE s.robustness_passed END AS robustness_passed,
               a.error_kind
        FROM attempts a LEFT JOIN (
            SELECT run_id, model, case_id, attempt,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'selection' AND applies) AS selection_correct,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'arguments' AND applies) AS args_correct,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'sequence' AND applies) AS sequence_correct,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'over_call' AND applies) AS over_call,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'judge' AND applies) AS task_completed,
                   first(label) FILTER (WHERE scorer = 'robustness' AND applies) AS robustness_outcome,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'attack_success' AND applies) AS attack_attempted,
                   bool_or(value >= 1) FILTER (WHERE scorer = 'refusal' AND applies) AS refused,
                   coalesce(bool_or(value >= 1) FILTER (WHERE scorer = 'robustness' AND applies),
                            NOT bool_or(value >= 1) FILTER (WHERE scorer = 'attack_success' AND applies)) AS robustness_passed,
                   coalesce(bool_or(value >= 1) FILTER (WHERE scorer = 'credential_leak' AND applies), false) AS leaked
            FROM attempt_scores GROUP BY run_id, model, case_id, attempt
        ) s ON a.run_id = s.run_id AND a.model = s.model AND a.case_id = s.case_id AND a.attempt = s.attempt;
    """,
    # 10: `evalcore compare`: two behaviour runs of one golden set linked as one comparison (evalcore.compare), with its report.
    """
    CREATE TABLE comparisons (
        comparison_id VARCHAR PRIMARY KEY,
        created_at TIMESTAMPTZ NOT NULL,
        baseline_run_id VARCHAR NOT NULL,
        candidate_run_id VARCHAR NOT NULL,
        candidate_kind VARCHAR NOT NULL,   -- url | stdio | tools | run | perturbation
        candidate VARCHAR NOT NULL,        -- the candidate's target, its overrides file's content, or 'stored run'
        alpha DOUBLE NOT NULL,
        failed BOOLEAN NOT NULL,           -- some (model, case) or model significantly worse, or not measured (exit 1)
        report_json VARCHAR NOT NULL,      -- the comparison's JSON (docs/compare.schema.json)
        evalcore_version VARCHAR NOT NULL
    );
    """,
    # 11: `evalcore perturb`: a sweep of catalog perturbations against one baseline run (evalcore.compare.sensitivity).
    """
    CREATE TABLE perturbations (
        perturb_id VARCHAR PRIMARY KEY,
        created_at TIMESTAMPTZ NOT NULL,
        baseline_run_id VARCHAR NOT NULL,
        golden_path VARCHAR NOT NULL,
        alpha DOUBLE NOT NULL,
        failed BOOLEAN NOT NULL,           -- some model or tool selects significantly worse, or was not measured (exit 1)
        report_json VARCHAR NOT NULL,      -- the sweep's JSON (docs/perturb.schema.json); each arm is also a comparison
        evalcore_version VARCHAR NOT NULL
    );
    """,
    # 12: record and replay (evalcore.mcp.recording): every MCP request of a behaviour run and the server's answer, in full.
    """
    CREATE TABLE run_exchanges (
        run_id VARCHAR NOT NULL,
        sequence INTEGER NOT NULL,         -- the order the answers came in, over the run (a resume continues it)
        method VARCHAR NOT NULL,           -- server/discover, tools/list, tools/call, ...
        params_json VARCHAR NOT NULL,      -- the request's params without _meta, canonical JSON
        answer_json VARCHAR,               -- {"result": ...} or {"error": ...}; NULL when no usable answer came
        failure VARCHAR,                   -- the transport failure (kind: detail) when no usable answer came
        conversation VARCHAR,              -- the trace id the request carried (one attempt's conversation is one trace)
        PRIMARY KEY (run_id, sequence)
    );
    """,
    # 13: each (model, case) of a finished run as the dashboard's matrix shows it (`RunReport.case_cells`), written with
    # its metrics, so the matrix reads a few thousand rows instead of the run's attempts. A run without them (in
    # progress, or finished before this table) is read from its attempts as before.
    """
    CREATE TABLE case_cells (
        run_id VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        case_id VARCHAR NOT NULL,
        kind VARCHAR NOT NULL,             -- hard | soft
        simulated BOOLEAN NOT NULL,
        passes INTEGER NOT NULL,
        runs INTEGER NOT NULL,             -- attempts scored: errored ones are in no denominator
        attempts INTEGER NOT NULL,
        errored INTEGER NOT NULL,
        pass_rate DOUBLE,
        pass_hat_k DOUBLE,                 -- at k = the run's runs
        top_failing_reason VARCHAR,        -- the reason most failed attempts gave (ties: alphabetical); NULL when none failed
        PRIMARY KEY (run_id, model, case_id)
    );
    """,
    # 14: the run plan (evalcore.behaviour.plan.RunPlan): what decided a run's attempts, as one document, and its kind
    # (evalcore.run_kinds), which says what the run may stand for. Runs stored before it get the kind their config's
    # markers name (an arm of `compare`, a replay) and no plan: they never serve the cache.
    """
    ALTER TABLE behaviour_runs ADD COLUMN kind VARCHAR DEFAULT 'run';
    ALTER TABLE behaviour_runs ADD COLUMN plan_json VARCHAR;
    UPDATE behaviour_runs SET kind = CASE
        WHEN json_extract_string(config_json, '$.comparison_arm') = 'baseline' THEN 'compare-baseline'
        WHEN json_extract_string(config_json, '$.comparison_arm') = 'candidate' THEN 'compare-candidate'
        WHEN json_extract_string(config_json, '$.replay_of') IS NOT NULL THEN 'replay'
        ELSE 'run' END;
    """,
    # 15: human labels of attempts, to measure a judge against (evalcore.scoring.agreement): does the final answer meet
    # the rubric? One label per attempt (a new one replaces it), tied to the rubric text the attempt was judged against
    # (its run plan's rubric hash), so an edited rubric starts its figures afresh.
    """
    CREATE TABLE judge_labels (
        run_id VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        case_id VARCHAR NOT NULL,
        attempt INTEGER NOT NULL,
        label VARCHAR NOT NULL,            -- pass | fail
        labeller VARCHAR NOT NULL,
        note VARCHAR NOT NULL,
        labelled_at TIMESTAMPTZ NOT NULL,
        rubric_hash VARCHAR NOT NULL,      -- sha256 of the rubric file; 'none' without one; 'unknown' for a run without a plan
        PRIMARY KEY (run_id, model, case_id, attempt)
    );
    """,
    # 16: memory that grows with the store, not with the run, taken out of every write and of every drift read.
    # - The two tables with many rows per attempt or per case (a score per scorer, some 35 metrics per case) lose their
    #   primary keys: DuckDB holds a key's whole index in memory to check each insert against it, some 80 MB for the
    #   metrics of one run of 2,000 cases, loaded again by every batch of a store with a long history. The writers
    #   keep them unique: a run's metrics are replaced whole (`_replace_metrics`), and an attempt's scores are written
    #   once, with the attempt (`write_attempts`, which deletes an errored attempt's scores with it on a resume).
    # - Each attempt keeps its system prompt (the transcript's first message, when a system message) in a column of its
    #   own: drift reads it for every attempt in the history, and took it out of every stored transcript (about 40 MB
    #   and 0.2 s of CPU at 20,000 attempts).
    """
    CREATE TABLE run_metrics_v16 (
        run_id VARCHAR NOT NULL,
        scope VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        case_id VARCHAR NOT NULL,
        metric VARCHAR NOT NULL,
        value DOUBLE
    );
    INSERT INTO run_metrics_v16 SELECT run_id, scope, model, case_id, metric, value FROM run_metrics ORDER BY rowid;
    DROP TABLE run_metrics;
    ALTER TABLE run_metrics_v16 RENAME TO run_metrics;
    CREATE TABLE attempt_scores_v16 (
        run_id VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        case_id VARCHAR NOT NULL,
        attempt INTEGER NOT NULL,
        scorer VARCHAR NOT NULL,
        value DOUBLE,
        applies BOOLEAN NOT NULL,
        reason VARCHAR,
        label VARCHAR
    );
    INSERT INTO attempt_scores_v16 SELECT run_id, model, case_id, attempt, scorer, value, applies, reason, label FROM attempt_scores ORDER BY rowid;
    DROP TABLE attempt_scores;
    ALTER TABLE attempt_scores_v16 RENAME TO attempt_scores;
    ALTER TABLE attempts ADD COLUMN IF NOT EXISTS system_prompt VARCHAR;
    UPDATE attempts SET system_prompt = json_extract_string(transcript_json, '$.messages[0].content')
    WHERE json_extract_string(transcript_json, '$.messages[0].role') = 'system';
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)
LOCK_WAIT_S = 10.0
# Two threads of one process opening a fresh store at once (two runs side by side) would both migrate it and conflict.
_MIGRATING = threading.Lock()


# The stores this process holds open (`held_open`), by resolved path and the thread that holds each: a thread
# uses only its own (two runs side by side each hold the store in their own batch-writer thread).
_HELD: dict[tuple[str, int], duckdb.DuckDBPyConnection] = {}


@contextlib.contextmanager
def held_open(path: Path) -> Iterator[None]:
    """Keep the store open in this thread for the block: each `connect` inside takes a cursor of the one open
    database instead of opening it again, which skips DuckDB's start-up (some 15 ms of CPU per open, even of an
    in-memory database) and a checkpoint per close. No other process can open the store meanwhile, so hold it
    only for work that follows on at once (a run's last reads and writes, a batch), never across a run. Re-entrant.
    Per thread: another thread's `connect` (another run's batch writer) never uses a connection this block may
    close under it, and its own `held_open` holds its own."""
    key = (str(path.resolve()), threading.get_ident())
    if key in _HELD:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = _open(path, read_only=False)
    _HELD[key] = connection
    try:
        yield
    finally:
        del _HELD[key]
        _close(connection, path, read_only=False)


@contextlib.contextmanager
def connect(path: Path, *, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open the store for one batch of work, migrating it first when writing."""
    if read_only and not path.exists():
        raise StoreError(f"no results store at {path}; run a command that records results first")
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    held = _HELD.get((str(path.resolve()), threading.get_ident())) if _HELD else None
    # A cursor of a store this thread holds writes as well as reads; a reader only reads through it.
    connection = held.cursor() if held is not None else _open(path, read_only)
    try:
        if read_only:
            yield connection
        else:
            _migrate(connection, path)
            yield cast(duckdb.DuckDBPyConnection, _RedactingConnection(connection))
    finally:
        if held is not None:
            connection.close()  # a cursor: the held connection's own close checkpoints
        else:
            _close(connection, path, read_only)


def upgrade(path: Path) -> None:
    """Migrate an existing store to this evalcore's schema before a command reads it (readers open it read-only, and
    a store an older evalcore wrote lacks the newer columns); nothing for a store that does not exist. The version is
    read first, so a store already at this schema is never opened for writing (a run may be writing to it)."""
    if not path.exists():
        return
    with connect(path, read_only=True) as connection:
        try:
            row = connection.execute("SELECT max(version) FROM schema_version").fetchone()
        except duckdb.CatalogException:
            row = None
    if row is None or row[0] is None or row[0] < SCHEMA_VERSION:
        with connect(path):
            pass


class _RedactingConnection:
    """A write connection whose statements get their parameters redacted; everything else is the DuckDB connection's."""

    def __init__(self, connection: duckdb.DuckDBPyConnection) -> None:
        self._connection = connection

    def execute(self, query: str, parameters: object = None) -> duckdb.DuckDBPyConnection:
        return self._connection.execute(query, redaction.redact(parameters))

    def executemany(self, query: str, parameters: object = None) -> duckdb.DuckDBPyConnection:
        return self._connection.executemany(query, redaction.redact(parameters))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)


# Each table's column types at SCHEMA_VERSION, read from the first store written (`insert_rows`).
_COLUMN_TYPES: dict[str, dict[str, str]] = {}


INSERT_CHUNK = 5_000  # rows per statement of `insert_rows`


def insert_rows(connection: duckdb.DuckDBPyConnection, table: str, columns: str, rows: Iterable[Sequence[Any]], *, chunk: int | None = None) -> None:
    """Insert `rows` (values in the order of `columns`; `table` and `columns` are the caller's constants), in their
    order, in one statement per `chunk` rows (`INSERT_CHUNK` by default) that binds one list per column (`SELECT unnest(?::TYPE[]), ...`).

    Not executemany (DuckDB runs its statement once per row, ~1.3 ms of CPU each), nor multi-row VALUES (parsing
    and binding thousands of placeholders cost ~0.1 ms per row): the lists bind in one step, about 14 times faster.
    Chunked, and `rows` may be a generator: a statement's lists (and DuckDB's copy of each value, and the redacted
    copy a write connection binds) are held while it runs, so a run's metrics (some 140,000 values at 2,000 cases)
    bound in one statement held them all at once; a chunk holds `chunk` rows of them.
    """
    size = chunk or INSERT_CHUNK
    statement: str | None = None
    batch: list[Sequence[Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            statement = statement or _insert_statement(connection, table, columns)
            connection.execute(statement, [list(values) for values in zip(*batch, strict=True)])
            batch = []
    if batch:
        statement = statement or _insert_statement(connection, table, columns)
        connection.execute(statement, [list(values) for values in zip(*batch, strict=True)])


def _insert_statement(connection: duckdb.DuckDBPyConnection, table: str, columns: str) -> str:
    names = [column.strip() for column in columns.split(",")]
    types = _COLUMN_TYPES.get(table)
    if types is None:  # a write connection's store is at SCHEMA_VERSION (`connect` migrates it): one table, one set of types
        types = _COLUMN_TYPES[table] = dict(connection.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ?", [table]).fetchall())
    select = ", ".join(f"unnest(?::{types[name]}[])" for name in names)
    return f"INSERT INTO {table} ({columns}) SELECT {select}"


def report_rows(path: Path, table: str) -> list[dict[str, Any]]:
    """Every row of a table that keeps one JSON report per row (`comparisons`, `perturbations`), newest first, its
    `report_json` parsed into `report`; [] without a store or on a store no writer has migrated to the table yet.
    `table` is the caller's constant."""
    if not path.exists():
        return []
    with connect(path, read_only=True) as connection:
        try:
            cursor = connection.execute(f"SELECT * FROM {table} ORDER BY created_at DESC")
        except duckdb.CatalogException:
            return []
        columns = [d[0] for d in cursor.description]
        rows = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
    for row in rows:
        row["report"] = json.loads(row.pop("report_json"))
    return rows


# The memory DuckDB may use for the checkpoint that closes a store after writing, beyond what it holds when the
# checkpoint starts (a transaction's data waiting to be written, say). The checkpoint's vacuum merges a
# table's small row groups (a batch's write appends one of its own) into larger ones, re-reading a large one whole
# now and then; uncapped, DuckDB keeps what it reads in memory up to its default limit (80% of the machine's), and
# one batch's close of a store holding some 100,000 attempts took 600 MB, of a million 1.8 GB. The checkpoint
# streams through DuckDB's buffer pool, so a cap costs no CPU (`bench/store_batch_memory.py`). Only the checkpoint
# is capped: the writes before it run under DuckDB's default, so a cap can never fail a write. None: no cap.
CHECKPOINT_MEMORY: int | None = 32 * 1024 * 1024
# Write connections this process has open, by resolved path: DuckDB shares one database instance between them, and a
# memory limit is the instance's, so only the last one to close (the one whose close checkpoints) sets it, and no
# open of the path can come between its cap and its close.
_WRITERS: dict[str, int] = {}
_WRITERS_LOCK = threading.Lock()


def _close(connection: duckdb.DuckDBPyConnection, path: Path, read_only: bool) -> None:
    """Close a connection `_open` made; the last write connection to a store checkpoints first, its memory capped."""
    if read_only:
        connection.close()
        return
    key = str(path.resolve())
    with _WRITERS_LOCK:
        left = _WRITERS.pop(key, 1) - 1
        if left > 0:
            _WRITERS[key] = left
            connection.close()
            return
        checkpointed = _checkpoint_capped(connection)
        connection.close()
        if not checkpointed:
            # DuckDB gave up the checkpoint under the cap, which leaves its instance unusable (a "fatal" error):
            # what was written is in the WAL, and a new instance checkpoints it uncapped, as a close always did.
            with contextlib.suppress(duckdb.Error), contextlib.closing(duckdb.connect(str(path))) as again:
                again.execute("CHECKPOINT")


def _checkpoint_capped(connection: duckdb.DuckDBPyConnection) -> bool:
    """Checkpoint under a memory limit of what DuckDB holds plus `CHECKPOINT_MEMORY`; whether the store is usable
    after. Everything is committed by now (in the WAL), so a checkpoint DuckDB gives up loses nothing; a cap it
    refuses (below what it holds pinned) leaves the checkpoint to the close, uncapped, as before."""
    if CHECKPOINT_MEMORY is None:
        return True
    try:
        row = connection.execute("SELECT sum(memory_usage_bytes) FROM duckdb_memory()").fetchone()
        in_use = int(row[0] or 0) if row else 0
        limit = max(1, in_use + CHECKPOINT_MEMORY)  # DuckDB reads a negative limit as none at all
        connection.execute(f"SET memory_limit = '{limit}B'")
    except duckdb.Error:
        return True
    try:
        connection.execute("CHECKPOINT")
    except duckdb.Error:
        return False
    finally:
        with contextlib.suppress(duckdb.Error):
            connection.execute("RESET memory_limit")
    return True


def _open(path: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    """Open, waiting out another short-lived connection: another process's (DuckDB allows one writer process), or
    one of this process's own threads' in the other mode (DuckDB refuses a second configuration of an open file)."""
    deadline = time.monotonic() + LOCK_WAIT_S
    delay = 0.01
    while True:
        try:
            if read_only:
                return duckdb.connect(str(path), read_only=True)
            with _WRITERS_LOCK:  # never onto an instance whose last writer is closing it under the cap
                connection = duckdb.connect(str(path), read_only=False)
                key = str(path.resolve())
                _WRITERS[key] = _WRITERS.get(key, 0) + 1
                return connection
        except (duckdb.IOException, duckdb.ConnectionException) as exc:
            busy = "lock" in str(exc).lower() or "different configuration" in str(exc).lower()
            if not busy or time.monotonic() > deadline:
                raise StoreError(f"cannot open the results store {path}: {exc}") from exc
        except duckdb.Error as exc:
            raise StoreError(f"cannot open the results store {path}: {exc}") from exc
        time.sleep(delay)
        delay = min(delay * 2, 0.2)


def _migrate(connection: duckdb.DuckDBPyConnection, path: Path) -> None:
    with _MIGRATING:
        _migrate_locked(connection, path)


def _migrate_locked(connection: duckdb.DuckDBPyConnection, path: Path) -> None:
    connection.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = connection.execute("SELECT max(version) FROM schema_version").fetchone()
    current = row[0] if row and row[0] is not None else 0
    if current > SCHEMA_VERSION:
        raise StoreError(f"{path} has schema version {current}, newer than this evalcore ({SCHEMA_VERSION}); upgrade evalcore")
    for version in range(current + 1, SCHEMA_VERSION + 1):
        connection.execute("BEGIN TRANSACTION")
        try:
            step = MIGRATIONS[version - 1]
            if callable(step):  # a migration that needs more than SQL (e.g. the file system)
                step(connection)
            else:
                connection.execute(step)
            connection.execute("INSERT INTO schema_version VALUES (?)", [version])
            connection.execute("COMMIT")
        except duckdb.Error as exc:
            connection.execute("ROLLBACK")
            raise StoreError(f"cannot migrate {path} to schema version {version}: {exc}") from exc
