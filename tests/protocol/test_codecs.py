"""Both wire codecs: decoding operations and encoding tasks exactly as the clients read them."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as v03_types
from a2a.types import a2a_pb2
from a2a.utils.proto_utils import parse_lenient
from google.protobuf import json_format  # type: ignore[import-untyped]

from n8n_a2a.protocol import jsonrpc
from n8n_a2a.protocol.codec import Codec
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import (
    INTERRUPTED_STATES,
    Artifact,
    ArtifactUpdate,
    GetTask,
    Message,
    Part,
    Role,
    SendMessage,
    StatusUpdate,
    SubscribeToTask,
    Task,
    TaskEvent,
    TaskPage,
    TaskState,
    TaskStatus,
)
from n8n_a2a.protocol.push import (
    CreatePushConfig,
    DeletePushConfig,
    GetPushConfig,
    ListPushConfigs,
    PushAuthentication,
    PushConfig,
    PushConfigPage,
)
from n8n_a2a.protocol.versions import V03, V1, codec_for, negotiate

MOMENT = datetime(2026, 11, 29, 18, 34, 32, 62_000, tzinfo=UTC)


def a_task() -> Task:
    user = Message("m-1", Role.USER, (Part("hello"),), "t-1", "c-1")
    agent = Message("m-2", Role.AGENT, (Part("hi"),), "t-1", "c-1", {"outcome": "ANSWERED"})
    return Task(
        id="t-1",
        context_id="c-1",
        status=TaskStatus(TaskState.COMPLETED, MOMENT, agent),
        history=(user, agent),
        artifacts=(Artifact("a-1", "answer", (Part("hi"),)),),
        metadata={"outcome": "ANSWERED"},
    )


def v1_send(**message: Any) -> dict[str, Any]:
    return {
        "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}], **message},
        "configuration": {},
    }


def v03_send(**configuration: Any) -> dict[str, Any]:
    return {
        "configuration": configuration,
        "message": {
            "kind": "message",
            "messageId": "m-1",
            "role": "user",
            "parts": [{"kind": "text", "text": "hi"}, {"kind": "text", "text": "there"}],
        },
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


def test_v03_send_decodes_and_joins_text_parts() -> None:
    operation = V03.decode("message/send", v03_send(blocking=False))
    assert isinstance(operation, SendMessage)
    assert not operation.blocking
    assert operation.message.text == "hi\nthere"


def test_empty_optional_ids_mean_unset_as_in_proto3_json() -> None:
    operation = V1.decode("SendMessage", v1_send(contextId="", taskId=""))
    assert isinstance(operation, SendMessage)
    assert operation.message.context_id is None and operation.message.task_id is None


def test_snake_case_params_are_read_too() -> None:
    assert V1.decode("GetTask", {"id": "t", "history_length": 2}) == GetTask("t", 2)


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
        ("GetExtendedAgentCard", {}, ErrorCode.EXTENDED_AGENT_CARD_NOT_CONFIGURED, "extended"),
    ],
)
def test_v1_refusals(method: str, params: dict[str, Any], code: ErrorCode, words: str) -> None:
    with pytest.raises(A2AError) as raised:
        V1.decode(method, params)
    assert raised.value.code is code
    assert words in raised.value.message


def test_output_modes_without_text_are_refused() -> None:
    with pytest.raises(A2AError) as raised:
        V03.decode("message/send", v03_send(acceptedOutputModes=["image/png"]))
    assert raised.value.code is ErrorCode.CONTENT_TYPE_NOT_SUPPORTED
    operation = V03.decode("message/send", v03_send(acceptedOutputModes=["text/plain"]))
    assert isinstance(operation, SendMessage)


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


def test_v1_encodes_proto_names_and_wraps_the_send_result() -> None:
    document = V1.encode_send_result(a_task())
    assert list(document) == ["task"]
    task = document["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["status"]["timestamp"] == "2026-11-29T18:34:32.062Z"
    assert task["status"]["message"]["role"] == "ROLE_AGENT"
    assert [m["role"] for m in task["history"]] == ["ROLE_USER", "ROLE_AGENT"]
    assert task["artifacts"] == [{"artifactId": "a-1", "name": "answer", "parts": [{"text": "hi"}]}]
    assert "kind" not in task and "kind" not in task["history"][0]
    assert V1.encode_task(a_task()) == task  # GetTask: the bare task


def test_v03_encodes_kinds_and_lowercase_and_does_not_wrap() -> None:
    task = V03.encode_send_result(a_task())
    assert task["kind"] == "task"
    assert task["status"]["state"] == "completed"
    assert task["history"][0] == {
        "kind": "message",
        "messageId": "m-1",
        "role": "user",
        "parts": [{"kind": "text", "text": "hello"}],
        "taskId": "t-1",
        "contextId": "c-1",
    }
    assert task["artifacts"][0]["parts"] == [{"kind": "text", "text": "hi"}]


@pytest.mark.parametrize("state", list(TaskState))
def test_every_state_has_a_name_in_both_versions(state: TaskState) -> None:
    assert V1.state_names[state] == "TASK_STATE_" + state.value.upper().replace("-", "_")
    assert V03.state_names[state] == state.value


@pytest.mark.parametrize("codec", [V1, V03], ids=["v1.0", "v0.3"])
def test_a_tasks_owner_and_version_never_go_on_the_wire(codec: Codec) -> None:
    task = replace(a_task(), owner="token:0wn3r-d1g35t", version=7)
    update = StatusUpdate(task.id, task.context_id, task.status, 7)
    encoded = [
        codec.encode_task(task),
        codec.encode_send_result(task),
        codec.encode_stream_event(task),
        codec.encode_stream_event(update),
        codec.encode_page(TaskPage((task,), "", 50, 1)),
    ]
    assert encoded[0] == codec.encode_task(replace(task, owner=None))
    for document in encoded:
        wire = json.dumps(document)
        assert "0wn3r" not in wire and "owner" not in wire.lower()
    assert "0wn3r" not in repr(task)


def test_history_length_keeps_the_newest() -> None:
    task = a_task()
    assert [m.message_id for m in task.with_history_length(1).history] == ["m-2"]
    assert task.with_history_length(0).history == ()
    assert task.with_history_length(None) is task
    assert task.with_history_length(10) is task


def test_v1_errors_carry_error_info_and_v03_errors_do_not() -> None:
    error = A2AError.task_not_found("t-9")
    assert V1.encode_error(error) == {
        "code": -32001,
        "message": "Task not found: t-9",
        "data": [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "TASK_NOT_FOUND",
                "domain": "a2a-protocol.org",
            }
        ],
    }
    assert V03.encode_error(error) == {"code": -32001, "message": "Task not found: t-9"}
    assert "data" not in V1.encode_error(A2AError.invalid_params("x"))


@pytest.mark.parametrize(
    ("requested", "version"),
    [
        (None, "0.3"),
        ("", "0.3"),
        (" ", "0.3"),
        ("0.3", "0.3"),
        ("0.3.0", "0.3"),
        ("1.0", "1.0"),
        ("1", "1.0"),
        ("1.0.0", "1.0"),
    ],
)
def test_version_negotiation(requested: str | None, version: str) -> None:
    assert codec_for(requested).version == version


@pytest.mark.parametrize(
    "requested",
    [
        *["2.0", "0.2", "1.1", "latest", "1.0.0.0", "x" * 1000],
        # Digits only in ASCII, and few of them: int() takes superscript and Arabic-Indic
        # digits, and refuses more than 4,300 of them.
        *["¹", "²", "1.²", "\u0663.\u0660", "1" * 4301, "1." + "0" * 40, "0001.0"],
    ],
)
def test_unsupported_versions_are_32009(requested: str) -> None:
    with pytest.raises(A2AError) as raised:
        codec_for(requested)
    assert raised.value.code is ErrorCode.VERSION_NOT_SUPPORTED
    assert len(raised.value.message) < 200


# Streams: the four methods, and every event as the official clients read it.

INTERRUPTED = {TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED}
TERMINAL = {TaskState.COMPLETED, TaskState.CANCELED, TaskState.FAILED, TaskState.REJECTED}


def status_update(state: TaskState, message: Message | None = None) -> StatusUpdate:
    return StatusUpdate("t-1", "c-1", TaskStatus(state, MOMENT, message), sequence=3)


def artifact_update(append: bool = False, last_chunk: bool = True) -> ArtifactUpdate:
    answer = Artifact("a-1", "answer", (Part("hi"),))
    return ArtifactUpdate("t-1", "c-1", answer, sequence=2, append=append, last_chunk=last_chunk)


@pytest.mark.parametrize(
    ("codec", "method", "params"),
    [
        (V1, "SendStreamingMessage", v1_send()),
        (V03, "message/stream", v03_send()),
    ],
)
def test_a_streaming_send_is_a_send_that_streams(
    codec: Codec, method: str, params: dict[str, Any]
) -> None:
    operation = codec.decode(method, params)
    assert isinstance(operation, SendMessage)
    assert operation.streaming and operation.blocking
    assert operation.message.message_id == "m-1"


def test_a_plain_send_does_not_stream() -> None:
    operation = V1.decode("SendMessage", v1_send())
    assert isinstance(operation, SendMessage)
    assert not operation.streaming


@pytest.mark.parametrize(
    ("codec", "method", "configuration"),
    [
        (V1, "SendStreamingMessage", {"returnImmediately": True, "historyLength": 2}),
        (V03, "message/stream", {"blocking": False, "historyLength": 2}),
    ],
)
def test_a_stream_follows_the_task_whatever_the_blocking_flag(
    codec: Codec, method: str, configuration: dict[str, Any]
) -> None:
    params = v1_send() if codec is V1 else v03_send()
    params["configuration"] = configuration
    operation = codec.decode(method, params)
    assert isinstance(operation, SendMessage)
    assert (operation.streaming, operation.blocking, operation.history_length) == (True, True, 2)


@pytest.mark.parametrize(("codec", "method"), [(V1, "SubscribeToTask"), (V03, "tasks/resubscribe")])
def test_subscribe_decodes(codec: Codec, method: str) -> None:
    assert codec.decode(method, {"id": "t-1", "metadata": {}}) == SubscribeToTask("t-1")


@pytest.mark.parametrize(
    ("codec", "method", "params", "code", "words"),
    [
        (V1, "SubscribeToTask", {}, ErrorCode.INVALID_PARAMS, "params.id"),
        (V03, "tasks/resubscribe", {}, ErrorCode.INVALID_PARAMS, "params.id"),
        (V1, "SubscribeToTask", {"id": 7}, ErrorCode.INVALID_PARAMS, "params.id"),
        (V03, "tasks/resubscribe", {"id": ""}, ErrorCode.INVALID_PARAMS, "params.id"),
        (V1, "SendStreamingMessage", {}, ErrorCode.INVALID_PARAMS, "params.message is required"),
        (V03, "message/stream", {}, ErrorCode.INVALID_PARAMS, "params.message is required"),
        (
            V1,
            "SendStreamingMessage",
            v1_send(parts=[{"raw": "AA=="}]),
            ErrorCode.CONTENT_TYPE_NOT_SUPPORTED,
            "parts[0] is a file part",
        ),
        (
            V03,
            "message/stream",
            v03_send(blocking="no"),
            ErrorCode.INVALID_PARAMS,
            "params.configuration.blocking",
        ),
        (
            V03,
            "message/stream",
            v03_send(pushNotificationConfig={"url": "ftp://x"}),
            ErrorCode.INVALID_PARAMS,
            "params.configuration.pushNotificationConfig.url",
        ),
        (V1, "message/stream", {}, ErrorCode.METHOD_NOT_FOUND, "A2A-Version: 0.3"),
        (V03, "SubscribeToTask", {"id": "t-1"}, ErrorCode.METHOD_NOT_FOUND, "A2A-Version: 1.0"),
    ],
)
def test_stream_method_refusals(
    codec: Codec, method: str, params: dict[str, Any], code: ErrorCode, words: str
) -> None:
    with pytest.raises(A2AError) as raised:
        codec.decode(method, params)
    assert raised.value.code is code
    assert words in raised.value.message


def test_v1_stream_events_have_the_stream_response_shape() -> None:
    assert V1.encode_stream_event(status_update(TaskState.WORKING)) == {
        "statusUpdate": {
            "taskId": "t-1",
            "contextId": "c-1",
            "status": {"state": "TASK_STATE_WORKING", "timestamp": "2026-11-29T18:34:32.062Z"},
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
    assert V1.encode_stream_event(a_task()) == {"task": V1.encode_task(a_task())}


def test_v03_stream_events_are_kind_tagged() -> None:
    assert V03.encode_stream_event(status_update(TaskState.WORKING)) == {
        "kind": "status-update",
        "taskId": "t-1",
        "contextId": "c-1",
        "status": {"state": "working", "timestamp": "2026-11-29T18:34:32.062Z"},
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
    assert V03.encode_stream_event(a_task()) == V03.encode_task(a_task())


@pytest.mark.parametrize("codec", [V1, V03])
def test_a_status_update_encodes_its_status_as_a_task_does(codec: Codec) -> None:
    task = a_task()
    update = StatusUpdate(task.id, task.context_id, task.status, sequence=1)
    document = codec.encode_stream_event(update)
    event = document["statusUpdate"] if codec is V1 else document
    assert event["status"] == codec.encode_task(task)["status"]


@pytest.mark.parametrize("state", list(TaskState))
def test_final_is_a_terminal_or_an_interrupted_state(state: TaskState) -> None:
    assert (state in INTERRUPTED_STATES) is (state in INTERRUPTED)
    assert status_update(state).final is (state in TERMINAL | INTERRUPTED)


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


def v03_client_reads(item: Task | TaskEvent) -> v03_types.SendStreamingMessageSuccessResponse:
    """The event as the v0.3 models (a2a-sdk 0.3's, kept in 1.3.0's compat) validate it;
    dumped back, it must be what was sent: no field the schema lacks, none renamed."""
    result = V03.encode_stream_event(item)
    response = v03_types.SendStreamingMessageSuccessResponse.model_validate(
        {"jsonrpc": "2.0", "id": 1, "result": result}
    )
    assert response.result.model_dump(mode="json", by_alias=True, exclude_none=True) == result
    return response


@pytest.mark.parametrize("state", list(TaskState))
def test_v03_status_updates_validate_with_final(state: TaskState) -> None:
    agent = Message("m-2", Role.AGENT, (Part("why"),), "t-1", "c-1")
    response = v03_client_reads(status_update(state, agent))
    update = response.result
    assert isinstance(update, v03_types.TaskStatusUpdateEvent)
    assert update.final is (state in TERMINAL | INTERRUPTED)
    assert update.status.state is v03_types.TaskState(state.value)
    assert update.status.message is not None
    assert update.status.message.role is v03_types.Role.agent
    # What a2a-sdk 1.3.0's v0.3 client hands its caller.
    core = conversions.to_core_stream_response(response)
    assert core.status_update.status.state == a2a_pb2.TaskState.Value(f"TASK_STATE_{state.name}")


def test_the_outcome_travels_in_the_status_update_that_ends_a_task() -> None:
    update = replace(status_update(TaskState.FAILED), metadata={"outcome": "ESCALATED"})
    parsed = v1_client_reads(update).status_update
    assert dict(parsed.metadata) == {"outcome": "ESCALATED"}
    v03 = v03_client_reads(update).result
    assert isinstance(v03, v03_types.TaskStatusUpdateEvent)
    assert v03.metadata == {"outcome": "ESCALATED"}
    assert "metadata" not in V1.encode_stream_event(status_update(TaskState.WORKING))


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


@pytest.mark.parametrize(
    ("requested", "version"), [(None, "0.3"), ("0.3", "0.3"), ("1.0", "1.0"), ("2.0", "1.0")]
)
def test_negotiation_gives_errors_a_shape_even_for_a_version_not_served(
    requested: str | None, version: str
) -> None:
    codec, unsupported = negotiate(requested)
    assert codec.version == version
    assert (unsupported is not None) is (requested == "2.0")
    if unsupported is not None:
        assert unsupported.code is ErrorCode.VERSION_NOT_SUPPORTED


# Push configs: the four methods and inline configs, as the official clients send them,
# and every result as they parse it.

TOKEN = "per-task-token-1"
CREDENTIALS = "secret-credentials"


def sdk_v1_config(**fields: Any) -> a2a_pb2.TaskPushNotificationConfig:
    return a2a_pb2.TaskPushNotificationConfig(
        task_id="t-1",
        id="c-1",
        url="https://bridge.example/a2a",
        token=TOKEN,
        authentication=a2a_pb2.AuthenticationInfo(scheme="Bearer", credentials=CREDENTIALS),
        **fields,
    )


def full_config(version: str) -> PushConfig:
    return PushConfig(
        "t-1",
        "c-1",
        "https://bridge.example/a2a",
        TOKEN,
        PushAuthentication("Bearer", CREDENTIALS),
        version,
    )


def sdk_v03_params(request: Any) -> dict[str, Any]:
    """The params of a v0.3 request as a2a-sdk 1.3.0's compat transport writes them."""
    params: dict[str, Any] = request.params.model_dump(
        by_alias=True, exclude_none=True, mode="json"
    )
    return params


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


def test_a_config_without_an_id_is_named_after_its_task() -> None:
    create = json_format.MessageToDict(
        a2a_pb2.TaskPushNotificationConfig(task_id="t-1", url="http://b.example/")
    )
    operation = V1.decode("CreateTaskPushNotificationConfig", create)
    assert operation == CreatePushConfig(PushConfig("t-1", "t-1", "http://b.example/"))


@pytest.mark.parametrize("codec", [V1, V03])
def test_inline_configs_decode_from_what_the_sdk_sends(codec: Codec) -> None:
    inline = sdk_v1_config()
    inline.ClearField("task_id")
    inline.ClearField("id")
    request = a2a_pb2.SendMessageRequest(
        message=a2a_pb2.Message(
            message_id="m-1", role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text="hi")]
        ),
        configuration=a2a_pb2.SendMessageConfiguration(task_push_notification_config=inline),
    )
    if codec is V1:
        operation = V1.decode("SendMessage", json_format.MessageToDict(request))
    else:
        compat = conversions.to_compat_send_message_request(request, request_id=1)
        operation = V03.decode("message/send", sdk_v03_params(compat))
    assert isinstance(operation, SendMessage)
    assert operation.push_config == PushConfig(
        "",
        "",
        "https://bridge.example/a2a",
        TOKEN,
        PushAuthentication("Bearer", CREDENTIALS),
        codec.version,
    )
    assert operation.push_config.for_task("t-9").id == "t-9"


def sdk_v1_config_as_read() -> a2a_pb2.TaskPushNotificationConfig:
    """A config as Get and List answer it: credentials are write-only."""
    config = sdk_v1_config()
    config.authentication.ClearField("credentials")
    return config


def test_v1_push_results_parse_strictly_in_the_sdk() -> None:
    document = V1.encode_push_config(full_config("1.0"))
    assert CREDENTIALS not in json.dumps(document)
    parsed = json_format.ParseDict(document, a2a_pb2.TaskPushNotificationConfig())
    assert parsed == sdk_v1_config_as_read()
    bare = V1.encode_push_config(PushConfig("t-1", "c-1", "http://b.example/"))
    assert bare == {"taskId": "t-1", "id": "c-1", "url": "http://b.example/"}
    page = V1.encode_push_page(PushConfigPage((full_config("1.0"),), "next"))
    listed = json_format.ParseDict(page, a2a_pb2.ListTaskPushNotificationConfigsResponse())
    assert (list(listed.configs), listed.next_page_token) == ([sdk_v1_config_as_read()], "next")
    assert V1.encode_push_deleted() == {}


def test_v03_push_results_validate_in_the_v03_models() -> None:
    document = V03.encode_push_config(full_config("0.3"))
    assert CREDENTIALS not in json.dumps(document)
    model = v03_types.TaskPushNotificationConfig.model_validate(document)
    assert model.model_dump(mode="json", by_alias=True, exclude_none=True) == document
    assert conversions.to_core_task_push_notification_config(model) == sdk_v1_config_as_read()
    listed = V03.encode_push_page(PushConfigPage((full_config("0.3"),)))
    assert listed == [document]
    response = v03_types.ListTaskPushNotificationConfigResponse.model_validate(
        {"jsonrpc": "2.0", "id": 1, "result": listed}
    )
    assert isinstance(response.root, v03_types.ListTaskPushNotificationConfigSuccessResponse)
    deleted = jsonrpc.result_response(1, V03.encode_push_deleted())
    assert deleted == b'{"jsonrpc":"2.0","id":1,"result":null}'


@pytest.mark.parametrize(
    ("codec", "method", "params", "words"),
    [
        (V1, "CreateTaskPushNotificationConfig", {"taskId": "t"}, "params.url"),
        (V1, "CreateTaskPushNotificationConfig", {"url": "http://b.example/"}, "params.taskId"),
        (
            V1,
            "CreateTaskPushNotificationConfig",
            {"taskId": "t", "url": "http://user:pw@b.example/"},
            "params.url must not carry credentials",
        ),
        (
            V1,
            "CreateTaskPushNotificationConfig",
            {"taskId": "t", "url": "gopher://b.example/"},
            "params.url must be an http:// or https:// URL",
        ),
        (
            V1,
            "CreateTaskPushNotificationConfig",
            {"taskId": "t", "url": "http://b.example/", "token": f"{TOKEN}\r\nX-Evil: 1"},
            "params.token must be printable ASCII",
        ),
        (
            V1,
            "CreateTaskPushNotificationConfig",
            {"taskId": "t", "url": "http://b.example/", "authentication": {"credentials": "c"}},
            "params.authentication must name a scheme",
        ),
        (
            V1,
            "CreateTaskPushNotificationConfig",
            {
                "taskId": "t",
                "url": "http://b.example/",
                "authentication": {"scheme": "Bearer", "credentials": f"{CREDENTIALS}\n"},
            },
            "params.authentication.credentials must be printable ASCII",
        ),
        (
            V1,
            "CreateTaskPushNotificationConfig",
            {"taskId": "t", "url": "http://b.example/", "id": "x" * 257},
            "params.id must be at most 256",
        ),
        (
            V1,
            "CreateTaskPushNotificationConfig",
            {"taskId": "t", "url": "http://b.example/", "authentication": {"scheme": "B" * 65}},
            "params.authentication scheme must be at most 64 characters",
        ),
        (
            V03,
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
            V1,
            "CreateTaskPushNotificationConfig",
            {"taskId": "t", "url": "http://b.example/", "token": "t" * 4097},
            "params.token must be at most 4096 characters",
        ),
        (
            V1,
            "CreateTaskPushNotificationConfig",
            {
                "taskId": "t",
                "url": "http://b.example/",
                "authentication": {"scheme": "Bearer", "credentials": "c" * 4097},
            },
            "params.authentication.credentials must be at most 4096 characters",
        ),
        (
            V1,
            "CreateTaskPushNotificationConfig",
            {"taskId": "t", "url": "http://b.example/" + "p" * 2048},
            "params.url must be at most 2048 characters",
        ),
        (
            V1,
            "CreateTaskPushNotificationConfig",
            {"taskId": "t" * 1025, "url": "http://b.example/"},
            "params.taskId must be at most 1024 characters",
        ),
        (V1, "GetTaskPushNotificationConfig", {"taskId": "t"}, "params.id"),
        (
            V1,
            "GetTaskPushNotificationConfig",
            {"taskId": "t", "id": "c" * 1025},
            "params.id must be at most 1024 characters",
        ),
        (
            V1,
            "DeleteTaskPushNotificationConfig",
            {"taskId": "t" * 1025, "id": "c"},
            "params.taskId must be at most 1024 characters",
        ),
        (
            V1,
            "ListTaskPushNotificationConfigs",
            {"taskId": "t" * 1025},
            "params.taskId must be at most 1024 characters",
        ),
        (
            V03,
            "tasks/pushNotificationConfig/get",
            {"id": "t", "pushNotificationConfigId": "c" * 1025},
            "params.pushNotificationConfigId must be at most 1024 characters",
        ),
        (
            V03,
            "tasks/pushNotificationConfig/list",
            {"id": "t" * 1025},
            "params.id must be at most 1024 characters",
        ),
        (V1, "DeleteTaskPushNotificationConfig", {"id": "c"}, "params.taskId"),
        (V1, "ListTaskPushNotificationConfigs", {"taskId": "t", "pageSize": -1}, "pageSize"),
        (V03, "tasks/pushNotificationConfig/set", {"taskId": "t"}, "pushNotificationConfig is"),
        (
            V03,
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
        (V03, "tasks/pushNotificationConfig/delete", {"id": "t"}, "pushNotificationConfigId"),
        (V03, "tasks/pushNotificationConfig/list", {}, "params.id"),
    ],
)
def test_push_refusals(codec: Codec, method: str, params: dict[str, Any], words: str) -> None:
    with pytest.raises(A2AError) as raised:
        codec.decode(method, params)
    assert raised.value.code is ErrorCode.INVALID_PARAMS
    assert words in raised.value.message
    # A token or credentials are secrets: never quoted back.
    assert TOKEN not in raised.value.message and CREDENTIALS not in raised.value.message


@pytest.mark.parametrize(
    ("codec", "method", "params", "field"),
    [
        (V1, "GetTask", {"id": "t" * 1025}, "params.id"),
        (V1, "CancelTask", {"id": "t" * 1025}, "params.id"),
        (V1, "SubscribeToTask", {"id": "t" * 1025}, "params.id"),
        (V1, "ListTasks", {"contextId": "c" * 1025}, "params.contextId"),
        (V03, "tasks/get", {"id": "t" * 1025}, "params.id"),
        (V03, "tasks/cancel", {"id": "t" * 1025}, "params.id"),
        (V03, "tasks/resubscribe", {"id": "t" * 1025}, "params.id"),
    ],
)
def test_an_id_past_1024_characters_is_refused_naming_the_field(
    codec: Codec, method: str, params: dict[str, Any], field: str
) -> None:
    with pytest.raises(A2AError) as raised:
        codec.decode(method, params)
    assert raised.value.code is ErrorCode.INVALID_PARAMS
    assert raised.value.message == f"{field} must be at most 1024 characters"


def test_an_id_of_1024_characters_is_taken() -> None:
    assert V1.decode("GetTask", {"id": "t" * 1024}) == GetTask("t" * 1024)


def test_what_else_differs_between_the_versions_is_asked_of_their_codecs() -> None:
    def asked(codec: Codec) -> tuple[bool, bool, bool, str]:
        return (
            codec.plain_card,
            codec.refuses_streams_plainly,
            codec.pushes_whole_task,
            codec.push_content_type,
        )

    # v1.0: the plain card, a stream refused at once as a plain error, each event pushed.
    assert asked(V1) == (True, True, False, "application/a2a+json")
    # v0.3: the card with its top-level fields, refusals as an event, the whole task pushed.
    assert asked(V03) == (False, False, True, "application/json")
