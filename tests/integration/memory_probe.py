"""Worst cases for the adapter's memory, run in a fresh process so that its peak RSS is theirs.

`python -m tests.integration.memory_probe SCENARIO` serves the stub webhook and the real
adapter in this process, drives one scenario, and prints one JSON object: the peak RSS
(KiB) before the load and after each step, and what the scenario saw.

- `tasks`: 1 MB messages, each echoed back as a 1 MB answer, into the task table; then
  four ListTasks of pageSize 100 at once over those tasks.
- `gzip`: gzip replies of about 1 MB that would decode to 1 GiB each, several at once,
  read to an ADAPTER_MAX_REPLY_BYTES of 1 MiB.
- `push`: push configs with a 1,000,000-character scheme (refused), then tasks with
  ADAPTER_PUSH_MAX_CONFIGS configs each, every field at its bound; and their list.
"""

from __future__ import annotations

import json
import resource
import sys
import uuid
from functools import partial
from typing import Any

import httpx
import trio

from n8n_a2a.protocol.push import (
    MAX_CONFIG_ID_LENGTH,
    MAX_SCHEME_LENGTH,
    MAX_SECRET_LENGTH,
    MAX_URL_LENGTH,
    AllowList,
)
from n8n_a2a.server import serve
from tests.support.adapter import free_port, make_settings
from tests.support.stub_webhook import StubWebhook, gzip_bomb, start_stub_webhook

MESSAGES = 64
MESSAGE_CHARS = 1_000_000
LISTINGS = 4
BOMBS = 16
PUSH_TASKS = 200
PUSH_CONFIGS = 8  # ADAPTER_PUSH_MAX_CONFIGS's default
V1 = {"A2A-Version": "1.0"}
#: The settings a scenario runs with beside the probe's own.
SETTINGS: dict[str, dict[str, Any]] = {"gzip": {"max_reply_bytes": 1024 * 1024}}

Report = dict[str, Any]


def peak_kib() -> int:
    """This process's peak resident set, in KiB (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def request(method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def send(text: str) -> dict[str, Any]:
    # A new message each time: one sent again is its first sending's task (core/sent.py).
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}
    return request("SendMessage", message=message)


class Adapter:
    """A client of the adapter under test."""

    def __init__(self, client: httpx.AsyncClient, url: str) -> None:
        self.client = client
        self.url = url

    async def call(self, document: Any) -> tuple[dict[str, Any], int]:
        """The JSON-RPC result and the size of the HTTP answer, in bytes."""
        reply = await self.client.post(self.url, json=document, headers=V1)
        result: dict[str, Any] = reply.json()["result"]
        return result, len(reply.content)


async def big_tasks(adapter: Adapter, stub: StubWebhook, report: Report) -> None:
    for n in range(MESSAGES):
        result, _ = await adapter.call(send(f"{n:08d}" + "x" * MESSAGE_CHARS))
        assert result["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        stub.received.clear()  # the stub keeps each body: its memory, not the adapter's
    report["messages_kib"] = peak_kib()
    listing = request("ListTasks", pageSize=100, includeArtifacts=True)
    pages: list[tuple[dict[str, Any], int]] = []

    async def list_once() -> None:
        pages.append(await adapter.call(listing))

    async with trio.open_nursery() as listings:
        for _ in range(LISTINGS):
            listings.start_soon(list_once)
    page, _ = pages[0]
    report["listed"] = len(page["tasks"])
    report["next_page"] = bool(page["nextPageToken"])
    report["answer_bytes"] = max(size for _, size in pages)


async def gzip_bombs(adapter: Adapter, stub: StubWebhook, report: Report) -> None:
    reasons: list[str] = []

    async def bomb() -> None:
        result, _ = await adapter.call(send("gzip-bomb"))
        reasons.append(result["task"]["status"]["message"]["parts"][0]["text"])

    async with trio.open_nursery() as bombs:
        for _ in range(BOMBS):
            bombs.start_soon(bomb)
    report["reasons"] = sorted({reason[:120] for reason in reasons})


def largest_config(task_id: str, n: int, **overrides: Any) -> dict[str, Any]:
    """A v1.0 config with every field at its bound (docs/operating.md, "Memory")."""
    url = f"http://127.0.0.1:9/{n:03d}"
    return {
        "taskId": task_id,
        "id": f"{n:03d}".ljust(MAX_CONFIG_ID_LENGTH, "i"),
        "url": url.ljust(MAX_URL_LENGTH, "u"),
        "token": "t" * MAX_SECRET_LENGTH,
        "authentication": {"scheme": "S" * MAX_SCHEME_LENGTH, "credentials": "c" * 4096},
        **overrides,
    }


async def push_configs(adapter: Adapter, stub: StubWebhook, report: Report) -> None:
    listing: dict[str, Any] = {}
    for _ in range(PUSH_TASKS):
        task, _ = await adapter.call(send("answer:x"))
        task_id = task["task"]["id"]
        for n in range(PUSH_CONFIGS):
            config = largest_config(task_id, n)
            await adapter.call(request("CreateTaskPushNotificationConfig", **config))
        listing = request("ListTaskPushNotificationConfigs", taskId=task_id)
        stub.received.clear()
    report["configs"] = PUSH_TASKS * PUSH_CONFIGS
    report["configs_kib"] = peak_kib()
    _, report["list_bytes"] = await adapter.call(listing)
    refused = 0
    for _ in range(10):
        task, _ = await adapter.call(send("answer:x"))
        for n in range(PUSH_CONFIGS):
            huge = {"scheme": "S" * 1_000_000, "credentials": "c"}
            config = largest_config(task["task"]["id"], n, authentication=huge)
            reply = await adapter.client.post(
                adapter.url, json=request("CreateTaskPushNotificationConfig", **config), headers=V1
            )
            refused += reply.json().get("error", {}).get("code") == -32602
    report["refused"] = refused


SCENARIOS = {"tasks": big_tasks, "gzip": gzip_bombs, "push": push_configs}


async def run(scenario: str) -> Report:
    report: Report = {}
    async with trio.open_nursery() as nursery:
        stub = await start_stub_webhook(nursery)
        port = free_port()
        url = f"http://127.0.0.1:{port}/"
        settings = make_settings(
            stub.url,
            port=port,
            public_url=url,
            webhook_timeout=30.0,
            push_allow_hosts=AllowList.parse("127.0.0.1"),
            **SETTINGS.get(scenario, {}),
        )
        stop = trio.Event()
        await nursery.start(partial(serve, settings, shutdown_trigger=stop.wait))
        gzip_bomb()  # made once, before the baseline: the stub's bytes, not the adapter's
        async with httpx.AsyncClient(timeout=60) as client:
            adapter = Adapter(client, url)
            await adapter.call(send("answer:warm"))
            report["before_kib"] = peak_kib()
            await SCENARIOS[scenario](adapter, stub, report)
        report["after_kib"] = peak_kib()
        stop.set()
        nursery.cancel_scope.cancel()  # and the stub with it
    return report


def main() -> None:
    print(json.dumps(trio.run(run, sys.argv[1])))


if __name__ == "__main__":
    main()
