"""MRTR (multi round-trip requests) in the client: the pure rules, the round trip over HTTP and stdio, and the failures.

The reference server's MRTR tools are written with the official SDK's resolvers;
`mrtr_stdio.py` is a raw server that misbehaves in one MRTR way per mode.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from evalcore.behaviour.inputs import AttemptResponder
from evalcore.mcp.client import McpClient
from evalcore.mcp.mrtr import INPUT_CAPABILITIES, RefusingResponder, call_tool_with_input
from evalcore.mcp.protocol.input_requests import InputRequestProblem, parse_input_required, retry_params
from evalcore.mcp.protocol.tracecontext import conversation_trace
from evalcore.mcp.transport.base import Limits
from evalcore.mcp.transport.http import HttpTransport
from evalcore.mcp.transport.stdio import StdioTransport
from evalcore.models.adapter import IN_PROCESS
from evalcore.models.types import ModelSpec
from evalcore.records import InputAnswer, InputRequest
from evalcore.users.profile import UserProfile
from evalcore.users.simulated import SimulatedUser

ROOT = Path(__file__).resolve().parents[1]
MRTR_STDIO = Path(__file__).with_name("mrtr_stdio.py")
FORM = {"method": "elicitation/create", "params": {"message": "Your name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}


# --- pure rules ------------------------------------------------------------------------------


def test_parse_reads_requests_and_state():
    asked = parse_input_required("tools/call", {"resultType": "input_required", "inputRequests": {"who": FORM}, "requestState": "s1"}, INPUT_CAPABILITIES)
    assert asked.request_state == "s1"
    assert [(r.key, r.method, r.elicitation_mode) for r in asked.requests] == [("who", "elicitation/create", "form")]


@pytest.mark.parametrize(
    ("method", "result", "capabilities", "message"),
    [
        ("tools/list", {"requestState": "x"}, INPUT_CAPABILITIES, "only prompts/get, resources/read, tools/call may"),
        ("tools/call", {}, INPUT_CAPABILITIES, "neither inputRequests nor requestState"),
        ("tools/call", {"requestState": 7}, INPUT_CAPABILITIES, "requestState must be a string"),
        ("tools/call", {"inputRequests": {"x": {"method": "tools/call"}}}, INPUT_CAPABILITIES, "asks for 'tools/call'"),
        ("tools/call", {"inputRequests": {"x": {"method": "elicitation/create", "params": {"message": "hi"}}}}, INPUT_CAPABILITIES, "malformed"),
        ("tools/call", {"inputRequests": {"x": {"method": "sampling/createMessage", "params": {"messages": []}}}}, INPUT_CAPABILITIES, "maxTokens"),
        ("tools/call", {"inputRequests": {"x": FORM}}, {}, "did not declare the 'elicitation' capability"),
        (
            "tools/call",
            {"inputRequests": {"x": {"method": "elicitation/create", "params": {"mode": "url", "message": "go", "url": "https://a.example/x"}}}},
            {"elicitation": {"form": {}}},
            "declared only form mode",
        ),
    ],
)
def test_parse_rejects_what_the_client_cannot_act_on(method, result, capabilities, message):
    with pytest.raises(InputRequestProblem, match=message):
        parse_input_required(method, {"resultType": "input_required", **result}, capabilities)


def test_retry_params_echo_state_exactly_and_never_invent_one():
    original = {"name": "t", "arguments": {"a": 1}, "_meta": {"x": 1}}
    assert retry_params(original, {"k": {"action": "accept"}}, " opaque ==") == {
        "name": "t",
        "arguments": {"a": 1},
        "inputResponses": {"k": {"action": "accept"}},
        "requestState": " opaque ==",
    }
    again = retry_params({**original, "requestState": "old", "inputResponses": {"k": {}}}, {}, None)
    assert "requestState" not in again and "inputResponses" not in again and "_meta" not in again


# --- over the wire: the reference server's SDK-built MRTR tools --------------------------------


def _http(url: str, capabilities: dict[str, Any] | None = INPUT_CAPABILITIES) -> McpClient:
    return McpClient(HttpTransport(url, Limits()), client_capabilities=capabilities)


def _stdio(capabilities: dict[str, Any] | None = INPUT_CAPABILITIES) -> McpClient:
    command = [sys.executable, "-m", "evalcore.demo_server", "--stdio"]
    return McpClient(StdioTransport(command, Limits(read_timeout=30.0), env={"PYTHONPATH": str(ROOT)}), client_capabilities=capabilities)


@pytest.fixture(params=["http", "stdio"])
def make_client(request, reference_url):
    return (lambda capabilities=INPUT_CAPABILITIES: _http(reference_url, capabilities)) if request.param == "http" else _stdio


def _responder(goal: str, facts: dict[str, str] | None = None) -> AttemptResponder:
    user = SimulatedUser(UserProfile(goal=goal, facts=facts or {}), IN_PROCESS)
    return AttemptResponder(user=user, sampling_model=ModelSpec("sim/lexical"), models=IN_PROCESS)


async def _status(client: McpClient, ticket_id: str) -> str:
    exchange = await client.call_tool("get_ticket", {"ticket_id": ticket_id})
    assert exchange.result is not None
    return str(exchange.result["structuredContent"]["status"])


def test_confirmed_close_takes_one_round_and_changes_this_conversation_only(make_client):
    async def go() -> None:
        client = make_client()
        try:
            with conversation_trace():
                trip = await call_tool_with_input(client, "update_ticket_status", {"ticket_id": "TCK-7003", "status": "closed"}, _responder("Close TCK-7003."))
                assert trip.error is None and trip.exchange.result is not None
                assert trip.exchange.result["structuredContent"] == {"ticket_id": "TCK-7003", "previous_status": "resolved", "status": "closed"}
                [round_] = trip.rounds
                [request] = round_.requests
                assert request.method == "elicitation/create" and "Close ticket TCK-7003" in request.params["message"]
                assert round_.answers[request.key].response == {"action": "accept", "content": {"confirm": True}}
                assert round_.answers[request.key].answered_by == "user"
                assert round_.request_state is not None  # the SDK seals the asked question into requestState
                assert set(round_.request_ids).isdisjoint(trip.request_ids)  # the retry went out under a new id
                assert await _status(client, "TCK-7003") == "closed"
            with conversation_trace():
                assert await _status(client, "TCK-7003") == "resolved"  # another conversation never sees the change
        finally:
            await client.aclose()

    asyncio.run(go())


def test_declined_close_is_a_tool_error_and_changes_nothing(make_client):
    async def go() -> None:
        client = make_client()
        try:
            with conversation_trace():
                responder = _responder("Keep TCK-7002 as it is.", {"confirm": "no"})
                trip = await call_tool_with_input(client, "update_ticket_status", {"ticket_id": "TCK-7002", "status": "closed"}, responder)
                assert trip.error is None and trip.exchange.result is not None and trip.exchange.result["isError"] is True
                assert "did not confirm closing TCK-7002" in json.dumps(trip.exchange.result)
                assert trip.rounds[0].answers[trip.rounds[0].requests[0].key].response == {"action": "decline"}
                assert await _status(client, "TCK-7002") == "pending"
        finally:
            await client.aclose()

    asyncio.run(go())


def test_summary_is_sampled_by_the_client_model(make_client):
    async def go() -> None:
        client = make_client()
        try:
            trip = await call_tool_with_input(client, "summarize_ticket", {"ticket_id": "TCK-7001"}, _responder("Summarize TCK-7001."))
            assert trip.error is None and trip.exchange.result is not None
            [round_] = trip.rounds
            answer = next(iter(round_.answers.values()))
            assert round_.requests[0].method == "sampling/createMessage" and answer.answered_by == "model" and answer.answerer == "sim/lexical"
            summary = trip.exchange.result["structuredContent"]
            assert "VPN drops every 30 minutes" in summary["summary"] and summary["summarized_by"].startswith("sim/lexical")
        finally:
            await client.aclose()

    asyncio.run(go())


def test_client_without_elicitation_gets_the_missing_capability_error(make_client):
    async def go() -> None:
        client = make_client({})
        try:
            trip = await call_tool_with_input(client, "erase_customer_data", {"customer_id": "CUST-1003"}, RefusingResponder())
            assert trip.rounds == () and trip.exchange.error_code == -32021
        finally:
            await client.aclose()

    asyncio.run(go())


# --- a server that misbehaves in one MRTR way -------------------------------------------------


class _Roots:
    async def answer(self, request: InputRequest) -> InputAnswer:
        return InputAnswer({"roots": [{"uri": "file:///srv/desk", "name": "desk"}]}, "case", "case roots")


def _trip(mode: str, max_rounds: int = 3):
    async def go():
        client = McpClient(StdioTransport([sys.executable, str(MRTR_STDIO), mode], Limits(read_timeout=10.0)), client_capabilities=INPUT_CAPABILITIES)
        try:
            return await call_tool_with_input(client, "anything", {"a": 1}, _Roots(), max_rounds=max_rounds)
        finally:
            await client.aclose()

    return asyncio.run(go())


def test_retry_carries_responses_and_the_exact_state():
    trip = _trip("echo")
    assert trip.error is None and trip.exchange.result is not None
    echoed = json.loads(trip.exchange.result["content"][0]["text"])
    assert echoed == {"requestState": "opaque-1", "inputResponses": {"where": {"roots": [{"uri": "file:///srv/desk", "name": "desk"}]}}}
    assert trip.exchange.request is not None and trip.exchange.request["params"]["arguments"] == {"a": 1}


@pytest.mark.parametrize(
    ("mode", "error_type", "message"),
    [
        ("loop", "mrtr_loop", "still answered input_required after 3 rounds"),
        ("malformed", "mrtr_malformed", "asks for 'tools/call'"),
        ("neither", "mrtr_malformed", "neither inputRequests nor requestState"),
        ("no-params", "mrtr_malformed", "malformed"),
    ],
)
def test_misbehaving_server_ends_the_call_with_one_clear_error(mode, error_type, message):
    trip = _trip(mode)
    assert trip.error_type == error_type and message in (trip.error or "")
    assert len(trip.rounds) == (3 if mode == "loop" else 0)


def test_reference_server_asks_again_without_responses_and_rejects_a_tampered_state(reference_url):
    async def go() -> None:
        client = _http(reference_url)
        try:
            params = {"name": "update_ticket_status", "arguments": {"ticket_id": "TCK-7003", "status": "closed"}}
            first = await client.request("tools/call", params)
            assert first.result is not None and first.result["resultType"] == "input_required"
            state = first.result["requestState"]
            again = await client.request("tools/call", {**params, "requestState": state})  # a retry that answers nothing
            assert again.result is not None and again.result["resultType"] == "input_required" and again.result["inputRequests"]
            tampered = await client.request("tools/call", {**params, "requestState": state[:-2] + ("A" if state[-2] != "A" else "B") + state[-1]})
            assert tampered.error_code == -32602
            other_call = {"name": "update_ticket_status", "arguments": {"ticket_id": "TCK-7001", "status": "closed"}, "requestState": state}
            assert (await client.request("tools/call", other_call)).error_code == -32602  # state bound to the original request
        finally:
            await client.aclose()

    asyncio.run(go())
