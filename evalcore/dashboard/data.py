"""Presentation layer: cached data functions for the dashboard pages (Streamlit cache over `evalcore.store.queries`).

The store is the file named by EVALCORE_DB (default data/evals.duckdb). Each
function takes the path as an argument so the cache keys on it, and caches
for `TTL_S` seconds: a run writing in the background shows up within that
time without hammering the file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import streamlit as st

from evalcore.drift import DriftFlag, RunPoint, detect_drift
from evalcore.errors import EvalcoreError
from evalcore.golden.loader import load_golden_set
from evalcore.paths import golden_file
from evalcore.store import history, queries
from evalcore.store.queries import AttemptFilters

TTL_S = 10
DEFAULT_DB = "data/evals.duckdb"


def db_path() -> Path:
    return Path(os.environ.get("EVALCORE_DB", DEFAULT_DB))


def filter_options(db: Path) -> dict[str, list[Any]]:
    """The filter choices; read afresh when the URL names a run the cached list does not know yet (a run that just finished)."""
    options = _filter_options(db)
    wanted = st.query_params.get("run")
    if wanted and wanted not in options.get("run_ids", []):
        _filter_options.clear()
        options = _filter_options(db)
    return options


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _filter_options(db: Path) -> dict[str, list[Any]]:
    return queries.filter_options(db)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def runs(db: Path) -> pd.DataFrame:
    return queries.runs(db)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def matrix(db: Path, filters: AttemptFilters) -> pd.DataFrame:
    return queries.matrix(db, filters)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def model_summary(db: Path, filters: AttemptFilters) -> pd.DataFrame:
    return queries.model_summary(db, filters)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def latency(db: Path, filters: AttemptFilters) -> pd.DataFrame:
    return queries.latency(db, filters)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def latency_over_time(db: Path, filters: AttemptFilters) -> pd.DataFrame:
    return queries.latency_over_time(db, filters)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def tool_latency(db: Path, filters: AttemptFilters) -> pd.DataFrame:
    return queries.tool_latency(db, filters)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def model_call_latency(db: Path, filters: AttemptFilters) -> pd.DataFrame:
    return queries.model_call_latency(db, filters)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def flaky_cases(db: Path, filters: AttemptFilters) -> pd.DataFrame:
    return queries.flaky_cases(db, filters)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def pair_runs(db: Path, model: str, case_id: str, filters: AttemptFilters) -> pd.DataFrame:
    return queries.pair_runs(db, model, case_id, filters)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def attempts(db: Path, run_id: str, model: str, case_id: str) -> pd.DataFrame:
    return queries.attempts(db, run_id, model, case_id)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def attempts_preview(db: Path, filters: AttemptFilters, limit: int) -> pd.DataFrame:
    return queries.attempts_frame(db, filters, limit)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def attempts_count(db: Path, filters: AttemptFilters) -> int:
    return queries.attempts_count(db, filters)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def attempts_export(db: Path, filters: AttemptFilters, file_format: Literal["csv", "parquet"]) -> bytes:
    return queries.attempts_export(db, filters, file_format)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def metrics(db: Path, filters: AttemptFilters) -> pd.DataFrame:
    return queries.metrics_frame(db, filters)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def metrics_export(db: Path, filters: AttemptFilters, file_format: Literal["csv", "parquet"]) -> bytes:
    return queries.metrics_export(db, filters, file_format)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def conformance_runs(db: Path) -> pd.DataFrame:
    return queries.conformance_runs(db)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def conformance_checks(db: Path, run_id: str) -> pd.DataFrame:
    return queries.conformance_checks(db, run_id)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def latest_conformance_verdict(db: Path, server_target: str | None, server_fingerprint: str | None) -> pd.DataFrame:
    return queries.latest_conformance_verdict(db, server_target, server_fingerprint)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def drift(db: Path, golden_path: str | None) -> tuple[list[RunPoint], list[DriftFlag]]:
    """The per-run history of every (model, case) of complete runs, and the regressions `evalcore.drift` flags in it."""
    points = history.run_points(db, golden_path=golden_path)
    return points, detect_drift(points)


def flags_table(flags: list[DriftFlag]) -> pd.DataFrame:
    """Flags newest first, one row each, for the Drift page's table and CSV."""
    rows = [
        {
            "run_date": f.run_date,
            "model": f.model,
            "case_id": f.case_id,
            "before": f"{f.before_passes}/{f.before_runs}",
            "after": f"{f.after_passes}/{f.after_runs}",
            "drop": round(f.before_rate - f.after_rate, 3),
            "p_value": f.p_value,
            "confidence": round(f.confidence, 4),
            "attribution": f.attribution,
            "run_id": f.run_id,
        }
        for f in sorted(flags, key=lambda f: (f.run_date, f.model, f.case_id), reverse=True)
    ]
    columns = ["run_date", "model", "case_id", "before", "after", "drop", "p_value", "confidence", "attribution", "run_id"]
    return pd.DataFrame(rows, columns=columns)


@st.cache_data(ttl=60, show_spinner=False)
def expected_behaviour(golden_path: str, case_id: str) -> dict[str, Any] | None:
    """What the golden set expects of a case, read from the golden file as it is now (None when the file or case is gone)."""
    path = golden_file(golden_path)
    if path is None:
        return None
    try:
        golden = load_golden_set(path)
    except (EvalcoreError, OSError):
        return None
    for case in golden.cases:
        if case.id == case_id:
            return {
                "expect_tool": case.expect_tool,
                "expect_args": dict(case.expect_args),
                "arg_match": dict(case.arg_match),
                "expect_sequence": list(case.expect_sequence),
                "kind": case.kind,
                "rubric": case.rubric,
            }
    return None
