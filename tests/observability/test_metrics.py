"""What /metrics shows, read back as Prometheus's text format."""

from __future__ import annotations

from n8n_a2a.core.contract import Outcome
from n8n_a2a.core.errors import AuthReason
from n8n_a2a.observability.metrics import CONTENT_TYPE, Metrics


def test_every_outcome_shows_at_zero_before_any_task_ends() -> None:
    metrics = Metrics()
    for outcome in Outcome:
        labels = {"outcome": outcome.value}
        assert metrics.registry.get_sample_value("n8n_a2a_tasks_total", labels) == 0
    metrics.task_finished(Outcome.ANSWERED)
    answered = metrics.registry.get_sample_value("n8n_a2a_tasks_total", {"outcome": "ANSWERED"})
    assert answered == 1


def test_requests_and_refused_tokens_are_counted_by_their_labels() -> None:
    metrics = Metrics()
    metrics.request_answered("jsonrpc", "SendMessage", 0)
    metrics.request_answered("jsonrpc", "SendMessage", 0)
    metrics.auth_failed(AuthReason.EXPIRED)
    labels = {"binding": "jsonrpc", "method": "SendMessage", "code": "0"}
    assert metrics.registry.get_sample_value("n8n_a2a_jsonrpc_requests_total", labels) == 2
    expired = {"reason": "expired"}
    assert metrics.registry.get_sample_value("n8n_a2a_auth_failures_total", expired) == 1


def test_the_watched_gauges_read_their_values_when_rendered() -> None:
    metrics = Metrics()
    in_flight = [3.0]
    metrics.watch(lambda: in_flight[0], lambda: 1.0, lambda: 7.0)
    in_flight[0] = 5.0
    text = metrics.render().decode()
    assert "n8n_a2a_webhook_calls_in_flight 5.0" in text
    assert "n8n_a2a_tasks_in_table 7.0" in text
    assert CONTENT_TYPE == "text/plain; version=0.0.4; charset=utf-8"


def test_the_memory_budget_s_gauges_read_its_books_when_rendered() -> None:
    metrics = Metrics()
    held = [1024.0]
    metrics.watch_budget(lambda: held[0], lambda: 2048.0, lambda: 3.0)
    held[0] = 4096.0
    text = metrics.render().decode()
    assert "n8n_a2a_memory_budget_held_bytes 4096.0" in text
    assert "n8n_a2a_memory_budget_kept_bytes 2048.0" in text
    assert "n8n_a2a_memory_budget_waiting 3.0" in text
