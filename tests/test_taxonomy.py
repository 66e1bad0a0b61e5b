"""The error taxonomy (evalcore.taxonomy): loops, errors and outages never make an attempt, a case, a model or a gate read
better. Whole runs against the reference server with scripted sim models, and the scorers on hand-built attempts."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import duckdb

from evalcore.cli import main
from evalcore.dashboard import queries
from evalcore.dashboard.queries import AttemptFilters
from evalcore.golden.conversation import InputExpectation, InputPattern
from evalcore.golden.model import GoldenCase
from evalcore.models.types import ToolCall
from evalcore.records import InputAnswer, InputRequest, InputRound, ToolExecution
from evalcore.scoring.attempt import score_attempt
from evalcore.store.behaviour import list_runs, load_attempts
from evalcore.users.profile import UserProfile

GOLDEN = """\
cases:
  - id: weather-paris
    prompt: "What's the weather in Paris?"
    expect_tool: get_weather
    expect_args: {city: Paris}
    kind: hard
    rubric: "States the weather in Paris."
  - id: say-hello
    prompt: "Hi there!"
    expect_tool: null
"""

# weather-paris: get_weather nine times, never an answer (the step limit is 8 turns); say-hello: answers at once.
LOOPING = """\
cases:
  weather-paris:
    calls: [{name: get_weather, args: {city: Paris}}, {name: get_weather, args: {city: Paris}}, {name: get_weather, args: {city: Paris}},
            {name: get_weather, args: {city: Paris}}, {name: get_weather, args: {city: Paris}}, {name: get_weather, args: {city: Paris}},
            {name: get_weather, args: {city: Paris}}, {name: get_weather, args: {city: Paris}}, {name: get_weather, args: {city: Paris}}]
    text: "Cloudy."
  say-hello:
    no_call: true
    text: "Hello!"
"""

# weather-paris: the provider refuses every attempt; say-hello fails (calls a tool) on every attempt.
OUTAGE = """\
cases:
  weather-paris:
    error: {status: 401, message: invalid api key}
  say-hello:
    calls: [{name: get_weather, args: {city: Paris}}]
    text: "It is cloudy."
"""

GOOD = """\
cases:
  weather-paris:
    calls: [{name: get_weather, args: {city: Paris}}]
    text: "Cloudy in Paris."
  say-hello:
    no_call: true
    text: "Hello!"
"""

# A judge that is down for weather-paris (its call fails at once, as a revoked key does).
JUDGE_DOWN = """\
cases:
  weather-paris:
    error: {status: 401, message: judge key revoked}
"""


def _run(tmp_path: Path, url: str, script: str, *extra: str, runs: int = 5) -> tuple[int, dict]:
    (tmp_path / "tasks.yaml").write_text(GOLDEN)
    model = tmp_path / f"model-{abs(hash(script))}.yaml"
    model.write_text(script)
    code = main(
        [
            "run", "--golden", str(tmp_path / "tasks.yaml"), "--models", f"sim/script:{model}", "--url", url,
            "--db", str(tmp_path / "evals.duckdb"), "--out", str(tmp_path / "report.json"), "--runs", str(runs), *extra,
        ]
    )  # fmt: skip
    return code, json.loads((tmp_path / "report.json").read_text())


def test_an_agent_that_loops_to_the_step_limit_fails_even_with_a_judge(tmp_path, reference_url, capsys):
    code, report = _run(tmp_path, reference_url, LOOPING, "--judge", "sim/judge")
    (model,) = report["models"]
    weather = next(case for case in model["cases"] if case["id"] == "weather-paris")
    assert (weather["passes"], weather["runs"], weather["gate_passed"]) == (0, 5, False)
    reasons = {entry["reason"] for entry in weather["failing_reasons"]}
    assert "step limit reached after 8 model turns without a final answer" in reasons
    assert "judge: no final answer to judge" in reasons
    assert weather["scores"]["final_answer_rate"] == 0.0 and weather["scores"]["task_completion"] == 0.0
    assert code == 1 and report["passed"] is False and report["gate"]["status"] == "no_baseline"
    assert "run gate: NO BASELINE" in capsys.readouterr().out


def test_a_case_that_errored_on_every_attempt_never_raises_the_model_or_passes_a_gate(tmp_path, reference_url):
    code, report = _run(tmp_path, reference_url, OUTAGE)
    (model,) = report["models"]
    weather = next(case for case in model["cases"] if case["id"] == "weather-paris")
    assert (weather["attempts"], weather["errored"], weather["runs"], weather["pass_rate"]) == (5, 5, 0, None)
    assert weather["gate_passed"] is False
    # say-hello failed every attempt; leaving weather-paris out would read 0/5, but a pass rate over half the set is no figure
    assert model["metrics"]["unscored_cases"] == 1.0 and model["metrics"]["pass_rate"] is None
    assert report["metrics"]["pass_rate"] is None
    assert code == 1 and report["gate"]["status"] == "incomplete" and "invalid api key" in report["gate"]["reason"]
    assert report["incomplete"]["errored"] == {model["model"]: 5}
    db = tmp_path / "evals.duckdb"
    # the matrix cell says "5 errored", never "not run"; the summary and the export carry the same null
    cell = next(row for row in queries.matrix(db, AttemptFilters(run_id=report["runId"])).to_dict("records") if row["case_id"] == "weather-paris")
    assert (cell["errored"], cell["attempts"], cell["runs"]) == (5, 5, 0)
    (summary,) = queries.model_summary(db, AttemptFilters(run_id=report["runId"])).to_dict("records")
    assert summary["pass_rate"] is None or summary["pass_rate"] != summary["pass_rate"]  # None or NaN in the frame
    exported = csv.DictReader(io.StringIO(queries.metrics_export(db, AttemptFilters(run_id=report["runId"]), "csv").decode()))
    values = {(row["scope"], row["case_id"], row["metric"]): row["value"] for row in exported}
    assert values[("model", "", "pass_rate")] == "" and values[("run", "", "pass_rate")] == "" and values[("model", "", "errored")] == "5.0"
    # the errored attempts kept the time their failing calls took (their latency counts)
    stored = [row for row in load_attempts(db, report["runId"]) if row["case_id"] == "weather-paris"]
    assert all(row["error_kind"] == "provider" and row["latency_ms"] is not None for row in stored)


def test_a_resume_reruns_exactly_the_errored_attempts(tmp_path, reference_url):
    code, report = _run(tmp_path, reference_url, OUTAGE, runs=2)
    assert code == 1
    db = tmp_path / "evals.duckdb"
    before = {(r["case_id"], r["attempt"]): r["recorded_at"] for r in load_attempts(db, report["runId"])}
    (tmp_path / f"model-{abs(hash(OUTAGE))}.yaml").write_text(GOOD)  # the provider is back
    resume = ["run", "--resume", report["runId"], "--golden", str(tmp_path / "tasks.yaml"), "--url", reference_url, "--db", str(db)]
    code = main([*resume, "--out", str(tmp_path / "report.json")])
    resumed = json.loads((tmp_path / "report.json").read_text())
    after = {(r["case_id"], r["attempt"]): r for r in load_attempts(db, report["runId"])}
    assert len(after) == 4 and all(row["error_kind"] is None for row in after.values())
    assert after[("say-hello", 1)]["recorded_at"] == before[("say-hello", 1)]  # scored attempts were kept, not rerun
    assert resumed["incomplete"] is None and resumed["gate"]["status"] == "no_baseline"
    # each attempt's scores once: an errored attempt's went with it (no key of the store's keeps them unique)
    with duckdb.connect(str(db), read_only=True) as connection:
        scores = connection.execute("SELECT case_id, attempt, scorer, count(*) FROM attempt_scores WHERE run_id = ? GROUP BY ALL", [report["runId"]]).fetchall()
    assert scores and all(count == 1 for *_, count in scores)
    assert {(case_id, attempt) for case_id, attempt, *_ in scores} == set(after)


def test_a_judge_outage_errors_the_attempt_instead_of_passing_it_without_its_rubric(tmp_path, reference_url):
    (tmp_path / "judge.yaml").write_text(JUDGE_DOWN)
    code, report = _run(tmp_path, reference_url, GOOD, "--judge", f"sim/script:{tmp_path / 'judge.yaml'}", runs=2)
    (model,) = report["models"]
    weather = next(case for case in model["cases"] if case["id"] == "weather-paris")
    assert (weather["passes"], weather["errored"], weather["gate_passed"]) == (0, 2, False)
    assert code == 1 and report["gate"]["status"] == "incomplete" and "judge error" in report["gate"]["reason"]
    stored = [row for row in load_attempts(tmp_path / "evals.duckdb", report["runId"]) if row["case_id"] == "weather-paris"]
    assert {row["error_kind"] for row in stored} == {"judge"} and not any(row["passed"] for row in stored)


def test_a_first_run_where_every_case_fails_is_not_a_baseline(tmp_path, reference_url):
    wrong = OUTAGE.replace("    error: {status: 401, message: invalid api key}", "    calls: [{name: get_weather, args: {city: Lyon}}]\n    text: x")
    code, report = _run(tmp_path, reference_url, wrong, runs=1)
    assert report["metrics"]["pass_rate"] == 0.0
    assert code == 1 and report["gate"]["green"] is False and "this run cannot be one" in report["gate"]["reason"]
    (run,) = list_runs(tmp_path / "evals.duckdb")
    assert run["passed"] is False
    # a later good run has no baseline to compare with either, and becomes the baseline itself
    code, second = _run(tmp_path, reference_url, GOOD, runs=1)
    assert code == 0 and second["baseline"] is None and second["gate"]["green"] is True


# --- scorers on hand-built attempts ---------------------------------------------------------------


def test_a_server_error_fails_execution_on_every_kind_of_case_and_names_the_server():
    refused_retry = ToolExecution(ToolCall("c1", "update_ticket_status", {"ticket_id": "T"}), None, "-32603: retry refused", True, 3.0, (1, 2), "-32603")
    case = GoldenCase("c", "p", "update_ticket_status", expect_input_requests=InputExpectation(must=(InputPattern("elicitation"),)))
    score = score_attempt(case, [refused_retry.call], executions=[refused_retry], final_text="Could not update.", stop_reason="final", model_turns=2)
    execution = score.get("execution")
    assert execution is not None and execution.value == 0.0 and not score.passed
    assert "server error on 1 call; first: update_ticket_status: -32603: retry refused" in (execution.reason or "")
    # a tool's own error result and a refusal of invalid arguments are not the server's failure
    tool_error = ToolExecution(refused_retry.call, {"isError": True}, None, True, 1.0, (1,), "tool_error")
    assert score_attempt(case, [tool_error.call], executions=[tool_error], final_text="x", stop_reason="final").verdict("execution") is None


def test_a_yes_no_confirmation_the_user_submitted_is_not_scored_as_information():
    ask = InputRequest("k", "elicitation/create", {"message": "Close it?", "requestedSchema": {}})
    answer = InputAnswer({"action": "accept", "content": {"confirm": True, "email": "kim@acme.example"}}, "user", "sim/user")
    execution = ToolExecution(
        ToolCall("c1", "close", {}), {"content": []}, None, False, 1.0, (1,), None, rounds=(InputRound((1,), (ask,), {"k": answer}, None),)
    )
    case = GoldenCase("c", "p", "close", user=UserProfile(goal="g", facts={"confirm": "yes", "email": "kim@acme.example"}))
    score = score_attempt(case, [execution.call], executions=[execution], final_text="Closed.", stop_reason="final", model_turns=2)
    asked = score.get("mrtr.asked_info_correct")
    assert asked is not None and asked.value == 1.0 and asked.reasons == ()


def test_the_flaky_page_counts_what_the_matrix_and_the_report_count(tmp_path, reference_url):
    one_error = GOOD.replace(
        '    text: "Cloudy in Paris."', '    text: "Cloudy in Paris."\n    attempts:\n      3: {error: {status: 401, message: key revoked}}'
    )
    code, report = _run(tmp_path, reference_url, one_error)
    weather = next(case for case in report["models"][0]["cases"] if case["id"] == "weather-paris")
    assert (weather["passes"], weather["runs"], weather["errored"]) == (4, 4, 1)
    db, scope = tmp_path / "evals.duckdb", AttemptFilters(run_id=report["runId"])
    cell = next(row for row in queries.matrix(db, scope).to_dict("records") if row["case_id"] == "weather-paris")
    assert (cell["passes"], cell["runs"], cell["errored"]) == (4, 4, 1)
    assert queries.flaky_cases(db, scope).empty  # 4 of 4 scored passed: nothing disagreed, an outage is no flakiness
    (run,) = queries.pair_runs(db, report["models"][0]["model"], "weather-paris", scope).to_dict("records")
    assert (run["passes"], run["runs"], run["flaky"]) == (4, 4, False)


class _UserModelDown:
    """The model under test answers in text; the simulated user's model fails beyond its retries."""

    async def complete(self, spec, messages, tools, name_map, *, context=None):
        from evalcore.errors import ModelError
        from evalcore.models.types import ModelTurn

        if spec.name == "openai/user-model":
            raise ModelError("openai/user-model: 503 service unavailable (gave up after 3 retries)", retries=3)
        return ModelTurn("Which ticket do you mean?", (), 5.0, raw_message={"role": "assistant", "content": "Which ticket do you mean?"})


def test_a_simulated_user_whose_model_is_down_errors_the_attempt_instead_of_ending_it_early():
    import asyncio

    from evalcore.behaviour.agent import AgentTools, run_agent
    from evalcore.models.types import ModelSpec
    from evalcore.users.simulated import SimulatedUser

    models = _UserModelDown()
    user = SimulatedUser(UserProfile(goal="close my ticket", model="openai/user-model"), models)
    transcript = asyncio.run(
        run_agent(
            prompt="Close my ticket.", system="s", model=ModelSpec("openai/m"), mcp=None, tools=AgentTools.from_mcp([]),  # type: ignore[arg-type]
            context={}, models=models, user=user,
        )
    )  # fmt: skip
    assert transcript.stop_reason == "model_error" and transcript.retries == 3
    assert transcript.error is not None and transcript.error.startswith("simulated user: openai/user-model: 503")


def test_a_resumed_errored_attempt_is_replaced_only_when_its_rerun_is_stored(tmp_path):
    from datetime import date

    import pytest

    from evalcore.errors import StoreError
    from evalcore.records import AttemptRecord, AttemptScore, Score
    from evalcore.store import behaviour as store

    db = tmp_path / "evals.duckdb"
    store.create_run(
        db, run_id="r", run_date=date(2026, 12, 1), golden_path="g.yaml", golden_hash="g", server_target="t", server_name=None,
        server_fingerprint="f", server_tools=[], models=["m"], runs=1, config={},
    )  # fmt: skip
    base = {"model": "m", "case_id": "c", "attempt": 1, "case_hash": "h", "case_kind": "hard", "simulated": True, "model_version": None}
    base |= {"tool_calls": (), "final_text": None, "latency_ms": 1.0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0, "retries": 0}
    # An errored attempt may carry scores (a scorer that ran before the failure): its rerun's replace them, not join them.
    failed_selection = (Score("selection", 0.0, True, ("provider error: 503",)),)
    errored = AttemptRecord(
        score=AttemptScore(failed_selection, False, ("provider error: 503",)),
        stop_reason="model_error",
        error="503",
        transcript_json="{}",
        error_kind="provider",
        **base,
    )  # type: ignore[arg-type]
    scored = AttemptRecord(score=AttemptScore((Score("selection", 1.0, True),), True), stop_reason="final", error=None, transcript_json="{}", **base)  # type: ignore[arg-type]
    store.write_attempts(db, "r", [errored])
    store.reopen_run(db, "r")
    assert store.load_run(db, "r")["effective_status"] == "running"
    assert [r.error_kind for r in store.load_attempt_records(db, "r")] == ["provider"]  # kept until its rerun lands
    store.write_attempts(db, "r", [scored], replacing_errored=True)
    assert [(r.error_kind, r.score.passed) for r in store.load_attempt_records(db, "r")] == [(None, True)]
    with duckdb.connect(str(db), read_only=True) as connection:
        assert connection.execute("SELECT scorer, value FROM attempt_scores WHERE run_id = 'r'").fetchall() == [("selection", 1.0)]
    with pytest.raises(StoreError):  # a scored attempt is never replaced
        store.write_attempts(db, "r", [errored], replacing_errored=True)
    assert [(r.error_kind, r.score.passed) for r in store.load_attempt_records(db, "r")] == [(None, True)]
