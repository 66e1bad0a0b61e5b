"""Checks of `prompts/get` error paths (spec/server/prompts.mdx "Error Handling"), gated on the prompts capability."""

from __future__ import annotations

from evalcore.conformance.context import RunContext, error_shape
from evalcore.conformance.registry import Verdict, check, failed, not_testable, passed
from evalcore.protocol import constants as c

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
