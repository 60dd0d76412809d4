"""A gate a workflow waits at: each GET is held until the test opens it.

The streaming example workflow (n8n/workflows/stock_stream.json) calls the URL in its
`gate` query parameter after each line it streams, so a test decides when the workflow
may go on: whatever the caller reads before the test opens the gate, it read before the
workflow finished.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import trio

from tests.support.asgi import handled_lifespan, serve_on_loopback


@dataclass
class Gate:
    """Served on loopback by `serve`; `url` is what the workflow calls."""

    url: str = ""
    hits: int = 0
    _open: trio.Event = field(default_factory=trio.Event)

    @property
    def is_open(self) -> bool:
        return self._open.is_set()

    def open(self) -> None:
        """Let every held call, and every later one, through."""
        self._open.set()

    async def serve(self, nursery: trio.Nursery) -> Gate:
        self.url = await serve_on_loopback(nursery, self._app) + "/gate"
        return self

    async def _app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if await handled_lifespan(scope, receive, send):
            return
        self.hits += 1
        await self._open.wait()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": b"{}"})
