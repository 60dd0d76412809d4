"""The metrics in Prometheus's text format, written by prometheus_client.

Imported by the operator's app (app/health.py), which is built in a worker thread at its
first request: a start that nobody scrapes never imports prometheus_client.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import accumulate

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.samples import Sample

from .metrics import Counter, Gauge, Histogram, Metrics


def render(metrics: Metrics) -> bytes:
    """Every metric as it is now, its gauges read."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Snapshot(metrics))
    return generate_latest(registry)


class _Snapshot:
    """A collector (prometheus_client's custom collector protocol) of the counts."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        for family in self._metrics.families():
            if isinstance(family, Counter):
                yield _counter(family)
            elif isinstance(family, Histogram):
                yield _histogram(family)
            else:
                yield _gauge(family)


def _counter(counter: Counter) -> Metric:
    family = CounterMetricFamily(
        counter.name, counter.documentation, labels=list(counter.label_names)
    )
    for labels, value in counter.values.items():
        family.add_metric(list(labels), value, created=counter.created[labels])
    return family


def _histogram(histogram: Histogram) -> Metric:
    # A bound as prometheus_client writes one under a million: "0.005", "1.0", "60.0".
    bounds = [repr(float(bound)) for bound in histogram.bounds] + ["+Inf"]
    buckets = list(zip(bounds, accumulate(histogram.counts), strict=True))
    family = HistogramMetricFamily(histogram.name, histogram.documentation)
    family.add_metric([], buckets, histogram.sum)
    # What prometheus_client's own Histogram shows beside its samples.
    family.samples.append(Sample(histogram.name + "_created", {}, histogram.created))
    return family


def _gauge(gauge: Gauge) -> Metric:
    return GaugeMetricFamily(gauge.name, gauge.documentation, value=gauge.read())
