"""Transport layer: record every MCP exchange of a run, and replay a recording in place of the server.

A `Recorder` wraps the transports a run opens (`RecordingTarget`): each request
that expects an answer is kept with what came back, as a `RecordedExchange`
(the request's params without `_meta`, the answer's `result` or `error`, or
the transport failure). The runner hands the recording to the store with the
run.

A `ReplayTarget` is a target like any other: its transport answers each
request from a recording and contacts no server. The matching rule:

- a request matches a recorded one with the same method and the same params,
  compared as canonical JSON (keys sorted; `_meta` left out, since it carries
  per-request trace context): a tool call matches on its name and its exact
  arguments;
- identical requests are answered in the order their answers were recorded;
  past the last, the last recorded answer is served again (the recording's
  latest word on exactly that request);
- a request the recording lacks gets the transport failure `not_recorded`,
  whose detail says "not in recording": an attempt that meets it is errored
  (`evalcore.taxonomy`), since what the server would have answered is unknown.

This layer knows nothing of golden sets or models; it only moves JSON-RPC
messages.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from evalcore.mcp.fingerprint import canonical_json
from evalcore.mcp.protocol.constants import META_TRACEPARENT
from evalcore.mcp.transport.base import JsonObject, Limits, RequestId, StopAt, Transport, WireFailure, WireResponse
from evalcore.records import RecordedExchange
from evalcore.redaction import clip

NOT_RECORDED = "not in recording"


class ServerTarget(Protocol):
    """What a run needs of its server: a name to show, a transport kind, and a way to open a transport to it."""

    @property
    def transport(self) -> str: ...

    def open(self, limits: Limits) -> Transport: ...


def request_key(method: str, params: Mapping[str, Any] | None) -> str:
    """How a request is matched in a recording: its method and canonical params, `_meta` left out."""
    return canonical_json([method, {k: v for k, v in (params or {}).items() if k != "_meta"}])


class Recorder:
    """Collects the exchanges of every transport it wraps, in the order their answers came."""

    def __init__(self) -> None:
        self._exchanges: list[RecordedExchange] = []
        self._lock = threading.Lock()  # a fault proxy's upstream records from the proxy's own thread

    def keep(self, message: JsonObject, wire: WireResponse) -> None:
        given = message.get("params")
        sent: dict[str, Any] = given if isinstance(given, dict) else {}
        params = {k: v for k, v in sent.items() if k != "_meta"}
        meta = sent.get("_meta")
        traceparent = meta.get(META_TRACEPARENT) if isinstance(meta, dict) else None
        conversation = traceparent.split("-")[1] if isinstance(traceparent, str) and traceparent.count("-") == 3 else None
        answer = _answer(wire.response)
        failure = str(wire.failure) if answer is None and wire.failure is not None else None
        if answer is None and failure is None:
            failure = "no_answer: no JSON-RPC response came back"
        with self._lock:
            self._exchanges.append(RecordedExchange(len(self._exchanges) + 1, str(message.get("method")), params, answer, failure, conversation))

    def take(self) -> list[RecordedExchange]:
        """The exchanges kept since the last take, and forget them (the store has them from then on)."""
        with self._lock:
            taken, self._exchanges = self._exchanges, []
        return taken


def _answer(response: JsonObject | None) -> dict[str, Any] | None:
    if response is None:
        return None
    if "result" in response:
        return {"result": response["result"]}
    if "error" in response:
        return {"error": response["error"]}
    return None


class RecordingTransport:
    """A transport that passes everything through and keeps each request's exchange with the `Recorder`."""

    def __init__(self, inner: Transport, recorder: Recorder) -> None:
        self.inner = inner
        self.recorder = recorder
        self.kind = inner.kind
        self.target = inner.target

    async def send(
        self,
        body: bytes,
        *,
        headers: Mapping[str, str],
        expect_id: RequestId | None,
        http_method: str = "POST",
        stop_at: StopAt | None = None,
    ) -> WireResponse:
        wire = await self.inner.send(body, headers=headers, expect_id=expect_id, http_method=http_method, stop_at=stop_at)
        message = _decoded(body)
        if expect_id is not None and stop_at is None and message is not None and isinstance(message.get("method"), str):
            self.recorder.keep(message, wire)
        return wire

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass(frozen=True)
class RecordingTarget:
    """A target whose every transport (the runner's client, a fault proxy's upstream) records into one `Recorder`."""

    inner: ServerTarget
    recorder: Recorder = field(default_factory=Recorder)

    @property
    def transport(self) -> str:
        return self.inner.transport

    def __str__(self) -> str:
        return str(self.inner)

    def open(self, limits: Limits) -> Transport:
        return RecordingTransport(self.inner.open(limits), self.recorder)


class ReplayTarget:
    """The recorded server of a stored run: answers from its recording, contacts nothing."""

    def __init__(self, run_id: str, exchanges: Sequence[RecordedExchange]) -> None:
        self.run_id = run_id
        self.answers: dict[str, list[RecordedExchange]] = defaultdict(list)
        for exchange in sorted(exchanges, key=lambda e: e.sequence):
            self.answers[request_key(exchange.method, exchange.params)].append(exchange)

    @property
    def transport(self) -> str:
        return "replay"

    def __str__(self) -> str:
        return f"replay of run {self.run_id}"

    def open(self, limits: Limits) -> Transport:
        return ReplayTransport(self)


class ReplayTransport:
    """Answers each request from a `ReplayTarget`'s recording (see the module docstring for the matching rule)."""

    kind: Literal["http", "stdio"] = "stdio"  # no HTTP headers: nothing is sent anywhere

    def __init__(self, replayed: ReplayTarget) -> None:
        self.replayed = replayed
        self.target = str(replayed)
        self._served: dict[str, int] = defaultdict(int)

    async def send(
        self,
        body: bytes,
        *,
        headers: Mapping[str, str],
        expect_id: RequestId | None,
        http_method: str = "POST",
        stop_at: StopAt | None = None,
    ) -> WireResponse:
        message = _decoded(body)
        if expect_id is None or message is None:  # a notification (or raw bytes): nothing to answer
            return WireResponse(None, {}, b"", (), None, None, 0.0)
        method, params = str(message.get("method")), message.get("params")
        key = request_key(method, params if isinstance(params, dict) else None)
        recorded = self.replayed.answers.get(key)
        if not recorded:
            shown = clip(canonical_json({k: v for k, v in (params or {}).items() if k != "_meta"}), 200) if isinstance(params, dict) else ""
            detail = f"{method} {shown}: {NOT_RECORDED} of run {self.replayed.run_id}"
            return WireResponse(None, {}, b"", (), None, WireFailure("not_recorded", detail), 0.0)
        exchange = recorded[min(self._served[key], len(recorded) - 1)]
        self._served[key] += 1
        if exchange.answer is None:
            kind, _, detail = (exchange.failure or "closed: no answer was recorded").partition(": ")
            return WireResponse(None, {}, b"", (), None, WireFailure(kind, f"{detail} (recorded)"), 0.0)  # type: ignore[arg-type]
        response: JsonObject = {"jsonrpc": "2.0", "id": expect_id, **exchange.answer}
        encoded = json.dumps(response).encode("utf-8")
        return WireResponse(None, {}, encoded, (response,), response, None, 0.0)

    async def aclose(self) -> None:
        return None


def _decoded(body: bytes) -> JsonObject | None:
    try:
        message = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    return message if isinstance(message, dict) else None
