"""Checks of HTTP-level behaviour: POST only, 202 for notifications, honest Content-Type, Origin validation."""

from __future__ import annotations

import asyncio

from evalcore.conformance.context import RunContext
from evalcore.conformance.registry import Verdict, check, failed, passed
from evalcore.mcp.client import Exchange
from evalcore.mcp.protocol import constants as c
from evalcore.redaction import clip

SPEC = "docs/specification/2026-07-28/basic/transports/streamable-http.mdx"
FOREIGN_ORIGIN = "http://evil.example"


OLD_CLIENT_TRAFFIC = (
    "A server that supports only this revision and receives such traffic from an older client **SHOULD** respond as follows: [...] "
    "HTTP GET or DELETE to the MCP endpoint: respond with `405 Method Not Allowed`."
)


async def _expect_405(ctx: RunContext, http_method: str) -> Verdict:
    # Sent as a 2025-11-25 client would, since that is the traffic the rule is about. The
    # transport reads only the status line of a GET: an event stream that stays open costs one short read.
    headers = {"Accept": c.CONTENT_TYPE_SSE, c.HEADER_PROTOCOL_VERSION: c.LEGACY_PROTOCOL_VERSION}
    exchange = await ctx.send_raw(b"", headers=headers, http_method=http_method, label=http_method)
    if exchange.failure is not None and exchange.status is None:
        return failed(f"{http_method}: {exchange.failure}")
    if exchange.status != 405:
        return failed(f"{http_method} answered HTTP {exchange.status}{_said(exchange)}; a 2026-07-28-only server SHOULD answer 405 (no GET stream, no DELETE)")
    return passed("405")


@check(
    "http_semantics.get_405",
    title="GET on the endpoint answers 405",
    spec=SPEC,
    level="SHOULD",
    http_only=True,
    quote=OLD_CLIENT_TRAFFIC,
    eras=("modern-only",),
)
async def get_405(ctx: RunContext) -> Verdict:
    return await _expect_405(ctx, "GET")


@check(
    "http_semantics.delete_405",
    title="DELETE on the endpoint answers 405",
    spec=SPEC,
    level="SHOULD",
    http_only=True,
    quote=OLD_CLIENT_TRAFFIC,
    eras=("modern-only",),
)
async def delete_405(ctx: RunContext) -> Verdict:
    return await _expect_405(ctx, "DELETE")


@check(
    "http_semantics.notification_202",
    title="an accepted notification answers 202 with no body",
    spec=SPEC,
    http_only=True,
    quote="If the server accepts it, the server **MUST** return HTTP status code `202 Accepted` with no body.",
)
async def notification_202(ctx: RunContext) -> Verdict:
    exchange = await ctx.notify("notifications/cancelled", {"requestId": f"evalcore-{ctx.nonce}", "reason": "conformance probe"})
    if exchange.status == 202 and not exchange.wire.body.strip():
        return passed("202, empty body")
    if exchange.status is not None and 400 <= exchange.status < 500:
        return passed(f"refused with HTTP {exchange.status} (allowed for a notification the server cannot accept)")
    return failed(f"notification answered HTTP {exchange.status} with {len(exchange.wire.body)} body bytes; expected 202 and no body")


@check(
    "http_semantics.content_type",
    title="request answers are application/json or text/event-stream",
    spec=SPEC,
    http_only=True,
    scan=True,
    quote="If the body is a JSON-RPC _request_, the server **MUST** return either `Content-Type: application/json` (a single JSON object) or "
    "`Content-Type: text/event-stream` (an SSE response stream).",
)
async def content_type(ctx: RunContext) -> Verdict:
    judged = 0
    for exchange in ctx.modern_exchanges():
        if "id" not in (exchange.request or {}) or exchange.response is None:
            continue
        media = (exchange.header("content-type") or "").split(";", 1)[0].strip().lower()
        if media not in (c.CONTENT_TYPE_JSON, c.CONTENT_TYPE_SSE):
            return failed(f"{exchange.method} answer labelled {media or 'with no Content-Type'!r}; must be application/json or text/event-stream")
        judged += 1
    return passed(f"{judged} answers correctly labelled")


@check(
    "http_semantics.origin_validation",
    title="a request with a foreign Origin is refused with 403",
    spec=SPEC,
    http_only=True,
    quote="If the `Origin` header is present and invalid, servers **MUST** respond with HTTP 403 Forbidden.",
)
async def origin_validation(ctx: RunContext) -> Verdict:
    exchange = await ctx.request("tools/list", headers={"Origin": FOREIGN_ORIGIN})
    if exchange.status != 403:
        return failed(
            f"tools/list with Origin: {FOREIGN_ORIGIN} answered HTTP {exchange.status}{_said(exchange)}; "
            "servers MUST validate Origin and answer 403 (DNS rebinding)"
        )
    return passed("403")


def _said(exchange: Exchange) -> str:
    """What the server said along with its status, for a check that judges the status alone."""
    error = exchange.error
    said = f"error {error.get('code')} {clip(str(error.get('message', '')), 100)!r}" if error else exchange.server_said()
    return f" ({said})" if said else ""


CONCURRENT_REQUESTS = 3


@check(
    "http_semantics.concurrent_streams",
    title="three requests POSTed at once are each answered on their own response, under their own id",
    spec="docs/specification/2026-07-28/basic/index.mdx",
    http_only=True,
    quote="Result responses **MUST** include the same ID as the request they correspond to.",
)
async def concurrent_streams(ctx: RunContext) -> Verdict:
    method = "tools/list" if "tools" in await ctx.capabilities() else "server/discover"
    exchanges = await asyncio.gather(*(ctx.request(method) for _ in range(CONCURRENT_REQUESTS)))
    sent = [exchange.request_ids[-1] if exchange.request_ids else None for exchange in exchanges]
    for exchange, own in zip(exchanges, sent, strict=True):
        others = [m.get("id") for m in exchange.wire.messages if ("result" in m or "error" in m) and m.get("id") in sent and m.get("id") != own]
        if others:
            return failed(f"{CONCURRENT_REQUESTS} concurrent {method} requests: the one with id {own!r} was answered with id {others[0]!r}")
        if exchange.response is None:
            return failed(f"{CONCURRENT_REQUESTS} concurrent {method} requests: the one with id {own!r} got no response under its id ({exchange.describe()})")
    return passed(f"{CONCURRENT_REQUESTS} concurrent {method} requests each answered under their own id")
