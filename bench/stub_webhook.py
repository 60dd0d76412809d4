"""A fast stand-in for an n8n production webhook, for benchmarks only.

A bare asyncio protocol (on uvloop when installed) that answers every POST with
`{"answer":"ok","escalate":false}`, keep-alive, after an optional fixed delay. A
body containing SLOW_MARKER is answered after the slow delay instead, so one stub
serves both the throughput runs and the in-flight run without restarting the
servers in front of it. It must cost far less than any target: it shares a core
with the load client.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from typing import cast

#: A message text containing this makes the stub take --slow seconds.
SLOW_MARKER = b"bench-slow"
ANSWER = b'{"answer":"ok","escalate":false}'
_RESPONSE = (
    b"HTTP/1.1 200 OK\r\n"
    b"Content-Type: application/json\r\n"
    b"Content-Length: " + str(len(ANSWER)).encode() + b"\r\n"
    b"\r\n" + ANSWER
)


class _Webhook(asyncio.Protocol):
    """One connection: parse just enough HTTP/1.1 (headers, Content-Length) to answer."""

    def __init__(self, delay: float, slow: float) -> None:
        self._delay = delay
        self._slow = slow
        self._buffer = b""
        self._transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, hence no isinstance.
        self._transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        while True:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            length = _content_length(self._buffer[:end])
            whole = end + 4 + length
            if len(self._buffer) < whole:
                return
            body = self._buffer[end + 4 : whole]
            self._buffer = self._buffer[whole:]
            self._answer(self._slow if SLOW_MARKER in body else self._delay)

    def _answer(self, delay: float) -> None:
        transport = self._transport
        if transport is None:
            return
        if delay <= 0:
            transport.write(_RESPONSE)
        else:
            asyncio.get_running_loop().call_later(delay, _write, transport)


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
