"""A push notification receiver, served for real on a loopback address, that the test scripts.

It records every POST (path, headers, body) and answers each with the next of
`statuses` (200 once they run out); `hold` makes it never answer; a 3xx carries
`location`. Like a chat bridge's ingress, but obedient.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from tests.support.asgi import handled_lifespan, lower_headers, read_body, serve_on_loopback

Scope = dict[str, Any]


@dataclass
class Delivery:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class PushReceiver:
    base_url: str = ""
    received: list[Delivery] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    hold: bool = False
    location: str = "http://127.0.0.1:9/elsewhere"
    held: int = 0
    _changed: trio.Event = field(default_factory=trio.Event)

    @property
    def url(self) -> str:
        return f"{self.base_url}/hook"

    @property
    def port(self) -> int:
        return int(self.base_url.rsplit(":", 1)[1])

    def bodies(self) -> list[Any]:
        return [delivery.json for delivery in self.received]

    async def wait_received(self, count: int = 1) -> None:
        await self._wait_until(lambda: len(self.received) >= count)

    async def wait_held(self, count: int = 1) -> None:
        await self._wait_until(lambda: self.held >= count)

    async def _wait_until(self, reached: Callable[[], bool]) -> None:
        while not reached():
            await self._changed.wait()

    def _note(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if await handled_lifespan(scope, receive, send):
            return
        body = await read_body(receive)
        headers = lower_headers(scope)
        self.received.append(Delivery(scope["path"], headers, body))
        if self.hold:
            self.held += 1
            self._note()
            while (await receive())["type"] != "http.disconnect":
                pass
            return
        status = self.statuses.pop(0) if self.statuses else 200
        extra = [(b"location", self.location.encode())] if 300 <= status < 400 else []
        await send({"type": "http.response.start", "status": status, "headers": extra})
        await send({"type": "http.response.body", "body": b""})
        self._note()


async def start_push_receiver(
    nursery: trio.Nursery,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    certfile: str | None = None,
    keyfile: str | None = None,
) -> PushReceiver:
    """Serve a new receiver on host:port (a free port by default), over TLS when given a
    certificate."""
    receiver = PushReceiver()
    receiver.base_url = await serve_on_loopback(
        nursery, receiver, host=host, port=port, certfile=certfile, keyfile=keyfile
    )
    return receiver
