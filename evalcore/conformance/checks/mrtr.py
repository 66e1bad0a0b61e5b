"""Checks of the multi round-trip pattern (spec/basic/patterns/mrtr.mdx) on any tool that answers `input_required`.

No fixture tool is needed: every tool the tool policy lets the suite call is
called once as a client that declares elicitation, sampling and roots; a tool
that answers `input_required` is retried (new JSON-RPC id, same params,
`inputResponses` for every input request, `requestState` echoed), and retried
without the responses, with an answer it did not ask for added, and with
answers that are not objects. It is also called again as a client that
declares no capability, and then may ask for nothing.
"""

from __future__ import annotations

from typing import Any

from evalcore.conformance.checks.prompts import sample_prompt_arguments
from evalcore.conformance.checks.resources import reads_of
from evalcore.conformance.context import RunContext
from evalcore.conformance.registry import Verdict, check, failed, not_testable, passed
from evalcore.mcp.client import Exchange
from evalcore.mcp.protocol.schemas import example_arguments

SPEC = "docs/specification/2026-07-28/basic/patterns/mrtr.mdx"
# A client that can answer every kind of input request, so a server may ask for any.
FULL_CAPABILITIES: dict[str, Any] = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}
# The client capability each kind of input request needs (mrtr.mdx "Server Requirements").
CAPABILITY_OF = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}
UNREQUESTED_KEY = "evalcore_unrequested_input"


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


async def _retries(ctx: RunContext) -> list[tuple[dict[str, Any], Exchange]]:
    """(params, answer) of the retry with inputResponses and the echoed requestState, per input_required call (memoised)."""
    if "mrtr_retries" not in ctx.memo:
        meta = ctx.client.meta(client_capabilities=FULL_CAPABILITIES)
        retries = []
        for params, first in await _input_required_calls(ctx):
            retries.append((params, await ctx.request("tools/call", _retry_params(params, first.result or {}, with_responses=True), meta=meta)))
        ctx.memo["mrtr_retries"] = retries
    found: list[tuple[dict[str, Any], Exchange]] = ctx.memo["mrtr_retries"]
    return found


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
    for params, retry in await _retries(ctx):
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


@check(
    "mrtr.declared_capabilities_only",
    title="a client that declares no capability is sent no input request (elicitation, sampling, roots)",
    spec=SPEC,
    quote="Servers **MUST NOT** send an `inputRequests` that the client has not declared support for in its capabilities.",
)
async def declared_capabilities_only(ctx: RunContext) -> Verdict:
    calls = [(params, first) for params, first in await _input_required_calls(ctx) if (first.result or {}).get("inputRequests")]
    if not calls:
        return not_testable(f"no tool callable under --call-tools {ctx.tool_policy} answered input_required with inputRequests")
    for params, _ in calls:
        bare = await ctx.request("tools/call", params, meta=ctx.client.meta(client_capabilities={}))
        requests = (bare.result or {}).get("inputRequests")
        if bare.result is None or bare.result.get("resultType") != "input_required" or not isinstance(requests, dict):
            continue  # served, refused (-32021 names what it needs) or asked for state only: nothing undeclared was sent
        methods = [request.get("method") for request in requests.values() if isinstance(request, dict)]
        undeclared = sorted({method for method in methods if isinstance(method, str) and method in CAPABILITY_OF})
        if undeclared:
            needed = ", ".join(f"{method} (needs {CAPABILITY_OF[method]})" for method in undeclared)
            return failed(f"tools/call {params['name']} from a client declaring no capability answered input_required asking for {needed}")
    return passed(f"{len(calls)} tools that ask for input asked a client without capabilities for nothing it did not declare")


@check(
    "mrtr.extra_responses_ignored",
    title="a retry whose inputResponses carries an answer the server did not ask for is served as without it",
    spec=SPEC,
    level="SHOULD",
    quote="If additional, unexpected parameters are provided in the `InputResponses` object, the server **SHOULD** ignore any information "
    "it does not recognize or need.",
)
async def extra_responses_ignored(ctx: RunContext) -> Verdict:
    served = [(params, retry) for params, retry in await _retries(ctx) if retry.result is not None]
    if not served:
        return not_testable(f"no input_required round trip of a tool callable under --call-tools {ctx.tool_policy} was served to compare with")
    meta = ctx.client.meta(client_capabilities=FULL_CAPABILITIES)
    first_answers = dict((params["name"], first) for params, first in await _input_required_calls(ctx))
    for params, _ in served:
        retry = _retry_params(params, first_answers[params["name"]].result or {}, with_responses=True)
        retry["inputResponses"] = {**retry.get("inputResponses", {}), UNREQUESTED_KEY: {"action": "accept", "content": {}}}
        answer = await ctx.request("tools/call", retry, meta=meta)
        if answer.result is None:
            return failed(
                f"tools/call {params['name']}: the retry was served without the extra answer {UNREQUESTED_KEY!r} and refused with it: {answer.describe()}"
            )
    return passed(f"{len(served)} retries with an unrequested answer were served")


@check(
    "mrtr.invalid_responses_refused",
    title="a retry whose inputResponses are not objects does not complete as if the input had been given",
    spec=SPEC,
    level="SHOULD",
    quote="Servers **SHOULD** validate that the data provided by the client is a valid `InputResponses` object and that the information "
    "inside can be correctly parsed.",
)
async def invalid_responses_refused(ctx: RunContext) -> Verdict:
    calls = [(params, first) for params, first in await _input_required_calls(ctx) if isinstance((first.result or {}).get("inputRequests"), dict)]
    calls = [(params, first) for params, first in calls if (first.result or {})["inputRequests"]]
    if not calls:
        return not_testable(f"no tool callable under --call-tools {ctx.tool_policy} answered input_required with inputRequests")
    meta = ctx.client.meta(client_capabilities=FULL_CAPABILITIES)
    for params, first in calls:
        retry = _retry_params(params, first.result or {}, with_responses=True)
        retry["inputResponses"] = {key: 42 for key in (first.result or {})["inputRequests"]}
        answer = await ctx.request("tools/call", retry, meta=meta)
        result = answer.result
        if result is not None and result.get("resultType") != "input_required" and result.get("isError") is not True:
            return failed(f"tools/call {params['name']}: a retry answering each input request with the number 42 completed as if the input were valid")
        if result is None and answer.error is None:
            return failed(f"tools/call {params['name']}: a retry with inputResponses that are not objects got {answer.describe()}")
    return passed(f"{len(calls)} retries with invalid inputResponses were refused or asked again")


MAX_ROUNDS = 4  # the first answer and up to three retries: enough to see a server ask again, bounded for a server that never stops
INPUT_REQUEST_METHODS = frozenset(CAPABILITY_OF)


def _round_problem(result: dict[str, Any]) -> str | None:
    """What an InputRequiredResult breaks of the server's MUSTs (mrtr.mdx "Server Requirements"), if anything."""
    requests = result.get("inputRequests")
    if not requests and "requestState" not in result:
        return "carries neither inputRequests nor requestState"
    if isinstance(requests, dict):
        kinds = sorted({str(r.get("method")) if isinstance(r, dict) else type(r).__name__ for r in requests.values()} - INPUT_REQUEST_METHODS)
        if kinds:
            return f"asks for {', '.join(kinds)}, none of elicitation/create, sampling/createMessage, roots/list"
    return None


@check(
    "mrtr.multi_round",
    title="a request that asks for input again after the first answer is well formed at every round, until it completes",
    spec=SPEC,
    quote="Servers **MUST** include at least one of `inputRequests` or `requestState` in every `InputRequiredResult` response.",
)
async def multi_round(ctx: RunContext) -> Verdict:
    meta = ctx.client.meta(client_capabilities=FULL_CAPABILITIES)
    followed = 0
    for params, retry in await _retries(ctx):
        answer, rounds = retry, 2
        while (answer.result or {}).get("resultType") == "input_required":
            problem = _round_problem(answer.result or {})
            if problem:
                return failed(f"tools/call {params['name']}: round {rounds}'s input_required {problem}")
            if rounds == 2:
                followed += 1
            if rounds >= MAX_ROUNDS:
                break  # asked {MAX_ROUNDS} times: well formed so far, not followed further
            rounds += 1
            answer = await ctx.request("tools/call", _retry_params(params, answer.result or {}, with_responses=True), meta=meta)
    if not followed:
        return not_testable(f"no tool callable under --call-tools {ctx.tool_policy} asked for input again after the first answer")
    return passed(f"{followed} requests asked for input more than once; every round was well formed")


async def _non_tool_input_required(ctx: RunContext) -> list[tuple[str, dict[str, Any], Exchange]]:
    """(method, params, first answer) of every listed prompt got, and resource read, that answered input_required."""
    found: list[tuple[str, dict[str, Any], Exchange]] = []
    if "prompts" in await ctx.capabilities():
        meta = ctx.client.meta(client_capabilities=FULL_CAPABILITIES)
        for prompt in (await ctx.listing("prompts/list")).items:
            if isinstance(prompt.get("name"), str):
                params = {"name": prompt["name"], "arguments": sample_prompt_arguments(prompt)}
                exchange = await ctx.request("prompts/get", params, meta=meta)
                if (exchange.result or {}).get("resultType") == "input_required":
                    found.append(("prompts/get", params, exchange))
    if "resources" in await ctx.capabilities():
        for _, exchange in await reads_of(ctx):
            if (exchange.result or {}).get("resultType") == "input_required" and exchange.request is not None:
                params = {k: v for k, v in (exchange.request.get("params") or {}).items() if k != "_meta"}
                found.append(("resources/read", params, exchange))
    return found


@check(
    "mrtr.non_tool_round_trip",
    title="a prompts/get or resources/read that answered input_required accepts the retry with inputResponses and the echoed requestState",
    spec=SPEC,
    level="SHOULD",
    quote="Servers **SHOULD** validate that the data provided by the client is a valid `InputResponses` object and that the information "
    "inside can be correctly parsed.",
)
async def non_tool_round_trip(ctx: RunContext) -> Verdict:
    found = await _non_tool_input_required(ctx)
    if not found:
        return not_testable("no listed prompt (got as a client declaring elicitation, sampling and roots) or resource answered input_required")
    meta = ctx.client.meta(client_capabilities=FULL_CAPABILITIES)
    for method, params, first in found:
        problem = _round_problem(first.result or {})
        if problem:
            return failed(f"{method} {params.get('name') or params.get('uri')}: its input_required {problem}")
        retry = await ctx.request(method, _retry_params(params, first.result or {}, with_responses=True), meta=meta)
        if retry.result is None:
            return failed(f"{method} {params.get('name') or params.get('uri')}: the retry with inputResponses got {retry.describe()}")
    return passed(f"{len(found)} input_required round trips of prompts/get or resources/read completed")
