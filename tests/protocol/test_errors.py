"""Error codes and how an error quotes what a caller sent."""

from __future__ import annotations

from n8n_a2a.protocol.errors import A2AError, ErrorCode, quoted_id


def test_a_short_id_is_quoted_whole() -> None:
    assert quoted_id("t-1") == "t-1"
    assert quoted_id("x" * 64) == "x" * 64


def test_a_long_id_is_quoted_short_with_its_length() -> None:
    quoted = quoted_id("x" * 1_000_000)
    assert quoted == "x" * 48 + "... (1000000 characters)"


def test_task_not_found_quotes_the_id_short() -> None:
    error = A2AError.task_not_found("y" * 1024)
    assert error.code is ErrorCode.TASK_NOT_FOUND
    assert len(error.message) < 100 and "(1024 characters)" in error.message


def test_only_a2a_codes_are_a2a() -> None:
    assert ErrorCode.TASK_NOT_FOUND.is_a2a and ErrorCode.VERSION_NOT_SUPPORTED.is_a2a
    assert not ErrorCode.INVALID_PARAMS.is_a2a and not ErrorCode.SERVER_BUSY.is_a2a
