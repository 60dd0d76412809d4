"""A reply streamed as n8n's JSON lines (ADAPTER_WEBHOOK_STREAMING), read as it arrives.

core/chunks.py judges each line; this reads them off the connection and hands on the text
that may be relayed. The relay runs beside the reading, woken by each piece read, and
relays all the text there is, then waits RELAY_SPACING: a burst of tokens (however many
HTTP chunks, each a piece) is one event, not one per token, so a subscriber is not
flooded past its buffer, and the reading yields every CHECKPOINT_PIECES pieces, so that
a burst of pieces already received cannot hold the loop.
The call's one deadline (ADAPTER_WEBHOOK_TIMEOUT) bounds the whole stream, so a stream
that stops writing for that long ends TIMEOUT; a cancel or shutdown cuts the read, and
leaving the response's context closes the connection to n8n at once. Memory stays
bounded: a line's length, the text gathered (ADAPTER_MAX_REPLY_BYTES) and the raw bytes
kept to show; what the reader holds is taken from the reply's room under
ADAPTER_MEMORY_BUDGET as it grows.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING

import trio

from ..core.chunks import ChunkReader
from ..core.replies import StreamedReply
from .reading import Relay, ReplyRoom

if TYPE_CHECKING:
    from .pool import Reply

#: Pieces read before the reading yields to the scheduler: pieces already received come
#: without a wait, and a burst of thousands of tiny ones must not keep /healthz waiting.
CHECKPOINT_PIECES = 256
#: The least time between two relays of one reply: what arrives meanwhile is one relay,
#: so a task's events come at most 50 a second however its workflow writes (a subscriber
#: may fall 64 behind before it is dropped), and a token waits 20 ms at most.
RELAY_SPACING = 0.02


async def read_stream(
    reply: Reply,
    subject_token: str | None,
    relay: Relay | None,
    max_text_bytes: int,
    room: ReplyRoom | None = None,
) -> StreamedReply:
    """The reply's chunks, read until the stream ends or goes wrong; `max_text_bytes`: the
    most text gathered (ADAPTER_MAX_REPLY_BYTES); `room`: where what the reader holds is
    taken from (its AtCapacity ends the read)."""
    reader = ChunkReader(max_text_bytes)
    if relay is None:
        await _read(reply, reader, lambda: None, room)
        return reader.reply(reply.status, subject_token)
    # A wake-up for the relay: one pending is enough, it relays all there is.
    woken, wakes = trio.open_memory_channel[None](1)

    def heard() -> None:
        # A wake-up pending already will relay this too.
        with suppress(trio.WouldBlock):
            woken.send_nowait(None)

    failed: Exception | None = None
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_relaying, reader, relay, wakes)
        try:
            await _read(reply, reader, heard, room)
        except Exception as error:
            # Out of the nursery as it came (no exception group), for the client to judge.
            failed = error
        nursery.cancel_scope.cancel()  # its spacing is no reason to wait
    if failed is not None:
        raise failed
    _relay(reader, relay)  # what came since the last relay, before the reply is judged
    return reader.reply(reply.status, subject_token)


async def _read(
    reply: Reply,
    reader: ChunkReader,
    heard: Callable[[], None],
    room: ReplyRoom | None,
) -> None:
    """Feed the reader every piece, until the stream ends or stops; `heard` after each."""
    pieces = taken = 0
    async for data in reply:
        reader.feed(data)
        if room is not None and reader.held_bytes > taken:
            await room.take(reader.held_bytes - taken)
            taken = reader.held_bytes
        if reader.stopped:
            return  # the rest is not read: the response's close drops the connection
        heard()
        pieces += 1
        if pieces % CHECKPOINT_PIECES == 0:
            await trio.lowlevel.checkpoint()


async def _relaying(
    reader: ChunkReader, relay: Relay, wakes: trio.MemoryReceiveChannel[None]
) -> None:
    """Relay what there is each time the reading wakes it, RELAY_SPACING apart at least."""
    async for _ in wakes:
        _relay(reader, relay)
        await trio.sleep(RELAY_SPACING)


def _relay(reader: ChunkReader, relay: Relay) -> None:
    text = reader.relayable()
    if text:
        relay(text)
