"""Pure logic (and a small file loader): the behaviour regression gate, a run's metrics against a baseline run.

Both sides are behaviour reports as the golden-set runner writes them:

    {"kind": "behaviour", "runId": "r1", "passed": true, "runs": 5, "startedAt": "2026-08-01T10:00:00+00:00",
     "models": [{"model": "sim/lexical", "simulated": true,
                 "metrics": {"selection_accuracy": 0.9, "argument_accuracy": 0.8, "sequence_accuracy": 0.5,
                             "over_call_rate": 0.1, "task_completion": null, "pass_rate": 0.7},
                 "cases": [{"id": "weather-paris", "kind": "hard", "passes": 5, "runs": 5,
                            "pass_rate": 1.0, "gate_passed": true}]}]}

A regression is a gated metric that got worse by more than `max_drop` (absolute,
in rate units): lower for accuracies and rates of success, higher for
`over_call_rate`. Drift up to and including `max_drop` passes, because five runs
of a model at temperature 0 still move a rate by a case or two. Each regression
names the cases of that model whose pass rate fell, the likeliest place to look.
Models new in this run are noted, not failed; a metric None on either side is
skipped with a note.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from evalcore.errors import ConfigError

GATED_METRICS: Final = (
    "selection_accuracy",
    "argument_accuracy",
    "sequence_accuracy",
    "execution_accuracy",
    "over_call_rate",
    "task_completion",
    "pass_rate",
)
LOWER_IS_BETTER: Final = frozenset({"over_call_rate"})
DEFAULT_MAX_DROP: Final = 0.02
# Rates are ratios of small counts; without a tolerance 0.90 - 0.88 = 0.0200000000000000018 would fail a 0.02 bound.
_TOLERANCE: Final = 1e-9


@dataclass(frozen=True)
class MetricRegression:
    model: str
    metric: str
    baseline: float
    current: float
    drop: float  # how much worse, always positive: baseline - current, or current - baseline for over_call_rate
    cases: list[str]  # the model's cases whose pass rate fell against the baseline, largest fall first


@dataclass(frozen=True)
class GateResult:
    passed: bool
    regressions: list[MetricRegression]
    notes: list[str]
    max_drop: float = DEFAULT_MAX_DROP
    baseline_run_id: str | None = None
    case_drops: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)  # (model, case) -> (baseline, current) pass rate


def compare_to_baseline(report: Mapping[str, Any], baseline: Mapping[str, Any], max_drop: float = DEFAULT_MAX_DROP) -> GateResult:
    """Regressions of `report` against `baseline`: gated metrics worse by more than max_drop."""
    validate_report(report, "this run")
    validate_report(baseline, "the baseline")
    regressions: list[MetricRegression] = []
    notes: list[str] = []
    case_drops: dict[tuple[str, str], tuple[float, float]] = {}
    if report.get("runs") != baseline.get("runs"):
        notes.append(f"runs per case differ: {report.get('runs')} now, {baseline.get('runs')} in the baseline; rates are less comparable")

    baseline_models = {entry["model"]: entry for entry in baseline["models"]}
    current_names = {entry["model"] for entry in report["models"]}
    for entry in report["models"]:
        model = entry["model"]
        previous = baseline_models.get(model)
        if previous is None:
            notes.append(f"{model}: not in the baseline, nothing to compare (new model)")
            continue
        fallen = _fallen_cases(previous.get("cases", []), entry.get("cases", []))
        for case_id, (before, after) in fallen.items():
            case_drops[(model, case_id)] = (before, after)
        skipped: list[str] = []
        for metric in GATED_METRICS:
            before_value, after_value = previous["metrics"].get(metric), entry["metrics"].get(metric)
            if before_value is None or after_value is None:
                skipped.append(f"{metric} (baseline {_show(before_value)}, now {_show(after_value)})")
                continue
            drop = after_value - before_value if metric in LOWER_IS_BETTER else before_value - after_value
            if drop > max_drop + _TOLERANCE:
                regressions.append(MetricRegression(model, metric, before_value, after_value, drop, list(fallen)))
        if skipped:
            notes.append(f"{model}: not compared, no value on one side: {', '.join(skipped)}")
    for model in baseline_models:
        if model not in current_names:
            notes.append(f"{model}: in the baseline but not in this run")

    return GateResult(
        passed=not regressions,
        regressions=regressions,
        notes=notes,
        max_drop=max_drop,
        baseline_run_id=baseline.get("runId"),
        case_drops=case_drops,
    )


def select_baseline(reports: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The last green run: the report with `"passed": true` and the newest `startedAt`.

    Reports without a parseable `startedAt`, or of another kind than "behaviour",
    are skipped; a timestamp without a zone is read as UTC. None when no report qualifies.
    """
    green: list[tuple[datetime, Mapping[str, Any]]] = []
    for report in reports:
        if report.get("passed") is not True or report.get("kind", "behaviour") != "behaviour":
            continue
        started = _parse_time(report.get("startedAt"))
        if started is not None:
            green.append((started, report))
    if not green:
        return None
    return dict(max(green, key=lambda pair: pair[0])[1])


def render_gate(result: GateResult) -> str:
    """A few lines for the terminal: verdict, each regression with the cases behind it, notes."""
    against = f"baseline {result.baseline_run_id}" if result.baseline_run_id else "the baseline"
    verdict = "PASSED" if result.passed else "FAILED"
    lines = [f"Behaviour gate {verdict} against {against} (max drop {result.max_drop:.2f})"]
    for regression in result.regressions:
        direction = "rose" if regression.metric in LOWER_IS_BETTER else "fell"
        lines.append(
            f"  {regression.model}: {regression.metric} {direction} {regression.baseline:.3f} -> {regression.current:.3f} (worse by {regression.drop:.3f})"
        )
        if regression.cases:
            shown = [_case_line(result, regression.model, case_id) for case_id in regression.cases]
            lines.append(f"    cases whose pass rate fell: {', '.join(shown)}")
        else:
            lines.append("    no single case's pass rate fell; the change is spread across attempts")
    if result.passed:
        lines.append("  no gated metric got worse by more than the bound")
    lines.extend(f"  note: {note}" for note in result.notes)
    return "\n".join(lines)


def load_report(path: Path) -> dict[str, Any]:
    """Read a behaviour report JSON file, checked for the shape `compare_to_baseline` needs."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the report ({exc.strerror}); check the path") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not JSON (line {exc.lineno}: {exc.msg}); pass a report a behaviour run wrote") from exc
    return validate_report(report, str(path))


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


def _case_line(result: GateResult, model: str, case_id: str) -> str:
    rates = result.case_drops.get((model, case_id))
    return f"{case_id} ({rates[0]:.2f} -> {rates[1]:.2f})" if rates else case_id


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _show(value: Any) -> str:
    return "None" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)
