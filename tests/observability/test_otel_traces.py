"""OtelTracing, the otel extra's side: spans under the caller's context, the headers the
next hop continues, error marks, and the resource and exporter the OTEL_* variables make."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from n8n_a2a.observability import otel_traces, traces
from tests.support.otlp_receiver import OtlpReceiver
from tests.support.spans import one, recorded_spans

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER = (("traceparent", f"00-{TRACE_ID}-00f067aa0ba902b7-01"), ("tracestate", "vendor=kept"))


def test_a_request_span_continues_the_callers_trace_and_hands_its_own_on() -> None:
    with recorded_spans() as exporter:
        tracing = traces.active
        with tracing.server("JSONRPC", CALLER):
            tracing.named("GetTask")
            tracing.annotate("a2a.task_id", "t-1")
            passed_on = dict(tracing.context(()))
        assert dict(tracing.context(CALLER)) == dict(CALLER)  # no request: as it came
        request = one(exporter, "A2A GetTask")
    assert request.kind is SpanKind.SERVER
    assert format(request.context.trace_id, "032x") == TRACE_ID
    assert request.parent is not None and request.parent.span_id == 0x00F067AA0BA902B7
    assert request.attributes == {
        "a2a.binding": "JSONRPC",
        "a2a.method": "GetTask",
        "a2a.task_id": "t-1",
    }
    span_id = format(request.context.span_id, "016x")
    assert passed_on == {"traceparent": f"00-{TRACE_ID}-{span_id}-01", "tracestate": "vendor=kept"}


def test_a_refusal_marks_the_request_an_error_with_its_code_only() -> None:
    with recorded_spans() as exporter:
        with traces.active.server("HTTP+JSON", ()):
            traces.active.refused(-32602)
        request = one(exporter, "A2A request")
    assert request.parent is None  # no caller's context: a trace of its own
    assert request.attributes is not None and request.attributes["a2a.error.code"] == -32602
    assert (request.status.status_code, request.status.description) == (
        StatusCode.ERROR,
        "A2A error -32602",
    )


def test_an_exception_marks_the_request_with_its_type_and_records_no_message() -> None:
    with recorded_spans() as exporter:
        with pytest.raises(RuntimeError), traces.active.server("JSONRPC", ()):
            raise RuntimeError("the caller's secret text")
        request = one(exporter, "A2A request")
    assert (request.status.status_code, request.status.description) == (
        StatusCode.ERROR,
        "RuntimeError",
    )
    assert not request.events


def test_task_and_client_spans_hang_under_the_headers_given() -> None:
    with recorded_spans() as exporter:
        task = traces.active.task("t-1", CALLER)
        call = traces.active.client(
            "n8n webhook POST", "https://n8n.example/webhook/x", task.headers()
        )
        call.fail("HTTP 503")
        call.end()
        task.end()
        task_span, call_span = one(exporter, "A2A task"), one(exporter, "n8n webhook POST")
    assert format(task_span.context.trace_id, "032x") == TRACE_ID
    assert call_span.parent is not None and call_span.parent.span_id == task_span.context.span_id
    assert call_span.kind is SpanKind.CLIENT
    assert call_span.attributes == {
        "http.request.method": "POST",
        "url.full": "https://n8n.example/webhook/x",
    }
    assert call_span.status.status_code is StatusCode.ERROR


def test_the_environment_names_the_service_and_the_endpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.delenv("OTEL_SERVICE_NAME", raising=False)
    monkeypatch.delenv("OTEL_RESOURCE_ATTRIBUTES", raising=False)
    default = otel_traces.from_environment()
    monkeypatch.setenv("OTEL_SERVICE_NAME", "supply-agent")
    named = otel_traces.from_environment()
    try:
        assert default._provider.resource.attributes["service.name"] == "n8n-a2a"
        assert named._provider.resource.attributes["service.name"] == "supply-agent"
        [processor] = default._provider._active_span_processor._span_processors
        exporter = processor._batch_processor._exporter  # type: ignore[attr-defined]
        assert isinstance(exporter, OTLPSpanExporter)
        assert exporter._endpoint == "http://127.0.0.1:9/v1/traces"
    finally:
        default.shutdown()
        named.shutdown()


def tracing_to(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> otel_traces.OtelTracing:
    """Tracing as the command starts it, exporting to `endpoint`, the SDK's defaults else
    (its export timeout among them: 10 s)."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    for name in (
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TIMEOUT",
        "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
        "OTEL_TRACES_SAMPLER",
    ):
        monkeypatch.delenv(name, raising=False)
    return otel_traces.from_environment()


@contextmanager
def blackhole() -> Iterator[str]:
    """An endpoint that takes connections (the kernel completes them in the backlog) and
    never reads or answers: a collector gone silent, or a firewall that drops."""
    with socket.create_server(("127.0.0.1", 0), backlog=64) as listener:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


def test_a_shutdown_never_waits_long_for_an_endpoint_that_never_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with blackhole() as endpoint:
        tracing = tracing_to(endpoint, monkeypatch)
        tracing.task("t-1", ()).end()  # a span held: the shutdown has one to send
        started = time.monotonic()
        tracing.shutdown()
        took = time.monotonic() - started
        # What the shutdown left behind retries until the export timeout: told to stop,
        # it does once the endpoint is gone (its connection reset), not in a later test.
        exporter_of(tracing).shutdown()  # type: ignore[no-untyped-call]
    for thread in threading.enumerate():
        if thread.name == "otel-traces-shutdown":
            thread.join(5.0)
            assert not thread.is_alive()
    # The SDK's own shutdown took 10 s and more here (its export timeout): the drain's.
    assert otel_traces.SHUTDOWN_TIMEOUT - 0.1 < took < 5.0  # given up on, in time


def exporter_of(tracing: otel_traces.OtelTracing) -> OTLPSpanExporter:
    [processor] = tracing._provider._active_span_processor._span_processors
    exporter = processor._batch_processor._exporter  # type: ignore[attr-defined]
    assert isinstance(exporter, OTLPSpanExporter)
    return exporter


def test_the_spans_held_still_go_out_at_shutdown(monkeypatch: pytest.MonkeyPatch) -> None:
    with OtlpReceiver().serving() as receiver:
        tracing = tracing_to(receiver.endpoint, monkeypatch)
        tracing.task("t-1", ()).end()  # held: the batch goes out every 5 s, or at shutdown
        started = time.monotonic()
        tracing.shutdown()
        took = time.monotonic() - started
    assert [span.name for _, span in receiver.spans()] == ["A2A task"]
    assert receiver.paths == ["/v1/traces"]
    assert took < otel_traces.SHUTDOWN_TIMEOUT  # sent, not given up on
