"""Orchestration output: the behaviour report (JSON) and its terminal summary, built from stored attempts.

Two kinds of gate, kept apart on purpose:
- case gates: each case's pass count over its runs (hard cases need runs/runs,
  soft cases 4/5); they are verdicts per case, shown in the summary;
- the run gate (`passed`): no metric dropped more than `max_drop` below the
  last green run (the first run, with no baseline, is green). CI gates on
  this, not on absolute thresholds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from evalcore.golden.model import GoldenSet
from evalcore.models.types import ModelSpec
from evalcore.records import CaseResult, MetricSet, ModelResult, RunReport
from evalcore.scoring.calls import ModelCallStats, ToolCallStats, model_call_stats, parsed_transcripts, tool_call_stats
from evalcore.scoring.errored import is_errored
from evalcore.scoring.metrics import MetricAttempt, run_metrics
from evalcore.scoring.stats import required_passes
from evalcore.store import behaviour as store
from evalcore.store.behaviour import score_from_row

METRIC_NAMES = ("selection_accuracy", "argument_accuracy", "sequence_accuracy", "over_call_rate", "task_completion", "pass_rate")


def metric_attempts(rows: Sequence[Mapping[str, Any]]) -> list[MetricAttempt]:
    """Stored attempt rows (`store.load_attempts`) as the metrics read them."""
    return [store.metric_attempt(row) for row in rows]


def finalise_report(db_path: Path, run_id: str, golden: GoldenSet, models: Sequence[ModelSpec]) -> dict[str, Any]:
    """At the end of a run (or a resume): compute every metric once, store it, and build the report from the stored numbers."""
    rows = store.load_attempts(db_path, run_id)
    run = store.load_run(db_path, run_id)
    store.write_metrics(db_path, run_id, run_metrics(metric_attempts(rows), int(run["runs"])))
    for earlier in store.runs_without_metrics(db_path):  # complete runs recorded before metrics were stored: once
        store.write_metrics(db_path, earlier["run_id"], run_metrics(metric_attempts(store.load_attempts(db_path, earlier["run_id"])), int(earlier["runs"])))
    return build_report(run, golden, rows, models, store.load_metrics(db_path, run_id))


def build_report(
    run: Mapping[str, Any], golden: GoldenSet, rows: Sequence[Mapping[str, Any]], models: Sequence[ModelSpec], metric_sets: Sequence[MetricSet]
) -> dict[str, Any]:
    """The report of one run from its stored attempts and its stored metrics (see `evalcore.scoring.metrics`), without the run gate."""
    case_sets = {(m.model, m.case_id): m for m in metric_sets if m.scope == "case"}
    model_sets = {m.model: m for m in metric_sets if m.scope == "model"}
    run_set = next((m for m in metric_sets if m.scope == "run"), None)
    kinds = {case.id: case.kind for case in golden.cases}
    transcripts = parsed_transcripts(rows)
    versions: dict[str, set[str]] = {}
    reasons: dict[tuple[str, str], Counter[str]] = {}
    scorers: dict[str, None] = {}
    for row in rows:
        if row["model_version"]:
            versions.setdefault(row["model"], set()).add(row["model_version"])
        counter = reasons.setdefault((row["model"], row["case_id"]), Counter())
        if not row["passed"]:
            counter.update(score_from_row(row).reasons)
        scorers.update(dict.fromkeys(score.scorer for score in row.get("scores") or ()))
    model_results = []
    for spec in models:
        model_rows = [row for row in rows if row["model"] == spec.name]
        cases = tuple(
            CaseResult(case_id, kinds[case_id], metrics.values, tuple(reasons.get((spec.name, case_id), Counter()).most_common()))
            for (model, case_id), metrics in case_sets.items()
            if model == spec.name and case_id in kinds
        )
        model_metrics = model_sets[spec.name].values if spec.name in model_sets else {}
        model_results.append(
            ModelResult(
                model=spec.name,
                simulated=spec.simulated,
                model_versions=tuple(sorted(versions.get(spec.name, ()))),
                metrics=model_metrics,
                cases=cases,
                price_known=all(row["cost_usd"] is not None for row in model_rows),
                model_calls=_model_calls_dict(model_call_stats(spec.name, transcripts.get(spec.name, []))),
                tool_calls=tuple(_tool_calls_dict(stats) for stats in tool_call_stats(transcripts.get(spec.name, []))),
                robustness=robustness_metrics(model_rows, golden, model_metrics),
            )
        )
    report = RunReport(
        run_id=run["run_id"],
        started_at=run["started_at"].isoformat(),
        run_date=str(run["run_date"]),
        runs=int(run["runs"]),
        golden={"path": run["golden_path"], "hash": run["golden_hash"], "cases": len(golden.cases)},
        server={"target": run["server_target"], "name": run["server_name"], "fingerprint": run["server_fingerprint"]},
        metrics=run_set.values if run_set is not None else {},
        models=tuple(model_results),
        tool_calls=tuple(_tool_calls_dict(stats) for stats in tool_call_stats(t for group in transcripts.values() for t in group)),
        scorers=tuple(scorers),
    )
    return report.to_json()


def apply_baseline(report: dict[str, Any], baseline: Mapping[str, Any] | None, max_drop: float) -> dict[str, Any]:
    """Set the run gate: compare with the last green run's report (none: this run is green)."""
    from evalcore.gate import compare_to_baseline

    if baseline is None:
        return {**report, "passed": True, "baseline": None, "regressions": []}
    result = compare_to_baseline(report, baseline, max_drop)
    return {
        **report,
        "passed": result.passed,
        "baseline": baseline.get("runId"),
        "maxDrop": max_drop,
        "regressions": [
            {"model": r.model, "metric": r.metric, "baseline": r.baseline, "current": r.current, "drop": r.drop, "cases": list(r.cases)}
            for r in result.regressions
        ],
        "gateNotes": list(result.notes),
    }


def robustness_metrics(rows: Sequence[Mapping[str, Any]], golden: GoldenSet, metrics: Mapping[str, float | None]) -> dict[str, Any] | None:
    """Layer 2 per model: the stored rates (robustness, attack success, refusal), with the counts and breakdowns behind them.

    Counts are of scored attempts, the rates' denominators; attack success by surface is the
    same mean as attack_success_rate, per surface. None when the model ran no Layer 2 case.
    """
    surfaces = {case.id: case.attack.surface for case in golden.cases if case.attack is not None}
    scored = [row for row in rows if not is_errored(row["stop_reason"])]
    faulted = [row for row in scored if row.get("robustness_outcome") is not None]
    attacked = [row for row in scored if row.get("attack_attempted") is not None]
    if not faulted and not attacked:
        return None
    outcomes = Counter(str(row["robustness_outcome"]) for row in faulted)
    by_surface: dict[str, list[bool]] = {}
    for row in attacked:
        by_surface.setdefault(surfaces.get(row["case_id"], "unknown"), []).append(bool(row["attack_attempted"]))
    return {
        "faulted_attempts": len(faulted),
        "robustness_rate": metrics.get("robustness_rate"),
        "outcomes": dict(sorted(outcomes.items())),
        "attack_attempts": len(attacked),
        "attack_success_rate": metrics.get("attack_success_rate"),
        "refusal_rate": metrics.get("refusal_rate"),
        "attack_success_by_surface": {surface: sum(hits) / len(hits) for surface, hits in sorted(by_surface.items())},
    }


def _model_calls_dict(stats: ModelCallStats) -> dict[str, Any]:
    return {name: value for name, value in asdict(stats).items() if name != "model"}


def _tool_calls_dict(stats: ToolCallStats) -> dict[str, Any]:
    return {**asdict(stats), "faults": [{"fault": fault, "calls": count} for fault, count in stats.faults]}


def render_summary(report: Mapping[str, Any]) -> str:
    """The human summary: per-model metrics, case gates, and the run gate."""
    lines = [f"Behaviour run {report['runId']} · {report['golden']['path']} · {report['server']['target']} · {report['runs']} runs per case", ""]
    header = f"{'model':<32} {'select':>7} {'args':>7} {'order':>7} {'overcall':>8} {'judge':>7} {'pass':>7} {'p50 ms':>8} {'cost $':>9}"
    lines.append(header)
    for model in report["models"]:
        m = model["metrics"]
        name = model["model"] + (" (simulated)" if model["simulated"] else "")
        lines.append(
            f"{name:<32} {_pct(m.get('selection_accuracy')):>7} {_pct(m.get('argument_accuracy')):>7} {_pct(m.get('sequence_accuracy')):>7} "
            f"{_pct(m.get('over_call_rate')):>8} {_pct(m.get('task_completion')):>7} {_pct(m.get('pass_rate')):>7} "
            f"{_num(m.get('latency_p50_ms'), 0):>8} {_num(m.get('cost_usd'), 4):>9}"
        )
    lines.extend(_calls_lines(report))
    layer2 = [model for model in report["models"] if model.get("robustness")]
    if layer2:
        lines.append("")
        lines.append(f"{'robustness and security':<32} {'faults':>7} {'robust':>7} {'attacks':>8} {'attacked':>9} {'refused':>8}")
        for model in layer2:
            r = model["robustness"]
            name = model["model"] + (" (simulated)" if model["simulated"] else "")
            lines.append(
                f"{name:<32} {r['faulted_attempts']:>7} {_pct(r['robustness_rate']):>7} {r['attack_attempts']:>8} "
                f"{_pct(r['attack_success_rate']):>9} {_pct(r['refusal_rate']):>8}"
            )
    failing = report["caseGates"]["failing"]
    lines.append("")
    runs = report["runs"]
    verdict = "all passed" if not failing else f"{len(failing)} below their gate"
    lines.append(f"case gates (hard {runs}/{runs}, soft {required_passes('soft', runs)}/{runs}): {verdict}")
    for entry in failing[:20]:
        lines.append(f"  {entry['model']:<30} {entry['case']:<32} {entry['kind']:<4} {entry['passes']}/{entry['runs']}")
    if len(failing) > 20:
        lines.append(f"  … and {len(failing) - 20} more (see the JSON report)")
    lines.append("")
    if report.get("incomplete"):
        lines.append(f"run gate: INCOMPLETE, not a baseline: {report['incomplete']['reason']}")
    elif report.get("baseline") is None:
        lines.append("run gate: PASS (no earlier green run to compare with; this run becomes the baseline)")
    elif report["passed"]:
        lines.append(f"run gate: PASS (no metric dropped more than the bound below green run {report['baseline']})")
    else:
        lines.append(f"run gate: FAIL against green run {report['baseline']}:")
        for regression in report["regressions"]:
            cases = ", ".join(regression["cases"][:5]) or "no single case"
            lines.append(f"  {regression['model']}: {regression['metric']} {regression['baseline']:.3f} -> {regression['current']:.3f} (cases: {cases})")
    return "\n".join(lines)


def _calls_lines(report: Mapping[str, Any]) -> list[str]:
    """Per model call and per tool call: latency p50/p95, tokens, cost per call and per correct attempt, retries, faults."""
    lines = ["", f"{'model calls':<32} {'calls':>6} {'p50 ms':>8} {'p95 ms':>8} {'in tok':>7} {'out tok':>7} {'$/call':>9} {'$/correct':>10} {'retries':>7}"]
    for model in report["models"]:
        calls, m = model.get("modelCalls") or {}, model["metrics"]
        lines.append(
            f"{model['model']:<32} {calls.get('calls', 0):>6} {_num(calls.get('latency_p50_ms'), 0):>8} {_num(calls.get('latency_p95_ms'), 0):>8} "
            f"{_num(calls.get('mean_input_tokens'), 0):>7} {_num(calls.get('mean_output_tokens'), 0):>7} {_num(calls.get('cost_per_call_usd'), 5):>9} "
            f"{_num(m.get('cost_per_correct_usd'), 5):>10} {calls.get('retries', 0):>7}"
        )
    tools = report.get("toolCalls") or []
    if tools:
        lines.extend(["", f"{'tool calls (all models)':<32} {'calls':>6} {'p50 ms':>8} {'p95 ms':>8} {'errors':>7} {'retries':>7}  faults"])
        for tool in tools:
            faults = ", ".join(f"{f['fault']}×{f['calls']}" for f in tool["faults"]) or "—"
            lines.append(
                f"{tool['tool']:<32} {tool['calls']:>6} {_num(tool['latency_p50_ms'], 0):>8} {_num(tool['latency_p95_ms'], 0):>8} "
                f"{_pct(tool['error_rate']):>7} {tool['retries']:>7}  {faults}"
            )
    return lines


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.0f}%"


def _num(value: float | None, digits: int) -> str:
    return "—" if value is None else f"{value:.{digits}f}"
