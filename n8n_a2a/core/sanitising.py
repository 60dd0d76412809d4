"""Text a task may carry: free of the caller's token, encodable, and cut to a length.

Pure: no I/O. core/contract.py judges a reply and then makes its text safe with these,
and cuts the excerpt of a reply off contract it quotes with `cut`; what a task keeps of a
caller's message or a workflow's answer is never cut (core/retention.py).
"""

from __future__ import annotations

import bisect
import re
from array import array

REDACTED = "[redacted]"

# How one character of a token can be written where a workflow might echo it: as a
# JSON \u escape (any case of hex), a JSON-escaped slash, or percent-encoded (URLs).
_ESCAPED_CHAR = re.compile(r"\\u([0-9A-Fa-f]{4})|\\(/)|%([0-9A-Fa-f]{2})")
# An HTML page's markup: a script or style with its content, a comment, a tag.
_MARKUP = re.compile(r"<(script|style)\b.*?</\1\s*>|<!--.*?-->|<[^>]*>", re.S | re.I)
#: How much of a page is read for its text: an excerpt's worth, many times over, and no
#: more (a reply may be megabytes; the regex must not read them all).
MARKUP_WINDOW = 16_000
# A surrogate code point alone: JSON's "\ud83d" decodes to one; UTF-8 cannot encode it.
_SURROGATE = re.compile("[\ud800-\udfff]")
# A URL's signature (n8n's resume URL: `…/webhook-waiting/<id>?signature=<token>`), written
# plainly or with its `=` or `&` escaped as JSON or a URL may: the value up to its end.
_SIGNATURE = re.compile(r"(signature(?:=|%3[dD]|\\u003[dD]))[^&\s\"'<>\\]+", re.I)


def redact(text: str, token: str | None) -> str:
    """The text with each appearance of the token replaced by [redacted].

    A character of the token may appear plainly or escaped (\\u0041, \\/, %41), each
    character its own way. A Bearer token has only b64token characters, none of them a
    backslash or %, so the text is read once with every escape taken as its character,
    the token looked for in that reading, and each span it came from replaced. Linear
    in the text's length, whatever the token.
    """
    if not token:
        return text
    if "\\" not in text and "%" not in text:
        return text.replace(token, REDACTED)
    reading = _ESCAPED_CHAR.sub(_read_escape, text)
    if token not in reading:
        return text
    # Where the reading's characters are in the text: after escape k (read_at[k] in
    # the reading) the text runs shifts[k] characters ahead of the reading.
    read_at, shifts = array("q"), array("q")
    shift = 0
    for escape in _ESCAPED_CHAR.finditer(text):
        start, end = escape.span()
        read_at.append(start - shift)
        shift += end - start - 1
        shifts.append(shift)

    def in_text(position: int) -> int:
        before = bisect.bisect_left(read_at, position)
        return position + (shifts[before - 1] if before else 0)

    kept: list[str] = []
    done = 0
    found = reading.find(token)
    while found >= 0:
        kept += (text[done : in_text(found)], REDACTED)
        done = in_text(found + len(token))
        found = reading.find(token, found + len(token))
    kept.append(text[done:])
    return "".join(kept)


def _read_escape(escape: re.Match[str]) -> str:
    code = escape[1] or escape[3]
    return chr(int(code, 16)) if code else "/"


def repair(text: str) -> tuple[str, bool]:
    """The text with each lone surrogate replaced by U+FFFD, and whether there was one."""
    repaired, count = _SURROGATE.subn("\ufffd", text)
    return repaired, count > 0


def markup_free(page: str) -> str:
    """The text of an HTML page's first MARKUP_WINDOW characters, as a person reads it: no
    tags, scripts, styles or comments, its entities read, its whitespace one space. A
    webserver's 404 page ("<!DOCTYPE html>...<pre>Cannot POST /x</pre>...") becomes
    "Error Cannot POST /x"."""
    import html  # its table of entities: 1 % of a start's instructions, for a rare reply

    return " ".join(html.unescape(_MARKUP.sub(" ", page[:MARKUP_WINDOW])).split())


def cut(text: str, limit: int) -> str:
    """The text, or its first `limit` characters and a marker saying it was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}[... cut at {limit} characters]"


def unsigned(text: str) -> str:
    """The text with every URL signature's value replaced by [redacted]: a resume URL is a
    credential, whatever part of a reply it was written in."""
    if "ignature" not in text and "IGNATURE" not in text:
        return text
    return _SIGNATURE.sub(lambda found: found[1] + REDACTED, text)
