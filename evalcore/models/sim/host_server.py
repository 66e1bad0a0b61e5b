"""I/O layer: the sim models behind the wires agent hosts speak, served on 127.0.0.1 for the hosts evalcore runs.

    with running_host_wire_server() as wires:
        base = wires.register(HostWireSession("sim/script:model.yaml", {"case_id": "c1", "attempt": 1, "run_date": "2026-12-01"}, "target"))
        # Claude Code: ANTHROPIC_BASE_URL=base       -> POST {base}/v1/messages   (Anthropic Messages, streaming or not)
        # Codex:       a provider with base_url=base/v1 -> POST {base}/v1/responses (OpenAI Responses, streaming)

Each attempt gets its own token in the URL path, and with it the sim model and the run context (case, attempt, run
date) a script reads: a host passes on nothing of its own. The requests are turned into the sim policies' input and
their replies into the wire's shape by `evalcore.models.sim.host_wires`. Any other request (a host's connectivity
check, a model listing) gets an empty 200.

The server runs uvicorn on its own thread and event loop, as the fault proxy does, so a runner's loop never waits on it.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from evalcore.errors import ConfigError, ModelError
from evalcore.mcp.loopback import serving_on_loopback
from evalcore.models.sim.catalog import sim_reply
from evalcore.models.sim.host_wires import PolicyInput, anthropic_events, anthropic_input, anthropic_message, responses_events, responses_input, sse
from evalcore.models.sim.reply import SimReply, assistant_turns


@dataclass(frozen=True)
class HostWireSession:
    """One attempt's model behind a host: the sim model string, the run context, and the MCP server's name in the host."""

    model: str  # sim/lexical, sim/script:<path>
    context: Mapping[str, Any]
    server: str


@dataclass
class _Served:
    session: HostWireSession
    requests: int = 0


@dataclass
class HostWireServer:
    """The app and its sessions by token; start it with `running_host_wire_server`."""

    base_url: str = ""
    _sessions: dict[str, _Served] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def register(self, session: HostWireSession) -> str:
        """A new token for `session`; its base URL (the host appends `/v1/messages` or `/v1/responses`)."""
        token = secrets.token_hex(8)
        with self._lock:
            self._sessions[token] = _Served(session)
        return f"{self.base_url}/a/{token}"

    def forget(self, base: str) -> int:
        """Drop a session; how many model requests it served."""
        with self._lock:
            served = self._sessions.pop(base.rstrip("/").rsplit("/", 1)[-1], None)
        return served.requests if served else 0

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/a/{token}/v1/messages", self._messages, methods=["POST"]),
                Route("/a/{token}/v1/responses", self._responses, methods=["POST"]),
                Route("/{rest:path}", _empty, methods=["GET", "HEAD", "POST"]),
            ]
        )

    def _served(self, token: str) -> _Served | None:
        with self._lock:
            served = self._sessions.get(token)
            if served is not None:
                served.requests += 1
            return served

    async def _reply(self, request: Request, wire: str) -> tuple[dict[str, Any], PolicyInput, SimReply, str] | Response:
        served = self._served(request.path_params["token"])
        if served is None:
            return JSONResponse({"type": "error", "error": {"type": "not_found_error", "message": "unknown attempt token"}}, status_code=404)
        try:
            body = json.loads(await request.body())
        except ValueError:
            return JSONResponse({"type": "error", "error": {"type": "invalid_request_error", "message": "the body is not JSON"}}, status_code=400)
        session = served.session
        policy = anthropic_input(body, session.server) if wire == "anthropic" else responses_input(body, session.server)
        try:
            reply = sim_reply(session.model, policy.messages, policy.tools, session.context)
        except (ConfigError, ValueError) as exc:
            return JSONResponse({"type": "error", "error": {"type": "invalid_request_error", "message": str(exc)}}, status_code=400)
        offered = [call for call in reply.tool_calls if call.name in policy.wire_names]
        if len(offered) < len(reply.tool_calls):  # a model calls only what it is offered: the host does not list that tool
            missing = sorted({call.name for call in reply.tool_calls} - set(policy.wire_names))
            reply = replace(reply, tool_calls=tuple(offered), text=reply.text or f"I cannot call {', '.join(missing)}: it is not among my tools.")
        if reply.error_status is not None:
            message = f"{session.model}: {reply.error_message}"
            return JSONResponse({"type": "error", "error": {"type": "api_error", "message": message}}, status_code=reply.error_status)
        return body, policy, reply, reply.model_version  # the sim's own version, as a provider names its model

    async def _messages(self, request: Request) -> Response:
        answer = await self._reply(request, "anthropic")
        if isinstance(answer, Response):
            return answer
        body, policy, reply, model = answer
        turn = assistant_turns(policy.messages)
        if body.get("stream"):
            return Response(sse(anthropic_events(reply, policy, model, turn)), media_type="text/event-stream")
        return JSONResponse(anthropic_message(reply, policy, model, turn))

    async def _responses(self, request: Request) -> Response:
        answer = await self._reply(request, "responses")
        if isinstance(answer, Response):
            return answer
        _, policy, reply, model = answer
        return Response(sse(responses_events(reply, policy, model, assistant_turns(policy.messages))), media_type="text/event-stream")


async def _empty(request: Request) -> Response:
    return JSONResponse({"data": [], "models": []})


@contextlib.contextmanager
def running_host_wire_server() -> Iterator[HostWireServer]:
    """Serve a `HostWireServer` on a free loopback port, on its own thread; stop it afterwards."""
    wires = HostWireServer()
    with serving_on_loopback(wires.app(), name="evalcore-host-wires", what="the sim endpoint for agent hosts", error=ModelError, lifespan="off") as url:
        wires.base_url = url
        yield wires
