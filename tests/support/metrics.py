"""Reading the adapter's Prometheus metrics."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from n8n_a2a.observability.exposition import render
from n8n_a2a.observability.metrics import Metrics


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample in Prometheus text, its labels in any order."""
    for family in text_string_to_metric_families(text):
        for found in family.samples:
            if found.name == name and found.labels == labels:
                return float(found.value)
    raise AssertionError(f"{name}{labels} not in the metrics")


def shown(metrics: Metrics) -> str:
    """What /metrics would show of `metrics` now."""
    return render(metrics).decode()


def counted(metrics: Metrics, name: str, **labels: str) -> float:
    """One sample's value as /metrics would show it now."""
    return sample(shown(metrics), name, **labels)
