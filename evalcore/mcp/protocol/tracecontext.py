"""Protocol layer: W3C trace-context values for `_meta.traceparent` / `_meta.tracestate` (SEP-414).

A request sent while an OpenTelemetry span is active carries that span's
context, so the server's span joins the caller's trace; otherwise the request
starts a trace of its own (fresh random ids). Uses the OpenTelemetry API only:
with no tracer provider configured there is never an active span.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
import secrets
from collections.abc import Iterator

from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

_PROPAGATOR = TraceContextTextMapPropagator()  # W3C only: no baggage, whatever OTEL_PROPAGATORS says
_TRACEPARENT = re.compile(r"00-(?P<trace_id>[0-9a-f]{32})-(?P<span_id>[0-9a-f]{16})-(?P<flags>[0-9a-f]{2})")


def new_traceparent(trace_id: str | None = None) -> str:
    """A version-00 `traceparent`, sampled, with a fresh span id (and trace id unless given)."""
    return f"00-{trace_id or secrets.token_hex(16)}-{secrets.token_hex(8)}-01"


def is_valid_traceparent(value: str) -> bool:
    """True for a well-formed version-00 traceparent with non-zero ids."""
    match = _TRACEPARENT.fullmatch(value)
    return match is not None and set(match["trace_id"]) != {"0"} and set(match["span_id"]) != {"0"}


def active_trace_context() -> dict[str, str]:
    """`traceparent` (and `tracestate`, when set) of the active OpenTelemetry span; empty when there is none."""
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    return carrier


_CONVERSATION_TRACE_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("conversation_trace_id", default=None)


@contextlib.contextmanager
def conversation_trace() -> Iterator[str]:
    """Requests sent inside share one trace id (one conversation is one trace) when no span is active."""
    trace_id = secrets.token_hex(16)
    token = _CONVERSATION_TRACE_ID.set(trace_id)
    try:
        yield trace_id
    finally:
        _CONVERSATION_TRACE_ID.reset(token)


def request_trace_context() -> dict[str, str]:
    """The trace keys for a request's `_meta`: the active span's context, else the conversation's trace, else a fresh one."""
    return active_trace_context() or {"traceparent": new_traceparent(_CONVERSATION_TRACE_ID.get())}
