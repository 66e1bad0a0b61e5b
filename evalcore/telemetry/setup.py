"""I/O layer: where evalcore's spans go. Nothing leaves the machine unless an OTLP endpoint is configured.

`tracing()` scopes a tracer provider to one run (a context variable, never the
global provider, so importing evalcore changes nothing); `install_global_tracing()`
is for a server process, whose spans the `mcp` SDK opens on the global provider.
Both export over OTLP/HTTP only when `OTEL_EXPORTER_OTLP_ENDPOINT` or
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set (the exporter reads the rest of the
standard `OTEL_EXPORTER_OTLP_*` variables itself); otherwise there is no
exporter at all, no provider unless a test passes one in, and the OpenTelemetry
SDK is not even imported (`evalcore.telemetry.export`). Every span is
redacted (`evalcore.redaction`) on its way to the exporter.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING

from opentelemetry import trace

from evalcore import __version__

if TYPE_CHECKING:  # the SDK (evalcore.telemetry.export) is imported only when there is somewhere to export to
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

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
    from evalcore.telemetry.export import build_provider

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
    from evalcore.telemetry.export import build_provider

    provider = build_provider(service_name, exporter, batch=True)
    trace.set_tracer_provider(provider)
    return provider
