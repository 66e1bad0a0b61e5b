"""Checks of per-request `_meta` validation, and of every message against the official wire shapes."""

from __future__ import annotations

from evalcore.conformance.context import RunContext, error_shape
from evalcore.conformance.registry import Verdict, check, failed, passed
from evalcore.protocol import constants as c
from evalcore.protocol.wire_shapes import envelope_problem, result_problem

SPEC = "docs/specification/2026-07-28/basic/index.mdx"


async def _expect_meta_refused(ctx: RunContext, drop: str) -> Verdict:
    meta = {k: v for k, v in ctx.client.meta().items() if k != drop}
    exchange = await ctx.request("tools/list", meta=meta)
    problem = error_shape(exchange, c.INVALID_PARAMS, http_status=400, is_http=ctx.is_http)
    return failed(f"tools/list without _meta {drop}: {problem}") if problem else passed("-32602" + (" / HTTP 400" if ctx.is_http else ""))


@check("meta_validation.protocol_version_required", title="a request without _meta protocolVersion is -32602 (HTTP 400)", spec=SPEC)
async def protocol_version_required(ctx: RunContext) -> Verdict:
    return await _expect_meta_refused(ctx, c.META_PROTOCOL_VERSION)


@check("meta_validation.client_capabilities_required", title="a request without _meta clientCapabilities is -32602 (HTTP 400)", spec=SPEC)
async def client_capabilities_required(ctx: RunContext) -> Verdict:
    return await _expect_meta_refused(ctx, c.META_CLIENT_CAPABILITIES)


@check(
    "meta_validation.wire_shapes", title="every message validates against the official 2026-07-28 wire models", spec="schema/2026-07-28/schema.json", scan=True
)
async def wire_shapes(ctx: RunContext) -> Verdict:
    judged = 0
    for exchange in ctx.exchanges:
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
