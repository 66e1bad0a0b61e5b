"""Demo server, tamper hooks: the shape of one defect's changes to the wire, as plain data.

`defects` builds these; `defect_http` and `stdio_wire` apply them. Kept apart
so the transport layers need not know the registry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evalcore.demo_server import wire


@dataclass(frozen=True)
class Answer:
    """A reply sent in place of the server's: the request never reaches it."""

    message: wire.Message


@dataclass(frozen=True)
class HttpRequest:
    """What the HTTP hooks see of one exchange."""

    method: str
    headers: dict[str, str]  # lower-case names
    body: object  # the decoded JSON body; wire.NOT_JSON when it is not JSON


@dataclass(frozen=True)
class HttpReply:
    """A raw HTTP answer sent in place of the server's."""

    status: int
    body: bytes = b""
    content_type: str | None = None


HeaderEdits = dict[str, str | None]  # lower-case name -> new value, None removes
HeaderList = list[tuple[str, str]]


@dataclass
class Tamper:
    """The hooks of one defect; an unset hook leaves that part of the exchange alone."""

    request: Callable[[wire.Message], wire.Message | Answer] | None = None
    response: Callable[[wire.Message, wire.Message], wire.Message] | None = None  # (request, reply) -> reply
    http_request: Callable[[HttpRequest], HeaderEdits | HttpReply] | None = None
    http_headers: Callable[[HttpRequest, HeaderList], HeaderList] | None = None
    keep_sdk_unknown_tool: bool = False  # leave out spec_fixes.UnknownToolGuard
    batch: Callable[[list[object]], list[object]] | None = None  # stdio: a JSON array line in -> the array line written back
    notification: Callable[[wire.Message], wire.Message | None] | None = None  # stdio: a notification in -> a reply written back
