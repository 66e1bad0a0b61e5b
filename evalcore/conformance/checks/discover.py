"""Checks of `server/discover`, the one method every 2026-07-28 server MUST implement."""

from __future__ import annotations

from evalcore.conformance.context import RunContext
from evalcore.conformance.registry import Verdict, check, failed, passed
from evalcore.mcp.protocol import constants as c

SPEC = "docs/specification/2026-07-28/server/discover.mdx"


@check("discover.responds", title="server/discover answers with a result", spec=SPEC, quote="Servers **MUST** implement it.")
async def responds(ctx: RunContext) -> Verdict:
    exchange = await ctx.discover()
    if exchange.result is None:
        return failed(f"server/discover must be implemented; got {exchange.describe()}")
    return passed("server/discover answered")


@check(
    "discover.lists_2026_07_28",
    title="supportedVersions lists 2026-07-28",
    spec="docs/specification/2026-07-28/basic/versioning.mdx",
    # A server that answered a 2026-07-28 request implements that version, so the list of
    # "protocol versions the server supports" must name it.
    quote="If the server does not implement the requested version (whether the version is unknown to the server, or is a known version "
    "the server has chosen not to support), it **MUST** respond with an `UnsupportedProtocolVersionError` listing the versions it does support",
)
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
    spec="docs/specification/2026-07-28/server/discover.mdx",
    level="SHOULD",
    quote="`_meta['io.modelcontextprotocol/serverInfo']`: Name and version of the server software. Servers **SHOULD** include this field.",
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
