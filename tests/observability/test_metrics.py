"""What the counts hold, read back as /metrics shows them."""

from __future__ import annotations

from n8n_a2a.core.errors import AuthReason
from n8n_a2a.core.replies import Outcome
from n8n_a2a.observability.metrics import CONTENT_TYPE, Counter, Histogram, Metrics
from tests.support.metrics import counted, shown


def test_every_outcome_shows_at_zero_before_any_task_ends() -> None:
    metrics = Metrics()
    for outcome in Outcome:
        assert counted(metrics, "n8n_a2a_tasks_total", outcome=outcome.value) == 0
    metrics.task_finished(Outcome.ANSWERED.value)
    metrics.task_finished(Outcome.ANSWERED.value)
    assert counted(metrics, "n8n_a2a_tasks_total", outcome="ANSWERED") == 2
    assert counted(metrics, "n8n_a2a_tasks_total", outcome="TIMEOUT") == 0


def test_requests_and_refused_tokens_are_counted_by_their_labels() -> None:
    metrics = Metrics()
    metrics.request_answered("jsonrpc", "SendMessage", 0)
    metrics.request_answered("jsonrpc", "SendMessage", 0)
    metrics.request_answered("http_json", "GetTask", -32001)
    metrics.auth_failed(AuthReason.EXPIRED)
    sent = {"binding": "jsonrpc", "method": "SendMessage", "code": "0"}
    assert counted(metrics, "n8n_a2a_jsonrpc_requests_total", **sent) == 2
    missing = {"binding": "http_json", "method": "GetTask", "code": "-32001"}
    assert counted(metrics, "n8n_a2a_jsonrpc_requests_total", **missing) == 1
    assert counted(metrics, "n8n_a2a_auth_failures_total", reason="expired") == 1
    assert counted(metrics, "n8n_a2a_auth_failures_total", reason="no_token") == 0


def test_a_counter_without_labels_shows_at_zero_and_counts_by_the_amount() -> None:
    counter = Counter("n8n_a2a_x", "X.")
    assert counter.values == {(): 0.0}
    counter.inc(amount=3)
    counter.inc()
    assert counter.values == {(): 4.0}
    metrics = Metrics()
    metrics.stream_event_sent(4)
    metrics.stream_event_sent(2)
    assert counted(metrics, "n8n_a2a_stream_events_total") == 6


def test_a_histogram_counts_each_observation_in_the_first_bucket_that_bounds_it() -> None:
    histogram = Histogram("n8n_a2a_h", "H.", (0.1, 1.0))
    for value in (0.05, 0.1, 0.5, 1.0, 7.0):
        histogram.observe(value)
    assert histogram.counts == [2, 2, 1]  # a value on a bound is in that bound's bucket
    assert histogram.sum == 8.65


def test_the_streams_open_go_up_and_down() -> None:
    metrics = Metrics()
    metrics.stream_opened()
    metrics.stream_opened()
    metrics.stream_closed()
    assert counted(metrics, "n8n_a2a_streams_open") == 1


def test_the_watched_gauges_read_their_values_when_rendered() -> None:
    metrics = Metrics()
    in_flight = [3.0]
    metrics.watch(lambda: in_flight[0], lambda: 1.0, lambda: 7.0)
    in_flight[0] = 5.0
    text = shown(metrics)
    assert "n8n_a2a_webhook_calls_in_flight 5.0" in text
    assert "n8n_a2a_tasks_in_table 7.0" in text
    assert CONTENT_TYPE == "text/plain; version=0.0.4; charset=utf-8"


def test_the_memory_budget_s_gauges_read_its_books_when_rendered() -> None:
    metrics = Metrics()
    held = [1024.0]
    metrics.watch_budget(lambda: held[0], lambda: 2048.0, lambda: 3.0)
    held[0] = 4096.0
    text = shown(metrics)
    assert "n8n_a2a_memory_budget_held_bytes 4096.0" in text
    assert "n8n_a2a_memory_budget_kept_bytes 2048.0" in text
    assert "n8n_a2a_memory_budget_waiting 3.0" in text
