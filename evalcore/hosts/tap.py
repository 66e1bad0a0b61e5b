"""I/O layer: the recording tap, an MCP endpoint on 127.0.0.1 between an agent host and the server under test.

    with running_tap(target, limits) as tap:
        url = tap.open_attempt()          # http://127.0.0.1:PORT/t/<token>/mcp: the only server the host is given
        ...                               # the host session
        seen = tap.close_attempt(url)     # every exchange the host had with the server, as evalcore recorded it

The host speaks Streamable HTTP to the tap; the tap forwards each JSON-RPC message to the server through
evalcore's own transports (so a stdio server is reached too, started by evalcore, and an HTTP server gets the
target's `--header`s from evalcore: the host never holds the server's credentials), and answers the host with the
server's answer. Each request that expects an answer is kept, per attempt, as a `RecordedExchange`
(`evalcore.mcp.recording.Recorder`, the record machinery every run uses), with the protocol version the host said
it speaks. The upstream transport is opened from the run's `RecordingTarget`, so the host's exchanges are also part
of the run's recording, replayable like any other.

Request ids are the tap's own upstream (concurrent attempts share one upstream) and mapped back on the way out.
The `Mcp-Session-Id` a legacy server mints is handed back to the host; a GET (a legacy client's listening stream)
is answered 405, as a server without one does.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import secrets
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from evalcore.errors import TargetError
from evalcore.mcp.loopback import serving_on_loopback
from evalcore.mcp.protocol.constants import HEADER_PROTOCOL_VERSION, HEADER_SESSION_ID, META_PROTOCOL_VERSION
from evalcore.mcp.recording import Recorder, ServerTarget
from evalcore.mcp.transport.base import Limits, Transport
from evalcore.records import RecordedExchange

_DROPPED_HEADERS = frozenset({"host", "content-length", "connection", "accept-encoding", "transfer-encoding", "authorization"})
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


@dataclass(frozen=True)
class TappedExchange:
    """One request the host made of the server, as recorded, with how long the server took and what HTTP said."""

    exchange: RecordedExchange
    latency_ms: float
    status: int | None


@dataclass(frozen=True)
class TapLog:
    """What one attempt's host did with the server: its exchanges in order, and the protocol versions it spoke."""

    exchanges: tuple[TappedExchange, ...]
    versions: tuple[str, ...]  # every protocol version the host named (header, `_meta` or `initialize`), in order, once each
    methods: tuple[str, ...]  # every method the host sent, notifications included, in order


@dataclass
class _Attempt:
    recorder: Recorder = field(default_factory=Recorder)
    listening: dict[Any, asyncio.Event] = field(default_factory=dict)  # the host's open subscriptions/listen streams, by id
    timings: list[tuple[float, int | None]] = field(default_factory=list)
    versions: list[str] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)


class Tap:
    """The tap app and its attempts; start it with `running_tap`."""

    def __init__(self, target: ServerTarget, limits: Limits) -> None:
        self.target = target
        self.limits = limits
        self.base_url = ""
        self._attempts: dict[str, _Attempt] = {}
        self._lock = threading.Lock()
        self._upstream: Transport | None = None
        self._ids = itertools.count(1)
        self._loop: asyncio.AbstractEventLoop | None = None
        self.app = Starlette(routes=[Route("/t/{token}/mcp", self._handle, methods=["POST", "GET", "DELETE"])], lifespan=self._lifespan)

    def open_attempt(self) -> str:
        token = secrets.token_hex(8)
        with self._lock:
            self._attempts[token] = _Attempt()
        return f"{self.base_url}/t/{token}/mcp"

    def close_attempt(self, url: str) -> TapLog:
        token = url.rstrip("/").split("/")[-2]
        with self._lock:
            attempt = self._attempts.pop(token, None)
        if attempt is None:
            return TapLog((), (), ())
        for ended in list(attempt.listening.values()):
            self._call(ended.set)
        exchanges = attempt.recorder.take()
        tapped = tuple(TappedExchange(e, *timing) for e, timing in zip(exchanges, attempt.timings, strict=False))
        return TapLog(tapped, tuple(attempt.versions), tuple(attempt.methods))

    @contextlib.asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        self._upstream = self.target.open(self.limits)
        self._loop = asyncio.get_running_loop()
        try:
            yield
        finally:
            await self._upstream.aclose()

    def _call(self, function: Any) -> None:
        """Run `function` on the tap's own loop (from any thread)."""
        if self._loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nothing is listening any more
                self._loop.call_soon_threadsafe(function)

    async def _handle(self, request: Request) -> Response:
        with self._lock:
            attempt = self._attempts.get(request.path_params["token"])
        if attempt is None:
            return PlainTextResponse("unknown attempt", status_code=404)
        if request.method == "GET":
            return PlainTextResponse("no listening stream here", status_code=405, headers={"Allow": "POST"})
        if request.method == "DELETE":
            return Response(status_code=204)
        body = await request.body()
        try:
            message = json.loads(body)
        except ValueError:
            return PlainTextResponse("the tap forwards JSON-RPC messages only; the body is not JSON", status_code=400)
        if not isinstance(message, dict):
            return PlainTextResponse("the tap forwards single JSON-RPC messages only", status_code=400)
        headers = {name: value for name, value in request.headers.items() if name.lower() not in _DROPPED_HEADERS}
        _note_version(attempt, message, headers)
        attempt.methods.append(str(message.get("method")))
        assert self._upstream is not None
        caller_id = message.get("id")
        if message.get("method") == "subscriptions/listen" and caller_id is not None:
            return await self._listen(attempt, message, headers)
        if message.get("method") == "notifications/cancelled":
            cancelled = (message.get("params") or {}).get("requestId") if isinstance(message.get("params"), dict) else None
            if cancelled in attempt.listening:  # the end of a stream the tap holds: the server never saw it
                attempt.listening.pop(cancelled).set()
                return Response(status_code=202)
        if caller_id is None or "method" not in message:  # a notification (or a response): passed on, nothing comes back
            await self._upstream.send(body, headers=headers, expect_id=None)
            return Response(status_code=202)
        upstream_id = next(self._ids)
        started = time.perf_counter()
        wire = await self._upstream.send(json.dumps({**message, "id": upstream_id}).encode("utf-8"), headers=headers, expect_id=upstream_id)
        elapsed = (time.perf_counter() - started) * 1000
        with self._lock:
            attempt.recorder.keep(message, wire)
            attempt.timings.append((elapsed, wire.status))
        session = wire.headers.get(HEADER_SESSION_ID.lower())
        back = {HEADER_SESSION_ID: session} if session else {}
        if wire.response is not None:
            return JSONResponse({**wire.response, "id": caller_id}, status_code=wire.status or 200, headers=back)
        reason = str(wire.failure) if wire.failure else f"HTTP {wire.status} without a response"
        error = {"jsonrpc": "2.0", "id": caller_id, "error": {"code": -32603, "message": f"upstream {self.target} failed: {reason}"}}
        return JSONResponse(error, status_code=502)

    async def _listen(self, attempt: _Attempt, message: dict[str, Any], headers: dict[str, str]) -> Response:
        """A host's `subscriptions/listen`: the server's stream is read up to its first frame (its acknowledgement),
        which goes to the host; the host's stream is then held open here, with no more events, until the host
        cancels it or its attempt ends (an upstream request held for a whole session would tie up the server for
        nothing an attempt is scored on)."""
        assert self._upstream is not None
        caller_id, upstream_id = message["id"], next(self._ids)
        outgoing = json.dumps({**message, "id": upstream_id}).encode("utf-8")
        wire = await self._upstream.send(outgoing, headers=headers, expect_id=upstream_id, stop_at=lambda frame: True)
        if not wire.messages:
            reason = str(wire.failure) if wire.failure else f"HTTP {wire.status} without a frame"
            error = {"jsonrpc": "2.0", "id": caller_id, "error": {"code": -32603, "message": f"upstream {self.target} failed: {reason}"}}
            return JSONResponse(error, status_code=502)
        frames = [_for_caller(frame, upstream_id, caller_id) for frame in wire.messages]
        if any(frame.get("id") == caller_id for frame in frames):  # the server answered at once (an error): no stream
            return JSONResponse(frames[-1], status_code=wire.status or 200)
        ended = attempt.listening[caller_id] = asyncio.Event()

        async def hold() -> Any:
            for frame in frames:
                yield f"event: message\ndata: {json.dumps(frame)}\n\n".encode()
            await ended.wait()

        return StreamingResponse(hold(), media_type="text/event-stream")


def _for_caller(frame: dict[str, Any], upstream_id: int, caller_id: Any) -> dict[str, Any]:
    """A listen stream's frame with the tap's request id put back to the host's, in its id and its subscription id."""
    if frame.get("id") == upstream_id:
        return {**frame, "id": caller_id}
    params = frame.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(params, dict) and isinstance(meta, dict) and meta.get(SUBSCRIPTION_ID) == upstream_id:
        return {**frame, "params": {**params, "_meta": {**meta, SUBSCRIPTION_ID: caller_id}}}
    return frame


def _note_version(attempt: _Attempt, message: dict[str, Any], headers: dict[str, str]) -> None:
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    meta = params.get("_meta") if isinstance(params, dict) and isinstance(params.get("_meta"), dict) else {}
    found = [
        next((value for name, value in headers.items() if name.lower() == HEADER_PROTOCOL_VERSION.lower()), None),
        meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None,
        params.get("protocolVersion") if message.get("method") == "initialize" and isinstance(params, dict) else None,
    ]
    for version in found:
        if isinstance(version, str) and version and version not in attempt.versions:
            attempt.versions.append(version)


@contextlib.contextmanager
def running_tap(target: ServerTarget, limits: Limits) -> Iterator[Tap]:
    """Serve a `Tap` for `target` on a free loopback port, on its own thread; stop it afterwards."""
    tap = Tap(target, limits)
    with serving_on_loopback(tap.app, name="evalcore-host-tap", what=f"the recording tap for {target}", error=TargetError) as url:
        tap.base_url = url
        yield tap
