"""JSON-RPC against the real adapter over HTTP: the documents, the call, and polling a task."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import trio

#: The header that asks for A2A v1.0 (without it the adapter speaks v0.3).
V1 = {"A2A-Version": "1.0"}


def call(method: str, request_id: Any = 1, **params: Any) -> dict[str, Any]:
    """A JSON-RPC request document for `method` with `params`."""
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def send_v1(text: str, request_id: Any = 1, **configuration: Any) -> dict[str, Any]:
    """A v1.0 SendMessage of one user text part, with its `configuration`."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "SendMessage",
        "params": {
            "message": {
                "messageId": str(uuid.uuid4()),
                "role": "ROLE_USER",
                "parts": [{"text": text}],
            },
            "configuration": configuration,
        },
    }


def send_v03(text: str, request_id: Any = "7") -> dict[str, Any]:
    """A v0.3 message/send of one user text part, blocking."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "message/send",
        "params": {
            "configuration": {"blocking": True},
            "message": {
                "kind": "message",
                "messageId": str(uuid.uuid4()),
                "role": "user",
                "parts": [{"kind": "text", "text": text}],
            },
        },
    }


async def rpc(adapter: str, document: Any, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """POST `document` to the adapter; the JSON-RPC response (the HTTP status must be 200)."""
    async with httpx.AsyncClient() as client:
        reply = await client.post(adapter, json=document, headers=headers or {})
    assert reply.status_code == 200, reply.text
    result: dict[str, Any] = reply.json()
    return result


async def get_task(adapter: str, task_id: str, **params: Any) -> dict[str, Any]:
    """The task as a v1.0 GetTask returns it."""
    reply = await rpc(adapter, call("GetTask", id=task_id, **params), V1)
    task: dict[str, Any] = reply["result"]
    return task


async def wait_for_state(adapter: str, task_id: str, state: str) -> dict[str, Any]:
    """Poll GetTask until the task is in the v1.0 `state` (5 s at most); the task then."""
    with trio.fail_after(5):
        # Polling GetTask is what real clients do.
        while (task := await get_task(adapter, task_id))["status"]["state"] != state:  # noqa: ASYNC110
            await trio.sleep(0.02)
    return task
