"""Orchestration output: a behaviour run's typed report, built in memory from its attempt records, and its terminal summary.

The runner holds every attempt record of the run; `build_report` computes the
metrics once (`evalcore.scoring.metrics.run_metrics`) and assembles the
`RunReport` from the records and those metric sets. Nothing is read back from
the store. Two kinds of gate, kept apart on purpose:
- case gates: each case's pass count over its runs (hard cases need runs/runs,
  soft cases 4/5; an errored attempt means the gate is not met);
- the run gate (`evalcore.scoring.gate.decide`): the drop against the last green run,
  whether the run is incomplete, and whether it is green itself.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from typing import Any

from evalcore.golden.model import GoldenSet
from evalcore.models.types import ModelSpec
from evalcore.records import AttemptOutcome, AttemptRecord, AttemptScore, CaseResult, Incomplete, MetricSet, ModelResult, RunReport, case_tally
from evalcore.redaction import clip
from evalcore.run_kinds import KIND_LABELS, run_status
from evalcore.scoring.agreement import judge_consistency
from evalcore.scoring.calls import ModelCallStats, ToolCallStats, model_call_stats, tool_call_stats
from evalcore.scoring.metrics import MetricAttempt, run_metrics
from evalcore.scoring.registry import registered
from evalcore.scoring.stats import required_passes


def build_report(
    run: Mapping[str, Any], golden: GoldenSet, records: Sequence[AttemptRecord], models: Sequence[ModelSpec], *, max_error_rate: float = 0.0
) -> tuple[RunReport, list[MetricSet]]:
    """The report of one run from its attempt records, and the metric sets it was built from (what the store keeps).

    `run` holds the run's identity: run_id, started_at, run_date, runs, golden_path, golden_hash, server_target,
    server_name, server_fingerprint. The report has no gate and no drift yet (`evalcore.scoring.gate.decide`, the drift detector).
    """
    runs = int(run["runs"])
    metric_sets = run_metrics([MetricAttempt.of(record) for record in records], runs)
    case_sets = {(m.model, m.case_id): m for m in metric_sets if m.scope == "case"}
    model_sets = {m.model: m for m in metric_sets if m.scope == "model"}
    run_set = next((m for m in metric_sets if m.scope == "run"), None)
    score_metrics = tuple(scorer.metric for scorer in registered())
    transcripts: dict[str, list[dict[str, Any]]] = {}
    versions: dict[str, set[str]] = {}
    reasons: dict[tuple[str, str], Counter[str]] = {}
    outcomes: dict[tuple[str, str], list[AttemptOutcome]] = {}
    scorers: dict[str, None] = {}
    for record in records:
        transcripts.setdefault(record.model, []).append(_call_telemetry(record.transcript_json))
        if record.model_version:
            versions.setdefault(record.model, set()).add(record.model_version)
        counter = reasons.setdefault((record.model, record.case_id), Counter())
        if not record.score.passed:
            counter.update(record.score.reasons)
        outcomes.setdefault((record.model, record.case_id), []).append(
            AttemptOutcome(record.attempt, record.score.passed and not record.errored, record.error_kind, tuple(record.score.reasons))
        )
        scorers.update(dict.fromkeys(score.scorer for score in record.score.scores))
    model_results = []
    for spec in models:
        mine = [record for record in records if record.model == spec.name]
        cases = tuple(  # in the golden set's order, whatever order the attempts finished in
            CaseResult(
                case.id,
                case.kind,
                metrics.values,
                _most_common_first(reasons.get((spec.name, case.id), Counter())),
                score_metrics,
                tuple(sorted(outcomes.get((spec.name, case.id), ()), key=lambda outcome: outcome.attempt)),
            )
            for case in golden.cases
            if (metrics := case_sets.get((spec.name, case.id))) is not None
        )
        model_metrics = model_sets[spec.name].values if spec.name in model_sets else {}
        model_results.append(
            ModelResult(
                model=spec.name,
                simulated=spec.simulated,
                model_versions=tuple(sorted(versions.get(spec.name, ()))),
                metrics=model_metrics,
                cases=cases,
                price_known=all(record.cost_usd is not None for record in mine),
                model_calls=_model_calls_dict(model_call_stats(spec.name, transcripts.get(spec.name, []))),
                tool_calls=tuple(_tool_calls_dict(stats) for stats in tool_call_stats(transcripts.get(spec.name, []))),
                robustness=robustness_metrics(mine, golden, model_metrics),
            )
        )
    report = RunReport(
        run_id=run["run_id"],
        started_at=run["started_at"].isoformat() if hasattr(run["started_at"], "isoformat") else str(run["started_at"]),
        run_date=str(run["run_date"]),
        runs=runs,
        golden={"path": run["golden_path"], "hash": run["golden_hash"], "cases": len(golden.cases)},
        server={"target": run["server_target"], "name": run["server_name"], "fingerprint": run["server_fingerprint"]},
        metrics=run_set.values if run_set is not None else {},
        models=tuple(model_results),
        tool_calls=tuple(_tool_calls_dict(stats) for stats in tool_call_stats(t for group in transcripts.values() for t in group)),
        scorers=tuple(scorers),
        incomplete=incompleteness(records, max_error_rate),
        run_kind=str(run.get("kind") or "run"),
    )
    return report, metric_sets


def judge_consistency_of(records: Sequence[AttemptRecord], repeats: int) -> dict[str, Any] | None:
    """The judge's agreement with itself (`evalcore.scoring.agreement.judge_consistency`) over the attempts it graded
    `repeats` times; None when it graded each once (or there is no judge)."""
    if repeats < 2:
        return None
    votes: dict[tuple[str, str], list[tuple[bool, ...]]] = {}
    for record in records:
        if record.judge is not None and len(record.judge.votes) >= 2:
            votes.setdefault((record.model, record.case_id), []).append(tuple(record.judge.votes))
    return judge_consistency(votes, repeats)


# What the per-call figures (`evalcore.scoring.calls`) read of a transcript's model turns and tool executions.
_TURN_FIELDS = ("latency_ms", "input_tokens", "output_tokens", "cost_usd", "retries")
_EXECUTION_FIELDS = ("tool", "is_error", "latency_ms", "request_ids", "error_type", "fault")


def _call_telemetry(transcript_json: str | None) -> dict[str, Any]:
    """What the per-call figures read of a transcript (its model turns, tool executions and failed-call retries),
    without its messages, arguments or results: a run of many attempts holds every one of these at once."""
    transcript = json.loads(transcript_json) if transcript_json else {}
    telemetry: dict[str, Any] = {}
    if "turns" in transcript:
        telemetry["turns"] = [{key: turn[key] for key in _TURN_FIELDS if key in turn} for turn in transcript["turns"] or []]
    if "executions" in transcript:
        telemetry["executions"] = [{key: execution[key] for key in _EXECUTION_FIELDS if key in execution} for execution in transcript["executions"] or []]
    if "retries" in transcript:
        telemetry["retries"] = transcript["retries"]
    return telemetry


def report_view(record: AttemptRecord, interned: dict[Any, Any]) -> AttemptRecord:
    """The attempt as the report reads it, for a runner to hold once the store has the whole record: its transcript
    cut to the per-call telemetry, no tool calls or texts, its scores shared with every equal score of the run
    (`interned`, one per run: most attempts' scores equal another's). `build_report` gives the same report of these
    as of the whole records, and the memory a run holds per finished attempt stays small and bounded."""
    scores = tuple(interned.setdefault(score, score) for score in record.score.scores)
    whole = AttemptScore(scores, record.score.passed, record.score.reasons)
    score = interned.setdefault(whole, whole)
    return replace(
        record,
        score=score,
        tool_calls=(),
        final_text=None,
        error=None,
        transcript_json=json.dumps(_call_telemetry(record.transcript_json), separators=(",", ":")),
    )


def _most_common_first(counter: Counter[str]) -> tuple[tuple[str, int], ...]:
    """(reason, count), most common first, ties by reason: the same order whatever order the attempts finished in."""
    return tuple(sorted(counter.items(), key=lambda item: (-item[1], item[0])))


def incompleteness(records: Sequence[AttemptRecord], max_error_rate: float = 0.0) -> Incomplete | None:
    """The run's errored attempts per model with the first error of each, or None when every attempt was scored."""
    totals: Counter[str] = Counter(record.model for record in records)
    errored: dict[str, list[AttemptRecord]] = {}
    for record in records:
        if record.errored:
            errored.setdefault(record.model, []).append(record)
    if not errored:
        return None
    parts = []
    for model, failed in errored.items():
        kinds = ", ".join(f"{count} {kind}" for kind, count in Counter(str(r.error_kind) for r in failed).items())
        first = next((r.score.reasons[0] for r in failed if r.score.reasons), "no error text")
        parts.append(f"{model}: {len(failed)} of {totals[model]} attempts errored ({kinds}; first: {clip(first, 300)})")
    rate = sum(len(failed) for failed in errored.values()) / len(records)
    return Incomplete({model: len(failed) for model, failed in errored.items()}, rate, max_error_rate, "; ".join(parts))


def robustness_metrics(records: Sequence[AttemptRecord], golden: GoldenSet, metrics: Mapping[str, float | None]) -> dict[str, Any] | None:
    """Layer 2 per model: the stored rates (robustness, attack success, refusal), with the counts and breakdowns behind them.

    Counts are of scored attempts, the rates' denominators; attack success by surface is the
    same mean as attack_success_rate, per surface. None when the model ran no Layer 2 case.
    """
    surfaces = {case.id: case.attack.surface for case in golden.cases if case.attack is not None}
    scored = [record for record in records if not record.errored and record.robustness is not None]
    faulted = [record for record in scored if record.robustness is not None and record.robustness.outcome is not None]
    attacked = [record for record in scored if record.robustness is not None and record.robustness.attack_attempted is not None]
    if not faulted and not attacked:
        return None
    outcomes = Counter(str(record.robustness.outcome) for record in faulted if record.robustness is not None)
    by_surface: dict[str, list[bool]] = {}
    for record in attacked:
        assert record.robustness is not None
        by_surface.setdefault(surfaces.get(record.case_id, "unknown"), []).append(bool(record.robustness.attack_attempted))
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
    kind = report.get("runKind") or "run"
    shown_kind = "" if kind == "run" else f" ({KIND_LABELS.get(kind, kind)})"
    runs_text = f"{report['runs']} run{'' if report['runs'] == 1 else 's'} per case"
    lines = [f"Behaviour run {report['runId']}{shown_kind} · {report['golden']['path']} · {report['server']['target']} · {runs_text}", ""]
    names = {model["model"]: model["model"] + (" (simulated)" if model["simulated"] else "") for model in report["models"]}
    width = max([32, *(len(name) + 1 for name in names.values())])  # a long model name widens the column, never shifts a row
    header = f"{'model':<{width}} {'select':>7} {'args':>7} {'order':>7} {'overcall':>8} {'judge':>7} {'pass':>7} {'p50 ms':>8} {'cost $':>9}"
    lines.append(header)
    for model in report["models"]:
        m = model["metrics"]
        name = names[model["model"]]
        cost = "no price" if model["simulated"] or m.get("cost_usd") is None else _num(m.get("cost_usd"), 4)  # as the dashboard says it
        lines.append(
            f"{name:<{width}} {_pct(m.get('selection_accuracy')):>7} {_pct(m.get('argument_accuracy')):>7} {_pct(m.get('sequence_accuracy')):>7} "
            f"{_pct(m.get('over_call_rate')):>8} {_pct(m.get('task_completion')):>7} {_pct(m.get('pass_rate')):>7} "
            f"{_num(m.get('latency_p50_ms'), 0):>8} {cost:>9}"
        )
    lines.extend(_calls_lines(report))
    layer2 = [model for model in report["models"] if model.get("robustness")]
    if layer2:
        lines.append("")
        lines.append(f"{'robustness and security':<{width}} {'faults':>7} {'robust':>7} {'attacks':>8} {'attacked':>9} {'refused':>8}")
        for model in layer2:
            r = model["robustness"]
            name = names[model["model"]]
            lines.append(
                f"{name:<{width}} {r['faulted_attempts']:>7} {_pct(r['robustness_rate']):>7} {r['attack_attempts']:>8} "
                f"{_pct(r['attack_success_rate']):>9} {_pct(r['refusal_rate']):>8}"
            )
    failing = report["caseGates"]["failing"]
    lines.append("")
    runs = report["runs"]
    verdict = "all passed" if not failing else f"{len(failing)} below their gate"
    lines.append(f"case gates (hard {runs}/{runs}, soft {required_passes('soft', runs)}/{runs}): {verdict}")
    for entry in failing[:20]:
        tally = case_tally(entry["passes"], entry["runs"], entry.get("errored", 0))
        lines.append(f"  {entry['model']:<{width - 2}} {entry['case']:<32} {entry['kind']:<4} {tally}")
        reason = _top_reason(report, entry["model"], entry["case"])
        if reason:
            lines.append(f"    why: {reason}")
    if len(failing) > 20:
        lines.append(f"  … and {len(failing) - 20} more (see the JSON report)")
    lines.append("")
    gate = report.get("gate") or {}
    status = str(gate.get("status") or "none").upper().replace("_", " ")
    lines.append(f"status: {run_status('complete', gate or None)}")
    lines.append(f"run gate: {status}: {gate.get('reason', '')}")
    for regression in gate.get("regressions") or []:
        cases = ", ".join(regression["cases"][:5]) or "no single case"
        current = "not measured" if regression["current"] is None else f"{regression['current']:.3f}"
        before = "unknown" if regression["baseline"] is None else f"{regression['baseline']:.3f}"
        lines.append(f"  {regression['model']}: {regression['metric']} {before} -> {current} (cases: {cases})")
    lines.extend(f"  note: {note}" for note in gate.get("notes") or [])
    return "\n".join(lines)


def _top_reason(report: Mapping[str, Any], model: str, case_id: str) -> str | None:
    """The reason most of a case's failed attempts gave, on one line, or None (a report from before reasons, or none given)."""
    for entry in report["models"]:
        if entry["model"] != model:
            continue
        for case in entry.get("cases") or []:
            if case.get("id") == case_id and case.get("failing_reasons"):
                return clip(" ".join(str(case["failing_reasons"][0]["reason"]).split()), 200)
    return None


def _calls_lines(report: Mapping[str, Any]) -> list[str]:
    """Per model call and per tool call: latency p50/p95, tokens, cost per call and per correct attempt, retries, faults."""
    lines = ["", f"{'model calls':<32} {'calls':>6} {'p50 ms':>8} {'p95 ms':>8} {'in tok':>7} {'out tok':>7} {'$/call':>9} {'$/correct':>10} {'retries':>7}"]
    for model in report["models"]:
        calls, m = model.get("modelCalls") or {}, model["metrics"]
        per_call, per_correct = (
            ("no price", "no price") if model["simulated"] else (_num(calls.get("cost_per_call_usd"), 5), _num(m.get("cost_per_correct_usd"), 5))
        )  # as the summary above and the dashboard say it
        lines.append(
            f"{model['model']:<32} {calls.get('calls', 0):>6} {_num(calls.get('latency_p50_ms'), 0):>8} {_num(calls.get('latency_p95_ms'), 0):>8} "
            f"{_num(calls.get('mean_input_tokens'), 0):>7} {_num(calls.get('mean_output_tokens'), 0):>7} {per_call:>9} "
            f"{per_correct:>10} {calls.get('retries', 0):>7}"
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
