"""A request body's bytes reserved under ADAPTER_MEMORY_BUDGET before a route reads one.

A route reads its request's body whole into memory, so the reservation cannot wait for
the route's own judgement: it is taken here, around the app, before the first `receive`.
Until it is had the body stays in the socket (hypercorn reads no further than the app
asks). It is the body's Content-Length, or ADAPTER_MAX_BODY_BYTES for a chunked body,
whose length nobody knows before it is read whole; a body announced past that bound is
a 413 unread and holds nothing. A send passes the reservation on to its webhook call
(executor/calls.py gives it back when the call ends); anything else gives it back when
its route is done, and the exchange's end gives back whatever is left. A GetTask also
holds what its answer carries of the task (`delivery`), until the answer has gone out.

A request the budget had no room for within ADAPTER_MEMORY_WAIT still reaches its route,
its body read to its end and dropped as it comes: the route answers the refusal, retryable, having
done nothing (JSON-RPC -32000 with a null id, since its id was never read; HTTP+JSON 503),
with Retry-After.
"""

from __future__ import annotations

from hypercorn.typing import (
    ASGIFramework,
    ASGIReceiveCallable,
    ASGIReceiveEvent,
    ASGISendCallable,
    HTTPRequestEvent,
    HTTPScope,
    Scope,
)

from ..core.errors import AtCapacity
from ..executor import MemoryBudget, Reservation
from ..protocol.model import Message, Operation, SendMessage
from ..protocol.strict import values_in
from .exchange import Asked

#: What one JSON value of a send's message costs held as a Python object, at most (an
#: object holding an object the costliest; bench/bodies.py measures it).
VALUE_BYTES = 150
# The scope's extension where a request's reservation, or its refusal, travels to its route.
_EXTENSION = "n8n_a2a.budget"


class BudgetedBodies:
    """The app, with each request body's bytes reserved before it is read."""

    def __init__(self, app: ASGIFramework, budget: MemoryBudget, max_body_bytes: int) -> None:
        self._app = app
        self._budget = budget
        self._max_body_bytes = max_body_bytes

    async def __call__(
        self, scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable
    ) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        # What the answer carries of a kept task (a GetTask's), held until it has gone out.
        delivery = self._budget.reservation()
        extension: dict[str, object] = {"delivery": delivery}
        scope.setdefault("extensions", {})[_EXTENSION] = extension
        try:
            if size := body_size(scope, self._max_body_bytes):
                await self._admit(scope, receive, send, size, extension)
            else:
                await self._app(scope, receive, send)
        finally:
            delivery.give_back()

    async def _admit(
        self,
        scope: HTTPScope,
        receive: ASGIReceiveCallable,
        send: ASGISendCallable,
        size: int,
        extension: dict[str, object],
    ) -> None:
        try:
            held = await self._budget.reserve(size)
        except AtCapacity as refusal:
            # Without its traceback: its frames hold this scope, which would hold it, a
            # cycle that kept every refused exchange (its connection and all) until a full
            # collection.
            extension["refused"] = refusal.with_traceback(None)
            await self._app(scope, await _dropped(receive), send)
            return
        extension["held"] = held
        try:
            await self._app(scope, receive, send)
        finally:
            held.give_back()


def body_size(scope: HTTPScope, max_body_bytes: int) -> int:
    """The bytes to reserve for the request's body: its Content-Length, the bound for a
    chunked one, none for one past the bound (refused 413 unread) or without a body."""
    headers = {name.lower(): value for name, value in scope["headers"]}
    length = headers.get(b"content-length")
    if length is not None:
        try:
            size = int(length)
        except ValueError:
            return 0  # h11 refuses it before any app runs
        return size if size <= max_body_bytes else 0
    return max_body_bytes if b"transfer-encoding" in headers else 0


def _extension(asked: Asked) -> dict[str, object]:
    found: dict[str, object] = asked.scope.get("extensions", {}).get(_EXTENSION, {})
    return found


def refusal(asked: Asked) -> AtCapacity | None:
    """The budget's refusal of the request (None: it was admitted)."""
    found = _extension(asked).get("refused")
    return found if isinstance(found, AtCapacity) else None


async def held_for(asked: Asked, operation: Operation) -> Reservation | None:
    """The request body's reservation, for a send to pass on to its call; anything else
    gives it back now (its body is parsed and done with). A send's grows first by what
    its message's JSON values cost as Python objects (VALUE_BYTES each, however few bytes
    they took in the body), waiting for room as the body did: AtCapacity past the wait."""
    held = _extension(asked).get("held")
    if not isinstance(held, Reservation):
        return None
    if isinstance(operation, SendMessage):
        await held.grow(VALUE_BYTES * message_values(operation.message))
        return held
    held.give_back()
    return None


def message_values(message: Message) -> int:
    """The JSON values a message holds as Python objects for as long as its send runs or
    waits: its metadata's, and each part's metadata and data."""
    return values_in(message.json_values())


def delivery(asked: Asked) -> Reservation | None:
    """Where the request's answer holds the payload bytes of a kept task it carries."""
    found = _extension(asked).get("delivery")
    return found if isinstance(found, Reservation) else None


async def _dropped(receive: ASGIReceiveCallable) -> ASGIReceiveCallable:
    """`receive` once the body was read to its end and dropped, piece by piece: the app
    sees an empty body. Answered before its body is read, a client still sending it
    would lose the answer to the connection's close."""
    while True:
        event = await receive()
        if event["type"] != "http.request" or not event.get("more_body", False):
            break
    ended = HTTPRequestEvent(type="http.request", body=b"", more_body=False)
    first: list[ASGIReceiveEvent] = [ended if event["type"] == "http.request" else event]

    async def after() -> ASGIReceiveEvent:
        return first.pop() if first else await receive()

    return after
