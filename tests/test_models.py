"""Model layer: real litellm calls against the `sim/` provider, the sim HTTP endpoint and a faulty local endpoint."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import threading
import traceback
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from evalcore.errors import ConfigError, ModelError
from evalcore.mcp.client import McpClient
from evalcore.mcp.transport.http import HttpTransport
from evalcore.models.adapter import Backoff, complete
from evalcore.models.judge import judge_answer
from evalcore.models.judge_prompt import parse_verdict
from evalcore.models.pricing import register_prices, turn_cost
from evalcore.models.redaction import redact
from evalcore.models.sim.launcher import running_sim_server
from evalcore.models.tool_format import MODEL_NAME_PATTERN, ToolNameMap, to_openai_tools
from evalcore.models.types import ModelSpec, ModelTurn

NO_WAIT = Backoff(initial_s=0.0, max_s=0.0)
PLANTED_SECRET = "sk-test-PLANTED-123"
CONTEXT = {"case_id": "any", "attempt": 1, "run_date": "2026-10-01"}


# --- servers, started once per module -------------------------------------------------------------


async def _list_tools(url: str) -> list[dict[str, Any]]:
    client = McpClient(HttpTransport(url))
    try:
        exchange = await client.list_tools()
    finally:
        await client.aclose()
    assert exchange.result is not None, exchange.describe()
    return list(exchange.result["tools"])


@pytest.fixture(scope="module")
def mcp_tools(reference_url: str) -> list[dict[str, Any]]:
    return asyncio.run(_list_tools(reference_url))


@pytest.fixture(scope="module")
def sim_api_base() -> Iterator[str]:
    with running_sim_server() as url:
        yield url


class FaultyEndpoint:
    """An OpenAI-style endpoint in this process; each path prefix misbehaves one way. Counts requests per path."""

    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()
        self.bodies: dict[str, list[Mapping[str, Any]]] = {}
        self.app = Starlette(routes=[Route("/{mode}/v1/chat/completions", self.chat, methods=["POST"])])

    async def chat(self, request: Request) -> JSONResponse:
        mode = request.path_params["mode"]
        self.requests[mode] += 1
        self.bodies.setdefault(mode, []).append(await request.json())
        if mode.startswith("rate-limited-twice") and self.requests[mode] <= 2:
            return JSONResponse({"error": {"message": "Rate limit reached, slow down", "type": "rate_limit_error"}}, status_code=429)
        if mode == "unauthorized":  # like real providers, it quotes the key it was given
            key = request.headers.get("authorization", "").removeprefix("Bearer ")
            return JSONResponse({"error": {"message": f"Incorrect API key provided: {key}", "type": "invalid_request_error"}}, status_code=401)
        if mode == "hang":
            await asyncio.Event().wait()  # never answers; the server cancels it at shutdown
        if mode.startswith("unavailable"):
            return JSONResponse({"error": {"message": "overloaded"}}, status_code=503)
        message = {"role": "assistant", "content": "fine"}
        return JSONResponse(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 1,
                "model": "gpt-4o-2024-08-06",
                "system_fingerprint": "fp_abc",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10},
            }
        )


@pytest.fixture(scope="module")
def faulty() -> Iterator[tuple[FaultyEndpoint, str]]:
    endpoint = FaultyEndpoint()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)  # bound before the thread starts: early requests wait in the backlog, so no polling
    server = uvicorn.Server(uvicorn.Config(endpoint.app, log_level="warning", timeout_graceful_shutdown=1))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    yield endpoint, f"http://127.0.0.1:{listener.getsockname()[1]}"
    server.should_exit = True
    thread.join(10)
    listener.close()


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


# --- tool format ----------------------------------------------------------------------------------


def test_odd_tool_names_round_trip_and_schemas_stay_as_written() -> None:
    schema = {
        "type": "object",
        "$defs": {"Units": {"enum": ["c", "f"], "type": "string"}},
        "properties": {"units": {"$ref": "#/$defs/Units"}, "city": {"type": "string", "description": "City"}},
        "required": ["city"],
    }
    names = ["get_weather", "billing.search", "files/read", "a" * 80, "météo_actuelle", "天気", "get.weather", "get_weather_", "x" * 64]
    tools = [{"name": name, "description": f"tool {name}", "inputSchema": schema} for name in names]
    converted, name_map = to_openai_tools(tools)
    model_names = [tool["function"]["name"] for tool in converted]
    assert all(MODEL_NAME_PATTERN.match(name) for name in model_names), model_names
    assert len(set(model_names)) == len(names)
    assert [name_map.to_mcp(name) for name in model_names] == names
    assert [name_map.to_model(name) for name in names] == model_names
    assert model_names[0] == "get_weather" and model_names[-1] == "x" * 64  # valid names never change
    assert model_names[1] == "billing_search" and model_names[4] == "meteo_actuelle"
    assert model_names[6] != "get_weather" and model_names[6].startswith("get_weather_")  # collision: hash suffix
    assert len(model_names[3]) == 64
    for tool in converted:
        assert tool["type"] == "function"
        assert json.dumps(tool["function"]["parameters"]) == json.dumps(schema)
        assert tool["function"]["parameters"] is not schema
    assert name_map.to_mcp("made_up_tool") == "made_up_tool"
    assert to_openai_tools(tools)[0] == converted  # deterministic


# --- sim/lexical through litellm ------------------------------------------------------------------

SELECTION_CASES = [
    ("What's the weather in Paris right now?", "get_weather", {"city": "Paris"}),
    ("Can you pull up invoice INV-2026-0002?", "get_invoice", {"invoice_id": "INV-2026-0002"}),
    ("Where is my order ORD-50001?", "get_order_status", {"order_id": "ORD-50001"}),
    ("Mark ticket TCK-7001 as resolved.", "update_ticket_status", {"ticket_id": "TCK-7001", "status": "resolved"}),
    ("Who is the account manager for CUST-1001?", "get_customer", {"customer_id": "CUST-1001"}),
    ("What meetings do I have on 2026-08-03?", "list_calendar_events", {"date": "2026-08-03"}),
    (
        "Find paid invoices for CUST-1002 between 2026-01-01 and 2026-06-30",
        "search_invoices",
        {"customer_id": "CUST-1002", "status": "paid", "from_date": "2026-01-01", "to_date": "2026-06-30"},
    ),
    ("Search the knowledge base for refund policy", "search_knowledge_base", {"query": "refund policy"}),
]


@pytest.mark.parametrize(("prompt", "tool", "arguments"), SELECTION_CASES, ids=[case[1] for case in SELECTION_CASES])
def test_lexical_picks_the_right_tool_and_fills_arguments(mcp_tools: list[dict[str, Any]], prompt: str, tool: str, arguments: dict[str, Any]) -> None:
    tools, name_map = to_openai_tools(mcp_tools)
    turn = run(complete(ModelSpec("sim/lexical"), user(prompt), tools, name_map, context=CONTEXT))
    assert [call.name for call in turn.tool_calls] == [tool]
    assert dict(turn.tool_calls[0].arguments) == arguments
    assert turn.finish_reason == "tool_calls" and turn.text is None
    assert turn.cost_usd == 0.0 and turn.retries == 0
    assert turn.input_tokens and turn.input_tokens > 0 and turn.output_tokens and turn.output_tokens > 0
    assert turn.model_version == "sim/lexical lexical-1"


@pytest.mark.parametrize(
    "prompt", ["Hi there! How are you doing today?", "Tell me a joke about penguins.", "What's the capital of France?", "Thanks, that's all."]
)
def test_lexical_calls_no_tool_on_chit_chat(mcp_tools: list[dict[str, Any]], prompt: str) -> None:
    tools, name_map = to_openai_tools(mcp_tools)
    turn = run(complete(ModelSpec("sim/lexical"), user(prompt), tools, name_map))
    assert turn.tool_calls == ()
    assert turn.text is not None and turn.text.startswith("I can answer that without tools")
    assert turn.finish_reason == "stop"
    assert "tool_calls" not in turn.raw_message


def test_lexical_runs_a_whole_task_against_the_reference_server(reference_url: str, mcp_tools: list[dict[str, Any]]) -> None:
    async def go() -> tuple[ModelTurn, ModelTurn]:
        tools, name_map = to_openai_tools(mcp_tools)
        messages = user("Where is my order ORD-50001?")
        first = await complete(ModelSpec("sim/lexical"), messages, tools, name_map)
        call = first.tool_calls[0]
        client = McpClient(HttpTransport(reference_url))
        try:
            result = (await client.call_tool(call.name, call.arguments)).result
        finally:
            await client.aclose()
        assert result is not None and not result.get("isError")
        messages += [dict(first.raw_message), {"role": "tool", "tool_call_id": call.id, "content": result["content"][0]["text"]}]
        return first, await complete(ModelSpec("sim/lexical"), messages, tools, name_map)

    first, final = run(go())
    assert first.raw_message["tool_calls"][0]["function"]["name"] == "get_order_status"
    assert final.tool_calls == () and final.text is not None
    assert final.text.startswith("Here is what get_order_status returned:") and "ORD-50001" in final.text


def test_lexical_is_deterministic(mcp_tools: list[dict[str, Any]]) -> None:
    tools, name_map = to_openai_tools(mcp_tools)
    prompt = user("Open a high priority ticket for CUST-1002: the invoice PDF download returns a 500 error.")
    first, second = (run(complete(ModelSpec("sim/lexical"), prompt, tools, name_map)) for _ in range(2))
    assert first.tool_calls == second.tool_calls and first.raw_message == second.raw_message
    assert first.tool_calls[0].name == "create_support_ticket"
    assert first.tool_calls[0].arguments == {
        "subject": "the invoice PDF download returns a 500 error",
        "description": "the invoice PDF download returns a 500 error",
        "customer_id": "CUST-1002",
        "priority": "high",
    }


# --- the sim HTTP endpoint through litellm's real HTTP path -----------------------------------------


def test_http_sim_endpoint_serves_the_lexical_policy(mcp_tools: list[dict[str, Any]], sim_api_base: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_TOKEN")):
            monkeypatch.delenv(name)  # it must work without any key
    tools, name_map = to_openai_tools(mcp_tools)
    prompt = user("Mark ticket TCK-7001 as resolved.")
    over_http = run(complete(ModelSpec("hosted_vllm/sim-lexical", api_base=sim_api_base), prompt, tools, name_map))
    in_process = run(complete(ModelSpec("sim/lexical"), prompt, tools, name_map))
    assert over_http.tool_calls == in_process.tool_calls
    assert over_http.raw_message == in_process.raw_message
    assert over_http.model_version == "sim-lexical lexical-1"
    assert over_http.input_tokens == in_process.input_tokens and over_http.output_tokens == in_process.output_tokens
    assert over_http.cost_usd is None  # a custom model with no price: unknown, not a guess
    priced = ModelSpec("hosted_vllm/sim-lexical", api_base=sim_api_base, input_cost_per_token=1e-6, output_cost_per_token=4e-6)
    turn = run(complete(priced, prompt, tools, name_map))
    assert turn.input_tokens is not None and turn.output_tokens is not None
    assert turn.cost_usd == pytest.approx(turn.input_tokens * 1e-6 + turn.output_tokens * 4e-6)


def test_http_sim_endpoint_rejects_unknown_models_at_once(sim_api_base: str) -> None:
    """A 404 is not retried: the error carries retries == 0 and no "gave up after" (a retry would make both fail)."""
    with pytest.raises(ModelError, match=r"^hosted_vllm/gpt-9: NotFoundError: .*does not exist") as caught:
        run(complete(ModelSpec("hosted_vllm/gpt-9", api_base=sim_api_base, max_retries=3), user("hi"), [], ToolNameMap(), backoff=NO_WAIT))
    assert caught.value.retries == 0 and "gave up after" not in str(caught.value)


# --- sim/script -------------------------------------------------------------------------------------

SCRIPT = """
defaults:
  latency_ms: 30
  tokens: {input: 100, output: 10}
cases:
  weather:
    calls:
      - {name: get_weather, args: {city: Paris}}
    text: It is sunny in Paris.
    attempts:
      3:
        calls: [{name: get_weather, args: {city: London}}]
        tokens: {input: 300, output: 30}
  two-step:
    calls:
      - {name: search_invoices, args: {customer_id: CUST-1001, status: overdue}}
      - {name: send_email, args: {to: billing@acme.example, subject: Overdue, body: Please pay.}}
    text: Emailed billing.
  chit-chat:
    no_call: true
    text: Hello!
  bad-json:
    calls:
      - {name: get_invoice, raw_args: '{"invoice_id": "INV-'}
  outage:
    error: 503
  forbidden:
    error: {status: 401, message: key revoked}
  slow:
    latency_ms: 2000
from:
  2026-11-01:
    defaults: {model_version: script-v2}
    cases:
      weather:
        calls: [{name: get_weather, args: {city: paris}}]
"""


@pytest.fixture()
def script_model(tmp_path: Path) -> ModelSpec:
    path = tmp_path / "behaviour.yaml"
    path.write_text(SCRIPT)
    return ModelSpec(f"sim/script:{path}", max_retries=2)


def scripted(spec: ModelSpec, case_id: str, attempt: int = 1, run_date: str = "2026-10-01", messages: list[dict[str, Any]] | None = None) -> ModelTurn:
    context = {"case_id": case_id, "attempt": attempt, "run_date": run_date}
    return run(complete(spec, messages or user("anything"), [], ToolNameMap(), context=context, backoff=NO_WAIT))


def test_script_replays_calls_per_attempt_and_date(script_model: ModelSpec) -> None:
    first = scripted(script_model, "weather")
    assert [(c.name, dict(c.arguments)) for c in first.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert (first.input_tokens, first.output_tokens, first.cost_usd) == (100, 10, 0.0)
    assert first.latency_ms >= 30
    assert first.model_version is not None and first.model_version.endswith("sim-script")
    third = scripted(script_model, "weather", attempt=3)
    assert [dict(c.arguments) for c in third.tool_calls] == [{"city": "London"}]
    assert (third.input_tokens, third.output_tokens) == (300, 30)
    after_change = scripted(script_model, "weather", attempt=3, run_date="2026-11-01")  # the from-block replaces the whole case
    assert [dict(c.arguments) for c in after_change.tool_calls] == [{"city": "paris"}]
    assert after_change.model_version is not None and after_change.model_version.endswith("script-v2")
    assert scripted(script_model, "weather", run_date="2026-10-31").tool_calls[0].arguments == {"city": "Paris"}


def test_script_emits_one_call_per_turn_then_the_text(script_model: ModelSpec) -> None:
    messages = user("chase the overdue invoice")
    names = []
    for _ in range(3):
        turn = scripted(script_model, "two-step", messages=messages)
        messages.append(dict(turn.raw_message))
        for call in turn.tool_calls:
            names.append(call.name)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "ok"})
    assert names == ["search_invoices", "send_email"]
    assert turn.text == "Emailed billing." and turn.tool_calls == ()
    assert scripted(script_model, "chit-chat").text == "Hello!"
    unknown = scripted(script_model, "not-in-the-script")
    assert unknown.tool_calls == () and unknown.text == "no script for this case"


def test_script_malformed_arguments_are_kept_raw(script_model: ModelSpec) -> None:
    call = scripted(script_model, "bad-json").tool_calls[0]
    assert call.name == "get_invoice" and call.arguments == {} and not call.arguments_valid_json
    assert call.raw_arguments == '{"invoice_id": "INV-'


def test_script_errors_are_retried_or_not_by_status(script_model: ModelSpec) -> None:
    with pytest.raises(ModelError, match=r"ServiceUnavailableError.*\(gave up after 2 retries\)$"):
        scripted(script_model, "outage")
    with pytest.raises(ModelError, match=r"AuthenticationError.*key revoked$"):
        scripted(script_model, "forbidden")


def test_simulated_latency_beyond_the_timeout_is_a_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 2 s simulated latency under a 0.2 s timeout waits the 0.2 s, then times out, not retried.

    The sim's clock is injected (its waits are recorded, not slept): fails if it waits the whole latency, waits
    twice (a retry), or answers instead of timing out.
    """
    from evalcore.models.sim import provider

    waits: list[float] = []
    monkeypatch.setattr(provider, "time", SimpleNamespace(sleep=waits.append))
    path = tmp_path / "slow.yaml"
    path.write_text(SCRIPT)
    spec = ModelSpec(f"sim/script:{path}", timeout_s=0.2, max_retries=0)
    with pytest.raises(ModelError, match=r"Timeout.*exceeds the 0.2 s timeout") as caught:
        scripted(spec, "slow")
    assert waits == [pytest.approx(0.2)] and caught.value.retries == 0


def test_bad_model_strings_and_scripts_are_config_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("cases:\n  weather:\n    call: [{name: get_weather}]\n")
    with pytest.raises(ConfigError, match=r"case 'weather': unknown key 'call' \(expected one of: attempts, calls"):
        run(complete(ModelSpec(f"sim/script:{bad}"), user("x"), [], ToolNameMap()))
    with pytest.raises(ConfigError, match="cannot read it"):
        run(complete(ModelSpec(f"sim/script:{tmp_path / 'missing.yaml'}"), user("x"), [], ToolNameMap()))
    with pytest.raises(ConfigError, match="unknown sim model 'sim/clever'"):
        run(complete(ModelSpec("sim/clever"), user("x"), [], ToolNameMap()))
    with pytest.raises(ConfigError, match="does not know its provider"):
        run(complete(ModelSpec("no-such-provider-model"), user("x"), [], ToolNameMap()))


# --- retries, timeouts and secrets against a faulty endpoint -----------------------------------------


# Two litellm paths: its own httpx client (hosted_vllm) and the OpenAI SDK (openai), which retries on its own unless told not to.
PROVIDERS = ["hosted_vllm/any", "openai/gpt-4o"]


@pytest.fixture()
def dummy_openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy-for-a-local-endpoint")


@pytest.mark.parametrize("model", PROVIDERS)
def test_rate_limits_are_retried_and_counted(faulty: tuple[FaultyEndpoint, str], dummy_openai_key: None, model: str) -> None:
    endpoint, root = faulty
    mode = f"rate-limited-twice-{model.split('/')[0]}"
    turn = run(complete(ModelSpec(model, api_base=f"{root}/{mode}/v1"), user("hi"), [], ToolNameMap(), backoff=NO_WAIT))
    assert turn.retries == 2 and endpoint.requests[mode] == 3
    assert turn.text == "fine" and turn.model_version == "gpt-4o-2024-08-06 fp_abc"
    assert (turn.input_tokens, turn.output_tokens, turn.finish_reason) == (9, 1, "stop")


@pytest.mark.parametrize("model", PROVIDERS)
def test_server_errors_give_up_after_max_retries(faulty: tuple[FaultyEndpoint, str], dummy_openai_key: None, model: str) -> None:
    endpoint, root = faulty
    mode = f"unavailable-{model.split('/')[0]}"
    spec = ModelSpec(model, api_base=f"{root}/{mode}/v1", max_retries=3)
    with pytest.raises(ModelError, match=rf"^{model}: ServiceUnavailableError: .*overloaded.*\(gave up after 3 retries\)$"):
        run(complete(spec, user("hi"), [], ToolNameMap(), backoff=NO_WAIT))
    assert endpoint.requests[mode] == 4


def test_auth_failure_is_immediate_and_never_shows_the_key(faulty: tuple[FaultyEndpoint, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED_SECRET)
    endpoint, root = faulty
    with pytest.raises(ModelError) as caught:
        run(complete(ModelSpec("openai/gpt-4o", api_base=f"{root}/unauthorized/v1"), user("hi"), [], ToolNameMap(), backoff=NO_WAIT))
    assert endpoint.requests["unauthorized"] == 1
    message = str(caught.value)
    assert message.startswith("openai/gpt-4o: AuthenticationError") and "[redacted" in message
    assert PLANTED_SECRET not in message and "PLANTED" not in repr(caught.value)
    assert caught.value.__cause__ is None and caught.value.__context__ is None  # the original error quotes the key: not chained
    assert PLANTED_SECRET not in "".join(traceback.format_exception(caught.value))


def test_a_hanging_endpoint_times_out(faulty: tuple[FaultyEndpoint, str]) -> None:
    """Each attempt at an endpoint that answers after 30 s ends at the spec's 0.3 s timeout, and is retried once.

    litellm names the timeout it was passed. Fails if the timeout is not passed on: the hard ceiling (`TIMEOUT_GRACE_S` later) would end the attempt with a
    plain TimeoutError instead of litellm's Timeout, or the 30 s answer would arrive ("fine", no error).
    """
    endpoint, root = faulty
    spec = ModelSpec("hosted_vllm/any", api_base=f"{root}/hang/v1", timeout_s=0.3, max_retries=1)
    with pytest.raises(ModelError, match=r"^hosted_vllm/any: Timeout Error: .*Timeout passed=0\.3,.*\(gave up after 1 retry\)$") as caught:
        run(complete(spec, user("hi"), [], ToolNameMap(), backoff=NO_WAIT))
    assert type(caught.value.__cause__).__name__ == "Timeout" and caught.value.retries == 1
    assert endpoint.requests["hang"] == 2


def test_redact_hides_credential_values_and_key_shapes() -> None:
    environ = {"ANTHROPIC_API_KEY": "ant-secret-value-1", "GITHUB_TOKEN": "ghp_abcdefgh", "DEBUG_KEY": "1", "HOME": "/home/someone"}
    text = "keys ant-secret-value-1 and ghp_abcdefgh, sk-proj-ABCDEFGH1234 and Bearer abcdefghijk, debug 1 at /home/someone"
    expected = "keys [redacted:ANTHROPIC_API_KEY] and [redacted:GITHUB_TOKEN], [redacted] and [redacted], debug 1 at /home/someone"
    assert redact(text, environ) == expected


# --- prices -----------------------------------------------------------------------------------------


def test_costs_are_zero_for_sim_unknown_for_custom_and_priced_when_known() -> None:
    assert turn_cost(ModelSpec("sim/lexical"), 1000, 100) == 0.0
    assert turn_cost(ModelSpec("hosted_vllm/my-own-model"), 1000, 100) is None
    assert turn_cost(ModelSpec("hosted_vllm/registered-model"), 1000, 100) is None
    register_prices({"hosted_vllm/registered-model": (2e-6, 8e-6)})
    assert turn_cost(ModelSpec("hosted_vllm/registered-model"), 1000, 100) == pytest.approx(1000 * 2e-6 + 100 * 8e-6)
    overridden = ModelSpec("hosted_vllm/registered-model", input_cost_per_token=1e-6, output_cost_per_token=1e-6)
    assert turn_cost(overridden, 1000, 100) == pytest.approx(1100e-6)
    known = turn_cost(ModelSpec("openai/gpt-4o"), 1000, 100)  # litellm's bundled cost map
    assert known is not None and known > 0
    assert turn_cost(ModelSpec("openai/gpt-4o"), None, 100) is None
    with pytest.raises(ConfigError, match="two non-negative numbers"):
        register_prices({"x/y": (-1.0, 0.0)})


# --- the judge ---------------------------------------------------------------------------------------


def test_judge_output_parsing() -> None:
    good = parse_verdict('{"pass": true, "score": 0.9, "reason": "Gives the temperature."}', "openai/gpt-4o")
    assert (good.passed, good.score, good.reason, good.judge_model) == (True, 0.9, "Gives the temperature.", "openai/gpt-4o")
    fenced = parse_verdict('Here is my verdict:\n```json\n{"pass": false, "score": 0.2, "reason": "No temperature."}\n```', "j")
    assert (fenced.passed, fenced.score) == (False, 0.2)
    odd_score = parse_verdict('{"pass": true, "score": 7, "reason": "ok"}', "j")
    assert odd_score.passed and odd_score.score is None
    for garbage in ["I think it passes.", '{"pass": "yes"}', "", None]:
        verdict = parse_verdict(garbage, "j")
        assert not verdict.passed and verdict.score is None
        assert verdict.reason.startswith("judge output not parseable: ")


def test_sim_judge_passes_answers_that_cover_the_rubric() -> None:
    async def judge(final_text: str | None) -> Any:
        return await judge_answer(
            ModelSpec("sim/judge"),
            rubric="Answers must be grounded in tool results.",
            case_rubric="The answer gives the temperature and the conditions in Paris.",
            prompt="What's the weather in Paris?",
            tool_calls_summary="get_weather(city='Paris')",
            final_text=final_text,
        )

    passed = run(judge('Here is what get_weather returned: {"city": "Paris", "temperature": 18.5, "condition": "Partly cloudy"}'))
    assert passed.passed and passed.score == 1.0 and passed.judge_model == "sim/judge"
    failed = run(judge("I could not find that."))
    assert not failed.passed and failed.score == 0.0
    assert not run(judge(None)).passed


# --- import cost --------------------------------------------------------------------------------------


def test_importing_the_model_layer_does_not_import_litellm() -> None:
    modules = "evalcore.models.adapter, evalcore.models.judge, evalcore.models.pricing, evalcore.models.tool_format, evalcore.models.sim.catalog"
    code = f"import sys, {modules}; print('litellm' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "False"


def test_errors_quote_the_model_in_one_line(script_model: ModelSpec) -> None:
    with pytest.raises(ModelError) as caught:
        scripted(script_model, "forbidden")
    assert "\n" not in str(caught.value) and re.match(r"^sim/script:\S+: ", str(caught.value))


def test_metadata_is_not_sent_to_http_providers(faulty: tuple[FaultyEndpoint, str]) -> None:
    endpoint, root = faulty
    run(complete(ModelSpec("hosted_vllm/any", api_base=f"{root}/ok/v1", seed=11), user("hi"), [], ToolNameMap(), context={"case_id": "c"}))
    body = endpoint.bodies["ok"][-1]
    assert "metadata" not in body and "tools" not in body
    assert body["seed"] == 11 and body["temperature"] == 0.0 and body["messages"] == user("hi")
