"""HTTP/1.1 as the webhook client writes and reads it, without sockets: each reply fed in
every way its bytes can come (whole, a byte at a time), and what the reader makes of it:
the head, the body, the end and whether the connection may be used again."""

from __future__ import annotations

import pytest

from n8n_a2a.webhook.errors import LocalProtocolError, RemoteProtocolError
from n8n_a2a.webhook.http11 import (
    MAX_CHUNK_LINE_BYTES,
    MAX_HEAD_BYTES,
    ReplyHead,
    ReplyReader,
    field_lines,
    request_target,
)


def read(*pieces: bytes, eof: bool = False) -> tuple[ReplyReader, bytes]:
    """The reader after the pieces (and the close, with `eof`), and the body it gave."""
    reader = ReplyReader()
    body = b"".join(reader.receive(piece) for piece in pieces)
    if eof:
        reader.receive_eof()
    return reader, body


def bytewise(reply: bytes) -> list[bytes]:
    return [reply[at : at + 1] for at in range(len(reply))]


def both_ways(reply: bytes) -> list[list[bytes]]:
    """The reply whole, and a byte at a time."""
    return [[reply], bytewise(reply)]


OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


@pytest.mark.parametrize("pieces", both_ways(OK))
def test_a_reply_of_stated_length_ends_with_its_body_and_keeps_its_connection(
    pieces: list[bytes],
) -> None:
    reader, body = read(*pieces)
    assert reader.head == ReplyHead(
        200, ((b"content-type", b"application/json"), (b"content-length", b"2"))
    )
    assert (body, reader.ended, reader.reusable) == (b"{}", True, True)


@pytest.mark.parametrize(
    "chunks",
    [
        b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
        b"5;name=value\r\nhello\r\n6 ; x\r\n world\r\n0\r\nX-Trailer: yes\r\n\r\n",
        b"5\nhello\n6\n world\n0\n\n",  # bare LF, as h11 reads it too
        b"A\r\nhello worl\r\n1\r\nd\r\n0\r\n\r\n",
    ],
)
@pytest.mark.parametrize("whole", [True, False])
def test_a_chunked_reply_is_its_chunks_joined(chunks: bytes, whole: bool) -> None:
    reply = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks
    reader, body = read(*([reply] if whole else bytewise(reply)))
    assert (body, reader.ended, reader.reusable) == (b"hello world", True, True)


def test_a_chunk_is_handed_on_as_it_comes_not_when_it_ends() -> None:
    reader = ReplyReader()
    assert reader.receive(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nfirst") == (
        b"first"
    )
    assert reader.receive(b" half") == b" half"
    assert not reader.ended


@pytest.mark.parametrize("pieces", both_ways(b"HTTP/1.1 200 OK\r\n\r\neverything until the close"))
def test_a_reply_without_framing_is_read_to_the_close_and_not_reused(pieces: list[bytes]) -> None:
    reader, body = read(*pieces)
    assert (body, reader.ended) == (b"everything until the close", False)
    reader.receive_eof()
    assert (reader.ended, reader.reusable) == (True, False)


@pytest.mark.parametrize("status", [204, 304])
def test_a_204_or_304_has_no_body_whatever_it_states(status: int) -> None:
    reader, body = read(b"HTTP/1.1 %d X\r\nContent-Length: 5\r\n\r\n" % status)
    assert (reader.head is not None and reader.head.status, body) == (status, b"")
    assert (reader.ended, reader.reusable) == (True, True)


@pytest.mark.parametrize("pieces", both_ways(b"HTTP/1.1 100 Continue\r\n\r\n" + OK))
def test_an_interim_reply_is_passed_over_for_the_reply_after_it(pieces: list[bytes]) -> None:
    reader, body = read(*pieces)
    assert reader.head is not None and reader.head.status == 200
    assert (body, reader.ended, reader.reusable) == (b"{}", True, True)


def test_a_zero_length_reply_ends_with_its_head() -> None:
    reader, body = read(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
    assert (body, reader.ended, reader.reusable) == (b"", True, True)


@pytest.mark.parametrize(
    "reply",
    [
        b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 2\r\n\r\n{}",
        OK + b"HTTP/1.1 200 OK\r\n",  # bytes past the end that nobody asked for
        b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"2\r\n{}\r\n0\r\n\r\n",  # two framings: the chunks read, the connection dropped
    ],
)
def test_a_connection_that_cannot_carry_another_request_is_not_reused(reply: bytes) -> None:
    reader, body = read(reply)
    assert (body, reader.ended, reader.reusable) == (b"{}", True, False)


def test_a_reply_with_no_status_line_yet_waits_for_more() -> None:
    reader, body = read(b"HTTP/1.1 200 OK\r\nContent-")
    assert (reader.head, body, reader.ended) == (None, b"", False)


def test_header_fields_read_as_a_client_must_read_them() -> None:
    reader, _ = read(
        b"HTTP/1.1 200 \r\n"  # an empty reason
        b"X-Spaced:   padded value \t\r\n"
        b"X-Folded: first\r\n   second\r\n"
        b"x-spaced: again\r\n"
        b"Content-Length: 0\r\n\r\n"
    )
    assert reader.head is not None
    assert reader.head.header(b"x-spaced") == "padded value, again"
    assert reader.head.header(b"x-folded") == "first second"
    assert reader.head.header(b"x-missing") == ""


def test_a_header_value_reads_as_utf_8_else_latin_1() -> None:
    head = ReplyHead(200, ((b"x-name", "Grüße".encode()), (b"x-old", "Grüße".encode("latin-1"))))
    assert (head.header(b"x-name"), head.header(b"x-old")) == ("Grüße", "Grüße")


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (b"HTTP/2 200 OK\r\n\r\n", "status line"),
        (b"SMTP ready\r\n\r\n", "status line"),
        (b"HTTP/1.1 2000 OK\r\n\r\n", "status line"),
        (b"HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n", "header line"),
        (b"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", "header line"),
        (b"HTTP/1.1 200 OK\r\nX: a\x00b\r\n\r\n", "header line"),
        (b"HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", "header line"),
        (b"HTTP/1.1 200 OK\r\n folded first\r\n\r\n", "header line"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n", "Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", "Content-Length"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "chunked"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\n", "chunked"),
        (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n", "switched protocols"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}}\r\n", "past its size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nnot a field\r\n", "trailer"),
    ],
)
def test_a_reply_that_is_no_http_1_1_is_refused(reply: bytes, why: str) -> None:
    with pytest.raises(RemoteProtocolError, match=why):
        read(reply)


def test_a_head_past_its_bound_is_refused_before_it_ends() -> None:
    reader = ReplyReader()
    reader.receive(b"HTTP/1.1 200 OK\r\n")
    with pytest.raises(RemoteProtocolError, match="longer than 100 KiB"):
        for _ in range(MAX_HEAD_BYTES // 1000 + 1):
            reader.receive(b"X-Padding: " + b"x" * 1000 + b"\r\n")


def test_a_chunk_size_line_past_its_bound_is_refused() -> None:
    reader = ReplyReader()
    reader.receive(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    with pytest.raises(RemoteProtocolError, match="longer than 4 KiB"):
        reader.receive(b"1;" + b"x" * MAX_CHUNK_LINE_BYTES)


@pytest.mark.parametrize(
    ("received", "why"),
    [
        (b"", "without sending a response"),
        (b"HTTP/1.1 200 OK\r\nContent-", "within the head"),
        (b"HTTP/1.1 100 Continue\r\n\r\n", "within the head"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", "received 3 bytes, expected 10"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", "incomplete chunked"),
    ],
)
def test_a_reply_cut_by_the_close_is_refused(received: bytes, why: str) -> None:
    reader = ReplyReader()
    reader.receive(received)
    with pytest.raises(RemoteProtocolError, match=why):
        reader.receive_eof()


def test_a_close_after_the_end_changes_nothing() -> None:
    reader, _ = read(OK, eof=True)
    assert (reader.ended, reader.reusable) == (True, True)


def test_field_lines_are_written_one_a_line() -> None:
    assert field_lines([(b"Host", b"n8n:5678"), (b"X-Empty", b"")]) == (
        b"Host: n8n:5678\r\nX-Empty: \r\n"
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        (b"X-Token", b"abc\r\nX-Injected: yes"),
        (b"X-Token", b"a\x00b"),
        (b"X-Token", b" padded"),
        (b"X-Token", b"padded "),
        (b"Bad Name", b"x"),
        (b"", b"x"),
        (b"X:Colon", b"x"),
    ],
)
def test_a_field_that_would_break_its_line_is_not_written(name: bytes, value: bytes) -> None:
    with pytest.raises(LocalProtocolError):
        field_lines([(name, value)])


@pytest.mark.parametrize(
    ("path", "query", "target"),
    [
        ("", None, b"/"),
        ("/webhook/check", None, b"/webhook/check"),
        ("/webhook/check", "", b"/webhook/check?"),
        ("/a path/{x}", 'k="v"&q=ä', b"/a%20path/%7Bx%7D?k=%22v%22&q=%C3%A4"),
        ("/ok%41%zz", "a?b", b"/ok%41%zz?a?b"),
    ],
)
def test_a_request_target_is_percent_encoded_as_httpx_encoded_it(
    path: str, query: str | None, target: bytes
) -> None:
    assert request_target(path, query) == target
