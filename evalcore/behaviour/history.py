"""I/O layer: read the per-run, per-case history of Layer 1 behaviour runs for drift detection (read-only)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from evalcore.behaviour.metric_sets import run_metric_sets
from evalcore.drift.types import Fingerprints, RunPoint
from evalcore.errors import StoreError
from evalcore.run_kinds import standing_kinds
from evalcore.store.db import connect

# One row per complete run x model x case (passes and scored attempts then come from the run's stored metrics). mode(): the
# most common value over the run's attempts (the model version the provider reported, the case hash, the system prompt the
# model was sent: the first message of the transcript, when a system one). The run's own columns (its config, plan and tools, which grow with
# the golden set) are read once per run (`_RUNS_SQL`), never once per attempt or per point.
_STANDING_RUNS = """
SELECT run_id, run_date, started_at FROM behaviour_runs
WHERE status = 'complete' AND (? IS NULL OR golden_path = ?)
  AND list_contains(?, coalesce(kind, 'run'))  -- only the kinds that stand for the server: no arm, no replay (evalcore.run_kinds)
"""
_RUN_POINTS_SQL = f"""
SELECT a.model, a.case_id, r.run_id, r.run_date,
       count_if(a.passed) AS passes, count(*) AS attempts,
       mode(a.model_version) AS model_version, mode(a.case_hash) AS case_hash,
       mode(a.system_prompt) AS system_prompt,  -- stored apart from the transcript (schema 16): no transcript is read here
       bool_or(a.simulated) AS simulated
FROM attempts a  -- not the behaviour_attempts view: none of its scores is read here
JOIN ({_STANDING_RUNS}) r ON a.run_id = r.run_id
GROUP BY a.model, a.case_id, r.run_id, r.run_date, r.started_at
ORDER BY r.run_date, r.started_at, a.model, a.case_id
"""
_RUNS_SQL = f"""
SELECT run_id, server_fingerprint, config_json, evalcore_version, server_tools_json, plan_json FROM behaviour_runs
WHERE run_id IN (SELECT run_id FROM ({_STANDING_RUNS}))
"""


def run_points(path: Path, golden_path: str | None = None) -> list[RunPoint]:
    """Passes/scored attempts per complete run x model x case, with the run's fingerprints, ordered by run date then start
    time; [] without a store. The counts are the run's stored metrics (`evalcore.scoring.metrics`): errored attempts are in
    no denominator, and a case with no scored attempt is left out (a gap, not a 0%). A run with an errored attempt in any
    case did not measure what it was asked to: its points say so (`complete` False), and drift never takes it as a
    baseline."""
    if not path.exists():
        return []
    with connect(path, read_only=True) as connection:
        if not _has_behaviour_tables(connection):
            return []
        parameters = [golden_path, golden_path, list(standing_kinds())]
        rows = connection.execute(_RUN_POINTS_SQL, parameters).fetchall()
        runs = {row[0]: row[1:] for row in connection.execute(_RUNS_SQL, parameters).fetchall()}
    # Only what the points read of the stored metrics: a run stores some 50 per case, every one of them not needed here.
    sets = run_metric_sets(path, sorted({row[2] for row in rows}), scope="case", metrics=("passes", "scored", "errored"))
    counts = {(run_id, s.model, s.case_id): (s.get("passes"), s.get("scored")) for run_id, (found, _) in sets.items() for s in found if s.scope == "case"}
    errored_runs = {run_id for run_id, (found, _) in sets.items() if any(s.scope == "case" and (s.get("errored") or 0) > 0 for s in found)}
    settings_of: dict[str, dict[str, dict[str, str]]] = {}
    points = []
    for model, case_id, run_id, run_date, _, _, version, case_hash, system_prompt, simulated in rows:
        server, config_json, evalcore_version, tools, plan_json = runs[run_id]
        passes, scored = counts.get((run_id, model, case_id), (None, None))
        if not scored or passes is None:
            continue
        if run_id not in settings_of:
            settings_of[run_id] = sampling_settings(config_json, plan_json)
        settings = {**settings_of[run_id].get(model, {}), **({"system_prompt": system_prompt} if system_prompt is not None else {})}
        fingerprints = Fingerprints(server, version, case_hash, tuple(sorted(settings.items())), evalcore_version, tools)
        points.append(RunPoint(model, case_id, run_id, run_date, int(passes), int(scored), fingerprints, bool(simulated), run_id not in errored_runs))
    return points


def sampling_settings(config_json: str, plan_json: str | None = None) -> dict[str, dict[str, str]]:
    """Per model, the settings a run stored that shape its answers: temperature, seed, the agent's step limit, the judge,
    and for a scripted sim model its script's content (from the run plan), so an edited script is named as the cause."""
    try:
        config = json.loads(config_json or "{}")
        scripts = (json.loads(plan_json).get("modelScripts") or {}) if plan_json else {}
    except json.JSONDecodeError:
        return {}
    judge = config.get("judge") or {}
    shared = {"max_steps": str(config.get("max_steps")), "judge": f"{judge.get('name')} (temperature {judge.get('temperature')})" if judge else "none"}
    settings = {
        str(spec.get("name")): {**shared, "temperature": str(spec.get("temperature")), "seed": str(spec.get("seed"))}
        for spec in config.get("models") or []
        if isinstance(spec, dict)
    }
    for name, sha256 in scripts.items():
        if name in settings:
            settings[name]["script"] = f"sha256 {str(sha256)[:12]}"
    return settings


def server_tools(path: Path, run_id: str) -> list[dict[str, Any]]:
    """The [{name, description}, ...] list stored with a behaviour run."""
    with connect(path, read_only=True) as connection:
        row = connection.execute("SELECT server_tools_json FROM behaviour_runs WHERE run_id = ?", [run_id]).fetchone()
    if row is None:
        raise StoreError(f"no behaviour run {run_id!r} in {path}; `python -m evalcore runs` lists them")
    tools = json.loads(row[0])
    return [t for t in tools if isinstance(t, dict)]


def count_behaviour_runs(path: Path, *, pid: int | None = None, since: datetime | None = None) -> int:
    """How many behaviour runs (any status) the store holds, or those one process started since a time; 0 without a store."""
    if not path.exists():
        return 0
    with connect(path, read_only=True) as connection:
        if not _has_behaviour_tables(connection):
            return 0
        row = connection.execute(
            "SELECT count(*) FROM behaviour_runs WHERE (? IS NULL OR pid = ?) AND (?::TIMESTAMPTZ IS NULL OR started_at >= ?::TIMESTAMPTZ)",
            [pid, pid, since, since],
        ).fetchone()
    return int(row[0]) if row else 0


def _has_behaviour_tables(connection: duckdb.DuckDBPyConnection) -> bool:
    row = connection.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", ["behaviour_runs"]).fetchone()
    return bool(row and row[0])
