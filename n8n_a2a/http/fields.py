"""What an HTTP/1.1 message's header fields say, and how a response's head is written
(RFC 9112), without I/O: framing.py's, for the requests it reads and the responses it
frames. Read as h11 reads them: a field is a token, a colon and a value without control
characters (spaces and tabs trimmed around it); Content-Length is one length however
often it is given, Transfer-Encoding chunked or nothing (a 501), never both (a 400)."""

from __future__ import annotations

import re
from http import HTTPStatus

from .errors import RequestError, ResponseError

# A token's characters (RFC 9110 §5.6.2), twice: as bytes for bytes.translate (a request
# line's parts, judged by deleting what each may hold, in C: what is left is a fault), and
# as the class of the one regular expression below. (Made from the bytes by re.escape at
# import, the class costs the start more than the spelling; a test holds them equal.)
_TOKEN_BYTES = b"!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_TOKEN_CHARS = rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+"
# A value: visible characters and obs-text, spaces and tabs only within (h11's, as read).
_VALUE_CHARS = rb"(?:[^\x00\s]+(?:[ \t]+[^\x00\s]+)*)?"
#: Header field lines (or trailers), each ending in CRLF: a name, a colon, a value. (Each
#: expression compiled costs the start a million instructions or more: one does.)
FIELD_LINES = re.compile(rb"(?:%b:[ \t]*%b[ \t]*\r\n)*" % (_TOKEN_CHARS, _VALUE_CHARS))
_VISIBLE_BYTES = bytes(range(0x21, 0x7F))
#: Reason phrases written, by status: HTTPStatus's lookup costs more than the line.
_REASONS: dict[int, bytes] = {}
_NONE: frozenset[bytes] = frozenset()


class Framing:
    """What a message's headers say of its body and its connection. (A plain class: a
    dataclass's costs the start more, and nothing compares these.)"""

    __slots__ = ("chunked", "connection", "expects_continue", "hosts", "keep_alive", "length")

    def __init__(
        self,
        *,
        chunked: bool,
        length: int | None,
        keep_alive: bool,
        expects_continue: bool,
        connection: frozenset[bytes],
        hosts: int,
    ) -> None:
        self.chunked = chunked
        self.length = length
        self.keep_alive = keep_alive
        self.expects_continue = expects_continue
        self.connection = connection
        self.hosts = hosts

    @classmethod
    def of(cls, headers: list[tuple[bytes, bytes]], version: bytes) -> Framing:
        lengths: list[bytes] = []
        codings: list[bytes] = []
        connection: list[bytes] = []
        expects = False
        hosts = 0
        for name, value in headers:
            if name == b"content-length":
                lengths += value.split(b",")
            elif name == b"transfer-encoding":
                codings.append(value.lower())
            elif name == b"connection":
                connection += value.lower().split(b",")
            elif name == b"expect":
                expects = b"100-continue" in value.lower()
            elif name == b"host":
                hosts += 1
        tokens = frozenset(token.strip() for token in connection) if connection else _NONE
        return cls(
            chunked=_chunked(codings, lengths),
            length=_length(lengths),
            keep_alive=version == b"1.1" and b"close" not in tokens,
            expects_continue=expects and version == b"1.1",
            connection=tokens,
            hosts=hosts,
        )


def _chunked(codings: list[bytes], lengths: list[bytes]) -> bool:
    if not codings:
        return False
    if len(codings) > 1 or codings[0] != b"chunked":
        raise RequestError("Only Transfer-Encoding: chunked is supported", 501)
    if lengths:
        raise RequestError("Content-Length with Transfer-Encoding")
    return True


def _length(lengths: list[bytes]) -> int | None:
    if not lengths:
        return None
    length = lengths[0].strip()
    if len(lengths) > 1 and any(other.strip() != length for other in lengths):
        raise RequestError("conflicting Content-Length headers")
    if not length.isdigit() or len(length) > 20:
        raise RequestError("bad Content-Length")
    return int(length)


def request_fields(block: bytes) -> list[tuple[bytes, bytes]]:
    """A head's header fields (its lines after the request line, each ending in CRLF),
    names lower-cased, values trimmed, Upgrade dropped. The block is judged whole, in C."""
    if FIELD_LINES.fullmatch(block) is None:
        for line in block.split(b"\r\n"):
            if line[:1] in (b" ", b"\t"):
                raise RequestError("a line of the request's head is folded (obs-fold)")
        raise RequestError("illegal header line")
    fields = []
    for line in block.split(b"\r\n")[:-1]:
        name, _, value = line.partition(b":")
        name = name.lower()
        if name != b"upgrade":
            fields.append((name, value.strip(b" \t")))
    return fields


def without(headers: list[tuple[bytes, bytes]], name: bytes) -> list[tuple[bytes, bytes]]:
    return [(key, value) for key, value in headers if key.lower() != name]


def response_head(status: int, headers: list[tuple[bytes, bytes]]) -> bytes:
    """A status line with its reason phrase, then the header fields, each checked: a
    name that is no token or a value that could end its line is refused."""
    reason = _REASONS.get(status)
    if reason is None:
        try:
            reason = HTTPStatus(status).phrase.encode()
        except ValueError:
            reason = b""
        _REASONS[status] = reason
    fields = b"".join([b"%b: %b\r\n" % (name, value) for name, value in headers])
    # One line a field, each a name and a value: none that could end its line early.
    if fields.count(b"\n") != len(headers) or FIELD_LINES.fullmatch(fields) is None:
        raise ResponseError(f"a header field of {headers!r} cannot be sent as it is")
    return b"HTTP/1.1 %d %b\r\n%b\r\n" % (status, reason, fields)


def request_line(line: bytes) -> tuple[bytes, bytes, bytes]:
    """A request line's method (a token), target (visible characters) and version
    (`HTTP/d.d`, its digits given), as h11 reads one."""
    parts = line.split(b" ")
    if len(parts) == 3:
        method, target, version = parts
        if (
            method
            and target
            and not method.translate(None, _TOKEN_BYTES)
            and not target.translate(None, _VISIBLE_BYTES)
            and len(version) == 8
            and version[:5] == b"HTTP/"
            and version[5:6].isdigit()
            and version[6:7] == b"."
            and version[7:].isdigit()
        ):
            return method, target, version[5:]
    raise RequestError("illegal request line")
