"""The bundled reference server (`evalcore.demo_server`) on the wire: clean, bare SDK, and with defects.

Every server is a real subprocess on 127.0.0.1 (or on pipes for stdio), driven
with plain httpx and JSON lines. Over HTTP one `--all-variants` process serves
every variant, each at its own path; the stdio processes start together with it
at the first test that needs one, so their start-up overlaps.
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator

from evalcore.demo_server.__main__ import list_defects, parse_args
from evalcore.demo_server.defects import DEFECTS
from evalcore.mcp.protocol.constants import (
    ACCEPT_BOTH,
    CACHE_SCOPES,
    HEADER_METHOD,
    HEADER_MISMATCH,
    HEADER_NAME,
    HEADER_PROTOCOL_VERSION,
    HEADER_SESSION_ID,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LEGACY_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    NAMED_METHODS,
    PARSE_ERROR,
    PROTOCOL_VERSION,
    UNSUPPORTED_PROTOCOL_VERSION,
)

STARTUP_TIMEOUT = 120.0  # waits on the `listening on` line: as long as a busy machine needs, no longer
REPLY_TIMEOUT = 120.0  # a stdio server's first reply includes its start-up
_LISTENING = re.compile(r"listening on (?P<url>http://\S+)")

STDIO_SERVERS: dict[str, list[str]] = {
    "clean": [],
    "bare": ["--bare"],
    **{name: ["--defect", name] for name in ("no_discover", "shuffle_tools", "answers_ping", "unknown_tool_is_error")},
}
LEGACY_INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "method": "initialize",
    "params": {"protocolVersion": LEGACY_PROTOCOL_VERSION, "capabilities": {}, "clientInfo": {"name": "old-client", "version": "1.0"}},
}


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "evalcore.demo_server", *args]


class HttpProcess:
    """`--http --port 0 --all-variants` in a subprocess; `base_url` waits for its `listening on` line."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            _command("--http", "--host", "127.0.0.1", "--port", "0", "--all-variants"),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._url: list[str] = []
        self._ready = threading.Event()
        self._stderr: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr.append(line)
            match = _LISTENING.search(line)
            if match and not self._url:
                self._url.append(match["url"])
                self._ready.set()
        self._ready.set()

    @property
    def base_url(self) -> str:
        if not self._ready.wait(STARTUP_TIMEOUT) or not self._url:
            pytest.fail(f"server did not announce itself; stderr: {''.join(self._stderr)[-2000:]}")
        return self._url[0]

    def stop(self) -> None:
        _stop(self.process)


class HttpServer:
    """One variant of the shared HTTP process: `clean`, `bare` or a defect name, at `/NAME/mcp`."""

    def __init__(self, process: HttpProcess, name: str) -> None:
        self._process = process
        self.name = name

    @property
    def url(self) -> str:
        return f"{self._process.base_url}/{self.name}/mcp"

    def post(self, body: dict[str, Any], headers: dict[str, str] | None = None) -> httpx.Response:
        return httpx.post(self.url, content=json.dumps(body), headers=headers or rpc_headers(body), timeout=REPLY_TIMEOUT)

    def call(self, method: str, params: dict[str, Any] | None = None, **meta: Any) -> httpx.Response:
        return self.post(rpc_request(method, params, **meta))


class StdioServer:
    """`--stdio` in a subprocess, spoken to one JSON line at a time."""

    def __init__(self, args: list[str]) -> None:
        self.process = subprocess.Popen(
            _command("--stdio", *args), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1
        )
        self._lines: queue.Queue[str] = queue.Queue()
        self._next_id = 0
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)

    def send_line(self, line: str) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        try:
            return json.loads(self._lines.get(timeout=REPLY_TIMEOUT))
        except queue.Empty:
            pytest.fail(f"no reply on stdout within {REPLY_TIMEOUT}s to {line[:200]}")

    def call(self, method: str, params: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
        self._next_id += 1
        body = rpc_request(method, params, request_id=self._next_id, **meta)
        reply = self.send_line(json.dumps(body))
        assert reply.get("id") == self._next_id, reply
        return reply

    def stop(self) -> None:
        _stop(self.process)


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def rpc_request(method: str, params: dict[str, Any] | None = None, *, request_id: int = 1, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    meta = {META_PROTOCOL_VERSION: PROTOCOL_VERSION, META_CLIENT_CAPABILITIES: capabilities or {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": meta}}


def rpc_headers(body: dict[str, Any]) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "Accept": ACCEPT_BOTH,
        HEADER_PROTOCOL_VERSION: PROTOCOL_VERSION,
        HEADER_METHOD: body["method"],
    }
    name_key = NAMED_METHODS.get(body["method"])
    if name_key:
        headers[HEADER_NAME] = body["params"][name_key]
    return headers


def example_value(schema: dict[str, Any]) -> Any:
    """What a schema-driven client sends: first example, else default, else first enum, else a placeholder."""
    if schema.get("examples"):
        return schema["examples"][0]
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    branches = [b for b in schema.get("anyOf", []) if b.get("type") != "null"]
    if branches:
        return example_value(branches[0])
    return {"string": "example", "integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}[schema.get("type", "string")]


def example_arguments(input_schema: dict[str, Any], *, required_only: bool) -> dict[str, Any]:
    required = set(input_schema.get("required", []))
    return {name: example_value(prop) for name, prop in input_schema.get("properties", {}).items() if name in required or not required_only}


@pytest.fixture(scope="module")
def fleet() -> Iterator[tuple[dict[str, HttpServer], dict[str, StdioServer]]]:
    process = HttpProcess()
    stdio = {name: StdioServer(args) for name, args in STDIO_SERVERS.items()}
    try:
        yield {name: HttpServer(process, name) for name in ("clean", "bare", *DEFECTS)}, stdio
    finally:
        for server in [process, *stdio.values()]:
            server.stop()


@pytest.fixture(scope="module")
def http_servers(fleet: tuple[dict[str, HttpServer], dict[str, StdioServer]]) -> dict[str, HttpServer]:
    return fleet[0]


@pytest.fixture(scope="module")
def stdio_servers(fleet: tuple[dict[str, HttpServer], dict[str, StdioServer]]) -> dict[str, StdioServer]:
    return fleet[1]


@pytest.fixture(scope="module")
def clean(http_servers: dict[str, HttpServer]) -> HttpServer:
    return http_servers["clean"]


@pytest.fixture(scope="module")
def tools(clean: HttpServer) -> list[dict[str, Any]]:
    reply = clean.call("tools/list")
    assert reply.status_code == 200, reply.text
    return reply.json()["result"]["tools"]


# --- the clean server over HTTP ---------------------------------------------------------------


def test_discover_over_http(clean: HttpServer) -> None:
    reply = clean.call("server/discover")
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("application/json")
    result = reply.json()["result"]
    assert PROTOCOL_VERSION in result["supportedVersions"]
    assert result["resultType"] == "complete"
    assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0
    assert result["cacheScope"] in CACHE_SCOPES
    assert result["_meta"][META_SERVER_INFO]["name"]
    assert HEADER_SESSION_ID.lower() not in reply.headers


def test_every_tool_has_valid_input_and_output_schemas(tools: list[dict[str, Any]]) -> None:
    assert 10 <= len(tools) <= 16
    assert len({tool["description"] for tool in tools}) == len(tools), "descriptions must tell the tools apart"
    for tool in tools:
        Draft202012Validator.check_schema(tool["inputSchema"])
        Draft202012Validator.check_schema(tool["outputSchema"])
        assert tool["inputSchema"]["type"] == "object", tool["name"]
        assert tool["outputSchema"]["type"] == "object", tool["name"]
        for name, prop in tool["inputSchema"].get("properties", {}).items():
            constrained = name.endswith("_id") or "pattern" in prop or "format" in prop or any("format" in b for b in prop.get("anyOf", []))
            if constrained:
                assert prop.get("examples"), f"{tool['name']}.{name} needs examples"
    assert any("$defs" in tool["outputSchema"] and "$ref" in json.dumps(tool["outputSchema"]) for tool in tools)


@pytest.mark.parametrize("required_only", [True, False], ids=["required-args", "all-args"])
def test_every_tool_succeeds_with_schema_example_arguments(clean: HttpServer, tools: list[dict[str, Any]], required_only: bool) -> None:
    for tool in tools:
        arguments = example_arguments(tool["inputSchema"], required_only=required_only)
        reply = clean.call("tools/call", {"name": tool["name"], "arguments": arguments})
        needs = {"erase_customer_data": {"elicitation": {"form": {}}}, "summarize_ticket": {"sampling": {}}}.get(tool["name"])
        if needs is not None:  # these tools ask the client for input (MRTR); a client that cannot answer is told so
            assert reply.status_code == 400, reply.text
            error = reply.json()["error"]
            assert error["code"] == MISSING_REQUIRED_CLIENT_CAPABILITY
            assert error["data"] == {"requiredCapabilities": needs}
            continue
        assert reply.status_code == 200, reply.text
        result = reply.json()["result"]
        assert result["isError"] is False, (tool["name"], arguments, result)
        assert result["content"], tool["name"]
        errors = list(Draft202012Validator(tool["outputSchema"]).iter_errors(result["structuredContent"]))
        assert not errors, (tool["name"], errors)


def test_erase_asks_for_confirmation_then_succeeds_on_the_retry(clean: HttpServer) -> None:
    params: dict[str, Any] = {"name": "erase_customer_data", "arguments": {"customer_id": "CUST-1001"}}
    asked = clean.call("tools/call", params, capabilities={"elicitation": {}}).json()["result"]
    assert asked["resultType"] == "input_required" and isinstance(asked["requestState"], str)
    [(key, request)] = asked["inputRequests"].items()
    assert request["method"] == "elicitation/create" and "CUST-1001" in request["params"]["message"]
    retry = {**params, "inputResponses": {key: {"action": "accept", "content": {"confirm": True}}}, "requestState": asked["requestState"]}
    reply = clean.call("tools/call", retry, capabilities={"elicitation": {}}, request_id=2)
    assert reply.status_code == 200, reply.text
    assert reply.json()["result"]["structuredContent"]["status"] == "scheduled"


def test_unknown_id_is_a_tool_error_not_a_protocol_error(clean: HttpServer) -> None:
    reply = clean.call("tools/call", {"name": "get_invoice", "arguments": {"invoice_id": "INV-1999-0001"}})
    assert reply.status_code == 200
    result = reply.json()["result"]
    assert result["isError"] is True
    assert "not found" in result["content"][0]["text"]


def test_unknown_tool_is_invalid_params_over_http(clean: HttpServer) -> None:
    reply = clean.call("tools/call", {"name": "get_wether", "arguments": {}})
    assert reply.status_code == 400
    assert reply.json()["error"]["code"] == INVALID_PARAMS


def test_resources_and_prompts(clean: HttpServer) -> None:
    resources = clean.call("resources/list").json()["result"]["resources"]
    prompts = clean.call("prompts/list").json()["result"]["prompts"]
    assert len(resources) >= 2 and len(prompts) >= 2
    read = clean.call("resources/read", {"uri": "kb://policies/refunds"}).json()["result"]
    assert read["contents"][0]["mimeType"] == "text/markdown"
    assert isinstance(read["ttlMs"], int)
    prompt = clean.call("prompts/get", {"name": "triage_ticket", "arguments": {"ticket_text": "VPN is down"}}).json()["result"]
    assert "VPN is down" in prompt["messages"][0]["content"]["text"]
    missing = clean.call("resources/read", {"uri": "kb://policies/nothing"})
    assert missing.status_code == 400 and missing.json()["error"]["code"] == INVALID_PARAMS


@pytest.mark.parametrize("version_header", [LEGACY_PROTOCOL_VERSION, None], ids=["older", "missing"])
def test_version_header_must_match_meta(clean: HttpServer, version_header: str | None) -> None:
    body = rpc_request("tools/list")
    headers = rpc_headers(body)
    del headers[HEADER_PROTOCOL_VERSION]
    if version_header is not None:
        headers[HEADER_PROTOCOL_VERSION] = version_header
    reply = clean.post(body, headers)
    assert reply.status_code == 400
    assert reply.json()["error"]["code"] == HEADER_MISMATCH
    assert reply.json()["id"] == 1
    assert HEADER_SESSION_ID.lower() not in reply.headers


def test_legacy_initialize_is_refused_without_a_session(clean: HttpServer) -> None:
    body = {**LEGACY_INITIALIZE, "id": 7}
    headers = {"Content-Type": "application/json", "Accept": ACCEPT_BOTH, HEADER_PROTOCOL_VERSION: LEGACY_PROTOCOL_VERSION}
    reply = clean.post(body, headers)
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["code"] == UNSUPPORTED_PROTOCOL_VERSION and PROTOCOL_VERSION in error["data"]["supported"]
    assert HEADER_SESSION_ID.lower() not in reply.headers


@pytest.mark.parametrize("verb", ["GET", "DELETE"])
def test_get_and_delete_are_405(clean: HttpServer, verb: str) -> None:
    reply = httpx.request(verb, clean.url, headers={"Accept": ACCEPT_BOTH, HEADER_SESSION_ID: "stale"}, timeout=REPLY_TIMEOUT)
    assert reply.status_code == 405
    assert reply.headers["allow"] == "POST"
    assert HEADER_SESSION_ID.lower() not in reply.headers


def test_foreign_origin_is_403(clean: HttpServer) -> None:
    body = rpc_request("tools/list")
    reply = clean.post(body, {**rpc_headers(body), "Origin": "http://evil.example"})
    assert reply.status_code == 403


# --- the clean server over stdio ----------------------------------------------------------------


def test_stdio_serves_2026_only(stdio_servers: dict[str, StdioServer], tools: list[dict[str, Any]]) -> None:
    server = stdio_servers["clean"]
    discover = server.call("server/discover")["result"]
    assert discover["supportedVersions"] == [PROTOCOL_VERSION]
    assert [t["name"] for t in server.call("tools/list")["result"]["tools"]] == [t["name"] for t in tools]
    assert server.call("tools/call", {"name": "get_wether", "arguments": {}})["error"]["code"] == INVALID_PARAMS
    legacy = server.send_line(json.dumps({**LEGACY_INITIALIZE, "id": 99}))
    assert "error" in legacy and legacy["error"]["code"] == UNSUPPORTED_PROTOCOL_VERSION
    assert server.call("initialize", LEGACY_INITIALIZE["params"])["error"]["code"] == METHOD_NOT_FOUND
    assert server.send_line("{not json")["error"]["code"] == PARSE_ERROR
    assert server.send_line("[1, 2]")["error"]["code"] == INVALID_REQUEST


def test_stdio_tool_call_succeeds(stdio_servers: dict[str, StdioServer]) -> None:
    reply = stdio_servers["clean"].call("tools/call", {"name": "get_order_status", "arguments": {"order_id": "ORD-50001"}})
    assert reply["result"]["structuredContent"]["carrier"] == "UPS"


# --- the bare SDK still shows the deviations we fix (fails loudly once the SDK fixes them) ------------


def test_bare_sdk_deviations_over_http(http_servers: dict[str, HttpServer]) -> None:
    bare = http_servers["bare"]
    unknown = bare.call("tools/call", {"name": "get_wether", "arguments": {}})
    assert unknown.status_code == 200 and unknown.json()["result"]["isError"] is True

    body = rpc_request("tools/list")
    mismatch = bare.post(body, {**rpc_headers(body), HEADER_PROTOCOL_VERSION: LEGACY_PROTOCOL_VERSION})
    assert mismatch.status_code == 400 and mismatch.json()["error"]["code"] == INVALID_REQUEST
    assert HEADER_SESSION_ID.lower() in mismatch.headers

    get = httpx.get(bare.url, headers={"Accept": ACCEPT_BOTH}, timeout=REPLY_TIMEOUT)
    assert get.status_code == 400 and HEADER_SESSION_ID.lower() in get.headers


def test_bare_sdk_unknown_tool_over_stdio(stdio_servers: dict[str, StdioServer]) -> None:
    reply = stdio_servers["bare"].call("tools/call", {"name": "get_wether", "arguments": {}})
    assert reply["result"]["isError"] is True


# --- defects are visible on the wire ---------------------------------------------------------


def test_defect_registry_is_complete() -> None:
    assert len(DEFECTS) >= 35
    assert all(name == defect.name and defect.description for name, defect in DEFECTS.items())
    listing = list_defects()
    assert all(name in listing for name in DEFECTS)
    for defect in DEFECTS.values():
        defect.build()  # every builder runs


def test_http_only_defect_is_refused_on_stdio() -> None:
    with pytest.raises(SystemExit):
        parse_args(["--stdio", "--defect", "get_allowed"])
    assert parse_args(["--stdio", "--defect", "no_discover"]).defect == "no_discover"


def test_all_variants_serve_every_variant_at_its_own_path_and_nothing_else(http_servers: dict[str, HttpServer]) -> None:
    # A request succeeds on every path only when the process ran every variant's own session manager.
    for name, server in http_servers.items():
        reply = server.call("tools/list")
        assert reply.status_code == 200 and reply.json()["result"]["tools"], (name, reply.status_code, reply.text[:300])
    assert http_servers["clean"].call("tools/call", {"name": "get_wether", "arguments": {}}).status_code == 400
    assert http_servers["unknown_tool_is_error"].call("tools/call", {"name": "get_wether", "arguments": {}}).json()["result"]["isError"] is True
    base = http_servers["clean"].url.removesuffix("/clean/mcp")
    for path in ("/", "/mcp", "/no_such_variant/mcp", "/clean/other"):
        assert httpx.post(base + path, content=b"{}", headers={"Content-Type": "application/json"}, timeout=REPLY_TIMEOUT).status_code == 404, path


def test_all_variants_refuses_stdio_and_single_variant_flags() -> None:
    assert parse_args(["--http", "--all-variants"]).all_variants
    for argv in (["--stdio", "--all-variants"], ["--http", "--all-variants", "--bare"], ["--http", "--all-variants", "--defect", "no_discover"]):
        with pytest.raises(SystemExit):
            parse_args(argv)


def test_defect_hands_out_session_id(http_servers: dict[str, HttpServer]) -> None:
    reply = http_servers["hands_out_session_id"].call("tools/list")
    assert reply.status_code == 200 and reply.headers.get(HEADER_SESSION_ID.lower())


def test_defect_ignore_version_header(http_servers: dict[str, HttpServer]) -> None:
    body = rpc_request("tools/list")
    reply = http_servers["ignore_version_header"].post(body, {**rpc_headers(body), HEADER_PROTOCOL_VERSION: LEGACY_PROTOCOL_VERSION})
    assert reply.status_code == 200 and "tools" in reply.json()["result"]


def test_defect_get_allowed(http_servers: dict[str, HttpServer]) -> None:
    reply = httpx.get(http_servers["get_allowed"].url, headers={"Accept": ACCEPT_BOTH}, timeout=REPLY_TIMEOUT)
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/event-stream")


def test_defect_structured_content_mismatch(http_servers: dict[str, HttpServer], tools: list[dict[str, Any]]) -> None:
    weather = next(tool for tool in tools if tool["name"] == "get_weather")
    reply = http_servers["structured_content_mismatch"].call("tools/call", {"name": "get_weather", "arguments": {"city": "Paris"}})
    content = reply.json()["result"]["structuredContent"]
    assert list(Draft202012Validator(weather["outputSchema"]).iter_errors(content))


def test_defect_no_discover_over_stdio(stdio_servers: dict[str, StdioServer]) -> None:
    assert stdio_servers["no_discover"].call("server/discover")["error"]["code"] == METHOD_NOT_FOUND


def test_defect_shuffle_tools_over_stdio(stdio_servers: dict[str, StdioServer]) -> None:
    server = stdio_servers["shuffle_tools"]
    first, second = ([t["name"] for t in server.call("tools/list")["result"]["tools"]] for _ in range(2))
    assert sorted(first) == sorted(second) and first != second


def test_defect_answers_ping_over_stdio(stdio_servers: dict[str, StdioServer]) -> None:
    assert stdio_servers["answers_ping"].call("ping") == {"jsonrpc": "2.0", "id": stdio_servers["answers_ping"]._next_id, "result": {}}
    assert stdio_servers["clean"].call("ping")["error"]["code"] == METHOD_NOT_FOUND


def test_defect_unknown_tool_is_error_over_stdio(stdio_servers: dict[str, StdioServer]) -> None:
    reply = stdio_servers["unknown_tool_is_error"].call("tools/call", {"name": "get_wether", "arguments": {}})
    assert reply["result"]["isError"] is True
