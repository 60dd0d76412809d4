"""Which operations answer with an event stream, and how the JSON-RPC binding frames it."""

from __future__ import annotations

import json

from n8n_a2a.app.streams import JsonRpcFrames, answers_with_events
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import (
    CancelTask,
    GetTask,
    Message,
    Part,
    Role,
    SendMessage,
    SubscribeToTask,
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
