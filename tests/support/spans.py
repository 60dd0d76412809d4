"""Spans in the tests: the adapter's tracing on, read back with the SDK's in-memory
exporter, and what every span carries, to scan for what must never be there."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from n8n_a2a.observability import traces
from n8n_a2a.observability.otel_traces import OtelTracing


@contextmanager
def recorded_spans() -> Iterator[InMemorySpanExporter]:
    """Tracing on while the block runs, every span ended kept by the exporter yielded."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    before = traces.use(OtelTracing(provider))
    try:
        yield exporter
    finally:
        traces.use(before)
        provider.shutdown()


def named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [span for span in exporter.get_finished_spans() if span.name == name]


def one(exporter: InMemorySpanExporter, name: str) -> ReadableSpan:
    [span] = named(exporter, name)
    return span


def everything_shown(span: ReadableSpan) -> str:
    """All a span carries as text: name, status, attributes, events and links."""
    shown = [span.name, str(span.status.description)]
    shown += [f"{key}={value!s}" for key, value in (span.attributes or {}).items()]
    for event in span.events:
        shown.append(event.name)
        shown += [f"{key}={value!s}" for key, value in (event.attributes or {}).items()]
    for link in span.links:
        shown += [f"{key}={value!s}" for key, value in (link.attributes or {}).items()]
    return "\n".join(shown)
