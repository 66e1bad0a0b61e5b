"""Checks of tool names (spec/server/tools.mdx "Tool Names")."""

from __future__ import annotations

import re

from evalcore.conformance.context import RunContext
from evalcore.conformance.registry import Verdict, check, failed, passed

SPEC = "docs/specification/2026-07-28/server/tools.mdx"
NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")


@check(
    "tools.name_rules",
    title="tool names are 1-128 characters of A-Z a-z 0-9 _ - . and unique",
    spec=SPEC,
    level="SHOULD",
    quote="The following **SHOULD** be the only allowed characters: uppercase and lowercase ASCII letters (A-Z, a-z), digits (0-9), "
    "underscore (\\_), hyphen (-), and dot (.)",
)
async def name_rules(ctx: RunContext) -> Verdict:
    listing = await ctx.listing("tools/list")
    if listing.problem is not None:
        return failed(f"tools/list: {listing.problem}")
    names = [str(tool.get("name")) for tool in listing.items]
    bad = [tool.get("name") for tool in listing.items if not isinstance(tool.get("name"), str) or not NAME.fullmatch(tool["name"])]
    if bad:
        return failed(f"tool name {bad[0]!r} is not 1-128 characters of A-Z a-z 0-9 _ - .")
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        return failed(f"tool names repeat: {duplicates[:3]} (they SHOULD be unique within a server)")
    return passed(f"{len(names)} tool names")
