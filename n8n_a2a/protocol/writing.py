"""Strict, compact JSON in UTF-8: what every answer, push body and webhook request is
written as, a file's base64 spliced in as it is held.

json's encoder would check a file's base64 for escapes a character at a time, copy it
into the document's str, and that str be copied again into bytes: two copies and a scan
of the largest thing in the document. A Base64Bytes needs none of it: it holds only
base64's characters. The encoder writes a marker where each one stands (its `default`
hook, asked for what it cannot write), the text around the markers is encoded, and the
document is its pieces in order, each file's own buffers between them, never joined
for an answer (`written`).

The marker is a string no document holds: NUL and a random nonce drawn as the process
starts, which json writes as `"\\u0000<nonce>"`. A document that holds it anyway (it
would have to know the nonce) has its files written as strings instead: a marker is
never mistaken. Never fails on a value a task can hold: one that JSON cannot write (a
non-finite number, a lone surrogate, nesting past the bound), which no check should have
let in, is written replaced (strict.writable) rather than failing every answer that
holds it. Pure: no I/O.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .base64_bytes import Base64Bytes, Buffer
from .strict import writable

#: A body is sent in slices of at most this many bytes: views of its buffers, not copies.
SLICE_BYTES = 1 << 20

# os.urandom's, as secrets.token_hex's are, without secrets' import of hmac and hashlib.
_MARKER = "\0" + os.urandom(16).hex()
_WRITTEN = json.dumps(_MARKER)
_OPTIONS: dict[str, Any] = {"ensure_ascii": False, "allow_nan": False, "separators": (",", ":")}
# One encoder for every document without a file: json.dumps makes a new one for any
# option it is given.
_ENCODER = json.JSONEncoder(**_OPTIONS)


@dataclass(frozen=True, slots=True)
class Pieces:
    """A JSON document as buffers to be written in order: its text around each file, and
    each file's base64 as it is held."""

    buffers: tuple[Buffer, ...]
    #: The bytes of those buffers that are files' base64: held elsewhere, not copied.
    spliced: int

    def __len__(self) -> int:
        return sum(len(buffer) for buffer in self.buffers)

    @property
    def copied(self) -> int:
        """The bytes this document made: what holding it adds to what is held."""
        return len(self) - self.spliced

    def __bytes__(self) -> bytes:
        """The document in one piece: a copy, for what must have bytes (an SSE event)."""
        return b"".join(self.buffers)

    def __aiter__(self) -> AsyncIterator[Buffer]:
        return slices(self.buffers, SLICE_BYTES)


async def slices(buffers: Iterable[Buffer], size: int) -> AsyncIterator[Buffer]:
    """A body's buffers in order, in slices of at most `size` bytes: views of them, never
    copies (a JSON document's Pieces, a multipart form's)."""
    for buffer in buffers:
        if len(buffer) <= size:
            yield buffer
            continue
        view = memoryview(buffer)
        for start in range(0, len(view), size):
            yield view[start : start + size]


def dump(document: Any) -> bytes:
    """The document's JSON in one piece."""
    found = written(document)
    return found if isinstance(found, bytes) else bytes(found)


def written(document: Any) -> bytes | Pieces:
    """The document's JSON: bytes, or Pieces when it holds a file's base64."""
    try:
        return _encoded(document)
    except (ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        return _encoded(writable(document))


def _encoded(document: Any) -> bytes | Pieces:
    try:
        return _ENCODER.encode(document).encode()
    except TypeError:  # a file's base64 (or what no JSON can hold, which fails again)
        pass
    files: list[Base64Bytes] = []
    text = json.JSONEncoder(**_OPTIONS, default=_marking(files)).encode(document)
    between = text.split(_WRITTEN)
    if len(between) != len(files) + 1:  # the document holds the marker itself
        return json.JSONEncoder(**_OPTIONS, default=_as_text).encode(document).encode()
    buffers: list[Buffer] = [between[0].encode() + b'"']
    for file, after in zip(files, between[1:], strict=True):
        buffers += [*file.pieces, b'"' + after.encode() + b'"']
    buffers[-1] = buffers[-1][:-1]  # the last text has no file after it
    return Pieces(tuple(buffers), sum(map(len, files)))


def _marking(files: list[Base64Bytes]) -> Callable[[object], str]:
    def mark(value: object) -> str:
        if type(value) is not Base64Bytes:
            raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
        files.append(value)
        return _MARKER

    return mark


def _as_text(value: object) -> str:
    if type(value) is not Base64Bytes:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
    return value.text()
