"""I/O layer: a fault-injecting MCP proxy on 127.0.0.1, in front of an HTTP or a stdio server.

    with running_fault_proxy(target, hold_s=3.0) as proxy:
        proxy.register("tok1", Injection(fault="http_500", tool="get_weather", expect="retry"))
        url = proxy.url_for("tok1")          # http://127.0.0.1:PORT/a/tok1/mcp
        ...                                  # an McpClient on `url` sees the fault
        events = proxy.events("tok1")        # what the proxy saw and did

The agent always speaks Streamable HTTP to the proxy; the proxy forwards each
JSON-RPC message to the upstream through evalcore's own transports, so stdio
servers are covered too. Each attempt gets its own URL token and its own
fault plan and call counters. Upstream request ids are the proxy's own
(concurrent attempts through one stdio process would otherwise collide) and
are mapped back on the way out.

The proxy runs uvicorn on its own thread and event loop, so a runner's loop
never waits on it. A `timeout` fault holds the answer for `hold_s` seconds,
which must exceed the client's read timeout; the client gives up first, so no
fault outlives its timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from evalcore.errors import TargetError
from evalcore.golden.injection import CALL_FAULTS, Injection
from evalcore.golden.injection_rewrite import elicitation_result, is_elicit_retry, plant_payload, rewrite_tools, shadow_result, strip_elicit_retry
from evalcore.mcp.client import McpClient
from evalcore.mcp.loopback import serving_on_loopback
from evalcore.mcp.recording import ServerTarget
from evalcore.mcp.transport.base import Limits, Transport

_DROPPED_HEADERS = frozenset({"host", "content-length", "connection", "accept-encoding", "transfer-encoding"})
TOOL_ERROR_TEXT = "Service temporarily unavailable: the backend did not respond. Try again later."


@dataclass(frozen=True)
class ProxyEvent:
    """One request the proxy saw for an attempt, and the fault it answered with (None: forwarded)."""

    method: str | None
    tool: str | None
    request_id: Any
    call_number: int | None  # the how-many-th call of `tool` in this attempt
    fault: str | None


@dataclass
class _AttemptState:
    injection: Injection
    calls: dict[str, int] = field(default_factory=dict)
    tool_called: bool = False
    events: list[ProxyEvent] = field(default_factory=list)


class FaultProxy:
    """The proxy app plus its per-attempt plans; start it with `running_fault_proxy`."""

    def __init__(self, target: ServerTarget, *, hold_s: float, limits: Limits | None = None) -> None:
        self.target = target
        self.hold_s = hold_s
        self.limits = limits or Limits()
        self.base_url = ""
        self._states: dict[str, _AttemptState] = {}
        self._lock = threading.Lock()
        self._upstream: Transport | None = None
        self._upstream_ids = itertools.count(1)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing: asyncio.Event | None = None
        self.app = Starlette(routes=[Route("/a/{token}/mcp", self._handle, methods=["POST"])], lifespan=self._lifespan)

    def register(self, token: str, injection: Injection) -> None:
        with self._lock:
            self._states[token] = _AttemptState(injection)

    def url_for(self, token: str) -> str:
        return f"{self.base_url}/a/{token}/mcp"

    def events(self, token: str, *, forget: bool = False) -> tuple[ProxyEvent, ...]:
        with self._lock:
            state = self._states.pop(token, None) if forget else self._states.get(token)
        return tuple(state.events) if state else ()

    @contextlib.asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        self._upstream = self.target.open(self.limits)
        self._loop, self._closing = asyncio.get_running_loop(), asyncio.Event()
        # Reach the upstream before taking requests: a stdio server starts here, not inside an attempt's short timeout.
        warm_up = await McpClient(self._upstream, limits=self.limits).discover()
        if warm_up.failure is not None and warm_up.failure.kind in ("connect", "closed", "timeout"):
            await self._upstream.aclose()
            raise TargetError(f"the fault proxy cannot reach {self.target}: {warm_up.failure}")
        try:
            yield
        finally:
            await self._upstream.aclose()

    def release_held(self) -> None:
        """End every held `timeout` fault now (from any thread), so shutdown does not wait for them."""
        if self._loop is not None and self._closing is not None:
            self._loop.call_soon_threadsafe(self._closing.set)

    async def _handle(self, request: Request) -> Response:
        token = request.path_params["token"]
        with self._lock:
            state = self._states.get(token)
        if state is None:
            return PlainTextResponse(f"unknown attempt token {token!r}", status_code=404)
        body = await request.body()
        try:
            message = json.loads(body)
        except ValueError:
            return PlainTextResponse("the proxy forwards JSON-RPC messages only; the body is not JSON", status_code=400)
        if not isinstance(message, dict):
            return PlainTextResponse("the proxy forwards single JSON-RPC messages only", status_code=400)
        headers = {name: value for name, value in request.headers.items() if name.lower() not in _DROPPED_HEADERS}
        method, request_id = message.get("method"), message.get("id")
        raw_params = message.get("params")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        injection = state.injection
        if method == "tools/call":
            return await self._tool_call(state, message, headers, str(params.get("name")), request_id)
        if request_id is None:  # a notification: passed on, nothing comes back
            assert self._upstream is not None
            await self._upstream.send(body, headers=headers, expect_id=None)
            state.events.append(ProxyEvent(method, None, None, None, None))
            return Response(status_code=202)
        response = await self._forward(message, headers)
        state.events.append(ProxyEvent(method, None, request_id, None, None))
        if method == "tools/list" and isinstance(response.get("result"), dict) and isinstance(response["result"].get("tools"), list):
            tools = rewrite_tools(response["result"]["tools"], injection, tool_called=state.tool_called)
            response = {**response, "result": {**response["result"], "tools": tools}}
        return _json_rpc(response)

    async def _tool_call(self, state: _AttemptState, message: dict[str, Any], headers: dict[str, str], tool: str, request_id: Any) -> Response:
        injection = state.injection
        if injection.fault == "shadow" and tool == injection.shadow_name:
            state.events.append(ProxyEvent("tools/call", tool, request_id, 1, "shadow"))
            return JSONResponse({"jsonrpc": "2.0", "id": request_id, "result": shadow_result()})
        raw = message.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if injection.fault == "elicit" and is_elicit_retry(params):
            # The client's answer to our elicitation: the server never sees it, only the original call.
            message = {**message, "params": strip_elicit_retry(params)}
            state.events.append(ProxyEvent("tools/call", tool, request_id, None, "elicit_answered"))
            return _json_rpc(await self._forward(message, headers))
        number = state.calls[tool] = state.calls.get(tool, 0) + 1
        hit = tool == injection.tool and injection.hits(number)
        if hit and injection.fault in CALL_FAULTS:
            state.events.append(ProxyEvent("tools/call", tool, request_id, number, injection.fault))
            return await self._fault(injection.fault, request_id)
        if hit and injection.fault == "elicit":
            state.events.append(ProxyEvent("tools/call", tool, request_id, number, "elicit"))
            return JSONResponse({"jsonrpc": "2.0", "id": request_id, "result": elicitation_result(injection, number)})
        response = await self._forward(message, headers)
        planted = hit and injection.fault == "payload" and isinstance(response.get("result"), dict)
        if planted:
            response = {**response, "result": plant_payload(response["result"], injection.text or "")}
        if tool == injection.tool:
            state.tool_called = True
        state.events.append(ProxyEvent("tools/call", tool, request_id, number, "payload" if planted else None))
        return _json_rpc(response)

    async def _forward(self, message: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        """The upstream's JSON-RPC answer with the caller's id restored, or a -32603 error saying why there is none."""
        assert self._upstream is not None
        caller_id = message.get("id")
        upstream_id = next(self._upstream_ids) if caller_id is not None else None
        outgoing = {**message, "id": upstream_id} if upstream_id is not None else message
        wire = await self._upstream.send(json.dumps(outgoing).encode("utf-8"), headers=headers, expect_id=upstream_id)
        if wire.response is not None:
            return {**wire.response, "id": caller_id}
        reason = str(wire.failure) if wire.failure else f"HTTP {wire.status} without a response"
        return {"jsonrpc": "2.0", "id": caller_id, "error": {"code": -32603, "message": f"upstream {self.target} failed: {reason}"}}

    async def _fault(self, fault: str, request_id: Any) -> Response:
        if fault == "http_500":
            return PlainTextResponse("Internal Server Error", status_code=500)
        if fault == "timeout":
            assert self._closing is not None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), self.hold_s)
            return PlainTextResponse("Gateway Timeout", status_code=504)
        if fault == "malformed_json":
            truncated = '{"jsonrpc": "2.0", "id": ' + json.dumps(request_id) + ', "result": {"content": [{"type": "text", "text": "Res'
            return Response(truncated.encode("utf-8"), media_type="application/json")
        if fault == "unauthorized":
            return JSONResponse(
                {"error": "invalid_token", "error_description": "The access token expired"},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer error="invalid_token", error_description="The access token expired"'},
            )
        if fault == "tool_error":
            result = {"content": [{"type": "text", "text": TOOL_ERROR_TEXT}], "isError": True}
            return JSONResponse({"jsonrpc": "2.0", "id": request_id, "result": result})
        if fault == "stream_cut":
            return StreamingResponse(_cut_stream(), media_type="text/event-stream")
        raise AssertionError(f"not a call fault: {fault}")


async def _cut_stream() -> AsyncIterator[bytes]:
    # A priming event, then the stream ends where the response should have come.
    yield b"id: 0\ndata: \n\n"


def _json_rpc(message: dict[str, Any]) -> Response:
    return JSONResponse(message, status_code=502 if "error" in message and message["error"].get("code") == -32603 else 200)


@contextlib.contextmanager
def running_fault_proxy(target: ServerTarget, *, hold_s: float, limits: Limits | None = None) -> Iterator[FaultProxy]:
    """Serve a `FaultProxy` for `target` on a free loopback port, on its own thread; stop it afterwards."""
    proxy = FaultProxy(target, hold_s=hold_s, limits=limits)
    with serving_on_loopback(proxy.app, name="evalcore-fault-proxy", what=f"the fault proxy for {target}", error=TargetError, join_s=hold_s + 5) as url:
        proxy.base_url = url
        try:
            yield proxy
        finally:
            proxy.release_held()
