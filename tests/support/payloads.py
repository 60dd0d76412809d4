"""Payloads of real size, made the same way every time, and told apart by their digests.

The stub webhook answers a message text `payload:answer:N` with an answer of exactly N
bytes of UTF-8, `payload:file:N` with a reply file of N bytes, and `payload:upload` with
an answer naming the digest of each file it received (`payload-held:...`: the same reply,
held halfway through its body until the test lets it go on). A client reports what it
read as digests (`Digest`), so that 20 MiB never has to be compared, or printed, as is.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import random
from dataclasses import dataclass
from typing import Any

KiB = 1024
MiB = 1024 * KiB

#: The reply files' and uploads' media type: the adapter must list it in its modes.
MEDIA_TYPE = "application/octet-stream"
#: A line of every kind of text a JSON encoder or a cut could get wrong: quotes,
#: backslashes, tabs, newlines, two-, three- and four-byte UTF-8.
_LINE = 'Line {:08d}: "4 pallets" of flour \\ crème brûlée\t— 在库 🥖\n'


@dataclass(frozen=True)
class Digest:
    """What a client must have read: so many bytes, with this SHA-256."""

    sha256: str
    size: int

    @classmethod
    def of(cls, data: bytes) -> Digest:
        return cls(hashlib.sha256(data).hexdigest(), len(data))

    def shown(self) -> str:
        return f"{self.size:,} bytes sha256 {self.sha256[:12]}"


@functools.cache
def answer_text(size: int) -> str:
    """An answer of exactly `size` bytes of UTF-8, every line numbered (a line lost, doubled
    or moved changes the digest), its end padded with ASCII where a character would not fit."""
    lines, written, number = [], 0, 0
    while written < size:
        line = _LINE.format(number)
        lines.append(line)
        written += len(line.encode())
        number += 1
    encoded = "".join(lines).encode()[:size]
    text = encoded.decode(errors="ignore")
    return text + "x" * (size - len(text.encode()))


@functools.cache
def file_bytes(size: int, seed: str = "reply") -> bytes:
    """`size` bytes that do not compress and never repeat a block: a cut, a doubled or a
    moved block shows in the digest."""
    return random.Random(f"{seed}:{size}").randbytes(size)


def file_name(size: int, seed: str = "reply") -> str:
    return f"{seed}-{size}.bin"


def answer_verb(size: int, *, held: bool = False) -> str:
    return f"{_verb(held)}:answer:{size}"


def file_verb(size: int, *, held: bool = False) -> str:
    return f"{_verb(held)}:file:{size}"


#: The text of a message carrying an upload: the stub answers with the digests it received.
UPLOAD_VERB = "payload:upload"


def _verb(held: bool) -> str:
    return "payload-held" if held else "payload"


def upload_answer(name: str, data: bytes) -> str:
    """The stub's answer to an upload: what it received, as it received it."""
    return f"received {name}: {Digest.of(data).shown()}"


def reply(verb: str, request: dict[str, Any]) -> bytes:
    """The stub's reply (the contract's JSON) to a `payload:` or `payload-held:` text."""
    _, _, what = verb.partition(":")
    if what == "upload":
        files = request.get("files", [])
        answers = [upload_answer(f["name"], base64.b64decode(f["base64"])) for f in files]
        return _contract("\n".join(answers) or "received no file")
    kind, _, size = what.partition(":")
    return _cached_reply(kind, int(size))


@functools.cache
def _cached_reply(kind: str, size: int) -> bytes:
    if kind == "answer":
        return _contract(answer_text(size))
    if kind == "file":
        encoded = base64.b64encode(file_bytes(size)).decode()
        file = {"name": file_name(size), "mediaType": MEDIA_TYPE, "base64": encoded}
        return _contract(f"Here is {file_name(size)}.", files=[file])
    raise ValueError(f"no payload reply {kind!r}")


def _contract(answer: str, **more: Any) -> bytes:
    return json.dumps({"answer": answer, "escalate": False, **more}).encode()


def received_files(body: dict[str, Any]) -> list[tuple[str, Digest]]:
    """The files a webhook request carried: each one's name and digest."""
    return [(f["name"], Digest.of(base64.b64decode(f["base64"]))) for f in body.get("files", [])]
