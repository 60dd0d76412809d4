"""OpenTelemetry traces (the otel extra), behind one small interface (spans.py).

`active` is what every part calls. Off (no OTLP endpoint set, the default) it is OFF,
whose methods do nothing and allocate nothing, so a request pays one attribute check
(`active.enabled`) where a span would start, and no module of OpenTelemetry is imported.
On, it is observability/otel_traces.py's OtelTracing, imported only then.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from urllib.parse import urlsplit

from .spans import Attribute, Span, TraceHeaders, Tracing


class _Off:
    """Tracing off: nothing is made, nothing is imported."""

    enabled = False

    def server(self, binding: str, parent: TraceHeaders) -> AbstractContextManager[Span]:
        raise AssertionError("no request span while tracing is off")  # callers check enabled

    def named(self, method: str) -> None:
        pass

    def annotate(self, key: str, value: Attribute) -> None:
        pass

    def refused(self, code: int) -> None:
        pass

    def context(self, inherited: TraceHeaders) -> TraceHeaders:
        return inherited

    def task(self, task_id: str, parent: TraceHeaders) -> Span:
        raise AssertionError("no task span while tracing is off")

    def client(self, name: str, url: str, parent: TraceHeaders) -> Span:
        raise AssertionError("no client span while tracing is off")

    def shutdown(self) -> None:
        pass


OFF: Tracing = _Off()
active: Tracing = OFF


def start() -> None:
    """Turn tracing on, configured by the OTEL_* variables (the otel extra must be there)."""
    global active
    from .otel_traces import from_environment

    active = from_environment()


def use(tracing: Tracing) -> Tracing:
    """Make `tracing` the active one (tests, with an in-memory exporter); the one before."""
    global active
    before, active = active, tracing
    return before


def stop() -> None:
    """Send what is held and turn tracing off (at the end of `serve`)."""
    use(OFF).shutdown()


def without_query(url: str) -> str:
    """A URL as a span may show it: scheme, host, port and path; no user, query or fragment
    (where tokens and secrets travel)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port is not None else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"
