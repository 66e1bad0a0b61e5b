"""I/O layer: read-only queries behind the dashboard, each returning a pandas DataFrame.

Every function opens a short-lived read-only connection (waiting out a
writer's batch, see `evalcore.store.db.connect`) and closes it before
returning, so a run can keep writing while the dashboard reads. A missing
store or a store without the tables yet gives empty frames, never an
exception: an empty dashboard is a normal first state.

Filters are one small typed object, `AttemptFilters`. The SQL is static and
parameterised: an unset filter is passed as NULL / an empty list and the
`(? IS NULL OR ...)` guards switch it off, so no SQL is ever assembled from
values.

Scope: with no `run_id`, the matrix and the per-model summary show each
model's newest run among the runs the other filters keep; the latency, flaky
and export views use every run the filters keep. Without a `run_id`, only the
kinds of run that stand for the server are in scope (`evalcore.run_kinds`):
an arm of `compare` or `perturb` and a replay are listed on the Runs and
Compare pages, and open in the matrix only when picked by id.
"""

from __future__ import annotations

import contextlib
import json
import math
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlencode

import duckdb
import numpy as np
import pandas as pd

from evalcore.behaviour.metric_sets import metric_sets_on, run_metric_sets
from evalcore.errors import StoreError
from evalcore.records import AttemptScore, JudgeLabel, JudgeTrust, MetricSet
from evalcore.run_kinds import KIND_LABELS, run_status, standing_kinds
from evalcore.scoring.agreement import DEFAULT_THRESHOLDS, Agreement, StatusThresholds, agreements
from evalcore.scoring.agreement import labelling_queue as sample_queue
from evalcore.scoring.calls import execution_stats, model_turn_stats
from evalcore.scoring.metrics import MetricAttempt, spend_metrics
from evalcore.scoring.stats import run_flakiness
from evalcore.store import judge_labels
from evalcore.store.behaviour import effective_status
from evalcore.store.db import connect
from evalcore.store.export import export_query


@dataclass(frozen=True)
class AttemptFilters:
    """What the sidebar selects; every field unset means "all"."""

    run_id: str | None = None
    models: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    date_from: date | None = None
    date_to: date | None = None
    golden_path: str | None = None
    server: str | None = None  # the server's name from server/discover, or its target when it gave none

    def parameters(self) -> list[Any]:
        """The values for `_SCOPED`'s placeholders, in order."""
        return [
            self.run_id,
            self.run_id,
            self.run_id,
            list(standing_kinds()),
            list(self.models),
            list(self.models),
            list(self.kinds),
            list(self.kinds),
            self.date_from,
            self.date_from,
            self.date_to,
            self.date_to,
            self.golden_path,
            self.golden_path,
            self.server,
            self.server,
        ]

    def run_parameters(self) -> list[Any]:
        """The values for `_RUNS_IN_SCOPE`'s placeholders: the filters on the run itself."""
        return [
            *(self.run_id, self.run_id, self.run_id, list(standing_kinds()), self.date_from, self.date_from, self.date_to, self.date_to),
            *(self.golden_path, self.golden_path, self.server, self.server),
        ]


# Attempts joined with their run, narrowed by AttemptFilters.parameters().
_SCOPED = """
scoped AS (
    SELECT a.*, r.run_date, r.started_at AS run_started_at, r.golden_path, r.server_target, r.server_fingerprint
    FROM behaviour_attempts a JOIN behaviour_runs r ON a.run_id = r.run_id
    WHERE (?::VARCHAR IS NULL OR a.run_id = ?::VARCHAR)
      AND (?::VARCHAR IS NOT NULL OR list_contains(?::VARCHAR[], coalesce(r.kind, 'run')))
      AND (len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], a.model))
      AND (len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], a.case_kind))
      AND (?::DATE IS NULL OR r.run_date >= ?::DATE)
      AND (?::DATE IS NULL OR r.run_date <= ?::DATE)
      AND (?::VARCHAR IS NULL OR r.golden_path = ?::VARCHAR)
      AND (?::VARCHAR IS NULL OR coalesce(r.server_name, r.server_target) = ?::VARCHAR)
)"""

# The runs AttemptFilters.run_parameters() keep, newest first (by run date, then start time), with the models each was started with.
_RUNS_IN_SCOPE = """
    SELECT r.run_id, r.models_json FROM behaviour_runs r
    WHERE (?::VARCHAR IS NULL OR r.run_id = ?::VARCHAR)
      AND (?::VARCHAR IS NOT NULL OR list_contains(?::VARCHAR[], coalesce(r.kind, 'run')))
      AND (?::DATE IS NULL OR r.run_date >= ?::DATE)
      AND (?::DATE IS NULL OR r.run_date <= ?::DATE)
      AND (?::VARCHAR IS NULL OR r.golden_path = ?::VARCHAR)
      AND (?::VARCHAR IS NULL OR coalesce(r.server_name, r.server_target) = ?::VARCHAR)
    ORDER BY r.run_date DESC, r.started_at DESC, r.run_id"""

# Which of the given runs hold attempts of which models, within the model and kind filters. The list of runs is what
# keeps it cheap: attempts are stored run after run, so DuckDB skips every block of rows outside those runs.
_RUN_MODELS = """
    SELECT DISTINCT run_id, model FROM attempts
    WHERE list_contains(?::VARCHAR[], run_id)
      AND (len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], model))
      AND (len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], case_kind))"""

# The attempts of each picked (run, model) pair: its unnested pairs, then the pairs' runs again as a list (see _RUN_MODELS).
_PICKED = """
picked_pairs AS (SELECT unnest(?::VARCHAR[]) AS run_id, unnest(?::VARCHAR[]) AS model),
picked AS (
    SELECT a.* FROM attempts a JOIN picked_pairs p ON a.run_id = p.run_id AND a.model = p.model
    WHERE list_contains(?::VARCHAR[], a.run_id) AND (len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], a.case_kind))
)"""


def picked_runs(path: Path, filters: AttemptFilters | None = None) -> dict[str, str]:
    """Each model's newest run within the filters (by run date, then start time) that holds attempts of it: model -> run_id,
    by model (the chosen run when run_id is set).

    Reads the runs table and the attempts of each model's newest run among those started with it, so the cost does
    not grow with the history. When that newest run holds none of its attempts yet (a run just started), or a run
    does not name its models, every run in scope is read instead (`latest_run_ids`): the same answer, slower.
    """
    with _reading(path) as connection:
        return _picked_on(connection, path, filters or AttemptFilters())


def _picked_on(connection: duckdb.DuckDBPyConnection | None, path: Path, filters: AttemptFilters) -> dict[str, str]:
    newest: dict[str, str] = {}
    for run_id, models_json in _frame_on(connection, path, _RUNS_IN_SCOPE, filters.run_parameters(), ("run_id", "models_json")).itertuples(index=False):
        models = json.loads(models_json)
        if not models:
            return _picked_from_every_run(connection, path, filters)
        for model in models:
            if not filters.models or model in filters.models:
                newest.setdefault(model, run_id)
    if not newest:
        return {}
    runs = sorted(set(newest.values()))
    kinds, models = list(filters.kinds), list(filters.models)
    found = _frame_on(connection, path, _RUN_MODELS, [runs, models, models, kinds, kinds], ("run_id", "model"))
    present = set(found.itertuples(index=False, name=None))
    unlisted = any(model not in newest for _, model in present)
    if unlisted or any((run_id, model) not in present for model, run_id in newest.items()):
        return _picked_from_every_run(connection, path, filters)
    return dict(sorted(newest.items()))


def _picked_from_every_run(connection: duckdb.DuckDBPyConnection | None, path: Path, filters: AttemptFilters) -> dict[str, str]:
    frame = _latest_run_ids_on(connection, path, filters)
    return {str(model): str(run_id) for model, run_id in zip(frame["model"], frame["run_id"], strict=True)}


def _picked_parameters(picked: dict[str, str], kinds: Sequence[str]) -> list[Any]:
    """The values for `_PICKED`'s placeholders."""
    return [list(picked.values()), list(picked), sorted(set(picked.values())), list(kinds), list(kinds)]


MATRIX_COLUMNS = (
    "model",
    "case_id",
    "run_id",
    "kind",
    "passes",
    "runs",
    "pass_rate",
    "pass_hat_k",
    "attempts",
    "errored",
    "top_failing_reason",
    "simulated",
    "server_target",
    "server_fingerprint",
    "run_date",
)


def latest_run_ids(path: Path, filters: AttemptFilters | None = None) -> pd.DataFrame:
    """Each model's newest run (by run date, then start time) within the filters: model, run_id, run_date, started_at, golden_path, server_fingerprint."""
    with _reading(path) as connection:
        return _latest_run_ids_on(connection, path, filters or AttemptFilters())


def _latest_run_ids_on(connection: duckdb.DuckDBPyConnection | None, path: Path, filters: AttemptFilters) -> pd.DataFrame:
    sql = (
        "WITH "
        + _SCOPED
        + """
        SELECT model, first(run_id ORDER BY run_date DESC, run_started_at DESC) AS run_id, max(run_date) AS run_date,
               first(run_started_at ORDER BY run_date DESC, run_started_at DESC) AS started_at,
               first(golden_path ORDER BY run_date DESC, run_started_at DESC) AS golden_path,
               first(server_fingerprint ORDER BY run_date DESC, run_started_at DESC) AS server_fingerprint
        FROM scoped GROUP BY model ORDER BY model"""
    )
    return _frame_on(connection, path, sql, filters.parameters(), ("model", "run_id", "run_date", "started_at", "golden_path", "server_fingerprint"))


def runs(path: Path) -> pd.DataFrame:
    """Every behaviour run, newest first, with its attempt count; `status` says `crashed` for a run whose process is gone."""
    sql = """
        SELECT r.run_id, r.run_date, r.started_at, r.status, r.golden_path, r.server_target, r.server_name, r.server_fingerprint,
               r.models_json, r.runs, r.passed, coalesce(a.attempts, 0) AS attempts, r.heartbeat_at, r.pid
        FROM behaviour_runs r LEFT JOIN (SELECT run_id, count(*) AS attempts FROM attempts GROUP BY run_id) a ON a.run_id = r.run_id
        ORDER BY r.started_at DESC"""
    columns = ("run_id", "run_date", "started_at", "status", "golden_path", "server_target", "server_name", "server_fingerprint", "models_json", "runs")
    frame = _frame(path, sql, [], (*columns, "passed", "attempts", "heartbeat_at", "pid"))
    # "running" in the table is only a claim: a run whose process died is shown as crashed.
    frame["status"] = [
        effective_status({"status": status, "heartbeat_at": _python_datetime(heartbeat), "pid": None if pd.isna(pid) else int(pid)})
        for status, heartbeat, pid in zip(frame["status"], frame["heartbeat_at"], frame["pid"], strict=True)
    ]
    return frame.drop(columns=["heartbeat_at", "pid"])


@dataclass(frozen=True)
class RunFilters:
    """What the Runs page's sidebar selects; every field unset means "all"."""

    models: tuple[str, ...] = ()  # a run is kept when it ran any of them
    golden_paths: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    date_from: date | None = None
    date_to: date | None = None


RUN_KINDS = tuple(KIND_LABELS.values())
RUN_LIST_COLUMNS = (
    "run_id", "run_date", "started_at", "status", "kind", "golden_path", "models", "server", "runs", "attempts", "errored", "why", "simulated",
)  # fmt: skip


def run_list(path: Path, filters: RunFilters | None = None) -> pd.DataFrame:
    """Every behaviour run the filters keep, newest first, one row each (RUN_LIST_COLUMNS).

    `status` is `gate.run_status` of the stored status (a run whose process died reads crashed) and the stored gate;
    `why` is the gate's reason, or the error that stopped the run; `errored` counts the attempts that errored (the
    taxonomy's provider and judge errors), which no quality figure counts.
    """
    sql = """
        SELECT r.run_id, r.run_date, r.started_at, r.status, r.heartbeat_at, r.pid, r.golden_path,
               coalesce(r.server_name, r.server_target) AS server, r.models_json, r.runs,
               coalesce(r.kind, 'run') AS run_kind,
               json_extract(r.report_json, '$.gate') AS gate_json, r.error,
               (SELECT count(*) FROM behaviour_attempts a WHERE a.run_id = r.run_id) AS attempts,
               (SELECT count(*) FROM behaviour_attempts a WHERE a.run_id = r.run_id AND a.error_kind IS NOT NULL) AS errored,
               (SELECT bool_or(a.simulated) FROM behaviour_attempts a WHERE a.run_id = r.run_id) AS simulated
        FROM behaviour_runs r ORDER BY r.started_at DESC"""
    raw = ("run_id", "run_date", "started_at", "status", "heartbeat_at", "pid", "golden_path", "server", "models_json", "runs", "run_kind")
    frame = _frame(path, sql, [], (*raw, "gate_json", "error", "attempts", "errored", "simulated"))
    rows = []
    for row in frame.to_dict("records"):
        pid = _int_or_none(_number_or_none(row["pid"]))
        stored = effective_status({"status": row["status"], "heartbeat_at": _python_datetime(row["heartbeat_at"]), "pid": pid})
        gate = json.loads(row["gate_json"]) if isinstance(row["gate_json"], str) else None
        why = gate.get("reason") if stored == "complete" and isinstance(gate, dict) else row["error"]
        rows.append(
            {
                **{column: row[column] for column in ("run_id", "run_date", "started_at", "golden_path", "server", "runs", "attempts", "errored")},
                "status": run_status(stored, gate),
                "kind": KIND_LABELS.get(str(row["run_kind"]), str(row["run_kind"])),
                "models": ", ".join(json.loads(row["models_json"])),
                "why": None if why is None or (isinstance(why, float) and math.isnan(why)) else str(why),
                "simulated": bool(row["simulated"]) if row["simulated"] is not None and not pd.isna(row["simulated"]) else False,
            }
        )
    listed = pd.DataFrame(rows, columns=list(RUN_LIST_COLUMNS))
    filters = filters or RunFilters()
    if listed.empty:
        return listed
    keep = pd.Series(True, index=listed.index)
    if filters.models:
        keep &= listed["models"].map(lambda models: bool(set(models.split(", ")) & set(filters.models)))
    for column, wanted in (("golden_path", filters.golden_paths), ("kind", filters.kinds), ("status", filters.statuses)):
        if wanted:
            keep &= listed[column].isin(wanted)
    dates = pd.to_datetime(listed["run_date"]).dt.date
    if filters.date_from is not None:
        keep &= dates >= filters.date_from
    if filters.date_to is not None:
        keep &= dates <= filters.date_to
    return listed[keep].reset_index(drop=True)


def run_models(path: Path) -> list[str]:
    """Every model any stored run asked for, sorted: the Runs page's model filter."""
    frame = _frame(path, "SELECT DISTINCT unnest(json_extract_string(models_json, '$[*]')) AS model FROM behaviour_runs", [], ("model",))
    return sorted(str(model) for model in frame["model"])


def run_catalog(path: Path, run_id: str) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """What one run's models were offered: the server's tools as the run recorded them ([{"name", "description"}, ...])
    and the catalog rewrite the run applied (its config's `catalog`: tool overrides and distractors; {} without any)."""
    sql = "SELECT server_tools_json, json_extract(config_json, '$.catalog') AS overrides FROM behaviour_runs WHERE run_id = ?"
    frame = _frame(path, sql, [run_id], ("server_tools_json", "overrides"))
    if frame.empty:
        return [], {}
    tools, overrides = frame["server_tools_json"].iloc[0], frame["overrides"].iloc[0]
    parsed_tools = json.loads(tools) if isinstance(tools, str) else []
    parsed_overrides = json.loads(overrides) if isinstance(overrides, str) else {}
    return [t for t in parsed_tools if isinstance(t, dict)], parsed_overrides if isinstance(parsed_overrides, dict) else {}


GOLDEN_SET_COLUMNS = ("golden_path", "golden_hash", "runs", "last_started_at")


def golden_sets(path: Path) -> pd.DataFrame:
    """Every golden set that has runs, the one run last first: its path, the hash its newest run recorded, how many runs, when last run."""
    sql = """
        SELECT golden_path, first(golden_hash ORDER BY started_at DESC) AS golden_hash, count(*) AS runs, max(started_at) AS last_started_at
        FROM behaviour_runs WHERE run_id IN (SELECT DISTINCT run_id FROM attempts)
        GROUP BY golden_path ORDER BY last_started_at DESC, golden_path"""
    return _frame(path, sql, [], GOLDEN_SET_COLUMNS)


def filter_options(path: Path) -> dict[str, list[Any]]:
    """The values the sidebar offers: golden sets (the one run last first) with their newest hashes, servers, models,
    case kinds, run dates (min, max), and run ids (newest first) with each run's golden set."""
    options: dict[str, list[Any]] = {
        "golden_paths": [], "golden_hashes": [], "servers": [], "models": [], "kinds": [], "dates": [], "run_ids": [], "run_golden_paths": [],
    }  # fmt: skip
    sql = """
        SELECT DISTINCT a.model, a.case_kind, r.golden_path, coalesce(r.server_name, r.server_target) AS server, r.run_date
        FROM (SELECT DISTINCT run_id, model, case_kind FROM attempts) a JOIN behaviour_runs r ON a.run_id = r.run_id"""
    with _reading(path) as connection:  # one open of the store for the three queries
        frame = _frame_on(connection, path, sql, [], ("model", "case_kind", "golden_path", "server", "run_date"))
        if frame.empty:
            return options
        sets, every_run = golden_sets(path), runs(path)
    options["golden_paths"], options["golden_hashes"] = list(sets["golden_path"]), list(sets["golden_hash"])
    options["servers"] = sorted(frame["server"].unique())
    options["models"] = sorted(frame["model"].unique())
    options["kinds"] = sorted(frame["case_kind"].unique())
    options["dates"] = [pd.Timestamp(frame["run_date"].min()).date(), pd.Timestamp(frame["run_date"].max()).date()]
    options["run_ids"], options["run_golden_paths"] = list(every_run["run_id"]), list(every_run["golden_path"])
    return options


_MATRIX_SQL = (
    "WITH "
    + _PICKED
    + """,
    cells AS (
        SELECT model, case_id, any_value(run_id) AS run_id, any_value(case_kind) AS kind, bool_or(simulated) AS simulated
        FROM picked GROUP BY model, case_id
    ),
    reasons AS (
        SELECT model, case_id, reason, count(*) AS n
        FROM (SELECT model, case_id, unnest(reasons_json->>'$[*]') AS reason FROM picked WHERE NOT passed)
        GROUP BY model, case_id, reason
    ),
    top AS (SELECT model, case_id, first(reason ORDER BY n DESC, reason) AS top_failing_reason FROM reasons GROUP BY model, case_id)
    SELECT c.model, c.case_id, c.run_id, c.kind, NULL AS passes, NULL AS runs, NULL AS pass_rate, NULL AS pass_hat_k,
           NULL AS attempts, NULL AS errored, t.top_failing_reason, c.simulated, r.server_target, r.server_fingerprint, r.run_date
    FROM cells c JOIN behaviour_runs r ON c.run_id = r.run_id LEFT JOIN top t ON c.model = t.model AND c.case_id = t.case_id
    ORDER BY c.case_id, c.model"""
)


def matrix(path: Path, filters: AttemptFilters | None = None) -> pd.DataFrame:
    """One row per model x case of each model's newest run in scope.

    Columns: see MATRIX_COLUMNS. passes, runs (attempts scored: errored ones
    are in no denominator; `attempts` and `errored` count them), pass_rate and pass_hat_k (tau-bench pass^k at
    k = the run's runs) are the run's stored metrics (`evalcore.scoring.metrics`;
    computed by the same function for a run still in progress, which has none
    stored yet). top_failing_reason is the reason most failed attempts gave
    (ties: alphabetical), None when none failed.

    A finished run stored each cell as its report gives it (`case_cells`), so the matrix reads those few rows; a run
    without them (still in progress or resumed, or finished before the table existed) is read from its attempts.
    """
    filters = filters or AttemptFilters()
    with _reading(path) as connection:
        picked = _picked_on(connection, path, filters)
        if connection is None or not picked:
            return pd.DataFrame(columns=list(MATRIX_COLUMNS))
        stored = _frame_on(connection, path, _STORED_CELLS_SQL, _picked_parameters(picked, ())[:3], MATRIX_COLUMNS)
        written = set(zip(stored["run_id"].tolist(), stored["model"].tolist(), strict=True))
        unwritten = {model: run_id for model, run_id in picked.items() if (run_id, model) not in written}
        # A case's metrics, its scores among them, are the same whichever kinds are shown: the stored ones serve a kind filter too.
        scores = _stored_case_scores_on(connection, path, sorted({run_id for run_id, _ in written}))
        frames = [stored[stored["kind"].isin(filters.kinds)] if filters.kinds else stored]
        if unwritten:
            read, computed_scores = _cells_from_attempts_on(connection, path, unwritten, filters.kinds)
            frames.append(read)
            scores.extend(computed_scores)
    frames = [frame for frame in frames if not frame.empty] or frames[:1]
    frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True).sort_values(["case_id", "model"], ignore_index=True)
    frame = frame.reset_index(drop=True)
    frame["top_failing_reason"] = _none_for_missing(frame["top_failing_reason"])
    by_cell: dict[tuple[str, str, str], dict[str, float]] = {}
    for cell, name, value in scores:
        by_cell.setdefault(cell, {})[name] = value
    if by_cell:
        cells = list(zip(frame["run_id"].tolist(), frame["model"].tolist(), frame["case_id"].tolist(), strict=True))
        for column in dict.fromkeys(name for cell in cells for name in by_cell.get(cell, {})):  # as `score_columns` orders them
            frame[column] = [by_cell.get(cell, {}).get(column) for cell in cells]
    return frame


def _cells_from_attempts_on(
    connection: duckdb.DuckDBPyConnection, path: Path, picked: dict[str, str], kinds: Sequence[str]
) -> tuple[pd.DataFrame, list[tuple[tuple[str, str, str], str, float]]]:
    """The matrix's cells of runs that stored none (`_STORED_CELLS_SQL`): kinds and top failing reasons from their
    attempts, numbers from their stored case metrics (or computed), and each cell's `score:<id>` metrics."""
    frame = _frame_on(connection, path, _MATRIX_SQL, _picked_parameters(picked, kinds), MATRIX_COLUMNS)
    metrics, scores = _case_metrics_on(connection, path, sorted(set(frame["run_id"])), kinds)
    frame = frame.drop(columns=list(_CELL_METRIC_COLUMNS[3:])).merge(metrics, on=["run_id", "model", "case_id"], how="left")[list(MATRIX_COLUMNS)]
    for column in _CELL_METRIC_COLUMNS[3:]:
        numbers = frame[column].astype("float64")
        frame[column] = numbers.astype("int64") if column in _COUNT_COLUMNS and numbers.notna().all() else numbers
    return frame, scores


# The cells finished runs stored (`RunReport.case_cells`) of each picked (run, model) pair (`_PICKED`'s first three
# values), every kind, in the columns and order of _MATRIX_SQL. Only while the run stands complete: `finish_run` sets
# that with the cells, and a resume (`reopen_run`) takes it away until the run's end writes them afresh. Counts are INTEGER in the table; the frame carries
# them as int64, as the cells read from attempts do.
_STORED_CELLS_SQL = """
    WITH picked_pairs AS (SELECT unnest(?::VARCHAR[]) AS run_id, unnest(?::VARCHAR[]) AS model)
    SELECT c.model, c.case_id, c.run_id, c.kind, c.passes::BIGINT AS passes, c.runs::BIGINT AS runs, c.pass_rate, c.pass_hat_k,
           c.attempts::BIGINT AS attempts, c.errored::BIGINT AS errored, c.top_failing_reason, c.simulated,
           r.server_target, r.server_fingerprint, r.run_date
    FROM case_cells c JOIN picked_pairs p ON c.run_id = p.run_id AND c.model = p.model JOIN behaviour_runs r ON c.run_id = r.run_id
    WHERE list_contains(?::VARCHAR[], c.run_id) AND r.status = 'complete'
    ORDER BY c.case_id, c.model"""


SCORE_PREFIX = "score:"


def score_columns(sets: Sequence[MetricSet]) -> list[str]:
    """The `score:<id>` metrics (scorers beyond the built-in accuracies, e.g. the MRTR and state scorers) that apply
    somewhere in `sets`, in the order the sets give them."""
    columns = dict.fromkeys(name for found in sets for name, value in found.values.items() if name.startswith(SCORE_PREFIX) and value is not None)
    return list(columns)


# The matrix's numbers per (run, model, case) and where each is read: a stored metric, or pass^k at the run's runs.
_CELL_METRIC_COLUMNS = ("run_id", "model", "case_id", "passes", "runs", "pass_rate", "pass_hat_k", "attempts", "errored")
_COUNT_COLUMNS = ("passes", "runs", "attempts", "errored")
# A run stores some 70 metrics per case: DuckDB picks the few the matrix shows from the stored ones, and the
# `score:<id>` ones that apply, in the order they were stored.
_CASE_METRICS_SQL = """
    SELECT m.run_id, m.model, m.case_id,
           first(m.value) FILTER (WHERE m.metric = 'passes') AS passes,
           first(m.value) FILTER (WHERE m.metric = 'scored') AS runs,
           first(m.value) FILTER (WHERE m.metric = 'pass_rate') AS pass_rate,
           first(m.value) FILTER (WHERE m.metric = 'pass_hat_k@' || r.runs) AS pass_hat_k,
           first(m.value) FILTER (WHERE m.metric = 'attempts') AS attempts,
           first(m.value) FILTER (WHERE m.metric = 'errored') AS errored
    FROM (
        SELECT * FROM run_metrics
        WHERE list_contains(?::VARCHAR[], run_id) AND scope = 'case'
          AND (metric IN ('passes', 'scored', 'pass_rate', 'attempts', 'errored') OR starts_with(metric, 'pass_hat_k@'))
    ) m JOIN behaviour_runs r ON m.run_id = r.run_id
    GROUP BY m.run_id, m.model, m.case_id"""
_CASE_SCORES_SQL = """
    SELECT run_id, model, case_id, metric, value FROM run_metrics
    WHERE list_contains(?::VARCHAR[], run_id) AND scope = 'case' AND starts_with(metric, 'score:') AND value IS NOT NULL
    ORDER BY rowid"""


def _case_metrics_on(
    connection: duckdb.DuckDBPyConnection, path: Path, run_ids: Sequence[str], kinds: Sequence[str]
) -> tuple[pd.DataFrame, list[tuple[tuple[str, str, str], str, float]]]:
    """The matrix's numbers per (run, model, case) (`_CELL_METRIC_COLUMNS`), and each cell's applicable `score:<id>`
    metrics: as stored, or computed (`metric_sets_on`) for a run without stored metrics or under a kind filter."""
    stored = pd.DataFrame(columns=list(_CELL_METRIC_COLUMNS))
    scores: list[tuple[tuple[str, str, str], str, float]] = []
    if not kinds:
        stored = _frame_on(connection, path, _CASE_METRICS_SQL, [list(run_ids)], _CELL_METRIC_COLUMNS)
        scores = _stored_case_scores_on(connection, path, run_ids)
    rows = []
    for run_id, (sets, runs) in metric_sets_on(connection, sorted(set(run_ids) - set(stored["run_id"].tolist())), kinds, scope="case").items():
        for found_set in (found_set for found_set in sets if found_set.scope == "case"):
            names = ("passes", "scored", "pass_rate", f"pass_hat_k@{runs}", "attempts", "errored")
            rows.append((run_id, found_set.model, found_set.case_id, *(found_set.get(name) for name in names)))
            cell = (run_id, found_set.model, found_set.case_id)
            scores.extend((cell, name, value) for name, value in found_set.values.items() if name.startswith(SCORE_PREFIX) and value is not None)
    computed = pd.DataFrame(rows, columns=list(_CELL_METRIC_COLUMNS))
    return (computed if stored.empty else stored if computed.empty else pd.concat([stored, computed], ignore_index=True)), scores


def _stored_case_scores_on(connection: duckdb.DuckDBPyConnection, path: Path, run_ids: Sequence[str]) -> list[tuple[tuple[str, str, str], str, float]]:
    """Each stored case's applicable `score:<id>` metrics, as ((run, model, case), metric, value), in the order they were stored."""
    if not run_ids:
        return []
    found = _frame_on(connection, path, _CASE_SCORES_SQL, [list(run_ids)], ("run_id", "model", "case_id", "metric", "value"))
    return [((run_id, model, case_id), metric, float(value)) for run_id, model, case_id, metric, value in found.itertuples(index=False, name=None)]


SUMMARY_COLUMNS = (
    "model",
    "simulated",
    "run_id",
    "attempts",
    "errored",
    "error_rate",
    "selection_accuracy",
    "argument_accuracy",
    "sequence_accuracy",
    "execution_accuracy",
    "over_call_rate",
    "task_completion",
    "pass_rate",
    "latency_p50_ms",
    "latency_p95_ms",
    "cost_usd",
    "cost_per_correct_usd",
)


def model_summary(path: Path, filters: AttemptFilters | None = None) -> pd.DataFrame:
    """Per model over its newest run in scope: the run's stored model metrics, as in the report (`evalcore.scoring.metrics`).

    Rates are over the scored attempts they apply to; errored attempts count in
    error_rate only. cost_usd is NULL when any attempt's price was unknown.
    Layer 2: robustness_rate, attack_success_rate, refusal_rate (NULL when the
    run had none). Then a `score:<id>` column for each further scorer that applied
    (MRTR, state, conversation scorers), likewise in `matrix` per case. With a case-kind filter the same function computes them over
    that kind's attempts alone.
    """
    filters = filters or AttemptFilters()
    sql = "WITH " + _PICKED + " SELECT model, bool_or(simulated) AS simulated, any_value(run_id) AS run_id FROM picked GROUP BY model ORDER BY model"
    with _reading(path) as connection:
        runs = _picked_on(connection, path, filters)
        picked = _frame_on(connection, path, sql, _picked_parameters(runs, filters.kinds), ("model", "simulated", "run_id"))
        sets = metric_sets_on(connection, sorted(set(picked["run_id"])), filters.kinds, scope="model") if connection is not None else {}
    models = {(run_id, s.model): s for run_id, (found, _) in sets.items() for s in found if s.scope == "model"}
    rows = []
    for model, simulated, run_id in zip(picked["model"], picked["simulated"], picked["run_id"], strict=True):
        found = models.get((run_id, model))
        values = found.values if found is not None else {}
        row: dict[str, Any] = {"model": model, "simulated": bool(simulated), "run_id": run_id}
        for column in (*SUMMARY_COLUMNS[3:], *LAYER2_COLUMNS):
            row[column] = values.get(column)
        row["attempts"], row["errored"] = _int_or_none(values.get("attempts")), _int_or_none(values.get("errored"))
        rows.append(row)
    extra = score_columns([found for found in (models.get((run_id, model)) for model, run_id in zip(picked["model"], picked["run_id"], strict=True)) if found])
    for row, model, run_id in zip(rows, picked["model"], picked["run_id"], strict=True):
        found = models.get((run_id, model))
        row.update({column: found.get(column) if found is not None else None for column in extra})
    return pd.DataFrame(rows, columns=[*SUMMARY_COLUMNS, *LAYER2_COLUMNS, *extra])


def metric_sets(path: Path, run_id: str) -> list[MetricSet]:
    """One run's metric sets: as stored, or (a run in progress, a store older than schema 5) computed now by the same function."""
    return run_metric_sets(path, [run_id]).get(run_id, ([], 0))[0]


def _int_or_none(value: float | None) -> int | None:
    return None if value is None else int(value)


LAYER2_COLUMNS = ("robustness_rate", "attack_success_rate", "refusal_rate")


LATENCY_COLUMNS = (
    "model",
    "simulated",
    "attempts",
    "latency_p50_ms",
    "latency_p95_ms",
    "input_tokens_per_attempt",
    "output_tokens_per_attempt",
    "tokens_per_correct",
    "cost_per_attempt_usd",
    "cost_per_correct_usd",
)


def latency(path: Path, filters: AttemptFilters | None = None) -> pd.DataFrame:
    """Per model over every run in scope: model latency p50/p95 (an attempt's model time), tokens and cost per attempt
    and per correct attempt, by the run metrics' own function (`evalcore.scoring.metrics.spend_metrics`)."""
    return _spend_frame(path, filters, ("model",))


def latency_over_time(path: Path, filters: AttemptFilters | None = None) -> pd.DataFrame:
    """The `latency` columns per run date and model, oldest first."""
    return _spend_frame(path, filters, ("run_date", "model"))


# Page column -> the spend metric it shows.
_SPEND_COLUMNS = {
    "latency_p50_ms": "latency_p50_ms",
    "latency_p95_ms": "latency_p95_ms",
    "input_tokens_per_attempt": "mean_input_tokens",
    "output_tokens_per_attempt": "mean_output_tokens",
    "tokens_per_correct": "tokens_per_correct",
    "cost_per_attempt_usd": "cost_per_attempt_usd",
    "cost_per_correct_usd": "cost_per_correct_usd",
}


_SPEND_ROW = (
    "run_date", "model", "simulated", "case_id", "case_kind", "attempt", "passed", "stop_reason",
    "latency_ms", "input_tokens", "output_tokens", "cost_usd", "retries",
)  # fmt: skip


def _spend_frame(path: Path, filters: AttemptFilters | None, keys: tuple[str, ...]) -> pd.DataFrame:
    sql = (
        "WITH "
        + _SCOPED
        + """ SELECT run_date, model, simulated, case_id, case_kind, attempt, passed, stop_reason, latency_ms, input_tokens,
                 output_tokens, cost_usd, retries
          FROM scoped ORDER BY run_date, model, run_id, case_id, attempt"""
    )
    frame = _frame(path, sql, (filters or AttemptFilters()).parameters(), _SPEND_ROW)
    groups: dict[tuple[Any, ...], list[MetricAttempt]] = {}
    simulated: dict[tuple[Any, ...], bool] = {}
    for row in frame.to_dict("records"):
        key = tuple(row[k] for k in keys)
        groups.setdefault(key, []).append(_spend_attempt(row))
        simulated[key] = simulated.get(key, False) or bool(row["simulated"])
    rows = []
    for key, attempts in sorted(groups.items(), key=lambda item: item[0]):
        spend = spend_metrics(attempts)
        shown = {column: spend[metric] for column, metric in _SPEND_COLUMNS.items()}
        rows.append({**dict(zip(keys, key, strict=True)), "simulated": simulated[key], "attempts": len(attempts), **shown})
    return pd.DataFrame(rows, columns=[*keys[:-1], *LATENCY_COLUMNS])


def _spend_attempt(row: dict[str, Any]) -> MetricAttempt:
    """What the spend metrics read of an attempt row (its scores are not needed: only whether it passed)."""

    def known(value: Any) -> Any:
        return None if value is None or (isinstance(value, float) and math.isnan(value)) else value

    return MetricAttempt(
        row["model"],
        row["case_id"],
        row["case_kind"],
        int(row["attempt"]),
        AttemptScore((), bool(row["passed"])),
        str(row["stop_reason"]),
        known(row["latency_ms"]),
        known(row["input_tokens"]),
        known(row["output_tokens"]),
        known(row["cost_usd"]),
        int(known(row["retries"]) or 0),
    )


def tool_latency(path: Path, filters: AttemptFilters | None = None) -> pd.DataFrame:
    """Per tool, from every executed call in the transcripts in scope: calls, error rate, server latency p50/p95 (ms),
    retries, faulted calls: the report's own figures (`evalcore.scoring.calls.execution_stats`)."""
    sql = (
        "WITH "
        + _SCOPED
        + """,
        executions AS (SELECT unnest(transcript_json->'$.executions[*]') AS e FROM scoped)
        SELECT e->>'tool' AS tool, (e->>'is_error')::BOOLEAN AS is_error, (e->>'latency_ms')::DOUBLE AS latency_ms,
               coalesce(json_array_length(e->'request_ids'), 1)::INTEGER AS request_ids, e->>'error_type' AS error_type, e->>'fault' AS fault
        FROM executions"""
    )
    columns = ("tool", "is_error", "latency_ms", "request_ids", "error_type", "fault")
    frame = _frame(path, sql, (filters or AttemptFilters()).parameters(), columns)
    executions = [
        {
            "tool": tool,
            "is_error": not pd.isna(is_error) and bool(is_error),
            "latency_ms": _number_or_none(latency),
            "request_ids": [0] * int(ids),
            "error_type": _text_or_none(error_type),
            "fault": _text_or_none(fault),
        }
        for tool, is_error, latency, ids, error_type, fault in zip(*(frame[column] for column in columns), strict=True)
    ]
    rows = [
        {
            "tool": stats.tool,
            "calls": stats.calls,
            "error_rate": stats.error_rate,
            "latency_p50_ms": stats.latency_p50_ms,
            "latency_p95_ms": stats.latency_p95_ms,
            "retries": stats.retries,
            "faulted_calls": sum(count for _, count in stats.faults),
        }
        for stats in execution_stats(executions)
    ]
    return pd.DataFrame(rows, columns=list(TOOL_LATENCY_COLUMNS))


TOOL_LATENCY_COLUMNS = ("tool", "calls", "error_rate", "latency_p50_ms", "latency_p95_ms", "retries", "faulted_calls")
MODEL_CALL_COLUMNS = (
    "model",
    "calls",
    "latency_p50_ms",
    "latency_p95_ms",
    "input_tokens_per_call",
    "output_tokens_per_call",
    "cost_per_call_usd",
    "retries",
)


def model_call_latency(path: Path, filters: AttemptFilters | None = None) -> pd.DataFrame:
    """Per model, from every model call (turn) in the transcripts in scope: latency p50/p95 per call, tokens and cost per
    call, retries (those of calls that failed beyond them too): the report's own figures (`scoring.calls.model_turn_stats`).

    Cost per call is empty when any call's price is unknown, as everywhere else.
    """
    filters = filters or AttemptFilters()
    turns_sql = (
        "WITH "
        + _SCOPED
        + """,
        turns AS (SELECT model, unnest(transcript_json->'$.turns[*]') AS t FROM scoped)
        SELECT model, (t->>'latency_ms')::DOUBLE AS latency_ms, (t->>'input_tokens')::DOUBLE AS input_tokens,
               (t->>'output_tokens')::DOUBLE AS output_tokens, (t->>'cost_usd')::DOUBLE AS cost_usd, coalesce((t->>'retries')::INTEGER, 0) AS retries
        FROM turns"""
    )
    failed_sql = "WITH " + _SCOPED + " SELECT model, sum(coalesce((transcript_json->>'retries')::INTEGER, 0)) AS retries FROM scoped GROUP BY model"
    keys = ("latency_ms", "input_tokens", "output_tokens", "cost_usd", "retries")
    turns = _frame(path, turns_sql, filters.parameters(), ("model", *keys))
    failed = _frame(path, failed_sql, filters.parameters(), ("model", "retries"))
    failed_retries = {model: int(count or 0) for model, count in zip(failed["model"], failed["retries"], strict=True)}
    by_model: dict[str, list[dict[str, Any]]] = {}
    for row in turns.to_dict("records"):
        by_model.setdefault(str(row["model"]), []).append({key: _number_or_none(row[key]) for key in keys})
    rows = []
    for model in sorted(set(by_model) | set(failed_retries)):
        stats = model_turn_stats(model, by_model.get(model, []), failed_retries.get(model, 0))
        rows.append(
            {
                "model": model,
                "calls": stats.calls,
                "latency_p50_ms": stats.latency_p50_ms,
                "latency_p95_ms": stats.latency_p95_ms,
                "input_tokens_per_call": stats.mean_input_tokens,
                "output_tokens_per_call": stats.mean_output_tokens,
                "cost_per_call_usd": stats.cost_per_call_usd,
                "retries": stats.retries,
            }
        )
    return pd.DataFrame(rows, columns=list(MODEL_CALL_COLUMNS))


def _number_or_none(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def _text_or_none(value: Any) -> str | None:
    """A text cell of a frame, None when missing (a frame reads a missing text as NaN, which is truthy)."""
    return value if isinstance(value, str) else None


FLAKY_COLUMNS = (
    "model",
    "case_id",
    "kind",
    "passes",
    "runs",
    "pass_rate",
    "flaky_runs",
    "failing_runs",
    "run_count",
    "last_run_date",
    "last_run_id",
    "top_failing_reason",
    "simulated",
    "flakiness",
)


def flaky_cases(path: Path, filters: AttemptFilters | None = None) -> pd.DataFrame:
    """Model x case pairs that were inconsistent within a run (some scored attempts passed, some failed), flakiest first.

        flakiness = mean over the pair's runs in scope of `stats.run_flakiness(c_r, n_r)` = 1 - |2·c_r/n_r - 1|

    with c_r and n_r the run's stored passes and scored attempts (`evalcore.scoring.metrics`, the matrix's and the
    report's numbers: errored attempts are in neither). Each run's term is 1 at a coin flip and 0 when every attempt
    agreed, so a case that regressed (always passing, then always failing) has flakiness 0 and is not listed here: it is
    a drift, shown on the Drift page. A run with no scored attempt says nothing and is left out. Ties go to the pair
    with more mixed runs (flaky_runs), then the most recent. failing_runs counts the runs with at least one failed
    scored attempt.
    """
    filters = filters or AttemptFilters()
    runs = _pair_run_counts(path, filters)
    rows = []
    for (model, case_id), group in runs.groupby(["model", "case_id"], sort=False):
        group = group[group["runs"] > 0]
        terms = [run_flakiness(int(c), int(n)) for c, n in zip(group["passes"], group["runs"], strict=True)]
        flaky_runs = int(sum(0 < c < n for c, n in zip(group["passes"], group["runs"], strict=True)))
        if not flaky_runs:
            continue
        newest = group.iloc[0]
        passes, scored = int(group["passes"].sum()), int(group["runs"].sum())
        rows.append(
            {
                "model": model,
                "case_id": case_id,
                "kind": newest["kind"],
                "passes": passes,
                "runs": scored,
                "pass_rate": passes / scored,
                "flaky_runs": flaky_runs,
                "failing_runs": int((group["passes"] < group["runs"]).sum()),
                "run_count": len(group),
                "last_run_date": newest["run_date"],
                "last_run_id": newest["run_id"],
                "top_failing_reason": None,
                "simulated": bool(group["simulated"].any()),
                "flakiness": sum(t for t in terms if t is not None) / len(terms),
            }
        )
    frame = pd.DataFrame(rows, columns=list(FLAKY_COLUMNS))
    if frame.empty:
        return frame
    reasons = _top_failing_reasons(path, filters)
    frame["top_failing_reason"] = [reasons.get((m, c)) for m, c in zip(frame["model"], frame["case_id"], strict=True)]
    frame = frame.sort_values(["flakiness", "flaky_runs", "last_run_date", "model", "case_id"], ascending=[False, False, False, True, True])
    return frame.reset_index(drop=True)


def _pair_run_counts(path: Path, filters: AttemptFilters, model: str | None = None, case_id: str | None = None) -> pd.DataFrame:
    """Per run x model x case in scope (newest run first): its date, kind, and the stored passes and scored attempts."""
    sql = (
        "WITH "
        + _SCOPED
        + """
        SELECT model, case_id, run_id, any_value(run_date) AS run_date, any_value(run_started_at) AS run_started_at,
               any_value(case_kind) AS kind, bool_or(simulated) AS simulated, NULL AS passes, NULL AS runs
        FROM scoped WHERE (?::VARCHAR IS NULL OR model = ?::VARCHAR) AND (?::VARCHAR IS NULL OR case_id = ?::VARCHAR)
        GROUP BY model, case_id, run_id
        ORDER BY model, case_id, any_value(run_date) DESC, any_value(run_started_at) DESC, run_id"""
    )
    columns = ("model", "case_id", "run_id", "run_date", "run_started_at", "kind", "simulated", "passes", "runs")
    frame = _frame(path, sql, [*filters.parameters(), model, model, case_id, case_id], columns)
    sets = run_metric_sets(path, sorted(set(frame["run_id"])), filters.kinds)
    counts = {(run_id, s.model, s.case_id): s for run_id, (found, _) in sets.items() for s in found if s.scope == "case"}
    found_sets = [counts.get(key) for key in zip(frame["run_id"], frame["model"], frame["case_id"], strict=True)]
    frame["passes"] = [int(s.get("passes") or 0) if s is not None else 0 for s in found_sets]
    frame["runs"] = [int(s.get("scored") or 0) if s is not None else 0 for s in found_sets]
    return frame


def _top_failing_reasons(path: Path, filters: AttemptFilters) -> dict[tuple[str, str], str]:
    """Per model x case in scope, the reason most failed scored attempts gave (ties: alphabetical)."""
    sql = (
        "WITH "
        + _SCOPED
        + """,
        reasons AS (
            SELECT model, case_id, reason, count(*) AS n
            FROM (SELECT model, case_id, unnest(reasons_json->>'$[*]') AS reason FROM scoped WHERE NOT passed AND error_kind IS NULL)
            GROUP BY model, case_id, reason
        )
        SELECT model, case_id, first(reason ORDER BY n DESC, reason) AS top_failing_reason FROM reasons GROUP BY model, case_id"""
    )
    frame = _frame(path, sql, filters.parameters(), ("model", "case_id", "top_failing_reason"))
    return {(m, c): r for m, c, r in zip(frame["model"], frame["case_id"], frame["top_failing_reason"], strict=True)}


PAIR_RUN_COLUMNS = ("run_id", "run_date", "passes", "runs", "flaky")


def pair_runs(path: Path, model: str, case_id: str, filters: AttemptFilters | None = None) -> pd.DataFrame:
    """Every run in scope of one model x case, newest first, with its stored passes / scored attempts and whether it was
    mixed (flaky): the same counts as the matrix and the report."""
    frame = _pair_run_counts(path, filters or AttemptFilters(), model, case_id)
    frame = frame.sort_values(["run_date", "run_started_at", "run_id"], ascending=[False, False, True])
    frame["flaky"] = [0 < c < n for c, n in zip(frame["passes"], frame["runs"], strict=True)]
    return frame[list(PAIR_RUN_COLUMNS)].reset_index(drop=True)


ATTEMPT_DETAIL_COLUMNS = (
    "attempt",
    "passed",
    "selection_correct",
    "args_correct",
    "sequence_correct",
    "over_call",
    "task_completed",
    "reasons",
    "prompt",
    "tool_calls",
    "tool_results",
    "final_text",
    "judge",
    "stop_reason",
    "error",
    "latency_ms",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "model_version",
    "simulated",
    "case_kind",
    "golden_path",
    "fault_log",
    "transcript",
)

# Drill-down columns read as JSON (or reasons) and shown as text: shown name -> the SELECT's name.
_DRILL_DOWN_JSON = {
    "reasons": "reasons_json",
    "tool_calls": "tool_calls_json",
    "tool_results": "executions_json",
    "judge": "judge_json",
    "fault_log": "fault_log_json",
    "transcript": "transcript_json",
}


def attempts(path: Path, run_id: str, model: str, case_id: str) -> pd.DataFrame:
    """Every attempt of one model on one case in one run, for the drill-down, attempt order.

    The golden prompt is not stored with an attempt; it is the transcript's
    first user message (messages[1], after the system prompt). tool_calls,
    tool_results, reasons and judge are pretty-printed JSON text; transcript is the stored transcript JSON as it is.
    """
    sql = """
        SELECT a.attempt, a.passed, a.selection_correct, a.args_correct, a.sequence_correct, a.over_call, a.task_completed,
               a.reasons_json, a.transcript_json->>'$.messages[1].content' AS prompt, a.tool_calls_json,
               a.transcript_json->'$.executions' AS executions_json, a.final_text, a.judge_json, a.stop_reason, a.error,
               a.latency_ms, a.input_tokens, a.output_tokens, a.cost_usd, a.model_version, a.simulated, a.case_kind, r.golden_path,
               a.transcript_json->'$.fault' AS fault_log_json, a.transcript_json
        FROM behaviour_attempts a JOIN behaviour_runs r ON a.run_id = r.run_id
        WHERE a.run_id = ? AND a.model = ? AND a.case_id = ? ORDER BY a.attempt"""
    raw_columns = tuple(_DRILL_DOWN_JSON.get(column, column) for column in ATTEMPT_DETAIL_COLUMNS)  # the SELECT's order
    frame = _frame(path, sql, [run_id, model, case_id], raw_columns)
    frame["reasons_json"] = [_reasons_text(value) for value in frame["reasons_json"]]
    for column in ("tool_calls_json", "executions_json", "judge_json", "fault_log_json"):
        frame[column] = [_pretty_json(value) for value in frame[column]]
    return frame.rename(columns={raw: shown for shown, raw in _DRILL_DOWN_JSON.items()})[list(ATTEMPT_DETAIL_COLUMNS)]


EXPORT_SQL = (
    "WITH "
    + _SCOPED
    + """
    SELECT run_id, run_date, golden_path, server_target, server_fingerprint, model, model_version, simulated, case_id, case_kind, attempt,
           passed, selection_correct, args_correct, sequence_correct, over_call, task_completed, reasons_json, tool_calls_json,
           final_text, stop_reason, error, latency_ms, input_tokens, output_tokens,
           CASE WHEN simulated THEN NULL ELSE cost_usd END AS cost_usd,  -- a simulated model has no price: null, as every page reads it
           retries, judge_json, cached_from, recorded_at,
           fault, robustness_outcome, attack_attempted, refused, robustness_passed
    FROM scoped ORDER BY run_date, run_id, model, case_id, attempt
    LIMIT ?"""
)
EXPORT_COLUMNS = (
    "run_id",
    "run_date",
    "golden_path",
    "server_target",
    "server_fingerprint",
    "model",
    "model_version",
    "simulated",
    "case_id",
    "case_kind",
    "attempt",
    "passed",
    "selection_correct",
    "args_correct",
    "sequence_correct",
    "over_call",
    "task_completed",
    "reasons_json",
    "tool_calls_json",
    "final_text",
    "stop_reason",
    "error",
    "latency_ms",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "retries",
    "judge_json",
    "cached_from",
    "recorded_at",
    "fault",
    "robustness_outcome",
    "attack_attempted",
    "refused",
    "robustness_passed",
)


def attempts_frame(path: Path, filters: AttemptFilters | None = None, limit: int | None = None) -> pd.DataFrame:
    """Every attempt in scope (the first `limit`), with its scores and telemetry (transcripts left out: they are large), for export."""
    return _frame(path, EXPORT_SQL, [*(filters or AttemptFilters()).parameters(), limit], EXPORT_COLUMNS)


def attempts_count(path: Path, filters: AttemptFilters | None = None) -> int:
    """How many attempts the filters keep."""
    frame = _frame(path, "WITH " + _SCOPED + " SELECT count(*) AS attempts FROM scoped", (filters or AttemptFilters()).parameters(), ("attempts",))
    return int(frame["attempts"].iloc[0]) if not frame.empty else 0


def attempts_export(path: Path, filters: AttemptFilters | None = None, file_format: Literal["csv", "parquet"] = "csv") -> bytes:
    """`attempts_frame` as CSV or Parquet bytes, written by DuckDB itself (fast on millions of rows, no pyarrow needed).

    b"" when there is no store.
    """
    return export_query(path, EXPORT_SQL, [*(filters or AttemptFilters()).parameters(), None], file_format, "attempts")


METRICS_SQL = (
    "WITH "
    + _SCOPED
    + """
    SELECT m.run_id, r.run_date, r.golden_path, m.scope, m.model, m.case_id, m.metric, m.value
    FROM run_metrics m JOIN behaviour_runs r ON m.run_id = r.run_id
    WHERE m.run_id IN (SELECT DISTINCT run_id FROM scoped) AND (len(?::VARCHAR[]) = 0 OR m.model = '' OR list_contains(?::VARCHAR[], m.model))
    ORDER BY r.run_date, m.run_id, m.rowid"""
)
METRICS_COLUMNS = ("run_id", "run_date", "golden_path", "scope", "model", "case_id", "metric", "value")


def metrics_frame(path: Path, filters: AttemptFilters | None = None) -> pd.DataFrame:
    """The metrics (see `evalcore.scoring.metrics`) of every run in scope, one row per metric: the stored ones, or, under a
    case-kind filter, the same function's numbers over the attempts of those kinds (what the matrix and summary show)."""
    filters = filters or AttemptFilters()
    stored = _frame(path, METRICS_SQL, [*filters.parameters(), list(filters.models), list(filters.models)], METRICS_COLUMNS)
    if not filters.kinds or stored.empty:
        return stored
    runs = stored.drop_duplicates("run_id")[["run_id", "run_date", "golden_path"]].to_dict("records")
    sets = run_metric_sets(path, [str(run["run_id"]) for run in runs], filters.kinds)
    rows = [
        (run["run_id"], run["run_date"], run["golden_path"], s.scope, s.model, s.case_id, metric, value)
        for run in runs
        for s in sets.get(str(run["run_id"]), ([], 0))[0]
        if not filters.models or s.model in ("", *filters.models)
        for metric, value in s.values.items()
    ]
    return pd.DataFrame(rows, columns=list(METRICS_COLUMNS))


def metrics_export(path: Path, filters: AttemptFilters | None = None, file_format: Literal["csv", "parquet"] = "csv") -> bytes:
    """`metrics_frame` as CSV or Parquet bytes, written by DuckDB; b"" when there is nothing stored."""
    filters = filters or AttemptFilters()
    if not filters.kinds:
        return export_query(path, METRICS_SQL, [*filters.parameters(), list(filters.models), list(filters.models)], file_format, "metrics")
    frame = metrics_frame(path, filters)
    if frame.empty:
        return b""
    with tempfile.TemporaryDirectory() as directory:
        target = Path(directory) / f"metrics.{file_format}"
        with duckdb.connect() as memory:
            relation = memory.from_df(frame)
            if file_format == "parquet":
                relation.write_parquet(str(target))
            else:
                relation.write_csv(str(target), header=True)
        return target.read_bytes()


def frame_export(frame: pd.DataFrame, file_format: Literal["csv", "parquet"]) -> bytes:
    """A table a page shows as a CSV (`frame_csv`) or Parquet file's bytes, the Parquet written by DuckDB (no pyarrow needed)."""
    if file_format == "csv":
        return frame_csv(frame).encode("utf-8")
    with tempfile.TemporaryDirectory() as directory:
        target = Path(directory) / "table.parquet"
        with duckdb.connect() as memory:
            memory.from_df(_plain_columns(frame)).write_parquet(str(target))
        return target.read_bytes()


def _plain_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with each column of mixed Python objects (a None among texts, lists, dicts) as text, which DuckDB can type."""
    mixed = {
        column: frame[column].map(lambda value: None if value is None or (isinstance(value, float) and math.isnan(value)) else _cell_text(value))
        for column in frame.columns
        if frame[column].dtype == object and not _is_boolean(frame[column])
    }
    return frame.assign(**mixed) if mixed else frame


def _cell_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str) if isinstance(value, list | tuple | dict) else str(value)


def frame_csv(frame: pd.DataFrame) -> str:
    """A table as CSV, booleans spelled `true`/`false` as DuckDB writes them in `attempts_export`: one spelling in every file."""
    booleans = {column: frame[column].map(_csv_boolean) for column in frame.columns if _is_boolean(frame[column])}
    return frame.assign(**booleans).to_csv(index=False) if booleans else frame.to_csv(index=False)


def _is_boolean(column: pd.Series) -> bool:
    if pd.api.types.is_bool_dtype(column):
        return True
    values = column.dropna()
    return column.dtype == object and not values.empty and all(isinstance(value, bool | np.bool_) for value in values)


def _csv_boolean(value: Any) -> Any:
    return ("true" if value else "false") if isinstance(value, bool | np.bool_) else value


def attempts_parquet(path: Path, filters: AttemptFilters | None = None) -> bytes:
    """`attempts_export` as Parquet."""
    return attempts_export(path, filters, "parquet")


def conformance_runs(path: Path) -> pd.DataFrame:
    """Every Layer 0 run, newest first, with its count of failed checks."""
    sql = """
        SELECT r.run_id, r.started_at, r.target, r.server_name, r.era, r.passed, r.runs, r.duration_s, r.server_fingerprint,
               (SELECT count(*) FROM conformance_checks c WHERE c.run_id = r.run_id AND c.verdict IN ('fail', 'error')) AS failed_checks
        FROM conformance_runs r ORDER BY r.started_at DESC"""
    columns = ("run_id", "started_at", "target", "server_name", "era", "passed", "runs", "duration_s", "server_fingerprint", "failed_checks")
    return _frame(path, sql, [], columns)


def conformance_checks(path: Path, run_id: str) -> pd.DataFrame:
    """Per-check results of one Layer 0 run: what failed first, then warnings and notes, passes, and the checks that did
    not apply or could not be tested last, with no passes or runs (they were not judged); check-id order within each."""
    sql = """
        SELECT check_id, level,
               CASE WHEN verdict IN ('not_applicable', 'not_testable') THEN NULL ELSE passes END AS passes,
               CASE WHEN verdict IN ('not_applicable', 'not_testable') THEN NULL ELSE runs END AS runs,
               verdict, detail, spec
        FROM conformance_checks WHERE run_id = ?
        ORDER BY CASE verdict WHEN 'fail' THEN 0 WHEN 'error' THEN 1 WHEN 'warn' THEN 2 WHEN 'info' THEN 3 WHEN 'pass' THEN 4 ELSE 5 END, check_id"""
    return _frame(path, sql, [run_id], ("check_id", "level", "passes", "runs", "verdict", "detail", "spec"))


def latest_conformance_verdict(path: Path, server_target: str | None = None, server_fingerprint: str | None = None) -> pd.DataFrame:
    """The newest Layer 0 run of one server: matched by fingerprint (stable across ports) or by target; one row or none.

    With neither given, the newest run of any server.
    """
    sql = """
        SELECT r.run_id, r.started_at, r.target, r.server_name, r.era, r.passed, r.server_fingerprint,
               (SELECT count(*) FROM conformance_checks c WHERE c.run_id = r.run_id AND c.verdict IN ('fail', 'error')) AS failed_checks,
               (SELECT count(*) FROM conformance_checks c WHERE c.run_id = r.run_id) AS checks
        FROM conformance_runs r
        WHERE (?::VARCHAR IS NULL AND ?::VARCHAR IS NULL) OR r.server_fingerprint = ?::VARCHAR OR r.target = ?::VARCHAR
        ORDER BY r.started_at DESC LIMIT 1"""
    parameters = [server_fingerprint, server_target, server_fingerprint, server_target]
    columns = ("run_id", "started_at", "target", "server_name", "era", "passed", "server_fingerprint", "failed_checks", "checks")
    return _frame(path, sql, parameters, columns)


def _frame(path: Path, sql: str, parameters: Sequence[Any], columns: Sequence[str]) -> pd.DataFrame:
    """Run one query on a short-lived read-only connection; an empty frame with `columns` when there is nothing to read."""
    with _reading(path) as connection:
        return _frame_on(connection, path, sql, parameters, columns)


# The read-only connection each thread has open, by store: a `_reading` inside another one takes it, not a new one.
_open_here = threading.local()


@contextlib.contextmanager
def _reading(path: Path) -> Iterator[duckdb.DuckDBPyConnection | None]:
    """One short-lived read-only connection for several queries (opening a store costs 15-40 ms of CPU, its catalog
    built each time); None when there is no store to read. Re-entrant: the queries a reader calls inside the block
    (`filter_options` calls `runs` and `golden_sets`) use the same connection."""
    held: dict[str, duckdb.DuckDBPyConnection] = _open_here.__dict__.setdefault("connections", {})
    key = str(path)
    if key in held:
        yield held[key]
        return
    if not _has_tables(path):
        yield None
        return
    with connect(path, read_only=True) as connection:
        held[key] = connection
        try:
            yield connection
        finally:
            del held[key]


def _frame_on(connection: duckdb.DuckDBPyConnection | None, path: Path, sql: str, parameters: Sequence[Any], columns: Sequence[str]) -> pd.DataFrame:
    """`_frame` on an open connection (`_reading`)."""
    if connection is None:
        return pd.DataFrame(columns=list(columns))
    try:
        return connection.execute(sql, list(parameters)).df()
    except duckdb.CatalogException:  # a store written before the behaviour tables existed
        return pd.DataFrame(columns=list(columns))
    except duckdb.Error as exc:
        raise StoreError(f"cannot read the results store {path}: {exc}") from exc


def _python_datetime(value: Any) -> datetime | None:
    return None if value is None or pd.isna(value) else pd.Timestamp(value).to_pydatetime()


def _has_tables(path: Path) -> bool:
    return path.is_file() and path.stat().st_size > 0


def _none_for_missing(column: pd.Series) -> pd.Series:
    """A text column (object dtype) with None, not NaN, where SQL gave NULL."""
    return column.astype(object).where(column.notna(), None)


def _reasons_text(value: str | None) -> str:
    if not value:
        return ""
    return "\n".join(str(reason) for reason in json.loads(value))


def _pretty_json(value: str | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return json.dumps(json.loads(value), indent=2, ensure_ascii=False)


# --- the judge: its standing per run, its agreement with human labels, the labelling queue ---------------------------


def run_judges(path: Path, run_ids: Sequence[str]) -> dict[str, JudgeTrust]:
    """The judge each of these runs graded with, as its stored report says (`RunReport.judge`): its status when the run
    started and whether its verdicts gated; runs without a judge (or from before judges had a standing) are absent."""
    if not run_ids:
        return {}
    frame = _frame(
        path,
        "SELECT run_id, json_extract(report_json, '$.judge') AS judge FROM behaviour_runs WHERE run_id IN (SELECT unnest(?::VARCHAR[])) "
        "AND json_extract(report_json, '$.judge') IS NOT NULL AND json_type(json_extract(report_json, '$.judge')) = 'OBJECT' ORDER BY run_id",
        [list(run_ids)],
        ["run_id", "judge"],
    )
    return {str(row.run_id): JudgeTrust.from_json(json.loads(str(row.judge))) for row in frame.itertuples(index=False)}


JUDGE_COLUMNS = ("judge", "rubric", "status", "n", "agreement", "kappa", "kappa 95% CI", "TPR", "TNR", "why")
ATTEMPT_LINK_COLUMNS = ("run_id", "model", "case_id", "attempt", "judge", "human", "labeller", "note", "drill_down")


def judge_agreements(path: Path, thresholds: StatusThresholds = DEFAULT_THRESHOLDS) -> list[Agreement]:
    """Each judge's agreement with human labels, per rubric (`evalcore.scoring.agreement`), as `judge-agreement` prints it."""
    return agreements(judge_labels.labelled_verdicts(path), judge_labels.judges(path), thresholds)


def agreement_table(found: Sequence[Agreement]) -> pd.DataFrame:
    """One row per judge and rubric: its status and figures (κ undefined reads as such, never NaN)."""
    rows = [
        {
            "judge": entry.model,
            "rubric": entry.rubric_hash[:12],
            "status": entry.status,
            "n": entry.n,
            "agreement": entry.agreement,
            "kappa": entry.kappa,
            "kappa 95% CI": f"[{entry.kappa_ci[0]:.2f}, {entry.kappa_ci[1]:.2f}]" if entry.kappa_ci is not None else "undefined",
            "TPR": entry.tpr,
            "TNR": entry.tnr,
            "why": entry.reason,
        }
        for entry in found
    ]
    return pd.DataFrame(rows, columns=list(JUDGE_COLUMNS))


def confusion_table(entry: Agreement) -> pd.DataFrame:
    """The confusion matrix: the judge's verdict by row, the humans' label by column."""
    counts = entry.confusion
    return pd.DataFrame(
        {
            "human: pass": [counts.judge_pass_human_pass, counts.judge_fail_human_pass],
            "human: fail": [counts.judge_pass_human_fail, counts.judge_fail_human_fail],
        },
        index=["judge: pass", "judge: fail"],
    )


def drill_down_link(run_id: str, model: str, case_id: str, attempt: int) -> str:
    """The Matrix page's address of one attempt's drill-down (its run, model, case and attempt in the URL)."""
    return "/?" + urlencode({"run": run_id, "model": model, "case": case_id, "attempt": attempt})


def dangerous_attempts(path: Path, judge: str, rubric_hash: str) -> pd.DataFrame:
    """The attempts this judge passed and a human failed under this rubric (the cell that lets a bad answer through the
    gate), each with the human's note and a link to its drill-down."""
    labels = {(label.run_id, label.model, label.case_id, label.attempt): label for label in judge_labels.load_labels(path)}
    rows = []
    for verdict in judge_labels.labelled_verdicts(path):
        if verdict.judge_model != judge or verdict.rubric_hash != rubric_hash or not verdict.judge_passed or verdict.human_passed:
            continue
        key = (verdict.run_id, verdict.model, verdict.case_id, verdict.attempt)
        label = labels[key]
        rows.append({"run_id": key[0], "model": key[1], "case_id": key[2], "attempt": key[3], "judge": "pass", "human": "fail",
                     "labeller": label.labeller, "note": label.note, "drill_down": drill_down_link(*key)})  # fmt: skip
    return pd.DataFrame(rows, columns=list(ATTEMPT_LINK_COLUMNS))


def labelling_queue(path: Path, judge: str, rubric_hash: str, size: int = 20) -> pd.DataFrame:
    """The attempts to label next for this judge and rubric: never one already labelled, stratified over models, cases
    and both of the judge's verdicts (`evalcore.scoring.agreement.labelling_queue`), each with its drill-down link."""
    candidates = [(key, verdict) for key, verdict, labelled in judge_labels.judged_attempts(path, judge_model=judge, rubric_hash=rubric_hash) if not labelled]
    rows = [
        {
            "run_id": key[0],
            "model": key[1],
            "case_id": key[2],
            "attempt": key[3],
            "judge": "pass" if verdict else "fail",
            "human": "",
            "labeller": "",
            "note": "",
            "drill_down": drill_down_link(*key),
        }  # fmt: skip
        for key, verdict in sample_queue(candidates, size)
    ]
    return pd.DataFrame(rows, columns=list(ATTEMPT_LINK_COLUMNS))


def attempt_labels(path: Path, run_id: str, model: str, case_id: str) -> dict[int, JudgeLabel]:
    """The human labels of one model's attempts at one case in one run, by attempt (the drill-down shows them)."""
    return judge_labels.attempt_labels(path, run_id, model, case_id)
