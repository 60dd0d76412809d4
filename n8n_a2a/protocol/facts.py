"""What differs between the two A2A versions, as plain facts: one frozen table per version.

The spellings (method names, states, roles, a field's name) and what serving a version
means beyond its shapes (which card its clients read, how a refused stream is answered,
what a push receiver gets). codec.py reads the spellings (a method's is the name of its
row in operations.py), the shapes live in v1.py and v03.py, and the rest of the adapter
reads a fact by its name: nobody asks which version it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from .errors import ErrorCode
from .model import Role, TaskState


@dataclass(frozen=True, slots=True)
class VersionFacts:
    """One protocol version's spellings, and what serving it means beside its shapes."""

    version: str
    #: Each JSON-RPC method's name, and the method it is: its row in the operations table
    #: (operations.py), which is named as A2A 1.0 names the method.
    methods: Mapping[str, str]
    #: Said after "not an A2A <version> method": how a client of the other version is heard.
    other_version_hint: str
    states: Mapping[TaskState, str]
    roles: Mapping[Role, str]
    #: The send configuration's field that holds an inline push config.
    push_config_field: str
    #: A status update carries `final` (v0.3 requires it; v1.0 removed it: the stream's
    #: end says it).
    status_final: bool
    #: An A2A error carries a google.rpc.ErrorInfo naming its reason in `data`.
    error_info: bool
    #: The card without v0.3's top-level fields (the v1.0 schema validates the plain card).
    plain_card: bool
    #: A stream refused before its first event is a plain JSON-RPC error (as the v1.0
    #: servers answer), not the stream's one error event (a2a-sdk 0.3 reads a code only so).
    refuses_streams_plainly: bool
    #: A push receiver gets the whole Task as it stands (v0.3), not each event (v1.0).
    pushes_whole_task: bool
    push_content_type: str
    #: What the extended card's method answers on this card, which claims no extended card:
    #: v1.0's UnsupportedOperationError (§3.3.4: "If AgentCard.capabilities.extendedAgentCard
    #: is false or not present, ... MUST return UnsupportedOperationError"); v0.3's one error
    #: for that method, -32007 AuthenticatedExtendedCardNotConfiguredError (v0.3 §8.2), as
    #: a2a-sdk 0.3's own server answers a card without supportsAuthenticatedExtendedCard.
    no_extended_card: ErrorCode
    #: A task and its events carry A2A 1.1's `generation` (drafted: served to a caller
    #: that asks for 1.1 only, since a2a-sdk 1.0 to 1.2 refuse a field they do not know).
    generation: bool = False

    def state_named(self, name: str) -> TaskState | None:
        """The state this version spells `name`; None for no state of it."""
        return next((state for state, spelt in self.states.items() if spelt == name), None)


V1_0 = VersionFacts(
    version="1.0",
    # 1.0's names are the methods' own.
    methods=MappingProxyType(
        {
            name: name
            for name in (
                "SendMessage",
                "GetTask",
                "SendStreamingMessage",
                "SubscribeToTask",
                "CancelTask",
                "ListTasks",
                "CreateTaskPushNotificationConfig",
                "GetTaskPushNotificationConfig",
                "ListTaskPushNotificationConfigs",
                "DeleteTaskPushNotificationConfig",
                "GetExtendedAgentCard",
            )
        }
    ),
    other_version_hint=" (v0.3 clients omit the A2A-Version header or send A2A-Version: 0.3)",
    states=MappingProxyType(
        {
            TaskState.SUBMITTED: "TASK_STATE_SUBMITTED",
            TaskState.WORKING: "TASK_STATE_WORKING",
            TaskState.INPUT_REQUIRED: "TASK_STATE_INPUT_REQUIRED",
            TaskState.AUTH_REQUIRED: "TASK_STATE_AUTH_REQUIRED",
            TaskState.COMPLETED: "TASK_STATE_COMPLETED",
            TaskState.CANCELED: "TASK_STATE_CANCELED",
            TaskState.FAILED: "TASK_STATE_FAILED",
            TaskState.REJECTED: "TASK_STATE_REJECTED",
        }
    ),
    roles=MappingProxyType({Role.USER: "ROLE_USER", Role.AGENT: "ROLE_AGENT"}),
    push_config_field="taskPushNotificationConfig",
    status_final=False,
    error_info=True,
    plain_card=True,
    refuses_streams_plainly=True,
    pushes_whole_task=False,
    push_content_type="application/a2a+json",
    no_extended_card=ErrorCode.UNSUPPORTED_OPERATION,
)

#: A2A 1.1 as drafted (the A2A repository's dev-1.1 branch): 1.0's wire, and the task's
#: generation (its events', GetTask's `currentGeneration`, a send's `ifGenerationMatch`).
V1_1 = replace(V1_0, version="1.1", generation=True)

V0_3 = VersionFacts(
    version="0.3",
    methods=MappingProxyType(
        {
            "message/send": "SendMessage",
            "tasks/get": "GetTask",
            "message/stream": "SendStreamingMessage",
            "tasks/resubscribe": "SubscribeToTask",
            "tasks/cancel": "CancelTask",
            "tasks/pushNotificationConfig/set": "CreateTaskPushNotificationConfig",
            "tasks/pushNotificationConfig/get": "GetTaskPushNotificationConfig",
            "tasks/pushNotificationConfig/list": "ListTaskPushNotificationConfigs",
            "tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfig",
            "agent/getAuthenticatedExtendedCard": "GetExtendedAgentCard",
        }
    ),
    other_version_hint=" (v1.0 clients send the header A2A-Version: 1.0)",
    states=MappingProxyType(
        {
            TaskState.SUBMITTED: "submitted",
            TaskState.WORKING: "working",
            TaskState.INPUT_REQUIRED: "input-required",
            TaskState.AUTH_REQUIRED: "auth-required",
            TaskState.COMPLETED: "completed",
            TaskState.CANCELED: "canceled",
            TaskState.FAILED: "failed",
            TaskState.REJECTED: "rejected",
        }
    ),
    roles=MappingProxyType({Role.USER: "user", Role.AGENT: "agent"}),
    push_config_field="pushNotificationConfig",
    status_final=True,
    error_info=False,
    plain_card=False,
    refuses_streams_plainly=False,
    pushes_whole_task=True,
    push_content_type="application/json",
    no_extended_card=ErrorCode.EXTENDED_AGENT_CARD_NOT_CONFIGURED,
)
