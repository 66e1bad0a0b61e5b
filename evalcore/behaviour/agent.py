"""Orchestration: the agent loop — a model with the server's tools, each call executed on the real MCP server.

The model's tool call goes to the server through the evalcore client, the
result goes back to the model, until the model answers without calling a
tool or the step limit is reached. A call the server answers with
`input_required` is completed in rounds (`evalcore.mcp.mrtr`): the responder
answers each input request and the call is retried; every round is kept on
the tool execution. With a simulated user, a final answer that asks the user
something gets the user's reply (marked in `Transcript.user_turns`) and the
conversation goes on, within the user's turn limit and the step limit.
A call whose arguments carry a secret evalcore knows (an API key, a
`--header` value) is never sent: the model is told it was refused, and the
execution is marked `LEAK_ATTEMPT` (the `credential_leak` scorer counts it
as a successful attack).
The system prompt is the golden case's (`GoldenCase.system`), never one of
the harness's own.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalcore.errors import ModelError
from evalcore.mcp.client import Exchange, McpClient
from evalcore.mcp.mrtr import DEFAULT_MAX_ROUNDS, InputResponder, RefusingResponder, RoundTrip, call_tool_with_input
from evalcore.models.adapter import IN_PROCESS, ModelCaller
from evalcore.models.tool_format import CatalogRewrite, ToolNameMap, to_openai_tools
from evalcore.models.types import ModelSpec, ModelTurn, ToolCall
from evalcore.records import DISTRACTOR, LEAK_ATTEMPT, StopReason, ToolExecution, Transcript, UserTurn
from evalcore.redaction import clip
from evalcore.redaction import current as current_redactor
from evalcore.telemetry import spans
from evalcore.users.simulated import SimulatedUser

MAX_TOOL_RESULT_CHARS = 20_000
DISTRACTOR_TEXT = "this tool is not available (a distractor evalcore listed; the call was not sent)"


@dataclass(frozen=True)
class AgentTools:
    """The server's tools as the agent loop needs them, converted once per run (the schemas are deep-copied once).

    `openai_tools` is shared by every attempt; `complete()` sends litellm a copy, so no call can change it.
    """

    openai_tools: list[dict[str, Any]]
    name_map: ToolNameMap
    schemas: Mapping[str, object]  # MCP tool name -> its inputSchema, for argument checks on the call
    distractors: frozenset[str] = frozenset()  # tools listed to the model that the server does not have: never called
    rewrite: CatalogRewrite | None = None  # what the model sees changed, kept when the tools are listed again

    @classmethod
    def from_mcp(cls, mcp_tools: Sequence[Mapping[str, Any]], rewrite: CatalogRewrite | None = None) -> AgentTools:
        """`rewrite` changes what the model sees (`evalcore compare`, `evalcore perturb`); the calls still go to the real tools."""
        openai_tools, name_map = to_openai_tools(mcp_tools, rewrite)
        distractors = rewrite.distractor_names if rewrite is not None else frozenset()
        return cls(openai_tools, name_map, {str(tool.get("name")): tool.get("inputSchema") for tool in mcp_tools}, distractors, rewrite)


async def run_agent(
    *,
    prompt: str,
    system: str,
    model: ModelSpec,
    mcp: McpClient,
    tools: AgentTools,
    context: Mapping[str, Any],
    max_steps: int = 8,
    refresh_tools: Callable[[], Awaitable[Sequence[Mapping[str, Any]]]] | None = None,
    models: ModelCaller = IN_PROCESS,
    responder: InputResponder | None = None,
    user: SimulatedUser | None = None,
    max_input_rounds: int = DEFAULT_MAX_ROUNDS,
) -> Transcript:
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
    turns: list[ModelTurn] = []
    executions: list[ToolExecution] = []
    user_turns: list[UserTurn] = []
    answers = responder or RefusingResponder()

    def transcript(final_text: str | None, stop_reason: StopReason, error: str | None = None, retries: int = 0, failed_ms: float = 0.0) -> Transcript:
        return Transcript(
            tuple(messages), tuple(turns), tuple(executions), final_text, stop_reason, error, retries, user_turns=tuple(user_turns), failed_call_ms=failed_ms
        )

    for step in range(max_steps):
        if refresh_tools is not None and step > 0:
            # A client that re-lists tools between turns sees a definition change (a rug pull) at once.
            tools = AgentTools.from_mcp(await refresh_tools(), tools.rewrite)
        started = time.perf_counter()
        try:
            with spans.model_call_span(model) as span:
                turn = await models.complete(model, messages, tools.openai_tools, tools.name_map, context=context)
                spans.record_model_turn(span, turn)
        except ModelError as exc:  # the time it took to fail, retries included, is the attempt's latency too
            return transcript(None, "model_error", str(exc), retries=exc.retries, failed_ms=(time.perf_counter() - started) * 1000)
        turns.append(turn)
        messages.append(dict(turn.raw_message))
        if not turn.tool_calls:
            try:
                reply = await _user_reply(user, messages, prompt, user_turns)
            except ModelError as exc:  # the simulated user's model is down: what the task would have come to is unknown
                return transcript(turn.text, "model_error", f"simulated user: {exc}", retries=exc.retries)
            if reply is None:  # a refusal is the model's answer (scored as such: `selection` says "refused")
                return transcript(turn.text or turn.refusal, "final")
            user_turns.append(UserTurn(len(messages), reply, user.name if user else ""))
            messages.append({"role": "user", "content": reply})
            continue
        for call in turn.tool_calls:
            if call.name in tools.distractors:  # the model chose a decoy: its wrong choice, nothing for the server to answer
                executions.append(ToolExecution(call, None, DISTRACTOR_TEXT, True, 0.0, (), DISTRACTOR))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": f"Error: {DISTRACTOR_TEXT}"})
                continue
            execution = await execute_tool(mcp, call, tools.schemas.get(call.name), answers, max_input_rounds)
            executions.append(execution)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": tool_result_text(execution)})
    return transcript(None, "step_limit", f"no final answer within {max_steps} model turns")


async def _user_reply(user: SimulatedUser | None, messages: Sequence[Mapping[str, Any]], prompt: str, user_turns: Sequence[UserTurn]) -> str | None:
    """The simulated user's answer to the assistant's last reply, or None when there is no user or it is done.

    `ModelError` when the user's model failed beyond its retries: the conversation cannot go on as the case means it
    to, so the attempt is errored (a provider error, `evalcore.taxonomy`), never scored on an answer cut short.
    """
    if user is None or len(user_turns) >= user.profile.max_turns:
        return None
    conversation = [("user", prompt)] + [
        ("user" if m.get("role") == "user" else "assistant", str(m.get("content") or ""))
        for m in messages[2:]
        if m.get("role") in ("user", "assistant") and m.get("content")
    ]
    return await user.follow_up(conversation)  # a ModelError is the caller's: the attempt is errored (provider)


async def execute_tool(
    mcp: McpClient, call: ToolCall, input_schema: object, responder: InputResponder | None = None, max_input_rounds: int = DEFAULT_MAX_ROUNDS
) -> ToolExecution:
    """Run one tool call on the server (through any MRTR rounds); protocol and transport failures become an error the model sees."""
    with spans.tool_call_span(call) as span:
        leaked = current_redactor().found(dict(call.arguments))
        if leaked:
            error = f"evalcore refused to send this call: its arguments carry the secret {', '.join(leaked)}"
            execution = ToolExecution(call, None, error, True, 0.0, (), LEAK_ATTEMPT)
            spans.record_tool_execution(span, execution)
            return execution
        started = time.perf_counter()
        trip = await call_tool_with_input(
            mcp,
            call.name,
            call.arguments,
            responder or RefusingResponder(),
            input_schema=input_schema if isinstance(input_schema, dict) else None,
            max_rounds=max_input_rounds,
        )
        elapsed = (time.perf_counter() - started) * 1000
        execution = _execution(call, trip, elapsed)
        spans.record_tool_execution(span, execution)
    return execution


def _execution(call: ToolCall, trip: RoundTrip, elapsed_ms: float) -> ToolExecution:
    exchange: Exchange = trip.exchange
    ids, rounds = trip.request_ids, trip.rounds
    if trip.error is not None:
        return ToolExecution(call, None, trip.error, True, elapsed_ms, ids, trip.error_type, rounds=rounds)
    if exchange.result is not None:
        is_error = exchange.result.get("isError") is True
        return ToolExecution(call, exchange.result, None, is_error, elapsed_ms, ids, "tool_error" if is_error else None, rounds=rounds)
    error = exchange.error
    if error:
        return ToolExecution(call, None, f"{error.get('code')}: {error.get('message')}", True, elapsed_ms, ids, str(error.get("code")), rounds=rounds)
    failure = exchange.failure
    return ToolExecution(call, None, str(failure or "no answer"), True, elapsed_ms, ids, failure.kind if failure else "no_answer", rounds=rounds)


def tool_result_text(execution: ToolExecution) -> str:
    """What the model is shown: the result's text content (or structured content), prefixed when it is an error."""
    if execution.result is None:
        return f"Error: the tool call failed ({execution.error})"
    parts = [str(item.get("text", "")) for item in execution.result.get("content") or [] if isinstance(item, dict) and item.get("type") == "text"]
    text = "\n".join(p for p in parts if p)
    if not text and "structuredContent" in execution.result:
        text = json.dumps(execution.result["structuredContent"])
    text = clip(text, MAX_TOOL_RESULT_CHARS)
    return f"Error: {text}" if execution.is_error else text
