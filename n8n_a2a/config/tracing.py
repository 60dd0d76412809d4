"""Whether to trace: the standard OTEL_* variables, never ADAPTER_* ones.

Only the question "is tracing on" is read here; everything else (service name, sampler,
headers, timeouts, batching) the OpenTelemetry SDK reads itself, as its documentation says.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

#: Where spans go; without either one, tracing is off and nothing of OpenTelemetry loads.
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


def tracing_requested(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether an OTLP endpoint is set, and the SDK not disabled (OTEL_SDK_DISABLED)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return any(environ.get(name, "").strip() for name in ENDPOINT_VARIABLES)
