"""What differs between the two A2A versions, as plain facts: one frozen table per version.

The spellings (method names, states, roles, a field's name) and what serving a version
means beyond its shapes (which card its clients read, how a refused stream is answered,
what a push receiver gets). codec.py reads the spellings, the shapes live in v1.py and
v03.py, and the rest of the adapter reads a fact by its name: nobody asks which version
it is.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from .model import Role, TaskState


class Verb(enum.Enum):
    """What a method asks for, before its params are read."""

    SEND = "send"
    SEND_STREAMING = "send-streaming"
    SUBSCRIBE = "subscribe"
    GET = "get"
    CANCEL = "cancel"
    LIST = "list"
    PUSH_CREATE = "push-create"
    PUSH_GET = "push-get"
    PUSH_LIST = "push-list"
    PUSH_DELETE = "push-delete"
    EXTENDED_CARD = "extended-card"


#: The verbs answered with an event stream.
STREAM_VERBS = frozenset({Verb.SEND_STREAMING, Verb.SUBSCRIBE})


@dataclass(frozen=True, slots=True)
class VersionFacts:
    """One protocol version's spellings, and what serving it means beside its shapes."""

    version: str
    #: Each JSON-RPC method's name, and what it asks for.
    methods: Mapping[str, Verb]
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

    def state_named(self, name: str) -> TaskState | None:
        """The state this version spells `name`; None for no state of it."""
        return next((state for state, spelt in self.states.items() if spelt == name), None)


V1_0 = VersionFacts(
    version="1.0",
    methods=MappingProxyType(
        {
            "SendMessage": Verb.SEND,
            "GetTask": Verb.GET,
            "SendStreamingMessage": Verb.SEND_STREAMING,
            "SubscribeToTask": Verb.SUBSCRIBE,
            "CancelTask": Verb.CANCEL,
            "ListTasks": Verb.LIST,
            "CreateTaskPushNotificationConfig": Verb.PUSH_CREATE,
            "GetTaskPushNotificationConfig": Verb.PUSH_GET,
            "ListTaskPushNotificationConfigs": Verb.PUSH_LIST,
            "DeleteTaskPushNotificationConfig": Verb.PUSH_DELETE,
            "GetExtendedAgentCard": Verb.EXTENDED_CARD,
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
)

V0_3 = VersionFacts(
    version="0.3",
    methods=MappingProxyType(
        {
            "message/send": Verb.SEND,
            "tasks/get": Verb.GET,
            "message/stream": Verb.SEND_STREAMING,
            "tasks/resubscribe": Verb.SUBSCRIBE,
            "tasks/cancel": Verb.CANCEL,
            "tasks/pushNotificationConfig/set": Verb.PUSH_CREATE,
            "tasks/pushNotificationConfig/get": Verb.PUSH_GET,
            "tasks/pushNotificationConfig/list": Verb.PUSH_LIST,
            "tasks/pushNotificationConfig/delete": Verb.PUSH_DELETE,
            "agent/getAuthenticatedExtendedCard": Verb.EXTENDED_CARD,
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
)
