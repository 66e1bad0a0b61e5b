"""Demo server, state layer: the changes conversations make to the support desk, one sandbox per conversation.

The fixed records in `data` never change. Ticket status changes and new
tickets go into the sandbox of the conversation that made them, so attempts
running side by side never see each other's changes and a read after the
conversation (a golden case's `expect_state`) sees exactly what it did. A
conversation is one W3C trace: requests carrying the same `_meta.traceparent`
trace id share a sandbox; requests without one share a common sandbox. At
most `MAX_SANDBOXES` sandboxes are kept, least recently used dropped first, so
memory stays bounded however long the server runs.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from evalcore.demo_server import data

MAX_SANDBOXES: Final = 4096
SHARED: Final = "shared"
_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$")


@dataclass
class Sandbox:
    """One conversation's changes: ticket id -> (customer_id, subject, status, priority)."""

    tickets: dict[str, tuple[str, str, str, str]] = field(default_factory=dict)


class DeskState:
    def __init__(self, max_sandboxes: int = MAX_SANDBOXES) -> None:
        self._sandboxes: OrderedDict[str, Sandbox] = OrderedDict()
        self._max = max_sandboxes
        self._lock = threading.Lock()  # the SDK runs a sync function (a resolver here) on a worker thread

    def ticket(self, conversation: str, ticket_id: str) -> tuple[str, str, str, str] | None:
        with self._lock:
            changed = self._sandbox(conversation).tickets.get(ticket_id)
        return changed or data.TICKETS.get(ticket_id)

    def put_ticket(self, conversation: str, ticket_id: str, ticket: tuple[str, str, str, str]) -> None:
        with self._lock:
            self._sandbox(conversation).tickets[ticket_id] = ticket

    def _sandbox(self, conversation: str) -> Sandbox:
        sandbox = self._sandboxes.get(conversation)
        if sandbox is None:
            sandbox = self._sandboxes[conversation] = Sandbox()
            while len(self._sandboxes) > self._max:
                self._sandboxes.popitem(last=False)
        self._sandboxes.move_to_end(conversation)
        return sandbox


STATE: Final = DeskState()


def conversation_of(meta: Mapping[str, Any] | None) -> str:
    """The sandbox key of a request: its trace id, or `SHARED` when it carries no valid traceparent."""
    traceparent = (meta or {}).get("traceparent")
    match = _TRACEPARENT.match(traceparent) if isinstance(traceparent, str) else None
    return match.group(1) if match else SHARED
