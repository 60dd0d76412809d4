"""A file's bytes, held as the base64 they came in and go out as.

A file crosses the adapter as base64 both ways: in a caller's part (`raw`, v0.3's
`bytes`), to the workflow (`base64`), back in a reply's `files`, out in an artifact. Held
decoded, every trip decoded and encoded it again, and escaped it as a JSON string twice:
four passes over the file and a copy each. Held as standard, padded base64 it is checked
once as it comes (protocol/carving.py hands over a long one as a slice of the body it came
in, never copied) and written into JSON as it is (protocol/writing.py splices it in). It is
decoded only where bytes are needed: a multipart form to the workflow. Pure: no I/O.
"""

from __future__ import annotations

import binascii
from dataclasses import dataclass

from .carving import Carved, base64_characters

#: Buffers: bytes, or a slice of the body a file came in.
Buffer = bytes | memoryview

_URL_SAFE = bytes.maketrans(b"-_", b"+/")


@dataclass(frozen=True, slots=True, eq=False)
class Base64Bytes:
    """`size` bytes as standard base64 with its padding: `pieces`, written in order."""

    pieces: tuple[Buffer, ...]
    size: int

    @classmethod
    def of_bytes(cls, content: bytes) -> Base64Bytes:
        return cls((binascii.b2a_base64(content, newline=False),), len(content))

    def __len__(self) -> int:
        """The base64's length: what it takes in JSON, quotes aside."""
        return sum(len(piece) for piece in self.pieces)

    def text(self) -> str:
        """The base64 as a string (a copy: for a store's JSON, not for an answer)."""
        return b"".join(self.pieces).decode("ascii")

    def decoded(self) -> bytes:
        """The bytes themselves (a copy: for a multipart form, which sends them raw)."""
        return binascii.a2b_base64(b"".join(self.pieces))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Base64Bytes):
            return NotImplemented
        return self.size == other.size and b"".join(self.pieces) == b"".join(other.pieces)

    def __hash__(self) -> int:
        return hash(self.size)

    def __repr__(self) -> str:
        return f"Base64Bytes(size={self.size})"


def parse(value: object, *, proto: bool = True) -> Base64Bytes | None:
    """Proto JSON's bytes (a caller's file): standard or URL-safe base64, padded or not,
    stripped of surrounding whitespace; `proto=False` (a workflow's file): standard base64
    with its padding, as it is. None: not base64. As strict as binascii's strict mode:
    no character outside the alphabet, padding only at the end and no more than the
    length asks (but after whole groups of four, where that mode takes any number, which
    are dropped). A Carved slice holds no whitespace and no character outside the
    alphabets (carving.py took none that had)."""
    if isinstance(value, Carved):
        text: Buffer = value.view
        checked, url_safe = True, value.url_safe
    elif isinstance(value, str) and value.isascii():
        text = (value.strip() if proto else value).encode("ascii")
        checked = url_safe = False
    else:
        return None
    padded = _padding(text)
    core = len(text) - padded
    missing = -core % 4
    if not _padded_right(core, padded, proto):
        return None
    if not checked:
        found = base64_characters(text, 0, core)
        if found is None:
            return None
        url_safe = found
    if url_safe and not proto:
        return None
    if url_safe:
        text = bytes(text[:core]).translate(_URL_SAFE)
    elif padded and padded != missing:
        text = text[:core]  # a view's slice is a view
    pieces = (text,) if len(text) == core + missing else (text, b"=" * missing)
    return Base64Bytes(pieces, core * 3 // 4)


def _padding(text: Buffer) -> int:
    """How many `=` end the text."""
    tail = bytes(text[-4:])
    count = len(tail) - len(tail.rstrip(b"="))
    if count < 4:
        return count
    return len(text) - len(bytes(text).rstrip(b"="))  # (a copy: only such a text pays)


def _padded_right(core: int, padded: int, proto: bool) -> bool:
    """Whether `padded` `=`s after `core` characters are what binascii's strict mode takes
    (as proto JSON pads it first, with `proto`). After whole groups of four it takes any
    number of them, which are dropped; padding alone is leading padding."""
    missing = -core % 4
    if core % 4 == 1 or (core == 0 and padded):
        return False
    return missing == 0 or padded == missing or (proto and padded < missing)
