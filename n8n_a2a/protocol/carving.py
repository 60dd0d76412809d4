"""A JSON body's long base64 strings cut out before it is parsed, read as slices of it.

json.loads of a body carrying a 20 MiB file decodes the whole body to a str (a copy of
27 MiB of base64), scans the file's base64 a character at a time for its closing quote,
and copies it into a str of its own (another copy): the file's base64 held three times,
and read twice more to be checked and decoded. Here the body's long strings of base64's
characters are found with bytes.find, in C, and cut: json.loads reads the body without
them, a few hundred bytes, where each stood as a `NaN`, and gives each back, in order,
through its parse_constant hook, as a `Carved` slice of the body itself. The body is held
once; a file's base64 is its slice (protocol/base64_bytes.py takes it as it is).

Only where the document says a file's base64 is (`keep`: a request's part, a reply's
`files`) does a slice stay a slice: anywhere else (a text, metadata, data) it is put back
as the string json.loads would have made, so that nothing but a file's reader ever meets
one. Sound, because:

- only a UTF-8 body is cut (json's own detect_encoding), and only when the body without
  the cut strings holds no `NaN` but theirs: every NaN json.loads meets is a cut
  string's (an `Infinity` is refused, for the whole body's error);
- walking from the first quote, a string's closing quote is the next `"` with an even
  run of backslashes before it, as JSON reads it; a valid body's strings are found
  exactly, and an invalid one stays invalid, as what is cut is a string token;
- only a string of CARVE_AT bytes or more holding nothing but base64's characters and
  `=` at its end is cut: no escape, no control character, nothing past ASCII, so it is
  what json.loads would have read;
- a body json.loads refuses cut (a long key, a NaN where no value may stand) is read
  whole instead, for the error it gives;
- at most MAX_QUOTES quotes are looked at: a body of many short strings is read whole.

Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

#: Both of proto JSON's alphabets, standard and URL-safe.
ALPHABETS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_"
#: A string this long (bytes between its quotes) or longer is cut if it is base64.
CARVE_AT = 64 * 1024
#: The most quotes looked at in one body (a request's keys and strings are a few dozen).
MAX_QUOTES = 4096
#: What a cut string's characters are checked a slice of at a time (a slice is copied).
CHECK_SLICE = 1 << 20

_QUOTE, _BACKSLASH, _PAD = 0x22, 0x5C, 0x3D

#: Where a file's base64 is: keys from the document's root, None for any index of a list.
Path = tuple[str | None, ...]


@dataclass(frozen=True, slots=True)
class Carved:
    """A long string of base64's characters, a slice of the body it came in (`view`,
    between its quotes). `url_safe`: it holds `-` or `_`."""

    view: memoryview
    url_safe: bool

    def text(self) -> str:
        """The string json.loads would have made of it."""
        return str(self.view, "ascii")


@dataclass(frozen=True, slots=True)
class Parsed:
    """A parsed body, and the body without the strings cut from it (all of it when none
    was): what a look at its JSON text beyond those strings need read."""

    document: Any
    rest: bytes | bytearray


def loads(
    body: bytes | bytearray,
    keep: tuple[Path, ...],
    parse: Callable[..., Any],
) -> Parsed:
    """`parse(text, parse_constant=...)` of the body (json.loads with its options), its
    long base64 strings as Carved slices where `keep` says a file's base64 is, put back
    as strings anywhere else. `parse` refusing the cut body is given the whole one."""
    spans = _long_strings(body)
    if not spans:
        return Parsed(parse(body), body)
    view = memoryview(body)
    carved = iter([Carved(view[start:end], url_safe) for start, end, url_safe in spans])
    rest = bytearray()
    done = 0
    for start, end, _ in spans:
        rest += view[done : start - 1]
        rest += b"NaN"
        done = end + 1
    rest += view[done:]
    if rest.count(b"NaN") != len(spans):  # a NaN of its own, or a string holding one
        return Parsed(parse(body), body)
    try:
        document = parse(rest, parse_constant=_giving(carved))
    except ValueError:
        return Parsed(parse(body), body)
    return Parsed(_put_back(document, keep), rest)


def _giving(carved: Iterator[Carved]) -> Callable[[str], Carved]:
    def give(constant: str) -> Carved:
        found = next(carved, None) if constant == "NaN" else None
        if found is None:  # the body's own Infinity (no NaN is: loads counted them)
            raise ValueError(f"{constant} is not JSON")
        return found

    return give


def _long_strings(body: bytes | bytearray) -> list[tuple[int, int, bool]]:
    """The spans (start, end, url_safe) between the quotes of the body's long base64
    strings, in order; none when the body may not be cut."""
    if len(body) < CARVE_AT or json.detect_encoding(body) != "utf-8":
        return []
    spans: list[tuple[int, int, bool]] = []
    find, quotes = body.find, 0
    opening = find(b'"')
    while opening >= 0:
        closing = find(b'"', opening + 1)
        quotes += 2
        while closing >= 0 and _escaped(body, closing):
            closing = find(b'"', closing + 1)
            quotes += 1
        if closing < 0 or quotes > MAX_QUOTES:
            return [] if quotes > MAX_QUOTES else spans
        if closing - opening > CARVE_AT:
            url_safe = _base64_like(body, opening + 1, closing)
            if url_safe is not None:
                spans.append((opening + 1, closing, url_safe))
        opening = find(b'"', closing + 1)
    return spans


def _escaped(body: bytes | bytearray, quote: int) -> bool:
    """Whether the quote at `quote` is escaped: an odd run of backslashes before it."""
    before = quote - 1
    while body[before] == _BACKSLASH:
        before -= 1
    return (quote - 1 - before) % 2 == 1


def _base64_like(body: bytes | bytearray, start: int, end: int) -> bool | None:
    """Whether body[start:end] holds only base64's characters before `=`s at its end,
    and then whether it uses the URL-safe alphabet; None if it does not."""
    while end > start and body[end - 1] == _PAD:
        end -= 1
    return base64_characters(body, start, end)


def base64_characters(text: bytes | bytearray | memoryview, start: int, end: int) -> bool | None:
    """Whether text[start:end] holds only base64's characters, of either alphabet (an `=`
    is none), and then whether it uses the URL-safe one; None if it does not. A slice at a
    time: bytes.translate deletes the alphabets' characters in C, and what is left is
    what is wrong."""
    url_safe, view = False, memoryview(text)
    for piece_start in range(start, end, CHECK_SLICE):
        piece = bytes(view[piece_start : min(piece_start + CHECK_SLICE, end)])  # one copy
        if piece.translate(None, ALPHABETS):
            return None
        url_safe = url_safe or b"-" in piece or b"_" in piece
    return url_safe


def _put_back(document: Any, keep: tuple[Path, ...]) -> Any:
    """The document with every Carved outside the `keep` paths put back as its string."""
    if isinstance(document, Carved):
        return document.text() if () not in keep else document
    pending: list[tuple[Any, Path]] = [(document, ())] if isinstance(document, dict | list) else []
    while pending:
        container, path = pending.pop()
        items = container.items() if type(container) is dict else enumerate(container)
        for key, value in items:
            step = (*path, key if type(key) is str else None)
            if type(value) is Carved and step not in keep:
                container[key] = value.text()
            elif type(value) is dict or type(value) is list:
                pending.append((value, step))
    return document
