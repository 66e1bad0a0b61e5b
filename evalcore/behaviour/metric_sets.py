"""Each run's Layer 1 metric sets, read from the store: the stored `run_metrics`, or computed by the one metrics
function from the stored attempts where none are stored (an older store, or a kind filter).

Kept apart from `queries` (which needs pandas, a dashboard extra) so that the CLI's gate and history read metrics
on the light install."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import duckdb

from evalcore.records import MetricScope, MetricSet
from evalcore.scoring.metrics import MetricAttempt, run_metrics
from evalcore.store.behaviour import ATTEMPT_COLUMNS, record_from_row, stored_scores
from evalcore.store.db import connect


def run_metric_sets(
    path: Path, run_ids: Sequence[str], kinds: Sequence[str] = (), *, scope: MetricScope | None = None, metrics: Sequence[str] = ()
) -> dict[str, tuple[list[MetricSet], int]]:
    """(metric sets, runs per case) per run: the stored ones, except where `kinds` narrows the attempts or none are stored.

    `scope` narrows what is read of the stored sets to that scope (a run stores some 70 metrics per case), and
    `metrics` to those metrics (all when empty); sets computed from the attempts come whole.
    """
    if not run_ids or not path.is_file() or path.stat().st_size == 0:
        return {}
    with connect(path, read_only=True) as connection:
        return metric_sets_on(connection, run_ids, kinds, scope=scope, metrics=metrics)


def metric_sets_on(
    connection: duckdb.DuckDBPyConnection,
    run_ids: Sequence[str],
    kinds: Sequence[str] = (),
    *,
    scope: MetricScope | None = None,
    metrics: Sequence[str] = (),
) -> dict[str, tuple[list[MetricSet], int]]:
    """`run_metric_sets` on a connection the caller holds open."""
    if not run_ids:
        return {}
    found: dict[str, tuple[list[MetricSet], int]] = {}
    runs = dict(connection.execute("SELECT run_id, runs FROM behaviour_runs WHERE list_contains(?, run_id)", [list(run_ids)]).fetchall())
    stored = {} if kinds else _stored_sets(connection, run_ids, scope, metrics)
    for run_id in run_ids:
        if run_id in stored:
            found[run_id] = (stored[run_id], int(runs[run_id]))
            continue
        attempts = _metric_attempts(connection, run_id, kinds)
        found[run_id] = (run_metrics(attempts, int(runs[run_id])), int(runs[run_id]))
    return found


def _stored_sets(
    connection: duckdb.DuckDBPyConnection, run_ids: Sequence[str], scope: MetricScope | None, metrics: Sequence[str] = ()
) -> dict[str, list[MetricSet]]:
    try:
        rows = connection.execute(
            "SELECT run_id, scope, model, case_id, metric, value FROM run_metrics WHERE list_contains(?, run_id) "
            "AND (?::VARCHAR IS NULL OR scope = ?::VARCHAR) AND (len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], metric)) ORDER BY rowid",
            [list(run_ids), scope, scope, list(metrics), list(metrics)],
        ).fetchall()
    except duckdb.CatalogException:  # a store older than schema 5
        return {}
    grouped: dict[str, dict[tuple[str, str, str], dict[str, float | None]]] = {}
    for run_id, scope, model, case_id, metric, value in rows:
        grouped.setdefault(run_id, {}).setdefault((scope, model, case_id), {})[metric] = value
    return {
        run_id: [MetricSet(scope, model, case_id, values) for (scope, model, case_id), values in sets.items()]  # type: ignore[arg-type]
        for run_id, sets in grouped.items()
    }


def _metric_attempts(connection: duckdb.DuckDBPyConnection, run_id: str, kinds: Sequence[str]) -> list[MetricAttempt]:
    cursor = connection.execute(
        f"SELECT {ATTEMPT_COLUMNS} FROM behaviour_attempts WHERE run_id = ? AND (len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], case_kind)) "
        "ORDER BY model, case_id, attempt",
        [run_id, list(kinds), list(kinds)],
    )
    columns = [d[0] for d in cursor.description]
    rows = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
    scores = stored_scores(connection, run_id)
    return [MetricAttempt.of(record_from_row({**row, "scores": scores.get((row["model"], row["case_id"], row["attempt"]), ())})) for row in rows]
