"""Drive the adapter with the official a2a-sdk 0.3.x Python client; print one JSON result.

Runs in its own virtual environment (requirements.txt beside this file), never in
the project's, since a2a-sdk 0.3 and 1.x cannot share one. Usage:

    python drive.py BASE_URL TOKEN conversation TEXT...
    python drive.py BASE_URL TOKEN cancel ANSWER_TEXT HOLD_TEXT

The result's shape is the same for every client driver (see tests/interop/matrix.py).
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import Awaitable
from importlib.metadata import version
from typing import Any

import httpx
from a2a.client import A2ACardResolver, BaseClient, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientJSONRPCError
from a2a.types import (
    Message,
    MessageSendConfiguration,
    Part,
    Role,
    Task,
    TaskIdParams,
    TaskQueryParams,
    TextPart,
)

JSON = dict[str, Any]


def _texts(parts: list[Part]) -> list[str]:
    return [p.root.text for p in parts if isinstance(p.root, TextPart)]


def _task(task: Task) -> JSON:
    """The task in the drivers' common shape: v0.3 state and role names, texts only."""
    status_message = task.status.message
    return {
        "id": task.id,
        "contextId": task.context_id,
        "state": task.status.state.value,
        "statusRole": status_message.role.value if status_message else None,
        "statusText": "\n".join(_texts(status_message.parts)) if status_message else None,
        "artifacts": [{"name": a.name, "texts": _texts(a.parts)} for a in task.artifacts or []],
        "historyRoles": [m.role.value for m in task.history or []],
        "outcome": (task.metadata or {}).get("outcome"),
    }


def _error(error: Exception) -> JSON:
    """An error as the drivers report it: the client's own error type and the A2A code."""
    if isinstance(error, A2AClientJSONRPCError):
        # The SDK carries the JSON-RPC error object; its code is what tells A2A errors
        # apart (pydantic parses -32001 as the generic JSONRPCError, not TaskNotFoundError).
        return {
            "type": type(error).__name__,
            "code": error.error.code,
            "message": error.error.message,
        }
    return {"type": type(error).__name__, "code": None, "message": str(error)}


async def _outcome(call: Awaitable[Task]) -> JSON:
    """The task a call returns, or the error it raises, without ending the run."""
    try:
        return {"task": _task(await call)}
    except Exception as error:
        return {"error": _error(error)}


async def _send(client: BaseClient, text: str, *, blocking: bool = True) -> Task:
    message = Message(
        role=Role.user,
        message_id=str(uuid.uuid4()),
        parts=[Part(root=TextPart(text=text))],
    )
    configuration = MessageSendConfiguration(blocking=blocking)
    events = [event async for event in client.send_message(message, configuration=configuration)]
    if len(events) != 1 or not isinstance(events[0], tuple):
        raise TypeError(f"expected one task event, got {events!r}")
    task, _update = events[0]
    return task


async def conversation(client: BaseClient, texts: list[str]) -> JSON:
    """Every outcome by blocking send, GetTask of the first, and GetTask of an unknown id."""
    sent = {text: await _outcome(_send(client, text)) for text in texts}
    first = sent[texts[0]].get("task", {}).get("id", "")
    return {
        "sent": sent,
        "get": await _outcome(client.get_task(TaskQueryParams(id=first, history_length=1))),
        "getUnknown": await _outcome(client.get_task(TaskQueryParams(id=str(uuid.uuid4())))),
    }


async def cancel(client: BaseClient, answer_text: str, hold_text: str) -> JSON:
    """Cancel an in-flight task (sent non-blocking), a terminal one, and an unknown id."""
    terminal = await _send(client, answer_text)
    held = await _send(client, hold_text, blocking=False)
    return {
        "held": _task(held),
        "cancel": await _outcome(client.cancel_task(TaskIdParams(id=held.id))),
        "getAfterCancel": await _outcome(client.get_task(TaskQueryParams(id=held.id))),
        "cancelTerminal": await _outcome(client.cancel_task(TaskIdParams(id=terminal.id))),
        "cancelUnknown": await _outcome(client.cancel_task(TaskIdParams(id=str(uuid.uuid4())))),
    }


async def main(base_url: str, token: str, scenario: str, texts: list[str]) -> JSON:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        # Default settings (streaming on): the card's capabilities.streaming false must
        # be what keeps the client on message/send.
        client = ClientFactory(ClientConfig(httpx_client=http)).create(card)
        # The factory's declared type is the abstract Client, which in 0.3 lacks the
        # per-call configuration and close() that its one implementation has.
        assert isinstance(client, BaseClient)
        result: JSON = {
            "client": "a2a-sdk",
            "version": version("a2a-sdk"),
            "runtime": f"Python {sys.version.split()[0]}",
            "transport": type(getattr(client, "_transport")).__name__,  # noqa: B009 - private
            "protocolVersion": card.protocol_version,
        }
        if scenario == "conversation":
            result |= await conversation(client, texts)
        else:
            result |= await cancel(client, *texts)
        await client.close()
        return result


if __name__ == "__main__":
    url, bearer, chosen, *arguments = sys.argv[1:]
    print(json.dumps(asyncio.run(main(url, bearer, chosen, arguments))))
