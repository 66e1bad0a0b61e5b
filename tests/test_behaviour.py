"""Layer 1 end to end: golden set -> models (through litellm) -> the real reference server -> scores -> DuckDB.

Scripted `sim/script` models give known behaviour per case and attempt, so the
numbers the runner reports can be checked exactly.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.cli import main
from evalcore.store.behaviour import list_runs, load_attempts
from evalcore.store.db import connect
from tests.builders import GOLDEN, STEADY
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[1]

# The builders' steady script under its own version label: weather-paris 4/5, say-hello 5/5, customer-then-ticket 4/5.
SCRIPT = STEADY.replace("model_version: steady-v1", "model_version: script-v1")


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / "tasks.yaml").write_text(GOLDEN)
    (tmp_path / "script.yaml").write_text(SCRIPT)
    return tmp_path


def _run(workspace: Path, reference_url: str, *extra: str) -> int:
    return main(
        [
            "run",
            "--golden",
            str(workspace / "tasks.yaml"),
            "--models",
            f"sim/script:{workspace / 'script.yaml'}",
            "--url",
            reference_url,
            "--db",
            str(workspace / "evals.duckdb"),
            "--out",
            str(workspace / "report.json"),
            *extra,
        ]
    )


def test_scripted_run_scores_each_case_and_attempt_exactly(workspace, reference_url, capsys):
    assert _run(workspace, reference_url) == 1  # no baseline yet, and a hard case below its gate: not green
    report = json.loads((workspace / "report.json").read_text())
    (model,) = report["models"]
    assert model["simulated"] is True and [v.split()[-1] for v in model["modelVersions"]] == ["script-v1"]
    cases = {c["id"]: c for c in model["cases"]}
    assert (cases["weather-paris"]["passes"], cases["weather-paris"]["gate_passed"]) == (4, False)  # hard: 4/5 fails
    assert cases["say-hello"]["passes"] == 5
    assert (cases["customer-then-ticket"]["passes"], cases["customer-then-ticket"]["gate_passed"]) == (4, True)  # soft: 4/5 holds
    assert cases["customer-then-ticket"]["pass_hat_k"] == 0.0 and cases["customer-then-ticket"]["pass_at_1"] == pytest.approx(0.8)
    metrics = model["metrics"]
    assert metrics["selection_accuracy"] == 1.0
    assert metrics["argument_accuracy"] == pytest.approx(9 / 10)  # judged where selection was right on positive cases
    assert metrics["sequence_accuracy"] == pytest.approx(0.8)
    assert metrics["over_call_rate"] == 0.0
    assert report["caseGates"]["failing"] == [{"model": model["model"], "case": "weather-paris", "kind": "hard", "passes": 4, "runs": 5, "errored": 0}]
    # A first run is the baseline only when it is green: here a hard case missed its gate, so it is not, and does not pass.
    assert report["passed"] is False and report["baseline"] is None
    assert (report["gate"]["status"], report["gate"]["green"]) == ("no_baseline", False)
    out = capsys.readouterr().out
    assert "weather-paris" in out and "(simulated)" in out
    assert "run gate: NO BASELINE: no baseline yet, and this run cannot be one: 1 case gate(s) not met" in out and "baseline accept" in out

    rows = load_attempts(workspace / "evals.duckdb", report["runId"])
    assert len(rows) == 15
    weather = next(r for r in rows if r["case_id"] == "weather-paris" and r["attempt"] == 3)
    assert weather["args_correct"] is False and "Lyon" in weather["reasons_json"]
    transcript = json.loads(weather["transcript_json"])
    execution = transcript["executions"][0]
    # the real server answered: it has no weather for Lyon, and says so as a tool error the model saw
    assert execution["tool"] == "get_weather" and execution["is_error"] is True and "Lyon" in json.dumps(execution["result"])
    good = json.loads(next(r for r in rows if r["case_id"] == "weather-paris" and r["attempt"] == 1)["transcript_json"])
    assert good["executions"][0]["result"]["structuredContent"]["city"] == "Paris"


def test_second_run_is_gated_against_the_first(workspace, reference_url):
    assert _run(workspace, reference_url) == 1
    first = json.loads((workspace / "report.json").read_text())
    assert main(["baseline", "accept", first["runId"], "--db", str(workspace / "evals.duckdb")]) == 0  # accepted by hand
    worse = SCRIPT.replace("3: {calls: [{name: get_weather, args: {city: Lyon}}]}", "2: {no_call: true}\n      3: {no_call: true}")
    (workspace / "script.yaml").write_text(worse)
    assert _run(workspace, reference_url) == 1
    second = json.loads((workspace / "report.json").read_text())
    assert second["baseline"] == first["runId"] and second["passed"] is False
    regression = next(r for r in second["regressions"] if r["metric"] == "selection_accuracy")
    assert regression["cases"] == ["weather-paris"]
    # the red run does not become the baseline: the next run still compares with the first
    (workspace / "script.yaml").write_text(SCRIPT)
    assert _run(workspace, reference_url) == 0
    third = json.loads((workspace / "report.json").read_text())
    assert third["baseline"] == first["runId"] and third["gate"]["green"] is False  # it passed, but a case gate is unmet


def test_cache_reuses_stored_attempts_of_unchanged_cases(workspace, reference_url):
    assert _run(workspace, reference_url) == 1  # not green (a hard case misses its gate), so no baseline for the next
    first = json.loads((workspace / "report.json").read_text())["runId"]
    assert _run(workspace, reference_url, "--cache") == 1
    second = json.loads((workspace / "report.json").read_text())["runId"]
    rows = load_attempts(workspace / "evals.duckdb", second)
    assert len(rows) == 15 and {r["cached_from"] for r in rows} == {first}
    # attempt numbers stay distinct samples: attempt 3 reused attempt 3
    assert next(r for r in rows if r["case_id"] == "weather-paris" and r["attempt"] == 3)["args_correct"] is False


def test_broken_golden_file_exits_2_and_stores_nothing(workspace, reference_url, capsys):
    (workspace / "tasks.yaml").write_text(GOLDEN.replace("expect_tool: get_weather", "expect_tool: get_wether"))
    assert _run(workspace, reference_url) == 2
    err = capsys.readouterr().err
    assert "tasks.yaml:4: " in err and 'unknown tool "get_wether"' in err
    assert list_runs(workspace / "evals.duckdb") == []


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--models", " , "], "--models names no model"),
        (["--models", "sim/nonsense"], "sim/nonsense"),
        (["--resume", "no-such-run"], "no behaviour run 'no-such-run'"),
        (["--date", "yesterday"], "--date must be YYYY-MM-DD"),
    ],
)
def test_bad_run_arguments_exit_2(workspace, reference_url, extra, message, capsys):
    assert _run(workspace, reference_url, *extra) == 2
    assert message in capsys.readouterr().err


def test_no_secret_ever_persists(workspace, reference_url, monkeypatch, capsys):
    planted = "sk-PLANTED-secret-4242424242"
    monkeypatch.setenv("OPENAI_API_KEY", planted)
    # An endpoint that refuses the call and echoes the credentials it was sent, as some proxies do.
    from tests.echo_auth_server import echo_auth_server

    seen: list[str] = []
    with echo_auth_server(seen) as api_base:
        code = main(
            [
                "run",
                "--golden",
                str(workspace / "tasks.yaml"),
                "--models",
                f"sim/script:{workspace / 'script.yaml'},openai/gpt-4o-mini",
                "--api-base",
                api_base,
                "--url",
                reference_url,
                "--db",
                str(workspace / "evals.duckdb"),
                "--out",
                str(workspace / "report.json"),
                "--runs",
                "1",
            ]
        )
    captured = capsys.readouterr()
    assert code == 1  # every gpt-4o-mini attempt errored: the run is incomplete, not green
    assert seen and all(header == f"Bearer {planted}" for header in seen)  # the key really went out
    rows = load_attempts(workspace / "evals.duckdb", json.loads((workspace / "report.json").read_text())["runId"])
    failed = [r for r in rows if r["model"] == "openai/gpt-4o-mini"]
    assert failed and all(r["stop_reason"] == "model_error" for r in failed)  # the call really failed
    for blob in [(workspace / "evals.duckdb").read_bytes(), (workspace / "report.json").read_bytes(), captured.out.encode(), captured.err.encode()]:
        assert planted.encode() not in blob


def _stored_attempts(db: Path) -> int:
    """Attempts in the store, read while another process writes it (a reader waits out the writer's batches)."""
    if not db.exists():
        return 0
    with connect(db, read_only=True) as connection:
        (count,) = connection.execute("SELECT count(*) FROM behaviour_attempts").fetchone()  # type: ignore[misc]
    return int(count)


def test_kill_9_loses_no_acknowledged_attempt_and_resume_finishes(workspace, reference_url):
    """Killed mid-run, the run keeps exactly the attempts it stored; a resume runs the rest.

    The kill cannot come too late on a busy machine: with one attempt at a time, weather-paris's 4th attempt waits on
    its model (a latency beyond the call's timeout, retried), so exactly attempts 1-3 are stored until the kill.
    """
    stuck = SCRIPT.replace("    attempts:\n      3:", "    attempts:\n      4: {latency_ms: 3600000}\n      3:", 1)
    assert stuck != SCRIPT
    (workspace / "script.yaml").write_text(stuck)
    db = workspace / "evals.duckdb"
    command = [
        sys.executable, "-m", "evalcore", "run", "--golden", str(workspace / "tasks.yaml"),
        "--models", f"sim/script:{workspace / 'script.yaml'}", "--url", reference_url, "--db", str(db),
        "--concurrency", "1", "--runs", "5",
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: _stored_attempts(db) >= 3, what="the run storing 3 attempts")  # no event announces stored rows
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(120)
    (run,) = list_runs(db)
    assert run["effective_status"] == "crashed" and run["attempts"] == 3
    kept = {(r["case_id"], r["attempt"]) for r in load_attempts(db, run["run_id"])}
    assert kept == {("weather-paris", 1), ("weather-paris", 2), ("weather-paris", 3)}

    (workspace / "script.yaml").write_text(SCRIPT)  # the model answers again; the golden set and server are unchanged
    done = subprocess.run([*command, "--resume", run["run_id"], "--out", str(workspace / "report.json")], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "run gate: NO BASELINE" in done.stdout, done.stderr  # finished; a hard case misses its gate
    rows = load_attempts(db, run["run_id"])
    assert len(rows) == 15 and len({(r["case_id"], r["attempt"]) for r in rows}) == 15
    assert kept <= {(r["case_id"], r["attempt"]) for r in rows}
    (finished,) = list_runs(db)
    assert finished["effective_status"] == "complete"
    assert main(["run", "--resume", run["run_id"], "--db", str(db), "--url", reference_url, "--golden", str(workspace / "tasks.yaml")]) == 2


def test_gate_command_on_synthetic_reports(tmp_path, capsys):
    def report(run_id: str, args: float, case_rate: float) -> dict:
        return {
            "kind": "behaviour", "runId": run_id, "startedAt": "2026-11-01T00:00:00+00:00", "passed": True, "runs": 5,
            "golden": {"path": "golden/tasks.yaml"},
            "models": [{"model": "m", "simulated": False,
                        "metrics": {"selection_accuracy": 0.9, "argument_accuracy": args, "sequence_accuracy": 0.5,
                                    "over_call_rate": 0.1, "task_completion": None, "pass_rate": 0.7},
                        "cases": [{"id": "weather-paris", "kind": "hard", "passes": 5, "runs": 5, "pass_rate": case_rate, "gate_passed": True},
                                  {"id": "kb-refund", "kind": "soft", "passes": 5, "runs": 5, "pass_rate": 1.0, "gate_passed": True}]}],
        }  # fmt: skip

    (tmp_path / "base.json").write_text(json.dumps(report("base", 0.80, 1.0)))
    (tmp_path / "small.json").write_text(json.dumps(report("small", 0.79, 1.0)))
    (tmp_path / "big.json").write_text(json.dumps(report("big", 0.70, 0.6)))
    assert main(["gate", "--report", str(tmp_path / "small.json"), "--baseline", str(tmp_path / "base.json")]) == 0
    assert main(["gate", "--report", str(tmp_path / "big.json"), "--baseline", str(tmp_path / "base.json"), "--max-drop", "0.02"]) == 1
    out = capsys.readouterr().out
    assert "argument_accuracy" in out and "weather-paris" in out and "kb-refund" not in out.split("argument_accuracy", 1)[1].split("\n")[0]
    assert main(["gate", "--report", str(tmp_path / "missing.json")]) == 2
