"""The rules both codecs share: which method is which operation, what a send, a stream, a
list or an id must be, what never goes on the wire, and errors in each version's shape."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as types_v03
from a2a.types import a2a_pb2
from google.protobuf import json_format  # type: ignore[import-untyped]

from n8n_a2a.protocol.codec import Codec
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import (
    ArtifactUpdate,
    GetTask,
    ListTasks,
    SendMessage,
    StatusUpdate,
    SubscribeToTask,
    TaskPage,
    TaskState,
)
from n8n_a2a.protocol.push import PushAuthentication, PushConfig
from n8n_a2a.protocol.versions import V03, V1, V11
from tests.protocol.samples import (
    CREDENTIALS,
    STAMP,
    TOKEN,
    a_task,
    sdk_v03_params,
    sdk_v1_config,
    v03_send,
    v1_send,
)
from tests.support import spec_errors
from tests.support.spec_errors import SpecError


def test_empty_optional_ids_mean_unset_as_in_proto3_json() -> None:
    operation = V1.decode("SendMessage", v1_send(contextId="", taskId=""))
    assert isinstance(operation, SendMessage)
    assert operation.message.context_id is None and operation.message.task_id is None


def test_snake_case_params_are_read_too() -> None:
    assert V1.decode("GetTask", {"id": "t", "history_length": 2}) == GetTask("t", 2)


def test_output_modes_without_text_are_refused() -> None:
    with pytest.raises(A2AError) as raised:
        V03.decode("message/send", v03_send(acceptedOutputModes=["image/png"]))
    assert raised.value.code is ErrorCode.CONTENT_TYPE_NOT_SUPPORTED
    operation = V03.decode("message/send", v03_send(acceptedOutputModes=["text/plain"]))
    assert isinstance(operation, SendMessage)


def test_a_task_asked_with_history_length_0_has_no_history_field_in_either_version() -> None:
    """A2A 1.0.1 §3.2.4: "0: No history should be returned; the history field SHOULD be
    omitted". The official models read the task without it: a2a-sdk 1.3.0's (ProtoJSON)
    and its v0.3 model (`history: list[Message] | None`)."""
    task = a_task().with_history_length(0)
    assert task.history == ()
    v1, v03 = V1.encode_task(task), V03.encode_task(task)
    assert "history" not in v1 and "history" not in v03
    assert list(json_format.ParseDict(v1, a2a_pb2.Task()).history) == []
    assert types_v03.Task.model_validate(v03).history is None
    assert "history" in V1.encode_task(a_task().with_history_length(1))


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
    assert encoded[0] == codec.encode_task(replace(task, owner=None, version=0))
    for document in encoded:
        wire = json.dumps(document)
        assert "0wn3r" not in wire and "owner" not in wire.lower()
        assert '"version"' not in wire and "7" not in wire
    assert "0wn3r" not in repr(task)


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


@pytest.mark.parametrize("row", spec_errors.TABLE, ids=lambda row: row.name)
def test_each_a2a_error_is_its_spec_v1_0_1_code_and_reason_on_json_rpc(row: SpecError) -> None:
    """§5.4's JSON-RPC column as released in v1.0.1, every row, with the ErrorInfo naming
    its reason (§11.6's rule; §9.5 asks for it as a SHOULD) in v1.0 and the plain code in
    v0.3 (whose spec, §8, knows no ErrorInfo)."""
    error = A2AError(ErrorCode(row.code), "what went wrong")
    info = {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": row.reason,
        "domain": "a2a-protocol.org",
    }
    assert V1.encode_error(error) == {
        "code": row.code,
        "message": "what went wrong",
        "data": [info],
    }
    assert V03.encode_error(error) == {"code": row.code, "message": "what went wrong"}


# ListTasks (v1.0's alone): paging bounds, a state in the version's spelling, a moment.


def test_a_list_decodes_with_its_defaults() -> None:
    assert V1.decode("ListTasks", {}) == ListTasks(page_size=50)


def test_a_list_decodes_every_field() -> None:
    params = {
        "contextId": "c-1",
        "status": "TASK_STATE_INPUT_REQUIRED",
        "statusTimestampAfter": "2026-11-29T18:34:32+01:00",
        "pageSize": 100,
        "pageToken": "p",
        "historyLength": 2,
        "includeArtifacts": True,
    }
    assert V1.decode("ListTasks", params) == ListTasks(
        context_id="c-1",
        state=TaskState.INPUT_REQUIRED,
        status_timestamp_after=datetime(2026, 11, 29, 17, 34, 32, tzinfo=UTC),
        page_size=100,
        page_token="p",
        history_length=2,
        include_artifacts=True,
    )


def test_a_list_of_the_unspecified_state_is_of_any_state() -> None:
    listed = V1.decode("ListTasks", {"status": "TASK_STATE_UNSPECIFIED"})
    assert isinstance(listed, ListTasks) and listed.state is None


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"pageSize": 0}, "params.pageSize must be from 1 to 100, got 0"),
        ({"pageSize": 101}, "params.pageSize must be from 1 to 100, got 101"),
        ({"status": "completed"}, "params.status 'completed' is not a task state"),
        (
            {"statusTimestampAfter": "2026-11-29T18:34:32"},
            "params.statusTimestampAfter must be an RFC 3339 timestamp with a time zone, "
            "got '2026-11-29T18:34:32'",
        ),
        (
            {"statusTimestampAfter": "yesterday"},
            "params.statusTimestampAfter must be an RFC 3339 timestamp with a time zone, "
            "got 'yesterday'",
        ),
    ],
)
def test_list_refusals(params: dict[str, Any], message: str) -> None:
    with pytest.raises(A2AError) as raised:
        V1.decode("ListTasks", params)
    assert (raised.value.code, raised.value.message) == (ErrorCode.INVALID_PARAMS, message)


def test_a_page_of_tasks_encodes_with_its_paging() -> None:
    task = replace(a_task(), history=(), artifacts=(), metadata={})
    task = replace(task, status=replace(task.status, message=None))
    assert V1.encode_page(TaskPage((task,), "next", 1, 3)) == {
        "tasks": [
            {
                "id": "t-1",
                "contextId": "c-1",
                "status": {"state": "TASK_STATE_COMPLETED", "timestamp": STAMP},
            }
        ],
        "nextPageToken": "next",
        "pageSize": 1,
        "totalSize": 3,
    }


# Streams: the two methods of each version, and what a refusal before the stream is.


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


@pytest.mark.parametrize(
    ("codec", "method", "as_event"),
    [
        (V03, "message/stream", True),
        (V03, "tasks/resubscribe", True),
        (V03, "message/send", False),
        (V03, "tasks/get", False),
        (V03, "SendStreamingMessage", False),
        (V1, "SendStreamingMessage", False),
        (V1, "SubscribeToTask", False),
        (V1, "SendMessage", False),
    ],
)
def test_a_refused_stream_request_is_an_event_for_v03_stream_methods_only(
    codec: Codec, method: str, as_event: bool
) -> None:
    assert codec.refuses_as_event(method) is as_event


@pytest.mark.parametrize(
    ("codec", "status"),
    [
        (V1, {"state": "TASK_STATE_COMPLETED", "timestamp": STAMP}),
        (V03, {"state": "completed", "timestamp": STAMP}),
    ],
)
def test_a_status_update_encodes_its_status_as_a_task_does(
    codec: Codec, status: dict[str, Any]
) -> None:
    task = a_task()
    plain = replace(task.status, message=None)
    update = StatusUpdate(task.id, task.context_id, plain, sequence=1)
    document = codec.encode_stream_event(update)
    event = document["statusUpdate"] if codec is V1 else document
    assert event["status"] == status
    assert codec.encode_task(replace(task, status=plain))["status"] == status


# Inline push configs, in the send's configuration.


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
        version = "1.0"
    else:
        compat = conversions.to_compat_send_message_request(request, request_id=1)
        operation = V03.decode("message/send", sdk_v03_params(compat))
        version = "0.3"
    assert isinstance(operation, SendMessage)
    assert operation.push_config == PushConfig(
        "",
        "",
        "https://bridge.example/a2a",
        TOKEN,
        PushAuthentication("Bearer", CREDENTIALS),
        version,
    )
    assert operation.push_config.for_task("t-9").id == "t-9"


# Ids: bounded in every method that names one.


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


# A2A 1.1 as drafted: the generation, served to a caller that asks for 1.1 only.


def test_the_generation_is_served_as_protojson_s_int64_to_a_1_1_caller_only() -> None:
    task = replace(a_task(), version=3, relayed=2)
    update = StatusUpdate("t-1", "c-1", task.status, 3, relayed=2)
    chunk = ArtifactUpdate("t-1", "c-1", task.artifacts[0], 2, relayed=2)
    assert V11.encode_task(task)["generation"] == "6"
    assert V11.encode_stream_event(update)["statusUpdate"]["generation"] == "6"
    assert V11.encode_stream_event(chunk)["artifactUpdate"]["generation"] == "5"
    for codec in (V1, V03):
        written = json.dumps([codec.encode_task(task), codec.encode_stream_event(update)])
        assert "generation" not in written


def test_a_get_s_current_generation_and_a_send_s_if_generation_match_are_read() -> None:
    assert V11.decode("GetTask", {"id": "t", "currentGeneration": "4"}) == GetTask("t", None, 4)
    assert V1.decode("GetTask", {"id": "t", "current_generation": 4}) == GetTask("t", None, 4)
    send = V11.decode("SendMessage", {**v1_send(), "configuration": {"ifGenerationMatch": "7"}})
    assert isinstance(send, SendMessage) and send.if_generation_match == 7
    plain = V1.decode("SendMessage", v1_send())
    assert isinstance(plain, SendMessage) and plain.if_generation_match is None


def test_a_generation_mismatch_names_both_generations_in_its_error_info() -> None:
    metadata = {"taskId": "t-1", "expectedGeneration": "3", "currentGeneration": "5"}
    error = A2AError(ErrorCode.TASK_GENERATION_MISMATCH, "mismatch", metadata)
    assert V11.encode_error(error) == {
        "code": -32010,
        "message": "mismatch",
        "data": [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "TASK_GENERATION_MISMATCH",
                "domain": "a2a-protocol.org",
                "metadata": metadata,
            }
        ],
    }
    assert V03.encode_error(error) == {"code": -32010, "message": "mismatch"}
