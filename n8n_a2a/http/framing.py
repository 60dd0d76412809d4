"""HTTP/1.1 as the adapter serves it, without I/O (RFC 9112): requests read from their
bytes as they come, each response's head and body framed for the bytes to send.

hypercorn's HTTP/1.1 protocol reads requests with h11, and h11 is general: a Python
sequence of headers validated field by field at every event made, a state machine for
both roles fired per event. Measured with callgrind, one request and its response cost
0.62 million instructions on h11, a sixth of a whole blocking send; this module, which
reads only what a server must, far less (the serving protocol is protocol.py). It
reads a request as strictly as h11 does: a request line of a token, a target of visible
characters and `HTTP/d.d`; header fields of a token, a colon and a value without
control characters; a Host for HTTP/1.1 (one); one Content-Length (several values must
agree) or Transfer-Encoding (chunked only: anything else is a 501); an `Expect:
100-continue` honoured; a head at most `max_head` bytes until it is whole (431).

And stricter, for what a proxy in front may read otherwise; each refusal is answered
with its status and `Connection: close`, then the connection closes:

- Any version but HTTP/1.0 and 1.1 (505), the HTTP/2 preface `PRI * HTTP/2.0` with them.
- A head with a line that ends in a bare LF (400). h11 reads one as a line end; a proxy
  in front that does not sees other headers, and frames the next request otherwise.
- A head line, after the request line, that begins with SP or HTAB (400): obs-fold,
  which RFC 9112 §5.2 has a server reject or replace with SP; a proxy may read
  ` Transfer-Encoding: chunked` after `X-A: 1` as its own header.
- Content-Length with Transfer-Encoding (400). RFC 9112 §6.3 lets a server read such a
  body as chunked, and asks it to close after; a proxy that framed it by the length would
  take the rest for the next request: request smuggling material either way.

And the `Upgrade` header is dropped (RFC 9110 §7.8 lets a server ignore it): nothing here
switches protocols. The request is answered as HTTP/1.1.

Once the last request of a connection is read (HTTP/1.0, or `Connection: close` either
way), what the client sends after it is dropped unread (RFC 9112 §9.6). A request
pipelined behind one still being answered waits (PAUSED) until the answer is sent.

Every status line written carries its reason phrase (`HTTP/1.1 413 Request Entity Too
Large`): a client that shows the line (httpx: `Client error '413 '`) shows words for it.
A response of unknown length goes chunked to HTTP/1.1, and to the close to HTTP/1.0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .errors import RequestError, ResponseError
from .fields import FIELD_LINES, Framing, request_fields, request_line, response_head, without

_HEX_DIGITS = b"0123456789abcdefABCDEF"
_VERSIONS = (b"1.1", b"1.0")
#: The most a chunk's size line (its extensions with it) or a trailer line may take.
MAX_CHUNK_LINE_BYTES = 4096
#: Statuses whose response has no body, whatever its headers say (RFC 9110 §6.4.1).
NO_BODY_STATUSES = frozenset({204, 304})


class Signal:
    """What `next_event` found that carries nothing: one of the four below, each told
    apart by `is`. (Not an Enum: its class costs the start more than it gives.)"""

    __slots__ = ("name",)

    NEED_DATA: ClassVar[Signal]  # nothing whole yet: receive more
    PAUSED: ClassVar[Signal]  # the next request waits until this one's response is sent
    BODY_END: ClassVar[Signal]  # the request's body is read whole
    CLOSED: ClassVar[Signal]  # the client closed its side between requests

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Signal.{self.name}"


Signal.NEED_DATA = Signal("NEED_DATA")
Signal.PAUSED = Signal("PAUSED")
Signal.BODY_END = Signal("BODY_END")
Signal.CLOSED = Signal("CLOSED")


@dataclass(frozen=True, slots=True)
class RequestHead:
    """A request as read: header names lower-cased, in their order, Upgrade dropped."""

    method: bytes
    target: bytes
    http_version: bytes
    headers: list[tuple[bytes, bytes]]


class BodyData:
    """Bytes of the request's body, as they came. (A plain class, as Signal.)"""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BodyData) and other.data == self.data

    def __hash__(self) -> int:
        return hash(self.data)

    def __repr__(self) -> str:
        return f"BodyData({self.data!r})"


class _Reading:
    """Where a request's reading is (plain numbers: an Enum class costs the start more)."""

    HEAD = 0
    LENGTH = 1  # a body of known length
    CHUNK_SIZE = 2
    CHUNK_DATA = 3
    CHUNK_END = 4  # the CRLF after a chunk's data
    TRAILERS = 5
    END = 6  # the body is read whole, which the next event says
    DONE = 7  # the request is read; the next waits for its response's end
    LAST = 8  # the connection's last request is read: nothing more is


class _Writing:
    """Where a response's writing is."""

    HEAD = 0
    LENGTH = 1
    CHUNKED = 2
    TO_CLOSE = 3
    DONE = 4


class HTTP11Connection:
    """The server side of one connection: `receive_data` what arrives (b"" at its end),
    then `next_event` until NEED_DATA; `respond`, `body` and `end` give the bytes of
    a response; `start_next_cycle` once both are done and `reusable`."""

    def __init__(self, max_head: int) -> None:
        self._max_head = max_head
        self._buffer = b""
        self._eof = False
        self._reading = _Reading.HEAD
        self._writing = _Writing.HEAD
        self._left = 0  # bytes still to come of the body, or of the chunk, or to write
        self._keep_alive = True
        self._method = b""
        self._version = b"1.1"
        self.waiting_for_continue = False

    @property
    def answering(self) -> bool:
        """Whether a response may still begin (none has yet)."""
        return self._writing == _Writing.HEAD

    @property
    def reusable(self) -> bool:
        """Both the request and its response are whole, and the connection carries more."""
        return (
            self._keep_alive and self._reading == _Reading.DONE and self._writing == _Writing.DONE
        )

    def receive_data(self, data: bytes) -> None:
        if not data:
            self._eof = True
        elif self._reading != _Reading.LAST:
            self._buffer = self._buffer + data if self._buffer else data

    def start_next_cycle(self) -> None:
        self._method = b""
        self._reading = _Reading.HEAD
        self._writing = _Writing.HEAD

    def next_event(self) -> RequestHead | BodyData | Signal:
        """The next thing the bytes received make; raises RequestError for a request
        the adapter will not read."""
        reading = self._reading
        if reading == _Reading.HEAD:
            return self._head()
        if reading == _Reading.LENGTH:
            return self._in_length()
        if reading == _Reading.END:
            self._end_request()
            return Signal.BODY_END
        if reading == _Reading.DONE:
            return Signal.PAUSED if self._buffer else self._at_rest()
        if reading == _Reading.LAST:
            return Signal.NEED_DATA
        return self._in_chunks()

    def next_event_is_body_end(self) -> bool:
        """Whether the body's piece just read was its last: its end is then taken with it,
        and no BODY_END follows."""
        if self._reading != _Reading.END:
            return False
        self._end_request()
        return True

    def _at_rest(self) -> Signal:
        return Signal.CLOSED if self._eof else Signal.NEED_DATA

    def _head(self) -> RequestHead | Signal:
        buffer = self._buffer
        if not buffer:
            return self._at_rest()
        if buffer[0] < 0x21:  # no request line begins so (TLS, a stray CRLF): h11's check
            raise RequestError("illegal request line")
        start, end = _head_end(buffer)
        if start < 0:
            if len(buffer) > self._max_head:
                raise RequestError("the request's head is too long", 431)
            if self._eof:
                raise RequestError("the client closed the connection within a request's head")
            return Signal.NEED_DATA
        self._buffer = buffer[end:]
        whole = buffer[:end]
        if whole.count(b"\n") != whole.count(b"\r\n"):
            raise RequestError("a line of the request's head ends in a bare LF")
        return self._read_head(whole[: start + 1])

    def _read_head(self, head: bytes) -> RequestHead:
        line_end = head.find(b"\r\n")
        method, target, version = request_line(head[:line_end])
        if version not in _VERSIONS:
            raise RequestError(f"HTTP/{version.decode()} is not served here: HTTP/1.1 only", 505)
        headers = request_fields(head[line_end + 2 :])
        framing = Framing.of(headers, version)
        if version == b"1.1" and framing.hosts != 1:
            raise RequestError("a request of HTTP/1.1 names one Host")
        self._method, self._version = method, version
        self._keep_alive = framing.keep_alive
        self.waiting_for_continue = framing.expects_continue
        self._begin_body(framing)
        return RequestHead(method, target, version, headers)

    def _begin_body(self, framing: Framing) -> None:
        if framing.chunked:
            self._reading = _Reading.CHUNK_SIZE
        elif framing.length:
            self._reading, self._left = _Reading.LENGTH, framing.length
        else:
            self._reading = _Reading.END

    def _end_request(self) -> None:
        self.waiting_for_continue = False
        if self._keep_alive:
            self._reading = _Reading.DONE
        else:
            self._reading, self._buffer = _Reading.LAST, b""

    def _body_bytes(self) -> bytes | None:
        """What is buffered of the body; None while nothing is (a client gone within it
        raises)."""
        if not self._buffer:
            if self._eof:
                raise RequestError("the client closed the connection within a request's body")
            return None
        self.waiting_for_continue = False
        return self._buffer

    def _in_length(self) -> BodyData | Signal:
        buffer = self._body_bytes()
        if buffer is None:
            return Signal.NEED_DATA
        left = self._left
        if len(buffer) < left:
            self._buffer, self._left = b"", left - len(buffer)
            return BodyData(buffer)
        self._buffer, self._left = buffer[left:], 0
        self._reading = _Reading.END
        return BodyData(buffer if len(buffer) == left else buffer[:left])

    def _in_chunks(self) -> BodyData | Signal:
        while True:
            if self._reading == _Reading.CHUNK_DATA:
                return self._chunk_data()
            line = self._line()
            if line is None:
                return Signal.NEED_DATA
            if self._chunk_line(line):
                return Signal.BODY_END

    def _chunk_data(self) -> BodyData | Signal:
        buffer = self._body_bytes()
        if buffer is None:
            return Signal.NEED_DATA
        piece = buffer[: self._left]
        self._buffer = buffer[len(piece) :]
        self._left -= len(piece)
        if not self._left:
            self._reading = _Reading.CHUNK_END
        return BodyData(piece)

    def _line(self) -> bytes | None:
        """The next CRLF line of a chunked body, None until it is whole."""
        buffer = self._buffer
        end = buffer.find(b"\r\n")
        if end < 0:
            if len(buffer) > MAX_CHUNK_LINE_BYTES:
                raise RequestError("a line of the request's chunked body is too long")
            if self._eof:
                raise RequestError("the client closed the connection within a request's body")
            return None
        self._buffer = buffer[end + 2 :]
        return buffer[:end]

    def _chunk_line(self, line: bytes) -> bool:
        """Reads a size line, the CRLF after a chunk or a trailer; whether the body ended."""
        if self._reading == _Reading.CHUNK_SIZE:
            size = line.split(b";", 1)[0].rstrip(b" \t")  # (extensions ignored)
            if not 0 < len(size) <= 20 or size.strip(_HEX_DIGITS):
                raise RequestError("a chunk's size line is no size")
            self._left = int(size, 16)
            self._reading = _Reading.CHUNK_DATA if self._left else _Reading.TRAILERS
        elif self._reading == _Reading.CHUNK_END:
            if line:
                raise RequestError("a chunk's data runs past its size")
            self._reading = _Reading.CHUNK_SIZE
        elif not line:
            self._end_request()
            return True
        elif FIELD_LINES.fullmatch(line + b"\r\n") is None:
            raise RequestError("a trailer of the request is no header field")
        return False

    def respond(self, status: int, headers: list[tuple[bytes, bytes]]) -> bytes:
        """The head of the response (status 100 to 599; a 1xx is interim)."""
        if self._writing != _Writing.HEAD:
            raise ResponseError("a response has begun already")
        self.waiting_for_continue = False
        if status >= 200:
            headers = self._framed(status, headers)
        return response_head(status, headers)

    def _framed(self, status: int, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        """The response's headers as sent, its body's framing chosen from them."""
        framing = Framing.of(headers, b"1.1")
        self._writing, self._left = _Writing.LENGTH, 0
        if status in NO_BODY_STATUSES or self._method == b"HEAD":
            pass
        elif framing.chunked:
            self._writing = _Writing.CHUNKED
        elif framing.length is not None:
            self._left = framing.length
        elif self._version == b"1.1" and self._reading != _Reading.HEAD:
            headers = [*without(headers, b"content-length"), (b"Transfer-Encoding", b"chunked")]
            self._writing = _Writing.CHUNKED
        else:  # to an HTTP/1.0 client, or one whose request was refused: to the close
            self._writing = _Writing.TO_CLOSE
        if self._writing == _Writing.TO_CLOSE or not framing.keep_alive:
            self._no_more_requests()
        if not self._keep_alive and b"close" not in framing.connection:
            tokens = sorted({*framing.connection, b"close"} - {b"keep-alive"})
            headers = [*without(headers, b"connection"), (b"Connection", b", ".join(tokens))]
        return headers

    def _no_more_requests(self) -> None:
        """This request is the connection's last: what comes after it is never read."""
        self._keep_alive = False
        if self._reading == _Reading.DONE:
            self._reading, self._buffer = _Reading.LAST, b""

    def body(self, data: bytes | bytearray | memoryview) -> bytes | bytearray | memoryview:
        """The bytes that carry `data` of the response's body."""
        writing = self._writing
        if writing == _Writing.CHUNKED:
            return b"".join((b"%x\r\n" % len(data), data, b"\r\n")) if data else b""
        if writing == _Writing.LENGTH:
            if len(data) > self._left:
                raise ResponseError("Too much data for declared Content-Length")
            self._left -= len(data)
            return data
        if writing == _Writing.TO_CLOSE:
            return data
        raise ResponseError("no response body is being written")

    def end(self) -> bytes:
        """The bytes that end the response's body."""
        writing = self._writing
        if writing == _Writing.LENGTH and self._left:
            raise ResponseError("Too little data for declared Content-Length")
        if writing in (_Writing.HEAD, _Writing.DONE):
            raise ResponseError("no response body is being written")
        self._writing = _Writing.DONE
        return b"0\r\n\r\n" if writing == _Writing.CHUNKED else b""


def _head_end(buffer: bytes) -> tuple[int, int]:
    """Where a request's head ends: a line end, then an empty line (its LF, and the end
    of the empty line); (-1, -1) before it has. (bytes.find: a regular expression
    compiled costs the start more.)"""
    crlf, lf = buffer.find(b"\n\r\n"), buffer.find(b"\n\n")
    if crlf < 0 or 0 <= lf < crlf:
        return (lf, lf + 2) if lf >= 0 else (-1, -1)
    return crlf, crlf + 3
