"""Checks of `resources/read` (spec/server/resources.mdx) on every resource the server lists and every template it
lists, read with a sample value for each variable; gated on the resources capability.

The official suite reads its fixture resources (`test://static-text`, `test://static-binary`,
`test://template/{id}/data`); a production server has none, so its own are read instead.
"""

from __future__ import annotations

import re
from typing import Any

from evalcore.conformance.context import RunContext
from evalcore.conformance.registry import Verdict, check, failed, not_testable, passed
from evalcore.mcp.client import Exchange
from evalcore.mcp.protocol.wire_shapes import result_model_problem

# An RFC 6570 expression: an optional operator, then comma-separated variable names (each maybe `*` or `:n`).
EXPRESSION = re.compile(r"\{([+#./;?&]?)([^}]*)\}")
SAMPLE = "example"


def expand_template(template: str) -> str:
    """The URI a template gives with every variable set to a sample value (RFC 6570, levels 1 to 4)."""

    def expand(found: re.Match[str]) -> str:
        operator = found[1]
        names = [re.sub(r"(\*|:\d+)$", "", name.strip()) for name in found[2].split(",") if name.strip()]
        if operator in ("?", "&"):
            return operator + "&".join(f"{name}={SAMPLE}" for name in names)
        if operator == ";":
            return "".join(f";{name}={SAMPLE}" for name in names)
        separator = {"": ",", "+": ",", "#": ",", ".": ".", "/": "/"}[operator]
        prefix = operator if operator in ("#", ".", "/") else ""
        return prefix + separator.join(SAMPLE for _ in names)

    return EXPRESSION.sub(expand, template)


async def _reads(ctx: RunContext) -> list[tuple[str, Exchange]]:
    """(what was read, its answer) for every listed resource and every listed template (memoised per run)."""
    if "resource_reads" not in ctx.memo:
        reads: list[tuple[str, Exchange]] = []
        first = await ctx.first_resource_read()  # the read other checks judge already: not sent twice
        for index, resource in enumerate((await ctx.listing("resources/list")).items):
            if isinstance(resource.get("uri"), str):
                reads.append((resource["uri"], first if index == 0 and first is not None else await ctx.request("resources/read", {"uri": resource["uri"]})))
        for template in (await ctx.listing("resources/templates/list")).items:
            if isinstance(template.get("uriTemplate"), str):
                uri = expand_template(template["uriTemplate"])
                reads.append((f"{uri} (template {template['uriTemplate']})", await ctx.request("resources/read", {"uri": uri})))
        ctx.memo["resource_reads"] = reads
    found: list[tuple[str, Exchange]] = ctx.memo["resource_reads"]
    return found


reads_of = _reads  # the same memoised reads, for the MRTR checks of non-tool requests


@check(
    "resources.read_listed",
    title="every listed resource, and every listed template read with sample values, answers a ReadResourceResult of the official shape",
    spec="docs/specification/2026-07-28/basic/index.mdx",
    quote="All messages between MCP clients and servers **MUST** follow the JSON-RPC 2.0 specification.",
)
async def read_listed(ctx: RunContext) -> Verdict:
    if not await ctx.supports("resources/list"):
        return not_testable("it declares no resources capability")
    reads = await _reads(ctx)
    if not reads:
        return not_testable("it lists no resources and no resource templates")
    refusals: list[str] = []
    judged = 0
    for what, exchange in reads:
        result: dict[str, Any] | None = exchange.result
        if result is None:
            refusals.append(f"{what}: {exchange.describe()}")  # a refusal (a template value it has no resource for) breaks no MUST
            continue
        problem = result_model_problem("resources/read", result)
        if problem:
            return failed(f"resources/read {what}: the result does not match ReadResourceResult: {problem}")
        judged += 1
    if not judged:
        return not_testable(f"no resources/read gave a result to judge ({'; '.join(refusals)[:300]})")
    refused = f"; refused: {'; '.join(refusals)[:300]}" if refusals else ""
    return passed(f"{judged} of {len(reads)} reads gave a well-formed result{refused}")
