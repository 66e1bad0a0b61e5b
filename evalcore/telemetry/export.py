"""I/O layer: the OpenTelemetry SDK side of `evalcore.telemetry.setup`: a provider whose spans are redacted on their
way to an exporter. Imported only when spans go somewhere (an OTLP endpoint, or a test's exporter): the SDK costs
every process that imports it some tens of ms of CPU.
"""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Status

from evalcore import __version__, redaction


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
