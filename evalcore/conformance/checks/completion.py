"""Checks of `completion/complete` (spec/server/utilities/completion.mdx), gated on the `completions` capability."""

from __future__ import annotations

from typing import Any

from evalcore.conformance.context import RunContext, error_shape
from evalcore.conformance.registry import Verdict, check, failed, not_applicable, not_testable, passed
from evalcore.mcp.protocol import constants as c

SPEC = "docs/specification/2026-07-28/server/utilities/completion.mdx"


async def _reference(ctx: RunContext) -> dict[str, Any] | None:
    """A completion request for the first prompt argument, else the first resource template variable."""
    if await ctx.supports("prompts/list"):
        for prompt in (await ctx.listing("prompts/list")).items:
            arguments = [a for a in prompt.get("arguments") or [] if isinstance(a, dict) and isinstance(a.get("name"), str)]
            if arguments and isinstance(prompt.get("name"), str):
                return {"ref": {"type": "ref/prompt", "name": prompt["name"]}, "argument": {"name": arguments[0]["name"], "value": ""}}
    if await ctx.supports("resources/templates/list"):
        for template in (await ctx.listing("resources/templates/list")).items:
            uri = template.get("uriTemplate")
            if isinstance(uri, str) and "{" in uri:
                name = uri[uri.index("{") + 1 : uri.index("}", uri.index("{"))].lstrip("+#./;?&")
                return {"ref": {"type": "ref/resource", "uri": uri}, "argument": {"name": name, "value": ""}}
    return None


@check(
    "completion.result_shape",
    title="completion/complete answers a completion with at most 100 string values",
    spec="schema/2026-07-28/schema.json",
    quote="An array of completion values. Must not exceed 100 items.",
)
async def result_shape(ctx: RunContext) -> Verdict:
    if "completions" not in await ctx.capabilities():
        return not_testable("it declares no completions capability")
    params = await _reference(ctx)
    if params is None:
        return not_testable("no prompt argument or resource template to complete")
    exchange = await ctx.request("completion/complete", params)
    result = exchange.result
    if result is None:
        return failed(f"completion/complete for {params['ref']}: {exchange.describe()}")
    completion = result.get("completion")
    values = completion.get("values") if isinstance(completion, dict) else None
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        return failed(f"completion/complete result has no completion.values array of strings (got completion={completion!r:.80})")
    if len(values) > 100:
        return failed(f"completion/complete returned {len(values)} values; at most 100 are allowed")
    return passed(f"{len(values)} values")


@check(
    "completion.without_capability",
    title="without the completions capability, completion/complete is -32601",
    spec=SPEC,
    level="SHOULD",
    quote="Servers **SHOULD** return standard JSON-RPC errors for common failure cases: Method not found: `-32601` (Capability not supported)",
)
async def without_capability(ctx: RunContext) -> Verdict:
    if "completions" in await ctx.capabilities():
        return not_applicable("it declares the completions capability")
    exchange = await ctx.request("completion/complete", {"ref": {"type": "ref/prompt", "name": "evalcore"}, "argument": {"name": "x", "value": ""}})
    problem = error_shape(exchange, c.METHOD_NOT_FOUND, http_status=None, is_http=ctx.is_http)
    return failed(f"completion/complete without the capability: {problem}") if problem else passed("-32601")
