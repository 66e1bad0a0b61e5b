"""Checks of cursor pagination (spec/server/utilities/pagination.mdx) on every list the server declares."""

from __future__ import annotations

from evalcore.conformance.context import LIST_KEYS, MAX_PAGES, RunContext, error_shape
from evalcore.conformance.registry import Verdict, check, failed, passed
from evalcore.mcp.protocol import constants as c

SPEC = "docs/specification/2026-07-28/server/utilities/pagination.mdx"


async def _declared_lists(ctx: RunContext) -> list[str]:
    return [method for method in LIST_KEYS if await ctx.supports(method)]


@check(
    "pagination.cursors_end",
    title=f"every list's cursors end within {MAX_PAGES} pages, with no cursor or item repeated",
    spec=SPEC,
    level="SHOULD",
    quote="Servers **SHOULD**: Provide stable cursors",
)
async def cursors_end(ctx: RunContext) -> Verdict:
    pages = 0
    for method in await _declared_lists(ctx):
        listing = await ctx.listing(method)
        pages += len(listing.exchanges)
        if listing.problem is not None and "still paginating" in listing.problem:
            return failed(listing.problem)
        cursors = [e.request.get("params", {}).get("cursor") for e in listing.exchanges if e.request is not None]
        seen = [cursor for cursor in cursors if cursor is not None]
        if len(seen) != len(set(seen)):
            return failed(f"{method} handed out the same nextCursor twice: the walk loops")
        names = listing.names()
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated and len(listing.exchanges) > 1:
            return failed(f"{method} repeats {repeated[:3]} across pages")
    return passed(f"{pages} pages walked")


@check(
    "pagination.invalid_cursor",
    title="a list request with an invalid cursor is -32602",
    spec=SPEC,
    level="SHOULD",
    quote="Invalid cursors **SHOULD** result in an error with code -32602 (Invalid params).",
)
async def invalid_cursor(ctx: RunContext) -> Verdict:
    exchange = await ctx.request("tools/list", {"cursor": f"evalcore-not-a-cursor-{ctx.nonce}"})
    problem = error_shape(exchange, c.INVALID_PARAMS, http_status=None, is_http=ctx.is_http)
    return failed(f"tools/list with an invalid cursor: {problem}") if problem else passed("-32602")
