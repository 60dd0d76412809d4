"""The tracing interface: what tracing off and OpenTelemetry's both are (mypy holds the
assignments below to the Protocols), and a span that hands its context on."""

from __future__ import annotations

import re

from n8n_a2a.observability import traces
from n8n_a2a.observability.spans import Span, Tracing
from tests.support.spans import recorded_spans


def test_tracing_off_and_opentelemetry_are_both_a_tracing() -> None:
    with recorded_spans():
        tracings: list[Tracing] = [traces.OFF, traces.active]
        assert [tracing.enabled for tracing in tracings] == [False, True]


def test_a_span_hands_on_its_context_as_w3c_headers() -> None:
    with recorded_spans():
        span: Span = traces.active.client("n8n webhook POST", "https://n8n.example/hook", ())
        span.set("http.response.status_code", 200)
        headers = dict(span.headers())
        span.end()
    assert re.fullmatch(r"00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}", headers["traceparent"])
