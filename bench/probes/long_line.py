"""One long streamed line in many small pieces: what it costs, and how long it holds the loop.

A streamed reply's line of 2,000,000 bytes (an item, well under the line bound, twice
ADAPTER_MAX_REPLY_BYTES) comes as 200,000 pieces of 10 bytes. Prints two figures each run:

- `reader`: the process CPU seconds of chunks.ChunkReader fed the pieces one by one;
- `driver`: the same line served over HTTP as 200,000 chunks of the chunked encoding by a
  server in this process, read through WebhookClient (webhook/streamed_reply.py): the process
  CPU seconds of the read, and the longest the event loop went without running a task
  that wakes every 10 ms (what a `/healthz` meanwhile would wait, at least).

Measures whichever n8n_a2a is imported (PYTHONPATH picks another tree), in the dev venv:
`.venv/bin/python bench/probes/long_line.py`.
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import trio
from webhook_cpu import client_settings

from n8n_a2a.auth.caller import Caller
from n8n_a2a.config.settings import MAX_PAYLOAD_BYTES
from n8n_a2a.core.chunks import ChunkReader
from n8n_a2a.core.replies import StreamedReply
from n8n_a2a.webhook import WebhookClient, WebhookRequest

PIECE = 10


def the_line(pieces: int) -> bytes:
    """An item line of `pieces` * PIECE bytes, its newline the last byte."""
    head, tail = b'{"type":"item","content":"', b'"}\n'
    return head + b"x" * (pieces * PIECE - len(head) - len(tail)) + tail


def reader_seconds(line: bytes) -> float:
    reader = ChunkReader(MAX_PAYLOAD_BYTES)
    start = time.process_time()
    for at in range(0, len(line), PIECE):
        reader.feed(line[at : at + PIECE])
    reader.reply(200, None)
    return time.process_time() - start


def chunked(line: bytes) -> list[bytes]:
    """`line` in the chunked encoding, PIECE bytes a chunk, a thousand chunks a write."""
    chunks = [b"%x\r\n%s\r\n" % (PIECE, line[at : at + PIECE]) for at in range(0, len(line), PIECE)]
    return [b"".join(chunks[at : at + 1000]) for at in range(0, len(chunks), 1000)]


async def serve_chunked(stream: trio.SocketStream, writes: list[bytes]) -> None:
    """Answer one request with the chunks' writes, then end."""
    request = b""
    while b"\r\n\r\n" not in request:
        request += await stream.receive_some(65536)
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n"
    await stream.send_all(head + b"connection: close\r\n\r\n")
    for write in writes:
        await stream.send_all(write)
    await stream.send_all(b"0\r\n\r\n")
    await stream.aclose()


async def driver_seconds(line: bytes) -> tuple[float, float]:
    """CPU seconds of the read, and the longest stall of a 10 ms ticker meanwhile."""
    longest = 0.0
    writes = chunked(line)
    async with trio.open_nursery() as nursery:
        [listener] = await nursery.start(
            partial(trio.serve_tcp, partial(serve_chunked, writes=writes), 0, host="127.0.0.1")
        )
        port = listener.socket.getsockname()[1]

        async def ticker() -> None:
            nonlocal longest
            while True:
                before = trio.current_time()
                await trio.sleep(0.01)
                longest = max(longest, trio.current_time() - before - 0.01)

        nursery.start_soon(ticker)
        await trio.sleep(0.05)
        url = f"http://127.0.0.1:{port}/webhook/bench"
        settings = client_settings(url, webhook_streaming=True, webhook_timeout=600.0)
        request = WebhookRequest("long line", "t-1", "c-1", "m-1", "bench")
        start = time.process_time()
        async with WebhookClient(settings) as client:
            reply = await client.call(request, Caller(), lambda _text: None)
        used = time.process_time() - start
        if not isinstance(reply, StreamedReply):
            raise RuntimeError(f"the read ended {reply!r}")
        nursery.cancel_scope.cancel()
    return used, longest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pieces", type=int, default=200_000)
    pieces = parser.parse_args().pieces
    line = the_line(pieces)
    print(f"reader: {reader_seconds(line):.2f} s of CPU for {pieces} pieces of {PIECE} bytes")
    used, longest = trio.run(driver_seconds, line)
    print(f"driver: {used:.2f} s of CPU; the loop held for {longest:.3f} s at most")


if __name__ == "__main__":
    main()
