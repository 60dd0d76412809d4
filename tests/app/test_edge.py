from __future__ import annotations

import logging
from typing import cast

import pytest

from n8n_a2a.app.edge import (
    HTTP_JSON,
    WIRE_CODES,
    WIRE_STATUSES,
    Edge,
    auth_status,
    wire_error,
    wire_status,
)
from n8n_a2a.core import errors
from n8n_a2a.core.errors import (
    AtCapacity,
    AuthFailure,
    AuthReason,
    BodyTooLarge,
    StoreUnavailable,
    SubscriberTooSlow,
)
from n8n_a2a.executor import Executor
from n8n_a2a.observability.metrics import Metrics
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.push.service import PushNotifications
from tests.support.adapter import make_settings
from tests.support.metrics import counted


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
    assert counted(metrics, "n8n_a2a_jsonrpc_requests_total", **labels) == 1


def test_the_adapters_own_errors_are_answered_with_the_codes_they_always_had() -> None:
    busy = ErrorCode.SERVER_BUSY
    store = wire_error(StoreUnavailable("PostgreSQL: connection refused"))
    assert (store.code, store.message) == (
        busy,
        "The task store is unavailable (PostgreSQL: connection refused); retry later",
    )
    slow = wire_error(SubscriberTooSlow("t-1"))
    assert (slow.code, slow.message) == (
        busy,
        "This stream fell too far behind task t-1 and was closed; the task goes on: "
        "GetTask or SubscribeToTask shows where it is",
    )
    wire = A2AError(ErrorCode.TASK_NOT_FOUND, "Not found")
    assert wire_error(wire) is wire


@pytest.mark.parametrize("reason", list(AuthReason))
def test_every_refused_caller_is_32600_and_only_a_missing_scope_is_a_403(
    reason: AuthReason,
) -> None:
    failure = AuthFailure(reason)
    refusal = wire_error(failure)
    assert refusal.code is ErrorCode.INVALID_REQUEST
    assert refusal.message == failure.message and refusal.message.isascii()
    assert auth_status(failure) == (403 if reason is AuthReason.INSUFFICIENT_SCOPE else 401)


def test_every_error_of_the_adapter_has_its_line_in_the_table() -> None:
    own = {
        value
        for value in vars(errors).values()
        if isinstance(value, type)
        and issubclass(value, errors.AdapterError)
        and value is not errors.AdapterError
    }
    assert own == set(WIRE_CODES)


def test_a_body_too_large_is_32600_with_413_in_either_binding() -> None:
    large = BodyTooLarge(64)
    refusal = wire_error(large)
    assert (refusal.code, refusal.message) == (ErrorCode.INVALID_REQUEST, large.message)
    assert wire_status(large, 200) == wire_status(large, 0) == 413


@pytest.mark.parametrize("otherwise", [200, 0])
def test_an_error_without_a_status_of_its_own_has_the_bindings(otherwise: int) -> None:
    for error in (StoreUnavailable("down"), SubscriberTooSlow("t-1"), AtCapacity("full")):
        assert wire_status(error, otherwise) == otherwise
    assert wire_status(AuthFailure(AuthReason.EXPIRED), otherwise) == 401
    assert wire_status(AuthFailure(AuthReason.INSUFFICIENT_SCOPE), otherwise) == 403
    assert set(WIRE_STATUSES) == {BodyTooLarge, AuthFailure}
