"""Both wire codecs: decoding operations and encoding tasks exactly as the clients read them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import (
    Artifact,
    GetTask,
    Message,
    Part,
    Role,
    SendMessage,
    Task,
    TaskState,
    TaskStatus,
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
            "raw",
        ),
        ("SendMessage", v1_send(messageId=""), ErrorCode.INVALID_PARAMS, "messageId"),
        ("SendMessage", v1_send(contextId=5), ErrorCode.INVALID_PARAMS, "contextId"),
        ("GetTask", {}, ErrorCode.INVALID_PARAMS, "params.id"),
        ("GetTask", {"id": "t", "historyLength": -1}, ErrorCode.INVALID_PARAMS, "historyLength"),
        ("GetTask", {"id": "t", "historyLength": True}, ErrorCode.INVALID_PARAMS, "historyLength"),
        ("message/send", {}, ErrorCode.METHOD_NOT_FOUND, "A2A-Version: 0.3"),
        ("SendStreamingMessage", {}, ErrorCode.UNSUPPORTED_OPERATION, "Streaming"),
        ("CreateTaskPushNotificationConfig", {}, ErrorCode.PUSH_NOTIFICATION_NOT_SUPPORTED, "Push"),
        ("GetExtendedAgentCard", {}, ErrorCode.EXTENDED_AGENT_CARD_NOT_CONFIGURED, "extended"),
    ],
)
def test_v1_refusals(method: str, params: dict[str, Any], code: ErrorCode, words: str) -> None:
    with pytest.raises(A2AError) as raised:
        V1.decode(method, params)
    assert raised.value.code is code
    assert words in raised.value.message


def test_v1_push_config_in_a_send_is_refused() -> None:
    params = v1_send()
    params["configuration"] = {"taskPushNotificationConfig": {"url": "http://x"}}
    with pytest.raises(A2AError) as raised:
        V1.decode("SendMessage", params)
    assert raised.value.code is ErrorCode.PUSH_NOTIFICATION_NOT_SUPPORTED


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
