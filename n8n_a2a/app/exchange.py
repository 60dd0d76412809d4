"""A request as the A2A routes read it, and their answer: plain objects over ASGI.

The A2A routes (the card, the JSON-RPC endpoint, the HTTP+JSON binding) carry the
adapter's traffic, so they are served on ASGI as hypercorn hands it over (front.py), not
through quart: its request and response objects, its contexts and its routing cost a
send about a tenth of its instructions, and importing it most of the start. `Asked` reads
the head once, as the routes ask for it; `Answer` is what they answer, sent by
`send_answer` (a body of bytes with its length, or a stream of events).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, cast
from urllib.parse import parse_qsl

import trio

from ..budget import Reservation
from ..core.errors import AtCapacity, BodyTooLarge
from ..protocol.writing import Pieces

if TYPE_CHECKING:
    # Its types only: importing hypercorn.typing imports h2's events (http/unused.py).
    from hypercorn.typing import (
        ASGIReceiveCallable,
        ASGISendCallable,
        HTTPResponseBodyEvent,
        HTTPScope,
    )


class Fields:
    """A request's headers or query arguments by name (headers case-insensitively); a name
    given twice is its first value, as werkzeug reads it."""

    __slots__ = ("_values",)

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        self._values: dict[str, str] = {}
        for name, value in pairs:
            self._values.setdefault(name, value)

    @classmethod
    def of_headers(cls, raw: Iterable[tuple[bytes, bytes]]) -> Fields:
        return cls((name.decode("latin-1").lower(), value.decode("latin-1")) for name, value in raw)

    def get(self, key: str, /) -> str | None:
        return self._values.get(key.lower())

    def as_dict(self) -> dict[str, str]:
        return dict(self._values)


class Asked:
    """One request of an A2A route: its method, path, head, and body read on demand up to
    `max_body_bytes`."""

    def __init__(self, scope: HTTPScope, receive: ASGIReceiveCallable, max_body_bytes: int) -> None:
        self.scope = scope
        self.method = scope["method"]
        self.path = scope["path"]
        self.headers = Fields.of_headers(scope["headers"])
        self._receive = receive
        self._max_body_bytes = max_body_bytes
        #: Under ADAPTER_MEMORY_BUDGET (admission.py): the body's reservation once its
        #: caller is known (whose it is, `Reservation.caller`), and its answer's.
        self.held: Reservation | None = None
        self.answer: Reservation | None = None

    @property
    def peer(self) -> str | None:
        """The client's address: who an anonymous caller is, under the memory budget."""
        client = self.scope.get("client")
        return client[0] if client else None

    def settle(self) -> None:
        """The exchange is over: whatever its request and answer still hold is given back."""
        for reservation in (self.held, self.answer):
            if reservation is not None:
                reservation.give_back()

    @cached_property
    def args(self) -> dict[str, str]:
        """The query's arguments (percent-decoded, UTF-8), the first value of each name:
        read once, though the negotiation and the binding's params both ask."""
        query = self.scope["query_string"].decode("latin-1")
        pairs = parse_qsl(query, keep_blank_values=True, errors="replace")
        return Fields((name, value) for name, value in pairs).as_dict()

    @property
    def content_type(self) -> str | None:
        return self.headers.get("content-type")

    async def body(self, room: Reservation | None = None) -> bytearray:
        """The whole body; BodyTooLarge past the bound, announced or as it comes. With a
        `room`, each piece is charged to it as it arrives: AtCapacity, once the rest was
        read and dropped, when the budget had no room for it within its wait."""
        announced = self.headers.get("content-length")
        if announced is not None and announced.isdigit() and int(announced) > self._max_body_bytes:
            raise BodyTooLarge(self._max_body_bytes)
        # One buffer grown in place, as quart reads one: pieces kept for a join would
        # each be a small heap block, and a burst of large bodies would leave the heap
        # fragmented (measured: 37 MiB kept after sixteen 20 MiB sends, against 9).
        body = bytearray()
        while True:
            event = await self._receive()
            if event["type"] != "http.request":
                break  # the client has gone: its connection's scope ends this request
            piece = event.get("body", b"")
            body += piece
            if len(body) > self._max_body_bytes:
                raise BodyTooLarge(self._max_body_bytes)
            more = event.get("more_body", False)
            if room is not None and piece:
                await self._charged(room, len(piece), body, more)
            if not more:
                break
        # The buffer itself: a copy would hold a large body twice.
        return body

    async def _charged(self, room: Reservation, size: int, body: bytearray, more: bool) -> None:
        try:
            await room.grow(size)
        except AtCapacity:
            # Refused having done nothing: what came is dropped and given back at once
            # (others may wait for it), and so is what is still to come (answered before
            # it is read, a client still sending it would lose the answer to the
            # connection's close).
            del body[:]
            room.give_back()
            if more:
                await self._drop_rest()
            raise

    async def opening(self, size: int) -> bytes:
        """The body's first `size` bytes, the rest read and dropped: what a refused
        caller's request is read for (its id, to echo) holds no more than that."""
        kept = bytearray()
        while len(kept) < size:
            event = await self._receive()
            if event["type"] != "http.request":
                return bytes(kept)
            kept += event.get("body", b"")[: size - len(kept)]
            if not event.get("more_body", False):
                return bytes(kept)
        await self._drop_rest()
        return bytes(kept)

    async def _drop_rest(self) -> None:
        while True:
            event = await self._receive()
            if event["type"] != "http.request" or not event.get("more_body", False):
                return


class LastPiece(bytes):
    """A stream's last piece, known to be the last as it is made (the final event): it
    goes out with the body's end, one write, not two."""


@dataclass(slots=True)
class Answer:
    """What a route answers: a status, headers, and a body of bytes (in one piece, or a
    JSON document's Pieces) or a stream of them."""

    body: bytes | Pieces | AsyncIterator[bytes] = b""
    status: int = 200
    content_type: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    #: A send's answer: the files it is written from are its own task's, which the store
    #: may give up to make room for the next reply while the answer is still unread (each
    #: send's its own: unread answers would add up uncounted), so they are held with it
    #: until written. A read's answer shows tasks kept already (several reads, one task's
    #: bytes), and holds what it copies.
    files_its_own: bool = False


def json_answer(body: bytes | Pieces, status: int = 200) -> Answer:
    return Answer(body, status, "application/json")


def error_document(code: int, message: str) -> bytes:
    """A plain HTTP error as JSON, as werkzeug words it: a path or method nobody serves."""
    return json.dumps({"error": {"code": code, "message": message}}).encode()


#: werkzeug's words for a 405, which the operator's app answers too.
NOT_ALLOWED = "The method is not allowed for the requested URL."


def not_allowed(allowed: str) -> Answer:
    """A 405 for a method the path does not take, with the ones it takes."""
    answer = json_answer(error_document(405, NOT_ALLOWED), 405)
    answer.headers["Allow"] = allowed
    return answer


def _piece_of(piece: bytes | memoryview) -> HTTPResponseBodyEvent:
    # A view is what hypercorn's h11 takes too (it joins the event's bytes, a copy of
    # the piece only), though its type says bytes.
    return cast(
        "HTTPResponseBodyEvent", {"type": "http.response.body", "body": piece, "more_body": True}
    )


async def _send_whole(
    status: int,
    headers: list[tuple[bytes, bytes]],
    body: bytes | Pieces,
    send: ASGISendCallable,
    room: Reservation | None,
    files_its_own: bool,
) -> None:
    """A body of known length, with its Content-Length: bytes in one event, a document's
    Pieces as slices of the buffers they hold (a file's base64 is never joined)."""
    headers.append((b"content-length", str(len(body)).encode()))
    if room is not None:
        # What the answer holds beyond what is held already (a file's base64 is sent from
        # where it is: see Answer.files_its_own), less what a read asked for already.
        held = len(body) if files_its_own or isinstance(body, bytes) else body.copied
        room.force(held - room.size)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    if isinstance(body, Pieces):
        async for piece in body:
            await send(_piece_of(piece))
        body = b""
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def send_answer(
    answer: Answer, send: ASGISendCallable, room: Reservation | None = None
) -> None:
    """Send the answer: a body of bytes with its Content-Length, a stream as it comes (each
    piece at once, a LastPiece with the body's end, the stream closed however its sending
    ends). With a `room`, each piece is held under the memory budget until written."""
    headers = [
        (name.lower().encode("latin-1"), value.encode("latin-1"))
        for name, value in answer.headers.items()
    ]
    if answer.content_type is not None:
        headers.append((b"content-type", answer.content_type.encode("latin-1")))
    body = answer.body
    if isinstance(body, bytes | Pieces):
        await _send_whole(answer.status, headers, body, send, room, answer.files_its_own)
        return
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    try:
        ended = False
        async for piece in body:
            ended = isinstance(piece, LastPiece)
            if room is not None:
                room.force(len(piece))
            await send({"type": "http.response.body", "body": piece, "more_body": not ended})
            if room is not None:
                room.give_back(len(piece))
        if not ended:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    finally:
        aclose = getattr(body, "aclose", None)
        if aclose is not None:
            # Shielded: the stream's own ending (its quota, its subscription) must run
            # when the client that read it has gone, too.
            with trio.CancelScope(shield=True):
                await aclose()
