"""Layer 1 on servers nobody here wrote: `evalcore run`, `replay-calls`, `--replay-run` and `perturb` against the
official Python SDK, FastMCP and the TypeScript SDK v2 (installed by the project from PyPI and npm, default
settings), over HTTP and stdio; and a legacy-only server, which a 2026-07-28 run cannot use, refused in one line.

Each SDK server has an `add(a, b)` tool. The models are scripted sim models: what is under test is the harness
against a foreign server (discovery, the catalog, every call executed and scored from the server's own answer),
not a model's judgement.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evalcore.cli import main
from evalcore.errors import TargetError
from evalcore.mcp.local_server import LocalServerProcess
from evalcore.store.behaviour import load_attempts

PY = sys.executable
HERE = Path(__file__).parent
pytestmark = pytest.mark.timeout(900)  # server start-up on a loaded 2-core machine is slow; fixtures wait for readiness

GOLDEN = """\
cases:
  - id: add-two
    prompt: "What is 2 plus 3?"
    expect_tool: add
    expect_args: {a: 2, b: 3}
    kind: hard
  - id: say-hello
    prompt: "Hi there!"
    expect_tool: null
"""
# Right on both cases, except its second attempt at add-two, which asks for 2 + 4.
MODEL = """\
defaults: {latency_ms: 0}
cases:
  add-two:
    calls: [{name: add, args: {a: 2, b: 3}}]
    text: "2 plus 3 is 5."
    attempts:
      2: {calls: [{name: add, args: {a: 2, b: 4}}], text: "It is 6."}
  say-hello:
    no_call: true
    text: "Hello!"
"""
SERVERS = {
    "fastmcp": "tests.sdk_servers.fastmcp_app",
    "python_sdk": "tests.sdk_servers.mcpserver_app",
    "ts_sdk": "tests.sdk_servers.ts_sdk_app",
}


@pytest.fixture(scope="module")
def http_servers(node):
    processes = {name: LocalServerProcess(module, ["--http"], label=f"{name} server", error=TargetError) for name, module in SERVERS.items()}
    processes["legacy"] = LocalServerProcess("tests.legacy_server", ["--http"], label="legacy server", error=TargetError)
    try:
        yield {name: process.url(timeout=600) for name, process in processes.items()}
    finally:
        for process in processes.values():
            process.stop()


def _run(directory: Path, run_id: str, *target: str, runs: int = 2) -> int:
    (directory / "tasks.yaml").write_text(GOLDEN)
    (directory / "model.yaml").write_text(MODEL)
    return main(
        ["run", "--golden", str(directory / "tasks.yaml"), "--models", f"sim/script:{directory / 'model.yaml'}",
         "--db", str(directory / "evals.duckdb"), "--runs", str(runs), "--run-id", run_id, "--out", str(directory / f"{run_id}.json"), *target]
    )  # fmt: skip


def _attempts(directory: Path, run_id: str) -> dict[tuple[str, int], dict]:
    return {(row["case_id"], row["attempt"]): row for row in load_attempts(directory / "evals.duckdb", run_id)}


def _served(attempt: dict) -> list[tuple[str, dict, str]]:
    """(tool, arguments, the text the server answered) for each call an attempt executed."""
    executions = json.loads(attempt["transcript_json"])["executions"]
    return [(e["tool"], e["arguments"], json.dumps(e["result"]["content"])) for e in executions]


@pytest.mark.parametrize("server", sorted(SERVERS))
def test_a_run_on_an_sdk_server_executes_each_call_and_scores_it_from_the_servers_answer(http_servers, server, tmp_path):
    code = _run(tmp_path, "over-http", "--url", http_servers[server])
    report = json.loads((tmp_path / "over-http.json").read_text())
    attempts = _attempts(tmp_path, "over-http")

    assert code == 1, report  # the hard case passed 1 of 2: its gate, and so the run, is red
    assert sorted(attempts) == [("add-two", 1), ("add-two", 2), ("say-hello", 1), ("say-hello", 2)]
    assert [row["error_kind"] for row in attempts.values()] == [None] * 4
    (tool, arguments, answer), = _served(attempts["add-two", 1])  # fmt: skip
    assert (tool, arguments) == ("add", {"a": 2, "b": 3}) and "5" in answer
    (tool, arguments, answer), = _served(attempts["add-two", 2])  # fmt: skip
    assert (tool, arguments) == ("add", {"a": 2, "b": 4}) and "6" in answer
    assert _served(attempts["say-hello", 1]) == []
    assert [bool(attempts["add-two", n]["passed"]) for n in (1, 2)] == [True, False]  # the wrong arguments fail their attempt
    metrics = report["models"][0]["metrics"]
    assert (metrics["errored"], metrics["pass_rate"], metrics["argument_accuracy"], metrics["execution_accuracy"]) == (0, 0.75, 0.5, 1.0)


def test_a_run_over_stdio_starts_the_sdk_server_itself(node, tmp_path):
    assert _run(tmp_path, "over-stdio", "--stdio", f"{PY} -m tests.sdk_servers.ts_sdk_app --stdio", runs=1) == 0
    (tool, arguments, answer), = _served(_attempts(tmp_path, "over-stdio")["add-two", 1])  # fmt: skip
    assert (tool, arguments) == ("add", {"a": 2, "b": 3}) and "5" in answer


def test_a_recording_of_an_sdk_server_replays_and_its_calls_resend_identically(http_servers, tmp_path, capsys):
    url = http_servers["python_sdk"]
    assert _run(tmp_path, "recorded", "--url", url) == 1
    assert _run(tmp_path, "replayed", "--replay-run", "recorded") == 1
    replayed = _attempts(tmp_path, "replayed")
    assert [_served(replayed["add-two", n])[0][2] for n in (1, 2)] == [_served(_attempts(tmp_path, "recorded")["add-two", n])[0][2] for n in (1, 2)]
    capsys.readouterr()

    code = main(["replay-calls", "recorded", "--db", str(tmp_path / "evals.duckdb"), "--url", url])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "identical" in out


def test_a_legacy_only_server_is_refused_in_one_line_with_its_own_words(http_servers, tmp_path, capsys):
    code = _run(tmp_path, "legacy", "--url", http_servers["legacy"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and "did not list its tools" in err and "No valid session ID provided" in err  # the server's own words
    assert "Traceback" not in err


def test_perturb_on_an_sdk_server_maps_renamed_calls_back_and_sees_a_lost_description(tmp_path):
    """sim/lexical picks `add` by the words of its description ("Add two integers."): renamed `tool_1`, the calls
    still reach the server's `add`; with no description, "add" alone is too little to pick it."""
    golden = tmp_path / "tasks.yaml"
    golden.write_text(GOLDEN.replace("What is 2 plus 3?", "Add the integers 2 and 3."))
    out = tmp_path / "perturb.json"
    server = f"{PY} -m tests.sdk_servers.mcpserver_app --stdio"
    code = main(
        ["perturb", "--golden", str(golden), "--models", "sim/lexical", "--stdio", server, "--perturbations", "renamed,no_descriptions",
         "--runs", "3", "--db", str(tmp_path / "evals.duckdb"), "--json", str(out)]
    )  # fmt: skip
    report = json.loads(out.read_text())
    add = {row["perturbation"]: (row["baseline"]["correct"], row["perturbed"]["correct"]) for row in report["tools"] if row["tool"] == "add"}

    assert code == 0 and report["failed"] is False
    assert add == {"renamed": (3, 3), "no_descriptions": (3, 0)}
    renamed_run = next(p["candidateRunId"] for p in report["perturbations"] if p["id"] == "renamed")
    calls = [served for row in load_attempts(tmp_path / "evals.duckdb", renamed_run) if row["case_id"] == "add-two" for served in _served(row)]
    assert [tool for tool, _, _ in calls] == ["add"] * 3 and all("5" in answer for _, _, answer in calls)


def test_on_an_sdk_server_only_a_run_serves_the_cache_never_a_compare_arm(http_servers, tmp_path):
    """Both arms of `compare` ran after the run, with the same model and cases: the newest attempt for a key would win,
    so only the run plan's kind keeps them out of `--cache` (the candidate's catalog is rewritten, too)."""
    url = http_servers["fastmcp"]
    assert _run(tmp_path, "plain", "--url", url) == 1
    (tmp_path / "overrides.yaml").write_text('tools:\n  add:\n    description: "Sum two integers."\n')
    compare = ["compare", "--golden", str(tmp_path / "tasks.yaml"), "--models", f"sim/script:{tmp_path / 'model.yaml'}", "--url", url]
    compare += ["--candidate-tools", str(tmp_path / "overrides.yaml"), "--runs", "2", "--db", str(tmp_path / "evals.duckdb")]
    assert main([*compare, "--json", str(tmp_path / "compare.json")]) in (0, 1)
    assert _run(tmp_path, "cached", "--url", url, "--cache") == 1
    assert {row["cached_from"] for row in _attempts(tmp_path, "cached").values()} == {"plain"}
    report = json.loads((tmp_path / "compare.json").read_text())
    for arm in (report["baselineRunId"], report["candidateRunId"]):
        assert main(["baseline", "accept", arm, "--db", str(tmp_path / "evals.duckdb")]) == 2
