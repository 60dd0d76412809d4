"""Error codes, how an error quotes what a caller sent, and the protocol's errors."""

from __future__ import annotations

from n8n_a2a.protocol.errors import (
    A2AError,
    ErrorCode,
    InvalidRequest,
    NoRoute,
    NotCanonicalizable,
    NotJSON,
    quoted_id,
)


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


def test_an_envelope_refused_carries_the_id_to_echo() -> None:
    refused = InvalidRequest(ErrorCode.INVALID_REQUEST, "'jsonrpc' must be \"2.0\"", 7)
    assert isinstance(refused, A2AError)
    assert (refused.code, refused.message, refused.request_id) == (
        ErrorCode.INVALID_REQUEST,
        "'jsonrpc' must be \"2.0\"",
        7,
    )
    assert InvalidRequest(ErrorCode.PARSE_ERROR, "Parse error").request_id is None


def test_a_path_no_route_serves_is_method_not_found_with_what_is_allowed() -> None:
    nowhere, elsewhere = NoRoute("No route"), NoRoute("Use GET", ("GET",))
    assert isinstance(nowhere, A2AError)
    assert (nowhere.code, nowhere.allowed) == (ErrorCode.METHOD_NOT_FOUND, ())
    assert (elsewhere.message, elsewhere.allowed) == ("Use GET", ("GET",))


def test_what_the_json_readers_refuse_are_value_errors_as_json_s_own_are() -> None:
    # Callers that catch ValueError for any unreadable JSON catch these too.
    assert issubclass(NotJSON, ValueError) and not issubclass(NotJSON, A2AError)
    assert issubclass(NotCanonicalizable, ValueError)
    assert not issubclass(NotCanonicalizable, A2AError)
