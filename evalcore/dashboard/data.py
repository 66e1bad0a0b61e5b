"""Presentation layer: cached data functions for the dashboard pages (Streamlit cache over `evalcore.dashboard.queries`).

The store is the file named by EVALCORE_DB (default data/evals.duckdb). Each
function takes the path as an argument so the cache keys on it, and caches
for `TTL_S` seconds: a run writing in the background shows up within that
time without hammering the file. The matrix page's reads are keyed by the
store's version too (`store_version`: the size and modification time of the
file and its write-ahead log), so a new run shows at once, and an unchanged
store is not read again for `STORE_TTL_S`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import streamlit as st

from evalcore.behaviour import history
from evalcore.compare.overrides import catalog_diff, seen_catalog
from evalcore.compare.stored import stored_comparison
from evalcore.dashboard import progress, queries
from evalcore.dashboard.queries import AttemptFilters
from evalcore.drift import Change, DriftSettings, RunPoint, detect_changes
from evalcore.errors import EvalcoreError
from evalcore.golden.loader import load_golden_set
from evalcore.paths import golden_file
from evalcore.store import comparisons, exchanges, perturbations

TTL_S = 10
STORE_TTL_S = 600
STORE_CACHE_ENTRIES = 64  # per function: filter choices, one entry each


def store_version(db: Path) -> tuple[int, ...]:
    """What changes whenever a writer commits: the size and modification time of the store and of its write-ahead
    log (DuckDB appends a commit there first, and moves it into the file at a checkpoint)."""
    stamps: list[int] = []
    for path in (db, db.with_name(db.name + ".wal")):
        try:
            found = path.stat()
        except OSError:
            stamps.extend((-1, -1))
            continue
        stamps.extend((found.st_size, found.st_mtime_ns))
    return tuple(stamps)


db_path = progress.db_path


def filter_options(db: Path) -> dict[str, list[Any]]:
    """The filter choices; read afresh when the URL names a run the cached list does not know yet (a run that just finished)."""
    options = _filter_options(db, store_version(db))
    wanted = st.query_params.get("run")
    if wanted and wanted not in options.get("run_ids", []):
        _filter_options.clear()
        options = _filter_options(db, store_version(db))
    return options


@st.cache_data(ttl=STORE_TTL_S, max_entries=STORE_CACHE_ENTRIES, show_spinner=False)
def _filter_options(db: Path, version: tuple[int, ...]) -> dict[str, list[Any]]:
    return queries.filter_options(db)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def golden_sets(db: Path) -> pd.DataFrame:
    return queries.golden_sets(db)


def golden_set_label(db: Path, golden_path: str | None) -> str:
    """ "golden/tasks.yaml · hash 3f2a9c01b7e4 · 8 runs": the golden set a page shows, as every page names it."""
    if golden_path is None:
        return "(none)"
    sets = golden_sets(db).set_index("golden_path")
    if golden_path not in sets.index:
        return golden_path
    found = sets.loc[golden_path]
    return f"{golden_path} · hash {str(found['golden_hash'])[:12]} · {int(found['runs'])} run{'s' if int(found['runs']) != 1 else ''}"


def run_golden_path(db: Path, run_id: str) -> str | None:
    """The golden set (its identity in the store) of one run; read afresh when the cached list does not know the run yet."""
    found = runs(db).set_index("run_id")["golden_path"]
    if run_id not in found.index:
        runs.clear()
        found = runs(db).set_index("run_id")["golden_path"]
    return str(found[run_id]) if run_id in found.index else None


@st.cache_data(ttl=TTL_S, show_spinner=False)
def runs(db: Path) -> pd.DataFrame:
    return queries.runs(db)


def matrix(db: Path, filters: AttemptFilters) -> pd.DataFrame:
    return _matrix(db, filters, store_version(db))


@st.cache_data(ttl=STORE_TTL_S, max_entries=STORE_CACHE_ENTRIES, show_spinner=False)
def _matrix(db: Path, filters: AttemptFilters, version: tuple[int, ...]) -> pd.DataFrame:
    return queries.matrix(db, filters)


def model_summary(db: Path, filters: AttemptFilters) -> pd.DataFrame:
    return _model_summary(db, filters, store_version(db))


@st.cache_data(ttl=STORE_TTL_S, max_entries=STORE_CACHE_ENTRIES, show_spinner=False)
def _model_summary(db: Path, filters: AttemptFilters, version: tuple[int, ...]) -> pd.DataFrame:
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
def exchanges_export(db: Path, file_format: Literal["csv", "parquet"]) -> bytes:
    """Every behaviour run's recorded MCP exchanges (`evalcore.store.exchanges`)."""
    return exchanges.exchanges_export(db, file_format)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def comparisons_export(db: Path, file_format: Literal["csv", "parquet"]) -> bytes:
    """Every stored comparison's verdict rows (`evalcore compare`; `evalcore.store.comparisons`)."""
    return comparisons.comparisons_export(db, file_format)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def perturbations_export(db: Path, file_format: Literal["csv", "parquet"]) -> bytes:
    """Every stored sweep's sensitivity rows (`evalcore perturb`; `evalcore.store.perturbations`)."""
    return perturbations.perturbations_export(db, file_format)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def conformance_runs(db: Path) -> pd.DataFrame:
    return queries.conformance_runs(db)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def conformance_checks(db: Path, run_id: str) -> pd.DataFrame:
    return queries.conformance_checks(db, run_id)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def requirement_coverage(db: Path, run_id: str, revision: str = "2026-07-28") -> pd.DataFrame:
    """One row per official scenario of `revision`'s requirement set: its verdict in this conformance run and our checks."""
    from evalcore.conformance.requirement_view import LABEL, judge
    from evalcore.conformance.requirements import load

    checks = queries.conformance_checks(db, run_id)
    view = judge(load(revision), dict(zip(checks["check_id"], checks["verdict"], strict=True)))
    return pd.DataFrame(
        [
            {
                "official scenario": s.requirement.id,
                "scored": "yes" if s.requirement.scored else f"no ({s.requirement.reason})",
                "coverage": s.requirement.coverage,
                "verdict": LABEL[s.verdict],
                "our checks": ", ".join(f"{check_id} ({LABEL[verdict]})" for check_id, verdict in s.checks) or ", ".join(s.requirement.checks),
                "note": s.requirement.note,
            }
            for s in view.scenarios
        ]
    )


@st.cache_data(ttl=TTL_S, show_spinner=False)
def latest_conformance_verdict(db: Path, server_target: str | None, server_fingerprint: str | None) -> pd.DataFrame:
    return queries.latest_conformance_verdict(db, server_target, server_fingerprint)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def drift(db: Path, golden_path: str | None, min_baseline: int = DriftSettings.min_baseline) -> tuple[list[RunPoint], list[Change]]:
    """The per-run history of every (model, case) of complete runs, and the changes `evalcore.drift` finds in it."""
    points = history.run_points(db, golden_path=golden_path)
    return points, detect_changes(points, DriftSettings(min_baseline=min_baseline))


def changes_table(changes: list[Change], labels: dict[str, str]) -> pd.DataFrame:
    """Changes newest first, one row each, for the Drift page's table: the cause right after the case, so it is never cut off."""
    rows = [
        {
            "change point": c.change_date,
            "case": c.case_id,
            "cause": c.attribution,
            "change": _status(c),
            "pass rate": f"{c.before_rate:.0%} → {c.after_rate:.0%}",
            "q": f"{c.q_value:.2g}",
            "model": labels.get(c.model, c.model),
        }
        for c in sorted(changes, key=lambda c: (c.change_date, c.model, c.case_id), reverse=True)
    ]
    return pd.DataFrame(rows, columns=list(CHANGES_TABLE_WIDTHS))


# Pixel widths that add up to less than the page's content width at 1400 px, so no column scrolls out of view.
CHANGES_TABLE_WIDTHS = {"change point": 90, "case": 165, "cause": 230, "change": 150, "pass rate": 85, "q": 60, "model": 185}


def changes_csv(changes: list[Change]) -> str:
    """Every change with its full evidence (fingerprints compared, description diff, the sentence to act on), as CSV."""
    return changes_frame(changes).to_csv(index=False)


def changes_frame(changes: list[Change]) -> pd.DataFrame:
    """Every change with its full evidence, one row each: the Drift page's CSV and the export's drift table."""
    rows = [
        {
            "kind": c.kind,
            "model": c.model,
            "case_id": c.case_id,
            "change_date": c.change_date.isoformat(),
            "last_good_run_id": c.last_good_run_id,
            "change_run_id": c.change_run_id,
            "detected_run_id": c.detected_run_id,
            "detected_date": c.detected_date.isoformat(),
            "delay_runs": c.delay_runs,
            "status": c.status or "",
            "provisional": "true" if c.provisional else "false",
            "provisional_run_id": c.provisional_run_id or "",
            "confirmation": c.confirmation,
            "confirmed_run_id": c.confirmed_run_id or "",
            "confirmed_date": c.confirmed_date.isoformat() if c.confirmed_date else "",
            "closed_by_run_id": c.closed_by_run_id or "",
            "closed_date": c.closed_date.isoformat() if c.closed_date else "",
            "before_passes": c.before_passes,
            "before_attempts": c.before_attempts,
            "before_rate": round(c.before_rate, 4),
            "before_ci_low": round(c.before_interval[0], 4),
            "before_ci_high": round(c.before_interval[1], 4),
            "after_passes": c.after_passes,
            "after_attempts": c.after_attempts,
            "after_rate": round(c.after_rate, 4),
            "after_ci_low": round(c.after_interval[0], 4),
            "after_ci_high": round(c.after_interval[1], 4),
            "p_value": c.p_value,
            "q_value": c.q_value,
            "tests_that_night": c.tests,
            "cause": c.cause,
            "changed": " ".join(c.changed),
            "attribution": c.attribution,
            "action": c.action,
            "description_diff": c.description_diff,
            "evidence": c.evidence,
            "simulated": "true" if c.simulated else "false",
        }
        for c in changes
    ]
    return pd.DataFrame(rows, columns=list(CHANGE_COLUMNS))


CHANGE_COLUMNS = (
    "kind", "model", "case_id", "change_date", "last_good_run_id", "change_run_id", "detected_run_id", "detected_date", "delay_runs",
    "status", "provisional", "provisional_run_id", "confirmation", "confirmed_run_id", "confirmed_date",
    "closed_by_run_id", "closed_date", "before_passes", "before_attempts", "before_rate", "before_ci_low", "before_ci_high",
    "after_passes", "after_attempts", "after_rate", "after_ci_low", "after_ci_high", "p_value", "q_value", "tests_that_night",
    "cause", "changed", "attribution", "action", "description_diff", "evidence", "simulated",
)  # fmt: skip


def _status(change: Change) -> str:
    if change.kind == "recovery":
        return "recovery"
    flagged = f"drop {change.detected_date:%m-%d}"  # the night a run first flagged it, as that run's report dates it
    if change.status == "recovered" and change.closed_date:
        return f"{flagged}, recovered {change.closed_date:%m-%d}"
    return f"{flagged}, provisional" if change.provisional else f"{flagged}, confirmed"


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
                "expect_set": list(case.expect_set),
                "expect_calls": [{"tool": call.tool, "args": dict(call.args)} for call in case.expect_calls],
                "kind": case.kind,
                "rubric": case.rubric,
            }
    return None


@st.cache_data(ttl=TTL_S, show_spinner=False)
def run_list(db: Path, filters: queries.RunFilters) -> pd.DataFrame:
    return queries.run_list(db, filters)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def run_models(db: Path) -> list[str]:
    return queries.run_models(db)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def stored_comparisons(db: Path) -> list[dict[str, Any]]:
    """Every comparison `evalcore compare` stored, newest first, each with its report (`report`)."""
    return comparisons.list_comparisons(db)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def stored_perturbations(db: Path) -> list[dict[str, Any]]:
    """Every sweep `evalcore perturb` stored, newest first, each with its report (`report`)."""
    return perturbations.list_perturbations(db)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def comparison(db: Path, baseline_run_id: str, candidate_run_id: str, alpha: float) -> dict[str, Any]:
    """The comparison of two stored runs as `evalcore compare --baseline-run --candidate-run` computes it (its JSON, without
    being stored); an `EvalcoreError` saying why two runs cannot be compared (Streamlit caches no exception)."""
    return stored_comparison(db, baseline_run_id, candidate_run_id, alpha=alpha, comparison_id="(not stored)").to_json()


COMPARISON_COLUMNS = (
    "model", "case_id", "baseline_passed", "baseline_scored", "baseline_errored", "candidate_passed", "candidate_scored", "candidate_errored",
    "delta", "ci_low", "ci_high", "p_value", "q_value", "verdict", "runs_needed",
)  # fmt: skip


def comparison_frames(report: Mapping[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A comparison's JSON (docs/compare.schema.json) as two tables: per (model, case), and per model (`case_id` empty)."""

    def rows(entries: Any) -> pd.DataFrame:
        table = [
            {
                "model": entry["model"],
                "case_id": entry.get("case"),
                **{f"{arm}_{count}": entry[arm].get(count) for arm in ("baseline", "candidate") for count in ("passed", "scored", "errored")},
                "delta": entry.get("delta"),
                "ci_low": (entry.get("ci") or [None, None])[0],
                "ci_high": (entry.get("ci") or [None, None])[1],
                "p_value": entry.get("pValue"),
                "q_value": entry.get("qValue"),
                "verdict": entry["verdict"],
                "runs_needed": entry.get("runsNeeded"),
            }
            for entry in entries or []
        ]
        return pd.DataFrame(table, columns=list(COMPARISON_COLUMNS))

    return rows(report.get("cases")), rows(report.get("models")).drop(columns=["case_id"])


def verdict_counts(verdicts: pd.DataFrame) -> str:
    """ "1 better, 0 worse, 3 no difference, 0 inconclusive": a `comparison_frames` table's verdicts counted."""
    counts = {verdict: int((verdicts["verdict"] == verdict).sum()) for verdict in ("better", "worse", "no_difference", "inconclusive")}
    return f"{counts['better']} better, {counts['worse']} worse, {counts['no_difference']} no difference, {counts['inconclusive']} inconclusive"


def _fails(row: Any) -> bool:
    return str(row.verdict) in ("worse", "inconclusive")


def _counts(row: Any) -> str:
    return f"{row.baseline_passed}/{row.baseline_scored} → {row.candidate_passed}/{row.candidate_scored}"


def significance_reasons(cases: pd.DataFrame, models: pd.DataFrame, labels: Mapping[str, str]) -> list[str]:
    """Why a comparison fails, one phrase per failing (model, case) or model (`comparison_frames` tables): what is
    significantly worse, with its counts and q-value, or what could not be measured."""
    reasons = []
    for table, pooled in ((cases, False), (models, True)):
        for row in table.itertuples(index=False):
            if not _fails(row):
                continue
            what = f"{labels.get(row.model, row.model)}, its cases pooled" if pooled else f"{labels.get(row.model, row.model)} · {row.case_id}"
            why = "not measured (an arm scored nothing)" if row.verdict == "inconclusive" else f"{_counts(row)} (q {row.q_value:.2g})"
            reasons.append(f"{what}: {why}")
    return reasons


def carrying_cells(cases: pd.DataFrame, models: pd.DataFrame) -> set[tuple[str, str]]:
    """The (model, case) cells that carry a failing verdict: a failing cell itself, and of a model that fails pooled
    each of its cases that went the same way (worse, or not measured)."""
    carrying = {(str(row.model), str(row.case_id)) for row in cases.itertuples(index=False) if _fails(row)}
    for row in models.itertuples(index=False):
        if not _fails(row):
            continue
        own = cases[cases["model"] == row.model]
        went = own["verdict"] == "inconclusive" if row.verdict == "inconclusive" else pd.to_numeric(own["delta"], errors="coerce") < 0
        carrying |= {(str(row.model), str(case)) for case in own.loc[went, "case_id"]}
    return carrying


def most_changed(cases: pd.DataFrame, carrying: set[tuple[str, str]], model: str | None = None) -> tuple[str, str] | None:
    """The (model, case) "One case" opens on (of `model` when given): a cell carrying the verdict first, then the
    largest change of pass rate, then by name."""
    rows = cases if model is None else cases[cases["model"] == model]
    if rows.empty:
        return None
    size = pd.to_numeric(rows["delta"], errors="coerce").abs().fillna(-1.0)
    ranked = sorted(zip(rows["model"], rows["case_id"], size, strict=True), key=lambda r: ((str(r[0]), str(r[1])) not in carrying, -r[2], str(r[0]), str(r[1])))
    return str(ranked[0][0]), str(ranked[0][1])


@st.cache_data(ttl=TTL_S, show_spinner=False)
def catalog_differences(db: Path, baseline_run_id: str, candidate_run_id: str) -> dict[str, str]:
    """Per server tool, how what the models saw differs between two runs (a rename, the description diff); {} for none."""
    seen = [seen_catalog(*queries.run_catalog(db, run_id)) for run_id in (baseline_run_id, candidate_run_id)]
    return catalog_diff(seen[0], seen[1])


def default_pair(finished: pd.DataFrame) -> tuple[str, str]:
    """(baseline, candidate) the Compare page opens with: the newest finished run of a golden set with two or more, and
    the one of that set before it (a `run_list` frame, newest first; with no such set, the newest two runs)."""
    for candidate, golden_path in zip(finished["run_id"], finished["golden_path"], strict=True):
        same_set = [run_id for run_id, path in zip(finished["run_id"], finished["golden_path"], strict=True) if path == golden_path and run_id != candidate]
        if same_set:
            return str(same_set[0]), str(candidate)
    run_ids = [str(run_id) for run_id in finished["run_id"]]
    return run_ids[min(1, len(run_ids) - 1)], run_ids[0]


@st.cache_data(ttl=TTL_S, show_spinner=False)
def run_judges(db: Path, run_ids: tuple[str, ...]) -> dict[str, Any]:
    return queries.run_judges(db, run_ids)


def judge_agreements(db: Path) -> list[Any]:
    """Each judge's agreement with human labels, per rubric; read afresh whenever the store changed (a label just given)."""
    return _judge_agreements(db, store_version(db))


@st.cache_data(ttl=STORE_TTL_S, max_entries=STORE_CACHE_ENTRIES, show_spinner=False)
def _judge_agreements(db: Path, version: tuple[int, ...]) -> list[Any]:
    return queries.judge_agreements(db)


def dangerous_attempts(db: Path, judge: str, rubric_hash: str) -> pd.DataFrame:
    return _dangerous_attempts(db, judge, rubric_hash, store_version(db))


@st.cache_data(ttl=STORE_TTL_S, max_entries=STORE_CACHE_ENTRIES, show_spinner=False)
def _dangerous_attempts(db: Path, judge: str, rubric_hash: str, version: tuple[int, ...]) -> pd.DataFrame:
    return queries.dangerous_attempts(db, judge, rubric_hash)


def labelling_queue(db: Path, judge: str, rubric_hash: str, size: int) -> pd.DataFrame:
    return _labelling_queue(db, judge, rubric_hash, size, store_version(db))


@st.cache_data(ttl=STORE_TTL_S, max_entries=STORE_CACHE_ENTRIES, show_spinner=False)
def _labelling_queue(db: Path, judge: str, rubric_hash: str, size: int, version: tuple[int, ...]) -> pd.DataFrame:
    return queries.labelling_queue(db, judge, rubric_hash, size)


def attempt_labels(db: Path, run_id: str, model: str, case_id: str) -> dict[int, Any]:
    """The human labels of the drill-down's attempts: never cached, so a label shows as soon as it is given."""
    return queries.attempt_labels(db, run_id, model, case_id)


def label_attempt(db: Path, run_id: str, model: str, case_id: str, attempt: int, label: str, note: str) -> None:
    """Store a human label of one attempt (the drill-down's buttons): the one write the dashboard makes to the store."""
    import getpass

    from evalcore.store.judge_labels import label_attempt as store_label

    try:
        labeller = getpass.getuser()
    except (KeyError, OSError):
        labeller = "dashboard"
    store_label(db, (run_id, model, case_id, attempt), label, labeller=f"{labeller} (dashboard)", note=note)
