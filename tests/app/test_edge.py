from __future__ import annotations

import logging
from typing import cast

import pytest

from n8n_a2a.app.edge import HTTP_JSON, Edge
from n8n_a2a.executor import Executor
from n8n_a2a.observability.metrics import Metrics
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.push.service import PushNotifications
from tests.support.adapter import make_settings


def test_a_refusal_is_counted_and_logged_with_its_binding_method_and_code(
    caplog: pytest.LogCaptureFixture,
) -> None:
    metrics = Metrics()
    edge = Edge(
        make_settings(),
        cast(Executor, None),
        metrics,
        cast(PushNotifications, None),
        None,
        lambda: None,
    )
    with caplog.at_level(logging.INFO):
        edge.log_refusal(HTTP_JSON, "GetTask", A2AError(ErrorCode.TASK_NOT_FOUND, "Not found"))
    [record] = caplog.records
    code = int(ErrorCode.TASK_NOT_FOUND)
    assert record.getMessage() == f"A2A error {code}: Not found"
    fields = {"event": "rpc_error", "binding": "http_json", "method": "GetTask", "code": code}
    assert record.__dict__["fields"] == fields
    labels = {"binding": "http_json", "method": "GetTask", "code": str(code)}
    assert metrics.registry.get_sample_value("n8n_a2a_jsonrpc_requests_total", labels) == 1
