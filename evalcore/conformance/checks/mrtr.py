"""Checks of the multi round-trip pattern (spec/basic/patterns/mrtr.mdx) on any tool that answers `input_required`.

No fixture tool is needed: every tool the tool policy lets the suite call is
called once as a client that declares elicitation, sampling and roots; a tool
that answers `input_required` is retried (new JSON-RPC id, same params,
`inputResponses` for every input request, `requestState` echoed), and retried
once more without the responses.
"""

from __future__ import annotations

from typing import Any

from evalcore.conformance.context import RunContext
from evalcore.conformance.registry import Verdict, check, failed, not_testable, passed
from evalcore.mcp.client import Exchange
from evalcore.mcp.protocol.schemas import example_arguments

SPEC = "docs/specification/2026-07-28/basic/patterns/mrtr.mdx"
# A client that can answer every kind of input request, so a server may ask for any.
FULL_CAPABILITIES: dict[str, Any] = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}


def input_response(request: object) -> dict[str, Any]:
    """A plausible client answer to one input request (ElicitResult, CreateMessageResult or ListRootsResult)."""
    method = request.get("method") if isinstance(request, dict) else None
    params = request.get("params") if isinstance(request, dict) and isinstance(request.get("params"), dict) else {}
    if method == "sampling/createMessage":
        return {"role": "assistant", "content": {"type": "text", "text": "A short answer."}, "model": "evalcore-conformance", "stopReason": "endTurn"}
    if method == "roots/list":
        return {"roots": []}
    schema = params.get("requestedSchema") if isinstance(params, dict) else None
    content = example_arguments(schema) if isinstance(schema, dict) else {}
    return {"action": "accept", "content": content}


async def _input_required_calls(ctx: RunContext) -> list[tuple[dict[str, Any], Exchange]]:
    """(params, first answer) for every callable tool that answered input_required (memoised per run)."""
    key = "mrtr"
    if key not in ctx.memo:
        found = []
        meta = ctx.client.meta(client_capabilities=FULL_CAPABILITIES)
        for tool in await ctx.tools():
            if not ctx.may_call(tool) or not isinstance(tool.get("name"), str):
                continue
            schema = tool.get("inputSchema")
            params = {"name": tool["name"], "arguments": example_arguments(schema) if isinstance(schema, dict) else {}}
            exchange = await ctx.request("tools/call", params, meta=meta)
            if (exchange.result or {}).get("resultType") == "input_required":
                found.append((params, exchange))
        ctx.memo[key] = found
    calls: list[tuple[dict[str, Any], Exchange]] = ctx.memo[key]
    return calls


def _retry_params(params: dict[str, Any], first: dict[str, Any], with_responses: bool) -> dict[str, Any]:
    retry = dict(params)
    requests = first.get("inputRequests")
    if with_responses and isinstance(requests, dict):
        retry["inputResponses"] = {key: input_response(request) for key, request in requests.items()}
    if "requestState" in first:
        retry["requestState"] = first["requestState"]  # echoed exactly, never inspected
    return retry


@check(
    "mrtr.round_trip",
    title="a tools/call that answered input_required accepts the retry with inputResponses and the echoed requestState",
    spec=SPEC,
    level="SHOULD",
    quote="Servers **SHOULD** validate that the data provided by the client is a valid `InputResponses` object and that the information "
    "inside can be correctly parsed.",
)
async def round_trip(ctx: RunContext) -> Verdict:
    calls = await _input_required_calls(ctx)
    if not calls:
        return not_testable(f"no tool callable under --call-tools {ctx.tool_policy} answered input_required")
    meta = ctx.client.meta(client_capabilities=FULL_CAPABILITIES)
    for params, first in calls:
        retry = await ctx.request("tools/call", _retry_params(params, first.result or {}, with_responses=True), meta=meta)
        if retry.result is None:
            return failed(f"tools/call {params['name']}: the retry with inputResponses got {retry.describe()}")
    return passed(f"{len(calls)} input_required round trips completed")


@check(
    "mrtr.retry_without_responses",
    title="a retry without the requested input is answered with input_required again (or a clear error)",
    spec=SPEC,
    level="SHOULD",
    quote="If the client fails to send all the information requested in a previous `InputRequests`, and the missing information is necessary "
    "for the server to process the request, the server **SHOULD** respond with a new `InputRequiredResult` requesting the missing "
    "information again, rather than returning an error.",
)
async def retry_without_responses(ctx: RunContext) -> Verdict:
    calls = [(params, first) for params, first in await _input_required_calls(ctx) if (first.result or {}).get("inputRequests")]
    if not calls:
        return not_testable(f"no tool callable under --call-tools {ctx.tool_policy} answered input_required with inputRequests")
    meta = ctx.client.meta(client_capabilities=FULL_CAPABILITIES)
    for params, first in calls:
        retry = await ctx.request("tools/call", _retry_params(params, first.result or {}, with_responses=False), meta=meta)
        result = retry.result
        if result is not None and result.get("resultType") != "input_required":
            return failed(f"tools/call {params['name']}: a retry without inputResponses completed as if the input had been given")
        if result is None and retry.error is None:
            return failed(f"tools/call {params['name']}: a retry without inputResponses got {retry.describe()}")
    return passed(f"{len(calls)} retries without responses asked again or refused clearly")
