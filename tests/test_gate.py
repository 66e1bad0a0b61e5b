"""The behaviour regression gate: synthetic reports against synthetic baselines."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from evalcore.errors import ConfigError
from evalcore.gate import compare_to_baseline, load_report, render_gate, select_baseline

BASE_METRICS = {
    "selection_accuracy": 0.90,
    "argument_accuracy": 0.85,
    "sequence_accuracy": 0.50,
    "execution_accuracy": 0.95,
    "over_call_rate": 0.10,
    "task_completion": None,
    "pass_rate": 0.70,
}
BASE_CASES = {"weather-paris": 1.0, "refund-search": 0.8, "billing-lookup": 0.6, "chitchat": 1.0}


def report(
    run_id: str = "base",
    *,
    metrics: dict[str, Any] | None = None,
    cases: dict[str, float] | None = None,
    passed: bool = True,
    started: str | None = "2026-08-01T10:00:00+00:00",
    model: str = "sim/lexical",
) -> dict[str, Any]:
    case_rates = BASE_CASES | (cases or {})
    entry = {
        "model": model,
        "simulated": True,
        "metrics": BASE_METRICS | (metrics or {}),
        "cases": [
            {"id": case_id, "kind": "soft", "passes": round(rate * 5), "runs": 5, "pass_rate": rate, "gate_passed": rate >= 0.8}
            for case_id, rate in case_rates.items()
        ],
    }
    result: dict[str, Any] = {"kind": "behaviour", "runId": run_id, "passed": passed, "runs": 5, "models": [entry]}
    if started is not None:
        result["startedAt"] = started
    return result


def test_identical_run_passes() -> None:
    result = compare_to_baseline(report("now"), report())
    assert result.passed
    assert result.regressions == []


def test_argument_accuracy_drop_beyond_bound_fails_and_names_the_cases() -> None:
    current = report("now", metrics={"argument_accuracy": 0.80}, cases={"weather-paris": 0.6, "refund-search": 0.6})
    result = compare_to_baseline(current, report(), max_drop=0.02)
    assert not result.passed
    assert len(result.regressions) == 1
    regression = result.regressions[0]
    assert (regression.model, regression.metric, regression.baseline, regression.current) == ("sim/lexical", "argument_accuracy", 0.85, 0.80)
    assert regression.drop == pytest.approx(0.05)
    assert regression.cases == ["weather-paris", "refund-search"]  # fell 0.4, then 0.2; unchanged cases not named


def test_drift_within_the_bound_passes() -> None:
    assert compare_to_baseline(report("now", metrics={"argument_accuracy": 0.84}), report(), max_drop=0.02).passed
    # Exactly at the bound passes, whatever 0.90 - 0.88 rounds to in floating point.
    assert compare_to_baseline(report("now", metrics={"selection_accuracy": 0.88}), report(), max_drop=0.02).passed
    assert not compare_to_baseline(report("now", metrics={"selection_accuracy": 0.87}), report(), max_drop=0.02).passed


def test_over_call_rate_rising_fails_and_falling_passes() -> None:
    rising = compare_to_baseline(report("now", metrics={"over_call_rate": 0.20}, cases={"chitchat": 0.6}), report())
    assert [r.metric for r in rising.regressions] == ["over_call_rate"]
    assert rising.regressions[0].drop == pytest.approx(0.10)
    assert rising.regressions[0].cases == ["chitchat"]
    assert compare_to_baseline(report("now", metrics={"over_call_rate": 0.0}), report()).passed


def test_improvements_pass() -> None:
    better = report("now", metrics={"argument_accuracy": 1.0, "pass_rate": 0.9, "sequence_accuracy": 0.9}, cases={"billing-lookup": 1.0})
    assert compare_to_baseline(better, report()).passed


def test_new_model_is_noted_not_failed() -> None:
    current = report("now")
    newcomer = copy.deepcopy(current["models"][0]) | {"model": "openai/gpt-4o", "metrics": BASE_METRICS | {"pass_rate": 0.1}}
    current["models"].append(newcomer)
    result = compare_to_baseline(current, report())
    assert result.passed
    assert "openai/gpt-4o: not in the baseline, nothing to compare (new model)" in result.notes


def test_model_dropped_from_the_run_is_noted() -> None:
    result = compare_to_baseline(report("now", model="sim/other"), report())
    assert result.passed
    assert "sim/lexical: in the baseline but not in this run" in result.notes


def test_metric_none_on_either_side_is_skipped_with_a_note() -> None:
    current = report("now", metrics={"task_completion": 0.2, "sequence_accuracy": None})
    result = compare_to_baseline(current, report())
    assert result.passed
    assert result.notes == [
        "sim/lexical: not compared, no value on one side: sequence_accuracy (baseline 0.500, now None), task_completion (baseline None, now 0.200)"
    ]


def test_every_regression_of_a_model_is_reported() -> None:
    current = report("now", metrics={"selection_accuracy": 0.7, "pass_rate": 0.5, "over_call_rate": 0.3})
    result = compare_to_baseline(current, report())
    assert [r.metric for r in result.regressions] == ["selection_accuracy", "over_call_rate", "pass_rate"]


def test_render_names_the_cases_responsible() -> None:
    current = report("now", metrics={"argument_accuracy": 0.80}, cases={"weather-paris": 0.6})
    text = render_gate(compare_to_baseline(current, report("r0")))
    assert text.splitlines()[0] == "Behaviour gate FAILED against baseline r0 (max drop 0.02)"
    assert "sim/lexical: argument_accuracy fell 0.850 -> 0.800 (worse by 0.050)" in text
    assert "cases whose pass rate fell: weather-paris (1.00 -> 0.60)" in text
    passing = render_gate(compare_to_baseline(report("now"), report("r0")))
    assert passing.startswith("Behaviour gate PASSED against baseline r0")


def test_render_says_when_no_case_explains_the_drop() -> None:
    text = render_gate(compare_to_baseline(report("now", metrics={"over_call_rate": 0.3}), report()))
    assert "over_call_rate rose 0.100 -> 0.300" in text
    assert "no single case's pass rate fell" in text


def test_select_baseline_takes_the_newest_green_run() -> None:
    reports = [
        report("old-green", started="2026-08-01T10:00:00+00:00"),
        report("new-green", started="2026-08-02T10:00:00+00:00"),
        report("newest-red", started="2026-08-03T10:00:00+00:00", passed=False),
        report("no-time", started=None),
    ]
    chosen = select_baseline(reports)
    assert chosen is not None and chosen["runId"] == "new-green"


def test_select_baseline_without_a_green_run_is_none() -> None:
    assert select_baseline([report("red", passed=False)]) is None
    assert select_baseline([]) is None


def test_select_baseline_mixes_zoned_and_naive_times() -> None:
    reports = [report("naive", started="2026-08-02T09:00:00"), report("zoned", started="2026-08-02T10:00:00+02:00")]
    chosen = select_baseline(reports)  # 10:00+02:00 is 08:00 UTC, before 09:00 read as UTC
    assert chosen is not None and chosen["runId"] == "naive"


def test_load_report_round_trip_and_refusals(tmp_path: Path) -> None:
    good = tmp_path / "behaviour.json"
    good.write_text(json.dumps(report("r1")), encoding="utf-8")
    assert load_report(good)["runId"] == "r1"

    conformance = tmp_path / "conformance.json"
    conformance.write_text(json.dumps({"target": "http://x", "checks": []}), encoding="utf-8")
    with pytest.raises(ConfigError, match="not a behaviour report"):
        load_report(conformance)

    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(ConfigError, match="not JSON"):
        load_report(broken)
    with pytest.raises(ConfigError, match="cannot read"):
        load_report(tmp_path / "absent.json")


def test_compare_refuses_a_malformed_report() -> None:
    with pytest.raises(ConfigError, match=r"models\[0\] needs"):
        compare_to_baseline({"kind": "behaviour", "models": [{"model": "m"}]}, report())
