"""Orchestration: the comparison of two stored behaviour runs, as `evalcore compare --baseline-run A --candidate-run B`
gives it and the dashboard's Compare page shows it: one function, so both show the same numbers."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalcore.compare.verdicts import Comparison, compare_runs
from evalcore.errors import ConfigError
from evalcore.store.behaviour import load_metrics, load_run


def stored_comparison(db: Path, baseline_run_id: str, candidate_run_id: str, *, alpha: float, comparison_id: str) -> Comparison:
    """The comparison of two complete runs of one golden set; a `ConfigError` that says why two runs cannot be compared."""
    if baseline_run_id == candidate_run_id:
        raise ConfigError(f"--baseline-run and --candidate-run are both {baseline_run_id}; compare two different runs")
    baseline, candidate = load_run(db, baseline_run_id), load_run(db, candidate_run_id)
    for run in (baseline, candidate):
        if run["effective_status"] != "complete":
            raise ConfigError(f"run {run['run_id']} is {run['effective_status']}, not complete: only finished runs have their metrics stored")
    if baseline["golden_path"] != candidate["golden_path"]:
        raise ConfigError(
            f"run {baseline['run_id']} ran {baseline['golden_path']} and run {candidate['run_id']} ran {candidate['golden_path']}: "
            "a comparison needs one golden set"
        )
    runs = int(baseline["runs"]) if baseline["runs"] == candidate["runs"] else None
    source = {"kind": "run", "source": f"stored run {candidate_run_id}"}
    return comparison_of(db, str(baseline["golden_path"]), source, runs, baseline_run_id, candidate_run_id, alpha=alpha, comparison_id=comparison_id)


def comparison_of(
    db: Path,
    golden_path: str,
    candidate_source: Mapping[str, Any],
    runs: int | None,
    baseline_run_id: str,
    candidate_run_id: str,
    *,
    alpha: float,
    comparison_id: str,
) -> Comparison:
    """The verdicts of two runs from their stored metrics; a `ConfigError` for a run without them."""
    metrics = {}
    for run_id in (baseline_run_id, candidate_run_id):
        metrics[run_id] = load_metrics(db, run_id)
        if not metrics[run_id]:
            raise ConfigError(f"run {run_id} has no stored metrics in {db} (recorded by an older evalcore?); run it again")
    return compare_runs(
        metrics[baseline_run_id],
        metrics[candidate_run_id],
        comparison_id=comparison_id,
        golden_path=golden_path,
        candidate_source=candidate_source,
        alpha=alpha,
        runs=runs,
        baseline_run_id=baseline_run_id,
        candidate_run_id=candidate_run_id,
    )
