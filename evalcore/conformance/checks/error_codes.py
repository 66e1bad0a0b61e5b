"""Checks of the error paths: -32602 for unknown tools and resources, -32022 and -32021 with their data, no retired codes."""

from __future__ import annotations

from evalcore.conformance.context import RunContext, error_shape
from evalcore.conformance.registry import Verdict, check, failed, not_testable, passed
from evalcore.mcp.client import Exchange
from evalcore.mcp.protocol import constants as c

SPEC = "docs/specification/2026-07-28/basic/index.mdx"
BOGUS_VERSION = "1900-01-01"


@check(
    "error_codes.unknown_tool",
    title="tools/call of an unknown tool is protocol error -32602",
    spec="schema/2026-07-28/schema.json",
    level="SHOULD",
    # The spec states it in the CallToolResult description (lower case), and shows -32602 in server/tools.mdx "Error Handling".
    quote="any errors in _finding_ the tool, an error indicating that the server does not support tool calls, "
    "or any other exceptional conditions, should be reported as an MCP error response.",
)
async def unknown_tool(ctx: RunContext) -> Verdict:
    name = f"evalcore_no_such_tool_{ctx.nonce}"
    exchange = await ctx.request("tools/call", {"name": name, "arguments": {}})
    result = exchange.result
    if result is not None and result.get("isError") is True:
        return failed("unknown tool answered as an isError tool result; it should be JSON-RPC error -32602 (isError is for execution failures)")
    problem = error_shape(exchange, c.INVALID_PARAMS, http_status=None, is_http=ctx.is_http)
    return failed(problem) if problem else passed("-32602")


@check(
    "error_codes.missing_resource",
    title="resources/read of a missing resource is -32602 (not the retired -32002)",
    spec="docs/specification/2026-07-28/server/resources.mdx",
    quote="If the requested resource does not exist, servers **MUST** return a JSON-RPC error with code `-32602` (Invalid Params).",
)
async def missing_resource(ctx: RunContext) -> Verdict:
    if not await ctx.supports("resources/list"):
        return not_testable("it declares no resources capability")
    exchange = await ctx.request("resources/read", {"uri": f"evalcore://no-such-resource/{ctx.nonce}"})
    problem = error_shape(exchange, c.INVALID_PARAMS, http_status=None, is_http=ctx.is_http)
    return failed(problem) if problem else passed("-32602")


@check(
    "error_codes.unsupported_version",
    title="an unsupported version is -32022 with data.supported and data.requested",
    spec="docs/specification/2026-07-28/basic/transports/streamable-http.mdx",
    quote="If the server does not implement the requested protocol version (whether the version is unknown to the server, or is a known "
    "version the server has chosen not to support), it **MUST** respond with `400 Bad Request` and an `UnsupportedProtocolVersionError` "
    "listing its supported versions.",
)
async def unsupported_version(ctx: RunContext) -> Verdict:
    exchange = await ctx.request("tools/list", protocol_version=BOGUS_VERSION)
    problem = error_shape(exchange, c.UNSUPPORTED_PROTOCOL_VERSION, http_status=400, is_http=ctx.is_http)
    if problem:
        return failed(problem)
    data = (exchange.error or {}).get("data")
    if not isinstance(data, dict) or not isinstance(data.get("supported"), list):
        return failed(f"-32022 must carry data.supported (the versions the server speaks); got data={data!r}")
    if c.PROTOCOL_VERSION not in data["supported"]:
        return failed(f"-32022 data.supported {data['supported']} omits {c.PROTOCOL_VERSION}")
    if data.get("requested") != BOGUS_VERSION:
        return failed(f"-32022 data.requested should echo {BOGUS_VERSION!r}, got {data.get('requested')!r}")
    return passed(f"-32022, supported={data['supported']}")


@check(
    "error_codes.missing_capability",
    title="every -32021 carries data.requiredCapabilities (HTTP 400)",
    spec=SPEC,
    scan=True,
    quote="If processing a request requires a capability the client did not include in `io.modelcontextprotocol/clientCapabilities`, the server "
    "**MUST** return a `MissingRequiredClientCapabilityError` (`-32021`) whose `data.requiredCapabilities` lists the missing capabilities. "
    "On HTTP, the response status **MUST** be `400 Bad Request`.",
)
async def missing_capability(ctx: RunContext) -> Verdict:
    seen = [e for e in ctx.exchanges if e.error_code == c.MISSING_REQUIRED_CLIENT_CAPABILITY]
    if not seen:
        return not_testable("no request in this run triggered -32021 (tools that need client capabilities are called only with --call-tools all)")
    for exchange in seen:
        data = (exchange.error or {}).get("data")
        if not isinstance(data, dict) or not isinstance(data.get("requiredCapabilities"), dict):
            return failed(f"{exchange.method}: -32021 without data.requiredCapabilities (got data={data!r})")
        if ctx.is_http and exchange.status != 400:
            return failed(f"{exchange.method}: -32021 came with HTTP {exchange.status}, expected 400")
    return passed(f"{len(seen)} -32021 errors well-formed")


@check(
    "error_codes.retired_codes",
    title="no retired code (-32002, -32042) and no undefined code of the spec's -32020..-32099 range is emitted",
    spec=SPEC,
    scan=True,
    quote="Implementations of this protocol version **MUST NOT** emit these codes",
)
async def retired_codes(ctx: RunContext) -> Verdict:
    errors = 0
    for exchange, code in _error_codes(ctx):
        errors += 1
        if code in c.FORBIDDEN_ERROR_CODES:
            return failed(f"{exchange.describe()}: {code} is retired ({c.RETIRED_ERROR_CODES[code]})")
        if code in c.SPEC_CODE_RANGE and code not in c.SPEC_DEFINED_CODES:
            return failed(f"{exchange.describe()}: {code} is in the range reserved for the spec, which does not define it")
    return passed(f"{errors} error responses to 2026-07-28 requests, none with a retired code")


@check(
    "error_codes.legacy_range",
    title="no code from the legacy -32000..-32019 range (draft -32001, -32003, -32004 included)",
    spec=SPEC,
    scan=True,
    level="SHOULD",
    quote="New codes **MUST NOT** be allocated in this sub-range, and new implementations **SHOULD NOT** use codes from this sub-range at all.",
)
async def legacy_range(ctx: RunContext) -> Verdict:
    for exchange, code in _error_codes(ctx):
        if code in c.LEGACY_CODE_RANGE:
            draft = c.RETIRED_ERROR_CODES.get(code)
            return failed(f"{exchange.describe()}: {code} is in the legacy -32000..-32019 range" + (f" ({draft})" if draft else ""))
    return passed("no legacy-range codes in answers to 2026-07-28 requests")


def _error_codes(ctx: RunContext) -> list[tuple[Exchange, int]]:
    """(exchange, code) for every error message in answers to 2026-07-28-shaped requests."""
    found = []
    for exchange in ctx.modern_exchanges():
        for message in exchange.wire.messages:
            error = message.get("error")
            code = error.get("code") if isinstance(error, dict) else None
            if isinstance(code, int):
                found.append((exchange, code))
    return found
