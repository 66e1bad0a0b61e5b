"""Checks of `prompts/get` (spec/server/prompts.mdx): every listed prompt with sample arguments, and the error paths; gated on the prompts capability."""

from __future__ import annotations

from evalcore.conformance.context import RunContext, error_shape
from evalcore.conformance.registry import Verdict, check, failed, not_testable, passed
from evalcore.mcp.protocol import constants as c
from evalcore.mcp.protocol.wire_shapes import result_model_problem

SPEC = "docs/specification/2026-07-28/server/prompts.mdx"
ERRORS = "Servers **SHOULD** return standard JSON-RPC errors for common failure cases: Invalid prompt name: `-32602` (Invalid params)"


@check("prompts.unknown_prompt", title="prompts/get of an unknown prompt is -32602", spec=SPEC, level="SHOULD", quote=ERRORS)
async def unknown_prompt(ctx: RunContext) -> Verdict:
    if not await ctx.supports("prompts/list"):
        return not_testable("it declares no prompts capability")
    exchange = await ctx.request("prompts/get", {"name": f"evalcore_no_such_prompt_{ctx.nonce}", "arguments": {}})
    problem = error_shape(exchange, c.INVALID_PARAMS, http_status=None, is_http=ctx.is_http)
    return failed(f"unknown prompt: {problem}") if problem else passed("-32602")


@check(
    "prompts.required_arguments",
    title="prompts/get without a required argument is -32602",
    spec=SPEC,
    level="SHOULD",
    quote="Servers **SHOULD** return standard JSON-RPC errors for common failure cases: [...] Missing required arguments: `-32602` (Invalid params)",
)
async def required_arguments(ctx: RunContext) -> Verdict:
    if not await ctx.supports("prompts/list"):
        return not_testable("it declares no prompts capability")
    prompts = (await ctx.listing("prompts/list")).items
    target = next((p for p in prompts if any(isinstance(a, dict) and a.get("required") for a in p.get("arguments") or [])), None)
    if target is None:
        return not_testable("no prompt has a required argument")
    exchange = await ctx.request("prompts/get", {"name": target.get("name"), "arguments": {}})
    problem = error_shape(exchange, c.INVALID_PARAMS, http_status=None, is_http=ctx.is_http)
    return failed(f"prompts/get {target.get('name')} without its required arguments: {problem}") if problem else passed("-32602")


def sample_prompt_arguments(prompt: dict[str, object]) -> dict[str, str]:
    """A value for every argument a prompt lists, required or not: prompt arguments are strings (PromptArgument)."""
    arguments = prompt.get("arguments")
    names = [a.get("name") for a in arguments if isinstance(a, dict)] if isinstance(arguments, list) else []
    return {name: f"example {name}" for name in names if isinstance(name, str)}


@check(
    "prompts.get_listed",
    title="every listed prompt, got with a sample value for each argument, answers a GetPromptResult of the official shape",
    spec="docs/specification/2026-07-28/basic/index.mdx",
    quote="All messages between MCP clients and servers **MUST** follow the JSON-RPC 2.0 specification.",
)
async def get_listed(ctx: RunContext) -> Verdict:
    if not await ctx.supports("prompts/list"):
        return not_testable("it declares no prompts capability")
    prompts = [p for p in (await ctx.listing("prompts/list")).items if isinstance(p.get("name"), str)]
    if not prompts:
        return not_testable("it lists no prompts")
    refusals, judged = [], 0
    for prompt in prompts:
        arguments = sample_prompt_arguments(prompt)
        exchange = await ctx.request("prompts/get", {"name": prompt["name"], "arguments": arguments})
        result = exchange.result
        if result is None:
            refusals.append(f"{prompt['name']}: {exchange.describe()}")  # a refusal (say -32603) breaks no MUST; it is reported
            continue
        problem = result_model_problem("prompts/get", result)
        if problem:
            return failed(f"prompts/get {prompt['name']} with arguments {arguments}: the result does not match GetPromptResult: {problem}")
        judged += 1
    if not judged:
        return not_testable(f"no prompts/get with sample arguments gave a result to judge ({'; '.join(refusals)[:300]})")
    refused = f"; refused: {'; '.join(refusals)[:300]}" if refusals else ""
    return passed(f"{judged} of {len(prompts)} prompts gave a well-formed result{refused}")
