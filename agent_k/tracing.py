"""Optional OpenTelemetry tracing: one span per mission, per phase step and per candidate, nested; the agents'
model calls nest under their phase (pydantic-ai instruments them itself).

Off by default: the API's default tracer does nothing, and nothing is sent anywhere. `AGENT_K_TRACING=console`
prints spans; `otlp` exports them to the collector `OTEL_EXPORTER_OTLP_ENDPOINT` names (`pip install
'agent-k[tracing]'`). The parents are explicit, not taken from the current context: a phase's work runs in
tasks the graph starts, which do not inherit a span made around them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal

from opentelemetry import trace

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

TracingMode = Literal["off", "console", "otlp"]


class TracingUnavailable(Exception):
    """The mode needs a package that is not installed; the message names it."""


def install(mode: TracingMode, provider: TracerProvider | None = None) -> None:
    """Set the process's tracer provider for `mode` (or use `provider`, as tests do); `off` leaves the no-op."""
    if provider is None and mode == "off":
        return
    if provider is None:
        provider = _provider(mode)
    trace.set_tracer_provider(provider)
    with contextlib.suppress(ImportError):  # agent mode's model calls, when pydantic-ai is installed
        from pydantic_ai import Agent

        Agent.instrument_all()


def _provider(mode: TracingMode) -> TracerProvider:
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
    except ImportError:
        raise TracingUnavailable(
            "AGENT_K_TRACING needs the OpenTelemetry SDK: pip install 'agent-k[tracing]'"
        ) from None
    exporter: SpanExporter
    if mode == "console":
        exporter = ConsoleSpanExporter()
    else:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            raise TracingUnavailable("AGENT_K_TRACING=otlp needs pip install 'agent-k[tracing]'") from None
        exporter = OTLPSpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "agent-k"}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def _tracer() -> trace.Tracer:
    return trace.get_tracer("agent_k")


def start(name: str, parent: trace.Span | None = None, **attributes: str | int | float) -> trace.Span:
    """A span under `parent` (or a root); end it with `finish`."""
    context = trace.set_span_in_context(parent) if parent is not None else None
    return _tracer().start_span(name, context=context, attributes=attributes)


def finish(span: trace.Span | None, error: BaseException | None = None) -> None:
    if span is None:
        return
    if error is not None:
        span.set_status(trace.Status(trace.StatusCode.ERROR, type(error).__name__))
    span.end()


@contextlib.contextmanager
def span(name: str, parent: trace.Span | None, **attributes: str | int | float) -> Iterator[trace.Span]:
    """A span under `parent` for the block, current inside it (so libraries' own spans nest under it)."""
    opened = start(name, parent, **attributes)
    try:
        with trace.use_span(opened, end_on_exit=False, record_exception=True, set_status_on_exception=True):
            yield opened
    finally:
        opened.end()


def within(parent: trace.Span | None) -> contextlib.AbstractContextManager[object]:
    """Make `parent` current for a block (the agents' model-call spans then nest under their phase)."""
    if parent is None:
        return contextlib.nullcontext()
    return trace.use_span(parent, end_on_exit=False)
