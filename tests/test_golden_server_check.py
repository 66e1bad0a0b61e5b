"""A golden set checked against the server it runs on: every expected call's arguments against the tool's inputSchema
(unknown names with a did-you-mean, wrong types, missing required), refused in one line each with exit 2 before any
model is called; and `evalcore tools`, which lists a server's tools and writes a golden-file skeleton that loads.

Servers: the bundled reference server (`--server reference`) and the official Python SDK's `MCPServer`
(tests/sdk_servers/mcpserver_app.py, over stdio), whose `add(a: int, b: int)` tool nobody here wrote.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from evalcore.behaviour.server_tools import ToolSession
from evalcore.cli import main
from evalcore.golden.loader import load_golden_set
from evalcore.mcp.target import resolve_target

PY = sys.executable
SDK_SERVER = f"{PY} -m tests.sdk_servers.mcpserver_app --stdio"
pytestmark = pytest.mark.timeout(600)

REFERENCE_GOLDEN = """\
cases:
  - id: weather-town
    prompt: "Weather in Paris?"
    expect_tool: get_weather
    expect_args: {town: Paris}
  - id: kb-limit
    prompt: "Three articles about refunds."
    expect_tool: search_knowledge_base
    expect_args: {query: refund, limit: {one_of: [3, three]}}
  - id: invoices-no-status
    prompt: "CUST-1001's invoices"
    expect_sequence:
      - {tool: get_customer, args: {customer_id: CUST-1001}}
      - {tool: search_invoices, args: {customer_id: CUST-1001}}
  - id: fine
    prompt: "Weather in Lyon?"
    expect_tool: get_weather
    expect_args: {city: Lyon, units: {one_of: [celsius], optional: true}}
"""
MODEL = "defaults: {latency_ms: 0}\ncases: {}\n"


def run_cli(tmp_path: Path, golden: str, *target: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], str]:
    (tmp_path / "set.yaml").write_text(golden, encoding="utf-8")
    (tmp_path / "model.yaml").write_text(MODEL, encoding="utf-8")
    code = main(
        ["run", "--golden", str(tmp_path / "set.yaml"), "--models", f"sim/script:{tmp_path / 'model.yaml'}", "--db", str(tmp_path / "evals.duckdb"), *target]
    )
    captured = capsys.readouterr()
    return code, captured.err.splitlines(), captured.out


def test_reference_server_refuses_arguments_its_schemas_refuse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, errors, out = run_cli(tmp_path, REFERENCE_GOLDEN, "--server", "reference", capsys=capsys)
    path = tmp_path / "set.yaml"
    assert code == 2
    text = "\n".join(errors)
    assert f'{path}:5: case "weather-town": get_weather: unknown argument "town"' in text
    assert f'{path}:5: case "weather-town": get_weather: missing required argument "city"' in text
    assert f"""{path}:9: case "kb-limit": search_knowledge_base: argument "limit": 'three' is not of type 'integer'""" in text
    assert f'{path}:14: case "invoices-no-status": search_invoices: missing required argument "status"' in text
    assert "fine" not in text
    assert len(errors) == 4 and all(line.startswith(f"error: {path}:") for line in errors)
    assert "Traceback" not in out
    assert not list(tmp_path.glob("*.json"))  # no report: nothing was run


def test_a_public_sdk_server_refuses_arguments_its_schema_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = """\
    cases:
      - id: add-typed
        prompt: "2 plus 3?"
        expect_tool: add
        expect_args: {a: "2", bb: 3}
      - id: add-right
        prompt: "2 plus 3?"
        expect_set: [{tool: add, args: {a: 2, b: {one_of: [3, 3.0]}}}]
    """
    code, errors, _ = run_cli(tmp_path, textwrap.dedent(golden), "--stdio", SDK_SERVER, capsys=capsys)
    path = tmp_path / "set.yaml"
    assert code == 2
    text = "\n".join(errors)
    assert f"""{path}:5: case "add-typed": add: argument "a": '2' is not of type 'integer'""" in text
    assert f'{path}:5: case "add-typed": add: unknown argument "bb", did you mean "b"? (add takes: a, b)' in text
    assert f'{path}:5: case "add-typed": add: missing required argument "b"' in text
    assert "add-right" not in text  # 3.0 is an integer to JSON Schema


def list_tools(*, server: str | None = None, stdio: str | None = None) -> list[dict]:
    async def read(target):  # type: ignore[no-untyped-def]
        async with ToolSession(target) as session:
            return session.tools

    with resolve_target(server=server, stdio=stdio) as target:
        return asyncio.run(read(target))


def test_tools_lists_names_parameters_and_hints(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "--server", "reference", "--json"]) == 0
    tools = {tool["name"]: tool for tool in json.loads(capsys.readouterr().out)}
    assert tools["get_weather"]["annotations"] == {"readOnly": True, "destructive": False, "openWorld": False}
    assert tools["erase_customer_data"]["annotations"]["destructive"] is True
    assert tools["get_weather"]["parameters"]["required"] == ["city"]
    assert tools["get_weather"]["title"] and tools["get_weather"]["description"].startswith("Get the current weather")
    assert main(["tools", "--server", "reference"]) == 0
    text = capsys.readouterr().out
    assert "get_weather (Current weather)  [readOnly, not destructive, not openWorld]" in text
    assert "  - city (string, required): City name, e.g. Paris." in text


@pytest.mark.parametrize("target", [("--server", "reference"), ("--stdio", SDK_SERVER)], ids=["reference", "python_sdk"])
def test_tools_yaml_is_a_golden_skeleton_that_loads_against_the_server(tmp_path: Path, capsys: pytest.CaptureFixture[str], target: tuple[str, str]) -> None:
    assert main(["tools", *target, "--yaml"]) == 0
    text = capsys.readouterr().out
    path = tmp_path / "skeleton.yaml"
    path.write_text(text, encoding="utf-8")
    tools = list_tools(server=target[1] if target[0] == "--server" else None, stdio=target[1] if target[0] == "--stdio" else None)
    golden = load_golden_set(path, tools=tools)  # its arguments fit the schemas
    assert {case.expect_tool for case in golden.cases} == {tool["name"] for tool in tools} | {None}
    assert text.startswith("# Golden-set skeleton for ")
    assert yaml.safe_load(text)["cases"][-1]["expect_tool"] is None


def test_tools_needs_a_server(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools"]) == 2
    assert capsys.readouterr().err.strip() == "error: tools: one of the arguments --url --stdio --server --reference is required (see --help)"
