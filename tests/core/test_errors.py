"""The adapter's own errors: plain exceptions, so that no store or verifier picks a wire
code (the edge's table does, tests/app/test_edge.py)."""

from __future__ import annotations

import pytest

from n8n_a2a.core.errors import (
    AdapterError,
    AuthFailure,
    AuthReason,
    StoreUnavailable,
    SubscriberTooSlow,
)
from n8n_a2a.protocol.errors import A2AError


@pytest.mark.parametrize(
    "error",
    [StoreUnavailable("down"), SubscriberTooSlow("t-1"), AuthFailure(AuthReason.EXPIRED)],
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
