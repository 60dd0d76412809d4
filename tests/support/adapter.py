"""The real adapter in the tests: its settings, a port for it, waiting until it serves,
blocking sends left running in the background, and plain GETs of its endpoints.

The fixtures that start it (`start_adapter`, `adapter`) are in tests/conftest.py.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httpx
import trio

from n8n_a2a.config import Settings
from tests.support.jsonrpc import V1, rpc, send_v1

#: The `start_adapter` fixture: `await start_adapter(webhook_url, **overrides)`, the
#: adapter's public URL.
AdapterFactory = Callable[..., Any]


def make_settings(webhook_url: str = "http://127.0.0.1:9/webhook", **overrides: Any) -> Settings:
    settings = Settings(
        agent_name="Supply agent",
        agent_description="Checks availability of supplies.",
        skill_id="check_availability",
        skill_name="Check availability",
        skill_description="Says whether an item is in stock.",
        skill_examples=("Are there 4 pallets of flour?",),
        webhook_url=webhook_url,
        public_url="http://127.0.0.1:1/",
        host="127.0.0.1",
        port=0,
        webhook_timeout=5.0,
    )
    return replace(settings, **overrides)


def free_port() -> int:
    """A port free now on 127.0.0.1: the card must name the port before the server binds."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def wait_until_serving(adapter: str) -> None:
    """Wait (20 s at most) until the adapter at `adapter` answers for its card."""
    with trio.fail_after(20):
        async with httpx.AsyncClient() as client:
            while True:
                try:
                    await client.get(adapter + ".well-known/agent-card.json")
                    return
                except httpx.TransportError:
                    await trio.sleep(0.05)


class Pending:
    """A blocking send under way in the background."""

    def __init__(self) -> None:
        self.done = trio.Event()
        self.reply: dict[str, Any] = {}

    async def answer(self) -> dict[str, Any]:
        with trio.fail_after(5):
            await self.done.wait()
        return self.reply


def send_in_background(nursery: trio.Nursery, adapter: str, text: str) -> Pending:
    """Start a blocking v1.0 send of `text` in `nursery`; its reply comes to the Pending."""
    pending = Pending()

    async def blocking_send() -> None:
        pending.reply = await rpc(adapter, send_v1(text), V1)
        pending.done.set()

    nursery.start_soon(blocking_send)
    return pending


async def get(url: str, **headers: str) -> httpx.Response:
    """A plain GET (health, readiness, metrics, the card)."""
    async with httpx.AsyncClient() as client:
        return await client.get(url, headers=headers)
