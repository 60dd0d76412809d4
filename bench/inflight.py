"""Fire N concurrent POSTs at once, one connection each, and time them until all are done.

For the in-flight test: N blocking sends against a slow webhook. A bare asyncio client
(on uvloop when installed) over raw sockets, so the client's own cost stays flat with
N and is no part of what is measured. Prints one JSON line; every wait is bounded by
--timeout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from wire import fresh


@dataclass
class Result:
    """What the run came to: how many answered as expected, and when."""

    sent: int
    #: When the clock started, by time.monotonic() (the stub webhook's clock too).
    began_at: float = 0.0
    done: int = 0
    failed: int = 0
    connect_s: float = 0.0
    done_s: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)

    def note_error(self, error: str) -> None:
        self.failed += 1
        self.errors[error] = self.errors.get(error, 0) + 1

    def summary(self, timeout: float) -> dict[str, object]:
        return {
            "sent": self.sent,
            "done": self.done,
            "failed": self.failed,
            "timed_out": self.sent - self.done - self.failed,
            "connect_s": round(self.connect_s, 3),
            "began_at": self.began_at,
            "all_done_s": round(max(self.done_s), 3) if self.done == self.sent else None,
            "last_done_s": round(max(self.done_s), 3) if self.done_s else None,
            "p50_s": round(statistics.median(self.done_s), 3) if self.done_s else None,
            "timeout_s": timeout,
            "errors": self.errors,
        }


Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def _exchange(streams: Streams, request: bytes, expect: bytes, start: float) -> float:
    """Send one request, read its whole reply; return when it was done, or raise why not."""
    reader, writer = streams
    try:
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        status = head.split(b" ", 2)[1]
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        body = await reader.readexactly(length)
        if status != b"200":
            raise ValueError(f"HTTP {status.decode()}")
        if expect not in body:
            raise ValueError("unexpected body: " + body[:120].decode(errors="replace"))
        return time.perf_counter() - start
    finally:
        writer.close()


async def run(
    url: str, body: bytes, headers: dict[str, str], expect: bytes, count: int, bound_s: float
) -> Result:
    """Connect `count` sockets, then send on all at once; `bound_s` bounds each phase."""
    address = urlsplit(url)
    host, port = address.hostname or "127.0.0.1", address.port or 80
    head = (
        f"POST {address.path or '/'} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        + "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        + f"Content-Length: {len(body)}\r\n\r\n"
    )
    result = Result(sent=count)
    # Connecting is timed apart: the clock starts when every request can go out at once.
    began = time.perf_counter()
    connecting = [asyncio.ensure_future(asyncio.open_connection(host, port)) for _ in range(count)]
    await asyncio.wait(connecting, timeout=bound_s)
    start = time.perf_counter()
    result.began_at = time.monotonic()
    result.connect_s = start - began
    exchanges = []
    for attempt in connecting:
        if not attempt.done():
            attempt.cancel()
            result.note_error("connect timeout")
        elif attempt.exception() is not None:
            result.note_error(type(attempt.exception()).__name__)
        else:
            # Each a new message: n8n-a2a runs a message sent again only once.
            request = head.encode() + fresh(body)
            exchanges.append(
                asyncio.ensure_future(_exchange(attempt.result(), request, expect, start))
            )
    finished, pending = (
        await asyncio.wait(exchanges, timeout=bound_s) if exchanges else (set(), set())
    )
    for exchange in pending:
        exchange.cancel()
    for exchange in finished:
        error = exchange.exception()
        if error is None:
            result.done += 1
            result.done_s.append(exchange.result())
        else:
            result.note_error(str(error) if isinstance(error, ValueError) else type(error).__name__)
    if pending:
        await asyncio.wait(pending)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url")
    parser.add_argument("--body-file", required=True)
    parser.add_argument("--header", action="append", default=[], help="Name: value")
    parser.add_argument("--expect", default="", help="a substring every good answer holds")
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--timeout", type=float, default=20.0)
    arguments = parser.parse_args()
    with open(arguments.body_file, "rb") as file:
        body = file.read()
    headers = dict(header.split(": ", 1) for header in arguments.header)
    coroutine = run(
        arguments.url,
        body,
        headers,
        arguments.expect.encode(),
        arguments.count,
        arguments.timeout,
    )
    try:
        # In the bench venv; the project's dev venv, which type-checks this, has no uvloop.
        import uvloop  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        result = asyncio.run(coroutine)
    else:
        result = uvloop.run(coroutine)
    print(json.dumps(result.summary(arguments.timeout)), flush=True)


if __name__ == "__main__":
    main()
