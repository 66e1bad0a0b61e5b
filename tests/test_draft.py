"""`evalcore draft`: a first golden set drafted from a server's own tools by `sim/drafter` (offline, simulated), every
draft checked before it is written, and `run --include-drafts` grading it in a run of kind draft-run.

Servers: the bundled reference server and the public-SDK servers the behaviour tests start (tests/sdk_servers: the
official Python SDK, FastMCP and the TypeScript SDK v2), each over stdio.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import pytest

from evalcore.behaviour.server_tools import ToolSession
from evalcore.cli import main
from evalcore.golden.loader import load_golden_set
from evalcore.mcp.target import resolve_target
from evalcore.store.behaviour import list_runs

PY = sys.executable
pytestmark = pytest.mark.timeout(900)
SDK_SERVERS = {
    "python_sdk": f"{PY} -m tests.sdk_servers.mcpserver_app --stdio",
    "fastmcp": f"{PY} -m tests.sdk_servers.fastmcp_app --stdio",
    "ts_sdk": f"{PY} -m tests.sdk_servers.ts_sdk_app --stdio",
}


def tools_of(server: str | None = None, stdio: str | None = None) -> list[dict]:
    async def read(target):  # type: ignore[no-untyped-def]
        async with ToolSession(target) as session:
            return session.tools

    with resolve_target(server=server, stdio=stdio) as target:
        return asyncio.run(read(target))


def draft_and_run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *target: str) -> tuple[str, list[dict]]:
    """Draft into a file, check it against the server, run it with --include-drafts; the draft command's report."""
    out = tmp_path / "drafts.yaml"
    assert main(["draft", *target, "--model", "sim/drafter", "--per-tool", "2", "--out", str(out)]) == 0
    report = capsys.readouterr().out
    tools = tools_of(server=target[1] if target[0] == "--server" else None, stdio=target[1] if target[0] == "--stdio" else None)
    golden = load_golden_set(out, tools=tools)  # every drafted case loads and validates against the server's schemas
    assert golden.cases and all(case.is_draft for case in golden.cases)
    assert all(case.review is not None and case.review.by == "sim/drafter" and case.review.checked in ("executed", "schema") for case in golden.cases)
    match = re.search(r"coverage: (\d+)/(\d+) tools with a positive case .*?, (\d+) negative case", report)
    assert match, report
    covered, total, negatives = map(int, match.groups())
    assert total == len(tools) and covered / total >= 0.9 and negatives >= 1
    db = tmp_path / "evals.duckdb"
    argv = ["run", "--golden", str(out), *target, "--models", "sim/lexical", "--runs", "1", "--db", str(db)]
    assert main([*argv, "--include-drafts", "--out", str(tmp_path / "run.json")]) in (0, 1)  # graded, not refused
    document = json.loads((tmp_path / "run.json").read_text())
    assert document["runKind"] == "draft-run" and document["gate"]["green"] is False
    assert [run["kind"] for run in list_runs(db)] == ["draft-run"]
    capsys.readouterr()
    assert main(argv) == 2  # without --include-drafts there is nothing to grade
    assert "every case is a draft" in capsys.readouterr().err
    return report, tools


def test_draft_from_the_reference_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report, tools = draft_and_run(tmp_path, capsys, "--server", "reference")
    text = (tmp_path / "drafts.yaml").read_text()
    assert text.startswith("# Drafted by sim/drafter (simulated: ")
    assert "# server answered: " in text  # read-only calls were made, their answers kept beside the case
    assert "expect_sequence:" in text  # an answer's id fed another tool
    assert "disambiguate-" in text
    golden = load_golden_set(tmp_path / "drafts.yaml", tools=tools)
    destructive = {tool["name"] for tool in tools if (tool.get("annotations") or {}).get("readOnlyHint") is not True}
    for case in golden.cases:  # under --call-tools readonly, only read-only calls were made
        if case.expect_tool in destructive:
            assert case.review is not None and case.review.checked == "schema", case.id


@pytest.mark.parametrize("name", list(SDK_SERVERS))
def test_draft_from_a_public_sdk_server(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, request: pytest.FixtureRequest) -> None:
    if name == "ts_sdk":
        request.getfixturevalue("node")  # the TypeScript server needs its npm packages installed
    draft_and_run(tmp_path, capsys, "--stdio", SDK_SERVERS[name])


SCRIPTED_DRAFTER = """\
cases:
  draft:
    text: '{"cases": [
      {"id": "w", "purpose": "positive", "prompt": "Weather in Paris?", "expect_tool": "get_weather", "expect_args": {"city": "Paris"}},
      {"id": "w2", "prompt": "weather in   PARIS?", "expect_tool": "get_weather", "expect_args": {"city": "Paris"}},
      {"id": "tz", "prompt": "Time in Paris?", "expect_tool": "get_weather", "expect_args": {"tz": "Paris"}},
      {"id": "ghost", "prompt": "Book a flight", "expect_tool": "book_flight"},
      {"id": "kb", "prompt": "Three refund articles", "expect_tool": "search_knowledge_base", "expect_args": {"query": "refund", "limit": "three"}},
      {"id": "no", "purpose": "negative", "prompt": "Thanks!", "expect_tool": null}]}'
"""


def test_every_draft_is_checked_and_a_failing_one_dropped_with_its_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "drafter.yaml"
    script.write_text(SCRIPTED_DRAFTER)
    out = tmp_path / "drafts.yaml"
    assert main(["draft", "--server", "reference", "--model", f"sim/script:{script}", "--call-tools", "none", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "dropped w2: duplicate: the same request as an earlier draft" in lines
    assert 'dropped tz: get_weather: unknown argument "tz" (get_weather takes: city, units)' in lines or any(
        line.startswith('dropped tz: get_weather: unknown argument "tz"') for line in lines
    )
    assert 'dropped ghost: unknown tool "book_flight"' in lines
    assert any(line.startswith("dropped kb: search_knowledge_base: argument \"limit\": 'three' is not of type 'integer'") for line in lines)
    golden = load_golden_set(out)
    assert [case.id for case in golden.cases] == ["w", "no"]
    assert all(case.review is not None and case.review.checked == "schema" for case in golden.cases)  # --call-tools none
    assert lines[-1].startswith("coverage: 1/14 tools with a positive case (7%)")
    assert main(["draft", "--server", "reference", "--model", "sim/drafter", "--out", str(out)]) == 2  # never overwrites


def test_draft_from_a_recorded_run(tmp_path: Path, capsys: pytest.CaptureFixture[str], reference_url: str) -> None:
    """What the model really did (prompt, calls, the server's answers) becomes draft cases; a failed attempt only by name."""
    from tests.builders import GOLDEN, WRONG

    (tmp_path / "tasks.yaml").write_text(GOLDEN)
    (tmp_path / "wrong.yaml").write_text(WRONG)
    db = tmp_path / "evals.duckdb"
    run = ["run", "--golden", str(tmp_path / "tasks.yaml"), "--models", f"sim/script:{tmp_path / 'wrong.yaml'}", "--url", reference_url]
    assert main([*run, "--runs", "2", "--db", str(db), "--out", str(tmp_path / "run.json")]) == 1
    run_id = json.loads((tmp_path / "run.json").read_text())["runId"]
    out = tmp_path / "recorded.yaml"
    capsys.readouterr()
    assert main(["draft", "--from-run", run_id, "--db", str(db), "--out", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"drafted 1 case(s) from run {run_id}")  # only customer-then-ticket passed
    (case,) = load_golden_set(out).cases
    assert case.id == "customer-then-ticket-recorded" and case.prompt.startswith("Look up CUST-1001")
    assert [(call.tool, dict(call.args)) for call in case.expected_calls()] == [
        ("get_customer", {"customer_id": "CUST-1001"}),
        ("create_support_ticket", {"customer_id": "CUST-1001", "subject": "Invoice download broken", "description": "The PDF download fails."}),
    ]
    assert case.review is not None and (case.review.status, case.review.checked) == ("draft", "executed") and case.review.by.startswith("sim/script:")
    text = out.read_text()
    assert text.count("# server answered: ") == 2 and '"customer_id": "CUST-1001"' in text
    # A case a human looked at, named: its first attempt, whatever it came to (here the wrong tool on small talk).
    named = tmp_path / "named.yaml"
    assert main(["draft", "--from-run", run_id, "--db", str(db), "--case", "say-hello", "--out", str(named)]) == 0
    (hello,) = load_golden_set(named).cases
    assert (hello.prompt, hello.expect_tool, dict(hello.expect_args)) == ("Hi there!", "get_weather", {"city": "Paris"})
    # The drafts run as they are, against the server the run used.
    assert main([*run, "--golden", str(out), "--runs", "1", "--db", str(db), "--include-drafts"]) in (0, 1)
    assert main(["draft", "--from-run", run_id, "--db", str(db), "--case", "nope"]) == 2
    # An attempt a person judged good becomes a case in one step, though the scorers failed it; one a person judged bad never.
    from evalcore.store.behaviour import load_attempts
    from evalcore.store.judge_labels import label_attempt

    stored = {(row["case_id"], row["attempt"]): row for row in load_attempts(db, run_id)}
    label_attempt(db, (run_id, stored["say-hello", 2]["model"], "say-hello", 2), "pass", labeller="ana")
    for attempt in (1, 2):
        label_attempt(db, (run_id, stored["customer-then-ticket", attempt]["model"], "customer-then-ticket", attempt), "fail", labeller="ana")
    judged = tmp_path / "judged.yaml"
    capsys.readouterr()
    assert main(["draft", "--from-run", run_id, "--db", str(db), "--out", str(judged)]) == 0
    assert [case.id for case in load_golden_set(judged).cases] == ["say-hello-recorded"]
