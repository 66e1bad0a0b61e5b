"""Checks of the error paths: -32602 for unknown tools and resources, -32022 and -32021 with their data, no retired codes."""

from __future__ import annotations

from evalcore.conformance.context import RunContext, error_shape
from evalcore.conformance.registry import Verdict, check, failed, passed, skipped
from evalcore.protocol import constants as c

SPEC = "docs/specification/2026-07-28/basic/index.mdx"
BOGUS_VERSION = "1900-01-01"


@check("error_codes.unknown_tool", title="tools/call of an unknown tool is protocol error -32602", spec="docs/specification/2026-07-28/server/tools.mdx")
async def unknown_tool(ctx: RunContext) -> Verdict:
    name = f"evalcore_no_such_tool_{ctx.nonce}"
    exchange = await ctx.request("tools/call", {"name": name, "arguments": {}})
    result = exchange.result
    if result is not None and result.get("isError") is True:
        return failed("unknown tool answered as an isError tool result; 2026-07-28 requires JSON-RPC error -32602 (isError is for execution failures)")
    problem = error_shape(exchange, c.INVALID_PARAMS, http_status=None, is_http=ctx.is_http)
    return failed(problem) if problem else passed("-32602")


@check("error_codes.missing_resource", title="resources/read of a missing resource is -32602 (not the retired -32002)", spec=SPEC)
async def missing_resource(ctx: RunContext) -> Verdict:
    if not await ctx.supports("resources/list"):
        return skipped("server does not advertise resources")
    exchange = await ctx.request("resources/read", {"uri": f"evalcore://no-such-resource/{ctx.nonce}"})
    problem = error_shape(exchange, c.INVALID_PARAMS, http_status=None, is_http=ctx.is_http)
    return failed(problem) if problem else passed("-32602")


@check("error_codes.unsupported_version", title="an unsupported version is -32022 with data.supported and data.requested", spec=SPEC)
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


@check("error_codes.missing_capability", title="every -32021 carries data.requiredCapabilities (HTTP 400)", spec=SPEC, scan=True)
async def missing_capability(ctx: RunContext) -> Verdict:
    seen = [e for e in ctx.exchanges if e.error_code == c.MISSING_REQUIRED_CLIENT_CAPABILITY]
    if not seen:
        return skipped("no request in this run triggered -32021 (tools that need client capabilities are called only with --call-tools all)")
    for exchange in seen:
        data = (exchange.error or {}).get("data")
        if not isinstance(data, dict) or not isinstance(data.get("requiredCapabilities"), dict):
            return failed(f"{exchange.method}: -32021 without data.requiredCapabilities (got data={data!r})")
        if ctx.is_http and exchange.status != 400:
            return failed(f"{exchange.method}: -32021 came with HTTP {exchange.status}, expected 400")
    return passed(f"{len(seen)} -32021 errors well-formed")


@check("error_codes.retired_codes", title="no retired error code (-32001..-32004, -32042) is ever emitted", spec=SPEC, scan=True)
async def retired_codes(ctx: RunContext) -> Verdict:
    errors = 0
    for exchange in ctx.exchanges:
        for message in exchange.wire.messages:
            error = message.get("error")
            code = error.get("code") if isinstance(error, dict) else None
            if code is None:
                continue
            errors += 1
            if code in c.RETIRED_ERROR_CODES:
                return failed(f"{exchange.method} answered retired code {code} ({c.RETIRED_ERROR_CODES[code]})")
    return passed(f"{errors} error responses seen, none with a retired code")
