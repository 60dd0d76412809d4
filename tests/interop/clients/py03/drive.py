"""Drive the adapter with the official a2a-sdk 0.3.x Python client; print one JSON result.

Runs in its own virtual environment (requirements.txt beside this file), never in
the project's, since a2a-sdk 0.3 and 1.x cannot share one. Usage:

    python drive.py BASE_URL TOKEN conversation TEXT...
    python drive.py BASE_URL TOKEN cancel ANSWER_TEXT HOLD_TEXT
    python drive.py BASE_URL TOKEN stream TEXT...
    python drive.py BASE_URL TOKEN subscribe HOLD_TEXT
    python drive.py BASE_URL TOKEN parts SENT_JSON
    python drive.py BASE_URL TOKEN payloads CASES_JSON   (drive_payloads.py)

`conversation` and `cancel` use a client configured with `streaming=False`
(message/send); `stream` and `subscribe` the client's defaults, which stream
(message/stream, tasks/resubscribe) because the card says `capabilities.streaming: true`.
`parts` sends, with each, a text part, a DataPart per `data` value and a FilePart per
`files` entry of SENT_JSON (in the shapes the workflow receives), and reports each
artifact's parts in those shapes.
The result's shape is the same for every client driver (see tests/interop/matrix.py).
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib.metadata import version
from typing import Any

import drive_payloads
import httpx
from a2a.client import A2ACardResolver, BaseClient, ClientConfig, ClientFactory
from a2a.client.client import ClientEvent
from a2a.client.errors import A2AClientJSONRPCError
from a2a.types import (
    Artifact,
    DataPart,
    FilePart,
    FileWithBytes,
    FileWithUri,
    Message,
    MessageSendConfiguration,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskQueryParams,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)

JSON = dict[str, Any]


def _texts(parts: list[Part]) -> list[str]:
    return [p.root.text for p in parts if isinstance(p.root, TextPart)]


def _status(status: TaskStatus) -> JSON:
    message = status.message
    return {
        "state": status.state.value,
        "statusRole": message.role.value if message else None,
        "statusText": "\n".join(_texts(message.parts)) if message else None,
    }


def _task(task: Task) -> JSON:
    """The task in the drivers' common shape: v0.3 state and role names, texts only."""
    return {
        "id": task.id,
        "contextId": task.context_id,
        **_status(task.status),
        "artifacts": [{"name": a.name, "texts": _texts(a.parts)} for a in task.artifacts or []],
        "historyRoles": [m.role.value for m in task.history or []],
        "outcome": (task.metadata or {}).get("outcome"),
    }


def _event(event: ClientEvent | Message) -> JSON:
    """One stream event in the drivers' common shape.

    The client yields (task so far, the update) pairs; the update is None for the Task
    event itself, which is then the task as received.
    """
    empty = {"state": None, "final": None, "statusRole": None, "statusText": None}
    if isinstance(event, Message):
        return {"kind": "message", "taskId": event.task_id, **empty, "outcome": None}
    task, update = event
    if update is None:
        return {
            "kind": "task",
            "taskId": task.id,
            **_status(task.status),
            "final": None,
            "outcome": (task.metadata or {}).get("outcome"),
        }
    if isinstance(update, TaskStatusUpdateEvent):
        message = update.status.message
        return {
            "kind": "status-update",
            "taskId": update.task_id,
            **_status(update.status),
            "final": update.final,
            "outcome": ((message.metadata if message else None) or {}).get("outcome"),
        }
    assert isinstance(update, TaskArtifactUpdateEvent)
    artifact = {"name": update.artifact.name, "texts": _texts(update.artifact.parts)}
    return {"kind": "artifact-update", "taskId": update.task_id, **empty, "artifact": artifact}


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


async def _stream(
    events: AsyncIterator[ClientEvent | Message],
    after_first: Callable[[], Awaitable[object]] | None = None,
) -> JSON:
    """Every event of a stream, as it came (the client updates its task in place), the
    task the client built from them, and the error the stream ended in, if one."""
    seen: list[JSON] = []
    built: Task | None = None
    try:
        async for event in events:
            seen.append(_event(event))
            if isinstance(event, tuple):
                built = event[0]
            if after_first is not None and len(seen) == 1:
                await after_first()
    except Exception as error:
        return {"events": seen, "error": _error(error)}
    return {"events": seen} | ({"task": _task(built)} if built is not None else {})


def _message(text: str) -> Message:
    return Message(
        role=Role.user,
        message_id=str(uuid.uuid4()),
        parts=[Part(root=TextPart(text=text))],
    )


async def _send(client: BaseClient, text: str, *, blocking: bool = True) -> Task:
    return await _sent(client, _message(text), blocking=blocking)


async def _sent(client: BaseClient, message: Message, *, blocking: bool = True) -> Task:
    configuration = MessageSendConfiguration(blocking=blocking)
    events = [e async for e in client.send_message(message, configuration=configuration)]
    if len(events) != 1 or not isinstance(events[0], tuple):
        raise TypeError(f"expected one task event, got {events!r}")
    task, _update = events[0]
    return task


def _parts(sent: JSON) -> list[Part]:
    """The text, each data value and each file of SENT_JSON as the SDK's parts."""
    parts = [Part(root=TextPart(text=sent["text"]))]
    parts += [Part(root=DataPart(data=value)) for value in sent["data"]]
    for file in sent["files"]:
        named = {"name": file["name"], "mime_type": file["mediaType"]}
        content = (
            FileWithBytes(bytes=file["base64"], **named)
            if "base64" in file
            else FileWithUri(uri=file["url"], **named)
        )
        parts.append(Part(root=FilePart(file=content)))
    return parts


def _shape(part: Part) -> JSON:
    """A part the SDK read, back in SENT_JSON's shapes."""
    root = part.root
    if isinstance(root, TextPart):
        return {"text": root.text}
    if isinstance(root, DataPart):
        return {"data": root.data}
    file = root.file
    named = {"name": file.name or "", "mediaType": file.mime_type or ""}
    if isinstance(file, FileWithBytes):
        return named | {"base64": file.bytes}
    return named | {"url": file.uri}


def _artifact(artifact: Artifact) -> JSON:
    return {"name": artifact.name, "parts": [_shape(p) for p in artifact.parts]}


def _parts_message(sent: JSON) -> Message:
    return Message(role=Role.user, message_id=str(uuid.uuid4()), parts=_parts(sent))


async def parts(polling: BaseClient, streaming: BaseClient, sent: JSON) -> JSON:
    """Text, data and files sent (message/send) and streamed (message/stream): every
    artifact's parts, or the error each ended in."""
    try:
        task = await _sent(polling, _parts_message(sent))
        plain = {"task": _task(task) | {"artifacts": [_artifact(a) for a in task.artifacts or []]}}
    except Exception as error:
        plain = {"error": _error(error)}
    artifacts: list[JSON] = []
    state = None
    try:
        async for event in streaming.send_message(_parts_message(sent)):
            update = event[1] if isinstance(event, tuple) else None
            if isinstance(update, TaskArtifactUpdateEvent):
                artifacts.append(_artifact(update.artifact))
            elif isinstance(update, TaskStatusUpdateEvent):
                state = update.status.state.value
        streamed: JSON = {"artifacts": artifacts, "state": state}
    except Exception as error:
        streamed = {"error": _error(error)}
    return {"sent": plain, "streamed": streamed}


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


async def stream(client: BaseClient, texts: list[str]) -> JSON:
    """Every outcome by streaming send (message/stream): each stream's events."""
    streamed = {text: await _stream(client.send_message(_message(text))) for text in texts}
    return {"streamed": streamed}


async def subscribe(client: BaseClient, polling: BaseClient, hold_text: str) -> JSON:
    """tasks/resubscribe to a running task, canceled once the stream has begun; then to
    that finished task, and to an unknown id."""
    held = await _send(polling, hold_text, blocking=False)

    async def cancel_it() -> None:
        await polling.cancel_task(TaskIdParams(id=held.id))

    return {
        "held": _task(held),
        "subscribed": await _stream(client.resubscribe(TaskIdParams(id=held.id)), cancel_it),
        "subscribeFinished": await _stream(client.resubscribe(TaskIdParams(id=held.id))),
        "subscribeUnknown": await _stream(client.resubscribe(TaskIdParams(id=str(uuid.uuid4())))),
    }


async def retry(polling: BaseClient, streaming: BaseClient, text: str) -> JSON:
    """The same message (one messageId) sent twice, blocking, then streamed: one workflow
    run, each answered by the first sending's task."""
    once = _message(text)
    return {
        "first": await _outcome(_sent(polling, once)),
        "again": await _outcome(_sent(polling, once)),
        "streamedAgain": await _stream(streaming.send_message(once)),
    }


def _client(config: ClientConfig, card: Any) -> BaseClient:
    client = ClientFactory(config).create(card)
    # The factory's declared type is the abstract Client, which in 0.3 lacks the
    # per-call configuration and close() that its one implementation has.
    assert isinstance(client, BaseClient)
    return client


async def main(base_url: str, token: str, scenario: str, texts: list[str]) -> JSON:
    headers = {"Authorization": f"Bearer {token}"}
    # A large payload's call takes longer than a small one's on a loaded machine.
    async with httpx.AsyncClient(headers=headers, timeout=60) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        # The defaults stream, because the card says it can; the other client is told not to.
        streaming = _client(ClientConfig(httpx_client=http), card)
        polling = _client(ClientConfig(httpx_client=http, streaming=False), card)
        result: JSON = {
            "client": "a2a-sdk",
            "version": version("a2a-sdk"),
            "runtime": f"Python {sys.version.split()[0]}",
            "transport": type(getattr(streaming, "_transport")).__name__,  # noqa: B009 - private
            "protocolVersion": card.protocol_version,
        }
        if scenario == "conversation":
            result |= await conversation(polling, texts)
        elif scenario == "cancel":
            result |= await cancel(polling, *texts)
        elif scenario == "parts":
            result |= await parts(polling, streaming, json.loads(texts[0]))
        elif scenario == "payloads":
            result |= await drive_payloads.run(polling, streaming, json.loads(texts[0]))
        elif scenario == "stream":
            result |= await stream(streaming, texts)
        elif scenario == "retry":
            result |= await retry(polling, streaming, *texts)
        else:
            result |= await subscribe(streaming, polling, *texts)
        # Closing a client closes its httpx client: the `async with` does it for both.
        return result


if __name__ == "__main__":
    url, bearer, chosen, *arguments = sys.argv[1:]
    print(json.dumps(asyncio.run(main(url, bearer, chosen, arguments))))
