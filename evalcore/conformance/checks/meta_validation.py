"""Checks of per-request `_meta` validation, and of every message against the official wire shapes."""

from __future__ import annotations

from evalcore.conformance.context import RunContext, error_shape
from evalcore.conformance.registry import Verdict, check, failed, not_applicable, passed
from evalcore.mcp.protocol import constants as c
from evalcore.mcp.protocol.wire_shapes import envelope_problem, result_problem

SPEC = "docs/specification/2026-07-28/basic/index.mdx"


MALFORMED = (
    "A request missing any required field is malformed; the server **MUST** reject it with JSON-RPC error code `-32602` (Invalid params). "
    "On HTTP, the response status **MUST** be `400 Bad Request`."
)


async def _expect_meta_refused(ctx: RunContext, drop: str) -> Verdict:
    if drop == c.META_PROTOCOL_VERSION and not ctx.is_http and ctx.era == "dual-era":
        return not_applicable("over stdio a request without a protocol version is legacy-shaped, which a dual-era server may answer the legacy way")
    meta = {k: v for k, v in ctx.client.meta().items() if k != drop}
    exchange = await ctx.request("tools/list", meta=meta)
    problem = error_shape(exchange, c.INVALID_PARAMS, http_status=400, is_http=ctx.is_http)
    return failed(f"tools/list without _meta {drop}: {problem}") if problem else passed("-32602" + (" / HTTP 400" if ctx.is_http else ""))


@check("meta_validation.protocol_version_required", title="a request without _meta protocolVersion is -32602 (HTTP 400)", spec=SPEC, quote=MALFORMED)
async def protocol_version_required(ctx: RunContext) -> Verdict:
    return await _expect_meta_refused(ctx, c.META_PROTOCOL_VERSION)


@check("meta_validation.client_capabilities_required", title="a request without _meta clientCapabilities is -32602 (HTTP 400)", spec=SPEC, quote=MALFORMED)
async def client_capabilities_required(ctx: RunContext) -> Verdict:
    return await _expect_meta_refused(ctx, c.META_CLIENT_CAPABILITIES)


@check(
    "meta_validation.wire_shapes",
    title="every answer to a 2026-07-28 request validates against the official 2026-07-28 wire models",
    spec=SPEC,
    scan=True,
    quote="All messages between MCP clients and servers **MUST** follow the JSON-RPC 2.0 specification.",
)
async def wire_shapes(ctx: RunContext) -> Verdict:
    judged = 0
    for exchange in ctx.modern_exchanges():
        for message in exchange.wire.messages:
            judged += 1
            problem = envelope_problem(message)
            if problem:
                return failed(f"{exchange.method}: not a valid JSON-RPC message: {problem}")
            result = message.get("result")
            if isinstance(result, dict) and message.get("id") in exchange.request_ids:
                problem = result_problem(exchange.method, result)
                if problem:
                    return failed(f"{exchange.method} result does not match the official model: {problem}")
    return passed(f"{judged} messages valid")
