"""A streamed reply: the stub writes STREAM_ITEMS items STREAM_SPACING apart, as n8n's
Webhook node does in its `streaming` response mode, and a client reads them through the
target: how long each item takes from the stub writing it to the client reading it, and
the server's CPU per item, over a streaming send (SSE) and a blocking send of the same
reply.

Each item's content is the CLOCK_MONOTONIC time the stub wrote it (`@<ns>;`), a clock
every process on the machine shares: the client notes when it first reads each one.
"""

from __future__ import annotations

import os
import re
import socket
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager

from figures import Sample
from procs import cpu_seconds_of
from stub_webhook import STREAM_ITEMS, STREAM_MARKER
from wire import A2A_HEADERS, JSON_HEADERS, fresh, post_request, send_message_body, webhook_body

_STAMP = re.compile(rb"@(\d+);")


@contextmanager
def _on_core(core: str) -> Iterator[None]:
    """This process on the clients' core while it reads, as wrk is."""
    was = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {int(core)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, was)


def streamed_reply(port: int, replies: int, pid: int, core: str) -> Sample:
    """`replies` streamed replies one after another, over SSE then over a blocking send,
    through the server `pid` serving on `port` with ADAPTER_WEBHOOK_STREAMING=true."""
    sample: Sample = {}
    for name, method in (("chunk", "SendStreamingMessage"), ("chunk_block", "SendMessage")):
        body = send_message_body(STREAM_MARKER.decode(), method)
        used = cpu_seconds_of(pid)
        with _on_core(core):
            lags = [lag for _ in range(replies) for lag in _read_one(port, "/", body, A2A_HEADERS)]
        cpu_ms = 1000 * (cpu_seconds_of(pid) - used) / max(replies * STREAM_ITEMS, 1)
        sample.update(_percentiles(name, lags, replies))
        sample[f"{name}_cpu_ms"] = cpu_ms if sample[f"{name}_p50_ms"] is not None else None
    return sample


def streamed_reply_direct(port: int, path: str, replies: int, core: str) -> Sample:
    """The same reply read from the stub itself: the floor no server can go under."""
    body = webhook_body(STREAM_MARKER.decode())
    with _on_core(core):
        lags = [
            lag
            for _ in range(replies)
            for lag in _read_one(port, path, body, JSON_HEADERS, to_close=False)
        ]
    return _percentiles("chunk", lags, replies)


def _percentiles(name: str, lags: list[float], replies: int) -> Sample:
    if len(lags) < replies * STREAM_ITEMS:  # a reply came short: no figure, not a wrong one
        return {f"{name}_p50_ms": None, f"{name}_p99_ms": None}
    cuts = statistics.quantiles(lags, n=100)
    return {f"{name}_p50_ms": cuts[49], f"{name}_p99_ms": cuts[98]}


def _read_one(
    port: int, path: str, body: bytes, headers: dict[str, str], *, to_close: bool = True
) -> list[float]:
    """One reply, read as it comes until the server closes the connection (the stub keeps
    it open: until its last item): each item's ms from written to read."""
    read_at: dict[int, int] = {}
    received = b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        # A new message each time (n8n-a2a runs one sent again once): wire.fresh.
        connection.sendall(post_request(path, fresh(body), {"Connection": "close", **headers}))
        while to_close or len(read_at) < STREAM_ITEMS:
            data = connection.recv(65536)
            now = time.monotonic_ns()
            if not data:
                break
            # An item may be split across two reads: look again from the last stamp's start.
            start = max(0, len(received) - 32)
            received += data
            for match in _STAMP.finditer(received, start):
                read_at.setdefault(int(match[1]), now)
    return [(read - written) / 1e6 for written, read in read_at.items()]
