"""I/O layer: where evalcore's spans go. Nothing leaves the machine unless an OTLP endpoint is configured.

`tracing()` scopes a tracer provider to one run (a context variable, never the
global provider, so importing evalcore changes nothing); `install_global_tracing()`
is for a server process, whose spans the `mcp` SDK opens on the global provider.
Both export over OTLP/HTTP only when `OTEL_EXPORTER_OTLP_ENDPOINT` or
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set (the exporter reads the rest of the
standard `OTEL_EXPORTER_OTLP_*` variables itself); otherwise there is no
exporter at all, and no provider unless a test passes one in. Every span is
redacted (`evalcore.redaction`) on its way to the exporter.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Status

from evalcore import __version__, redaction

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
TRACER_NAME = "evalcore"

_run_tracer: ContextVar[trace.Tracer | None] = ContextVar("evalcore_run_tracer", default=None)
_NO_OP = trace.NoOpTracer()


def otlp_endpoint(environ: Mapping[str, str] | None = None) -> str | None:
    """The configured OTLP endpoint variable's value, or None (then nothing is exported)."""
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    return next((env[name] for name in ENDPOINT_VARIABLES if env.get(name, "").strip()), None)


def otlp_exporter(environ: Mapping[str, str] | None = None) -> SpanExporter | None:
    """An OTLP/HTTP span exporter when an endpoint is configured, else None."""
    if otlp_endpoint(environ) is None:
        return None
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


def build_provider(service_name: str, exporter: SpanExporter, *, batch: bool) -> TracerProvider:
    """A provider sending every span to `exporter`; batched off the hot path, or one by one (tests)."""
    provider = TracerProvider(resource=Resource.create({"service.name": service_name, "service.version": __version__}))
    redacting = RedactingSpanExporter(exporter)
    provider.add_span_processor(BatchSpanProcessor(redacting) if batch else SimpleSpanProcessor(redacting))
    return provider


class RedactingSpanExporter(SpanExporter):
    """Hands `exporter` each span with every secret removed from its name, attributes, events and status."""

    def __init__(self, exporter: SpanExporter) -> None:
        self.exporter = exporter

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.exporter.export([redacted_span(span) for span in spans])

    def shutdown(self) -> None:
        self.exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.exporter.force_flush(timeout_millis)


def redacted_span(span: ReadableSpan) -> ReadableSpan:
    scrub = redaction.current()
    return ReadableSpan(
        name=scrub.text(span.name),
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=scrub.value(dict(span.attributes or {})),
        events=[Event(scrub.text(e.name), scrub.value(dict(e.attributes or {})), e.timestamp) for e in span.events],
        links=span.links,
        kind=span.kind,
        status=Status(span.status.status_code, scrub.text(span.status.description) if span.status.description else None),
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


def run_tracer() -> trace.Tracer:
    """The tracer of the run in progress; a no-op tracer outside `tracing()` or when nothing is configured."""
    return _run_tracer.get() or _NO_OP


@contextlib.contextmanager
def tracing(exporter: SpanExporter | None = None, *, service_name: str = "evalcore") -> Iterator[None]:
    """Trace the code inside to `exporter` (tests) or the configured OTLP endpoint; flush on exit.

    Re-entrant: inside an enclosing `tracing()`, the enclosing provider is kept,
    so a test can wrap a whole run with an in-memory exporter.
    """
    if _run_tracer.get() is not None:
        yield
        return
    batch = exporter is None
    exporter = exporter or otlp_exporter()
    if exporter is None:
        yield
        return
    provider = build_provider(service_name, exporter, batch=batch)
    token = _run_tracer.set(provider.get_tracer(TRACER_NAME, __version__))
    try:
        yield
    finally:
        _run_tracer.reset(token)
        provider.shutdown()  # flushes what is still queued


def install_global_tracing(service_name: str) -> TracerProvider | None:
    """For a server process: the global provider, exporting over OTLP when configured; the caller shuts it down."""
    exporter = otlp_exporter()
    if exporter is None:
        return None
    provider = build_provider(service_name, exporter, batch=True)
    trace.set_tracer_provider(provider)
    return provider
