"""Checks of `server/discover`, the one method every 2026-07-28 server MUST implement."""

from __future__ import annotations

from evalcore.conformance.context import RunContext
from evalcore.conformance.registry import Verdict, check, failed, passed
from evalcore.protocol import constants as c

SPEC = "docs/specification/2026-07-28/server/discover.mdx"


@check("discover.responds", title="server/discover answers with a result", spec=SPEC)
async def responds(ctx: RunContext) -> Verdict:
    exchange = await ctx.discover()
    if exchange.result is None:
        return failed(f"server/discover must be implemented; got {exchange.describe()}")
    return passed("server/discover answered")


@check("discover.lists_2026_07_28", title="supportedVersions lists 2026-07-28", spec=SPEC)
async def lists_current_version(ctx: RunContext) -> Verdict:
    result = (await ctx.discover()).result
    if result is None:
        return failed("no discover result to read supportedVersions from")
    versions = result.get("supportedVersions")
    if not isinstance(versions, list) or not all(isinstance(v, str) for v in versions):
        return failed(f"supportedVersions must be an array of strings, got {versions!r}")
    if c.PROTOCOL_VERSION not in versions:
        return failed(f"supportedVersions {versions} does not list {c.PROTOCOL_VERSION}")
    return passed(f"supportedVersions {versions}")


@check(
    "discover.server_info",
    title="results carry _meta serverInfo {name, version}",
    spec="docs/specification/2026-07-28/basic/index.mdx",
    level="SHOULD",
)
async def server_info(ctx: RunContext) -> Verdict:
    result = (await ctx.discover()).result
    if result is None:
        return failed("no discover result to read serverInfo from")
    meta = result.get("_meta")
    info = meta.get(c.META_SERVER_INFO) if isinstance(meta, dict) else None
    if not isinstance(info, dict) or not isinstance(info.get("name"), str) or not isinstance(info.get("version"), str):
        return failed(f"discover result _meta lacks {c.META_SERVER_INFO} with string name and version (got {info!r})")
    return passed(f"{info['name']} {info['version']}")
