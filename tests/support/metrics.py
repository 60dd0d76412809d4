"""Reading the adapter's Prometheus metrics."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample in Prometheus text, its labels in any order."""
    for family in text_string_to_metric_families(text):
        for found in family.samples:
            if found.name == name and found.labels == labels:
                return float(found.value)
    raise AssertionError(f"{name}{labels} not in the metrics")
