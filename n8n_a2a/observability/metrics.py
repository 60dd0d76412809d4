"""What /metrics shows, kept as plain counts (one set per server).

The counts are plain dicts and floats, sans I/O: a send's turn, answer and webhook
latency each cost a dict update, with no lock (the adapter counts from its trio thread
alone) and no metric object per label set. prometheus_client renders them
(exposition.py), imported with the operator's app that serves /metrics: not at start,
where its import and its registry's were a twentieth of the instructions to the card.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..core.errors import AuthReason
from ..core.replies import Outcome

#: The content type of `GET /metrics`.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# Webhook latency from 5 ms (a stub) to a minute (a slow workflow).
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
# What became of a push update for one config (push/deliverer.py).
PUSH_RESULTS = (
    "delivered",  # a 2xx
    "rejected",  # a 4xx other than 408 and 429, or a redirect: not retried
    "failed",  # no 2xx within ADAPTER_PUSH_MAX_ATTEMPTS attempts
    "blocked",  # the URL leads where the policy refuses: not attempted
    "coalesced",  # superseded by a later update while the receiver lagged
    "canceled",  # its config was deleted first
    "undelivered",  # still queued when the shutdown's grace ran out
)

Labels = tuple[str, ...]


class Counter:
    """A counter's value for each set of label values, each with the time it first showed
    (Prometheus's `_created`)."""

    __slots__ = ("created", "documentation", "label_names", "name", "values")

    def __init__(self, name: str, documentation: str, label_names: Labels = ()) -> None:
        self.name = name
        self.documentation = documentation
        self.label_names = label_names
        self.values: dict[Labels, float] = {}
        self.created: dict[Labels, float] = {}
        if not label_names:
            self.show(())

    def show(self, labels: Labels) -> None:
        """Show the label set, at 0 until it is counted."""
        if labels not in self.values:
            self.values[labels] = 0.0
            self.created[labels] = time.time()

    def inc(self, labels: Labels = (), amount: float = 1.0) -> None:
        if labels not in self.values:
            self.show(labels)
        self.values[labels] += amount


class Histogram:
    """Observations counted in buckets by upper bound, the last one unbounded."""

    __slots__ = ("bounds", "counts", "created", "documentation", "name", "sum")

    def __init__(self, name: str, documentation: str, bounds: tuple[float, ...]) -> None:
        self.name = name
        self.documentation = documentation
        self.bounds = bounds
        # counts[i] holds the observations at most bounds[i] and over the one before
        # (counts[-1]: over every bound); exposition makes them cumulative.
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0
        self.created = time.time()

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value


@dataclass(frozen=True, slots=True)
class Gauge:
    """A gauge whose value is read when the metrics are rendered."""

    name: str
    documentation: str
    read: Callable[[], float]


class Metrics:
    """What /metrics shows: tasks by outcome, webhook latency, calls, table, requests,
    streams, refused tokens."""

    def __init__(self) -> None:
        self._tasks = Counter(
            "n8n_a2a_tasks",
            "Turns of tasks that ended, by outcome (INPUT_REQUIRED: the task waits for input).",
            ("outcome",),
        )
        # Every outcome shows, at 0 until it happens; each is counted under its key, found
        # by its value as a task's metadata holds it (no Enum made, no Enum hashed: a turn's
        # end counts one).
        self._by_outcome = {outcome.value: (outcome.value,) for outcome in Outcome}
        for labels in self._by_outcome.values():
            self._tasks.show(labels)
        self._latency = Histogram(
            "n8n_a2a_webhook_duration_seconds",
            "Time from the webhook POST to its whole reply (or failure).",
            _LATENCY_BUCKETS,
        )
        self._requests = Counter(
            "n8n_a2a_jsonrpc_requests",
            "A2A requests answered, by binding (jsonrpc, http_json), method (the v1.0 or v0.3"
            " JSON-RPC name) and error code (0: a result).",
            ("binding", "method", "code"),
        )
        self._auth_failures = Counter(
            "n8n_a2a_auth_failures",
            "Requests refused for their token (HTTP 401, or 403 for a scope), by reason.",
            ("reason",),
        )
        for reason in AuthReason:
            self._auth_failures.show((reason.value,))
        self._streams_open = 0.0
        self._stream_events = Counter(
            "n8n_a2a_stream_events",
            "Task events sent on streams (the task each stream begins with not counted).",
        )
        self._slow_subscribers = Counter(
            "n8n_a2a_stream_subscribers_dropped",
            "Streams closed because their reader fell too far behind.",
        )
        self._ignored_notifications = Counter(
            "n8n_a2a_store_notifications_ignored",
            "Notifications on the shared store's channel that carried no task id and event"
            " number: sent by someone else.",
        )
        self._push = Counter(
            "n8n_a2a_push_deliveries",
            "Push updates by what became of them, per config.",
            ("result",),
        )
        for result in PUSH_RESULTS:
            self._push.show((result,))
        self._push_attempts = Counter("n8n_a2a_push_attempts", "POSTs made to push receivers.")
        self._push_latency = Histogram(
            "n8n_a2a_push_delivery_seconds",
            "From a task's update to its delivery (queue and retries included).",
            _LATENCY_BUCKETS,
        )
        self._gauges = [Gauge("n8n_a2a_streams_open", "Event streams open now.", self._open)]

    def families(self) -> Iterator[Counter | Histogram | Gauge]:
        """Every metric, in the order /metrics shows them."""
        yield self._tasks
        yield self._latency
        yield self._requests
        yield self._auth_failures
        yield self._stream_events
        yield self._slow_subscribers
        yield self._ignored_notifications
        yield self._push
        yield self._push_attempts
        yield self._push_latency
        yield from self._gauges

    def watch(
        self,
        in_flight: Callable[[], float],
        queued: Callable[[], float],
        table_size: Callable[[], float],
    ) -> None:
        """Gauges read at each scrape from the executor and the table."""
        gauges = (
            ("n8n_a2a_webhook_calls_in_flight", "Webhook calls under way.", in_flight),
            ("n8n_a2a_webhook_calls_queued", "Sends waiting for a call slot.", queued),
            ("n8n_a2a_tasks_in_table", "Tasks held in the in-memory table.", table_size),
        )
        self._gauges += (Gauge(*gauge) for gauge in gauges)

    def task_finished(self, outcome: str) -> None:
        """A turn ended with `outcome`, an Outcome's value."""
        self._tasks.values[self._by_outcome[outcome]] += 1

    def webhook_answered(self, seconds: float) -> None:
        self._latency.observe(seconds)

    def request_answered(self, binding: str, method: str, code: int) -> None:
        """Count an answer; `binding` and `method` must come from bounded sets of names."""
        self._requests.inc((binding, method, str(code)))

    def auth_failed(self, reason: AuthReason) -> None:
        self._auth_failures.inc((reason.value,))

    def stream_opened(self) -> None:
        self._streams_open += 1

    def stream_closed(self) -> None:
        self._streams_open -= 1

    def _open(self) -> float:
        return self._streams_open

    def stream_event_sent(self, events: int) -> None:
        self._stream_events.inc(amount=events)

    def stream_subscriber_dropped(self) -> None:
        self._slow_subscribers.inc()

    def store_notification_ignored(self) -> None:
        self._ignored_notifications.inc()

    def watch_push(self, queued: Callable[[], float]) -> None:
        self._gauges.append(
            Gauge(
                "n8n_a2a_push_updates_queued",
                "Push updates waiting for (or under way to) their receivers.",
                queued,
            )
        )

    def watch_budget(
        self,
        held: Callable[[], float],
        kept: Callable[[], float],
        waiting: Callable[[], float],
    ) -> None:
        """ADAPTER_MEMORY_BUDGET's gauges, read at each scrape."""
        gauges = (
            ("n8n_a2a_memory_budget_held_bytes", "Payload bytes requests and calls hold.", held),
            ("n8n_a2a_memory_budget_kept_bytes", "Payload bytes finished tasks keep.", kept),
            ("n8n_a2a_memory_budget_waiting", "Requests and replies waiting for room.", waiting),
        )
        self._gauges += (Gauge(*gauge) for gauge in gauges)

    def push_delivered(self, result: str, count: int = 1) -> None:
        """Count updates by result, one of PUSH_RESULTS."""
        self._push.inc((result,), count)

    def push_attempted(self) -> None:
        self._push_attempts.inc()

    def push_latency(self, seconds: float) -> None:
        self._push_latency.observe(seconds)
