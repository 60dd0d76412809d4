"""Real payloads, whole, with the official a2a-sdk 1.3.0 Python client: answers of 200 KiB
and 1 MiB, reply files of 50 KiB, 5 MiB and 20 MiB, uploads of 5 and 20 MiB, by every
path (tests/interop/payloads.py), over JSON-RPC v1.0, JSON-RPC v0.3 and HTTP+JSON v1.0,
the adapter at its size defaults. The cheapest client of the matrix (in this process, no
start-up of its own): it runs the 20 MiB cases, once a path, version and binding.

The SDK runs on asyncio, the adapter on trio: the client runs in a worker thread with its
own event loop, as in tests/interop/test_python_sdk.py.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from a2a.client import A2ACardResolver, Client
from a2a.helpers import new_raw_part
from a2a.types import (
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)
from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]

from tests.interop import matrix, payloads, sdk_modes
from tests.interop.payloads import Result
from tests.interop.sdk_modes import SdkMode
from tests.support.adapter import AdapterFactory
from tests.support.push_receiver import PushReceiver
from tests.support.sdk import SDK, SDK_VERSION, state_name
from tests.support.stub_webhook import StubWebhook

# What the client read, in the drivers' shape (tests/interop/payloads.py).


def _shape(part: Part) -> Result:
    match part.WhichOneof("content"):
        case "text":
            metadata = MessageToDict(part.metadata) if part.HasField("metadata") else None
            return payloads.text_shape(part.text, metadata)
        case "raw":
            return payloads.file_shape(part.filename, part.media_type, part.raw)
        case other:
            return {"kind": str(other), "sha256": "", "size": 0}


def _artifact(artifact: Any) -> Result:
    parts = [_shape(p) for p in artifact.parts]
    return {"artifactId": artifact.artifact_id, "name": artifact.name, "parts": parts}


def _task(task: Task) -> Result:
    return {
        "state": state_name(task.status.state),
        "artifacts": [_artifact(a) for a in task.artifacts],
        "history": [
            {"role": str(Role.Name(m.role)).removeprefix("ROLE_").lower(), "parts": _parts(m)}
            for m in task.history
        ],
    }


def _parts(message: Message) -> list[Result]:
    return [_shape(p) for p in message.parts]


async def _streamed(events: AsyncIterator[StreamResponse]) -> Result:
    """A stream read to its end: the first event, the artifacts put together, the last state."""
    first: Result | None = None
    updates: list[Result] = []
    task: Result = {"state": None, "artifacts": [], "history": []}
    async for event in events:
        kind = event.WhichOneof("payload")
        if kind == "task":
            task = _task(event.task)
        elif kind == "artifact_update":
            update = event.artifact_update
            updates.append({"artifact": _artifact(update.artifact), "append": update.append})
        elif kind == "status_update":
            task["state"] = state_name(event.status_update.status.state)
        if first is None:
            first = {"kind": kind, "state": task["state"], "artifacts": len(task["artifacts"])}
    return {**task, "artifacts": payloads.joined_updates(updates), "first": first}


# The paths.


def _request(case: Result, *, blocking: bool) -> SendMessageRequest:
    parts = [Part(text=case["text"])]
    upload = case.get("upload")
    if upload is not None:
        data = Path(upload["file"]).read_bytes()
        parts.append(new_raw_part(data, media_type=upload["mediaType"], filename=upload["name"]))
    message = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=parts)
    configuration = SendMessageConfiguration(return_immediately=not blocking)
    push = case.get("push")
    if push is not None:
        inline = TaskPushNotificationConfig(url=push["url"], token=push["token"])
        configuration.task_push_notification_config.CopyFrom(inline)
    return SendMessageRequest(message=message, configuration=configuration)


async def _sent(client: Client, case: Result, *, blocking: bool = True) -> Task:
    [event] = [e async for e in client.send_message(_request(case, blocking=blocking))]
    return event.task


async def _until_terminal(read: Callable[[], Awaitable[Task | None]]) -> Task:
    while True:
        task = await read()
        if task is not None and state_name(task.status.state) in payloads.TERMINAL:
            return task
        await asyncio.sleep(0.05)


async def blocking(streaming: Client, polling: Client, case: Result) -> Result:
    return _task(await _sent(polling, case))


async def poll(streaming: Client, polling: Client, case: Result) -> Result:
    sent = await _sent(polling, case, blocking=False)
    return _task(await _until_terminal(lambda: polling.get_task(GetTaskRequest(id=sent.id))))


async def listed(streaming: Client, polling: Client, case: Result) -> Result:
    sent = await _sent(polling, case, blocking=False)

    async def read() -> Task | None:
        page = await polling.list_tasks(ListTasksRequest(include_artifacts=True))
        return next((task for task in page.tasks if task.id == sent.id), None)

    return _task(await _until_terminal(read))


async def stream(streaming: Client, polling: Client, case: Result) -> Result:
    return await _streamed(streaming.send_message(_request(case, blocking=True)))


async def subscribe(streaming: Client, polling: Client, case: Result) -> Result:
    sent = await _sent(polling, case, blocking=False)
    return await _streamed(streaming.subscribe(SubscribeToTaskRequest(id=sent.id)))


PATHS = {
    "blocking": blocking,
    "poll": poll,
    "list": listed,
    "stream": stream,
    "subscribe": subscribe,
    "push": blocking,
}


async def _run(base_url: str, mode: SdkMode, cases: list[Result]) -> Result:
    headers = {"Authorization": f"Bearer {matrix.TOKEN}"}
    async with httpx.AsyncClient(headers=headers, timeout=60) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        streaming = mode.client(card, httpx_client=http)
        polling = mode.client(card, streaming=False, httpx_client=http)
        results: Result = {}
        for case in cases:
            try:
                results[case["id"]] = await PATHS[case["path"]](streaming, polling, case)
            except Exception as error:
                results[case["id"]] = {"error": f"{type(error).__name__}: {error}"}
        await streaming.close()
        await polling.close()
        return {"results": results}


# The tests.


def _version(mode: SdkMode) -> str:
    return "0.3" if mode.v03 else "1.0"


def _params() -> list[Any]:
    """Each mode and path with its cases, the smaller sizes and the 20 MiB ones apart, marked
    with the client's mode."""
    return [
        pytest.param(
            mode,
            path,
            payload_set,
            marks=pytest.mark.client(SDK, SDK_VERSION, mode.row + " payloads"),
            id=f"{mode.id}-{path}{suffix}",
        )
        for payload_set, suffix in ((payloads.SMALL, ""), (payloads.LARGE, "-20MiB"))
        for mode in sdk_modes.MODES
        for path in payloads.PATHS
        if payloads.cases(payload_set, path, _version(mode))
    ]


@pytest.mark.parametrize(("mode", "path", "payload_set"), _params())
async def test_payloads_arrive_whole(
    stub: StubWebhook,
    start_adapter: AdapterFactory,
    receiver: PushReceiver,
    tmp_path: Path,
    mode: SdkMode,
    path: str,
    payload_set: tuple[payloads.Payload, ...],
) -> None:
    adapter = await payloads.start_payload_adapter(stub, start_adapter)

    async def drive(cases: list[Result]) -> Result:
        run = partial(asyncio.run, _run(adapter, mode, cases))
        result: Result = await trio.to_thread.run_sync(run)
        return result

    client = (_version(mode), matrix.binding_of(mode.transport), drive)
    await payloads.check_whole(stub, adapter, receiver, tmp_path, path, payload_set, client)
