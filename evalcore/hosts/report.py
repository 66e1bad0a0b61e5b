"""Pure data: what a host's own event stream said about one session, whichever host it was."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StreamCall:
    """An MCP tool call as the host reported it (its MCP name; the host's own id)."""

    id: str
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class HostReport:
    calls: tuple[StreamCall, ...]
    final_text: str | None
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    turns: int | None
    model: str | None  # the model the host says answered
    denials: tuple[str, ...]  # tools the host asked approval for and was refused (nobody can give it)
    server_status: str | None  # the host's word on its connection to the server under test
    error: str | None  # the host's own error, one line
    events: tuple[Mapping[str, Any], ...]  # the host's transcript: its messages as it reported them
    host_steps: int = 0  # calls of the host's own tools (tool search, deferral): not the server's
    step_limit: bool = False  # the host stopped at its turn limit


def host_step(title: str, content: Any) -> dict[str, Any]:
    """A transcript message for a step of the host's own (tool search, deferral, a built-in tool): shown, never scored."""
    return {"role": "host", "title": title, "content": content}
