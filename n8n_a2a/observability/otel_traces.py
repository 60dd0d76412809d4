"""The OpenTelemetry side of traces.py (spans.py's interface), imported only when tracing
is on (the otel extra).

The SDK configures itself from the OTEL_* variables: the exporter's endpoint, headers and
timeout, the sampler (OTEL_TRACES_SAMPLER), the batching (OTEL_BSP_*), the resource
(OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES). Spans leave in the batch processor's thread,
never in the event loop.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from .. import __version__
from .spans import Attribute, Span, TraceHeaders

_PROPAGATOR = TraceContextTextMapPropagator()

#: Seconds a shutdown waits for the spans still held to leave. The SDK bounds none of it:
#: its batch processor waits up to 30 s for its thread, whose last export waits and
#: retries up to OTEL_EXPORTER_OTLP_TIMEOUT (10 s) on an endpoint down or blackholed, and
#: its force_flush ignores its timeout: 13 to 20 s were measured. What a SIGTERM's drain
#: leaves of the pod's grace period is short (the Kubernetes example's 75 s leave 10 past
#: preStop and the two ADAPTER_SHUTDOWN_GRACE), and the answers and the exit need it too.
SHUTDOWN_TIMEOUT = 2.0


class _Span:
    """spans.Span over an SDK span."""

    __slots__ = ("_span",)

    def __init__(self, span: trace.Span) -> None:
        self._span = span

    def set(self, key: str, value: Attribute) -> None:
        self._span.set_attribute(key, value)

    def fail(self, reason: str) -> None:
        self._span.set_status(Status(StatusCode.ERROR, reason))

    def headers(self) -> TraceHeaders:
        carrier: dict[str, str] = {}
        _PROPAGATOR.inject(carrier, trace.set_span_in_context(self._span))
        return tuple(carrier.items())

    def end(self) -> None:
        self._span.end()


def _parent(headers: TraceHeaders) -> Context | None:
    return _PROPAGATOR.extract(dict(headers)) if headers else None


class OtelTracing:
    """spans.Tracing with a tracer provider (from_environment's, or a test's)."""

    enabled = True

    def __init__(self, provider: TracerProvider) -> None:
        self._provider = provider
        self._tracer = provider.get_tracer("n8n_a2a", __version__)

    def server(self, binding: str, parent: TraceHeaders) -> AbstractContextManager[Span]:
        return self._server(binding, parent)

    @contextmanager
    def _server(self, binding: str, parent: TraceHeaders) -> Iterator[Span]:
        # No exception is recorded: its message may quote what a caller sent.
        with self._tracer.start_as_current_span(
            "A2A request",
            context=_parent(parent),
            kind=SpanKind.SERVER,
            attributes={"a2a.binding": binding},
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                yield _Span(span)
            except BaseException as error:
                span.set_status(Status(StatusCode.ERROR, type(error).__name__))
                raise

    def named(self, method: str) -> None:
        span = trace.get_current_span()
        span.update_name(f"A2A {method}")
        span.set_attribute("a2a.method", method)

    def annotate(self, key: str, value: Attribute) -> None:
        trace.get_current_span().set_attribute(key, value)

    def refused(self, code: int) -> None:
        span = trace.get_current_span()
        span.set_attribute("a2a.error.code", code)
        span.set_status(Status(StatusCode.ERROR, f"A2A error {code}"))

    def context(self, inherited: TraceHeaders) -> TraceHeaders:
        span = trace.get_current_span()
        return _Span(span).headers() if span.get_span_context().is_valid else inherited

    def task(self, task_id: str, parent: TraceHeaders) -> Span:
        span = self._tracer.start_span(
            "A2A task", context=_parent(parent), attributes={"a2a.task_id": task_id}
        )
        return _Span(span)

    def client(self, name: str, url: str, parent: TraceHeaders) -> Span:
        span = self._tracer.start_span(
            name,
            context=_parent(parent),
            kind=SpanKind.CLIENT,
            attributes={"http.request.method": "POST", "url.full": url},
        )
        return _Span(span)

    def shutdown(self) -> None:
        """Send the spans held, for SHUTDOWN_TIMEOUT at most: then they are dropped."""
        # In a daemon thread, so that what is left of it never holds the process's exit.
        # (The provider's exit hook, which would shut it down again, then returns at once.)
        sending = threading.Thread(
            target=self._provider.shutdown, name="otel-traces-shutdown", daemon=True
        )
        sending.start()
        sending.join(SHUTDOWN_TIMEOUT)


def from_environment() -> OtelTracing:
    """Tracing as the OTEL_* variables configure it, exported over OTLP/HTTP in batches."""
    # The protobuf exporter only now: its import is the heaviest part.
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: "n8n-a2a"}))
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return OtelTracing(provider)
