"""What an HTTP/1.1 message's header fields say, and how a response's head is written
(RFC 9112), without I/O: framing.py's, for the requests it reads and the responses it
frames. Read as h11 reads them: a field is a token, a colon and a value without control
characters (spaces and tabs trimmed around it); Content-Length is one length however
often it is given, Transfer-Encoding chunked or nothing (a 501), never both (a 400)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from http import HTTPStatus

from .errors import RequestError, ResponseError

TOKEN_CHARS = rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+"
# A value: visible characters and obs-text, spaces and tabs only within (h11's, as read).
_VALUE_CHARS = rb"(?:[^\x00\s]+(?:[ \t]+[^\x00\s]+)*)?"
_TOKEN = re.compile(TOKEN_CHARS)
_VALUE = re.compile(_VALUE_CHARS)
#: A header field's line (or a trailer's): its name and its value, trimmed.
FIELD = re.compile(rb"(%b):[ \t]*(%b)[ \t]*" % (TOKEN_CHARS, _VALUE_CHARS))
_FIELD_LINE = re.compile(rb"(%b):[ \t]*(%b)[ \t]*\r\n" % (TOKEN_CHARS, _VALUE_CHARS))
_FIELD_LINES = re.compile(rb"(?:%b:[ \t]*%b[ \t]*\r\n)*" % (TOKEN_CHARS, _VALUE_CHARS))
#: Reason phrases written, by status: HTTPStatus's lookup costs more than the line.
_REASONS: dict[int, bytes] = {}
_NONE: frozenset[bytes] = frozenset()


@dataclass(frozen=True, slots=True)
class Framing:
    """What a message's headers say of its body and its connection."""

    chunked: bool
    length: int | None
    keep_alive: bool
    expects_continue: bool
    connection: frozenset[bytes]
    hosts: int

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
    names lower-cased, Upgrade dropped. The block is judged whole, in C, then split."""
    if _FIELD_LINES.fullmatch(block) is None:
        for line in block.split(b"\r\n"):
            if line[:1] in (b" ", b"\t"):
                raise RequestError("a line of the request's head is folded (obs-fold)")
        raise RequestError("illegal header line")
    return [
        (lowered, value)
        for name, value in _FIELD_LINE.findall(block)
        if (lowered := name.lower()) != b"upgrade"
    ]


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
    lines = [b"HTTP/1.1 %d %b\r\n" % (status, reason)]
    for name, value in headers:
        if _TOKEN.fullmatch(name) is None or _VALUE.fullmatch(value) is None:
            raise ResponseError(f"the header field {bytes(name)!r} cannot be sent as it is")
        lines.append(b"%b: %b\r\n" % (name, value))
    lines.append(b"\r\n")
    return b"".join(lines)
