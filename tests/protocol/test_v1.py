"""The v1.0 shapes: what a v1.0 client sends decoded, and everything encoded exactly as
a2a-sdk 1.3.0 parses it (strictly, by the proto: no `kind`, no `final`, nothing extra)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC
from typing import Any

import pytest
from a2a.types import a2a_pb2
from a2a.utils.proto_utils import parse_lenient
from google.protobuf import json_format  # type: ignore[import-untyped]

from n8n_a2a.protocol import jsonrpc
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import Message, Part, Role, SendMessage, Task, TaskEvent, TaskState
from n8n_a2a.protocol.push import (
    CreatePushConfig,
    DeletePushConfig,
    GetPushConfig,
    ListPushConfigs,
    PushConfig,
    PushConfigPage,
)
from n8n_a2a.protocol.versions import V1
from tests.protocol.samples import (
    CREDENTIALS,
    MOMENT,
    STAMP,
    TOKEN,
    a_task,
    artifact_update,
    full_config,
    sdk_v1_config,
    sdk_v1_config_as_read,
    status_update,
    v1_send,
)

AGENT_HI = {
    "messageId": "m-2",
    "role": "ROLE_AGENT",
    "parts": [{"text": "hi"}],
    "taskId": "t-1",
    "contextId": "c-1",
    "metadata": {"outcome": "ANSWERED"},
}
#: a_task() on the wire: no kind anywhere, proto enum names.
TASK = {
    "id": "t-1",
    "contextId": "c-1",
    "status": {"state": "TASK_STATE_COMPLETED", "timestamp": STAMP, "message": AGENT_HI},
    "artifacts": [{"artifactId": "a-1", "name": "answer", "parts": [{"text": "hi"}]}],
    "history": [
        {
            "messageId": "m-1",
            "role": "ROLE_USER",
            "parts": [{"text": "hello"}],
            "taskId": "t-1",
            "contextId": "c-1",
        },
        AGENT_HI,
    ],
    "metadata": {"outcome": "ANSWERED"},
}


def test_v1_send_decodes() -> None:
    operation = V1.decode("SendMessage", v1_send(contextId="c-9"))
    assert isinstance(operation, SendMessage)
    assert operation.blocking
    assert operation.message.text == "hi"
    assert operation.message.context_id == "c-9"
    assert operation.message.role is Role.USER


def test_v1_return_immediately_is_not_blocking() -> None:
    params = v1_send()
    params["configuration"] = {"returnImmediately": True, "historyLength": 1}
    operation = V1.decode("SendMessage", params)
    assert isinstance(operation, SendMessage)
    assert (operation.blocking, operation.history_length) == (False, 1)


@pytest.mark.parametrize(
    ("method", "params", "code", "words"),
    [
        ("SendMessage", {}, ErrorCode.INVALID_PARAMS, "params.message is required"),
        ("SendMessage", v1_send(role="ROLE_AGENT"), ErrorCode.INVALID_PARAMS, "ROLE_USER"),
        ("SendMessage", v1_send(role="user"), ErrorCode.INVALID_PARAMS, "ROLE_USER"),
        ("SendMessage", v1_send(parts=[]), ErrorCode.INVALID_PARAMS, "params.message.parts"),
        ("SendMessage", v1_send(parts=["x"]), ErrorCode.INVALID_PARAMS, "parts[0]"),
        ("SendMessage", v1_send(parts=[{"text": 1}]), ErrorCode.INVALID_PARAMS, "parts[0].text"),
        (
            "SendMessage",
            v1_send(parts=[{"text": "a", "url": "u"}]),
            ErrorCode.INVALID_PARAMS,
            "exactly one",
        ),
        (
            "SendMessage",
            v1_send(parts=[{"raw": "AA=="}]),
            ErrorCode.CONTENT_TYPE_NOT_SUPPORTED,
            "parts[0] is a file part",
        ),
        ("SendMessage", v1_send(messageId=""), ErrorCode.INVALID_PARAMS, "messageId"),
        ("SendMessage", v1_send(contextId=5), ErrorCode.INVALID_PARAMS, "contextId"),
        ("GetTask", {}, ErrorCode.INVALID_PARAMS, "params.id"),
        ("GetTask", {"id": "t", "historyLength": -1}, ErrorCode.INVALID_PARAMS, "historyLength"),
        ("GetTask", {"id": "t", "historyLength": True}, ErrorCode.INVALID_PARAMS, "historyLength"),
        ("message/send", {}, ErrorCode.METHOD_NOT_FOUND, "A2A-Version: 0.3"),
        ("CreateTaskPushNotificationConfig", {}, ErrorCode.INVALID_PARAMS, "params.taskId"),
        ("GetExtendedAgentCard", {}, ErrorCode.UNSUPPORTED_OPERATION, "extended"),
    ],
)
def test_v1_refusals(method: str, params: dict[str, Any], code: ErrorCode, words: str) -> None:
    with pytest.raises(A2AError) as raised:
        V1.decode(method, params)
    assert raised.value.code is code
    assert words in raised.value.message


def test_v1_encodes_proto_names_and_wraps_the_send_result() -> None:
    assert V1.encode_send_result(a_task()) == {"task": TASK}
    assert V1.encode_task(a_task()) == TASK  # GetTask: the bare task


def test_v1_a_task_is_these_bytes_on_the_wire() -> None:
    """Field order too: what the adapter has always written."""
    user = Message("m-1", Role.USER, (Part("hello"),), "t-1", "c-1")
    task = replace(a_task(), history=(user,), artifacts=(), metadata={})
    assert jsonrpc.result_response(1, V1.encode_send_result(task)) == (
        b'{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t-1","contextId":"c-1",'
        b'"status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-11-29T18:34:32.062Z",'
        b'"message":{"messageId":"m-2","role":"ROLE_AGENT","parts":[{"text":"hi"}],'
        b'"taskId":"t-1","contextId":"c-1","metadata":{"outcome":"ANSWERED"}}},'
        b'"history":[{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}],'
        b'"taskId":"t-1","contextId":"c-1"}]}}}'
    )


def test_v1_stream_events_have_the_stream_response_shape() -> None:
    assert V1.encode_stream_event(status_update(TaskState.WORKING)) == {
        "statusUpdate": {
            "taskId": "t-1",
            "contextId": "c-1",
            "status": {"state": "TASK_STATE_WORKING", "timestamp": STAMP},
        }
    }
    assert V1.encode_stream_event(artifact_update()) == {
        "artifactUpdate": {
            "taskId": "t-1",
            "contextId": "c-1",
            "artifact": {"artifactId": "a-1", "name": "answer", "parts": [{"text": "hi"}]},
            "append": False,
            "lastChunk": True,
        }
    }
    assert V1.encode_stream_event(a_task()) == {"task": TASK}


def v1_client_reads(item: Task | TaskEvent) -> a2a_pb2.StreamResponse:
    """The event as a2a-sdk 1.3.0's client parses it, after a strict parse that refuses
    any field the v1.0 proto lacks (`final`, `kind`, the internal `sequence`)."""
    result = V1.encode_stream_event(item)
    json_format.ParseDict(result, a2a_pb2.StreamResponse())
    return parse_lenient(result, a2a_pb2.StreamResponse())


@pytest.mark.parametrize("state", list(TaskState))
def test_v1_status_updates_parse_with_the_right_state(state: TaskState) -> None:
    agent = Message("m-2", Role.AGENT, (Part("why"),), "t-1", "c-1")
    parsed = v1_client_reads(status_update(state, agent))
    assert parsed.WhichOneof("payload") == "status_update"
    update = parsed.status_update
    assert (update.task_id, update.context_id) == ("t-1", "c-1")
    # Parsed leniently, a state the proto does not know becomes UNSPECIFIED silently.
    assert update.status.state == a2a_pb2.TaskState.Value(f"TASK_STATE_{state.name}")
    assert update.status.message.role == a2a_pb2.ROLE_AGENT
    assert update.status.timestamp.ToDatetime(UTC) == MOMENT


@pytest.mark.parametrize(("append", "last_chunk"), [(False, True), (True, False)])
def test_v1_artifact_updates_parse(append: bool, last_chunk: bool) -> None:
    parsed = v1_client_reads(artifact_update(append, last_chunk))
    assert parsed.WhichOneof("payload") == "artifact_update"
    update = parsed.artifact_update
    assert (update.task_id, update.context_id) == ("t-1", "c-1")
    assert (update.artifact.artifact_id, update.artifact.name) == ("a-1", "answer")
    assert [part.text for part in update.artifact.parts] == ["hi"]
    assert (update.append, update.last_chunk) == (append, last_chunk)


def test_v1_the_task_event_parses() -> None:
    parsed = v1_client_reads(a_task())
    assert parsed.WhichOneof("payload") == "task"
    assert parsed.task.status.state == a2a_pb2.TASK_STATE_COMPLETED
    assert [m.role for m in parsed.task.history] == [a2a_pb2.ROLE_USER, a2a_pb2.ROLE_AGENT]


def test_v1_the_outcome_travels_in_the_status_update_that_ends_a_task() -> None:
    update = replace(status_update(TaskState.FAILED), metadata={"outcome": "ESCALATED"})
    parsed = v1_client_reads(update).status_update
    assert dict(parsed.metadata) == {"outcome": "ESCALATED"}
    assert "metadata" not in V1.encode_stream_event(status_update(TaskState.WORKING))


# Push configs: flat, the create's params and every result.


def test_v1_push_methods_decode_what_the_sdk_sends() -> None:
    create = json_format.MessageToDict(sdk_v1_config())
    assert V1.decode("CreateTaskPushNotificationConfig", create) == CreatePushConfig(
        full_config("1.0")
    )
    get = json_format.MessageToDict(
        a2a_pb2.GetTaskPushNotificationConfigRequest(task_id="t-1", id="c-1")
    )
    assert V1.decode("GetTaskPushNotificationConfig", get) == GetPushConfig("t-1", "c-1")
    listing = json_format.MessageToDict(
        a2a_pb2.ListTaskPushNotificationConfigsRequest(task_id="t-1", page_size=2, page_token="p")
    )
    assert V1.decode("ListTaskPushNotificationConfigs", listing) == ListPushConfigs("t-1", 2, "p")
    delete = json_format.MessageToDict(
        a2a_pb2.DeleteTaskPushNotificationConfigRequest(task_id="t-1", id="c-1")
    )
    assert V1.decode("DeleteTaskPushNotificationConfig", delete) == DeletePushConfig("t-1", "c-1")


def test_a_config_without_an_id_is_named_after_its_task() -> None:
    create = json_format.MessageToDict(
        a2a_pb2.TaskPushNotificationConfig(task_id="t-1", url="http://b.example/")
    )
    operation = V1.decode("CreateTaskPushNotificationConfig", create)
    assert operation == CreatePushConfig(PushConfig("t-1", "t-1", "http://b.example/"))


def test_v1_push_results_parse_strictly_in_the_sdk() -> None:
    document = V1.encode_push_config(full_config("1.0"))
    assert document == {
        "taskId": "t-1",
        "id": "c-1",
        "url": "https://bridge.example/a2a",
        "token": TOKEN,
        "authentication": {"scheme": "Bearer"},
    }
    parsed = json_format.ParseDict(document, a2a_pb2.TaskPushNotificationConfig())
    assert parsed == sdk_v1_config_as_read()
    bare = V1.encode_push_config(PushConfig("t-1", "c-1", "http://b.example/"))
    assert bare == {"taskId": "t-1", "id": "c-1", "url": "http://b.example/"}
    page = V1.encode_push_page(PushConfigPage((full_config("1.0"),), "next"))
    listed = json_format.ParseDict(page, a2a_pb2.ListTaskPushNotificationConfigsResponse())
    assert (list(listed.configs), listed.next_page_token) == ([sdk_v1_config_as_read()], "next")
    assert V1.encode_push_deleted() == {}


@pytest.mark.parametrize(
    ("method", "params", "words"),
    [
        ("CreateTaskPushNotificationConfig", {"taskId": "t"}, "params.url"),
        ("CreateTaskPushNotificationConfig", {"url": "http://b.example/"}, "params.taskId"),
        (
            "CreateTaskPushNotificationConfig",
            {"taskId": "t", "url": "http://user:pw@b.example/"},
            "params.url must not carry credentials",
        ),
        (
            "CreateTaskPushNotificationConfig",
            {"taskId": "t", "url": "gopher://b.example/"},
            "params.url must be an http:// or https:// URL",
        ),
        (
            "CreateTaskPushNotificationConfig",
            {"taskId": "t", "url": "http://b.example/", "token": f"{TOKEN}\r\nX-Evil: 1"},
            "params.token must be printable ASCII",
        ),
        (
            "CreateTaskPushNotificationConfig",
            {"taskId": "t", "url": "http://b.example/", "authentication": {"credentials": "c"}},
            "params.authentication must name a scheme",
        ),
        (
            "CreateTaskPushNotificationConfig",
            {
                "taskId": "t",
                "url": "http://b.example/",
                "authentication": {"scheme": "Bearer", "credentials": f"{CREDENTIALS}\n"},
            },
            "params.authentication.credentials must be printable ASCII",
        ),
        (
            "CreateTaskPushNotificationConfig",
            {"taskId": "t", "url": "http://b.example/", "id": "x" * 257},
            "params.id must be at most 256",
        ),
        (
            "CreateTaskPushNotificationConfig",
            {"taskId": "t", "url": "http://b.example/", "authentication": {"scheme": "B" * 65}},
            "params.authentication scheme must be at most 64 characters",
        ),
        (
            "CreateTaskPushNotificationConfig",
            {"taskId": "t", "url": "http://b.example/", "token": "t" * 4097},
            "params.token must be at most 4096 characters",
        ),
        (
            "CreateTaskPushNotificationConfig",
            {
                "taskId": "t",
                "url": "http://b.example/",
                "authentication": {"scheme": "Bearer", "credentials": "c" * 4097},
            },
            "params.authentication.credentials must be at most 4096 characters",
        ),
        (
            "CreateTaskPushNotificationConfig",
            {"taskId": "t", "url": "http://b.example/" + "p" * 2048},
            "params.url must be at most 2048 characters",
        ),
        (
            "CreateTaskPushNotificationConfig",
            {"taskId": "t" * 1025, "url": "http://b.example/"},
            "params.taskId must be at most 1024 characters",
        ),
        ("GetTaskPushNotificationConfig", {"taskId": "t"}, "params.id"),
        (
            "GetTaskPushNotificationConfig",
            {"taskId": "t", "id": "c" * 1025},
            "params.id must be at most 1024 characters",
        ),
        (
            "DeleteTaskPushNotificationConfig",
            {"taskId": "t" * 1025, "id": "c"},
            "params.taskId must be at most 1024 characters",
        ),
        (
            "ListTaskPushNotificationConfigs",
            {"taskId": "t" * 1025},
            "params.taskId must be at most 1024 characters",
        ),
        ("DeleteTaskPushNotificationConfig", {"id": "c"}, "params.taskId"),
        ("ListTaskPushNotificationConfigs", {"taskId": "t", "pageSize": -1}, "pageSize"),
    ],
)
def test_v1_push_refusals(method: str, params: dict[str, Any], words: str) -> None:
    with pytest.raises(A2AError) as raised:
        V1.decode(method, params)
    assert raised.value.code is ErrorCode.INVALID_PARAMS
    assert words in raised.value.message
    # A token or credentials are secrets: never quoted back.
    assert TOKEN not in raised.value.message and CREDENTIALS not in raised.value.message
