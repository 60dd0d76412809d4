"""The v0.3 shapes: what a v0.3 client sends decoded, and everything encoded exactly as the
v0.3 models (a2a-sdk 0.3's, kept in 1.3.0's compat) validate it: kind-tagged, `final` on
every status update, nothing the schema lacks."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as v03_types
from a2a.types import a2a_pb2

from n8n_a2a.protocol import jsonrpc, writing
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import (
    Message,
    Part,
    Role,
    SendMessage,
    Task,
    TaskEvent,
    TaskState,
)
from n8n_a2a.protocol.push import (
    CreatePushConfig,
    DeletePushConfig,
    GetPushConfig,
    ListPushConfigs,
    PushConfigPage,
)
from n8n_a2a.protocol.versions import V03
from tests.protocol.samples import (
    CREDENTIALS,
    ENDS_A_STREAM,
    STAMP,
    TOKEN,
    a_task,
    artifact_update,
    full_config,
    sdk_v03_params,
    sdk_v1_config,
    sdk_v1_config_as_read,
    status_update,
    v03_send,
)

AGENT_HI = {
    "kind": "message",
    "messageId": "m-2",
    "role": "agent",
    "parts": [{"kind": "text", "text": "hi"}],
    "taskId": "t-1",
    "contextId": "c-1",
    "metadata": {"outcome": "ANSWERED"},
}
#: a_task() on the wire: every object and part kind-tagged, states and roles lowercase.
TASK = {
    "kind": "task",
    "id": "t-1",
    "contextId": "c-1",
    "status": {"state": "completed", "timestamp": STAMP, "message": AGENT_HI},
    "artifacts": [
        {"artifactId": "a-1", "name": "answer", "parts": [{"kind": "text", "text": "hi"}]}
    ],
    "history": [
        {
            "kind": "message",
            "messageId": "m-1",
            "role": "user",
            "parts": [{"kind": "text", "text": "hello"}],
            "taskId": "t-1",
            "contextId": "c-1",
        },
        AGENT_HI,
    ],
    "metadata": {"outcome": "ANSWERED"},
}
#: What a receiver of the v0.3 push config full_config("0.3") reads back.
PUSH_CONFIG = {
    "taskId": "t-1",
    "pushNotificationConfig": {
        "id": "c-1",
        "url": "https://bridge.example/a2a",
        "token": TOKEN,
        "authentication": {"schemes": ["Bearer"]},
    },
}


def test_v03_send_decodes_and_joins_text_parts() -> None:
    operation = V03.decode("message/send", v03_send(blocking=False))
    assert isinstance(operation, SendMessage)
    assert not operation.blocking
    assert operation.message.text == "hi\nthere"


def test_v03_a_send_without_blocking_blocks_as_the_clients_ask() -> None:
    operation = V03.decode("message/send", v03_send())
    assert isinstance(operation, SendMessage)
    assert operation.blocking


@pytest.mark.parametrize(
    ("part", "code"),
    [
        ({"text": "no kind"}, ErrorCode.INVALID_PARAMS),
        ({"kind": "file", "file": {"uri": "http://x"}}, ErrorCode.CONTENT_TYPE_NOT_SUPPORTED),
        ({"kind": "data", "data": {}}, ErrorCode.CONTENT_TYPE_NOT_SUPPORTED),
    ],
)
def test_v03_part_refusals(part: dict[str, Any], code: ErrorCode) -> None:
    params = v03_send()
    params["message"]["parts"] = [part]
    with pytest.raises(A2AError) as raised:
        V03.decode("message/send", params)
    assert raised.value.code is code


def test_v03_encodes_kinds_and_lowercase_and_does_not_wrap() -> None:
    assert V03.encode_send_result(a_task()) == TASK
    assert V03.encode_task(a_task()) == TASK


def test_v03_a_task_is_these_bytes_on_the_wire() -> None:
    """Field order too, `kind` first: what the adapter has always written."""
    user = Message("m-1", Role.USER, (Part("hello"),), "t-1", "c-1")
    task = replace(a_task(), history=(user,), artifacts=(), metadata={})
    assert jsonrpc.result_response("7", V03.encode_send_result(task)) == (
        b'{"jsonrpc":"2.0","id":"7","result":{"kind":"task","id":"t-1","contextId":"c-1",'
        b'"status":{"state":"completed","timestamp":"2026-11-29T18:34:32.062Z",'
        b'"message":{"kind":"message","messageId":"m-2","role":"agent",'
        b'"parts":[{"kind":"text","text":"hi"}],"taskId":"t-1","contextId":"c-1",'
        b'"metadata":{"outcome":"ANSWERED"}}},"history":[{"kind":"message","messageId":"m-1",'
        b'"role":"user","parts":[{"kind":"text","text":"hello"}],"taskId":"t-1",'
        b'"contextId":"c-1"}]}}'
    )


def test_v03_stream_events_are_kind_tagged() -> None:
    assert V03.encode_stream_event(status_update(TaskState.WORKING)) == {
        "kind": "status-update",
        "taskId": "t-1",
        "contextId": "c-1",
        "status": {"state": "working", "timestamp": STAMP},
        "final": False,
    }
    assert V03.encode_stream_event(artifact_update()) == {
        "kind": "artifact-update",
        "taskId": "t-1",
        "contextId": "c-1",
        "artifact": {
            "artifactId": "a-1",
            "name": "answer",
            "parts": [{"kind": "text", "text": "hi"}],
        },
        "append": False,
        "lastChunk": True,
    }
    assert V03.encode_stream_event(a_task()) == TASK


def test_v03_final_comes_last_in_a_status_update() -> None:
    update = replace(status_update(TaskState.COMPLETED), metadata={"outcome": "ANSWERED"})
    assert writing.dump(V03.encode_stream_event(update)) == (
        b'{"kind":"status-update","taskId":"t-1","contextId":"c-1",'
        b'"status":{"state":"completed","timestamp":"2026-11-29T18:34:32.062Z"},'
        b'"metadata":{"outcome":"ANSWERED"},"final":true}'
    )


def v03_client_reads(item: Task | TaskEvent) -> v03_types.SendStreamingMessageSuccessResponse:
    """The event as the v0.3 models (a2a-sdk 0.3's, kept in 1.3.0's compat) validate it;
    dumped back, it must be what was sent: no field the schema lacks, none renamed."""
    result = V03.encode_stream_event(item)
    response = v03_types.SendStreamingMessageSuccessResponse.model_validate(
        {"jsonrpc": "2.0", "id": 1, "result": result}
    )
    assert response.result.model_dump(mode="json", by_alias=True, exclude_none=True) == result
    return response


@pytest.mark.parametrize(("state", "final"), ENDS_A_STREAM)
def test_v03_status_updates_validate_with_final(state: TaskState, final: bool) -> None:
    agent = Message("m-2", Role.AGENT, (Part("why"),), "t-1", "c-1")
    response = v03_client_reads(status_update(state, agent))
    update = response.result
    assert isinstance(update, v03_types.TaskStatusUpdateEvent)
    assert update.final is final
    assert update.status.state is v03_types.TaskState(state.value)
    assert update.status.message is not None
    assert update.status.message.role is v03_types.Role.agent
    # What a2a-sdk 1.3.0's v0.3 client hands its caller.
    core = conversions.to_core_stream_response(response)
    assert core.status_update.status.state == a2a_pb2.TaskState.Value(f"TASK_STATE_{state.name}")


def test_v03_the_outcome_travels_in_the_status_update_that_ends_a_task() -> None:
    update = replace(status_update(TaskState.FAILED), metadata={"outcome": "ESCALATED"})
    v03 = v03_client_reads(update).result
    assert isinstance(v03, v03_types.TaskStatusUpdateEvent)
    assert v03.metadata == {"outcome": "ESCALATED"}


def test_v03_a_status_update_without_final_is_refused_by_the_models() -> None:
    result = V03.encode_stream_event(status_update(TaskState.COMPLETED))
    del result["final"]
    with pytest.raises(ValueError, match="final"):
        v03_types.TaskStatusUpdateEvent.model_validate(result)


@pytest.mark.parametrize(("append", "last_chunk"), [(False, True), (True, False)])
def test_v03_artifact_updates_validate(append: bool, last_chunk: bool) -> None:
    update = v03_client_reads(artifact_update(append, last_chunk)).result
    assert isinstance(update, v03_types.TaskArtifactUpdateEvent)
    assert (update.task_id, update.context_id) == ("t-1", "c-1")
    assert (update.append, update.last_chunk) == (append, last_chunk)
    assert update.artifact.parts[0].root.kind == "text"


def test_v03_the_task_event_validates() -> None:
    task = v03_client_reads(a_task()).result
    assert isinstance(task, v03_types.Task)
    assert task.status.state is v03_types.TaskState.completed


# Push configs: nested under the task's id; get, list and delete name the task as `id`.


def test_v03_push_methods_decode_what_the_sdk_sends() -> None:
    create = conversions.to_compat_create_task_push_notification_config_request(
        sdk_v1_config(), request_id=0
    )
    assert V03.decode("tasks/pushNotificationConfig/set", sdk_v03_params(create)) == (
        CreatePushConfig(full_config("0.3"))
    )
    get = conversions.to_compat_get_task_push_notification_config_request(
        a2a_pb2.GetTaskPushNotificationConfigRequest(task_id="t-1", id="c-1"), request_id=0
    )
    assert V03.decode("tasks/pushNotificationConfig/get", sdk_v03_params(get)) == (
        GetPushConfig("t-1", "c-1")
    )
    listing = conversions.to_compat_list_task_push_notification_config_request(
        a2a_pb2.ListTaskPushNotificationConfigsRequest(task_id="t-1"), request_id=0
    )
    assert V03.decode("tasks/pushNotificationConfig/list", sdk_v03_params(listing)) == (
        ListPushConfigs("t-1")
    )
    delete = conversions.to_compat_delete_task_push_notification_config_request(
        a2a_pb2.DeleteTaskPushNotificationConfigRequest(task_id="t-1", id="c-1"), request_id=0
    )
    assert V03.decode("tasks/pushNotificationConfig/delete", sdk_v03_params(delete)) == (
        DeletePushConfig("t-1", "c-1")
    )


def test_v03_get_without_a_config_id_means_the_one_named_after_the_task() -> None:
    get = conversions.to_compat_get_task_push_notification_config_request(
        a2a_pb2.GetTaskPushNotificationConfigRequest(task_id="t-1"), request_id=0
    )
    assert sdk_v03_params(get) == {"id": "t-1"}
    assert V03.decode("tasks/pushNotificationConfig/get", {"id": "t-1"}) == GetPushConfig(
        "t-1", "t-1"
    )


def test_v03_push_results_validate_in_the_v03_models() -> None:
    document = V03.encode_push_config(full_config("0.3"))
    assert document == PUSH_CONFIG
    model = v03_types.TaskPushNotificationConfig.model_validate(document)
    assert model.model_dump(mode="json", by_alias=True, exclude_none=True) == document
    assert conversions.to_core_task_push_notification_config(model) == sdk_v1_config_as_read()
    listed = V03.encode_push_page(PushConfigPage((full_config("0.3"),)))
    assert listed == [PUSH_CONFIG]
    response = v03_types.ListTaskPushNotificationConfigResponse.model_validate(
        {"jsonrpc": "2.0", "id": 1, "result": listed}
    )
    assert isinstance(response.root, v03_types.ListTaskPushNotificationConfigSuccessResponse)
    deleted = jsonrpc.result_response(1, V03.encode_push_deleted())
    assert deleted == b'{"jsonrpc":"2.0","id":1,"result":null}'


@pytest.mark.parametrize(
    ("method", "params", "words"),
    [
        (
            "tasks/pushNotificationConfig/set",
            {
                "taskId": "t",
                "pushNotificationConfig": {
                    "url": "http://b.example/",
                    "authentication": {"schemes": ["B" * 1_000_000]},
                },
            },
            "params.pushNotificationConfig.authentication scheme must be at most 64",
        ),
        (
            "tasks/pushNotificationConfig/get",
            {"id": "t", "pushNotificationConfigId": "c" * 1025},
            "params.pushNotificationConfigId must be at most 1024 characters",
        ),
        (
            "tasks/pushNotificationConfig/list",
            {"id": "t" * 1025},
            "params.id must be at most 1024 characters",
        ),
        ("tasks/pushNotificationConfig/set", {"taskId": "t"}, "pushNotificationConfig is"),
        (
            "tasks/pushNotificationConfig/set",
            {
                "taskId": "t",
                "pushNotificationConfig": {
                    "url": "http://b.example/",
                    "authentication": {"schemes": [], "credentials": "c"},
                },
            },
            "params.pushNotificationConfig.authentication must name a scheme",
        ),
        ("tasks/pushNotificationConfig/delete", {"id": "t"}, "pushNotificationConfigId"),
        ("tasks/pushNotificationConfig/list", {}, "params.id"),
    ],
)
def test_v03_push_refusals(method: str, params: dict[str, Any], words: str) -> None:
    with pytest.raises(A2AError) as raised:
        V03.decode(method, params)
    assert raised.value.code is ErrorCode.INVALID_PARAMS
    assert words in raised.value.message
    # A token or credentials are secrets: never quoted back.
    assert TOKEN not in raised.value.message and CREDENTIALS not in raised.value.message
