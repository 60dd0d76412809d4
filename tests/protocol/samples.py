"""What the codec tests send and encode: one finished task, its events, a send's params in
each version's spelling, a push config as the SDK makes it. Inputs (and the config as the
adapter holds it): each test writes out the JSON it expects."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from a2a.types import a2a_pb2

from n8n_a2a.protocol.model import (
    Artifact,
    ArtifactUpdate,
    Message,
    Part,
    Role,
    StatusUpdate,
    Task,
    TaskState,
    TaskStatus,
)
from n8n_a2a.protocol.push import PushAuthentication, PushConfig

MOMENT = datetime(2026, 11, 29, 18, 34, 32, 62_000, tzinfo=UTC)
#: MOMENT as both versions write it.
STAMP = "2026-11-29T18:34:32.062Z"


def a_task() -> Task:
    """A task answered: the caller's "hello", the agent's "hi" as its status and answer."""
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


#: Each state, and whether a status update to it is its stream's last event (`final`):
#: a terminal state, or one that waits for the caller.
ENDS_A_STREAM = [
    (TaskState.SUBMITTED, False),
    (TaskState.WORKING, False),
    (TaskState.INPUT_REQUIRED, True),
    (TaskState.AUTH_REQUIRED, True),
    (TaskState.COMPLETED, True),
    (TaskState.CANCELED, True),
    (TaskState.FAILED, True),
    (TaskState.REJECTED, True),
]


def status_update(state: TaskState, message: Message | None = None) -> StatusUpdate:
    return StatusUpdate("t-1", "c-1", TaskStatus(state, MOMENT, message), sequence=3)


def artifact_update(append: bool = False, last_chunk: bool = True) -> ArtifactUpdate:
    answer = Artifact("a-1", "answer", (Part("hi"),))
    return ArtifactUpdate("t-1", "c-1", answer, sequence=2, append=append, last_chunk=last_chunk)


def v1_send(**message: Any) -> dict[str, Any]:
    """SendMessage's params: the message "hi", its fields replaced or added by `message`."""
    return {
        "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}], **message},
        "configuration": {},
    }


def v03_send(**configuration: Any) -> dict[str, Any]:
    """message/send's params: the message "hi", "there" with this `configuration`."""
    return {
        "configuration": configuration,
        "message": {
            "kind": "message",
            "messageId": "m-1",
            "role": "user",
            "parts": [{"kind": "text", "text": "hi"}, {"kind": "text", "text": "there"}],
        },
    }


# Push configs, as the official clients send them.

TOKEN = "per-task-token-1"
CREDENTIALS = "secret-credentials"


def sdk_v1_config(**fields: Any) -> a2a_pb2.TaskPushNotificationConfig:
    """A whole config as a2a-sdk 1.3.0 makes it: id, token and Bearer credentials."""
    return a2a_pb2.TaskPushNotificationConfig(
        task_id="t-1",
        id="c-1",
        url="https://bridge.example/a2a",
        token=TOKEN,
        authentication=a2a_pb2.AuthenticationInfo(scheme="Bearer", credentials=CREDENTIALS),
        **fields,
    )


def sdk_v1_config_as_read() -> a2a_pb2.TaskPushNotificationConfig:
    """A config as Get and List answer it: credentials are write-only."""
    config = sdk_v1_config()
    config.authentication.ClearField("credentials")
    return config


def full_config(version: str) -> PushConfig:
    """sdk_v1_config() as the adapter holds it, made in `version`."""
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
