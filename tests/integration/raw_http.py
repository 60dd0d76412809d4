"""Raw HTTP/1.1 over a socket, for the tests that must send what no client library would:
bytes out as given, responses parsed with h11."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import h11
import trio

from tests.support.adapter import AdapterFactory
from tests.support.stub_webhook import StubWebhook

# Short timeouts keep the suite fast; every wait below is bounded well above them, so a
# connection that is never closed fails the test instead of hanging it.
SHORT = 0.5
BOUND = 10.0


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> dict[str, Any]:
        document: dict[str, Any] = json.loads(self.body)
        return document


class Client:
    """One raw connection: bytes out as given, responses parsed with h11."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.parser = h11.Connection(h11.CLIENT)

    @classmethod
    async def open(cls, url: str) -> Client:
        address = urlsplit(url)
        return cls(await trio.open_tcp_stream(address.hostname or "", address.port or 80))

    async def send(self, data: bytes) -> None:
        await self.stream.send_all(data)

    async def reply(self) -> Reply:
        """The next response on the connection."""
        status, headers, body = 0, {}, b""
        with trio.fail_after(BOUND):
            while True:
                event = self.parser.next_event()
                if event is h11.NEED_DATA:
                    self.parser.receive_data(await self.stream.receive_some())
                elif isinstance(event, h11.Response):
                    status = event.status_code
                    headers = {k.decode().lower(): v.decode() for k, v in event.headers}
                elif isinstance(event, h11.Data):
                    body += event.data
                elif isinstance(event, h11.EndOfMessage):
                    # The requests went out raw, so h11 cannot start a next cycle:
                    # a new parser takes the bytes already received.
                    leftover, _ = self.parser.trailing_data
                    self.parser = h11.Connection(h11.CLIENT)
                    if leftover:  # (h11 takes b"" for the end of the stream)
                        self.parser.receive_data(leftover)
                    return Reply(status, headers, body)
                else:
                    raise AssertionError(f"no response, got {event!r}")

    async def closed_by_server(self) -> float:
        """Seconds until the server closes the connection; fails after BOUND."""
        started = trio.current_time()
        with trio.fail_after(BOUND):
            while True:
                try:
                    data = await self.stream.receive_some()
                except trio.BrokenResourceError:  # a reset is a close too
                    break
                assert data == b"" or not data.strip(), f"unexpected bytes {data!r}"
                if not data:
                    break
        return trio.current_time() - started

    async def everything(self) -> bytes:
        """All the bytes the server sends until it closes or resets the connection; fails
        after BOUND."""
        received = b""
        with trio.fail_after(BOUND):
            while True:
                try:
                    data = await self.stream.receive_some()
                except trio.BrokenResourceError:  # a reset is a close too
                    return received
                if not data:
                    return received
                received += data

    async def aclose(self) -> None:
        await self.stream.aclose()


def get(path: str, *headers: str) -> bytes:
    lines = [f"GET {path} HTTP/1.1", "Host: adapter", *headers, "", ""]
    return "\r\n".join(lines).encode()


def post_head(path: str, length: int, *headers: str) -> bytes:
    lines = [
        f"POST {path} HTTP/1.1",
        "Host: adapter",
        "Content-Type: application/json",
        f"Content-Length: {length}",
        *headers,
        "",
        "",
    ]
    return "\r\n".join(lines).encode()


def post(path: str, body: bytes, *headers: str) -> bytes:
    return post_head(path, len(body), *headers) + body


async def start(stub: StubWebhook, start_adapter: AdapterFactory, **overrides: Any) -> str:
    settings: dict[str, Any] = {"keep_alive_timeout": SHORT, "request_read_timeout": SHORT}
    url: str = await start_adapter(stub.url, **{**settings, **overrides})
    return url
