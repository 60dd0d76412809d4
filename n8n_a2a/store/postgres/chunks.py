"""The chunks of a streamed answer, across replicas: each one NOTIFYed as the calling
replica relays it, so that a subscriber on any replica hears it (events.py sends and
hears them). Pure: a chunk into the payloads of its notifications, and back.

PostgreSQL bounds a NOTIFY's payload under 8,000 bytes: a chunk longer than that goes as
pieces, put together again where it is heard. A payload is ASCII JSON (every other
character escaped), so that any text, lone surrogates included, goes as it came. Any role
that can connect may NOTIFY on the channel: a payload that is none of ours is ignored,
and pieces never completed are forgotten past a bound.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from ...protocol.model import Artifact, ArtifactUpdate, Part
from ...protocol.params import MAX_ID_CHARS

#: The channel chunks go on (events go on schema.CHANNEL).
CHUNKS = "a2a_task_chunks"
#: The most bytes of one payload (PostgreSQL's bound is 8,000).
MAX_PAYLOAD = 7900
#: Chunks heard in part at most: the oldest goes past it.
MAX_PENDING = 256

# A chunk's fields in a payload: short names, a piece's `x` its text.
_Key = tuple[str, str, int, int]  # origin, task, sequence, relayed


def chunk_payloads(origin: str, update: ArtifactUpdate) -> list[str]:
    """The payloads of one relayed chunk, sent by `origin` (a replica's id): one, or its
    text in pieces."""
    fields: dict[str, Any] = {
        "o": origin,
        "t": update.task_id,
        "c": update.context_id,
        "s": update.sequence,
        "r": update.relayed,
        "a": update.artifact.artifact_id,
        "n": update.artifact.name,
        "p": update.append,
    }
    text = "".join(part.text for part in update.artifact.parts)
    room = MAX_PAYLOAD - len(_payload(fields, 999, 999, "")) - 8
    pieces = _pieces(text, room)
    return [_payload(fields, index, len(pieces), piece) for index, piece in enumerate(pieces)]


def _payload(fields: dict[str, Any], index: int, count: int, text: str) -> str:
    return json.dumps({**fields, "i": index, "m": count, "x": text}, separators=(",", ":"))


def _pieces(text: str, room: int) -> list[str]:
    """The text cut into pieces whose JSON strings take at most `room` bytes each."""
    pieces: list[str] = []
    while True:
        size = min(len(text), room)
        while len(json.dumps(text[:size])) > room:
            size = max(1, size // 2)
        pieces.append(text[:size])
        text = text[size:]
        if not text:
            return pieces


class Reassembly:
    """Chunks heard from the other replicas, whole once their last piece has come."""

    def __init__(self, origin: str) -> None:
        self._origin = origin
        self._pending: OrderedDict[_Key, list[str]] = OrderedDict()

    def take(self, payload: bytes) -> ArtifactUpdate | bool | None:
        """The chunk a payload completes; None while its pieces are still coming, or for
        one of this replica's own; False for a payload that is none of ours."""
        read = _read(payload)
        if read is None:
            return False
        fields, index, count, text = read
        key: _Key = (fields["o"], fields["t"], fields["s"], fields["r"])
        if fields["o"] == self._origin:
            return None
        pieces = self._pending.pop(key, [])
        if index != len(pieces):  # a piece missed: what came of this chunk is dropped
            return None
        pieces.append(text)
        if len(pieces) < count:
            self._pending[key] = pieces
            while len(self._pending) > MAX_PENDING:
                self._pending.popitem(last=False)
            return None
        artifact = Artifact(fields["a"], fields["n"], (Part("".join(pieces)),))
        return ArtifactUpdate(
            fields["t"],
            fields["c"],
            artifact,
            fields["s"],
            append=fields["p"],
            last_chunk=False,
            relayed=fields["r"],
        )


_TYPES = {"o": str, "t": str, "c": str, "s": int, "r": int, "a": str, "n": str, "p": bool}


def _read(payload: bytes) -> tuple[dict[str, Any], int, int, str] | None:
    """A payload's fields, its piece's index and count and its text; None if malformed."""
    try:
        document = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    if not isinstance(document, dict):
        return None
    for name, kind in {**_TYPES, "i": int, "m": int, "x": str}.items():
        value = document.get(name)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            return None
    if not (0 <= document["i"] < document["m"] and 0 < len(document["t"]) <= MAX_ID_CHARS):
        return None
    return document, document["i"], document["m"], document["x"]
