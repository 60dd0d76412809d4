"""The requests an HTTP11Connection lets through, read with h11 as hypercorn reads them."""

from __future__ import annotations

import h11
import pytest

from n8n_a2a.http.framing import HTTP11Connection

GOOD = b"GET /healthz HTTP/1.1\r\nHost: adapter\r\n\r\n"


def events(data: bytes) -> list[h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]]:
    """What the connection reads of `data` until it needs more or must close, answering
    each request."""
    connection = HTTP11Connection(max_incomplete_event_size=16 * 1024)
    connection.receive_data(data)
    found: list[h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]] = []
    while True:
        event = connection.next_event()
        found.append(event)
        if event is h11.NEED_DATA:
            return found
        if isinstance(event, h11.EndOfMessage):
            connection.send(h11.Response(status_code=200, headers=[("Content-Length", "0")]))
            connection.send(h11.EndOfMessage())
            if connection.our_state is not h11.DONE:  # HTTP/1.0: the connection closes
                return found
            connection.start_next_cycle()


def refusal(data: bytes) -> h11.RemoteProtocolError:
    with pytest.raises(h11.RemoteProtocolError) as refused:
        events(data)
    return refused.value


def test_a_well_framed_request_is_read_as_h11_reads_it() -> None:
    connection = HTTP11Connection(max_incomplete_event_size=16 * 1024)
    plain = h11.Connection(h11.SERVER)
    request = GOOD.replace(b"\r\n\r\n", b"\r\nX-Trace: a\r\n\r\n")
    for each in (connection, plain):
        each.receive_data(request)
    assert connection.next_event() == plain.next_event()


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
    assert error.error_status_hint == 400
    assert "bare LF" in str(error)


def test_a_bare_lf_in_a_body_is_no_head_and_the_next_head_is_judged_alone() -> None:
    post = b"POST / HTTP/1.1\r\nHost: adapter\r\nContent-Length: 3\r\n\r\na\nb"
    read = events(post + GOOD)
    assert [type(event) for event in read] == [
        h11.Request,
        h11.Data,
        h11.EndOfMessage,
        h11.Request,
        h11.EndOfMessage,
        type(h11.NEED_DATA),
    ]
    assert refusal(post + GOOD.replace(b"\r\nHost", b"\nHost")).error_status_hint == 400


@pytest.mark.parametrize(
    "request_line",
    [b"PRI * HTTP/2.0", b"GET /healthz HTTP/2.0", b"GET /healthz HTTP/3.0", b"GET / HTTP/0.9"],
)
def test_any_version_but_1_0_and_1_1_is_a_505(request_line: bytes) -> None:
    error = refusal(request_line + b"\r\nHost: adapter\r\n\r\n")
    assert error.error_status_hint == 505
    assert "HTTP/1.1 only" in str(error)


def test_the_h2_preface_is_a_505_before_its_frames_are_read() -> None:
    assert refusal(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04").error_status_hint == 505


def test_http_1_0_is_read() -> None:
    [request, end] = events(b"GET /healthz HTTP/1.0\r\n\r\n")
    assert isinstance(request, h11.Request) and request.http_version == b"1.0"
    assert isinstance(end, h11.EndOfMessage)


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
    assert error.error_status_hint == 400
    assert "Content-Length with Transfer-Encoding" in str(error)


@pytest.mark.parametrize(
    "folded",
    [
        b"X-A: 1\r\n Transfer-Encoding: chunked\r\n",  # the review's: h11 saw no TE
        b"X-A: 1\r\n\tTransfer-Encoding: chunked\r\n",
        b"X-A: 1\r\n  \t more of X-A\r\n",  # a fold with no framing in it, too
    ],
    ids=["sp-transfer-encoding", "htab-transfer-encoding", "plain-fold"],
)
def test_a_folded_head_line_is_a_400(folded: bytes) -> None:
    head = b"POST / HTTP/1.1\r\nHost: adapter\r\nContent-Length: 5\r\n" + folded + b"\r\n"
    assert h11_alone_reads(head + b"0\r\n\r\n")  # what went through before
    error = refusal(head + b"0\r\n\r\n")
    assert error.error_status_hint == 400
    assert "folded" in str(error)


def h11_alone_reads(data: bytes) -> bool:
    """Whether h11, with none of the checks, reads a request of `data`."""
    plain = h11.Connection(h11.SERVER)
    plain.receive_data(data)
    return isinstance(plain.next_event(), h11.Request)


def test_a_space_or_tab_in_a_body_or_a_value_is_no_fold() -> None:
    post = b"POST / HTTP/1.1\r\nHost: adapter\r\nX-A: 1 \t2\r\nContent-Length: 4\r\n\r\n\n \n\t"
    read = events(post + GOOD)
    assert [type(event) for event in read] == [
        h11.Request,
        h11.Data,
        h11.EndOfMessage,
        h11.Request,
        h11.EndOfMessage,
        type(h11.NEED_DATA),
    ]
    folded = GOOD.replace(b"\r\n\r\n", b"\r\n\tX-B: 2\r\n\r\n")  # onto Host
    assert refusal(post + folded).error_status_hint == 400


def test_upgrade_is_dropped_and_every_other_header_kept_as_sent() -> None:
    head = (
        b"GET /healthz HTTP/1.1\r\nHost: adapter\r\nConnection: Upgrade, HTTP2-Settings\r\n"
        b"UPGRADE: h2c\r\nHTTP2-Settings: AAMAAABk\r\nupgrade: websocket\r\n\r\n"
    )
    [request, *_] = events(head)
    assert isinstance(request, h11.Request)
    assert request.headers.raw_items() == [
        (b"Host", b"adapter"),
        (b"Connection", b"Upgrade, HTTP2-Settings"),
        (b"HTTP2-Settings", b"AAMAAABk"),
    ]
    assert (request.method, request.target, request.http_version) == (b"GET", b"/healthz", b"1.1")


def test_after_the_connection_s_last_request_nothing_more_is_read() -> None:
    connection = HTTP11Connection(max_incomplete_event_size=16 * 1024)
    post = b"POST / HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}"
    connection.receive_data(post + b"\r\nGET / HTTP/1.1\r\n")
    assert [type(connection.next_event()) for _ in range(3)] == [
        h11.Request,
        h11.Data,
        h11.EndOfMessage,
    ]
    assert connection.their_state is h11.MUST_CLOSE  # HTTP/1.0: the connection's last
    connection.receive_data(b"x" * 100_000)
    assert connection.next_event() is h11.NEED_DATA  # where h11 raises
    assert connection.trailing_data == (b"\r\nGET / HTTP/1.1\r\n", False)  # nothing kept
    connection.send(h11.Response(status_code=200, headers=[("Content-Length", "0")]))
    connection.send(h11.EndOfMessage())
    assert connection.our_state is h11.MUST_CLOSE


@pytest.mark.parametrize(
    ("status", "line"),
    [
        (200, b"HTTP/1.1 200 OK\r\n"),
        (408, b"HTTP/1.1 408 Request Timeout\r\n"),
        (505, b"HTTP/1.1 505 HTTP Version Not Supported\r\n"),
        (599, b"HTTP/1.1 599 \r\n"),  # no phrase known: none made up
    ],
)
def test_a_status_line_without_a_reason_gets_its_phrase(status: int, line: bytes) -> None:
    connection = HTTP11Connection(max_incomplete_event_size=16 * 1024)
    connection.receive_data(GOOD)
    assert isinstance(connection.next_event(), h11.Request)
    written = connection.send(h11.Response(status_code=status, headers=[("Content-Length", "0")]))
    assert written.startswith(line)


def test_a_reason_given_is_kept() -> None:
    connection = HTTP11Connection(max_incomplete_event_size=16 * 1024)
    connection.receive_data(GOOD)
    connection.next_event()
    response = h11.Response(status_code=200, headers=[("Content-Length", "0")], reason="Fine")
    assert connection.send(response).startswith(b"HTTP/1.1 200 Fine\r\n")
