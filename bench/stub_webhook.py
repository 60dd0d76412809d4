"""A fast stand-in for an n8n production webhook, for benchmarks only.

A bare asyncio protocol (on uvloop when installed) that answers every POST with
`{"answer":"ok","escalate":false}`, keep-alive, after an optional fixed delay. A
body containing SLOW_MARKER is answered after the slow delay instead, so one stub
serves both the throughput runs and the in-flight run without restarting the
servers in front of it. A body containing STREAM_MARKER is answered as n8n's Webhook node
answers in its `streaming` response mode, a chunked reply of JSON lines: `begin`, then
STREAM_ITEMS `item` lines STREAM_SPACING seconds apart, then `end`. Each item's content is
`@<time.monotonic_ns() as it was written>;`, so a client on the same machine reads how
long each took to reach it. A body containing FILE_MARKER is answered with the files it
carries (the contract's `files`) as the reply's files: a file's round trip; one holding
REPLY_MARKER and a size (`bench-reply:20971520`) with one file of that many bytes, the
same every time (`big_file`'s). A GET, any
path, is answered with how many POSTs the process has answered (`{"posts": N}`): run as a
push receiver, the stub tells the bench what was delivered; it also says when the last
slow POST reached it (`time.monotonic()`, the clock every process here shares), which
tells how long a burst of slow sends took to go out. It must cost far less than any
target: it shares a core with the load client.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import signal
import time
from typing import cast

#: A message text containing this makes the stub take --slow seconds.
SLOW_MARKER = b"bench-slow"
#: A message text containing this makes the stub stream its reply, as n8n does.
STREAM_MARKER = b"bench-stream"
#: A message text containing this makes the stub answer the files it got as its own.
FILE_MARKER = b"bench-file"
#: A message text containing this and a size makes the stub answer a file of that size.
REPLY_MARKER = b"bench-reply:"
STREAM_ITEMS = 50
STREAM_SPACING = 0.010
ANSWER = b'{"answer":"ok","escalate":false}'
_RESPONSE = (
    b"HTTP/1.1 200 OK\r\n"
    b"Content-Type: application/json\r\n"
    b"Content-Length: " + str(len(ANSWER)).encode() + b"\r\n"
    b"\r\n" + ANSWER
)


class _Webhook(asyncio.Protocol):
    """One connection: parse just enough HTTP/1.1 (headers, Content-Length) to answer."""

    #: POSTs answered (or being answered) by this process, over every connection.
    posts = 0
    #: When the last POST containing SLOW_MARKER arrived whole (time.monotonic()).
    slow_last = 0.0

    def __init__(self, delay: float, slow: float) -> None:
        self._delay = delay
        self._slow = slow
        # A bytearray, and the length of the request it holds once its head is read: a body
        # of several MiB arrives in many pieces, each added in place, no search repeated.
        self._buffer = bytearray()
        self._head = 0
        self._whole: int | None = None
        self._transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, hence no isinstance.
        self._transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        while True:
            if self._whole is None:
                end = self._buffer.find(b"\r\n\r\n")
                if end < 0:
                    return
                self._head = end + 4
                self._whole = self._head + _content_length(bytes(self._buffer[:end]))
            if len(self._buffer) < self._whole:
                return
            body = bytes(self._buffer[self._head : self._whole])
            asked = self._buffer.startswith(b"GET ")
            del self._buffer[: self._whole]
            self._whole = None
            if asked:
                self._write_now(_posts_answer())
            else:
                self._respond(body)

    def _respond(self, body: bytes) -> None:
        _Webhook.posts += 1
        if STREAM_MARKER in body:
            self._stream()
        elif FILE_MARKER in body:
            self._write_now(_files_back(body))
        elif REPLY_MARKER in body:
            self._write_now(_big_file(body))
        elif SLOW_MARKER in body:
            _Webhook.slow_last = time.monotonic()
            self._answer(self._slow)
        else:
            self._answer(self._delay)

    def _write_now(self, response: bytes) -> None:
        if self._transport is not None:
            self._transport.write(response)

    def _answer(self, delay: float) -> None:
        transport = self._transport
        if transport is None:
            return
        if delay <= 0:
            transport.write(_RESPONSE)
        else:
            asyncio.get_running_loop().call_later(delay, _write, transport)

    def _stream(self) -> None:
        transport = self._transport
        if transport is None:
            return
        transport.write(_STREAM_HEAD + _chunk("begin"))
        asyncio.get_running_loop().call_later(STREAM_SPACING, _write_item, transport, 0)


#: The head n8n 2.41's Webhook node writes in streaming mode.
_STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\n"
    b"Content-Type: application/json; charset=utf-8\r\n"
    b"Transfer-Encoding: chunked\r\n"
    b"Cache-Control: no-cache\r\n"
    b"\r\n"
)


def _chunk(kind: str, content: str | None = None) -> bytes:
    """One of n8n's lines (`JSON.stringify(chunk) + "\\n"`) as one HTTP chunk."""
    metadata = {"nodeId": "bench", "nodeName": "AI Agent", "itemIndex": 0, "runIndex": 0}
    document: dict[str, object] = {"type": kind}
    if content is not None:
        document["content"] = content
    document["metadata"] = {**metadata, "timestamp": int(time.time() * 1000)}
    line = json.dumps(document, separators=(",", ":")).encode() + b"\n"
    return b"%x\r\n%s\r\n" % (len(line), line)


def _write_item(transport: asyncio.Transport, index: int) -> None:
    if transport.is_closing():
        return
    transport.write(_chunk("item", f"@{time.monotonic_ns()};"))
    if index + 1 < STREAM_ITEMS:
        asyncio.get_running_loop().call_later(STREAM_SPACING, _write_item, transport, index + 1)
    else:
        transport.write(_chunk("end") + b"0\r\n\r\n")


def _files_back(body: bytes) -> bytes:
    """The response whose reply files are the request's files."""
    files = json.loads(body).get("files", [])
    answer = json.dumps({"answer": "ok", "escalate": False, "files": files}).encode()
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
    return head % len(answer) + answer


def big_file(size: int) -> bytes:
    """`size` bytes that do not compress, the same for the stub and the checker."""
    return hashlib.shake_256(b"n8n-a2a bench big file").digest(size)


def _big_file(body: bytes) -> bytes:
    """The response whose reply file has the size the message asks (REPLY_MARKER)."""
    at = body.index(REPLY_MARKER) + len(REPLY_MARKER)
    size = int(body[at : at + 12].split(b'"')[0])
    file = {"name": "big.bin", "mediaType": "application/octet-stream"}
    file["base64"] = base64.b64encode(big_file(size)).decode()
    answer = json.dumps({"answer": "ok", "escalate": False, "files": [file]}).encode()
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
    return head % len(answer) + answer


def _posts_answer() -> bytes:
    answer = b'{"posts":%d,"slow_last":%.6f}' % (_Webhook.posts, _Webhook.slow_last)
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
    return head % len(answer) + answer


def _write(transport: asyncio.Transport) -> None:
    if not transport.is_closing():
        transport.write(_RESPONSE)


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


async def serve(host: str, port: int, delay: float, slow: float) -> None:
    """Serve until SIGTERM or SIGINT; print the bound port on the first line of stdout."""
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: _Webhook(delay, slow), host, port, backlog=4096, reuse_address=True
    )
    print(server.sockets[0].getsockname()[1], flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument(
        "--slow", type=float, default=2.0, help=f"seconds for a body containing {SLOW_MARKER!r}"
    )
    arguments = parser.parse_args()
    coroutine = serve(arguments.host, arguments.port, arguments.delay, arguments.slow)
    try:
        # In the bench venv; the project's dev venv, which type-checks this, has no uvloop.
        import uvloop  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        asyncio.run(coroutine)
    else:
        uvloop.run(coroutine)


if __name__ == "__main__":
    main()
