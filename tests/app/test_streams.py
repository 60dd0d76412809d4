"""Which operations answer with an event stream, and how the JSON-RPC binding frames it."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from n8n_a2a.app.exchange import LastPiece
from n8n_a2a.app.streams import JsonRpcFrames, answers_with_events, framed_together
from n8n_a2a.executor.subscriptions import TaskStream
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import (
    CancelTask,
    GetTask,
    Message,
    Part,
    Role,
    SendMessage,
    StatusUpdate,
    SubscribeToTask,
    Task,
    TaskEvent,
    TaskState,
    TaskStatus,
)
from n8n_a2a.protocol.versions import V1


def test_a_streaming_send_and_a_subscription_answer_with_events_and_nothing_else() -> None:
    hello = Message("m-1", Role.USER, (Part("hello"),))
    assert answers_with_events(SendMessage(hello, streaming=True))
    assert answers_with_events(SubscribeToTask("t-1"))
    assert not answers_with_events(SendMessage(hello))
    assert not answers_with_events(SendMessage(hello, blocking=False))
    assert not answers_with_events(GetTask("t-1"))
    assert not answers_with_events(CancelTask("t-1"))


def data_of(frame: bytes) -> object:
    assert frame.startswith(b"data: ") and frame.endswith(b"\n\n")
    return json.loads(frame.removeprefix(b"data: "))


def test_each_event_is_a_json_rpc_response_with_the_requests_id() -> None:
    frames = JsonRpcFrames(7, V1)
    assert frames.binding == "jsonrpc"
    assert data_of(frames.result({"task": {"id": "t-1"}})) == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"task": {"id": "t-1"}},
    }


def test_a_refusal_is_the_last_event_a_json_rpc_error_with_the_same_id() -> None:
    frames = JsonRpcFrames("req-1", V1)
    document = data_of(frames.error(A2AError(ErrorCode.SERVER_BUSY, "too slow")))
    assert isinstance(document, dict)
    assert (document["id"], document["error"]["code"]) == ("req-1", -32000)
    assert document["error"]["message"] == "too slow"


def stream_heard(*states: TaskState) -> TaskStream:
    """A task's stream that has heard a status update of each state, in order."""
    stream = TaskStream()
    at = datetime(2026, 1, 1, tzinfo=UTC)
    stream.begin(Task("t-1", "c-1", TaskStatus(TaskState.SUBMITTED, at), version=0))
    for sequence, state in enumerate(states, start=1):
        stream.hear(StatusUpdate("t-1", "c-1", TaskStatus(state, at), sequence))
    return stream


def named(item: Task | TaskEvent) -> bytes:
    assert isinstance(item, StatusUpdate)
    return item.status.state.name.encode() + b";"


async def test_the_events_come_together_go_out_as_one_piece_the_final_one_as_the_last() -> None:
    stream = stream_heard(TaskState.WORKING, TaskState.WORKING, TaskState.COMPLETED)
    first = await stream.next()
    assert first is not None
    piece, events = framed_together(stream, first, named)
    assert (piece, events) == (b"WORKING;WORKING;COMPLETED;", 3)
    assert isinstance(piece, LastPiece)


async def test_an_event_alone_is_a_piece_of_its_own_and_not_the_last() -> None:
    stream = stream_heard(TaskState.WORKING)
    first = await stream.next()
    assert first is not None
    piece, events = framed_together(stream, first, named)
    assert (piece, events, isinstance(piece, LastPiece)) == (b"WORKING;", 1, False)
