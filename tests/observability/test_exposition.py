"""The counts written in Prometheus's text format, as prometheus_client writes its own."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from n8n_a2a.observability.exposition import render
from n8n_a2a.observability.metrics import Metrics
from tests.support.metrics import counted, shown


def test_the_webhook_latency_shows_as_cumulative_buckets_a_count_and_a_sum() -> None:
    metrics = Metrics()
    for seconds in (0.004, 0.005, 0.3, 99.0):
        metrics.webhook_answered(seconds)
    name = "n8n_a2a_webhook_duration_seconds"
    assert counted(metrics, f"{name}_bucket", le="0.005") == 2
    assert counted(metrics, f"{name}_bucket", le="0.25") == 2
    assert counted(metrics, f"{name}_bucket", le="0.5") == 3
    assert counted(metrics, f"{name}_bucket", le="60.0") == 3
    assert counted(metrics, f"{name}_bucket", le="+Inf") == 4
    assert counted(metrics, f"{name}_count") == 4
    assert counted(metrics, f"{name}_sum") == 99.309
    assert counted(metrics, f"{name}_created") > 0


def test_each_counter_shows_when_it_began_as_prometheus_client_s_own_do() -> None:
    text = shown(Metrics())
    assert "# TYPE n8n_a2a_tasks_created gauge" in text
    assert 'n8n_a2a_tasks_created{outcome="ANSWERED"} ' in text
    assert "# TYPE n8n_a2a_push_attempts_total counter" in text
    assert "n8n_a2a_push_attempts_created " in text


def test_every_family_has_its_help_and_type_and_parses() -> None:
    metrics = Metrics()
    metrics.watch(lambda: 1.0, lambda: 0.0, lambda: 2.0)
    text = render(metrics).decode()
    kinds = {family.name: family.type for family in text_string_to_metric_families(text)}
    assert kinds["n8n_a2a_tasks"] == "counter"
    assert kinds["n8n_a2a_webhook_duration_seconds"] == "histogram"
    assert kinds["n8n_a2a_webhook_calls_in_flight"] == "gauge"
    assert kinds["n8n_a2a_streams_open"] == "gauge"
    assert "# HELP n8n_a2a_tasks_in_table Tasks held in the in-memory table." in text
