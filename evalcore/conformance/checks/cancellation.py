"""Check of `notifications/cancelled` handling (spec/basic/patterns/cancellation.mdx), over both transports.

The check cancels a request the server has already answered: the race the
spec says both sides must take in their stride. Over HTTP the notification
POST gets its transport answer (202 and no body, or an HTTP error status for a
notification the server does not accept); over stdio nothing answers it. Either
way the server goes on serving.
"""

from __future__ import annotations

import json

from evalcore.conformance.context import RunContext
from evalcore.conformance.registry import Verdict, check, failed, not_testable, passed
from evalcore.redaction import clip

SPEC = "docs/specification/2026-07-28/basic/patterns/cancellation.mdx"


@check(
    "cancellation.notification_accepted",
    title="a notifications/cancelled for a request already answered is taken quietly, and the server keeps serving",
    spec=SPEC,
    quote="Both parties **MUST** handle these race conditions gracefully",
)
async def notification_accepted(ctx: RunContext) -> Verdict:
    answered = (await ctx.listing("tools/list")).exchanges
    request_ids = answered[0].request_ids if answered else ()
    if not request_ids or answered[0].response is None:
        return not_testable("no answered request to cancel (tools/list got no response)")
    strays_before = len(ctx.stray_messages())
    cancelled = await ctx.notify("notifications/cancelled", {"requestId": request_ids[-1], "reason": "conformance check: request already answered"})
    if ctx.is_http:
        accepted = cancelled.status == 202 and not cancelled.wire.body.strip()
        refused = cancelled.status is not None and 400 <= cancelled.status < 500
        if not (accepted or refused):
            said = f" ({cancelled.server_said()})" if cancelled.server_said() else ""
            return failed(f"notifications/cancelled answered {cancelled.describe()}{said}; expected 202 with no body (or an HTTP 4xx refusal)")
    after = await ctx.request("tools/list")
    if after.response is None:
        return failed(f"after notifications/cancelled for request {request_ids[-1]!r} (already answered), the next request got {after.describe()}")
    replies = [m for m in ctx.stray_messages()[strays_before:] if ("result" in m or "error" in m) and m.get("id") is None]
    if replies:
        return failed(f"the server answered the notifications/cancelled notification: {clip(json.dumps(replies[0]), 160)} (a notification gets no response)")
    how = f"HTTP {cancelled.status}" if ctx.is_http else "no response"
    return passed(f"{how}; the next request was served")
