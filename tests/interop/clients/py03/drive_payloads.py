"""The `payloads` scenario of drive.py: real payloads by every path a v0.3 client reads a
task, each reported by its digests (tests/interop/payloads.py says the cases and the shape).

    python drive.py BASE_URL TOKEN payloads CASES_JSON

CASES_JSON: a list of {id, path, text, upload?: {file, name, mediaType}, push?: {url,
token}}; path one of blocking, poll, stream, subscribe, push (v0.3 has no ListTasks).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from a2a.client import BaseClient
from a2a.client.client import ClientEvent
from a2a.types import (
    Artifact,
    FilePart,
    FileWithBytes,
    Message,
    MessageSendConfiguration,
    Part,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskQueryParams,
    TaskStatusUpdateEvent,
    TextPart,
)

JSON = dict[str, Any]
TERMINAL = ("completed", "failed", "canceled", "rejected")
SHORT_TEXT = 4096


def _digest(data: bytes) -> JSON:
    return {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


def _shape(part: Part) -> JSON:
    """A part as the SDK read it, in the drivers' shape."""
    root = part.root
    if isinstance(root, TextPart):
        short = {"text": root.text} if len(root.text.encode()) <= SHORT_TEXT else {}
        return {"kind": "text", **_digest(root.text.encode()), "metadata": root.metadata, **short}
    if isinstance(root, FilePart) and isinstance(root.file, FileWithBytes):
        file = root.file
        named = {"name": file.name, "mediaType": file.mime_type}
        return {"kind": "file", **named, **_digest(base64.b64decode(file.bytes))}
    return {"kind": type(root).__name__, "sha256": "", "size": 0}


def _artifact(artifact: Artifact) -> JSON:
    parts = [_shape(p) for p in artifact.parts]
    return {"artifactId": artifact.artifact_id, "name": artifact.name, "parts": parts}


def _task(task: Task) -> JSON:
    return {
        "state": task.status.state.value,
        "artifacts": [_artifact(a) for a in task.artifacts or []],
        "history": [
            {"role": m.role.value, "parts": [_shape(p) for p in m.parts]}
            for m in task.history or []
        ],
    }


def _joined(updates: list[JSON]) -> list[JSON]:
    """Artifact updates put together as a reader does: by artifactId, `append` adds parts."""
    by_id: dict[str, JSON] = {}
    for update in updates:
        artifact = update["artifact"]
        earlier = by_id.get(artifact["artifactId"])
        if update["append"] and earlier is not None:
            artifact = {**earlier, "parts": [*earlier["parts"], *artifact["parts"]]}
        by_id[artifact["artifactId"]] = artifact
    return list(by_id.values())


async def _streamed(events: AsyncIterator[ClientEvent | Message]) -> JSON:
    first: JSON | None = None
    updates: list[JSON] = []
    read: JSON = {"state": None, "artifacts": [], "history": []}
    async for event in events:
        kind = "message"
        if isinstance(event, tuple):
            task, update = event
            if update is None:
                kind, read = "task", _task(task)
            elif isinstance(update, TaskArtifactUpdateEvent):
                kind = "artifact_update"
                updates.append({"artifact": _artifact(update.artifact), "append": update.append})
            elif isinstance(update, TaskStatusUpdateEvent):
                kind, read["state"] = "status_update", update.status.state.value
        if first is None:
            first = {"kind": kind, "state": read["state"], "artifacts": len(read["artifacts"])}
    return {**read, "artifacts": _joined(updates), "first": first}


def _message(case: JSON) -> Message:
    parts = [Part(root=TextPart(text=case["text"]))]
    upload = case.get("upload")
    if upload is not None:
        encoded = base64.b64encode(Path(upload["file"]).read_bytes()).decode()
        content = FileWithBytes(bytes=encoded, name=upload["name"], mime_type=upload["mediaType"])
        parts.append(Part(root=FilePart(file=content)))
    return Message(role=Role.user, message_id=str(uuid.uuid4()), parts=parts)


async def _sent(client: BaseClient, case: JSON, *, blocking: bool = True) -> Task:
    configuration = MessageSendConfiguration(blocking=blocking)
    push = case.get("push")
    if push is not None:
        config = PushNotificationConfig(url=push["url"], token=push["token"])
        configuration.push_notification_config = config
    events = [e async for e in client.send_message(_message(case), configuration=configuration)]
    if len(events) != 1 or not isinstance(events[0], tuple):
        raise TypeError(f"expected one task event, got {len(events)}")
    return events[0][0]


async def _until_terminal(read: Callable[[], Awaitable[Task]]) -> Task:
    while True:
        task = await read()
        if task.status.state.value in TERMINAL:
            return task
        await asyncio.sleep(0.05)


async def _blocking(polling: BaseClient, streaming: BaseClient, case: JSON) -> JSON:
    return _task(await _sent(polling, case))


async def _poll(polling: BaseClient, streaming: BaseClient, case: JSON) -> JSON:
    sent = await _sent(polling, case, blocking=False)
    return _task(await _until_terminal(lambda: polling.get_task(TaskQueryParams(id=sent.id))))


async def _stream(polling: BaseClient, streaming: BaseClient, case: JSON) -> JSON:
    return await _streamed(streaming.send_message(_message(case)))


async def _subscribe(polling: BaseClient, streaming: BaseClient, case: JSON) -> JSON:
    sent = await _sent(polling, case, blocking=False)
    return await _streamed(streaming.resubscribe(TaskIdParams(id=sent.id)))


PATHS = {
    "blocking": _blocking,
    "push": _blocking,
    "poll": _poll,
    "stream": _stream,
    "subscribe": _subscribe,
}


async def run(polling: BaseClient, streaming: BaseClient, cases: list[JSON]) -> JSON:
    results: JSON = {}
    for case in cases:
        try:
            results[case["id"]] = await PATHS[case["path"]](polling, streaming, case)
        except Exception as error:
            results[case["id"]] = {"error": f"{type(error).__name__}: {str(error)[:2000]}"}
    return {"results": results}
