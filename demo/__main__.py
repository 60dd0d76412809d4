"""`python -m demo`: start the example workflow and the adapter, then talk to it over A2A.

The adapter runs as its own process, configured by environment only, exactly as the
`n8n-a2a` command runs in production; the caller is the official a2a-sdk client.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, TaskState

from demo.example_workflow import serve_workflow

CONVERSATION = [
    ("Are there 4 pallets of flour?", "demo-token"),
    ("And 2 pallets of sugar?", "demo-token"),
    ("Then 30 pallets of yeast, please.", "demo-token"),
    ("Send me the stock report.", "demo-token"),
    ("Are there 4 pallets of flour?", None),
]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def talk(base_url: str) -> None:
    context_id = str(uuid.uuid4())
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        print(f"Agent Card: {card.name!r}, skill {card.skills[0].id!r}")
        client = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card)
        for text, token in CONVERSATION:
            message = Message(
                role=Role.ROLE_USER,
                message_id=str(uuid.uuid4()),
                context_id=context_id,
                parts=[Part(text=text)],
            )
            http.headers.pop("Authorization", None)
            if token:
                http.headers["Authorization"] = f"Bearer {token}"
            [event] = [e async for e in client.send_message(SendMessageRequest(message=message))]
            task = event.task
            said = task.status.message.parts[0].text if task.status.message.parts else ""
            print(f"\n> {text}{'' if token else '   (sent without a token)'}")
            print(f"  {TaskState.Name(task.status.state)}: {said}")
        again = await client.get_task(GetTaskRequest(id=task.id, history_length=1))
        print(f"\nGetTask {again.id[:8]}: {TaskState.Name(again.status.state)}")
        await client.close()


def main() -> None:
    import trio

    workflow_port, adapter_port = free_port(), free_port()
    env = {
        **os.environ,
        "ADAPTER_AGENT_NAME": "Supply agent",
        "ADAPTER_AGENT_DESCRIPTION": "Says whether supplies are in stock.",
        "ADAPTER_SKILL_ID": "check_availability",
        "ADAPTER_SKILL_NAME": "Check availability",
        "ADAPTER_SKILL_DESCRIPTION": "Whether a number of pallets of an item is in stock.",
        "ADAPTER_SKILL_EXAMPLES": "Are there 4 pallets of flour?\nAnd 2 pallets of sugar?",
        "ADAPTER_WEBHOOK_URL": f"http://127.0.0.1:{workflow_port}/webhook/check-availability",
        "ADAPTER_PUBLIC_URL": f"http://127.0.0.1:{adapter_port}/",
        "ADAPTER_HOST": "127.0.0.1",
        "ADAPTER_PORT": str(adapter_port),
    }
    adapter = subprocess.Popen(
        [sys.executable, "-m", "n8n_a2a"], env=env, stderr=subprocess.DEVNULL
    )
    try:
        _wait_for(f"http://127.0.0.1:{adapter_port}/.well-known/agent-card.json")
        print(f"n8n-a2a serves http://127.0.0.1:{adapter_port}/ in front of the example workflow")

        async def run() -> None:
            async with trio.open_nursery() as nursery:
                await nursery.start(serve_workflow, workflow_port)
                await trio.to_thread.run_sync(asyncio.run, talk(env["ADAPTER_PUBLIC_URL"]))
                nursery.cancel_scope.cancel()

        trio.run(run)
    finally:
        adapter.terminate()
        adapter.wait(timeout=10)


def _wait_for(url: str) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if httpx.get(url).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.05)
    raise SystemExit(f"the adapter did not come up at {url}")


if __name__ == "__main__":
    main()
