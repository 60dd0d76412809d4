"""What tracing offers the adapter, as an interface: a span under way and the tracing that
makes them. traces.py holds the one in use (off by default), otel_traces.py is the
OpenTelemetry side; both stand on this, neither on the other.

What a span may carry is named by its callers: methods, bindings, versions, ids, states,
outcomes, statuses, URLs without their query. Never a token, a message's text, data or
files, nor a query string: the interface takes no such argument.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

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
