"""The requests an HTTP11Connection reads (as h11 reads them, and no more), and the
responses it frames."""

from __future__ import annotations

import h11
import pytest

from n8n_a2a.http.errors import RequestError, ResponseError
from n8n_a2a.http.framing import BodyData, HTTP11Connection, RequestHead, Signal

GOOD = b"GET /healthz HTTP/1.1\r\nHost: adapter\r\n\r\n"
Event = RequestHead | BodyData | Signal


def connection_of(data: bytes = b"") -> HTTP11Connection:
    connection = HTTP11Connection(max_head=16 * 1024)
    if data:
        connection.receive_data(data)
    return connection


def events(data: bytes) -> list[Event]:
    """What the connection reads of `data` until it needs more or must close, answering
    each request with an empty 200."""
    connection = connection_of(data)
    found: list[Event] = []
    while True:
        event = connection.next_event()
        found.append(event)
        if event is Signal.NEED_DATA or event is Signal.CLOSED:
            return found
        if event is Signal.BODY_END:
            connection.respond(200, [(b"content-length", b"0")])
            connection.end()
            if not connection.reusable:  # HTTP/1.0, or Connection: close
                return found
            connection.start_next_cycle()


def kinds(found: list[Event]) -> list[object]:
    return [event if isinstance(event, Signal) else type(event) for event in found]


def refusal(data: bytes) -> RequestError:
    with pytest.raises(RequestError) as refused:
        events(data)
    return refused.value


def as_h11_reads(data: bytes) -> RequestHead:
    """The request h11 reads of `data`, as this module gives it."""
    plain = h11.Connection(h11.SERVER)
    plain.receive_data(data)
    request = plain.next_event()
    assert isinstance(request, h11.Request)
    return RequestHead(request.method, request.target, request.http_version, list(request.headers))


@pytest.mark.parametrize(
    "data",
    [
        GOOD,
        GOOD.replace(b"\r\n\r\n", b"\r\nX-Trace: a\r\nAccept:  */* \t\r\nEmpty:\r\n\r\n"),
        b"POST /a?b=c%20d HTTP/1.1\r\nHOST: adapter:8000\r\nContent-Length: 2\r\n"
        b"Content-Type: application/json\r\nA2A-Version: 1.0\r\n\r\n{}",
        b"GET * HTTP/1.0\r\n\r\n",
        b"OPTIONS http://adapter/x HTTP/1.1\r\nHost: adapter\r\nX-Obs: caf\xc3\xa9 \x80\r\n\r\n",
    ],
)
def test_a_well_framed_request_is_read_as_h11_reads_it(data: bytes) -> None:
    assert connection_of(data).next_event() == as_h11_reads(data)


@pytest.mark.parametrize(
    ("data", "status"),
    [
        (b"GET /healthz HTTP/1.1\r\n\r\n", 400),  # no Host
        (b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        (b"GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        (b"G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n", 400),
        (b"\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", 400),  # as h11: no empty line first
        (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 400),  # TLS, refused at once
        (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 2\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: " + b"9" * 21 + b"\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
        (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
        (
            b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n",
            501,
        ),
    ],
)
def test_what_h11_refuses_is_refused_with_its_status(data: bytes, status: int) -> None:
    with pytest.raises(h11.RemoteProtocolError):
        plain = h11.Connection(h11.SERVER)
        plain.receive_data(data)
        plain.next_event()
    assert refusal(data).status == status


def test_agreeing_content_lengths_are_one() -> None:
    data = b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\n{}"
    assert kinds(events(data)) == [RequestHead, BodyData, Signal.BODY_END, Signal.NEED_DATA]


def test_a_head_longer_than_the_bound_is_a_431_before_it_ends() -> None:
    connection = connection_of(b"GET / HTTP/1.1\r\nX: " + b"a" * (16 * 1024))
    with pytest.raises(RequestError) as refused:
        connection.next_event()
    assert refused.value.status == 431


def test_a_head_in_pieces_is_read_once_whole() -> None:
    connection = connection_of()
    for piece in (GOOD[:5], GOOD[5:-3], GOOD[-3:-1]):
        connection.receive_data(piece)
        assert connection.next_event() is Signal.NEED_DATA
    connection.receive_data(GOOD[-1:])
    assert isinstance(connection.next_event(), RequestHead)
    assert connection.next_event() is Signal.BODY_END


@pytest.mark.parametrize(
    "head",
    [
        b"GET /healthz HTTP/1.1\nHost: adapter\n\n",
        b"GET /healthz HTTP/1.1\nHost: adapter\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: adapter\nX-Smuggled: y\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: adapter\r\n\n",
    ],
)
def test_a_head_with_a_bare_lf_is_a_400(head: bytes) -> None:
    error = refusal(head)
    assert error.status == 400
    assert "bare LF" in str(error)


#: What a request with a body, then GOOD behind it, reads as.
A_BODY_THEN_GOOD = [
    RequestHead,
    BodyData,
    Signal.BODY_END,
    RequestHead,
    Signal.BODY_END,
    Signal.NEED_DATA,
]


def test_a_bare_lf_in_a_body_is_no_head_and_the_next_head_is_judged_alone() -> None:
    post = b"POST / HTTP/1.1\r\nHost: adapter\r\nContent-Length: 3\r\n\r\na\nb"
    read = events(post + GOOD)
    assert kinds(read) == A_BODY_THEN_GOOD
    assert read[1] == BodyData(b"a\nb")
    assert refusal(post + GOOD.replace(b"\r\nHost", b"\nHost")).status == 400


@pytest.mark.parametrize(
    "request_line",
    [b"PRI * HTTP/2.0", b"GET /healthz HTTP/2.0", b"GET /healthz HTTP/3.0", b"GET / HTTP/0.9"],
)
def test_any_version_but_1_0_and_1_1_is_a_505(request_line: bytes) -> None:
    error = refusal(request_line + b"\r\nHost: adapter\r\n\r\n")
    assert error.status == 505
    assert "HTTP/1.1 only" in str(error)


def test_the_h2_preface_is_a_505_before_its_frames_are_read() -> None:
    assert refusal(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04").status == 505


def test_http_1_0_is_read_and_is_the_connection_s_last_request() -> None:
    read = events(b"GET /healthz HTTP/1.0\r\n\r\n")
    assert kinds(read) == [RequestHead, Signal.BODY_END]
    assert isinstance(read[0], RequestHead) and read[0].http_version == b"1.0"


@pytest.mark.parametrize(
    "framing",
    [
        b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
        b"transfer-encoding: chunked\r\ncontent-length: 0\r\n",
    ],
)
def test_content_length_with_transfer_encoding_is_a_400(framing: bytes) -> None:
    head = b"POST / HTTP/1.1\r\nHost: adapter\r\n" + framing + b"\r\n0\r\n\r\n"
    error = refusal(head)
    assert error.status == 400
    assert "Content-Length with Transfer-Encoding" in str(error)


@pytest.mark.parametrize(
    "folded",
    [
        b"X-A: 1\r\n Transfer-Encoding: chunked\r\n",  # h11 sees no Transfer-Encoding
        b"X-A: 1\r\n\tTransfer-Encoding: chunked\r\n",
        b"X-A: 1\r\n  \t more of X-A\r\n",  # a fold with no framing in it, too
    ],
    ids=["sp-transfer-encoding", "htab-transfer-encoding", "plain-fold"],
)
def test_a_folded_head_line_is_a_400(folded: bytes) -> None:
    head = b"POST / HTTP/1.1\r\nHost: adapter\r\nContent-Length: 5\r\n" + folded + b"\r\n"
    assert as_h11_reads(head + b"0\r\n\r\n")  # what h11 alone lets through
    error = refusal(head + b"0\r\n\r\n")
    assert error.status == 400
    assert "folded" in str(error)


def test_a_space_or_tab_in_a_body_or_a_value_is_no_fold() -> None:
    post = b"POST / HTTP/1.1\r\nHost: adapter\r\nX-A: 1 \t2\r\nContent-Length: 4\r\n\r\n\n \n\t"
    read = events(post + GOOD)
    assert kinds(read) == A_BODY_THEN_GOOD
    assert isinstance(read[0], RequestHead) and (b"x-a", b"1 \t2") in read[0].headers
    folded = GOOD.replace(b"\r\n\r\n", b"\r\n\tX-B: 2\r\n\r\n")  # onto Host
    assert refusal(post + folded).status == 400


def test_upgrade_is_dropped_and_every_other_header_kept_as_sent() -> None:
    head = (
        b"GET /healthz HTTP/1.1\r\nHost: adapter\r\nConnection: Upgrade, HTTP2-Settings\r\n"
        b"UPGRADE: h2c\r\nHTTP2-Settings: AAMAAABk\r\nupgrade: websocket\r\n\r\n"
    )
    [request, *_] = events(head)
    assert request == RequestHead(
        b"GET",
        b"/healthz",
        b"1.1",
        [
            (b"host", b"adapter"),
            (b"connection", b"Upgrade, HTTP2-Settings"),
            (b"http2-settings", b"AAMAAABk"),
        ],
    )


def test_a_body_of_known_length_comes_as_it_arrives_never_past_its_end() -> None:
    connection = connection_of(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123")
    assert isinstance(connection.next_event(), RequestHead)
    assert connection.next_event() == BodyData(b"0123")
    assert connection.next_event() is Signal.NEED_DATA
    connection.receive_data(b"456789" + GOOD)
    assert connection.next_event() == BodyData(b"456789")
    assert connection.next_event() is Signal.BODY_END
    # The next request waits for this one's response.
    assert connection.next_event() is Signal.PAUSED
    connection.respond(204, [])
    connection.end()
    connection.start_next_cycle()
    assert isinstance(connection.next_event(), RequestHead)


def test_a_chunked_body_is_read_chunk_by_chunk_with_its_extensions_and_trailers() -> None:
    head = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n"
    body = b"3;name=value\r\nabc\r\nA \r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n"
    connection = connection_of()
    read: list[Event] = []
    for byte in range(len(head + body)):  # a byte at a time: every split point
        connection.receive_data((head + body)[byte : byte + 1])
        while (event := connection.next_event()) is not Signal.NEED_DATA:
            read.append(event)
    data = b"".join(event.data for event in read if isinstance(event, BodyData))
    assert data == b"abc0123456789"
    assert read[-1] is Signal.BODY_END
    assert kinds(read)[0] is RequestHead


@pytest.mark.parametrize(
    "body",
    [b"x\r\n", b"3\r\nabcd\r\n0\r\n\r\n", b"3\r\nabc\r\n0\r\nno field\r\n\r\n", b"3" * 5000],
)
def test_a_broken_chunked_body_is_a_400(body: bytes) -> None:
    head = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
    assert refusal(head + body).status == 400


def test_the_client_s_close_is_closed_between_requests_and_a_400_within_one() -> None:
    assert kinds(events(GOOD + b"")) == [RequestHead, Signal.BODY_END, Signal.NEED_DATA]
    connection = connection_of()
    connection.receive_data(b"")
    assert connection.next_event() is Signal.CLOSED
    for cut in (GOOD[:10], b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nab"):
        connection = connection_of(cut)
        connection.receive_data(b"")
        with pytest.raises(RequestError):
            while connection.next_event() is not Signal.NEED_DATA:
                pass


def test_after_the_connection_s_last_request_nothing_more_is_read() -> None:
    connection = connection_of()
    post = b"POST / HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}"
    connection.receive_data(post + b"\r\nGET / HTTP/1.1\r\n")
    assert kinds([connection.next_event() for _ in range(3)]) == [
        RequestHead,
        BodyData,
        Signal.BODY_END,
    ]
    connection.receive_data(b"x" * 100_000)
    assert connection.next_event() is Signal.NEED_DATA  # where h11 raises
    head = connection.respond(200, [(b"content-length", b"0")])
    assert head.endswith(b"\r\nConnection: close\r\n\r\n")
    connection.end()
    assert not connection.reusable


def test_an_expected_continue_is_owed_until_the_body_comes_or_a_response_begins() -> None:
    expecting = b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 2\r\n\r\n"
    connection = connection_of(expecting)
    connection.next_event()
    assert connection.waiting_for_continue
    assert connection.respond(100, []) == b"HTTP/1.1 100 Continue\r\n\r\n"
    assert not connection.waiting_for_continue
    connection = connection_of(expecting + b"{")
    connection.next_event()
    assert connection.next_event() == BodyData(b"{")
    assert not connection.waiting_for_continue
    assert not connection_of(expecting.replace(b"1.1", b"1.0")).waiting_for_continue


def answered(request: bytes, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> bytes:
    connection = connection_of(request)
    while connection.next_event() is not Signal.BODY_END:
        pass
    return connection.respond(status, headers) + connection.body(body) + connection.end()


def test_a_response_of_known_length_is_written_as_given_with_its_reason() -> None:
    written = answered(GOOD, 200, [(b"content-length", b"2"), (b"x-a", b"b")], b"{}")
    assert written == b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nx-a: b\r\n\r\n{}"


@pytest.mark.parametrize(
    ("status", "line"),
    [
        (200, b"HTTP/1.1 200 OK\r\n"),
        (408, b"HTTP/1.1 408 Request Timeout\r\n"),
        (505, b"HTTP/1.1 505 HTTP Version Not Supported\r\n"),
        (599, b"HTTP/1.1 599 \r\n"),  # no phrase known: none made up
    ],
)
def test_every_status_line_carries_its_reason_phrase(status: int, line: bytes) -> None:
    assert answered(GOOD, status, [(b"content-length", b"0")], b"").startswith(line)


def test_a_response_of_unknown_length_goes_chunked_to_http_1_1_and_to_the_close_to_1_0() -> None:
    chunked = answered(GOOD, 200, [], b"abc")
    assert chunked == (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
    )
    to_close = answered(b"GET / HTTP/1.0\r\n\r\n", 200, [], b"abc")
    assert to_close == b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nabc"


def test_a_head_request_or_a_204_has_no_body() -> None:
    head = GOOD.replace(b"GET", b"HEAD")
    assert answered(head, 200, [(b"content-length", b"7")], b"").endswith(b"\r\n\r\n")
    with pytest.raises(ResponseError):
        answered(head, 200, [(b"content-length", b"7")], b"abcdefg")
    with pytest.raises(ResponseError):
        answered(GOOD, 204, [], b"a")


def test_a_client_s_close_is_said_back_and_ends_the_connection() -> None:
    closing = GOOD.replace(b"\r\n\r\n", b"\r\nConnection: keep-alive, Close\r\n\r\n")
    connection = connection_of(closing + GOOD)
    connection.next_event()
    assert connection.next_event() is Signal.BODY_END
    assert connection.next_event() is Signal.NEED_DATA  # what follows is never read
    head = connection.respond(200, [(b"content-length", b"0"), (b"connection", b"keep-alive")])
    assert head.endswith(b"\r\nConnection: close\r\n\r\n")
    assert b"keep-alive" not in head
    connection.end()
    assert not connection.reusable


def test_a_response_that_says_close_ends_the_connection_and_drops_a_pipelined_request() -> None:
    connection = connection_of(GOOD + GOOD)
    connection.next_event()
    connection.next_event()
    assert connection.next_event() is Signal.PAUSED
    connection.respond(413, [(b"content-length", b"0"), (b"connection", b"close")])
    connection.end()
    assert not connection.reusable
    assert connection.next_event() is Signal.NEED_DATA


def test_a_body_against_its_framing_is_the_app_s_error() -> None:
    connection = connection_of(GOOD)
    connection.next_event()
    connection.respond(200, [(b"content-length", b"2")])
    with pytest.raises(ResponseError):
        connection.body(b"abc")
    with pytest.raises(ResponseError):
        connection.end()
    with pytest.raises(ResponseError):
        connection.respond(200, [])


@pytest.mark.parametrize(
    "field",
    [
        (b"x-a", b"b\r\nSet-Cookie: c"),
        (b"x-a", b"b\nSet-Cookie: c"),
        (b"x-a", b"b\rc"),
        (b"x a", b"b"),
        (b"x-a", b"b\x00"),
    ],
)
def test_a_header_field_that_could_end_its_line_is_never_written(
    field: tuple[bytes, bytes],
) -> None:
    connection = connection_of(GOOD)
    connection.next_event()
    with pytest.raises(ResponseError):
        connection.respond(200, [field])
