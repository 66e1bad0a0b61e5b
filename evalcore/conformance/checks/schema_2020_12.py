"""Checks of tool schemas: valid JSON Schema 2020-12, local `$ref`s only, object input roots, conforming output."""

from __future__ import annotations

from evalcore.conformance.context import RunContext
from evalcore.conformance.registry import Verdict, check, failed, not_testable, passed
from evalcore.mcp.protocol.schemas import instance_errors, iter_refs, schema_errors, unresolvable_refs

SPEC = "docs/specification/2026-07-28/server/tools.mdx"
SCHEMA_KEYS = ("inputSchema", "outputSchema")


async def _schemas(ctx: RunContext) -> list[tuple[str, str, object]] | str:
    listing = await ctx.listing("tools/list")
    if listing.problem is not None:
        return f"tools/list: {listing.problem}"
    return [(str(tool.get("name")), key, tool[key]) for tool in listing.items for key in SCHEMA_KEYS if key in tool]


@check(
    "schema_2020_12.valid",
    title="every inputSchema/outputSchema is a valid 2020-12 schema",
    spec="docs/specification/2026-07-28/basic/index.mdx",
    quote="Schemas **MUST** be valid according to their declared or default dialect",
)
async def valid(ctx: RunContext) -> Verdict:
    schemas = await _schemas(ctx)
    if isinstance(schemas, str):
        return failed(schemas)
    for tool, key, schema in schemas:
        errors = schema_errors(schema)
        if errors:
            return failed(f"{tool}.{key} is not a valid JSON Schema 2020-12: {errors[0]}")
    return passed(f"{len(schemas)} schemas valid")


@check(
    "schema_2020_12.refs_resolve",
    title="every $ref resolves inside its schema (no network fetch)",
    spec="docs/specification/2026-07-28/basic/index.mdx",
    quote="Schemas **MUST** be valid according to their declared or default dialect",
)
async def refs_resolve(ctx: RunContext) -> Verdict:
    schemas = await _schemas(ctx)
    if isinstance(schemas, str):
        return failed(schemas)
    count = 0
    for tool, key, schema in schemas:
        if not isinstance(schema, dict):
            continue
        problems = unresolvable_refs(schema)
        if problems:
            return failed(f"{tool}.{key}: {problems[0]}")
        count += sum(1 for _ in iter_refs(schema))
    return passed(f"{count} $refs resolved locally")


@check(
    "schema_2020_12.input_root_object",
    title="every inputSchema has root type 'object'",
    spec="schema/2026-07-28/schema.json",
    quote='Tool arguments are always JSON objects, so `type: "object"` is required at the root.',
)
async def input_root_object(ctx: RunContext) -> Verdict:
    listing = await ctx.listing("tools/list")
    if listing.problem is not None:
        return failed(f"tools/list: {listing.problem}")
    for tool in listing.items:
        schema = tool.get("inputSchema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            kind = schema.get("type") if isinstance(schema, dict) else type(schema).__name__
            return failed(f"{tool.get('name')}.inputSchema root must be type 'object', got {kind!r}")
    return passed(f"{len(listing.items)} tools")


@check(
    "schema_2020_12.structured_content",
    title="structuredContent validates against outputSchema",
    spec=SPEC,
    quote="Servers **MUST** provide structured results that conform to this schema.",
)
async def structured_content(ctx: RunContext) -> Verdict:
    judged = 0
    for call in await ctx.tool_calls():
        schema = call.tool.get("outputSchema")
        result = call.exchange.result
        if not isinstance(schema, dict) or result is None or result.get("isError") is True or result.get("resultType", "complete") != "complete":
            continue
        name = call.tool.get("name")
        if "structuredContent" not in result:
            return failed(f"tools/call {name}: tool declares an outputSchema but the result has no structuredContent")
        errors = instance_errors(result["structuredContent"], schema)
        if errors:
            return failed(f"tools/call {name}: structuredContent does not match outputSchema: {errors[0]}")
        judged += 1
    if judged == 0:
        return not_testable("no successful call of a tool with an outputSchema to judge")
    return passed(f"{judged} structured results match their outputSchema")
