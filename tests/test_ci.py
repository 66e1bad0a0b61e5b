"""CI: the GitHub Action's own scripts, run as a runner runs them (bash, GITHUB_* files), against the reference server.

The composite action's `run:` steps are taken from action.yml as written and run with the environment GitHub
would give them; `evalcore` on PATH is this checkout. The Markdown renderers and the runner's files are tested
directly too, with hostile text where a server's or a model's words reach them.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalcore.ci.github import Runner
from evalcore.ci.markdown import behaviour_comment, conformance_summary
from evalcore.cli import main

ROOT = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
WORKFLOW = yaml.safe_load((ROOT / ".github" / "workflows" / "evals.yml").read_text(encoding="utf-8"))
REFERENCE_STDIO = f"{shlex.quote(sys.executable)} -m evalcore.demo_server --stdio"


def read_outputs(path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT as the runner reads it: `name=value` lines and `name<<DELIMITER` blocks."""
    outputs: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    index = 0
    while index < len(lines):
        line = lines[index]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, index + 1)
            outputs[name] = "\n".join(lines[index + 1 : end])
            index = end + 1
        else:
            name, value = line.split("=", 1)
            outputs[name] = value
            index += 1
    return outputs


def _step(step_id_or_name: str) -> dict[str, Any]:
    return next(step for step in ACTION["runs"]["steps"] if step_id_or_name in (step.get("id"), step.get("name")))


class FakeRunner:
    """A folder standing in for a GitHub runner: the GITHUB_* files, a PATH whose `evalcore` is this checkout."""

    def __init__(self, root: Path, event: dict[str, Any] | None = None) -> None:
        self.root = root
        self.bin = root / "bin"
        self.bin.mkdir()
        shim = self.bin / "evalcore"
        shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m evalcore "$@"\n', encoding="utf-8")
        shim.chmod(0o755)
        self.summary = root / "step_summary.md"
        self.event_path = root / "event.json"
        self.event_path.write_text(json.dumps(event or {}), encoding="utf-8")
        self.workspace = root / "workspace"
        self.workspace.mkdir()

    def run_step(
        self, name: str, inputs: dict[str, str], steps: dict[str, dict[str, str]] | None = None
    ) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
        """One `run:` step, its `${{ inputs.x }}` / `${{ steps.y.outputs.z }}` env values filled in as the runner would."""
        step = _step(name)
        defaults = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
        values = {**defaults, **inputs}
        output = self.root / f"output-{name}.txt"
        output.unlink(missing_ok=True)
        env = {key: value for key, value in os.environ.items() if not key.startswith("GITHUB_")}
        env.update(
            PATH=f"{self.bin}{os.pathsep}{env['PATH']}",
            PYTHONPATH=str(ROOT),
            GITHUB_STEP_SUMMARY=str(self.summary),
            GITHUB_OUTPUT=str(output),
            GITHUB_EVENT_PATH=str(self.event_path),
            GITHUB_SHA="0123456789abcdef0123456789abcdef01234567",
        )
        env["RUNNER_TEMP"] = str(self.root)
        known = {"install": {"evalcore": str(self.bin / "evalcore"), "python": sys.executable}, **(steps or {})}
        for key, expression in (step.get("env") or {}).items():
            env[key] = _evaluate(str(expression), values, known)
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=self.workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            stdin=subprocess.DEVNULL,
        )
        return done, read_outputs(output)


def _evaluate(expression: str, inputs: dict[str, str], steps: dict[str, dict[str, str]]) -> str:
    """The few expression forms the action's env uses: a literal, `${{ inputs.NAME }}`, `${{ steps.ID.outputs.NAME }}`."""
    if not expression.startswith("${{"):
        return expression
    path = expression.removeprefix("${{").removesuffix("}}").strip().split(".")
    if path[0] == "inputs":
        return inputs[path[1]]
    if path[0] == "steps":
        return steps.get(path[1], {}).get(path[3], "")
    raise AssertionError(f"the test does not evaluate {expression}")


# --- the action file -------------------------------------------------------------------------------


def test_action_is_composite_and_its_scripts_take_inputs_only_through_the_environment():
    """`${{ ... }}` pasted into a script would let an input (a header, a PR's text) inject shell."""
    assert ACTION["runs"]["using"] == "composite"
    assert {"mode", "url", "stdio", "header", "runs", "timeout", "python-version", "version", "golden", "models", "db", "comment-path"} <= set(ACTION["inputs"])
    scripts = [step["run"] for step in ACTION["runs"]["steps"] if "run" in step]
    assert len(scripts) >= 4 and not any("${{" in script for script in scripts)
    uses = [step["uses"].split("@")[0] for step in ACTION["runs"]["steps"] if "uses" in step]
    assert {"actions/setup-python", "actions/cache/restore", "actions/cache/save"} <= set(uses)


def test_the_worked_example_uses_this_action():
    steps = [step for job in WORKFLOW["jobs"].values() for step in job["steps"]]
    modes = {step.get("with", {}).get("mode", "conformance") for step in steps if step.get("uses") == "./"}
    assert modes == {"conformance", "behaviour"}


# --- conformance through the action's scripts ----------------------------------------------------


def test_conformance_step_writes_summary_junit_outputs_and_keeps_the_exit_code(tmp_path):
    runner = FakeRunner(tmp_path)
    done, outputs = runner.run_step("evaluate", {"stdio": REFERENCE_STDIO, "server-env": "PYTHONPATH", "runs": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert outputs["exit-code"] == "0" and outputs["report"] == "evalcore-reports/conformance.json"
    suite = ET.parse(runner.workspace / outputs["junit"]).getroot()
    assert suite.tag == "testsuite" and int(suite.get("tests", "0")) > 20 and suite.get("failures") == "0"

    summary, summary_outputs = runner.run_step("summary", {}, {"evaluate": outputs})
    assert summary.returncode == 0, summary.stderr
    text = runner.summary.read_text(encoding="utf-8")
    assert "✅ **CONFORMANT**" in text and "| check | level | passes | verdict | reason |" in text
    assert summary_outputs == {"verdict": "conformant", "passed": "true"}

    exit_step, _ = runner.run_step("Exit with evalcore's exit code", {}, {"evaluate": outputs})
    assert exit_step.returncode == 0


def test_a_defective_server_fails_the_action_with_the_failing_check_on_top(tmp_path):
    runner = FakeRunner(tmp_path)
    done, outputs = runner.run_step("evaluate", {"stdio": f"{REFERENCE_STDIO} --defect no_result_type", "server-env": "PYTHONPATH", "runs": "1"})
    assert done.returncode == 0  # the step records the code; the last step exits with it
    assert outputs["exit-code"] == "1"
    _, summary_outputs = runner.run_step("summary", {}, {"evaluate": outputs})
    text = runner.summary.read_text(encoding="utf-8")
    assert "❌ **NOT CONFORMANT**" in text and summary_outputs["passed"] == "false"
    first_row = next(line for line in text.splitlines() if line.startswith("| `"))
    assert "result_type.present" in first_row and "❌ FAIL" in first_row
    exit_step, _ = runner.run_step("Exit with evalcore's exit code", {}, {"evaluate": outputs})
    assert exit_step.returncode == 1


def test_the_action_refuses_both_or_neither_target(tmp_path):
    runner = FakeRunner(tmp_path)
    for inputs in ({}, {"url": "http://127.0.0.1:9/mcp", "stdio": REFERENCE_STDIO}):
        done, outputs = runner.run_step("evaluate", inputs)
        assert done.returncode == 2 and "give exactly one of the inputs url and stdio" in done.stdout and "exit-code" not in outputs


# --- behaviour through the action's scripts -------------------------------------------------------


def test_behaviour_step_writes_the_comment_against_the_last_green_run(tmp_path):
    event = {"pull_request": {"number": 42, "head": {"sha": "feedc0ffee0123456789"}}}
    runner = FakeRunner(tmp_path, event)
    inputs = {"mode": "behaviour", "stdio": REFERENCE_STDIO, "server-env": "PYTHONPATH", "runs": "1"}
    first, first_outputs = runner.run_step("evaluate", inputs)
    # sim/lexical misses case gates: the first run is no baseline by itself, and says so with exit 1
    assert first.returncode == 0 and first_outputs["exit-code"] == "1", first.stdout + first.stderr
    first_run = json.loads((runner.workspace / first_outputs["report"]).read_text())["runId"]
    assert main(["baseline", "accept", first_run, "--db", str(runner.workspace / ".evalcore" / "evals.duckdb")]) == 0
    second, outputs = runner.run_step("evaluate", inputs)
    assert outputs["exit-code"] == "0", second.stdout + second.stderr
    assert (runner.workspace / ".evalcore" / "evals.duckdb").is_file()  # where the cache steps save and restore it

    summary, summary_outputs = runner.run_step("summary", inputs, {"evaluate": outputs})
    assert summary.returncode == 0, summary.stderr
    comment = (runner.workspace / summary_outputs["comment"]).read_text(encoding="utf-8")
    assert f"✅ **PASS**: no gated metric dropped more than 0.02 below green run {first_run}" in comment
    assert "at feedc0ffee01" in comment  # the pull request's head, not the merge commit
    assert "| sim/lexical | pass_rate |" in comment and "| ±0 |" in comment
    assert summary_outputs["pull-request"] == "42" and summary_outputs["passed"] == "true"
    assert runner.summary.read_text(encoding="utf-8") == comment + "\n"


# --- renderers and the runner's files ----------------------------------------------------------------

HOSTILE = "evil | <img src=x onerror=alert(1)> `code` [link](http://x)\n| forged | row |"


def _conformance_report(detail: str, verdict: str = "fail") -> dict[str, Any]:
    check = {"id": "result_type.present", "level": "MUST", "passes": 0, "runs": 5, "verdict": verdict, "detail": detail}
    passing = {**check, "id": "discover.responds", "passes": 5, "verdict": "pass", "detail": "ok"}
    return {"target": "http://127.0.0.1:1/mcp", "protocolVersion": "2026-07-28", "era": "modern-only", "runs": 5, "passed": False, "checks": [passing, check]}


def test_server_text_renders_as_text_and_cannot_break_the_table():
    text = conformance_summary(_conformance_report(HOSTILE))
    row = next(line for line in text.splitlines() if "result_type.present" in line)
    assert "<img" not in text and "&lt;img" in row and "\\[link\\]" in row
    assert row.count("|") - row.count("\\|") == 6  # five cells: the server's pipes are escaped
    assert "forged" in row  # its newline folded into the one cell


def test_failures_come_first_and_passes_fold_away():
    text = conformance_summary(_conformance_report("no resultType"))
    assert text.index("result_type.present") < text.index("<details>") < text.index("discover.responds")
    assert "❌ **NOT CONFORMANT**: 1 passed, 1 failed" in text


def _behaviour(passed: bool, pass_rate: float, **extra: Any) -> dict[str, Any]:
    metrics = {"pass_rate": pass_rate, "over_call_rate": 0.1, "task_completion": None}
    return {
        "kind": "behaviour",
        "runId": "r2",
        "runs": 5,
        "passed": passed,
        "golden": {"path": "golden/tasks.yaml"},
        "models": [{"model": "m", "metrics": metrics}],
        **extra,
    }


def test_behaviour_comment_shows_the_reports_verdict_never_a_better_one():
    baseline = _behaviour(True, 0.9, runId="r1")
    regression = {"model": "m", "metric": "pass_rate", "baseline": 0.9, "current": 0.6, "cases": ["a|b"]}
    gate = {"status": "fail", "passed": False, "reason": "1 regression(s) against green run r1, e.g. m: pass_rate 0.900 -> 0.600"}
    failed = _behaviour(False, 0.6, baseline="r1", gate=gate, regressions=[regression])
    text = behaviour_comment(failed, baseline)
    assert "❌ **FAIL**: 1 regression(s) against green run r1" in text and "pass_rate 90.0% → 60.0%" in text and "`a\\|b`" in text
    assert "| m | pass_rate | 90.0% | 60.0% | -30.0 pts (worse) |" in text and "PASS" not in text
    reason = "not a baseline: m: 3 of 140 attempts errored"
    incomplete = _behaviour(False, 0.9, baseline="r1", gate={"status": "incomplete", "passed": False, "reason": reason})
    assert "❌ **INCOMPLETE**: not a baseline" in behaviour_comment(incomplete, baseline)
    assert "✅" not in behaviour_comment(incomplete, baseline)
    red_first = _behaviour(False, 0.2, gate={"status": "no_baseline", "passed": False, "reason": "no baseline yet, and this run cannot be one"})
    assert "❌ **NO BASELINE**" in behaviour_comment(red_first, None) and "✅" not in behaviour_comment(red_first, None)
    green = {"status": "no_baseline", "passed": True, "reason": "no baseline yet: every case gate is met, so this run becomes the baseline"}
    first = behaviour_comment(_behaviour(True, 0.9, baseline=None, gate=green), None)
    assert "this run becomes the baseline" in first and "| m | pass_rate | — | 90.0% | — |" in first


def test_outputs_cannot_be_forged_by_a_value(tmp_path):
    runner = Runner(None, tmp_path / "out", None, None)
    runner.set_outputs({"run-id": "r1\npassed=true", "passed": "false"})
    assert read_outputs(tmp_path / "out") == {"run-id": "r1\npassed=true", "passed": "false"}


def test_outside_a_runner_the_summary_is_printed(tmp_path, capsys):
    runner = Runner.from_environment({})
    runner.write_summary("# hi\n", sys.stdout)
    runner.set_outputs({"passed": "true"})
    assert capsys.readouterr().out == "# hi\n" and runner.revision() is None and runner.pull_request() is None


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--conformance", "missing.json"], "missing.json: cannot read the report"),
        (["--behaviour", "conformance.json"], "not a behaviour report"),
        (["--conformance", "behaviour.json"], "not a conformance report"),
        (["--conformance", "conformance.json", "--comment", "c.md"], "--comment goes with --behaviour"),
    ],
)
def test_ci_summary_refuses_bad_input_in_one_line(tmp_path, arguments, message):
    (tmp_path / "conformance.json").write_text(json.dumps(_conformance_report("x")), encoding="utf-8")
    (tmp_path / "behaviour.json").write_text(json.dumps(_behaviour(True, 1.0)), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GITHUB_STEP_SUMMARY", None)
    done = subprocess.run(
        [sys.executable, "-m", "evalcore", "ci-summary", *arguments],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_untested_must_checks_are_listed_with_the_warnings_not_folded_away():
    report = _conformance_report("no resultType")
    untested = {"id": "tasks.cancel", "level": "MUST", "passes": 0, "runs": 0, "verdict": "not_testable", "detail": "no task to cancel"}
    untested_should = {**untested, "id": "tasks.list", "level": "SHOULD"}
    report["checks"] += [untested, untested_should]
    text = conformance_summary(report)
    assert text.index("result_type.present") < text.index("tasks.cancel") < text.index("<details>") < text.index("tasks.list")


def test_a_gate_reason_keeps_its_commands_as_code_and_escapes_the_rest():
    reason = "no baseline yet; `evalcore baseline accept RUN_ID` makes a run the baseline by hand <b>"
    text = behaviour_comment(_behaviour(False, 0.2, gate={"status": "no_baseline", "passed": False, "reason": reason}), None)
    assert "`evalcore baseline accept RUN_ID` makes a run" in text and "\\`" not in text and "RUN\\_ID" not in text and "&lt;b&gt;" in text


def test_annotations_are_one_escaped_command_each_and_only_on_a_runner(capsys):
    from evalcore.ci.annotations import conformance_annotations
    from evalcore.ci.github import workflow_command

    report = _conformance_report("line one\nline two %0A ::error::forged")
    annotations = conformance_annotations(report)
    assert [a.title for a in annotations] == [None, "result_type.present"]
    assert annotations[0].message.startswith("evalcore: NOT CONFORMANT to 2026-07-28: 1 failed, 0 errors")
    line = workflow_command("error", annotations[1].message, title="a,b:c")
    assert line.count("\n") == 0 and line.startswith("::error title=a%2Cb%3Ac::MUST fail: line one line two %250A")
    assert conformance_annotations({**report, "passed": True}) == []
    strict = {**report, "passed": True, "passedStrict": False, "checks": [{**report["checks"][1], "verdict": "warn", "level": "SHOULD"}]}
    assert conformance_annotations(strict) == [] and len(conformance_annotations(strict, strict=True)) == 2
    Runner.from_environment({}).annotate(sys.stdout, "x")
    Runner.from_environment({"GITHUB_ACTIONS": "true"}).annotate(sys.stdout, "y", title="t")
    assert capsys.readouterr().out == "::error title=t::y\n"
