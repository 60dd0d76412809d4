"""The adapter's own errors: plain exceptions, so that no store or verifier picks a wire
code (the edge's table does, tests/app/test_edge.py)."""

from __future__ import annotations

import pytest

from n8n_a2a.core.errors import (
    AdapterError,
    AuthFailure,
    AuthReason,
    BodyTooLarge,
    IllegalTransition,
    KeysUnavailable,
    StoreUnavailable,
    SubscriberTooSlow,
)
from n8n_a2a.protocol.errors import A2AError
from n8n_a2a.protocol.model import TaskState


@pytest.mark.parametrize(
    "error",
    [
        StoreUnavailable("down"),
        SubscriberTooSlow("t-1"),
        BodyTooLarge(64),
        AuthFailure(AuthReason.EXPIRED),
    ],
)
def test_none_is_a_wire_error(error: AdapterError) -> None:
    assert not isinstance(error, A2AError)
    assert str(error) == error.message


def test_a_store_out_of_reach_keeps_its_reason_apart_from_what_the_caller_reads() -> None:
    error = StoreUnavailable("PostgreSQL: connection refused")
    assert error.reason == "PostgreSQL: connection refused"
    assert error.message == (
        "The task store is unavailable (PostgreSQL: connection refused); retry later"
    )


def test_a_refused_caller_is_told_a_fixed_text_unless_a_message_is_given() -> None:
    assert AuthFailure(AuthReason.EXPIRED).message == "The bearer token has expired: get a new one"
    assert AuthFailure(AuthReason.MALFORMED, "Bearer what?").message == "Bearer what?"
    for reason in AuthReason:
        assert AuthFailure(reason).message.isascii(), reason


def test_a_body_too_large_names_the_setting_and_its_value() -> None:
    assert BodyTooLarge(33_554_432).message == (
        "The request body is larger than ADAPTER_MAX_BODY_BYTES (33,554,432 bytes), the most "
        "the adapter reads"
    )


def test_the_errors_never_answered_as_themselves_are_no_adapter_errors() -> None:
    """A bug, and an issuer's keys not had: no line of the edge's table answers them."""
    illegal = IllegalTransition("t-1", TaskState.COMPLETED, TaskState.WORKING)
    assert str(illegal) == "task t-1: completed -> working"
    assert (illegal.current, illegal.to) == (TaskState.COMPLETED, TaskState.WORKING)
    for error in (illegal, KeysUnavailable("https://issuer.example/jwks answered HTTP 500")):
        assert not isinstance(error, AdapterError | A2AError)
