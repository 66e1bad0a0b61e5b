"""Checks of the caching fields every cacheable complete result MUST carry (`ttlMs`, `cacheScope`)."""

from __future__ import annotations

from typing import Any

from evalcore.conformance.context import RunContext
from evalcore.conformance.registry import Verdict, check, failed, passed
from evalcore.mcp.protocol import constants as c

SPEC = "docs/specification/2026-07-28/server/utilities/caching.mdx"


async def _cacheable_results(ctx: RunContext) -> list[tuple[str, dict[str, Any]]]:
    results = []
    for method, exchange in await ctx.sample_results():
        result = exchange.result
        if method in c.CACHEABLE_METHODS and result is not None and result.get("resultType", "complete") == "complete":
            results.append((method, result))
    return results


@check(
    "cache_fields.ttl_ms", title="cacheable results carry an integer ttlMs >= 0", spec=SPEC, quote="Servers **MUST** provide a `ttlMs` value that is `>= 0`."
)
async def ttl_ms(ctx: RunContext) -> Verdict:
    results = await _cacheable_results(ctx)
    if not results:
        return failed("no cacheable result came back (not even server/discover)")
    for method, result in results:
        ttl = result.get("ttlMs")
        if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 0:
            return failed(f"{method} result: ttlMs must be an integer >= 0, got {ttl!r}")
    return passed(f"{len(results)} cacheable results checked")


@check(
    "cache_fields.cache_scope",
    title="cacheable results carry cacheScope public|private",
    spec=SPEC,
    quote='Servers MUST include caching hints on results with `resultType: "complete"` returned by the following operations',
)
async def cache_scope(ctx: RunContext) -> Verdict:
    results = await _cacheable_results(ctx)
    if not results:
        return failed("no cacheable result came back (not even server/discover)")
    for method, result in results:
        scope = result.get("cacheScope")
        if scope not in c.CACHE_SCOPES:
            return failed(f"{method} result: cacheScope must be 'public' or 'private', got {scope!r}")
    return passed(f"{len(results)} cacheable results checked")
