"""Checks of HTTP-level behaviour: POST only, 202 for notifications, honest Content-Type, Origin validation."""

from __future__ import annotations

from evalcore.conformance.context import RunContext
from evalcore.conformance.registry import Verdict, check, failed, passed, skipped
from evalcore.protocol import constants as c

SPEC = "docs/specification/2026-07-28/basic/transports/streamable-http.mdx"
FOREIGN_ORIGIN = "http://evil.example"


async def _expect_405(ctx: RunContext, http_method: str) -> Verdict:
    if c.LEGACY_PROTOCOL_VERSION in await ctx.supported_versions():
        return skipped(f"server also supports {c.LEGACY_PROTOCOL_VERSION}, whose clients may GET a stream and DELETE a session")
    # Sent as a 2025-11-25 client would, since that is the traffic the rule is about.
    headers = {"Accept": c.CONTENT_TYPE_SSE, c.HEADER_PROTOCOL_VERSION: c.LEGACY_PROTOCOL_VERSION}
    exchange = await ctx.send_raw(b"", headers=headers, http_method=http_method, label=http_method)
    if exchange.failure is not None and exchange.status is None:
        return failed(f"{http_method}: {exchange.failure}")
    if exchange.status != 405:
        return failed(f"{http_method} answered HTTP {exchange.status}; a 2026-07-28-only server SHOULD answer 405 (no GET stream, no DELETE)")
    return passed("405")


@check("http_semantics.get_405", title="GET on the endpoint answers 405", spec=SPEC, level="SHOULD", http_only=True)
async def get_405(ctx: RunContext) -> Verdict:
    return await _expect_405(ctx, "GET")


@check("http_semantics.delete_405", title="DELETE on the endpoint answers 405", spec=SPEC, level="SHOULD", http_only=True)
async def delete_405(ctx: RunContext) -> Verdict:
    return await _expect_405(ctx, "DELETE")


@check("http_semantics.notification_202", title="an accepted notification answers 202 with no body", spec=SPEC, http_only=True)
async def notification_202(ctx: RunContext) -> Verdict:
    exchange = await ctx.notify("notifications/cancelled", {"requestId": f"evalcore-{ctx.nonce}", "reason": "conformance probe"})
    if exchange.status == 202 and not exchange.wire.body.strip():
        return passed("202, empty body")
    if exchange.status is not None and 400 <= exchange.status < 500:
        return passed(f"refused with HTTP {exchange.status} (allowed for a notification the server cannot accept)")
    return failed(f"notification answered HTTP {exchange.status} with {len(exchange.wire.body)} body bytes; expected 202 and no body")


@check("http_semantics.content_type", title="request answers are application/json or text/event-stream", spec=SPEC, http_only=True, scan=True)
async def content_type(ctx: RunContext) -> Verdict:
    judged = 0
    for exchange in ctx.exchanges:
        if exchange.request is None or "id" not in exchange.request or exchange.response is None:
            continue
        media = (exchange.header("content-type") or "").split(";", 1)[0].strip().lower()
        if media not in (c.CONTENT_TYPE_JSON, c.CONTENT_TYPE_SSE):
            return failed(f"{exchange.method} answer labelled {media or 'with no Content-Type'!r}; must be application/json or text/event-stream")
        judged += 1
    return passed(f"{judged} answers correctly labelled")


@check("http_semantics.origin_validation", title="a request with a foreign Origin is refused with 403", spec=SPEC, http_only=True)
async def origin_validation(ctx: RunContext) -> Verdict:
    exchange = await ctx.request("tools/list", headers={"Origin": FOREIGN_ORIGIN})
    if exchange.status != 403:
        return failed(f"tools/list with Origin: {FOREIGN_ORIGIN} answered HTTP {exchange.status}; servers MUST validate Origin and answer 403 (DNS rebinding)")
    return passed("403")
