"""Server-Sent Events framing (HTML Living Standard §9.2) of a stream's responses.

Each event is one response: over JSON-RPC with the request's id (A2A spec §9.4.2), over
HTTP+JSON the StreamResponse itself (§11.7); the stream ends when the server closes it.
Pure bytes in, bytes out.
"""

from __future__ import annotations

import re

from .errors import RequestId
from .jsonrpc import error_response
from .model import JSONObject
from .writing import Pieces

HEADERS: tuple[tuple[str, str], ...] = (
    ("Content-Type", "text/event-stream"),
    # Every event is news: no cache may store the stream or answer with an old copy.
    ("Cache-Control", "no-cache"),
    # nginx (ingress-nginx included) buffers a proxied response by default and would
    # hand the events on in bursts, or only when the stream ends.
    ("X-Accel-Buffering", "no"),
)

# SSE ends a line at CRLF, LF or CR, wherever it stands: each is a line of its own.
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


def event(data: bytes | Pieces, name: str | None = None) -> bytes:
    """One event carrying `data`: a `data:` field per line of it, then a blank line; with a
    `name`, an `event:` field first (the HTTP+JSON binding's `error`).

    The space after `data:` is always written, since readers drop exactly one: a line
    of the payload that starts with a space keeps it. A reader joins the lines with LF,
    so the payload comes back whole (a CR or CRLF in it comes back as LF).
    """
    head = b"" if name is None else b"event: " + name.encode() + b"\n"
    if isinstance(data, Pieces):  # compact JSON: no line breaks, its files' none either
        return b"".join((head, b"data: ", *data.buffers, b"\n\n"))
    lines = _LINE_BREAK.split(data)
    return head + b"".join(b"data: " + line + b"\n" for line in lines) + b"\n"


def comment(text: str = "") -> bytes:
    """A comment, which readers skip: a keep-alive for proxies that cut idle connections."""
    flat = b" ".join(_LINE_BREAK.split(text.encode()))
    return b":" + (b" " + flat if flat else b"") + b"\n\n"


def error_event(request_id: RequestId, error: JSONObject) -> bytes:
    """A JSON-RPC error response (a codec's `encode_error`) as the stream's last event.

    No `event: error` field: a2a-sdk 1.3.0's v0.3 client turns such an event into a
    bare "SSE stream error" and loses the code, while every client reads the error from
    the data of a plain event.
    """
    return event(error_response(request_id, error))
