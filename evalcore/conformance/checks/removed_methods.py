"""Checks that methods removed in 2026-07-28 (and methods no revision defines) are not served, and that no session is ever handed out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalcore.conformance.context import RunContext, error_shape
from evalcore.conformance.registry import Verdict, check, failed, not_applicable, not_testable, passed
from evalcore.mcp.protocol import constants as c
from evalcore.redaction import clip

SPEC_HTTP = "docs/specification/2026-07-28/basic/transports/streamable-http.mdx"
NOT_IMPLEMENTED = (
    "If the server does not implement the requested RPC method, it **MUST** respond with `404 Not Found` and a JSON-RPC error "
    "with code `-32601` (`Method not found`)."
)

UNKNOWN_METHOD = "evalcore/no_such_method"  # in no revision of the spec, under a prefix no server owns


async def _expect_removed(ctx: RunContext, method: str, params: Mapping[str, Any] | None = None) -> Verdict:
    exchange = await ctx.request(method, params)
    problem = error_shape(exchange, c.METHOD_NOT_FOUND, http_status=404, is_http=ctx.is_http)
    if problem:
        gone = "defined by no revision" if method == UNKNOWN_METHOD else "removed in 2026-07-28"
        return failed(f"{method} is {gone}: {problem}")
    if exchange.header(c.HEADER_SESSION_ID) is not None:
        return failed(f"{method} answer hands out {c.HEADER_SESSION_ID}")
    return passed(f"{method}: -32601" + (" / HTTP 404" if ctx.is_http else ""))


@check(
    "removed_methods.initialize",
    title="initialize with the 2026 envelope is refused (HTTP: 404 -32601) and opens no session",
    spec=SPEC_HTTP,
    quote=NOT_IMPLEMENTED,
)
async def initialize(ctx: RunContext) -> Verdict:
    # A request carrying the 2026-07-28 envelope is a 2026-07-28 request, whatever else the server speaks
    # (versioning.mdx: "A request carrying modern per-request `_meta` is served statelessly according to this
    # revision"); so a dual-era server owes it the same answer as a modern-only one.
    params = {"protocolVersion": c.PROTOCOL_VERSION, "capabilities": {}, "clientInfo": {"name": "evalcore", "version": "0"}}
    if ctx.is_http:
        return await _expect_removed(ctx, "initialize", params)
    if ctx.era != "modern-only":
        # One process is the whole run: an initialize a dual-era server takes the legacy way would turn the
        # process legacy for every check after it.
        return not_applicable("over stdio an initialize may select legacy semantics for the whole process of a dual-era server")
    # On stdio the spec leaves the error code to the implementation (versioning.mdx,
    # compatibility matrix); what matters is that the handshake is refused.
    exchange = await ctx.request("initialize", params)
    if exchange.error is None:
        return failed(f"initialize must be refused with a JSON-RPC error by a 2026-07-28-only server; got {exchange.describe()}")
    return passed(f"refused with {exchange.error_code}")


@check(
    "removed_methods.initialize_names_versions",
    title="a refused legacy initialize names the versions the server supports",
    spec="docs/specification/2026-07-28/basic/versioning.mdx",
    level="SHOULD",
    quote="A server that supports only modern versions **SHOULD** name the protocol versions it supports in any error it returns to an "
    "`initialize` request, on any transport",
    eras=("modern-only",),
)
async def initialize_names_versions(ctx: RunContext) -> Verdict:
    refusals = [probe for probe in (ctx.profile.legacy if ctx.profile else ()) if probe.accepted is None]
    if not refusals:
        return not_testable("the era probe's legacy initialize got no answer to read")
    for probe in refusals:
        if c.PROTOCOL_VERSION not in probe.refusal:
            return failed(f"legacy initialize {probe.requested} refused without naming {c.PROTOCOL_VERSION}: {probe.answer}")
    return passed(f"the refusal names {c.PROTOCOL_VERSION}")


@check("removed_methods.unknown_method", title="a method no revision defines answers -32601 (HTTP 404)", spec=SPEC_HTTP, quote=NOT_IMPLEMENTED)
async def unknown_method(ctx: RunContext) -> Verdict:
    return await _expect_removed(ctx, UNKNOWN_METHOD)


@check("removed_methods.ping", title="ping answers -32601 (HTTP 404)", spec=SPEC_HTTP, quote=NOT_IMPLEMENTED)
async def ping(ctx: RunContext) -> Verdict:
    return await _expect_removed(ctx, "ping")


@check("removed_methods.logging_set_level", title="logging/setLevel answers -32601 (HTTP 404)", spec=SPEC_HTTP, quote=NOT_IMPLEMENTED)
async def logging_set_level(ctx: RunContext) -> Verdict:
    return await _expect_removed(ctx, "logging/setLevel", {"level": "info"})


@check(
    "removed_methods.resources_subscribe",
    title="resources/subscribe answers -32601 (HTTP 404); subscriptions/listen replaces it",
    spec=SPEC_HTTP,
    quote=NOT_IMPLEMENTED,
)
async def resources_subscribe(ctx: RunContext) -> Verdict:
    return await _expect_removed(ctx, "resources/subscribe", {"uri": "evalcore://any"})


@check(
    "removed_methods.no_session_id",
    title="no answer to a 2026-07-28 request (to any request, for a modern-only server) carries Mcp-Session-Id",
    spec=SPEC_HTTP,
    level="SHOULD",
    quote="A server that supports only this revision and receives such traffic from an older client **SHOULD** respond as follows: [...] "
    "An `Mcp-Session-Id` header on a request: ignore it, and do not mint or echo session IDs.",
    http_only=True,
    scan=True,
)
async def no_session_id(ctx: RunContext) -> Verdict:
    # A dual-era server may serve deliberately legacy-shaped requests the legacy way, sessions included.
    judged = ctx.exchanges if ctx.era == "modern-only" else ctx.modern_exchanges()
    for exchange in judged:
        session = exchange.header(c.HEADER_SESSION_ID)
        if session is not None:
            return failed(f"{exchange.describe()} handed out {c.HEADER_SESSION_ID}: {clip(session, 40)} (2026-07-28 has no sessions)")
    return passed(f"{len(judged)} responses without a session id")
