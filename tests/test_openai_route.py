"""The OpenAI-wire route (evalcore.models.openai_route, the official openai SDK): the same turns as litellm's path, for the models it takes, without litellm."""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from evalcore.models import openai_route
from evalcore.models.adapter import complete, needs_litellm
from evalcore.models.openai_route import ROUTE_VARIABLE, route_of
from evalcore.models.sim.launcher import SimServerProcess
from evalcore.models.tool_format import to_openai_tools
from evalcore.models.types import ModelSpec
from tests.loopback_http import serving

MODELS = ("gpt-4o-mini", "gpt-4.1-mini")
TOOLS = [
    {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}, "units": {"type": "string"}}, "required": ["city"]},
    },
    {
        "name": "close_ticket",
        "description": "Close a support ticket by id.",
        "inputSchema": {"type": "object", "properties": {"ticket_id": {"type": "string"}}},
    },
]


@pytest.fixture(scope="module")
def openai_sim() -> Iterator[str]:
    """The sim endpoint answering as two OpenAI models (its lexical policy), as bench/peer_workload.py runs it."""
    server = SimServerProcess(aliases={model: "sim-lexical" for model in MODELS})
    try:
        yield server.url()
    finally:
        server.stop()


def _conversation(spec: ModelSpec) -> list[Any]:
    """Two turns: the model calls a tool, then answers from its result (the tool's answer written here)."""
    tools, name_map = to_openai_tools(TOOLS)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You help."}, {"role": "user", "content": "What's the weather like in Paris right now?"}]

    async def talk() -> list[Any]:
        first = await complete(spec, messages, tools, name_map)
        messages.append(dict(first.raw_message))
        messages.extend({"role": "tool", "tool_call_id": call.id, "content": "Sunny, 21 C"} for call in first.tool_calls)
        return [first, await complete(spec, messages, tools, name_map)]

    return asyncio.run(talk())


@pytest.mark.parametrize("model", MODELS)
def test_the_openai_wire_route_gives_litellms_turns(openai_sim: str, model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-placeholder-for-the-sim")
    spec = ModelSpec(f"openai/{model}", api_base=openai_sim)
    assert route_of(spec) is not None
    on_route = _conversation(spec)
    monkeypatch.setenv(ROUTE_VARIABLE, "litellm")
    assert route_of(spec) is None and needs_litellm(spec)
    through_litellm = _conversation(spec)
    assert on_route[0].tool_calls and on_route[0].tool_calls[0].name == "get_weather" and on_route[1].text  # a call, then an answer
    for mine, theirs in zip(on_route, through_litellm, strict=True):
        assert mine.tool_calls == theirs.tool_calls and mine.raw_message == theirs.raw_message and mine.text == theirs.text
        assert (mine.input_tokens, mine.output_tokens, mine.finish_reason) == (theirs.input_tokens, theirs.output_tokens, theirs.finish_reason)
        assert mine.model_version == theirs.model_version and mine.retries == theirs.retries == 0
        assert mine.cost_usd is not None and mine.cost_usd == pytest.approx(theirs.cost_usd, rel=1e-12) and mine.cost_usd > 0


@pytest.mark.parametrize(
    ("spec", "environ", "on_route"),
    [
        (ModelSpec("openai/gpt-4o-mini"), {}, True),
        (ModelSpec("openai/gpt-4o-mini"), {ROUTE_VARIABLE: "litellm"}, False),  # the user's way out
        (ModelSpec("openai/o3-mini"), {}, False),  # a reasoning model: litellm drops or renames its parameters
        (ModelSpec("openai/gpt-5-mini"), {}, False),
        (ModelSpec("openai/gpt-4o-audio-preview", input_cost_per_token=1e-7, output_cost_per_token=2e-7), {}, False),  # even priced
        (ModelSpec("openai/gpt-4o-search-preview"), {}, False),
        (ModelSpec("openai/my-local-llama"), {}, True),  # no price list knows it: the same wire all the same
        (ModelSpec("openai/my-local-llama", api_base="http://127.0.0.1:8080/v1"), {}, True),
        (ModelSpec("openai/my-local-llama", input_cost_per_token=1e-7, output_cost_per_token=2e-7), {}, True),
        (ModelSpec("hosted_vllm/qwen2.5-7b", api_base="http://127.0.0.1:8000/v1"), {}, True),  # vLLM, llama.cpp, Ollama's /v1
        (ModelSpec("hosted_vllm/qwen2.5-7b"), {"HOSTED_VLLM_API_BASE": "http://127.0.0.1:8000/v1"}, True),
        (ModelSpec("hosted_vllm/qwen2.5-7b"), {}, False),  # no base anywhere: litellm says what is missing
        (ModelSpec("lm_studio/qwen2.5-7b", api_base="http://127.0.0.1:1234/v1"), {}, True),
        (ModelSpec("anthropic/claude-sonnet-4-5"), {}, False),  # another wire
        (ModelSpec("ollama_chat/llama3", api_base="http://127.0.0.1:11434"), {}, False),  # Ollama's own API, not its /v1
        (ModelSpec("sim/lexical"), {}, False),
        (ModelSpec("gpt-4o-mini"), {}, False),  # no provider prefix: litellm infers it
    ],
)
def test_which_models_take_the_openai_wire_route(spec: ModelSpec, environ: dict[str, str], on_route: bool) -> None:
    assert (route_of(spec, {"LITELLM_LOCAL_MODEL_COST_MAP": "True", **environ}) is not None) is on_route


def test_a_query_in_the_base_is_kept_apart_from_the_path() -> None:
    route = route_of(ModelSpec("openai/my-model", api_base="https://example.test/openai/v1/?api-version=2024-10-21"), {})
    assert route is not None and route.base_url == "https://example.test/openai/v1" and route.query == (("api-version", "2024-10-21"),)


# What a run of OpenAI-wire models against a server that asks for no input never uses: litellm (seconds of CPU,
# ~200 MB), the MCP SDK (input requests are checked against their JSON Schema), the fault proxy's web stack (only a
# case with `inject:` starts it), the dashboard. (pydantic is in: the openai SDK is built on it; so is jsonschema: a run
# checks every expected call's arguments against the tool's inputSchema before any model is called.)
NOT_FOR_A_PLAIN_RUN = ("litellm", "mcp", "mcp_types", "uvicorn", "starlette", "streamlit", "pandas")


def test_a_run_of_openai_wire_models_imports_nothing_it_does_not_use(openai_sim: str, tmp_path: Any) -> None:
    """`evalcore run` as a user types it (no evalcore variable set), models on the OpenAI-wire route, one that no
    price list knows among them: none of the above is imported."""
    script = (
        "import sys, runpy\n"
        "sys.argv = ['evalcore', *sys.argv[1:]]\n"
        "try:\n    runpy.run_module('evalcore', run_name='__main__')\n"
        f"finally:\n    print('imported:', [m for m in {NOT_FOR_A_PLAIN_RUN!r} if m in sys.modules])\n"
    )
    golden = tmp_path / "tasks.yaml"
    golden.write_text(
        "server: reference\ncases:\n"
        "  - id: weather\n    prompt: What's the weather like in Paris right now?\n    expect_tool: get_weather\n"
        "    expect_args: {city: Paris}\n",
        encoding="utf-8",
    )
    command = [sys.executable, "-c", script, "run", "--golden", str(golden), "--models", "openai/gpt-4o-mini,hosted_vllm/gpt-4.1-mini"]
    command += ["--api-base", openai_sim, "--runs", "1", "--db", str(tmp_path / "e.duckdb")]
    environ = {**os.environ, "OPENAI_API_KEY": "sk-placeholder-for-the-sim"}
    for name in (ROUTE_VARIABLE, "LITELLM_LOCAL_MODEL_COST_MAP"):
        environ.pop(name, None)
    done = subprocess.run(command, capture_output=True, text=True, env=environ, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "imported: []" in done.stdout
    assert "pass rate" in done.stdout.lower() or "weather" in done.stdout


class _Provider(http.server.BaseHTTPRequestHandler):
    """A provider that answers every chat completion, and keeps each request line's target: an absolute URL when the
    request came through it as a proxy, a path when it was called directly."""

    targets: list[str] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        _Provider.targets.append(self.path)
        message = {"role": "assistant", "content": "Sunny."}
        answer = {"id": "x", "object": "chat.completion", "model": "gpt-4o-mini", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    with serving(_Provider) as url:
        yield url


def _send(route: Any) -> dict[str, Any]:
    return asyncio.run(openai_route.send(route, {"model": route.model, "messages": [{"role": "user", "content": "Hi"}]}, 30.0))


@pytest.mark.parametrize(
    ("base", "proxy_variables", "target"),
    [
        # Through the proxy in HTTP_PROXY: the provider's host need not resolve here, the proxy reaches it.
        ("http://provider.example/v1", {"HTTP_PROXY": "{provider}"}, "http://provider.example/v1/chat/completions"),
        ("http://provider.example/v1", {"ALL_PROXY": "{provider}"}, "http://provider.example/v1/chat/completions"),
        # NO_PROXY covers the host: straight to it, though the proxy named would refuse the connection.
        ("{provider}/v1", {"HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": "localhost,127.0.0.1"}, "/v1/chat/completions"),
        ("{provider}/v1", {"HTTPS_PROXY": "http://127.0.0.1:9"}, "/v1/chat/completions"),  # only for https URLs
        # A query in the base goes with every request, after the path.
        ("{provider}/v1?api-version=2024-10-21", {}, "/v1/chat/completions?api-version=2024-10-21"),
    ],
)
def test_the_route_takes_the_proxy_from_the_environment(
    provider: str, base: str, proxy_variables: dict[str, str], target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name, value in {"OPENAI_API_KEY": "sk-placeholder", **proxy_variables}.items():
        monkeypatch.setenv(name, value.format(provider=provider))
    route = route_of(ModelSpec("openai/gpt-4o-mini", api_base=base.format(provider=provider)))
    assert route is not None
    assert _send(route)["choices"][0]["message"]["content"] == "Sunny."
    assert _Provider.targets[-1] == target


def test_a_loop_that_ends_closes_its_clients_and_is_not_kept(provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A caller that never calls `aclose` (a command making one call) still has its clients closed when its loop ends,
    and nothing here keeps the ended loop (a client references it)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-placeholder")
    route = route_of(ModelSpec("openai/gpt-4o-mini", api_base=f"{provider}/v1"))
    assert route is not None
    used: list[tuple[asyncio.AbstractEventLoop, list[Any]]] = []

    async def calls() -> None:
        body = {"model": route.model, "messages": [{"role": "user", "content": "Hi"}]}
        await openai_route.send(route, body, 30.0)
        await openai_route.send(route, body, 30.0)  # the same client
        monkeypatch.setenv("OPENAI_API_KEY", "sk-another-key")
        await openai_route.send(route, body, 30.0)  # another key: another client
        loop = asyncio.get_running_loop()
        used.append((loop, list(openai_route._CLIENTS[loop].values())))

    asyncio.run(calls())
    loop, clients = used[0]
    assert len(clients) == 2 and all(client.is_closed() for client in clients)
    assert loop not in openai_route._CLIENTS and loop not in openai_route._CLOSERS
