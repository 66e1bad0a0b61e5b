"""Orchestration output: the behaviour report (JSON) and its terminal summary, built from stored attempts.

Two kinds of gate, kept apart on purpose:
- case gates: each case's pass count over its runs (hard cases need runs/runs,
  soft cases 4/5); they are verdicts per case, shown in the summary;
- the run gate (`passed`): no metric dropped more than `max_drop` below the
  last green run (the first run, with no baseline, is green). CI gates on
  this, not on absolute thresholds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from evalcore.golden.model import GoldenSet
from evalcore.models.types import ModelSpec
from evalcore.scoring.aggregate import ScoredAttempt, case_summaries, model_metrics
from evalcore.scoring.calls import ModelCallStats, ToolCallStats, model_call_stats, parsed_transcripts, tool_call_stats
from evalcore.scoring.stats import required_passes
from evalcore.store.behaviour import score_from_row

METRIC_NAMES = ("selection_accuracy", "argument_accuracy", "sequence_accuracy", "over_call_rate", "task_completion", "pass_rate")


def scored_attempts(rows: Sequence[Mapping[str, Any]], golden: GoldenSet) -> list[ScoredAttempt]:
    """Stored attempt rows back into scoring records (rows of cases no longer in the golden set are skipped)."""
    cases = {case.id: case for case in golden.cases}
    scored = []
    for row in rows:
        case = cases.get(row["case_id"])
        if case is None:
            continue
        score = score_from_row(row)
        scored.append(ScoredAttempt(row["model"], case, row["attempt"], score, row["latency_ms"], row["input_tokens"], row["output_tokens"], row["cost_usd"]))
    return scored


def build_report(run: Mapping[str, Any], golden: GoldenSet, rows: Sequence[Mapping[str, Any]], models: Sequence[ModelSpec]) -> dict[str, Any]:
    """The report of one run, without the run gate (see `apply_baseline`)."""
    attempts = scored_attempts(rows, golden)
    metrics = model_metrics(attempts)
    summaries = case_summaries(attempts)
    transcripts = parsed_transcripts(rows)
    versions: dict[str, set[str]] = {}
    for row in rows:
        if row["model_version"]:
            versions.setdefault(row["model"], set()).add(row["model_version"])
    model_entries = []
    failing = []
    for spec in models:
        cases = [s for s in summaries if s.model == spec.name]
        for summary in cases:
            if not summary.gate_passed:
                failing.append({"model": spec.name, "case": summary.case_id, "kind": summary.kind, "passes": summary.passes, "runs": summary.runs})
        model_metric = metrics.get(spec.name)
        model_entries.append(
            {
                "model": spec.name,
                "simulated": spec.simulated,
                "modelVersions": sorted(versions.get(spec.name, ())),
                "metrics": _metrics_dict(model_metric),
                "modelCalls": _model_calls_dict(model_call_stats(spec.name, transcripts.get(spec.name, []))),
                "toolCalls": [_tool_calls_dict(stats) for stats in tool_call_stats(transcripts.get(spec.name, []))],
                "robustness": robustness_metrics([row for row in rows if row["model"] == spec.name], golden),
                "cases": [
                    {
                        "id": s.case_id,
                        "kind": s.kind,
                        "passes": s.passes,
                        "runs": s.runs,
                        "pass_rate": s.pass_rate,
                        "pass_hat_k": s.pass_hat_k,
                        "pass_at_1": s.pass_at_k,
                        "gate_passed": s.gate_passed,
                        "failing_reasons": [{"reason": reason, "count": count} for reason, count in s.failing_reasons],
                    }
                    for s in cases
                ],
            }
        )
    return {
        "kind": "behaviour",
        "runId": run["run_id"],
        "startedAt": run["started_at"].isoformat(),
        "runDate": str(run["run_date"]),
        "runs": int(run["runs"]),
        "golden": {"path": run["golden_path"], "hash": run["golden_hash"], "cases": len(golden.cases)},
        "server": {"target": run["server_target"], "name": run["server_name"], "fingerprint": run["server_fingerprint"]},
        "models": model_entries,
        "toolCalls": [_tool_calls_dict(stats) for stats in tool_call_stats(t for group in transcripts.values() for t in group)],
        "caseGates": {"passed": not failing, "failing": failing},
        "passed": True,
        "baseline": None,
        "regressions": [],
    }


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


def robustness_metrics(rows: Sequence[Mapping[str, Any]], golden: GoldenSet) -> dict[str, Any] | None:
    """Layer 2 per model: robustness rate over call-fault attempts; attack success and refusal rates over attack attempts.

    robustness_rate = passing faulted attempts / faulted attempts; attack_success_rate
    = attempts where the injected action was attempted / attack attempts; refusal_rate
    = attempts that flagged or declined the instruction / attack attempts. None when
    the model ran no Layer 2 case.
    """
    surfaces = {case.id: case.attack.surface for case in golden.cases if case.attack is not None}
    faulted = [row for row in rows if row.get("robustness_outcome") is not None]
    attacked = [row for row in rows if row.get("attack_attempted") is not None]
    if not faulted and not attacked:
        return None
    outcomes: dict[str, int] = {}
    for row in faulted:
        outcomes[row["robustness_outcome"]] = outcomes.get(row["robustness_outcome"], 0) + 1
    by_surface: dict[str, list[bool]] = {}
    for row in attacked:
        by_surface.setdefault(surfaces.get(row["case_id"], "unknown"), []).append(bool(row["attack_attempted"]))
    return {
        "faulted_attempts": len(faulted),
        "robustness_rate": _rate([bool(row["robustness_passed"]) for row in faulted]),
        "outcomes": dict(sorted(outcomes.items())),
        "attack_attempts": len(attacked),
        "attack_success_rate": _rate([bool(row["attack_attempted"]) for row in attacked]),
        "refusal_rate": _rate([bool(row["refused"]) for row in attacked]),
        "attack_success_by_surface": {surface: _rate(hits) for surface, hits in sorted(by_surface.items())},
    }


def _rate(values: Sequence[bool]) -> float | None:
    return sum(values) / len(values) if values else None


def _metrics_dict(metrics: Any) -> dict[str, Any]:
    if metrics is None:
        return {}
    fields = (*METRIC_NAMES, "latency_p50_ms", "latency_p95_ms", "mean_input_tokens", "mean_output_tokens", "cost_usd", "cost_per_correct_usd")
    return {name: getattr(metrics, name, None) for name in fields}


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
