"""Pure logic: the behaviour run gate: a run's report against the last green run's, and whether the run is green.

Both sides are behaviour reports as `run --out` writes them (`RunReport.to_json`):

    {"kind": "behaviour", "runId": "r1", "runs": 5, "startedAt": "2026-08-01T10:00:00+00:00",
     "models": [{"model": "sim/lexical", "simulated": true,
                 "metrics": {"selection_accuracy": 0.9, "pass_rate": 0.7, "errored": 0.0, ...},
                 "cases": [{"id": "weather-paris", "kind": "hard", "passes": 5, "runs": 5, "pass_rate": 1.0, "gate_passed": true}]}]}

A regression is a metric the registry marks for the run gate (`registry.regression_metrics`: the
pass rate and each gating scorer's; not the judge's `task_completion` when the report's `judge` says
it does not gate, under `--judge-policy trusted`) that got worse by more than `max_drop` (absolute, in rate
units). Drift up to and including `max_drop` passes, because five runs at temperature 0 still
move a rate by a case or two. Each regression names the cases of that model whose pass rate
fell. A metric the baseline has and this run could not measure (every attempt of a case
errored) is a regression too: nothing reads better because something failed.

`decide` gives the run's verdict (`RunGate`):

    incomplete   errored attempts beyond `--max-error-rate` (0 by default): fails, whatever else
    fail         a regression against the baseline
    pass         no regression against the baseline
    no_baseline  no green run to compare with: passes only when the run is green itself

and whether the run is *green*, i.e. may be the baseline of later runs: it passed (or had no
baseline), is complete, and every case gate is met (hard n/n, soft ceil(0.8·n)). A run that is
not green becomes a baseline only by `evalcore baseline accept RUN_ID`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from evalcore.errors import ConfigError
from evalcore.records import Incomplete, JudgeTrust, Regression, RunGate, case_tally
from evalcore.run_kinds import KIND_LABELS, RunOutcome, eligibility
from evalcore.scoring.registry import get, regression_metrics

DEFAULT_MAX_DROP: Final = 0.02
# Rates are ratios of small counts; without a tolerance 0.90 - 0.88 = 0.0200000000000000018 would fail a 0.02 bound.
_TOLERANCE: Final = 1e-9
ACCEPT_HINT: Final = "`evalcore baseline accept RUN_ID` makes a run the baseline by hand"


@dataclass(frozen=True)
class GateResult:
    passed: bool
    regressions: list[Regression]
    notes: list[str]
    max_drop: float = DEFAULT_MAX_DROP
    baseline_run_id: str | None = None
    case_drops: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)  # (model, case) -> (baseline, current) pass rate
    incomplete: str | None = None  # why this run cannot be compared (errored attempts it did not accept)
    not_compared: list[str] = field(default_factory=list)  # models, cases and figures the baseline has no value for
    unmet_first_run: list[str] = field(default_factory=list)  # their case gates this run missed: gated as a first run


def compare_to_baseline(report: Mapping[str, Any], baseline: Mapping[str, Any], max_drop: float = DEFAULT_MAX_DROP) -> GateResult:
    """Regressions of `report` against `baseline`; it never passes a run whose errored attempts were not accepted.

    What the baseline has no value for is never skipped: a model or case it lacks, or a gated figure it holds as null
    (unknown), is gated as a first run is: its case gates must all be met. The result names each of them.
    """
    validate_report(report, "this run")
    validate_report(baseline, "the baseline")
    regressions: list[Regression] = []
    notes: list[str] = []
    not_compared: list[str] = []
    unmet: list[str] = []
    case_drops: dict[tuple[str, str], tuple[float, float]] = {}
    ungated = ungated_metrics(report)
    if report.get("runs") != baseline.get("runs"):
        notes.append(f"runs per case differ: {report.get('runs')} now, {baseline.get('runs')} in the baseline; rates are less comparable")

    baseline_models = {entry["model"]: entry for entry in baseline["models"]}
    current_names = {entry["model"] for entry in report["models"]}
    for entry in report["models"]:
        model = entry["model"]
        cases = [case for case in entry.get("cases", []) if isinstance(case, Mapping)]
        previous = baseline_models.get(model)
        if previous is None:
            not_compared.append(f"{model} (not in the baseline)")
            unmet.extend(_unmet_gates(model, cases))
            continue
        known_cases = {case.get("id") for case in previous.get("cases", [])}
        new_cases = [case for case in cases if case.get("id") not in known_cases]
        if new_cases:
            not_compared.append(f"{model}: case(s) not in the baseline: {', '.join(str(c.get('id')) for c in new_cases)}")
        unknown: list[str] = []
        fallen = _fallen_cases(previous.get("cases", []), cases)
        case_drops.update({(model, case_id): rates for case_id, rates in fallen.items()})
        for metric, direction in regression_metrics():
            if metric in ungated:
                continue
            before, after = previous["metrics"].get(metric), entry["metrics"].get(metric)
            if before is None:
                if after is not None:
                    unknown.append(metric)
                continue
            if after is None:
                regressions.append(Regression(model, metric, before, None, 1.0, tuple(fallen)))  # unknown counts as the worst
                continue
            drop = after - before if direction == "lower" else before - after
            if drop > max_drop + _TOLERANCE:
                regressions.append(Regression(model, metric, before, after, drop, tuple(fallen)))
        if unknown:
            not_compared.append(f"{model}: {', '.join(unknown)} (no value in the baseline: unknown)")
            unmet.extend(_unmet_gates(model, cases))  # a figure with no baseline: the model is gated as a first run
        else:
            unmet.extend(_unmet_gates(model, new_cases))
    for model in baseline_models:
        if model not in current_names:
            notes.append(f"{model}: in the baseline but not in this run")
    if not_compared:
        gated = f"gated as a first run: {len(unmet)} case gate(s) not met" if unmet else "gated as a first run: every case gate met"
        notes.append(f"not compared with the baseline, {gated}: {'; '.join(not_compared)}")
    incomplete = unaccepted_errors(report)
    unmet = list(dict.fromkeys(unmet))
    return GateResult(
        passed=not regressions and incomplete is None and not unmet,
        regressions=regressions,
        notes=notes,
        max_drop=max_drop,
        baseline_run_id=baseline.get("runId"),
        case_drops=case_drops,
        incomplete=incomplete,
        not_compared=not_compared,
        unmet_first_run=unmet,
    )


def ungated_metrics(report: Mapping[str, Any]) -> frozenset[str]:
    """The metrics the run gate leaves out: the judge's, when the report's `judge` says its verdicts do not gate."""
    judge = report.get("judge")
    if isinstance(judge, Mapping) and judge.get("gated") is False:
        return frozenset({get("judge").metric})
    return frozenset()


def judge_note(report: Mapping[str, Any]) -> str | None:
    """What the gate says of the run's judge, e.g. `judge sim/judge uncalibrated (12 labels): task_completion reported,
    not gated`; None for a run without a judge."""
    judge = report.get("judge")
    if not isinstance(judge, Mapping):
        return None
    try:
        return JudgeTrust.from_json(judge).gate_line()
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"the report's judge cannot be read ({type(exc).__name__}: {exc}); it needs model, rubricHash, status, kappa and n") from exc


def _unmet_gates(model: str, cases: Sequence[Mapping[str, Any]]) -> list[str]:
    """The case gates among `cases` this run did not meet, as `model case passes/runs`."""
    return [
        f"{model} {case.get('id')} {case_tally(int(case.get('passes') or 0), int(case.get('runs') or 0), int(case.get('errored') or 0))}"
        for case in cases
        if case.get("gate_passed") is not True
    ]


def unaccepted_errors(report: Mapping[str, Any]) -> str | None:
    """Why the report's errored attempts keep it from passing, or None (none, or within the accepted error rate)."""
    incomplete = report.get("incomplete")
    if isinstance(incomplete, Mapping):
        return None if incomplete.get("accepted") else str(incomplete.get("reason") or "errored attempts")
    errored = sum(int(entry["metrics"].get("errored") or 0) for entry in report["models"])
    return f"{errored} errored attempt(s)" if errored else None


def decide(
    report: Mapping[str, Any],
    baseline: Mapping[str, Any] | None,
    *,
    max_drop: float,
    incomplete: Incomplete | None,
    kind: str = "run",
    notes: Sequence[str] = (),
) -> RunGate:
    """The run's gate verdict and whether it is green (see the module docstring).

    `kind` is the run's kind (`evalcore.run_kinds`): a kind that may never be a baseline (an arm, a replay) is never
    green, and its reason says so. `notes` are the caller's, added to the gate's (e.g. an edited golden set).
    """
    judge = judge_note(report)
    notes = (*notes, judge) if judge else tuple(notes)
    failing = [f"{c['model']} {c['case']} {case_tally(c['passes'], c['runs'], c.get('errored', 0))}" for c in report["caseGates"]["failing"]]
    case_gates_met = not failing
    unmet = f"{len(failing)} case gate(s) not met ({', '.join(failing[:3])}{', …' if len(failing) > 3 else ''})"
    standing = eligibility(kind, RunOutcome("complete", green=True)).baseline
    never = "" if standing else f"never a baseline: {KIND_LABELS.get(kind, kind)}"
    if incomplete is not None and not incomplete.accepted:
        reason = f"not a baseline: {incomplete.reason}; `--resume RUN_ID` reruns the errored attempts, `--max-error-rate` accepts some"
        return RunGate("incomplete", False, False, reason, baseline.get("runId") if baseline else None, max_drop, notes=tuple(notes))
    if baseline is None:
        if case_gates_met and incomplete is None:
            later = never or "so this run becomes the baseline"
            return RunGate("no_baseline", True, standing, f"no baseline yet: every case gate is met, {later}", None, max_drop, notes=tuple(notes))
        why = "errored attempts were accepted" if case_gates_met else unmet
        how = never or f"a run becomes the baseline when it is complete and every case gate is met, or {ACCEPT_HINT}"
        reason = f"no baseline yet, and this run cannot be one: {why}; {how}"
        return RunGate("no_baseline", False, False, reason, None, max_drop, notes=tuple(notes))
    result = compare_to_baseline(report, baseline, max_drop)
    all_notes = (*result.notes, *notes)
    green = result.passed and case_gates_met and incomplete is None and standing
    if result.passed:
        if green:
            later = "it becomes the baseline of later runs"
        elif never:
            later = never
        else:
            later = f"not a baseline for later runs: {unmet if not case_gates_met else 'errored attempts were accepted'}"
        uncompared = f"; not compared: {'; '.join(result.not_compared)}" if result.not_compared else ""
        reason = f"no gated metric dropped more than {max_drop:.2f} below green run {result.baseline_run_id}{uncompared}; {later}"
        return RunGate("pass", True, green, reason, result.baseline_run_id, max_drop, tuple(result.regressions), all_notes)
    if result.regressions:
        worst = result.regressions[0]
        example = f"{worst.model}: {worst.metric} {_show(worst.baseline)} -> {_show(worst.current)}"
        reason = f"{len(result.regressions)} regression(s) against green run {result.baseline_run_id}, e.g. {example}"
    else:
        shown = ", ".join(result.unmet_first_run[:3]) + (", …" if len(result.unmet_first_run) > 3 else "")
        reason = (
            f"not compared with green run {result.baseline_run_id} ({'; '.join(result.not_compared)}), so gated as a first run: "
            f"{len(result.unmet_first_run)} case gate(s) not met ({shown})"
        )
    return RunGate("fail", False, False, reason, result.baseline_run_id, max_drop, tuple(result.regressions), all_notes)


def render_gate(result: GateResult) -> str:
    """A few lines for the terminal: verdict, each regression with the cases behind it, notes."""
    against = f"baseline {result.baseline_run_id}" if result.baseline_run_id else "the baseline"
    verdict = "PASSED" if result.passed else "FAILED"
    lines = [f"Behaviour gate {verdict} against {against} (max drop {result.max_drop:.2f})"]
    if result.incomplete:
        lines.append(f"  this run is incomplete: {result.incomplete}")
    lines.extend(_regression_lines(result.regressions, result.case_drops))
    if result.unmet_first_run:
        lines.append(f"  gated as a first run (no baseline value), case gates not met: {', '.join(result.unmet_first_run[:5])}")
    if result.passed:
        lines.append("  no gated metric got worse by more than the bound")
    lines.extend(f"  note: {note}" for note in result.notes)
    return "\n".join(lines)


def regression_lines(gate: RunGate) -> list[str]:
    return _regression_lines(gate.regressions, {})


def _regression_lines(regressions: Sequence[Regression], drops: Mapping[tuple[str, str], tuple[float, float]]) -> list[str]:
    lines = []
    for regression in regressions:
        if regression.current is None:
            lines.append(f"  {regression.model}: {regression.metric} was {regression.baseline:.3f}, not measured now (a case errored on every attempt)")
            continue
        direction = "rose" if regression.drop > 0 and regression.current > regression.baseline else "fell"
        lines.append(
            f"  {regression.model}: {regression.metric} {direction} {regression.baseline:.3f} -> {regression.current:.3f} (worse by {regression.drop:.3f})"
        )
        if regression.cases:
            shown = [_case_line(drops, regression.model, case_id) for case_id in regression.cases[:5]]
            lines.append(f"    cases whose pass rate fell: {', '.join(shown)}")
        else:
            lines.append("    no single case's pass rate fell; the change is spread across attempts")
    return lines


def validate_report(report: Any, source: str) -> dict[str, Any]:
    """The report, if it has the behaviour shape; ConfigError naming what is missing otherwise."""
    if not isinstance(report, Mapping):
        raise ConfigError(f"{source}: a behaviour report is a JSON object, got {type(report).__name__}")
    if report.get("kind") != "behaviour":
        raise ConfigError(f'{source}: not a behaviour report (kind {report.get("kind")!r}, expected "behaviour")')
    models = report.get("models")
    if not isinstance(models, list):
        raise ConfigError(f'{source}: behaviour report has no "models" list')
    for index, entry in enumerate(models):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("model"), str) or not isinstance(entry.get("metrics"), Mapping):
            raise ConfigError(f'{source}: models[{index}] needs a "model" name and a "metrics" object')
    return dict(report)


def _fallen_cases(before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]) -> dict[str, tuple[float, float]]:
    """Cases present on both sides whose pass rate fell, largest fall first (ties by id)."""
    previous = {case["id"]: case.get("pass_rate") for case in before}
    fallen: list[tuple[float, str, float, float]] = []
    for case in after:
        old, new = previous.get(case["id"]), case.get("pass_rate")
        if old is not None and new is not None and old - new > _TOLERANCE:
            fallen.append((old - new, case["id"], old, new))
    fallen.sort(key=lambda item: (-item[0], item[1]))
    return {case_id: (old, new) for _, case_id, old, new in fallen}


def _case_line(drops: Mapping[tuple[str, str], tuple[float, float]], model: str, case_id: str) -> str:
    rates = drops.get((model, case_id))
    return f"{case_id} ({rates[0]:.2f} -> {rates[1]:.2f})" if rates else case_id


def _show(value: float | None) -> str:
    return "not measured" if value is None else f"{value:.3f}"
