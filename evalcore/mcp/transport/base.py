"""Transport layer: the one small interface every transport implements, and its value types.

Transports move bytes and report exactly what came back; they know nothing of
MCP methods. A misbehaving server (hang, flood, garbage, cut stream) is a
`WireFailure` value on the response, never an exception: the conformance
checks judge it, and the harness keeps going.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

JsonObject = dict[str, Any]
RequestId = int | str
# Marks the message that ends a read early: a long-lived stream (subscriptions/listen) is read up to its first
# frame and then let go, instead of waiting for a response that comes only when the stream ends.
StopAt = Callable[[JsonObject], bool]

FailureKind = Literal[
    "connect",  # could not connect / could not start the process
    "timeout",  # no complete answer within the time limit
    "too_large",  # body or line larger than the size limit
    "too_many_events",  # SSE stream longer than the event limit
    "bad_json",  # a body, line or SSE event that is not JSON
    "stream_cut",  # the response stream ended before the response arrived
    "closed",  # the server process exited or the connection closed
    "protocol",  # HTTP-level nonsense the client cannot use
    "not_recorded",  # a replayed server's recording lacks the request (evalcore.mcp.recording)
]


@dataclass(frozen=True)
class WireFailure:
    """Why no usable answer came back; `detail` is one line a user can act on."""

    kind: FailureKind
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


@dataclass(frozen=True)
class Limits:
    """Bounds on everything a server could make unbounded."""

    connect_timeout: float = 5.0
    read_timeout: float = 10.0  # for the whole answer, not per chunk
    max_response_bytes: int = 8 * 1024 * 1024
    max_sse_events: int = 1000
    max_stream_retries: int = 2
    # stdio: extra time for the first answer of a freshly started process (an interpreter starting
    # on a loaded machine is not the server being slow to answer).
    startup_timeout: float = 20.0


@dataclass(frozen=True)
class WireResponse:
    """What came back for one message, exactly as seen (HTTP fields are None on stdio)."""

    status: int | None
    headers: Mapping[str, str]  # lower-cased names
    body: bytes
    messages: tuple[JsonObject, ...]  # every JSON-RPC message decoded from the body or stream
    response: JsonObject | None  # the message answering the request id, if any
    failure: WireFailure | None
    elapsed_ms: float
    sse_events: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)


class Transport(Protocol):
    """Sends one encoded JSON-RPC message (or raw bytes) and returns what came back."""

    kind: Literal["http", "stdio"]
    target: str

    async def send(
        self,
        body: bytes,
        *,
        headers: Mapping[str, str],
        expect_id: RequestId | None,
        http_method: str = "POST",
        stop_at: StopAt | None = None,
    ) -> WireResponse:
        """Send `body`; read until the response to `expect_id`, or until a message for which `stop_at` holds."""
        ...

    async def aclose(self) -> None: ...


def find_response(messages: tuple[JsonObject, ...] | list[JsonObject], expect_id: RequestId | None) -> JsonObject | None:
    """The JSON-RPC response (result or error) whose id is `expect_id`."""
    if expect_id is None:
        return None
    for message in messages:
        if message.get("id") == expect_id and ("result" in message or "error" in message):
            return message
    return None
