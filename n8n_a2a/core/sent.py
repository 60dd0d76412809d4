"""One run per message: a message a caller sent again (the same caller, the same
`messageId`) is its first sending's task, never a second run of the workflow.

A2A v1.0 §3.3.1 allows it ("Agents may utilize the messageId to detect duplicate
messages"), and a caller whose answer was lost (a timeout, a reset, a load balancer
failing over) sends the same message again: the official clients and the chat bridge
keep its `messageId`. The adapter remembers each message a caller sent, as a `Sent`
record beside the task it made or continued, for as long as that task is kept.

A message's fingerprint is what makes it that message: its role, its parts (text, data,
files, each with its metadata) and the task and context it names, as sent. Another
message under a used `messageId` is refused, naming the task the id belongs to. The
message's own `metadata` is not in it: a client may stamp each attempt (a trace, a
retry count). Pure: no I/O.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..protocol.base64_bytes import Base64Bytes
from ..protocol.errors import A2AError, quoted_id
from ..protocol.model import Message, Part, PartKind, Role
from .owners import Owner

try:  # hashlib's own blake2b, without hashlib's import of OpenSSL's digests (_hashlib)
    from _blake2 import blake2b
except ImportError:  # an interpreter without the module: hashlib's
    from hashlib import blake2b


@dataclass(frozen=True, slots=True)
class Sent:
    """A message a caller sent: `owner`'s `message_id`, its fingerprint, and the task it
    made or continued (`task_id`)."""

    owner: Owner
    message_id: str
    fingerprint: str
    task_id: str = ""  # "": not known yet (a message being taken in)


def sent(message: Message, owner: Owner) -> Sent:
    """What the store remembers of `owner`'s `message` (its task not known yet)."""
    return Sent(owner, message.message_id, fingerprint(message))


def fingerprint(message: Message) -> str:
    """A digest of what makes the message that message (the module's docstring says what).

    Text alone (nearly every message) is the repr of its strings: canonical, and C code.
    Any other part makes it JSON with sorted keys, then each file's digest, each with its
    length first. The two begin differently: no two messages feed the same bytes."""
    parts = message.parts
    texts = tuple(part.text for part in parts if part.kind is PartKind.TEXT and _bare(part))
    ids = (message.role is Role.AGENT, message.task_id, message.context_id)
    if len(texts) == len(parts):
        canonical = repr((ids, texts)).encode("utf-8", "surrogatepass")
        return blake2b(canonical, digest_size=16).hexdigest()
    digest = blake2b(digest_size=16)
    _feed(digest, _CANONICAL.encode([*ids, [_part(part) for part in parts]]).encode())
    for part in parts:
        if part.file is not None:
            _feed(digest, _file_digest(part.file.encoded))
    return digest.hexdigest()


def _file_digest(encoded: Base64Bytes | None) -> bytes:
    """SHA-256 of a file's base64 as held (standard and padded, however it was sent):
    twice as fast as BLAKE2b over megabytes, where the CPU has SHA instructions."""
    if encoded is None:
        return b""
    import hashlib  # here: a start, and a process never sent a file, do without (OpenSSL's)

    digest = hashlib.sha256()
    for piece in encoded.pieces:
        digest.update(piece)
    return digest.digest()


def _bare(part: Part) -> bool:
    return part.metadata is None and part.data is None and part.file is None


#: One encoder for every fingerprint: json.dumps makes a new one for any non-default option.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


def retried(first: Sent, again: Sent) -> str:
    """The task a message sent again belongs to: its first sending's. A2AError (invalid
    params) when the message is another under the same `messageId`."""
    if first.fingerprint != again.fingerprint:
        raise A2AError.invalid_params(
            f"messageId {quoted_id(again.message_id)} was sent before with another message "
            f"(task {quoted_id(first.task_id)}); a new message needs a new messageId, and a "
            "retry sends the same message again",
        )
    return first.task_id


def _part(part: Part) -> list[Any]:
    """A part's JSON values (every value here came from JSON); a file's bytes go after."""
    file = part.file
    shown = None if file is None else [file.name, file.media_type, file.url]
    return [part.kind.value, part.text, part.metadata, part.data, shown]


def _feed(digest: Any, chunk: bytes) -> None:
    """A chunk with its length first: no two sequences of chunks feed the same bytes."""
    digest.update(len(chunk).to_bytes(8, "big"))
    digest.update(chunk)
