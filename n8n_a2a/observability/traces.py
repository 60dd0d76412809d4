"""OpenTelemetry traces (the otel extra), behind one small interface.

`active` is what every part calls. Off (no OTLP endpoint set, the default) it is OFF,
whose methods do nothing and allocate nothing, so a request pays one attribute check
(`active.enabled`) where a span would start, and no module of OpenTelemetry is imported.
On, it is observability/otel_traces.py's OtelTracing, imported only then.

What a span may carry is named by its callers: methods, bindings, versions, ids, states,
outcomes, statuses, URLs without their query. Never a token, a message's text, data or
files, nor a query string: the interface takes no such argument.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol
from urllib.parse import urlsplit

#: W3C trace context headers, as Caller.trace_headers carries them.
TraceHeaders = tuple[tuple[str, str], ...]
Attribute = str | int | float | bool


class Span(Protocol):
    """One span under way."""

    def set(self, key: str, value: Attribute) -> None: ...

    def fail(self, reason: str) -> None:
        """Mark the span an error; `reason` is the adapter's own words (a code, a state)."""

    def headers(self) -> TraceHeaders:
        """This span's context as W3C headers, for the next hop to continue."""

    def end(self) -> None: ...


class Tracing(Protocol):
    enabled: bool

    def server(self, binding: str, parent: TraceHeaders) -> AbstractContextManager[Span]:
        """The span of one A2A request, current while it runs, under the caller's trace."""

    def named(self, method: str) -> None:
        """The current request's span is of this A2A method (a bounded label)."""

    def annotate(self, key: str, value: Attribute) -> None:
        """Set an attribute of the current request's span (none: nothing)."""

    def refused(self, code: int) -> None:
        """The current request is answered with an A2A error of this code."""

    def context(self, inherited: TraceHeaders) -> TraceHeaders:
        """The trace headers the request's work continues: the current span's, when
        there is one, else `inherited` (the caller's, passed on as they came)."""

    def task(self, task_id: str, parent: TraceHeaders) -> Span:
        """A task's turn, from its send to the state the turn leaves it in."""

    def client(self, name: str, url: str, parent: TraceHeaders) -> Span:
        """An outbound POST (the webhook call, a push attempt); `url` without its query."""

    def shutdown(self) -> None:
        """Send the spans still held, and stop."""


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
