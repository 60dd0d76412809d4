"""Prometheus metrics, in a registry of the adapter's own (one per server)."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from ..core.contract import Outcome
from ..core.errors import AuthReason

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


class Metrics:
    """What /metrics shows: tasks by outcome, webhook latency, calls, table, requests,
    streams, refused tokens."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._tasks = Counter(
            "n8n_a2a_tasks",
            "Turns of tasks that ended, by outcome (INPUT_REQUIRED: the task waits for input).",
            ["outcome"],
            registry=self.registry,
        )
        # Every outcome shows, at 0 until it happens. Each turn and each answer counts
        # under one label set, whose child is kept here: `labels()` is no look-up, it
        # checks and builds the key each time.
        self._by_outcome = {outcome: self._tasks.labels(outcome.value) for outcome in Outcome}
        self._latency = Histogram(
            "n8n_a2a_webhook_duration_seconds",
            "Time from the webhook POST to its whole reply (or failure).",
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self._requests = Counter(
            "n8n_a2a_jsonrpc_requests",
            "A2A requests answered, by binding (jsonrpc, http_json), method (the v1.0 or v0.3"
            " JSON-RPC name) and error code (0: a result).",
            ["binding", "method", "code"],
            registry=self.registry,
        )
        self._by_answer: dict[tuple[str, str, int], Counter] = {}
        self._auth_failures = Counter(
            "n8n_a2a_auth_failures",
            "Requests refused for their token (HTTP 401, or 403 for a scope), by reason.",
            ["reason"],
            registry=self.registry,
        )
        for reason in AuthReason:
            self._auth_failures.labels(reason.value)
        self._streams = Gauge(
            "n8n_a2a_streams_open", "Event streams open now.", registry=self.registry
        )
        self._stream_events = Counter(
            "n8n_a2a_stream_events",
            "Task events sent on streams (the task each stream begins with not counted).",
            registry=self.registry,
        )
        self._slow_subscribers = Counter(
            "n8n_a2a_stream_subscribers_dropped",
            "Streams closed because their reader fell too far behind.",
            registry=self.registry,
        )
        self._ignored_notifications = Counter(
            "n8n_a2a_store_notifications_ignored",
            "Notifications on the shared store's channel that carried no task id and event"
            " number: sent by someone else.",
            registry=self.registry,
        )

        self._push = Counter(
            "n8n_a2a_push_deliveries",
            "Push updates by what became of them, per config.",
            ["result"],
            registry=self.registry,
        )
        for result in PUSH_RESULTS:
            self._push.labels(result)
        self._push_attempts = Counter(
            "n8n_a2a_push_attempts", "POSTs made to push receivers.", registry=self.registry
        )
        self._push_latency = Histogram(
            "n8n_a2a_push_delivery_seconds",
            "From a task's update to its delivery (queue and retries included).",
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )

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
        for name, documentation, read in gauges:
            Gauge(name, documentation, registry=self.registry).set_function(read)

    def task_finished(self, outcome: Outcome) -> None:
        self._by_outcome[outcome].inc()

    def webhook_answered(self, seconds: float) -> None:
        self._latency.observe(seconds)

    def request_answered(self, binding: str, method: str, code: int) -> None:
        """Count an answer; `binding` and `method` must come from bounded sets of names."""
        answer = (binding, method, code)
        counter = self._by_answer.get(answer)
        if counter is None:
            counter = self._by_answer[answer] = self._requests.labels(binding, method, str(code))
        counter.inc()

    def auth_failed(self, reason: AuthReason) -> None:
        self._auth_failures.labels(reason.value).inc()

    def stream_opened(self) -> None:
        self._streams.inc()

    def stream_closed(self) -> None:
        self._streams.dec()

    def stream_event_sent(self, events: int) -> None:
        self._stream_events.inc(events)

    def stream_subscriber_dropped(self) -> None:
        self._slow_subscribers.inc()

    def store_notification_ignored(self) -> None:
        self._ignored_notifications.inc()

    def watch_push(self, queued: Callable[[], float]) -> None:
        Gauge(
            "n8n_a2a_push_updates_queued",
            "Push updates waiting for (or under way to) their receivers.",
            registry=self.registry,
        ).set_function(queued)

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
        for name, documentation, read in gauges:
            Gauge(name, documentation, registry=self.registry).set_function(read)

    def push_delivered(self, result: str, count: int = 1) -> None:
        """Count updates by result, one of PUSH_RESULTS."""
        self._push.labels(result).inc(count)

    def push_attempted(self) -> None:
        self._push_attempts.inc()

    def push_latency(self, seconds: float) -> None:
        self._push_latency.observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)
