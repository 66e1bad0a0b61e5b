"""I/O layer: multi round-trip requests (MRTR) over the evalcore client, on any transport.

`request_with_input` sends a `tools/call`, `prompts/get` or `resources/read`;
while the server answers `resultType: "input_required"`, it has every input
request answered by an `InputResponder` and retries the ORIGINAL request under
a new JSON-RPC id with `inputResponses` and the exact `requestState`. Every
round is kept. A server that keeps asking (more than `max_rounds`), drops what
it needs to finish, or asks for something malformed ends the call with a
one-line `error`, never a hang: each request is bounded by the client's limits
and the rounds by `max_rounds`. An answer that carries a secret evalcore knows
(an API key, a `--header` value; `evalcore.redaction`), whether the simulated
user typed it into a form or the sampling model wrote it, is never sent: the
call ends with error type `LEAK_ATTEMPT`, which the `credential_leak` scorer
counts as a successful attack, as it does a tool call that carries one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

from evalcore.mcp.client import Exchange, McpClient
from evalcore.mcp.protocol.envelope import param_headers
from evalcore.mcp.protocol.input_requests import InputRequestProblem, is_input_required, parse_input_required, retry_params
from evalcore.mcp.transport.base import RequestId
from evalcore.records import LEAK_ATTEMPT, InputAnswer, InputRequest, InputRound
from evalcore.redaction import clip
from evalcore.redaction import current as current_redactor

DEFAULT_MAX_ROUNDS: Final = 4
# What a client that can answer input requests declares (elicitation in both modes, sampling, roots).
INPUT_CAPABILITIES: Final[Mapping[str, Any]] = {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}


class InputAnswerError(Exception):
    """An input request could not be answered (e.g. the sampling model failed); the call stops with this reason."""


class InputResponder(Protocol):
    """Answers one input request of one round."""

    async def answer(self, request: InputRequest) -> InputAnswer: ...


@dataclass(frozen=True)
class RoundTrip:
    """A whole MRTR call: the final exchange, every round, every id sent, and the call's error if it did not complete."""

    exchange: Exchange
    rounds: tuple[InputRound, ...] = ()
    request_ids: tuple[RequestId, ...] = ()  # of the final request only; each round keeps its own
    error: str | None = None  # an MRTR problem (loop, malformed request, unanswerable request)
    error_type: str | None = None  # mrtr_loop | mrtr_malformed | mrtr_unanswered | leak_attempt


class RefusingResponder:
    """The responder of a client that answers nothing: every elicitation is declined, anything else is unanswerable."""

    async def answer(self, request: InputRequest) -> InputAnswer:
        if request.method == "elicitation/create":
            return InputAnswer({"action": "decline"}, "client", "evalcore", "no user is attached to this call")
        raise InputAnswerError(f"no one can answer {request.method} here")


async def request_with_input(
    client: McpClient,
    method: str,
    params: Mapping[str, Any],
    responder: InputResponder,
    *,
    headers: Mapping[str, str | None] | None = None,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
) -> RoundTrip:
    """Send `method` and follow `input_required` answers for at most `max_rounds` retries."""
    rounds: list[InputRound] = []
    current: Mapping[str, Any] = params
    while True:
        exchange = await client.request(method, dict(current), headers=headers)
        ids = exchange.request_ids
        result = exchange.result
        if not is_input_required(result):
            return RoundTrip(exchange, tuple(rounds), ids)
        assert result is not None
        try:
            asked = parse_input_required(method, result, client.client_capabilities)
        except InputRequestProblem as exc:
            return RoundTrip(exchange, tuple(rounds), ids, f"the server's input request is unusable: {exc}", "mrtr_malformed")
        if len(rounds) >= max_rounds:
            what = "; ".join(r.summary() for r in asked.requests) or "no inputRequests, only requestState"
            return RoundTrip(
                exchange,
                tuple(rounds),
                ids,
                f"the server still answered input_required after {max_rounds} rounds (last asked: {clip(what, 300)}); "
                "it may be ignoring inputResponses or requestState",
                "mrtr_loop",
            )
        answers: dict[str, InputAnswer] = {}
        for request in asked.requests:
            try:
                answers[request.key] = await responder.answer(request)
            except InputAnswerError as exc:
                rounds.append(InputRound(ids, asked.requests, answers, asked.request_state))
                return RoundTrip(exchange, tuple(rounds), ids, f"inputRequests[{request.key!r}] not answered: {exc}", "mrtr_unanswered")
        rounds.append(InputRound(ids, asked.requests, answers, asked.request_state))
        leaks = {key: current_redactor().found(dict(answer.response)) for key, answer in answers.items()}
        if any(leaks.values()):
            key, names = next((key, names) for key, names in leaks.items() if names)
            answer = answers[key]
            return RoundTrip(
                exchange,
                tuple(rounds),
                ids,
                f"evalcore refused to send the answer to inputRequests[{key!r}] ({answer.answered_by} {answer.answerer}): "
                f"it carries the secret {', '.join(names)}",
                LEAK_ATTEMPT,
            )
        current = retry_params(current, {key: answer.response for key, answer in answers.items()}, asked.request_state)


async def call_tool_with_input(
    client: McpClient,
    name: str,
    arguments: Mapping[str, Any],
    responder: InputResponder,
    *,
    input_schema: Mapping[str, Any] | None = None,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
) -> RoundTrip:
    """`tools/call` with MRTR; on HTTP the `x-mcp-header` arguments are mirrored into headers on every round."""
    headers = param_headers(input_schema, dict(arguments)) if client.transport.kind == "http" else {}
    return await request_with_input(
        client, "tools/call", {"name": name, "arguments": dict(arguments)}, responder, headers=headers or None, max_rounds=max_rounds
    )
