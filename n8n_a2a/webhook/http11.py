"""HTTP/1.1 as the webhook client (and the push POST, push/client.py) speaks it, without
I/O (RFC 9112): a request's head written, a reply read from its bytes as they come.

The client POSTs and reads what comes back, nothing more: no pipelining, no upgrade, no
request it does not frame itself. That much of HTTP/1.1 is this module; the rest of what
h11 (and httpcore over it) handles is for requests the client never sends, and a call
paid for it: measured with callgrind, 0.57 million instructions a POST on h11, 1.0 on
httpcore, 0.15 on this (its socket calls included), a sixth of a whole send.

Read as strictly as h11 reads a reply: a status line of HTTP/1.0 or 1.1; header fields
of a token, a colon and a value without control characters (obs-fold unfolded, as a
client must); the body framed by Transfer-Encoding (chunked only, anything else refused),
else Content-Length (all its values one number), else the close; none after a 1xx, 204
or 304, a 1xx skipped as interim, a 101 refused (nothing asked to switch). Bytes past a
reply's end, HTTP/1.0 and `Connection: close` make a connection that is not reused.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import quote

from .errors import LocalProtocolError, RemoteProtocolError

#: The most a reply's head may take (httpcore's bound), and its trailer section too.
MAX_HEAD_BYTES = 100 * 1024
#: The most a chunk's size line may take, extensions and all.
MAX_CHUNK_LINE_BYTES = 4096

_TOKEN = re.compile(rb"[-!#$%&'*+.^_`|~0-9A-Za-z]+")
# A value as written: visible characters and obs-text, spaces and tabs only within.
_VALUE = re.compile(rb"(?:[!-~\x80-\xff](?:[ \t!-~\x80-\xff]*[!-~\x80-\xff])?)?")
# A value as read: anything but a control character other than tab (OWS stripped after).
_FIELD_LINE = re.compile(rb"([-!#$%&'*+.^_`|~0-9A-Za-z]+):([^\x00-\x08\x0a-\x1f\x7f]*)")
_STATUS_LINE = re.compile(rb"HTTP/1\.([01]) ([0-9]{3})(?: [^\x00-\x08\x0a-\x1f\x7f]*)?")
_HEAD_END = re.compile(rb"\r?\n\r?\n")
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")
_NO_BODY = frozenset({204, 304})


# What a path and a query keep as written (the WHATWG URL standard's percent-encode
# sets, as httpx applies them): anything else, every non-ASCII character among them,
# goes as the %XX of its UTF-8.
_PATH_KEEPS = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in '"#<>?`{}')
_QUERY_KEEPS = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in '"#<>')


def request_target(path: str, query: str | None) -> bytes:
    """A URL's path and query as a request line carries them, percent-encoded as httpx
    encoded them; `query` None for a URL without "?" (an empty one keeps its "?")."""
    target = quote(path or "/", safe=_PATH_KEEPS)
    if query is not None:
        target += "?" + quote(query, safe=_QUERY_KEEPS)
    return target.encode("ascii")


def field_lines(fields: Iterable[tuple[bytes, bytes]]) -> bytes:
    """Header fields as a request's head carries them, each checked: a name that is no
    token, or a value with a control character (CR, LF, NUL) or leading or trailing
    space, is refused (LocalProtocolError), so no value can end its line early."""
    lines = []
    for name, value in fields:
        if _TOKEN.fullmatch(name) is None or _VALUE.fullmatch(value) is None:
            raise LocalProtocolError(f"the header field {name!r} cannot be sent as it is")
        lines.append(b"%b: %b\r\n" % (name, value))
    return b"".join(lines)


@dataclass(frozen=True, slots=True)
class ReplyHead:
    """A reply's status and header fields (names lower-cased, in their order)."""

    status: int
    fields: tuple[tuple[bytes, bytes], ...]

    def header(self, name: bytes) -> str:
        """The field `name` (lower-case), its values joined with ", "; "" when there is
        none. UTF-8, or Latin-1 where that fails (as httpx decoded them)."""
        values = [value for key, value in self.fields if key == name]
        joined = b", ".join(values)
        try:
            return joined.decode()
        except UnicodeDecodeError:
            return joined.decode("latin-1")

    def values(self, name: bytes) -> list[bytes]:
        """The field's values, each list element split at its commas, stripped."""
        return [
            item.strip(b" \t")
            for key, value in self.fields
            if key == name
            for item in value.split(b",")
        ]


class _Chunked(enum.Enum):
    """Where a chunked body's reading is: a size line, its data, the CRLF after, trailers."""

    SIZE = enum.auto()
    DATA = enum.auto()
    DATA_END = enum.auto()
    TRAILERS = enum.auto()


class ReplyReader:
    """One reply, read from its bytes: `receive` each piece as it comes, for the body's
    bytes in it; `head` once its head is read; `ended` once its body is, then `reusable`:
    whether the connection may carry another request. `receive_eof` when the connection
    closes. A reply that breaks HTTP/1.1 raises RemoteProtocolError."""

    __slots__ = (
        "_buffer",
        "_chunked",
        "_keep_alive",
        "_left",
        "_read",
        "_step",
        "_trailer_bytes",
        "ended",
        "head",
        "reusable",
    )

    def __init__(self) -> None:
        self.head: ReplyHead | None = None
        self.ended = False
        self.reusable = False
        self._step: Callable[[bytes], bytes] = self._in_head
        self._buffer = b""  # what a head or a line is still missing the rest of
        self._keep_alive = False
        self._left = 0  # bytes of the body (Content-Length) or of the chunk still to come
        self._read = 0
        self._chunked = _Chunked.SIZE
        self._trailer_bytes = 0

    def receive(self, data: bytes) -> bytes:
        """The body's bytes among `data` (b"" for none)."""
        return self._step(data)

    def receive_eof(self) -> None:
        """The connection closed: the end of a body read to the close, else a cut reply."""
        if self.ended:
            return
        if self._step == self._to_close:
            self._end(extra=True)  # a connection that closes is not reused
            return
        if self._step == self._in_head:
            if self._buffer or self._read:
                raise RemoteProtocolError("the server closed the connection within the head")
            raise RemoteProtocolError("Server disconnected without sending a response.")
        if self._step == self._in_length:
            raise RemoteProtocolError(
                "peer closed connection without sending complete message body: "
                f"received {self._read} bytes, expected {self._read + self._left}"
            )
        raise RemoteProtocolError(
            "peer closed connection without sending complete message body: incomplete chunked read"
        )

    def _in_head(self, data: bytes) -> bytes:
        while True:
            buffer = self._buffer + data if self._buffer else data
            found = _HEAD_END.search(buffer, max(0, len(self._buffer) - 3))
            if found is None:
                if len(buffer) > MAX_HEAD_BYTES:
                    raise RemoteProtocolError("the reply's head is longer than 100 KiB")
                self._buffer = buffer
                return b""
            self._buffer = b""
            head, data = buffer[: found.start()], buffer[found.end() :]
            status, keep_alive, fields = _parse_head(head)
            if status == 101:
                raise RemoteProtocolError("the server switched protocols, which nobody asked")
            if status >= 200:
                break
            self._read += len(head)  # an interim reply (100 Continue, 103): the next head
        self.head = ReplyHead(status, fields)
        self._keep_alive = keep_alive
        return self._framed(status, self.head, data)

    def _framed(self, status: int, head: ReplyHead, data: bytes) -> bytes:
        """The step the body's framing calls for, and what it makes of `data`."""
        if status in _NO_BODY:
            self._end(extra=bool(data))
            return b""
        codings = head.values(b"transfer-encoding")
        if codings:
            if [coding.lower() for coding in codings] != [b"chunked"]:
                raise RemoteProtocolError("Only Transfer-Encoding: chunked is supported")
            if head.values(b"content-length"):
                # Both framings: the chunks are read (RFC 9112 6.3), but a connection
                # whose replies two readers could frame apart is not reused.
                self._keep_alive = False
            self._step = self._in_chunks
        elif (length := _content_length(head)) is not None:
            if length == 0:
                self._end(extra=bool(data))
                return b""
            self._left = length
            self._step = self._in_length
        else:
            self._keep_alive = False
            self._step = self._to_close
        return self._step(data) if data else b""

    def _in_length(self, data: bytes) -> bytes:
        left = self._left
        if len(data) < left:
            self._left = left - len(data)
            self._read += len(data)
            return data
        self._read += left
        self._left = 0
        self._end(extra=len(data) > left)
        return data if len(data) == left else data[:left]

    def _to_close(self, data: bytes) -> bytes:
        return data

    def _in_chunks(self, data: bytes) -> bytes:
        buffer = self._buffer + data if self._buffer else data
        pieces = []
        at = 0
        while at < len(buffer) and not self.ended:
            if self._chunked is _Chunked.DATA:
                piece = buffer[at : at + self._left]
                pieces.append(piece)
                at += len(piece)
                self._left -= len(piece)
                if not self._left:
                    self._chunked = _Chunked.DATA_END
                continue
            newline = buffer.find(b"\n", at)
            if newline < 0:
                if len(buffer) - at > MAX_CHUNK_LINE_BYTES:
                    raise RemoteProtocolError("a chunk's size line is longer than 4 KiB")
                break
            line = buffer[at:newline]
            at = newline + 1
            self._chunk_line(line[:-1] if line.endswith(b"\r") else line)
        if self.ended and at < len(buffer):
            self.reusable = False  # bytes past the reply's end: nobody asked for them
        self._buffer = buffer[at:]
        return b"".join(pieces)

    def _chunk_line(self, line: bytes) -> None:
        """A size line, the empty line after a chunk's data, or a trailer (ignored)."""
        if self._chunked is _Chunked.SIZE:
            size = line.split(b";", 1)[0].strip(b" \t")
            if _CHUNK_SIZE.fullmatch(size) is None:
                raise RemoteProtocolError("a chunk's size line is no size", line[:40])
            self._left = int(size, 16)
            self._chunked = _Chunked.DATA if self._left else _Chunked.TRAILERS
        elif self._chunked is _Chunked.DATA_END:
            if line:
                raise RemoteProtocolError("a chunk's data runs past its size")
            self._chunked = _Chunked.SIZE
        elif not line:
            self._end(extra=False)
        else:
            self._trailer_bytes += len(line)
            if self._trailer_bytes > MAX_HEAD_BYTES or _FIELD_LINE.fullmatch(line) is None:
                raise RemoteProtocolError("the reply's trailer section is no header fields")

    def _end(self, *, extra: bool) -> None:
        self.ended = True
        self.reusable = self._keep_alive and not extra
        self._step = self._past_end

    def _past_end(self, data: bytes) -> bytes:
        if data:
            self.reusable = False
        return b""


def _parse_head(head: bytes) -> tuple[int, bool, tuple[tuple[bytes, bytes], ...]]:
    """The status, whether the connection is kept alive, and the header fields."""
    lines = [line[:-1] if line.endswith(b"\r") else line for line in head.split(b"\n")]
    status_line = _STATUS_LINE.fullmatch(lines[0])
    if status_line is None:
        raise RemoteProtocolError("the reply's status line is no HTTP/1.1", lines[0][:40])
    fields: list[tuple[bytes, bytes]] = []
    for line in lines[1:]:
        if line[:1] in (b" ", b"\t") and fields:
            # obs-fold: the line continues the value before it, with a space between.
            name, value = fields[-1]
            line = b"%b:%b %b" % (name, value, line.strip(b" \t"))
            fields.pop()
        field = _FIELD_LINE.fullmatch(line)
        if field is None:
            raise RemoteProtocolError("the reply's header line is no field", line[:40])
        fields.append((field[1].lower(), field[2].strip(b" \t")))
    found = ReplyHead(0, tuple(fields))
    keep_alive = status_line[1] == b"1" and b"close" not in (
        token.lower() for token in found.values(b"connection")
    )
    return int(status_line[2]), keep_alive, found.fields


def _content_length(head: ReplyHead) -> int | None:
    """The body's length its Content-Length states; None without one. Several values
    must agree (RFC 9112 6.3), each a number."""
    lengths = set(head.values(b"content-length"))
    if not lengths:
        return None
    if len(lengths) > 1 or not next(iter(lengths)).isdigit():
        raise RemoteProtocolError("the reply's Content-Length is no single length")
    return int(next(iter(lengths)))
