"""Transport layer: an incremental, bounded Server-Sent Events decoder.

Pure: feed it text as it arrives, get complete events back. Written here rather
than taken from a library because the harness must bound line length and event
count on hostile streams, which streaming line iterators do not.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SseEvent:
    event: str
    data: str
    id: str | None


class SseDecoder:
    """Decodes the `text/event-stream` format (WHATWG HTML, "Server-sent events")."""

    def __init__(self) -> None:
        self._buffer = ""
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None

    @property
    def pending_chars(self) -> int:
        """Characters held for an unfinished line or event (for size bounds)."""
        return len(self._buffer) + sum(len(part) for part in self._data)

    def feed(self, text: str) -> list[SseEvent]:
        self._buffer += text
        events: list[SseEvent] = []
        while True:
            cut = _first_line_end(self._buffer)
            if cut is None:
                return events
            line, self._buffer = self._buffer[: cut[0]], self._buffer[cut[1] :]
            event = self._line(line)
            if event is not None:
                events.append(event)

    def _line(self, line: str) -> SseEvent | None:
        if line == "":
            if not self._data:
                self._event = ""
                return None
            event = SseEvent(event=self._event or "message", data="\n".join(self._data), id=self._id)
            self._data, self._event = [], ""
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            self._id = value
        return None


def _first_line_end(text: str) -> tuple[int, int] | None:
    """(end of line, start of next line) for the first CRLF, LF or lone CR; None if no full line."""
    lf, cr = text.find("\n"), text.find("\r")
    if cr == -1 or (lf != -1 and lf < cr):
        return None if lf == -1 else (lf, lf + 1)
    if cr + 1 == len(text):
        return None  # a CR at the end may be the first half of CRLF
    return cr, cr + (2 if text[cr + 1] == "\n" else 1)
