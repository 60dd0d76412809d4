"""What header fields say of a message's framing, and a response's head as written."""

from __future__ import annotations

import pytest

from n8n_a2a.http.errors import RequestError, ResponseError
from n8n_a2a.http.fields import Framing, request_fields, request_line, response_head, without


def test_a_request_s_fields_are_lower_cased_trimmed_and_upgrade_dropped() -> None:
    block = b"Host:  a \t\r\nX-Empty:\r\nUpgrade: h2c\r\nX-A: 1 2\r\n"
    assert request_fields(block) == [(b"host", b"a"), (b"x-empty", b""), (b"x-a", b"1 2")]
    assert request_fields(b"") == []


@pytest.mark.parametrize(
    "line", [b" folded: x", b"no colon", b"Name : x", b"X: a\x7fb\x00", b"X: a\rb", b""]
)
def test_a_line_that_is_no_field_is_refused(line: bytes) -> None:
    with pytest.raises(RequestError):
        request_fields(b"Host: a\r\n" + line + b"\r\nX: y\r\n")


def test_the_framing_of_a_message() -> None:
    headers = [
        (b"content-length", b"5, 5"),
        (b"connection", b"Keep-Alive, close"),
        (b"expect", b"100-continue"),
        (b"host", b"a"),
    ]
    framing = Framing.of(headers, b"1.1")
    assert (framing.chunked, framing.length, framing.keep_alive) == (False, 5, False)
    assert framing.expects_continue and framing.hosts == 1
    assert framing.connection == frozenset({b"keep-alive", b"close"})
    assert Framing.of([(b"transfer-encoding", b"Chunked")], b"1.0").chunked
    assert not Framing.of([], b"1.0").keep_alive
    assert Framing.of([], b"1.1").length is None


def test_a_response_head_carries_its_reason_and_refuses_what_could_end_a_line() -> None:
    assert response_head(404, [(b"x", b"y")]) == b"HTTP/1.1 404 Not Found\r\nx: y\r\n\r\n"
    with pytest.raises(ResponseError):
        response_head(200, [(b"x", b"y\r\nz: w")])


def test_without_a_field_whatever_its_case() -> None:
    assert without([(b"A", b"1"), (b"b", b"2"), (b"a", b"3")], b"a") == [(b"b", b"2")]


@pytest.mark.parametrize(
    "line",
    [b"GET / HTTP/1.1 x", b"GET  / HTTP/1.1", b"G@T / HTTP/1.1", b"GET /\x7f HTTP/1.1",
     b"GET / HTTP/1.", b"GET / http/1.1", b"GET / HTTP/a.1", b" / HTTP/1.1"],
)  # fmt: skip
def test_a_request_line_that_is_none_is_refused(line: bytes) -> None:
    with pytest.raises(RequestError, match="illegal request line"):
        request_line(line)


def test_a_request_line_s_parts() -> None:
    assert request_line(b"M-SEARCH * HTTP/2.0") == (b"M-SEARCH", b"*", b"2.0")


def test_a_token_s_characters_are_spelled_alike_for_translate_and_the_expression() -> None:
    import re

    from n8n_a2a.http.fields import _TOKEN_BYTES, _TOKEN_CHARS

    by_expression = {byte for byte in range(256) if re.fullmatch(_TOKEN_CHARS, bytes([byte]))}
    assert by_expression == set(_TOKEN_BYTES)
