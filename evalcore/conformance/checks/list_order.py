"""Checks that tools/list comes back in a deterministic order (clients cache and diff it).

The spec asks this of tools only; prompts and resources have no ordering rule.
"""

from __future__ import annotations

from evalcore.conformance.context import RunContext
from evalcore.conformance.registry import Verdict, check, failed, passed

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


@check(
    "list_order.tools",
    title="tools/list order is identical across calls",
    spec="docs/specification/2026-07-28/server/tools.mdx",
    level="SHOULD",
    quote="Servers **SHOULD** return tools in a deterministic order "
    "(i.e., the same ordering across requests when the underlying set of tools has not changed).",
)
async def tools(ctx: RunContext) -> Verdict:
    problem = await _order_problem(ctx, "tools/list")
    return failed(problem) if problem else passed(f"same order in {REPEATS} calls")
