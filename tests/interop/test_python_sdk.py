"""The official a2a-sdk 1.3.0 Python client against the real adapter: JSON-RPC v1.0 and v0.3,
and the HTTP+JSON binding (tests/interop/sdk_modes.py).

The SDK runs on asyncio, the adapter on trio: the client runs in a worker thread with
its own event loop, as it would in another process. It reports what it sees in the
client matrix's common shape (tests/interop/matrix.py), held to the same checks as the
other clients. With its default settings it streams (`SendStreamingMessage`,
`SubscribeToTask`, or their v0.3 twins; over HTTP+JSON `POST /message:stream` and
`/tasks/{id}:subscribe`), since the card says `capabilities.streaming: true`; told
`streaming=False` it sends `SendMessage`. Beyond text it sends and reads data and files
with the SDK's own part helpers.
"""

from __future__ import annotations

import asyncio
import base64
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial

import httpx
import trio
from a2a.client import A2ACardResolver, Client
from a2a.helpers import get_data_parts, new_data_part, new_raw_part, new_url_part
from a2a.types import (
    Artifact,
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskStatus,
)
from a2a.utils.errors import JSON_RPC_ERROR_CODE_MAP, A2AError

from tests.interop import matrix, sdk_modes
from tests.interop.sdk_modes import SdkMode
from tests.support.sdk import state_name
from tests.support.stub_webhook import StubWebhook

# The common shape, from the SDK's protobuf objects.


def _role(role: Role) -> str:
    return str(Role.Name(role)).removeprefix("ROLE_").lower()


def _texts(parts: list[Part]) -> list[str]:
    return [p.text for p in parts if p.HasField("text")]


def _outcome_of(holder: Task | Message) -> str | None:
    metadata = holder.metadata  # a protobuf Struct
    return str(metadata["outcome"]) if "outcome" in metadata else None


def _status(status: TaskStatus) -> matrix.Result:
    message = status.message if status.HasField("message") else None
    return {
        "state": state_name(status.state),
        "statusRole": _role(message.role) if message else None,
        "statusText": "\n".join(_texts(list(message.parts))) if message else None,
    }


def _task(task: Task) -> matrix.Result:
    return {
        "id": task.id,
        "contextId": task.context_id,
        **_status(task.status),
        "artifacts": [{"name": a.name, "texts": _texts(list(a.parts))} for a in task.artifacts],
        "historyRoles": [_role(m.role) for m in task.history],
        "outcome": _outcome_of(task),
    }


def _event(response: StreamResponse) -> matrix.Result:
    empty = {"state": None, "final": None, "statusRole": None, "statusText": None}
    match response.WhichOneof("payload"):
        case "task":
            task = response.task
            return {
                "kind": "task",
                "taskId": task.id,
                **_status(task.status),
                "final": None,
                "outcome": _outcome_of(task),
            }
        case "status_update":
            update = response.status_update
            return {
                "kind": "status-update",
                "taskId": update.task_id,
                **_status(update.status),
                "final": None,  # v1.0 has no such field; the SDK drops v0.3's
                "outcome": _outcome_of(update.status.message),
            }
        case "artifact_update":
            artifact = response.artifact_update.artifact
            return {
                "kind": "artifact-update",
                "taskId": response.artifact_update.task_id,
                **empty,
                "artifact": {"name": artifact.name, "texts": _texts(list(artifact.parts))},
            }
        case other:
            return {"kind": other, "taskId": response.message.task_id, **empty, "outcome": None}


def _error(error: Exception) -> matrix.Result:
    return {
        "type": type(error).__name__,
        "code": JSON_RPC_ERROR_CODE_MAP.get(type(error)) if isinstance(error, A2AError) else None,
        "message": str(error),
    }


async def _outcome(call: Awaitable[Task]) -> matrix.Result:
    try:
        return {"task": _task(await call)}
    except Exception as error:
        return {"error": _error(error)}


async def _stream(
    events: AsyncIterator[StreamResponse],
    after_first: Callable[[], Awaitable[object]] | None = None,
) -> matrix.Result:
    seen: list[matrix.Result] = []
    try:
        async for event in events:
            seen.append(_event(event))
            if after_first is not None and len(seen) == 1:
                await after_first()
    except Exception as error:
        return {"events": seen, "error": _error(error)}
    return {"events": seen}


# The scenarios, as the drivers of the other clients run them.


def _request(text: str, *, blocking: bool = True) -> SendMessageRequest:
    return _request_of([Part(text=text)], blocking=blocking)


def _request_of(parts: list[Part], *, blocking: bool = True) -> SendMessageRequest:
    message = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=parts)
    return SendMessageRequest(
        message=message, configuration=SendMessageConfiguration(return_immediately=not blocking)
    )


async def _sent(client: Client, request: SendMessageRequest) -> Task:
    [event] = [e async for e in client.send_message(request)]
    if event.WhichOneof("payload") != "task":
        raise TypeError(f"expected a task, got {event}")
    return event.task


async def _send(client: Client, text: str, *, blocking: bool = True) -> Task:
    return await _sent(client, _request(text, blocking=blocking))


async def conversation(streaming: Client, polling: Client, texts: list[str]) -> matrix.Result:
    sent = {text: await _outcome(_send(polling, text)) for text in texts}
    first = sent[texts[0]].get("task", {}).get("id", "")
    return {
        "sent": sent,
        "get": await _outcome(polling.get_task(GetTaskRequest(id=first, history_length=1))),
        "getUnknown": await _outcome(polling.get_task(GetTaskRequest(id=str(uuid.uuid4())))),
    }


async def cancel(streaming: Client, polling: Client, texts: list[str]) -> matrix.Result:
    answer_text, hold_text = texts
    terminal = await _send(polling, answer_text)
    held = await _send(polling, hold_text, blocking=False)
    return {
        "held": _task(held),
        "cancel": await _outcome(polling.cancel_task(CancelTaskRequest(id=held.id))),
        "getAfterCancel": await _outcome(polling.get_task(GetTaskRequest(id=held.id))),
        "cancelTerminal": await _outcome(polling.cancel_task(CancelTaskRequest(id=terminal.id))),
        "cancelUnknown": await _outcome(
            polling.cancel_task(CancelTaskRequest(id=str(uuid.uuid4())))
        ),
    }


async def stream(streaming: Client, polling: Client, texts: list[str]) -> matrix.Result:
    return {
        "streamed": {text: await _stream(streaming.send_message(_request(text))) for text in texts}
    }


async def subscribe(streaming: Client, polling: Client, texts: list[str]) -> matrix.Result:
    [hold_text] = texts
    held = await _send(polling, hold_text, blocking=False)

    async def cancel_it() -> None:
        await polling.cancel_task(CancelTaskRequest(id=held.id))

    def subscription(task_id: str) -> AsyncIterator[StreamResponse]:
        return streaming.subscribe(SubscribeToTaskRequest(id=task_id))

    return {
        "held": _task(held),
        "subscribed": await _stream(subscription(held.id), cancel_it),
        "subscribeFinished": await _stream(subscription(held.id)),
        "subscribeUnknown": await _stream(subscription(str(uuid.uuid4()))),
    }


def _parts(sent: matrix.Result) -> list[Part]:
    """matrix.PARTS_SENT as the SDK's parts: the text, each data value, each file."""
    parts = [Part(text=sent["text"]), *(new_data_part(value) for value in sent["data"])]
    for file in sent["files"]:
        named = {"media_type": file["mediaType"], "filename": file["name"]}
        if "base64" in file:
            parts.append(new_raw_part(base64.b64decode(file["base64"]), **named))
        else:
            parts.append(new_url_part(file["url"], **named))
    return parts


def _shape(part: Part) -> matrix.Result:
    """A part the SDK read, back in matrix.PARTS_SENT's shapes."""
    match part.WhichOneof("content"):
        case "text":
            return {"text": part.text}
        case "data":
            # A whole number comes back a float (protobuf's Value): equal, as JSON compares.
            [data] = get_data_parts([part])
            return {"data": data}
        case "raw":
            encoded = base64.b64encode(part.raw).decode()
            return {"name": part.filename, "mediaType": part.media_type, "base64": encoded}
        case _:
            return {"name": part.filename, "mediaType": part.media_type, "url": part.url}


def _artifact(artifact: Artifact) -> matrix.Result:
    return {"name": artifact.name, "parts": [_shape(p) for p in artifact.parts]}


async def _sent_parts(client: Client) -> matrix.Result:
    try:
        task = await _sent(client, _request_of(_parts(matrix.PARTS_SENT)))
    except Exception as error:
        return {"error": _error(error)}
    return {"task": {**_task(task), "artifacts": [_artifact(a) for a in task.artifacts]}}


async def _streamed_parts(client: Client) -> matrix.Result:
    artifacts, state = [], None
    try:
        async for event in client.send_message(_request_of(_parts(matrix.PARTS_SENT))):
            if event.HasField("artifact_update"):
                artifacts.append(_artifact(event.artifact_update.artifact))
            elif event.HasField("status_update"):
                state = state_name(event.status_update.status.state)
    except Exception as error:
        return {"error": _error(error)}
    return {"artifacts": artifacts, "state": state}


async def parts(streaming: Client, polling: Client, texts: list[str]) -> matrix.Result:
    """Text, data and files (matrix.PARTS_SENT), sent and streamed: every artifact's parts."""
    return {"sent": await _sent_parts(polling), "streamed": await _streamed_parts(streaming)}


Scenario = Callable[[Client, Client, list[str]], Awaitable[matrix.Result]]


async def _run(base_url: str, mode: SdkMode, scenario: Scenario, texts: list[str]) -> matrix.Result:
    headers = {"Authorization": f"Bearer {matrix.TOKEN}"}
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        # The defaults stream, because the card says it can; the other client is told not to.
        streaming = mode.client(card, httpx_client=http)
        polling = mode.client(card, streaming=False, httpx_client=http)
        result = await scenario(streaming, polling, texts)
        await streaming.close()
        await polling.close()
        return result


async def _drive(adapter: str, mode: SdkMode, scenario: Scenario, *texts: str) -> matrix.Result:
    return await trio.to_thread.run_sync(
        partial(asyncio.run, _run(adapter, mode, scenario, list(texts)))
    )


MODES = sdk_modes.parametrize()
# A row of their own in the conformance table: the clients' parts beyond text.
PARTS_MODES = sdk_modes.parametrize(" parts")


def _methods(mode: SdkMode) -> tuple[str, str, str]:
    """The plain send, the streaming send and the subscription, as the adapter's metrics
    name them (HTTP+JSON's by their v1.0 JSON-RPC names)."""
    if mode.v03:
        return "message/send", "message/stream", "tasks/resubscribe"
    return "SendMessage", "SendStreamingMessage", "SubscribeToTask"


async def _called(adapter: str, mode: SdkMode) -> Counter[str]:
    """The requests the adapter answered, by method, in the binding `mode` speaks."""
    return await matrix.methods_called(adapter, matrix.binding_of(mode.transport))


@MODES
async def test_every_outcome(adapter: str, stub: StubWebhook, mode: SdkMode) -> None:
    result = await _drive(adapter, mode, conversation, *matrix.OUTCOME_TEXTS)
    matrix.check_conversation(result, stub, not_found_type="TaskNotFoundError")
    send, streaming_send, _ = _methods(mode)
    called = await _called(adapter, mode)
    assert (called[send], called[streaming_send]) == (len(matrix.OUTCOME_TEXTS), 0)


@MODES
async def test_cancel(adapter: str, stub: StubWebhook, mode: SdkMode) -> None:
    result = await _drive(adapter, mode, cancel, matrix.ANSWER, matrix.HOLD)
    await matrix.check_cancel(
        result,
        stub,
        not_found_type="TaskNotFoundError",
        not_cancelable_type="TaskNotCancelableError",
    )


@MODES
async def test_every_outcome_streamed(adapter: str, stub: StubWebhook, mode: SdkMode) -> None:
    result = await _drive(adapter, mode, stream, *matrix.STREAMED_TEXTS)
    matrix.check_streams(result, stub)
    send, streaming_send, _ = _methods(mode)
    called = await _called(adapter, mode)
    assert (called[send], called[streaming_send]) == (0, len(matrix.STREAMED_TEXTS))
    await matrix.check_streams_closed(adapter)


@MODES
async def test_resubscribe(adapter: str, stub: StubWebhook, mode: SdkMode) -> None:
    result = await _drive(adapter, mode, subscribe, matrix.HOLD)
    await matrix.check_subscription(
        result,
        stub,
        not_found_type="TaskNotFoundError",
        unsupported_type="UnsupportedOperationError",
    )
    assert (await _called(adapter, mode))[_methods(mode)[2]] == 3
    await matrix.check_streams_closed(adapter)


async def _poll(streaming: Client, polling: Client, texts: list[str]) -> matrix.Result:
    """A non-blocking send, then GetTask until the task is terminal: every state seen."""
    [text] = texts
    task = await _send(polling, text, blocking=False)
    seen = [_task(task)]
    while seen[-1]["state"] not in ("completed", "failed", "canceled"):
        await asyncio.sleep(0.05)
        seen.append(_task(await polling.get_task(GetTaskRequest(id=task.id))))
    return {"polled": seen}


@MODES
async def test_polls_a_non_blocking_task(adapter: str, stub: StubWebhook, mode: SdkMode) -> None:
    polled = (await _drive(adapter, mode, _poll, "sleep:0.4"))["polled"]
    assert polled[0]["state"] == "working"
    assert "working" in [task["state"] for task in polled[1:]]
    assert polled[-1]["state"] == "completed"
    assert polled[-1]["artifacts"] == [{"name": "answer", "texts": ["slept"]}]


@PARTS_MODES
async def test_data_and_files_in_and_out(
    parts_adapter: str, stub: StubWebhook, mode: SdkMode
) -> None:
    matrix.check_parts(await _drive(parts_adapter, mode, parts), stub)


@PARTS_MODES
async def test_a_part_the_modes_do_not_take_is_refused(
    adapter: str, stub: StubWebhook, mode: SdkMode
) -> None:
    result = await _drive(adapter, mode, parts)
    matrix.check_parts_refused(result, stub, error_type="ContentTypeNotSupportedError")
