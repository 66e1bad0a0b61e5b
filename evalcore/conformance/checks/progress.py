"""Checks of progress notifications (spec/basic/patterns/progress.mdx) on the tool calls the suite makes anyway.

Every tools/call of the suite carries its own `progressToken` in `_meta` (`RunContext.tool_calls`), so no request
is added: the notifications a tool sends on its response stream are judged, and a server that sends none breaks
nothing (it MAY send them), so that reads not testable, never passed.
"""

from __future__ import annotations

from typing import Any

from evalcore.conformance.context import RunContext
from evalcore.conformance.registry import Verdict, check, failed, not_testable, passed

SPEC = "docs/specification/2026-07-28/basic/patterns/progress.mdx"


def _progress_of(call_messages: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
    return [m for m in call_messages if m.get("method") == "notifications/progress" and "id" not in m]


def _token_sent(request: dict[str, Any] | None) -> object:
    params = (request or {}).get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get("progressToken") if isinstance(meta, dict) else None


@check(
    "progress.token_referenced",
    title="every progress notification a tools/call gets references that call's progressToken",
    spec=SPEC,
    quote="Progress notifications **MUST** only reference tokens that: Were provided in an active request; Are associated with an in-progress operation",
)
async def token_referenced(ctx: RunContext) -> Verdict:
    calls = await ctx.tool_calls()
    if not calls:
        return not_testable(f"no tool may be called under --call-tools {ctx.tool_policy}")
    seen = 0
    for call in calls:
        token = _token_sent(call.exchange.request)
        for notification in _progress_of(call.exchange.wire.messages):
            seen += 1
            params = notification.get("params")
            referenced = params.get("progressToken") if isinstance(params, dict) else None
            if referenced != token:
                return failed(f"tools/call {call.tool.get('name')} with progressToken {token!r} got a progress notification for {referenced!r}")
    if not seen:
        return not_testable(f"none of {len(calls)} tool calls with a progressToken sent progress (a server MAY send none)")
    return passed(f"{seen} progress notifications referenced their call's token")


@check(
    "progress.increases",
    title="the progress value of a call's notifications is a number that increases with each one",
    spec=SPEC,
    quote="The `progress` value **MUST** increase with each notification, even if the total is unknown.",
)
async def increases(ctx: RunContext) -> Verdict:
    calls = await ctx.tool_calls()
    if not calls:
        return not_testable(f"no tool may be called under --call-tools {ctx.tool_policy}")
    seen = 0
    for call in calls:
        previous: float | None = None
        for notification in _progress_of(call.exchange.wire.messages):
            seen += 1
            params = notification.get("params")
            value = params.get("progress") if isinstance(params, dict) else None
            if not isinstance(value, int | float) or isinstance(value, bool):
                return failed(f"tools/call {call.tool.get('name')}: a progress notification carries progress {value!r}, not a number")
            if previous is not None and value <= previous:
                return failed(f"tools/call {call.tool.get('name')}: progress went from {previous} to {value}")
            previous = value
    if not seen:
        return not_testable(f"none of {len(calls)} tool calls with a progressToken sent progress (a server MAY send none)")
    return passed(f"{seen} progress notifications, increasing per call")
