"""The webhook's multipart/form-data body (ADAPTER_WEBHOOK_FILES=multipart), n8n's own way
for files: the request's JSON in the form field `request`, each file a form file.

n8n's Webhook node reads every form file into the item's binary under its field's name
(`file0`, `file1`, ...) and every field without a Content-Type into `$json.body` as a
string: so the JSON field has none (with one, n8n would read it as a file too). The body
is framed as browsers frame a form (WHATWG's multipart/form-data encoding): a file's
name, written into its part's header, has `"`, CR, LF and the other control characters
percent-encoded, so no name can end its header or start another; the rest of a name
travels as UTF-8, which n8n reads as written. Sent as pieces that refer to the files'
bytes, never a copy of them.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

from ..core.sanitising import repair
from ..protocol.writing import slices

#: The form field holding the request's JSON document.
REQUEST_FIELD = "request"
#: A file's bytes are sent in slices of this size: views of them, the most in one send.
SLICE_BYTES = 64 * 1024

_CRLF = b"\r\n"
_FALLBACK_TYPE = "application/octet-stream"
# What a header may carry as a media type: type/subtype tokens (RFC 9110), nothing more.
_TOKEN_TYPE = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+/[!#$%&'*+.^_`|~0-9A-Za-z-]+")
# `"` and the control characters, as WHATWG's form encoding and httpx write them.
_ESCAPED = re.compile(r'["\x00-\x1f\x7f]')


def file_field(index: int) -> str:
    """The form field of the message's `index`-th file sent as bytes: n8n's binary name."""
    return f"file{index}"


@dataclass(frozen=True, slots=True)
class FormFile:
    """One form file: its field, its name as the caller gave it, type and bytes."""

    field: str
    name: str
    media_type: str
    content: bytes


@dataclass(frozen=True, slots=True)
class FormBody:
    """A multipart/form-data body: its pieces, sent in order, each file's bytes as
    slices of the file itself. Iterable again from its start (a retried send)."""

    boundary: str
    pieces: tuple[bytes, ...]

    @property
    def content_type(self) -> str:
        return f"multipart/form-data; boundary={self.boundary}"

    def __len__(self) -> int:
        return sum(len(piece) for piece in self.pieces)

    def __aiter__(self) -> AsyncIterator[bytes | memoryview]:
        return slices(self.pieces, SLICE_BYTES)

    def __bytes__(self) -> bytes:
        """The whole body in one piece: for tests and logs, never for sending."""
        return b"".join(self.pieces)


def form_body(document: str, files: tuple[FormFile, ...], boundary: str = "") -> FormBody:
    """The body of the JSON `document` and `files`; `boundary`: a fresh random one unless
    given (128 random bits: no file's bytes can be expected to hold it)."""
    # secrets.token_hex's bytes (os.urandom's), without secrets' import of hmac and hashlib.
    boundary = boundary or f"n8n-a2a-{os.urandom(16).hex()}"
    delimiter = b"--" + boundary.encode("ascii") + _CRLF
    pieces = [
        delimiter,
        _disposition(REQUEST_FIELD, None) + _CRLF,
        # A lone surrogate (JSON's "\ud83d" in the caller's text) has no UTF-8.
        repair(document)[0].encode(),
        _CRLF,
    ]
    for file in files:
        media = file.media_type if _TOKEN_TYPE.fullmatch(file.media_type) else _FALLBACK_TYPE
        # n8n drops a form file with an empty name and no bytes: a nameless file is named
        # after its field (its JSON entry keeps the name "").
        header = _disposition(file.field, file.name or file.field)
        pieces += [delimiter, header + b"Content-Type: " + media.encode() + _CRLF + _CRLF]
        pieces += [file.content, _CRLF]
    pieces.append(b"--" + boundary.encode("ascii") + b"--" + _CRLF)
    return FormBody(boundary, tuple(piece for piece in pieces if piece))


def _disposition(field: str, filename: str | None) -> bytes:
    """The part's Content-Disposition line, its names quoted and escaped."""
    line = f'Content-Disposition: form-data; name="{_quoted(field)}"'
    if filename is not None:
        line += f'; filename="{_quoted(filename)}"'
    return line.encode() + _CRLF


def _quoted(name: str) -> str:
    """A name as a form's quoted string: `"`, CR, LF and other controls as %XX."""
    text = repair(name)[0]
    return _ESCAPED.sub(lambda match: f"%{ord(match.group()):02X}", text)
