"""A reply streamed as n8n's JSON lines (ADAPTER_WEBHOOK_STREAMING), read as it arrives.

chunks.py judges each line; this reads them off the connection and hands on the text
that may be relayed, once per read (a read of many lines is one relay, so a burst of
tokens is one event, not one per token). The call's one deadline
(ADAPTER_WEBHOOK_TIMEOUT) bounds the whole stream, so a stream that stops writing for
that long ends TIMEOUT; a cancel or shutdown cuts the read, and leaving the response's
context closes the connection to n8n at once. Memory stays bounded: a line's length, the
text gathered (chunks.MAX_STREAMED_TEXT_BYTES) and the raw bytes kept to show.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

from ..chunks import ChunkReader
from ..outcome import StreamedReply

#: Where the text of a streamed reply goes as it comes (the executor's relay to streams).
Relay = Callable[[str], None]


async def read_stream(
    reply: httpx.Response, subject_token: str | None, relay: Relay | None
) -> StreamedReply:
    """The reply's chunks, read until the stream ends or goes wrong."""
    reader = ChunkReader()
    async for data in reply.aiter_raw():
        reader.feed(data)
        if reader.stopped:
            break  # the rest is not read: the response's close drops the connection
        text = reader.relayable()
        if text and relay is not None:
            relay(text)
    return reader.reply(reply.status_code, subject_token)
