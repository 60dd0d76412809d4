"""Two adapter processes on one PostgreSQL, driven from outside: the official client, plain
JSON-RPC for load, SIGKILL and SIGTERM for the processes, a database stopped under them."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import trio
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory

from tests.support.adapter import free_port

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Replica:
    """One `n8n-a2a` process, started with its own port and the shared store URL."""

    url: str
    process: trio.Process
    log: Path

    async def stop(self, sig: int = signal.SIGTERM) -> int:
        self.process.send_signal(sig)
        with trio.fail_after(30):
            return await self.process.wait()


async def start_replica(
    webhook_url: str, store_url: str, log_dir: Path, **settings: str
) -> Replica:
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    environ = {
        **os.environ,
        "ADAPTER_AGENT_NAME": "Supply agent",
        "ADAPTER_AGENT_DESCRIPTION": "Checks supplies.",
        "ADAPTER_SKILL_ID": "check_availability",
        "ADAPTER_SKILL_NAME": "Check availability",
        "ADAPTER_SKILL_DESCRIPTION": "Whether an item is in stock.",
        "ADAPTER_WEBHOOK_URL": webhook_url,
        "ADAPTER_PUBLIC_URL": url,
        "ADAPTER_HOST": "127.0.0.1",
        "ADAPTER_PORT": str(port),
        "ADAPTER_STORE_URL": store_url,
        "ADAPTER_SHUTDOWN_GRACE": "2",
        "ADAPTER_LOG_FORMAT": "json",
        **settings,
    }
    log = log_dir / f"replica-{port}.log"
    with open(log, "wb") as sink:  # noqa: ASYNC230 - the child's log, opened once
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "n8n_a2a"], env=environ, stdout=sink, stderr=sink, cwd=ROOT
        )
    replica = Replica(url, process, log)
    async with httpx.AsyncClient() as http:
        with trio.fail_after(30):
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"the replica exited: {log.read_text()[-2000:]}")
                try:
                    if (await http.get(url + "readyz")).status_code == 200:
                        return replica
                except httpx.TransportError:
                    pass
                await trio.sleep(0.05)


async def with_client(
    url: str, work: Callable[[Client], Awaitable[T]], *, streaming: bool = False
) -> T:
    """Run `work` with the official a2a-sdk client of the agent at `url`, on asyncio in a
    worker thread (the SDK's loop), as another process would."""

    async def run() -> T:
        async with httpx.AsyncClient(timeout=30) as http:
            card = await A2ACardResolver(http, url).get_agent_card()
            client = ClientFactory(ClientConfig(streaming=streaming, httpx_client=http)).create(
                card
            )
            try:
                return await work(client)
            finally:
                await client.close()

    return await trio.to_thread.run_sync(asyncio.run, run())


async def rpc(url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One v1.0 JSON-RPC call; the whole response (result or error)."""
    body = {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params}
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(url, json=body, headers={"A2A-Version": "1.0"})
    answer: dict[str, Any] = response.json()
    return answer
