"""Check of `subscriptions/listen` (spec/basic/patterns/subscriptions.mdx), gated on the change notifications the server declares.

The stream stays open, so the check reads it only up to its first frame (the
acknowledgment is due first) and then ends the subscription as a client does:
over HTTP by closing the stream, over stdio with `notifications/cancelled`.
"""

from __future__ import annotations

from typing import Any

from evalcore.conformance.context import RunContext
from evalcore.conformance.registry import Verdict, check, failed, not_testable, passed
from evalcore.mcp.client import Exchange
from evalcore.mcp.protocol import constants as c
from evalcore.mcp.protocol.envelope import subscription_id
from evalcore.redaction import clip

SPEC = "docs/specification/2026-07-28/basic/patterns/subscriptions.mdx"
# capability path -> the filter field that opts in to its notifications (schema.json SubscriptionFilter)
LIST_CHANGED_FILTERS = {"tools": "toolsListChanged", "prompts": "promptsListChanged", "resources": "resourcesListChanged"}


async def _filter(ctx: RunContext) -> tuple[dict[str, Any], list[str]]:
    """The notifications to ask for: those the server says it sends; and the capabilities that say so."""
    capabilities = await ctx.capabilities()
    notifications: dict[str, Any] = {}
    declared: list[str] = []
    for capability, field in LIST_CHANGED_FILTERS.items():
        settings = capabilities.get(capability)
        if isinstance(settings, dict) and settings.get("listChanged") is True:
            notifications[field] = True
            declared.append(f"{capability}.listChanged")
    resources = capabilities.get("resources")
    if isinstance(resources, dict) and resources.get("subscribe") is True:
        uris = [str(r["uri"]) for r in (await ctx.listing("resources/list")).items[:1] if isinstance(r.get("uri"), str)]
        if uris:
            notifications["resourceSubscriptions"] = uris
            declared.append("resources.subscribe")
    return notifications, declared


@check(
    "subscriptions.listen_acknowledged",
    title="subscriptions/listen is acknowledged before anything else on the subscription",
    spec=SPEC,
    quote="The server **MUST** send `notifications/subscriptions/acknowledged` as the first message carrying the subscription's ID in "
    "`_meta` under `io.modelcontextprotocol/subscriptionId`, and **MUST NOT** send any notification on the subscription before it.",
)
async def listen_acknowledged(ctx: RunContext) -> Verdict:
    notifications, declared = await _filter(ctx)
    if not notifications:
        return not_testable("it declares no listChanged or resources.subscribe capability, so there is nothing to listen for")
    exchange = await ctx.listen(notifications)
    listen_id = exchange.request_ids[-1] if exchange.request_ids else None
    try:
        return _judge(exchange, listen_id, declared)
    finally:
        if not ctx.is_http and listen_id is not None and exchange.failure is None and exchange.response is None:
            # stdio has no stream to close: the client ends its subscription with notifications/cancelled.
            await ctx.notify("notifications/cancelled", {"requestId": listen_id, "reason": "conformance check done"})


def _judge(exchange: Exchange, listen_id: object, declared: list[str]) -> Verdict:
    messages = exchange.wire.messages
    if exchange.error is not None:
        return not_testable(f"it declares {', '.join(declared)} but refused subscriptions/listen: {exchange.describe()}")
    first = messages[0] if messages else None
    if first is None:
        return failed(f"no acknowledgment on the subscriptions/listen stream: {exchange.describe()}")
    if "result" in first or "error" in first:
        return failed(f"subscriptions/listen was answered with a response before any {c.SUBSCRIPTIONS_ACKNOWLEDGED}: {exchange.describe()}")
    if first.get("method") != c.SUBSCRIPTIONS_ACKNOWLEDGED:
        return failed(f"the first message on the subscription is {first.get('method')!r}, not {c.SUBSCRIPTIONS_ACKNOWLEDGED}")
    if subscription_id(first) != listen_id:
        return failed(f"the acknowledgment carries {c.META_SUBSCRIPTION_ID} {subscription_id(first)!r}; the listen request's id was {listen_id!r}")
    honoured = (first.get("params") or {}).get("notifications")
    if not isinstance(honoured, dict):
        return failed(f"the acknowledgment has no notifications filter (params.notifications): {clip(str(first.get('params')), 100)}")
    return passed(f"acknowledged, honouring {', '.join(sorted(honoured)) or 'nothing'} (asked for {', '.join(declared)})")
