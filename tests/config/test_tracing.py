"""Whether tracing is on: an OTLP endpoint in the standard OTEL_* variables, nothing else."""

from __future__ import annotations

import pytest

from n8n_a2a.config.tracing import tracing_requested


def test_tracing_is_off_without_an_endpoint_whatever_else_otel_says() -> None:
    assert not tracing_requested({})
    assert not tracing_requested(
        {"OTEL_SERVICE_NAME": "supply", "OTEL_TRACES_SAMPLER": "always_on"}
    )
    assert not tracing_requested({"OTEL_EXPORTER_OTLP_ENDPOINT": "  "})
    assert not tracing_requested({"ADAPTER_OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})


@pytest.mark.parametrize(
    "name", ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
)
def test_either_endpoint_variable_turns_it_on(name: str) -> None:
    assert tracing_requested({name: "http://127.0.0.1:4318"})


def test_the_sdks_own_switch_keeps_it_off() -> None:
    environ = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "TRUE"}
    assert not tracing_requested(environ)
    assert tracing_requested({**environ, "OTEL_SDK_DISABLED": "false"})
