"""The direct route (evalcore.models.direct): the same turns as litellm's path, for the models it takes, without litellm."""

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

from evalcore.models import direct
from evalcore.models.adapter import complete, needs_litellm
from evalcore.models.direct import ROUTE_VARIABLE, route_of
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
def test_the_direct_route_gives_litellms_turns(openai_sim: str, model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-placeholder-for-the-sim")
    spec = ModelSpec(f"openai/{model}", api_base=openai_sim)
    assert route_of(spec) is not None
    direct = _conversation(spec)
    monkeypatch.setenv(ROUTE_VARIABLE, "litellm")
    assert route_of(spec) is None and needs_litellm(spec)
    through_litellm = _conversation(spec)
    assert direct[0].tool_calls and direct[0].tool_calls[0].name == "get_weather" and direct[1].text  # a call, then an answer
    for mine, theirs in zip(direct, through_litellm, strict=True):
        assert mine.tool_calls == theirs.tool_calls and mine.raw_message == theirs.raw_message and mine.text == theirs.text
        assert (mine.input_tokens, mine.output_tokens, mine.finish_reason) == (theirs.input_tokens, theirs.output_tokens, theirs.finish_reason)
        assert mine.model_version == theirs.model_version and mine.retries == theirs.retries == 0
        assert mine.cost_usd is not None and mine.cost_usd == pytest.approx(theirs.cost_usd, rel=1e-12) and mine.cost_usd > 0


@pytest.mark.parametrize(
    ("spec", "environ", "direct"),
    [
        (ModelSpec("openai/gpt-4o-mini"), {}, True),
        (ModelSpec("openai/gpt-4o-mini"), {ROUTE_VARIABLE: "litellm"}, False),  # the user's way out
        (ModelSpec("openai/o3-mini"), {}, False),  # a reasoning model: litellm drops or renames its parameters
        (ModelSpec("openai/gpt-5-mini"), {}, False),
        (ModelSpec("openai/gpt-4o-audio-preview", input_cost_per_token=1e-7, output_cost_per_token=2e-7), {}, False),  # even priced
        (ModelSpec("openai/gpt-4o-search-preview"), {}, False),
        (ModelSpec("openai/my-local-llama"), {}, False),  # unknown to the map: litellm's fall-back rules price it
        (ModelSpec("openai/my-local-llama", input_cost_per_token=1e-7, output_cost_per_token=2e-7), {}, True),  # priced by the spec
        (ModelSpec("hosted_vllm/gpt-4o-mini"), {}, False),  # another provider
        (ModelSpec("sim/lexical"), {}, False),
        (ModelSpec("gpt-4o-mini"), {}, False),  # no provider prefix: litellm infers it
    ],
)
def test_which_models_take_the_direct_route(spec: ModelSpec, environ: dict[str, str], direct: bool) -> None:
    assert (route_of(spec, {"LITELLM_LOCAL_MODEL_COST_MAP": "True", **environ}) is not None) is direct


def test_the_bundled_map_is_the_default_when_the_variable_is_unset() -> None:
    """evalcore prices from litellm's bundled map unless told otherwise (`litellm_loader`), so a user who set nothing gets the direct route."""
    assert route_of(ModelSpec("openai/gpt-4o-mini"), {}) is not None


def test_litellm_prices_without_the_bundled_map_send_every_model_through_litellm() -> None:
    """With litellm's remote cost map in use, the bundled file is not what litellm prices from: no direct route."""
    assert route_of(ModelSpec("openai/gpt-4o-mini"), {"LITELLM_LOCAL_MODEL_COST_MAP": "False"}) is None


# What a run of direct-route models against a server that asks for no input never uses: litellm (seconds of CPU,
# ~200 MB), the MCP SDK and its pydantic wire models (input requests are checked against their JSON Schema), jsonschema
# (imported by the first input request), the fault proxy's web stack (only a case with `inject:` starts it), the dashboard.
NOT_FOR_A_PLAIN_RUN = ("litellm", "mcp", "mcp_types", "pydantic", "jsonschema", "uvicorn", "starlette", "streamlit", "pandas")


def test_a_run_of_direct_models_imports_nothing_it_does_not_use(openai_sim: str, tmp_path: Any) -> None:
    """`evalcore run` as a user types it (no evalcore variable set), two direct-route models: none of the above is imported."""
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
    command = [sys.executable, "-c", script, "run", "--golden", str(golden), "--models", "openai/gpt-4o-mini,openai/gpt-4.1-mini"]
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


@pytest.mark.parametrize(
    ("base", "proxy_variables", "target"),
    [
        # Through the proxy in HTTP_PROXY: the provider's host need not resolve here, the proxy reaches it.
        ("http://provider.example/v1", {"HTTP_PROXY": "{provider}"}, "http://provider.example/v1/chat/completions"),
        ("http://provider.example/v1", {"http_proxy": "{provider}", "HTTP_PROXY": "http://127.0.0.1:9"}, "http://provider.example/v1/chat/completions"),
        ("http://provider.example/v1", {"ALL_PROXY": "{provider}"}, "http://provider.example/v1/chat/completions"),
        # NO_PROXY covers the host: straight to it, though the proxy named would refuse the connection.
        ("{provider}/v1", {"HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": "localhost,127.0.0.1"}, "/v1/chat/completions"),
        ("{provider}/v1", {"HTTPS_PROXY": "http://127.0.0.1:9"}, "/v1/chat/completions"),  # only for https URLs
    ],
)
def test_the_direct_route_takes_the_proxy_litellm_would(provider: str, base: str, proxy_variables: dict[str, str], target: str) -> None:
    environ = {"OPENAI_API_KEY": "sk-placeholder", **{name: value.format(provider=provider) for name, value in proxy_variables.items()}}
    route = route_of(ModelSpec("openai/gpt-4o-mini", api_base=base.format(provider=provider)), environ)
    assert route is not None
    answer = asyncio.run(direct.send(route, direct.encode_body(route, {"messages": [{"role": "user", "content": "Hi"}]}), 30.0, environ))
    assert answer["choices"][0]["message"]["content"] == "Sunny."
    assert _Provider.targets[-1] == target


def test_a_loop_that_ends_closes_its_client_and_is_not_kept(provider: str) -> None:
    """A caller that never calls `aclose` (a command making one call) still has its client closed when its loop ends,
    and nothing here keeps the ended loop (the client references it)."""
    environ = {"OPENAI_API_KEY": "sk-placeholder"}
    route = route_of(ModelSpec("openai/gpt-4o-mini", api_base=f"{provider}/v1"), environ)
    assert route is not None
    used: list[tuple[asyncio.AbstractEventLoop, Any]] = []

    async def one_call() -> None:
        await direct.send(route, direct.encode_body(route, {"messages": [{"role": "user", "content": "Hi"}]}), 30.0, environ)
        loop = asyncio.get_running_loop()
        used.append((loop, direct._CLIENTS[loop]))

    asyncio.run(one_call())
    loop, client = used[0]
    assert client.closed
    assert loop not in direct._CLIENTS and loop not in direct._CLOSERS
