"""A request's bytes under ADAPTER_MEMORY_BUDGET, charged to its caller as they come.

Nothing is charged ahead: a request's reservation is made once its caller is known (its
token verified, when one is required: an unverified caller's bytes are never charged,
so it can release nothing), and its body is charged piece by piece as the route reads
it (exchange.py's `Asked.body`). A body announced past ADAPTER_MAX_BODY_BYTES is a 413
unread. A send passes its reservation on to its webhook call (executor/calls.py gives
it back when the call ends); anything else gives it back once its body is parsed, and
the exchange's end gives back whatever is left (front.py).

An answer is charged too, until written (`answer_room`): a copy already made is held at
once (a send's, an event of a stream), making new requests wait while slow readers hold
it; a GetTask's or ListTasks's answer first asks for its tasks' bytes as a read, within
its caller's share alone, so that a caller reading slowly cannot hold more than its share.

A body the budget had no room for within ADAPTER_MEMORY_WAIT is read to its end and
dropped; the route answers the refusal, retryable, having done nothing (JSON-RPC -32000
with a null id, since its id was never read; HTTP+JSON 503), with Retry-After.
"""

from __future__ import annotations

from ..budget import Reservation, caller_key
from ..core.owners import Owner
from ..protocol.model import Message, Operation, SendMessage
from ..protocol.strict import values_in
from .edge import Edge
from .exchange import Asked

#: What one JSON value of a send's message costs held as a Python object, at most (an
#: object holding an object the costliest; bench/probes/bodies.py measures it).
VALUE_BYTES = 150


def room(edge: Edge, asked: Asked, owner: Owner) -> Reservation | None:
    """The request's reservation for its verified `owner` (its client's address when
    anonymous), made once: what its body is charged to as it is read."""
    if edge.budget is None:
        return None
    if asked.held is None:
        asked.held = edge.budget.reservation(caller_key(owner, asked.peer))
    return asked.held


def answer_room(edge: Edge, asked: Asked) -> Reservation | None:
    """Where the request's answer is held until written, for the request's caller (None
    for a caller not verified: its answer is a refusal, and nothing of its is charged)."""
    if edge.budget is None or asked.held is None:
        return None
    if asked.answer is None:
        asked.answer = edge.budget.reservation(asked.held.caller)
    return asked.answer


async def held_for(asked: Asked, operation: Operation) -> Reservation | None:
    """The request body's reservation, for a send to pass on to its call; anything else
    gives it back now (its body is parsed and done with). A send's grows first by what
    its message's JSON values cost as Python objects (VALUE_BYTES each, however few bytes
    they took in the body), waiting for room as the body did: AtCapacity past the wait."""
    held = asked.held
    if held is None:
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
