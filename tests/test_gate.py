"""The behaviour regression gate: synthetic reports against synthetic baselines."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from evalcore.cli import main
from evalcore.errors import ConfigError
from evalcore.records import Incomplete
from evalcore.scoring.gate import compare_to_baseline, decide, render_gate

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
    failing = [{"model": model, "case": c["id"], "kind": c["kind"], "passes": c["passes"], "runs": 5} for c in entry["cases"] if not c["gate_passed"]]
    result: dict[str, Any] = {
        "kind": "behaviour",
        "runId": run_id,
        "passed": passed,
        "runs": 5,
        "models": [entry],
        "caseGates": {"passed": not failing, "failing": failing},
        "golden": {"path": "golden/tasks.yaml"},
    }
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
    assert regression.cases == ("weather-paris", "refund-search")  # fell 0.4, then 0.2; unchanged cases not named


def test_drift_within_the_bound_passes() -> None:
    assert compare_to_baseline(report("now", metrics={"argument_accuracy": 0.84}), report(), max_drop=0.02).passed
    # Exactly at the bound passes, whatever 0.90 - 0.88 rounds to in floating point.
    assert compare_to_baseline(report("now", metrics={"selection_accuracy": 0.88}), report(), max_drop=0.02).passed
    assert not compare_to_baseline(report("now", metrics={"selection_accuracy": 0.87}), report(), max_drop=0.02).passed


def test_over_call_rate_rising_fails_and_falling_passes() -> None:
    rising = compare_to_baseline(report("now", metrics={"over_call_rate": 0.20}, cases={"chitchat": 0.6}), report())
    assert [r.metric for r in rising.regressions] == ["over_call_rate"]
    assert rising.regressions[0].drop == pytest.approx(0.10)
    assert rising.regressions[0].cases == ("chitchat",)
    assert compare_to_baseline(report("now", metrics={"over_call_rate": 0.0}), report()).passed


def test_improvements_pass() -> None:
    better = report("now", metrics={"argument_accuracy": 1.0, "pass_rate": 0.9, "sequence_accuracy": 0.9}, cases={"billing-lookup": 1.0})
    assert compare_to_baseline(better, report()).passed


def test_a_model_the_baseline_never_saw_is_gated_as_a_first_run() -> None:
    current = report("now", cases={"billing-lookup": 0.8})
    newcomer = copy.deepcopy(current["models"][0]) | {"model": "openai/gpt-4o", "metrics": BASE_METRICS | {"pass_rate": 0.1}}
    current["models"].append(newcomer)
    result = compare_to_baseline(current, report())
    assert result.passed  # every case gate of the newcomer is met: it passes as a first run would
    assert result.not_compared == ["openai/gpt-4o (not in the baseline)"]
    # A newcomer with a case gate unmet fails: it has no baseline, so it is gated as a first run is, never skipped.
    red = copy.deepcopy(newcomer)
    red["cases"][2] |= {"passes": 0, "pass_rate": 0.0, "gate_passed": False}
    current["models"][1] = red
    result = compare_to_baseline(current, report())
    assert not result.passed and result.regressions == [] and result.unmet_first_run == ["openai/gpt-4o billing-lookup 0/5"]
    gate = decide(
        current | {"caseGates": {"passed": False, "failing": [{"model": "openai/gpt-4o", "case": "billing-lookup", "passes": 0, "runs": 5}]}},
        report(),
        max_drop=0.02,
        incomplete=None,
    )
    assert (gate.status, gate.passed, gate.green) == ("fail", False, False)
    assert "openai/gpt-4o (not in the baseline)" in gate.reason and "gated as a first run" in gate.reason


def test_a_case_the_baseline_never_saw_must_meet_its_gate() -> None:
    current = report("now", cases={"billing-lookup": 0.8, "brand-new": 0.2})
    result = compare_to_baseline(current, report())
    assert not result.passed and result.unmet_first_run == ["sim/lexical brand-new 1/5"]
    assert any("case(s) not in the baseline: brand-new" in entry for entry in result.not_compared)


def test_model_dropped_from_the_run_is_noted() -> None:
    result = compare_to_baseline(report("now", model="sim/other", cases={"billing-lookup": 0.8}), report())
    assert result.passed
    assert "sim/lexical: in the baseline but not in this run" in result.notes


def test_a_metric_null_in_the_baseline_is_unknown_not_skipped() -> None:
    current = report("now", metrics={"task_completion": 0.2})
    result = compare_to_baseline(current, report())
    assert not result.passed  # unknown in the baseline: the model is gated as a first run, and billing-lookup is 3/5
    assert result.not_compared == ["sim/lexical: task_completion (no value in the baseline: unknown)"]
    assert "gated as a first run" in result.notes[-1]
    # An all-errored baseline has every figure null: a clearly worse run never passes against it.
    empty = report("base", metrics=dict.fromkeys(BASE_METRICS))
    worse = report("now", metrics={"pass_rate": 0.67}, cases={"weather-paris": 0.4})
    assert not compare_to_baseline(worse, empty).passed
    # A figure the baseline has and this run could not measure (a case errored on every attempt) never reads as a pass.
    unmeasured = compare_to_baseline(report("now", metrics={"pass_rate": None}), report())
    assert not unmeasured.passed
    assert [(r.metric, r.current) for r in unmeasured.regressions] == [("pass_rate", None)]
    assert "not measured now" in render_gate(unmeasured)


@pytest.mark.parametrize("kind", ["compare-baseline", "compare-candidate", "perturb-arm", "replay"])
def test_an_arm_or_a_replay_is_never_green_and_never_says_it_becomes_the_baseline(kind: str) -> None:
    green = report("first", cases={"billing-lookup": 0.8})
    for baseline in (None, report()):
        gate = decide(green, baseline, max_drop=0.02, incomplete=None, kind=kind)
        assert gate.passed and not gate.green
        assert "becomes the baseline" not in gate.reason and "never a baseline" in gate.reason


def test_every_regression_of_a_model_is_reported() -> None:
    current = report("now", metrics={"selection_accuracy": 0.7, "pass_rate": 0.5, "over_call_rate": 0.3})
    result = compare_to_baseline(current, report())
    assert sorted(r.metric for r in result.regressions) == ["over_call_rate", "pass_rate", "selection_accuracy"]


def test_a_run_with_errored_attempts_never_passes_the_comparison() -> None:
    current = report("now", metrics={"errored": 3.0})
    result = compare_to_baseline(current, report())
    assert not result.passed and result.regressions == [] and result.incomplete == "3 errored attempt(s)"
    accepted = {**current, "incomplete": {"accepted": True, "reason": "m: 3 of 20 attempts errored"}}
    assert compare_to_baseline(accepted, report()).passed


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


def test_without_a_baseline_a_red_run_does_not_pass_and_is_no_baseline() -> None:
    red = report("first", cases={"weather-paris": 0.0, "refund-search": 0.0, "billing-lookup": 0.0, "chitchat": 0.0})
    gate = decide(red, None, max_drop=0.02, incomplete=None)
    assert (gate.status, gate.passed, gate.green) == ("no_baseline", False, False)
    assert "no baseline yet" in gate.reason and "baseline accept" in gate.reason and "4 case gate(s) not met" in gate.reason
    green = report("first", cases={"billing-lookup": 0.8})
    gate = decide(green, None, max_drop=0.02, incomplete=None)
    assert (gate.status, gate.passed, gate.green) == ("no_baseline", True, True)
    assert "becomes the baseline" in gate.reason


def test_an_incomplete_run_fails_its_gate_unless_its_error_rate_was_accepted() -> None:
    now = report("now", cases={"billing-lookup": 0.8}, metrics={"errored": 1.0})
    incomplete = Incomplete({"sim/lexical": 1}, 0.05, 0.0, "sim/lexical: 1 of 20 attempts errored")
    gate = decide(now, report(), max_drop=0.02, incomplete=incomplete)
    assert (gate.status, gate.passed, gate.green) == ("incomplete", False, False) and "--resume" in gate.reason
    accepted = Incomplete({"sim/lexical": 1}, 0.05, 0.1, "sim/lexical: 1 of 20 attempts errored")
    gate = decide({**now, "incomplete": accepted.to_json()}, report(), max_drop=0.02, incomplete=accepted)
    assert (gate.status, gate.passed, gate.green) == ("pass", True, False)  # it passes, but is never a baseline


def test_a_passing_run_with_an_unmet_case_gate_is_not_green() -> None:
    gate = decide(report("now"), report(), max_drop=0.02, incomplete=None)
    assert (gate.status, gate.passed, gate.green) == ("pass", True, False)
    assert "not a baseline" in gate.reason and "billing-lookup" in gate.reason


def test_the_gate_command_without_a_baseline_fails_a_red_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report("first") | {"gate": {"green": False}}), encoding="utf-8")
    assert main(["gate", "--report", str(path), "--db", str(tmp_path / "none.duckdb")]) == 1
    assert "no baseline yet" in capsys.readouterr().out
    path.write_text(json.dumps(report("first") | {"gate": {"green": True}}), encoding="utf-8")
    assert main(["gate", "--report", str(path), "--db", str(tmp_path / "none.duckdb")]) == 0
    conformance = tmp_path / "conformance.json"
    conformance.write_text(json.dumps({"target": "http://x", "checks": []}), encoding="utf-8")
    assert main(["gate", "--report", str(conformance)]) == 2


def test_compare_refuses_a_malformed_report() -> None:
    with pytest.raises(ConfigError, match=r"models\[0\] needs"):
        compare_to_baseline({"kind": "behaviour", "models": [{"model": "m"}]}, report())
