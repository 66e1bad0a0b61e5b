"""Agent hosts as models (`host/claude-code:MODEL`, `host/codex:MODEL`, docs/hosts.md): the real, pinned host binaries
(installed from npm by `make hosts`, or here by the `host_binaries` fixture) run against the reference server and an
official-SDK server, each attempt one headless session, on a scripted sim model served on the host's own wire.

The host sessions are few (a handful in all): each test runs one attempt per case and model it needs.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import duckdb
import pytest

from evalcore.cli import main
from evalcore.dashboard.conversation import conversation
from evalcore.errors import TargetError
from evalcore.hosts.attempt import host_runtime, run_host_attempt
from evalcore.mcp.local_server import LocalServerProcess
from evalcore.mcp.target import Target
from evalcore.mcp.transport.base import Limits
from evalcore.models.types import ModelSpec
from evalcore.store.behaviour import load_attempts

pytestmark = pytest.mark.timeout(600)
HERE = Path(__file__).parent
PLANTED_KEY = "sk-ant-PLANTED-host-key-0042"

GOLDEN = """\
cases:
  - id: weather
    prompt: "What is the weather in Paris?"
    expect_tool: get_weather
    expect_args: {city: Paris}
  - id: hello
    prompt: "Hi there!"
    expect_tool: null
"""
SCRIPT = """\
defaults: {model_version: sim-host-1}
cases:
  weather:
    calls: [{name: get_weather, args: {city: Paris}}]
    text: "It is partly cloudy in Paris."
  hello:
    no_call: true
    text: "Hello! How can I help?"
  add-two:
    calls: [{name: add, args: {a: 2, b: 3}}]
    text: "2 plus 3 is 5."
"""
SDK_GOLDEN = """\
cases:
  - id: add-two
    prompt: "What is 2 plus 3?"
    expect_tool: add
    expect_args: {a: 2, b: 3}
"""


@pytest.fixture
def hosts_on_path(host_binaries, monkeypatch):
    monkeypatch.delenv("EVALCORE_CLAUDE_CODE_BIN", raising=False)
    monkeypatch.delenv("EVALCORE_CODEX_BIN", raising=False)
    return host_binaries


def _run(directory: Path, golden: str, models: str, *target: str) -> tuple[int, dict]:
    (directory / "tasks.yaml").write_text(golden)
    (directory / "model.yaml").write_text(SCRIPT)
    code = main(
        ["run", "--golden", str(directory / "tasks.yaml"), "--models", models.replace("MODEL", f"sim/script:{directory / 'model.yaml'}"),
         "--db", str(directory / "evals.duckdb"), "--runs", "1", "--run-id", "r1", "--out", str(directory / "r1.json"), *target]
    )  # fmt: skip
    return code, {(row["model"].split(":")[0], row["case_id"]): row for row in load_attempts(directory / "evals.duckdb", "r1")}


def _executed(row: dict) -> list[tuple[str, dict]]:
    return [(e["tool"], e["arguments"]) for e in json.loads(row["transcript_json"])["executions"]]


def test_claude_code_on_the_reference_server_is_scored_from_what_it_sent_and_cross_checked(hosts_on_path, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED_KEY)  # a real model's key: never given to a sim-backed host, never stored
    code, rows = _run(tmp_path, GOLDEN, "host/claude-code:MODEL,MODEL", "--server", "reference")
    out = capsys.readouterr().out

    assert code == 0, out
    host, raw = rows["host/claude-code", "weather"], rows["sim/script", "weather"]
    assert _executed(host) == _executed(raw) == [("get_weather", {"city": "Paris"})]  # the calls the script made the host do
    assert host["passed"] and rows["host/claude-code", "hello"]["passed"] and _executed(rows["host/claude-code", "hello"]) == []
    header = json.loads(host["transcript_json"])["messages"][0]
    assert header["role"] == "host" and header["cross_check"] == "agree"  # the host's own stream says what the tap recorded
    assert host["model_version"].startswith("claude-code 2.1.") and host["model_version"].endswith("/ sim-host-1")
    assert host["final_text"] == "It is partly cloudy in Paris." and host["error_kind"] is None
    shown = [(entry.kind, entry.title) for entry in conversation(json.loads(host["transcript_json"]))]  # the drill-down
    assert shown[0][1].startswith("Host claude-code 2.1.") and shown[0][1].endswith("cross-check: agree")
    assert shown[1:] == [("user", "User"), ("tool_call", "Tool call · get_weather"), ("tool_result", shown[3][1]), ("assistant", "Assistant")]
    with duckdb.connect(str(tmp_path / "evals.duckdb"), read_only=True) as db:
        plan = json.loads(db.execute("SELECT plan_json FROM behaviour_runs").fetchone()[0])
        calls = db.execute("SELECT count(*) FROM run_exchanges WHERE method = 'tools/call'").fetchone()[0]
        tables = ("behaviour_runs", "attempts", "run_exchanges")
        everything = " ".join(str(value) for table in tables for row in db.execute(f"SELECT * FROM {table}").fetchall() for value in row)
    assert plan["hostVersions"] == {f"host/claude-code:sim/script:{tmp_path / 'model.yaml'}": host["model_version"].split(" /")[0]}
    assert calls == 2  # the raw model's call and the host's, both in the run's recording
    assert PLANTED_KEY not in everything


def test_codex_on_a_modern_only_server_is_a_column_not_testable_through_it(hosts_on_path, tmp_path, capsys):
    code, rows = _run(tmp_path, GOLDEN, "host/codex:MODEL", "--server", "reference")
    capsys.readouterr()

    assert code != 0  # errored attempts: the run is incomplete, never green
    reasons = {row["case_id"]: row["error"] for row in rows.values()}
    assert all(row["error_kind"] == "provider" for row in rows.values())  # errored, so in no quality figure: not failures
    assert all("not testable through this host: it speaks MCP up to 2025-" in reason for reason in reasons.values()), reasons


@pytest.fixture(scope="module")
def sdk_server():
    process = LocalServerProcess("tests.sdk_servers.mcpserver_app", ["--http"], label="python-sdk server", error=TargetError)
    try:
        yield process.url(timeout=300)
    finally:
        process.stop()


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_both_hosts_on_an_official_sdk_server_make_the_scripted_call(hosts_on_path, sdk_server, host, tmp_path, capsys):
    code, rows = _run(tmp_path, SDK_GOLDEN, f"host/{host}:MODEL", "--url", sdk_server)
    out = capsys.readouterr().out

    row = rows[f"host/{host}", "add-two"]
    assert code == 0, (out, row["error"])
    assert _executed(row) == [("add", {"a": 2, "b": 3})] and row["passed"]
    assert json.loads(row["transcript_json"])["messages"][0]["cross_check"] == "agree"
    assert "5" in json.dumps(json.loads(row["transcript_json"])["executions"][0]["result"])


def test_a_stdio_server_is_started_by_evalcore_and_bridged_to_the_host(hosts_on_path, tmp_path, capsys):
    code, rows = _run(tmp_path, GOLDEN.split("  - id: hello")[0], "host/claude-code:MODEL", "--stdio", f"{sys.executable} -m evalcore.demo_server --stdio")
    capsys.readouterr()

    row = rows["host/claude-code", "weather"]
    assert code == 0, row["error"]
    assert _executed(row) == [("get_weather", {"city": "Paris"})] and row["passed"]


def _fake_host(tmp_path: Path, mode: str) -> tuple[Path, Path]:
    pidfile = tmp_path / "child.pid"
    binary = tmp_path / f"claude-{mode}"
    binary.write_text(f'#!/bin/sh\nexec {sys.executable} {HERE / "fake_host.py"} {mode} {pidfile} "$@"\n')
    binary.chmod(0o755)
    return binary, pidfile


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")  # killed, waiting only to be reaped by init


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("hang", "no end within its 3 s ceiling; its process tree was killed"),
        ("approval", "asked for an approval nobody can give (Bash)"),
        ("crash", "no result event (exit code 3): boom: the host fell over"),
    ],
)
def test_a_host_that_hangs_asks_for_approval_or_crashes_is_an_errored_attempt_that_leaves_nothing_running(reference_url, tmp_path, monkeypatch, mode, reason):
    binary, pidfile = _fake_host(tmp_path, mode)
    monkeypatch.setenv("EVALCORE_CLAUDE_CODE_BIN", str(binary))

    async def attempt():
        with host_runtime(Target(url=reference_url), Limits()) as runtime:
            spec = ModelSpec("host/claude-code:sim/lexical", timeout_s=3.0)
            return await run_host_attempt(runtime, spec, prompt="What is the weather in Paris?", system="", context={"case_id": "c", "attempt": 1}, max_steps=4)

    transcript = asyncio.run(attempt())

    assert transcript.stop_reason == "model_error"  # errored: never scored
    assert transcript.error == f"host/claude-code: {reason}"
    if mode == "hang":
        assert _gone(int(pidfile.read_text()))  # the host's own child went with it


def test_the_two_sides_disagreeing_is_written_on_the_attempt():
    from evalcore.hosts.attempt import cross_check
    from evalcore.hosts.report import StreamCall
    from evalcore.records import ToolCall

    said = [StreamCall("t1", "get_weather", {"city": "Paris"})]
    assert cross_check(said, [ToolCall("c1", "get_weather", {"city": "Paris"})]) is None
    assert cross_check(said, []) == "the host's stream shows 1 MCP call(s) ['get_weather'], the recorded exchanges 0 []"
    assert cross_check(said, [ToolCall("c1", "get_weather", {"city": "Rome"})]) is not None  # same tool, other arguments


def test_drift_tells_a_host_update_from_a_model_update():
    from datetime import date

    from evalcore.drift.attribution import action_sentence, attribute
    from evalcore.drift.types import Fingerprints

    def prints(version: str) -> Fingerprints:
        return Fingerprints(server="s", model_version=version, case_hash="c", evalcore_version="1")

    before, host, model = prints("claude-code 2.1.332 / sim-1"), prints("claude-code 2.1.340 / sim-1"), prints("claude-code 2.1.332 / sim-2")
    runs = {"last_good": ("r1", date(2026, 12, 1)), "first_after": ("r2", date(2026, 12, 2))}
    by_host, by_model = attribute("drop", before, host, **runs), attribute("drop", before, model, **runs)
    assert by_host.label == "host update (claude-code 2.1.332 -> claude-code 2.1.340)"
    assert by_model.label == "model update"
    on = date(2026, 12, 2)
    sentence = action_sentence("drop", by_host, model="host/claude-code:x", case_id="c", change_date=on, rates=(1.0, 0.5), before=before, after=host)
    assert sentence.startswith("The agent host changed from claude-code 2.1.332 to claude-code 2.1.340 on 2026-12-02")


def test_a_host_column_is_labelled_as_a_host_beside_raw_models():
    from evalcore.dashboard.figures import model_labels

    labels = model_labels({"host/claude-code:sim/script:/a/b/model.yaml": True, "sim/script:/a/b/model.yaml": True, "host/codex:gpt-5.1": False})
    assert labels == {
        "host/claude-code:sim/script:/a/b/model.yaml": "host/claude-code:sim/script:model.yaml (host, simulated)",
        "sim/script:/a/b/model.yaml": "sim/script:model.yaml (simulated)",
        "host/codex:gpt-5.1": "host/codex:gpt-5.1 (host)",
    }


def test_the_sim_behind_a_host_sees_only_the_servers_tools_and_counts_only_its_calls():
    """A host's own steps (here Claude Code's tool search), its reminders and its context messages are no part of what a
    policy reads: the user's words are the prompt, and a script's second turn is its second MCP call, whatever the host
    did in between."""
    from evalcore.models.sim.host_wires import anthropic_input, responses_input
    from evalcore.models.sim.reply import assistant_turns, last_user_text

    body = {
        "tools": [{"name": "ToolSearch", "input_schema": {}}, {"name": "mcp__target__get_weather", "description": "Weather.", "input_schema": {}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "<system-reminder>env</system-reminder>"}, {"type": "text", "text": "Weather in Paris?"}]},
            {"role": "system", "content": [{"type": "text", "text": "# Environment\nToday's date is 2026-12-05."}]},  # not the user's words
            {"role": "assistant", "content": [{"type": "tool_use", "id": "s1", "name": "ToolSearch", "input": {"query": "select:mcp__target__get_weather"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "s1", "content": "loaded"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "mcp__target__get_weather", "input": {"city": "Paris"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "sunny"}]},
        ],
    }
    seen = anthropic_input(body, "target")
    assert [tool["function"]["name"] for tool in seen.tools] == ["get_weather"] and seen.wire_names == {"get_weather": "mcp__target__get_weather"}
    assert last_user_text(seen.messages) == "Weather in Paris?" and assistant_turns(seen.messages) == 1
    assert seen.messages[-1] == {"role": "tool", "tool_call_id": "c1", "content": "sunny"}

    namespace = {"type": "namespace", "name": "mcp__target", "tools": [{"type": "function", "name": "add"}]}
    codex = responses_input({"tools": [namespace], "input": "2+3?"}, "target")
    assert codex.wire_names == {"add": "mcp__target__add"}


def test_a_host_models_identity_names_its_script_as_a_golden_set_is_named():
    from evalcore.paths import model_identity

    assert model_identity("host/codex:sim/script:./golden/tasks.yaml") == "host/codex:sim/script:golden/tasks.yaml"
    assert model_identity("host/claude-code:claude-sonnet-4-5") == "host/claude-code:claude-sonnet-4-5"


def test_a_real_model_behind_a_host_gets_its_key_and_endpoint_from_the_environment_and_options_only(hosts_on_path, reference_url, tmp_path, monkeypatch):
    """`host/claude-code:MODEL --api-base URL`: the host reads ANTHROPIC_API_KEY from its environment and calls URL (here
    the sim's endpoint for one session, standing in for a provider); the key is in nothing the attempt keeps."""
    from evalcore.models.sim.host_server import HostWireSession

    (tmp_path / "model.yaml").write_text(SCRIPT)
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED_KEY)

    async def attempt():
        with host_runtime(Target(url=reference_url), Limits()) as runtime:
            endpoint = runtime.wires.register(HostWireSession(f"sim/script:{tmp_path / 'model.yaml'}", {"case_id": "weather", "attempt": 1}, "target"))
            spec = ModelSpec("host/claude-code:claude-sonnet-4-5", api_base=endpoint)
            transcript = await run_host_attempt(runtime, spec, prompt="What is the weather in Paris?", system="", context={}, max_steps=4)
            return transcript, runtime.wires.forget(endpoint)

    transcript, requests = asyncio.run(attempt())

    assert requests >= 2 and transcript.stop_reason == "final"  # the host called the endpoint it was given
    assert [(e.call.name, dict(e.call.arguments)) for e in transcript.executions] == [("get_weather", {"city": "Paris"})]
    assert PLANTED_KEY not in json.dumps(transcript.messages) + transcript.to_json()
