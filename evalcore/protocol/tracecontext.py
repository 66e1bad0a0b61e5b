"""Protocol layer: W3C trace-context values for `_meta.traceparent` (SEP-414).

Pure apart from the random ids. Layer 3 will replace the ids with those of the
active OpenTelemetry span; until then every request starts its own trace.
"""

from __future__ import annotations

import re
import secrets

_TRACEPARENT = re.compile(r"00-(?P<trace_id>[0-9a-f]{32})-(?P<span_id>[0-9a-f]{16})-(?P<flags>[0-9a-f]{2})")


def new_traceparent(trace_id: str | None = None) -> str:
    """A version-00 `traceparent`, sampled, with a fresh span id (and trace id unless given)."""
    return f"00-{trace_id or secrets.token_hex(16)}-{secrets.token_hex(8)}-01"


def is_valid_traceparent(value: str) -> bool:
    """True for a well-formed version-00 traceparent with non-zero ids."""
    match = _TRACEPARENT.fullmatch(value)
    return match is not None and set(match["trace_id"]) != {"0"} and set(match["span_id"]) != {"0"}
