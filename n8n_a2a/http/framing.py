"""What a request must be for the adapter to read it: HTTP/1.1 (or 1.0), its head in CRLF
lines, its body framed one way. Sans-I/O, on h11's public API.

hypercorn's HTTP/1.1 protocol learns of each request from an h11 connection; the seam
gives it an `HTTP11Connection`. What it refuses, hypercorn answers with the status and
`Connection: close`, then closes the connection, as it does every request h11 cannot read:

- Any version but HTTP/1.0 and 1.1 (505), the HTTP/2 preface `PRI * HTTP/2.0` with them:
  hypercorn would switch the connection to HTTP/2, whose flow control holds responses
  outside every timer of the connection (connection.py, timer.py).
- A head with a line that ends in a bare LF (400). h11 reads one as a line end; a proxy
  in front that does not sees other headers, and frames the next request otherwise.
- A head line, after the request line, that begins with SP or HTAB (400): obs-fold,
  which RFC 9112 §5.2 has a server reject or replace with SP. h11 joins it to the line
  above, so `X-A: 1` then ` Transfer-Encoding: chunked` is one X-A header to it, and no
  Transfer-Encoding to the refusal below; a proxy in front may read that line otherwise.
- Content-Length with Transfer-Encoding (400). RFC 9112 §6.3 lets a server read such a
  body as chunked, and asks it to close after; a proxy that framed it by the length would
  take the rest for the next request: request smuggling material either way.

And the `Upgrade` header is dropped (RFC 9110 §7.8 lets a server ignore it): hypercorn
would switch to HTTP/2 on `h2c` and to a WebSocket on `websocket`. The request is
answered as HTTP/1.1.

Once the last request of a connection is read (HTTP/1.0, or an answer that says
`Connection: close`), what the client sends after it is dropped unread (RFC 9112 §9.6):
h11 raises on it, and hypercorn then answered 400 instead (an HTTP/1.0 POST's stray
CRLF) or closed the connection under the answer being written (a request pipelined
behind one answered before its body was read).

The checks read the request's head only, once per request: never its body.

And every status line the adapter writes carries its reason phrase (`HTTP/1.1 413 Request
Entity Too Large`): hypercorn gives h11 none, h11 then writes `HTTP/1.1 413 ` and a client
that shows the line (httpx: `Client error '413 '`) shows no words for it.
"""

from __future__ import annotations

import re
from http import HTTPStatus

import h11

#: Where h11 ends a request's head (h11/_receivebuffer.py): a line end, then an empty line.
_HEAD_END = re.compile(rb"\n\r?\n")
_VERSIONS = (b"1.1", b"1.0")


class HTTP11Connection(h11.Connection):
    """h11's server side, with the requests it reads held to the rules above."""

    def __init__(self, max_incomplete_event_size: int) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=max_incomplete_event_size)

    def send_with_data_passthrough(self, event: h11.Event) -> list[bytes] | None:
        # (h11's `send` writes through this one too.)
        if isinstance(event, h11.Response | h11.InformationalResponse) and not event.reason:
            event = with_reason(event)
        return super().send_with_data_passthrough(event)

    def receive_data(self, data: bytes) -> None:
        if data and self.their_state is h11.MUST_CLOSE:
            return  # after the connection's last request: never read
        super().receive_data(data)

    def next_event(self) -> h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]:
        state = self.their_state
        if state is h11.MUST_CLOSE:
            return h11.NEED_DATA  # (not what came with the last request either)
        if state is not h11.IDLE:
            return super().next_event()
        # Waiting for a request: what is buffered begins with its head, as h11 takes it.
        buffered, _ = self.trailing_data
        event = super().next_event()
        if isinstance(event, h11.Request):
            return accepted(event, buffered)
        return event


def accepted(request: h11.Request, buffered: bytes) -> h11.Request:
    """`request` as the app may see it, read from the bytes `buffered` begin with; raises
    RemoteProtocolError, with the status to answer, for a request refused.

    Its headers are judged in the raw head, in C: each header's name begins a line and
    ends at its colon (h11 allows no space between), so "\nupgrade:" in the head is an
    Upgrade header and nothing else is. (Reading h11's parsed headers costs many times
    more: they are a Python sequence.)"""
    if request.http_version not in _VERSIONS:
        raise h11.RemoteProtocolError(
            f"HTTP/{request.http_version.decode()} is not served here: HTTP/1.1 only",
            error_status_hint=505,
        )
    end = _HEAD_END.search(buffered)  # (there is one: h11 read a request)
    head = buffered[: end.end()] if end else buffered
    if head.count(b"\n") != head.count(b"\r\n"):
        raise h11.RemoteProtocolError("a line of the request's head ends in a bare LF")
    # (Every line ends in CRLF now, so each line after the first starts after an LF. The
    # head ends at its empty line: no byte of the body is looked at.)
    if b"\n " in head or b"\n\t" in head:
        raise h11.RemoteProtocolError("a line of the request's head is folded (obs-fold)")
    head = head.lower()
    if b"\ncontent-length:" in head and b"\ntransfer-encoding:" in head:
        raise h11.RemoteProtocolError("Content-Length with Transfer-Encoding")
    if b"\nupgrade:" not in head:
        return request
    return h11.Request(
        method=request.method,
        target=request.target,
        headers=[(n, v) for n, v in request.headers.raw_items() if n.lower() != b"upgrade"],
        http_version=request.http_version,
    )


def with_reason(
    response: h11.Response | h11.InformationalResponse,
) -> h11.Response | h11.InformationalResponse:
    """The response with its status's reason phrase (RFC 9110's, as http.HTTPStatus has
    them); a status without one keeps none."""
    try:
        reason = HTTPStatus(response.status_code).phrase
    except ValueError:
        return response
    return type(response)(
        status_code=response.status_code,
        headers=response.headers,
        http_version=response.http_version,
        reason=reason,
    )
