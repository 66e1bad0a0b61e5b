"""Checks that list results come back in a deterministic order (clients cache and diff them)."""

from __future__ import annotations

from evalcore.conformance.context import RunContext
from evalcore.conformance.registry import Verdict, check, failed, passed, skipped

SPEC = "docs/specification/2026-07-28/server/utilities/caching.mdx"
REPEATS = 3


async def _order_problem(ctx: RunContext, method: str) -> str | None:
    orders = []
    for _ in range(REPEATS):
        listing = await ctx.listing(method, fresh=True)
        if listing.problem is not None:
            return f"{method}: {listing.problem}"
        orders.append(listing.names())
    if any(order != orders[0] for order in orders[1:]):
        return f"{method} order changed between calls: {orders[0][:4]} vs {next(o for o in orders if o != orders[0])[:4]}"
    return None


@check("list_order.tools", title="tools/list order is identical across calls", spec=SPEC, level="SHOULD")
async def tools(ctx: RunContext) -> Verdict:
    problem = await _order_problem(ctx, "tools/list")
    return failed(problem) if problem else passed(f"same order in {REPEATS} calls")


@check("list_order.prompts_resources", title="prompts/list and resources/list orders are stable", spec=SPEC, level="SHOULD")
async def prompts_resources(ctx: RunContext) -> Verdict:
    methods = [m for m in ("prompts/list", "resources/list", "resources/templates/list") if await ctx.supports(m)]
    if not methods:
        return skipped("server advertises neither prompts nor resources")
    for method in methods:
        problem = await _order_problem(ctx, method)
        if problem:
            return failed(problem)
    return passed(f"{', '.join(methods)}: same order in {REPEATS} calls")
