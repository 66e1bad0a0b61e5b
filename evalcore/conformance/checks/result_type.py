"""Checks of `resultType` on every kind of result, and of a successful `tools/call`.

Note on the seed article: it tolerates a missing `resultType` because the spec
tells CLIENTS to treat one as "complete" for the sake of older servers. A
server that claims 2026-07-28 MUST send it, so here a missing one fails.
"""

from __future__ import annotations

from evalcore.conformance.context import RunContext
from evalcore.conformance.registry import Verdict, check, failed, not_testable, passed
from evalcore.mcp.protocol import constants as c


@check(
    "result_type.present",
    title="every result carries resultType",
    spec="docs/specification/2026-07-28/basic/index.mdx",
    quote="The `result` **MUST** include a `resultType` field to indicate the type of the result.",
)
async def present(ctx: RunContext) -> Verdict:
    samples = [(method, exchange.result) for method, exchange in await ctx.sample_results() if exchange.result is not None]
    if not samples:
        return failed("no result came back to judge")
    missing = sorted({method for method, result in samples if result is not None and "resultType" not in result})
    refused = await ctx.refused_call()
    if refused is not None and refused.exchange.result is not None and "resultType" not in refused.exchange.result:
        return failed(
            f"no resultType on the tools/call result refusing {refused.tool.get('name')} without its required arguments "
            f"({', '.join(missing)} results lack it): a tool error result is a result, and a 2026-07-28 server MUST send it"
        )
    if missing:
        return failed(
            f"no resultType on {', '.join(missing)} results: a 2026-07-28 server MUST send it "
            "(treating a missing one as 'complete' is only the client's fallback for older servers)"
        )
    return passed(f"{len(samples)} results of {len({m for m, _ in samples})} kinds carry resultType")


@check(
    "result_type.known_value",
    title="resultType is 'complete' or 'input_required' where allowed",
    spec="docs/specification/2026-07-28/basic/patterns/mrtr.mdx",
    quote="Servers **MUST NOT** send `InputRequiredResult` responses on any other client requests.",
)
async def known_value(ctx: RunContext) -> Verdict:
    for method, exchange in await ctx.sample_results():
        result = exchange.result
        if result is None or "resultType" not in result:
            continue
        value = result["resultType"]
        if value not in c.RESULT_TYPES:
            return failed(f"{method} result has unknown resultType {value!r} (allowed: complete, input_required)")
        if value == "input_required" and method not in c.INPUT_REQUIRED_METHODS:
            return failed(f"{method} answered input_required, which only tools/call, prompts/get and resources/read may")
    return passed("all resultType values known")


@check(
    "result_type.tools_call",
    title="a tools/call with schema-valid arguments returns a CallToolResult",
    spec="docs/specification/2026-07-28/basic/patterns/mrtr.mdx",
    quote="Servers **MUST** include at least one of `inputRequests` or `requestState` in every `InputRequiredResult` response.",
)
async def tools_call(ctx: RunContext) -> Verdict:
    calls = await ctx.tool_calls()
    if not calls:
        return not_testable(f"no tool may be called under --call-tools {ctx.tool_policy} (read-only tools need annotations.readOnlyHint)")
    judged = 0
    for call in calls:
        name = call.tool.get("name")
        exchange = call.exchange
        if exchange.error_code == c.MISSING_REQUIRED_CLIENT_CAPABILITY:
            continue  # a legitimate refusal for a client without that capability; judged by error_codes
        result = exchange.result
        if result is None:
            return failed(f"tools/call {name} with arguments {call.arguments} got {exchange.describe()}")
        if result.get("resultType") == "input_required":
            if not result.get("inputRequests") and "requestState" not in result:
                return failed(f"tools/call {name}: input_required result without inputRequests or requestState")
            continue
        content = result.get("content")
        if not isinstance(content, list):
            return failed(f"tools/call {name}: result has no content array (got {type(content).__name__})")
        judged += 1
    if judged == 0:
        return not_testable("no tool call produced a complete result to judge")
    return passed(f"{judged} tool calls returned well-formed results")
