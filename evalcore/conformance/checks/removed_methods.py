"""Checks that methods removed in 2026-07-28 are gone, and that no session is ever handed out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalcore.conformance.context import RunContext, error_shape
from evalcore.conformance.registry import Verdict, check, failed, passed
from evalcore.protocol import constants as c

SPEC = "docs/specification/2026-07-28/changelog.mdx"


async def _expect_removed(ctx: RunContext, method: str, params: Mapping[str, Any] | None = None) -> Verdict:
    exchange = await ctx.request(method, params)
    problem = error_shape(exchange, c.METHOD_NOT_FOUND, http_status=404, is_http=ctx.is_http)
    if problem:
        return failed(f"{method} is removed in 2026-07-28: {problem}")
    if exchange.header(c.HEADER_SESSION_ID) is not None:
        return failed(f"{method} answer hands out {c.HEADER_SESSION_ID}")
    return passed(f"{method}: -32601" + (" / HTTP 404" if ctx.is_http else ""))


@check(
    "removed_methods.initialize",
    title="initialize is refused (HTTP: 404 -32601) and opens no session",
    spec="docs/specification/2026-07-28/basic/versioning.mdx",
)
async def initialize(ctx: RunContext) -> Verdict:
    params = {"protocolVersion": c.PROTOCOL_VERSION, "capabilities": {}, "clientInfo": {"name": "evalcore", "version": "0"}}
    if ctx.is_http:
        return await _expect_removed(ctx, "initialize", params)
    # On stdio the spec leaves the error code to the implementation (versioning.mdx,
    # compatibility matrix); what matters is that the handshake is refused.
    exchange = await ctx.request("initialize", params)
    if exchange.error is None:
        return failed(f"initialize must be refused with a JSON-RPC error by a 2026-07-28-only server; got {exchange.describe()}")
    return passed(f"refused with {exchange.error_code}")


@check("removed_methods.ping", title="ping answers -32601 (HTTP 404)", spec=SPEC)
async def ping(ctx: RunContext) -> Verdict:
    return await _expect_removed(ctx, "ping")


@check("removed_methods.logging_set_level", title="logging/setLevel answers -32601 (HTTP 404)", spec=SPEC)
async def logging_set_level(ctx: RunContext) -> Verdict:
    return await _expect_removed(ctx, "logging/setLevel", {"level": "info"})


@check("removed_methods.resources_subscribe", title="resources/subscribe answers -32601 (HTTP 404); subscriptions/listen replaces it", spec=SPEC)
async def resources_subscribe(ctx: RunContext) -> Verdict:
    return await _expect_removed(ctx, "resources/subscribe", {"uri": "evalcore://any"})


@check("removed_methods.no_session_id", title="no response ever carries Mcp-Session-Id", spec=SPEC, http_only=True, scan=True)
async def no_session_id(ctx: RunContext) -> Verdict:
    for exchange in ctx.exchanges:
        session = exchange.header(c.HEADER_SESSION_ID)
        if session is not None:
            return failed(f"{exchange.describe()} handed out {c.HEADER_SESSION_ID}: {session[:40]} (2026-07-28 has no sessions)")
    return passed(f"{len(ctx.exchanges)} responses without a session id")
