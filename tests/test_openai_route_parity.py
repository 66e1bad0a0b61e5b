"""The OpenAI-wire route (the official openai SDK) and litellm (`EVALCORE_MODEL_ROUTE=litellm`) against one scripted
OpenAI-compatible endpoint (tests/scripted_openai.py): the same attempt, case by case. Where they differ, litellm is
wrong and the test says why."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from evalcore.errors import ModelError
from evalcore.models.adapter import Backoff, complete
from evalcore.models.limits import provider_gate, provider_key
from evalcore.models.openai_route import ROUTE_VARIABLE
from evalcore.models.provider_errors import error_class
from evalcore.models.tool_format import to_openai_tools
from evalcore.models.types import ModelSpec, ModelTurn
from tests.scripted_openai import Scripted, scripted_openai

TOOLS, NAMES = to_openai_tools(
    [
        {"name": "get_weather", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}},
        {"name": "close_ticket", "inputSchema": {"type": "object", "properties": {"ticket_id": {"type": "string"}}}},
    ]
)
NO_WAIT = Backoff(initial_s=0.0, max_s=0.0)
ROUTES = ("openai-sdk", "litellm")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[Scripted]:
    with scripted_openai() as scripted:
        yield scripted


@pytest.fixture(autouse=True)
def _credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-parity-placeholder-key")
    for name in ("OPENAI_ORGANIZATION", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "HOSTED_VLLM_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)


class FakeTime:
    """A clock that moves only when something sleeps on it: a Retry-After is waited out at once."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def pause(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def _attempt(spec: ModelSpec, prompt: str, monkeypatch: pytest.MonkeyPatch, route: str) -> tuple[ModelTurn | ModelError, list[float]]:
    """One turn of `spec` by `route`: the turn or the error, and the waits its provider's gate imposed."""
    if route == "litellm":
        monkeypatch.setenv(ROUTE_VARIABLE, "litellm")
    else:
        monkeypatch.delenv(ROUTE_VARIABLE, raising=False)
    fake = FakeTime()

    async def turn() -> tuple[ModelTurn | ModelError, list[float]]:
        gate = provider_gate(provider_key(spec.name, spec.api_base), spec.limits, clock=fake.clock, sleep=fake.pause)
        try:
            outcome: ModelTurn | ModelError = await complete(
                spec, [{"role": "user", "content": prompt}], TOOLS, NAMES, backoff=NO_WAIT, clock=fake.clock, sleep=fake.pause
            )
        except ModelError as exc:
            outcome = exc
        return outcome, gate.waits

    return asyncio.run(turn())


def _both(spec: ModelSpec, prompt: str, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    return [_attempt(spec, prompt, monkeypatch, route)[0] for route in ROUTES]


def _same_turn(mine: ModelTurn, theirs: ModelTurn) -> None:
    for field in ("text", "tool_calls", "raw_message", "finish_reason", "input_tokens", "output_tokens", "model_version", "retries", "cost_usd"):
        assert getattr(mine, field) == getattr(theirs, field), field


def _spec(endpoint: Scripted, name: str = "openai/my-model", **fields: Any) -> ModelSpec:
    return ModelSpec(name, api_base=f"{endpoint.url}/v1", max_retries=1, timeout_s=5.0, **fields)


@pytest.mark.parametrize("model", ["openai/my-model", "hosted_vllm/my-model", "openai/gpt-4o-mini"])
@pytest.mark.parametrize("case", ["plain", "string-tokens", "two-calls", "bad-arguments", "content-null", "cached-tokens"])
def test_the_same_turn_on_both_routes(endpoint: Scripted, model: str, case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Text, tool calls (several; arguments that are no JSON kept as sent), tokens (`"12"` read as 12), finish
    reason, model version, cost (a model no price list knows: None on both; gpt-4o-mini: litellm's figure, cached
    input tokens at their own price) and the message kept for the next turn."""
    mine, theirs = _both(_spec(endpoint, model), f"CASE:{case}", monkeypatch)
    assert isinstance(mine, ModelTurn) and isinstance(theirs, ModelTurn)
    _same_turn(mine, theirs)
    if case == "string-tokens":
        assert (mine.input_tokens, mine.output_tokens) == (12, 5)
    if case == "two-calls":
        assert [call.name for call in mine.tool_calls] == ["get_weather", "close_ticket"]
    if case == "bad-arguments":
        assert not mine.tool_calls[0].arguments_valid_json and mine.tool_calls[0].raw_arguments == '{"city": "Par'
    if model == "openai/gpt-4o-mini":
        assert mine.cost_usd is not None and mine.cost_usd > 0
        if case == "cached-tokens":  # 200 uncached, 800 cached and 10 output tokens, at gpt-4o-mini's prices
            assert mine.cost_usd == pytest.approx(0.000096, rel=1e-9)
    else:
        assert mine.cost_usd is None  # "no price", never $0


def test_a_tool_call_without_an_id_gets_a_stable_one(endpoint: Scripted, monkeypatch: pytest.MonkeyPatch) -> None:
    """litellm makes up a random id; ours is `call_<index>`, the same at every attempt (a replay, a cache key)."""
    mine, theirs = _both(_spec(endpoint), "CASE:no-call-id", monkeypatch)
    assert isinstance(mine, ModelTurn) and isinstance(theirs, ModelTurn)
    assert mine.tool_calls[0].id == "call_0" and mine.raw_message["tool_calls"][0]["id"] == "call_0"
    assert [(c.name, c.arguments) for c in mine.tool_calls] == [(c.name, c.arguments) for c in theirs.tool_calls] == [("get_weather", {"city": "Paris"})]


def test_content_given_as_a_list_of_parts_is_the_text(endpoint: Scripted, monkeypatch: pytest.MonkeyPatch) -> None:
    """Content as a list of text parts (some OpenAI-compatible servers answer so) is read as their text; litellm
    fails the call as an "Invalid response object" and retries it, though the answer was a good one."""
    mine, theirs = _both(_spec(endpoint), "CASE:content-parts", monkeypatch)
    assert isinstance(mine, ModelTurn) and mine.text == "Sunny, 21 C." and mine.retries == 0
    assert isinstance(theirs, ModelError) and "Invalid response object" in str(theirs)


def test_an_answer_without_usage_has_unknown_tokens_and_no_price(endpoint: Scripted, monkeypatch: pytest.MonkeyPatch) -> None:
    """No `usage`: the tokens are unknown and so is the cost. litellm reads 0 tokens, and so $0 for a priced
    model: a call that cost money would read as free, and a run's cost as lower than it was (no false green)."""
    mine, theirs = _both(_spec(endpoint, "openai/gpt-4o-mini"), "CASE:no-usage", monkeypatch)
    assert isinstance(mine, ModelTurn) and isinstance(theirs, ModelTurn) and mine.text == theirs.text == "Sunny."
    assert (mine.input_tokens, mine.output_tokens, mine.cost_usd) == (None, None, None)
    assert (theirs.input_tokens, theirs.output_tokens, theirs.cost_usd) == (0, 0, 0.0)


@pytest.mark.parametrize(
    ("case", "error", "retried"),
    [
        ("bad-gateway", "BadGatewayError", True),
        ("unauthorized", "AuthenticationError", False),
        ("not-found", "NotFoundError", False),
    ],
)
def test_the_same_error_on_both_routes(endpoint: Scripted, case: str, error: str, retried: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    mine, theirs = _both(_spec(endpoint), f"CASE:{case}", monkeypatch)
    assert isinstance(mine, ModelError) and isinstance(theirs, ModelError)
    assert mine.retries == theirs.retries == (1 if retried else 0)
    assert f": {error}: " in str(mine) and f": {error}: " in str(theirs)
    if case == "bad-gateway":  # the proxy's page by its title, not its markup
        assert "502 Bad Gateway" in str(mine) and "<" not in str(mine)
    else:
        assert str(mine).split(" - ", 1)[1] == str(theirs).split(" - ", 1)[1]  # the provider's own message


@pytest.mark.parametrize("model", ["openai/my-model", "hosted_vllm/my-model"])
def test_a_prompt_longer_than_the_context_is_named_so_on_both_routes(endpoint: Scripted, model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """llama-server's answer to a prompt longer than its `-c` (HTTP 400, captured from the real server): litellm names
    it ContextWindowExceededError, which tells the user what to change; not retried on either route. The SDK route
    keeps the provider's sentence, litellm the whole JSON body."""
    mine, theirs = _both(_spec(endpoint, model), "CASE:context-exceeded", monkeypatch)
    assert isinstance(mine, ModelError) and isinstance(theirs, ModelError)
    assert mine.retries == theirs.retries == 0
    assert ": ContextWindowExceededError: " in str(theirs)
    said = "request (1334 tokens) exceeds the available context size (256 tokens), try increasing it"
    assert str(mine) == f"{model}: ContextWindowExceededError: OpenAIException - {said}"


NOT_A_COMPLETION = [("malformed-json", '{"id": "chatcmpl-x", "choices": ['), ("error-with-200", "upstream model overloaded, try again")]


@pytest.mark.parametrize(("case", "message"), NOT_A_COMPLETION)
def test_an_answer_that_is_no_completion_is_retried_with_the_providers_words(
    endpoint: Scripted, case: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A body that is not JSON, or `{"error": ...}` with HTTP 200 (a gateway's way to pass on an upstream failure),
    is retried, and the error keeps what the provider said. litellm retries the first with a parser's message in
    place of the body, and fails the second at once as a BadRequestError with no message at all."""
    mine, theirs = _both(_spec(endpoint), f"CASE:{case}", monkeypatch)
    assert isinstance(mine, ModelError) and isinstance(theirs, ModelError)
    assert mine.retries == 1 and message in str(mine)
    assert message not in str(theirs)
    if case == "error-with-200":
        assert theirs.retries == 0 and "BadRequestError" in str(theirs)


def test_a_429_with_retry_after_is_waited_out_then_retried(endpoint: Scripted, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _spec(endpoint)
    for route in ROUTES:
        outcome, waits = _attempt(spec, f"ONCE:rate-limited:{route}", monkeypatch, route)
        assert isinstance(outcome, ModelTurn) and outcome.retries == 1 and outcome.text == "Sunny, 21 C."
        assert waits == [3.0], route  # the provider's Retry-After: 3, by the provider's gate


def test_a_timeout_is_a_timeout_on_both_routes(endpoint: Scripted, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = ModelSpec("openai/my-model", api_base=f"{endpoint.url}/v1", max_retries=0, timeout_s=0.2)
    try:
        mine, theirs = _both(spec, "CASE:slow", monkeypatch)
    finally:
        endpoint.release.set()
    assert isinstance(mine, ModelError) and isinstance(theirs, ModelError)
    assert str(mine).startswith("openai/my-model: Timeout") and str(theirs).startswith("openai/my-model: Timeout")


@pytest.mark.parametrize("model", ["openai/my-model", "hosted_vllm/my-model"])
def test_credentials_in_the_base_url_and_account_headers_are_sent_as_litellm_sends_them(
    endpoint: Scripted, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`http://user:pw@host/v1`: basic authentication in place of the key; OpenAI's organisation and project
    headers for `openai` only (a local server is not told the user's OpenAI account)."""
    monkeypatch.setenv("OPENAI_ORGANIZATION", "org-parity")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj_parity")
    spec = ModelSpec(model, api_base=f"{endpoint.url.replace('http://', 'http://user:pw@')}/v1", max_retries=0)
    seen = []
    for route in ROUTES:
        outcome, _ = _attempt(spec, "hi", monkeypatch, route)
        assert isinstance(outcome, ModelTurn) and outcome.text == "Sunny, 21 C."
        headers = endpoint.seen[-1].headers
        seen.append({name: headers.get(name) for name in ("authorization", "openai-organization", "openai-project")})
    assert seen[0] == seen[1]
    assert seen[0]["authorization"] == "Basic dXNlcjpwdw=="  # user:pw
    assert (seen[0]["openai-organization"], seen[0]["openai-project"]) == (("org-parity", "proj_parity") if model.startswith("openai/") else (None, None))


def test_a_query_in_the_base_goes_after_the_path(endpoint: Scripted, monkeypatch: pytest.MonkeyPatch) -> None:
    """`?api-version=` in the base (an Azure-style gateway) is sent as the query of every request. litellm glues the
    path onto the query instead, so the gateway sees another path and an api-version that is not one."""
    spec = ModelSpec("openai/my-model", api_base=f"{endpoint.url}/v1?api-version=2024-10-21", max_retries=0)
    paths = []
    for route in ROUTES:
        outcome, _ = _attempt(spec, "hi", monkeypatch, route)
        assert isinstance(outcome, ModelTurn)
        paths.append(endpoint.seen[-1].path)
    assert paths[0] == "/v1/chat/completions?api-version=2024-10-21"
    assert paths[1] != paths[0] and paths[1].endswith("chat/completions")


def test_both_routes_take_the_proxy_from_the_environment(endpoint: Scripted, monkeypatch: pytest.MonkeyPatch) -> None:
    """HTTP_PROXY names the scripted endpoint; the provider's host is reached through it (it need not resolve here)."""
    for name in ("HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", endpoint.url)
    for route in ROUTES:
        spec = ModelSpec("openai/my-model", api_base=f"http://provider-{route}.example/v1", max_retries=0)
        outcome, _ = _attempt(spec, "hi", monkeypatch, route)
        assert isinstance(outcome, ModelTurn) and outcome.text == "Sunny, 21 C.", route
        assert endpoint.seen[-1].path == f"http://provider-{route}.example/v1/chat/completions"


@pytest.mark.parametrize("model", ["openai/my-model", "hosted_vllm/my-model", "lm_studio/my-model"])
def test_the_same_request_on_both_routes(endpoint: Scripted, model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The body litellm sends, sent: model, messages, temperature, seed, tools (for vLLM without
    `additionalProperties: false`, as litellm sends them), tool_choice."""
    strict = {"type": "object", "properties": {"filter": {"type": "object", "properties": {"q": {"type": "string"}}, "additionalProperties": False}}}
    tools, names = to_openai_tools([{"name": "search", "inputSchema": {**strict, "additionalProperties": False}}])
    spec = _spec(endpoint, model)
    bodies = []
    for route in ROUTES:
        monkeypatch.setenv(ROUTE_VARIABLE, route if route == "litellm" else "")

        async def turn() -> ModelTurn:
            return await complete(spec, [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}], tools, names)

        assert asyncio.run(turn()).text == "Sunny, 21 C."
        bodies.append(endpoint.seen[-1].body)
    assert bodies[0] == bodies[1]
    assert ("additionalProperties" in json.dumps(bodies[0])) is (not model.startswith("hosted_vllm/"))


VLLM_TOO_LONG = "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens"
OPENAI_USER_TOO_LONG = "Invalid 'user': string too long. Expected a string with maximum length 64"


@pytest.mark.parametrize(
    ("answer", "name"),
    [
        (json.dumps({"message": VLLM_TOO_LONG, "code": "context_length_exceeded"}), "ContextWindowExceededError"),
        (json.dumps({"message": OPENAI_USER_TOO_LONG, "code": "string_above_max_length"}), "BadRequestError"),
        (json.dumps({"message": "Unknown parameter: foo"}), "BadRequestError"),
    ],
)
def test_only_a_prompt_too_long_for_the_context_is_named_so(answer: str, name: str) -> None:
    """vLLM's and OpenAI's words for it are litellm's too; a parameter too long (OpenAI's `user`) is no context overflow."""
    assert error_class(400, answer).__name__ == name
