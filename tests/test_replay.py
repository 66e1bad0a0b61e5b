"""Record and replay (evalcore.mcp.recording, `run --replay-run`, `replay-calls`): a run's MCP exchanges are stored in
full; a replay serves them to another model with no server, and errors a call the recording lacks; `replay-calls`
sends the recorded calls to a server again and diffs the answers. Real runs of scripted sim models against the
reference server, over HTTP and stdio."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evalcore.behaviour.history import run_points
from evalcore.behaviour.replay_calls import compare_call, compare_catalogs, json_differences, recorded_catalog
from evalcore.behaviour.report import render_summary
from evalcore.ci.markdown import behaviour_comment
from evalcore.cli import main
from evalcore.records import Incomplete, RecordedExchange
from evalcore.scoring.gate import decide
from evalcore.store.behaviour import load_attempts, load_run
from evalcore.store.exchanges import exchanges_export, load_exchanges, write_exchanges
from tests.builders import GOLDEN

TICKET = "{name: create_support_ticket, args: {customer_id: CUST-1001, subject: Invoice download broken, description: The PDF download fails.}}"
# The recorded model: Paris, then the customer and a ticket for them.
RECORDED = f"""\
defaults: {{latency_ms: 0}}
cases:
  weather-paris:
    calls: [{{name: get_weather, args: {{city: Paris}}}}]
    text: "Cloudy in Paris."
  say-hello:
    no_call: true
    text: "Hello!"
  customer-then-ticket:
    calls: [{{name: get_customer, args: {{customer_id: CUST-1001}}}}, {TICKET}]
    text: "Opened a ticket."
"""
# Another model: the same calls, but its second weather attempt asks for Berlin, which the recording lacks.
OTHER = f"""\
defaults: {{latency_ms: 0, model_version: other-v1}}
cases:
  weather-paris:
    calls: [{{name: get_weather, args: {{city: Paris}}}}]
    text: "It is cloudy in Paris."
    attempts:
      2: {{calls: [{{name: get_weather, args: {{city: Berlin}}}}]}}
  say-hello:
    no_call: true
    text: "Hi!"
  customer-then-ticket:
    calls: [{{name: get_customer, args: {{customer_id: CUST-1001}}}}, {TICKET}]
    text: "Done, a ticket is open."
"""
STDIO_SERVER = f"{sys.executable} -m evalcore.demo_server --stdio"


def _run(directory: Path, script: str, name: str, *target: str) -> int:
    model = directory / f"{name}.yaml"
    model.write_text(script)
    return main(
        ["run", "--golden", str(directory / "tasks.yaml"), "--models", f"sim/script:{model}", "--db", str(directory / "evals.duckdb"),
         "--runs", "2", "--run-id", name, *target]
    )  # fmt: skip


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, reference_url):
    """One store holding a run recorded over HTTP, one recorded over stdio, and a replay of the HTTP one by another model."""
    directory = tmp_path_factory.mktemp("replay")
    (directory / "tasks.yaml").write_text(GOLDEN)
    _run(directory, RECORDED, "over-http", "--url", reference_url)
    _run(directory, RECORDED, "over-stdio", "--stdio", STDIO_SERVER)
    _run(directory, OTHER, "replayed", "--replay-run", "over-http")
    return directory, directory / "evals.duckdb"


def _executions(db: Path, run_id: str) -> dict[tuple[str, str], object]:
    """Each (tool, canonical arguments) a run's attempts executed, and the result the model was served."""
    served = {}
    for attempt in load_attempts(db, run_id):
        for execution in json.loads(attempt["transcript_json"])["executions"]:
            served[(execution["tool"], json.dumps(execution["arguments"], sort_keys=True))] = execution["result"]
    return served


@pytest.mark.parametrize("run_id", ["over-http", "over-stdio"])
def test_a_run_records_the_catalog_and_every_tool_call_with_its_whole_result(recorded, run_id):
    _, db = recorded
    exchanges = load_exchanges(db, run_id)
    (listing,) = [e for e in exchanges if e.method == "tools/list"]
    assert "get_weather" in {tool["name"] for tool in listing.answer["result"]["tools"]}
    assert all("inputSchema" in tool for tool in listing.answer["result"]["tools"])
    calls = [e for e in exchanges if e.method == "tools/call"]
    assert len(calls) == 2 * 3  # 2 attempts: get_weather; get_customer and create_support_ticket
    assert all(call.conversation and "_meta" not in call.params for call in calls)
    # The stored result is the whole CallToolResult the model was served, not a clipped text.
    served = _executions(db, run_id)
    for call in calls:
        assert served[(call.params["name"], json.dumps(call.params["arguments"], sort_keys=True))] == call.answer["result"]
    assert b"get_weather" in exchanges_export(db, "csv") and exchanges_export(db, "parquet").startswith(b"PAR1")


def test_a_replay_serves_the_recorded_results_to_another_model_and_errors_a_call_not_in_the_recording(recorded):
    _, db = recorded
    replay, original = load_run(db, "replayed"), load_run(db, "over-http")
    assert replay["server_target"] == "replay of run over-http"
    assert replay["server_fingerprint"] == original["server_fingerprint"]  # the recorded catalog, served whole
    recorded_results, replayed_results = _executions(db, "over-http"), _executions(db, "replayed")
    berlin = ("get_weather", json.dumps({"city": "Berlin"}))
    assert replayed_results.pop(berlin) is None
    assert replayed_results == recorded_results  # every call the recording has got exactly the recorded result
    attempts = {(a["case_id"], a["attempt"]): a for a in load_attempts(db, "replayed")}
    missing = attempts[("weather-paris", 2)]
    assert missing["error_kind"] == "replay" and not missing["passed"]
    (reason,) = json.loads(missing["reasons_json"])
    assert "not in recording of run over-http" in reason and '"city":"Berlin"' in reason
    assert attempts[("weather-paris", 1)]["error_kind"] is None and attempts[("weather-paris", 1)]["passed"]
    assert all(a["error_kind"] is None for key, a in attempts.items() if key != ("weather-paris", 2))


def test_an_errored_replay_attempt_is_out_of_the_pass_rate_and_the_run_is_incomplete(recorded):
    _, db = recorded
    assert {point.run_id for point in run_points(db)} == {"over-http", "over-stdio"}  # a replay is an experiment, no night of drift
    report = json.loads(load_run(db, "replayed")["report_json"])
    (model,) = report["models"]
    weather = next(case for case in model["cases"] if case["id"] == "weather-paris")
    assert (weather["passes"], weather["runs"], weather["errored"]) == (1, 1, 1)
    assert report["passed"] is False and report["incomplete"]


def test_a_case_gate_missed_because_an_attempt_errored_never_prints_as_met(recorded):
    _, db = recorded
    report = json.loads(load_run(db, "replayed")["report_json"])
    (entry,) = [entry for entry in report["caseGates"]["failing"] if entry["case"] == "weather-paris"]
    assert (entry["passes"], entry["runs"], entry["errored"]) == (1, 1, 1)  # its one scored attempt passed
    # The matrix cell's wording (docs/metrics.md) wherever the unmet gate is printed: never a bare "1/1".
    (line,) = [line for line in render_summary(report).splitlines() if " weather-paris " in line]
    assert line.endswith(" 1/1 · 1 errored")
    assert "| `weather-paris` | hard | 1/1 · 1 errored |" in behaviour_comment(report, None)
    accepted = Incomplete(dict(report["incomplete"]["errored"]), report["incomplete"]["errorRate"], 1.0, report["incomplete"]["reason"])
    gate = decide(report, None, max_drop=0.02, incomplete=accepted)
    assert not gate.green and "weather-paris 1/1 · 1 errored" in gate.reason


def test_replay_run_usage_errors_are_one_line_and_exit_2(recorded, capsys):
    directory, db = recorded
    golden = str(directory / "tasks.yaml")
    assert main(["run", "--golden", golden, "--db", str(db), "--replay-run", "over-http", "--url", "http://127.0.0.1:1/mcp"]) == 2
    assert main(["run", "--golden", golden, "--db", str(db), "--replay-run", "no-such-run"]) == 2
    assert main(["replay-calls", "no-such-run", "--db", str(db), "--url", "http://127.0.0.1:1/mcp"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3 and "give no --url" in lines[0] and "no behaviour run 'no-such-run'" in lines[1] and "no-such-run" in lines[2]


def test_replay_calls_against_the_same_server_finds_every_answer_identical(recorded, reference_url, capsys):
    directory, db = recorded
    assert main(["replay-calls", "over-http", "--db", str(db), "--url", reference_url, "--json", str(directory / "same.json")]) == 0
    out = capsys.readouterr().out
    assert "tools/list: same" in out and "6 same, 0 changed, 0 errored; tool catalog same" in out
    document = json.loads((directory / "same.json").read_text())
    assert document["identical"] and document["counts"] == {"same": 6, "changed": 0, "errored": 0}
    assert document["catalog"]["verdict"] == "same" and not document["catalog"]["changes"] and document["notSent"] == 0


def test_replay_calls_against_a_changed_server_exits_1_with_the_diff(recorded, capsys):
    directory, db = recorded
    changed = f"{STDIO_SERVER} --defect structured_content_mismatch"
    assert main(["replay-calls", "over-stdio", "--db", str(db), "--stdio", changed, "--json", str(directory / "changed.json")]) == 1
    out = capsys.readouterr().out
    assert 'result.structuredContent.city: "Paris" -> 12345' in out and "0 same, 6 changed, 0 errored" in out
    document = json.loads((directory / "changed.json").read_text())
    assert not document["identical"] and {call["verdict"] for call in document["calls"]} == {"changed"}


@pytest.mark.parametrize(
    ("server_options", "expected"),
    [
        # A vaguer description (the drift demo's v2) and a broken inputSchema on the first tool.
        (
            "--variant v2 --defect invalid_schema",
            {"search_knowledge_base": ["description"], "get_weather": ["inputSchema"]},
        ),
        ("--defect dangling_ref", {"get_weather": ["outputSchema"]}),
        ("--defect bad_tool_name", {"get_weather": "removed", "get weather, now": "added"}),
    ],
    ids=["description-and-input-schema", "output-schema", "renamed"],
)
def test_replay_calls_against_a_server_whose_catalog_changed_exits_1_naming_each_tool(recorded, server_options, expected, capsys):
    directory, db = recorded
    out_json = directory / f"catalog-{len(server_options)}.json"
    command = f"{STDIO_SERVER} {server_options}"
    assert main(["replay-calls", "over-stdio", "--db", str(db), "--stdio", command, "--json", str(out_json)]) == 1
    out = capsys.readouterr().out
    # Every answer is as recorded: only the catalog differs, and that alone is a difference.
    assert "6 same, 0 changed, 0 errored; tool catalog changed: the server's tool catalog differs from the recording" in out
    catalog = json.loads(out_json.read_text())["catalog"]
    changes = {change["name"]: change for change in catalog["changes"]}
    assert set(changes) == set(expected) and catalog["verdict"] == "changed"
    for name, change in expected.items():
        if isinstance(change, str):
            assert changes[name]["change"] == change and f"  {change:<8} {name}\n" in out
        else:
            assert changes[name]["change"] == "changed" and changes[name]["fields"] == change
            assert f"  changed  {name}: {', '.join(change)}\n" in out
            assert all(difference.startswith(change[0]) for difference in changes[name]["differences"])
    if "description" in expected.get("search_knowledge_base", ()):
        assert '-> "Look things up."' in out  # the description as it reads now


@pytest.mark.parametrize(
    "target",
    [["--url", "http://127.0.0.1:1/mcp"], ["--stdio", f"{sys.executable} -c pass"]],
    ids=["http-refused", "stdio-exits"],
)
def test_replay_calls_to_a_server_it_cannot_reach_stops_at_once_with_exit_2(recorded, target, capsys):
    _, db = recorded
    assert main(["replay-calls", "over-http", "--db", str(db), *target]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert line.startswith("error: cannot reach the server ") and captured.out == ""  # no call reported as an answer that differs


def test_replay_calls_stops_where_the_server_goes_away_and_sends_no_further_call(recorded, capsys):
    directory, db = recorded
    command = f"{sys.executable} -m tests.sdk_servers.exits_on_call_app"
    assert main(["replay-calls", "over-stdio", "--db", str(db), "--stdio", command, "--json", str(directory / "gone.json")]) == 1
    out = capsys.readouterr().out
    assert "0 same, 0 changed, 1 errored, 5 not sent" in out
    assert "the server could not be reached from call #" in out and "exited with code 3" in out
    document = json.loads((directory / "gone.json").read_text())
    assert not document["identical"] and document["notSent"] == 5 and [call["verdict"] for call in document["calls"]] == ["errored"]


def test_the_catalog_diff_matches_tools_by_name_on_what_a_model_sees():
    tool = {"name": "t", "description": "d", "inputSchema": {"type": "object"}, "_meta": {"x": 1}}
    assert compare_catalogs([tool, {"name": "u"}], [{"name": "u"}, {**tool, "_meta": {"x": 2}}]).verdict == "same"  # order, _meta aside
    changed = compare_catalogs([tool], [{**tool, "description": "e", "outputSchema": {"type": "object"}}])
    (change,) = changed.changes
    assert (change.change, change.fields) == ("changed", ("description", "outputSchema"))
    assert change.differences == ('description: "d" -> "e"', 'outputSchema: (absent) -> {"type":"object"}')
    long = "Search internal help-desk articles (how-to guides and policies) by keyword, in English."
    (appended,) = compare_catalogs([{"name": "t", "description": long}], [{"name": "t", "description": long + " Never for billing."}]).changes
    assert appended.differences == ('description: …"keyword, in English." -> …"keyword, in English. Never for billing."',)
    paged = [
        RecordedExchange(1, "tools/list", {}, {"result": {"tools": [{"name": "a"}], "nextCursor": "2"}}),
        RecordedExchange(2, "tools/list", {"cursor": "2"}, {"result": {"tools": [{"name": "b"}]}}),
    ]
    assert [t["name"] for t in recorded_catalog(paged) or []] == ["a", "b"]
    assert recorded_catalog([RecordedExchange(1, "tools/call", {}, None, "closed: gone")]) is None


def test_the_diff_is_exact_and_names_each_path_that_differs():
    recorded = RecordedExchange(3, "tools/call", {"name": "t", "arguments": {"a": 1}}, {"result": {"content": [{"text": "x"}], "n": 1}})
    assert compare_call(recorded, {"result": {"n": 1, "content": [{"text": "x"}]}}, None).verdict == "same"  # key order aside
    changed = compare_call(recorded, {"result": {"content": [{"text": "y"}], "n": 1, "extra": True}}, None)
    assert changed.verdict == "changed" and changed.differences == ('result.content[0].text: "x" -> "y"', "result.extra: (absent) -> true")
    errored = compare_call(recorded, None, "timeout: no answer within 30s")
    assert errored.verdict == "errored" and "timeout" in errored.differences[0]
    assert json_differences({"a": [1, 2]}, {"a": [1, 2, 3]}) == ["a: [1,2] -> [1,2,3]"]  # a list that grew is shown whole
    many = json_differences({str(i): i for i in range(9)}, {str(i): -i for i in range(1, 10)}, limit=2)
    assert len(many) == 3 and many[-1] == "... and 8 more difference(s)"


def test_a_recorded_answer_is_stored_redacted(tmp_path, monkeypatch):
    planted = "sk-replay-PLANTED-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", planted)
    echoed = RecordedExchange(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}, {"result": {"content": [{"type": "text", "text": planted}]}})
    write_exchanges(tmp_path / "evals.duckdb", "run", [echoed])
    (stored,) = load_exchanges(tmp_path / "evals.duckdb", "run")
    assert stored.answer == {"result": {"content": [{"type": "text", "text": "[redacted:OPENAI_API_KEY]"}]}}
