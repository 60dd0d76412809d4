"""The two versions' facts, written out as the spec and the clients spell them."""

from __future__ import annotations

import dataclasses

import pytest

from n8n_a2a.protocol.errors import ErrorCode
from n8n_a2a.protocol.facts import V0_3, V1_0, VersionFacts
from n8n_a2a.protocol.model import Role, TaskState


@pytest.mark.parametrize(
    ("state", "v1_0", "v0_3"),
    [
        (TaskState.SUBMITTED, "TASK_STATE_SUBMITTED", "submitted"),
        (TaskState.WORKING, "TASK_STATE_WORKING", "working"),
        (TaskState.INPUT_REQUIRED, "TASK_STATE_INPUT_REQUIRED", "input-required"),
        (TaskState.AUTH_REQUIRED, "TASK_STATE_AUTH_REQUIRED", "auth-required"),
        (TaskState.COMPLETED, "TASK_STATE_COMPLETED", "completed"),
        (TaskState.CANCELED, "TASK_STATE_CANCELED", "canceled"),
        (TaskState.FAILED, "TASK_STATE_FAILED", "failed"),
        (TaskState.REJECTED, "TASK_STATE_REJECTED", "rejected"),
    ],
)
def test_every_state_has_a_name_in_both_versions(state: TaskState, v1_0: str, v0_3: str) -> None:
    assert (V1_0.states[state], V0_3.states[state]) == (v1_0, v0_3)
    assert (V1_0.state_named(v1_0), V0_3.state_named(v0_3)) == (state, state)


def test_a_name_of_no_state_or_of_the_other_versions_is_none() -> None:
    assert V1_0.state_named("completed") is None
    assert V0_3.state_named("TASK_STATE_COMPLETED") is None
    assert V1_0.state_named("TASK_STATE_UNSPECIFIED") is None


def test_roles_are_spelt_as_each_version_does() -> None:
    assert dict(V1_0.roles) == {Role.USER: "ROLE_USER", Role.AGENT: "ROLE_AGENT"}
    assert dict(V0_3.roles) == {Role.USER: "user", Role.AGENT: "agent"}


def test_the_methods_of_each_version() -> None:
    """Each name a version's clients send, and the method it is (as 1.0 names it)."""
    v1_0 = [
        "SendMessage",
        "SendStreamingMessage",
        "SubscribeToTask",
        "GetTask",
        "CancelTask",
        "ListTasks",
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
        "GetExtendedAgentCard",
    ]
    assert dict(V1_0.methods) == {name: name for name in v1_0}
    # v0.3 has no ListTasks.
    assert dict(V0_3.methods) == {
        "message/send": "SendMessage",
        "message/stream": "SendStreamingMessage",
        "tasks/resubscribe": "SubscribeToTask",
        "tasks/get": "GetTask",
        "tasks/cancel": "CancelTask",
        "tasks/pushNotificationConfig/set": "CreateTaskPushNotificationConfig",
        "tasks/pushNotificationConfig/get": "GetTaskPushNotificationConfig",
        "tasks/pushNotificationConfig/list": "ListTaskPushNotificationConfigs",
        "tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfig",
        "agent/getAuthenticatedExtendedCard": "GetExtendedAgentCard",
    }


def test_what_else_differs_between_the_versions_is_a_fact_of_each() -> None:
    def asked(
        facts: VersionFacts,
    ) -> tuple[str, str, bool, bool, bool, bool, bool, str, ErrorCode]:
        return (
            facts.version,
            facts.push_config_field,
            facts.status_final,
            facts.error_info,
            facts.plain_card,
            facts.refuses_streams_plainly,
            facts.pushes_whole_task,
            facts.push_content_type,
            facts.no_extended_card,
        )

    # v1.0: no `final`, ErrorInfo in errors, the plain card, a stream refused at once as a
    # plain error, each event pushed, an unclaimed extended card an unsupported operation.
    assert asked(V1_0) == (
        "1.0",
        "taskPushNotificationConfig",
        False,
        True,
        True,
        True,
        False,
        "application/a2a+json",
        ErrorCode.UNSUPPORTED_OPERATION,
    )
    # v0.3: `final` on status updates, bare errors, the card with its top-level fields,
    # refusals as an event, the whole task pushed, an unclaimed extended card -32007.
    assert asked(V0_3) == (
        "0.3",
        "pushNotificationConfig",
        True,
        False,
        False,
        False,
        True,
        "application/json",
        ErrorCode.EXTENDED_AGENT_CARD_NOT_CONFIGURED,
    )


def test_the_facts_cannot_be_changed_in_place() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        V1_0.plain_card = False  # type: ignore[misc]
    with pytest.raises(TypeError):
        V1_0.methods["message/send"] = "SendMessage"  # type: ignore[index]
    with pytest.raises(TypeError):
        V0_3.states[TaskState.WORKING] = "WORKING"  # type: ignore[index]
