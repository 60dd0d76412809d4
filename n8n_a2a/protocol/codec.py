"""What the two wire codecs share: decoding operations, encoding tasks and errors.

A codec turns a JSON-RPC method and its params into a version-neutral Operation, and
a Task, a task event or an A2AError back into that version's JSON. The version
difference lives here and in v1.py / v03.py only: the executor and the task table never
ask for it.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from datetime import datetime
from typing import ClassVar

from .errors import A2AError, ErrorCode, quoted
from .media import TEXT_ONLY, Modes
from .model import (
    Artifact,
    ArtifactUpdate,
    CancelTask,
    GetTask,
    JSONObject,
    ListTasks,
    Message,
    Operation,
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
from .params import Params
from .parts import check_attachments, metadata_of
from .push import (
    CreatePushConfig,
    DeletePushConfig,
    GetPushConfig,
    ListPushConfigs,
    PushConfig,
    PushConfigPage,
)

# ListTasks paging, as the spec bounds it.
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100


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


class Codec(ABC):
    """One protocol version's wire shapes."""

    version: str
    methods: ClassVar[dict[str, Verb]]
    other_version_hint: str
    # What else differs in serving a version, beside its shapes, asked here so that the
    # version is named only in the codecs:
    #: the card without v0.3's top-level fields (the v1.0 schema validates the plain card);
    plain_card: ClassVar[bool]
    #: a stream refused before its first event is a plain JSON-RPC error (as the v1.0
    #: servers answer), not the stream's one error event (a2a-sdk 0.3 reads a code only so);
    refuses_streams_plainly: ClassVar[bool]
    #: a push receiver gets the whole Task as it stands (v0.3), not each event (v1.0);
    pushes_whole_task: ClassVar[bool]
    push_content_type: ClassVar[str]

    def decode(self, method: str, params: JSONObject, modes: Modes = TEXT_ONLY) -> Operation:
        """The operation a request asks for; A2AError for anything this agent cannot do.
        `modes`: the media types the agent accepts and answers (the card's)."""
        verb = self.methods.get(method)
        if verb is None:
            raise A2AError(
                ErrorCode.METHOD_NOT_FOUND,
                f"Method not found: {quoted(method)} is not an A2A {self.version} method"
                f"{self.other_version_hint}",
            )
        reader = Params(params)
        match verb:
            case Verb.SEND:
                return self.decode_send(reader, modes)
            case Verb.SEND_STREAMING:
                return self.decode_send(reader, modes, streaming=True)
            case Verb.SUBSCRIBE:
                return SubscribeToTask(reader.required_id("id"))
            case Verb.GET:
                return GetTask(reader.required_id("id"), reader.optional_int("historyLength"))
            case Verb.CANCEL:
                return CancelTask(reader.required_id("id"))
            case Verb.LIST:
                return self.decode_list(reader)
            case Verb.PUSH_CREATE:
                return self.decode_push_create(reader)
            case Verb.PUSH_GET:
                return self.decode_push_get(reader)
            case Verb.PUSH_LIST:
                return self.decode_push_list(reader)
            case Verb.PUSH_DELETE:
                return self.decode_push_delete(reader)
            case Verb.EXTENDED_CARD:
                raise A2AError(
                    ErrorCode.EXTENDED_AGENT_CARD_NOT_CONFIGURED,
                    "This agent has no extended Agent Card",
                )

    def decode_send(self, params: Params, modes: Modes, streaming: bool = False) -> SendMessage:
        message = self.decode_message(params.required_object("message"), modes)
        configuration = params.optional_object("configuration") or Params({}, "configuration")
        accepted = configuration.optional_str_list("acceptedOutputModes")
        if accepted and not modes.answers_any_of(accepted):
            raise A2AError(
                ErrorCode.CONTENT_TYPE_NOT_SUPPORTED,
                f"This agent answers in {', '.join(modes.outputs)}; "
                f"acceptedOutputModes was {accepted[:8]}",
            )
        inline = configuration.optional_object(self.push_config_field)
        # Read (and so checked) on a stream too, where it has no effect: see SendMessage.
        blocking = self.decode_blocking(configuration)
        return SendMessage(
            message=message,
            history_length=configuration.optional_int("historyLength"),
            blocking=blocking or streaming,
            streaming=streaming,
            # Its task id is the new task's, once there is one.
            push_config=None if inline is None else self.decode_push_config(inline, task_id=""),
        )

    def decode_list(self, params: Params) -> ListTasks:
        page_size = params.optional_int("pageSize")
        if page_size is not None and not 1 <= page_size <= MAX_PAGE_SIZE:
            raise A2AError.invalid_params(
                f"params.pageSize must be from 1 to {MAX_PAGE_SIZE}, got {page_size}"
            )
        status = params.optional_str("status")
        state = None
        if status is not None and status != "TASK_STATE_UNSPECIFIED":
            by_name = {name: state for state, name in self.state_names.items()}
            if status not in by_name:
                raise A2AError.invalid_params(f"params.status {quoted(status)} is not a task state")
            state = by_name[status]
        return ListTasks(
            context_id=params.optional_id("contextId"),
            state=state,
            status_timestamp_after=_parse_timestamp(params, "statusTimestampAfter"),
            page_size=page_size or DEFAULT_PAGE_SIZE,
            page_token=params.optional_str("pageToken"),
            history_length=params.optional_int("historyLength"),
            include_artifacts=bool(params.optional_bool("includeArtifacts")),
        )

    def encode_page(self, page: TaskPage) -> JSONObject:
        return {
            "tasks": [self.encode_task(task) for task in page.tasks],
            "nextPageToken": page.next_page_token,
            "pageSize": page.page_size,
            "totalSize": page.total_size,
        }

    def decode_message(self, message: Params, modes: Modes) -> Message:
        if message.required_str("role") != self.role_names[Role.USER]:
            raise A2AError.invalid_params(
                f"{message.path}.role must be {self.role_names[Role.USER]!r}"
            )
        parts = tuple(self.decode_part(part, modes) for part in message.required_objects("parts"))
        check_attachments(message, parts)
        return Message(
            message_id=message.required_str("messageId"),
            role=Role.USER,
            parts=parts,
            task_id=message.optional_str("taskId"),
            context_id=message.optional_str("contextId"),
            metadata=metadata_of(message),
        )

    def encode_send_result(self, task: Task) -> JSONObject:
        return self.one_of("task", self.encode_task(task))

    def encode_stream_event(self, item: Task | TaskEvent) -> JSONObject:
        """The `result` of one stream response (an SSE event): the Task, or one of its events."""
        match item:
            case Task():
                return self.one_of("task", self.encode_task(item))
            case StatusUpdate():
                return self.one_of("statusUpdate", self.encode_status_update(item))
            case ArtifactUpdate():
                return self.one_of("artifactUpdate", self.encode_artifact_update(item))

    def encode_task(self, task: Task) -> JSONObject:
        document: JSONObject = {
            "id": task.id,
            "contextId": task.context_id,
            "status": self.encode_status(task.status),
        }
        if task.artifacts:
            document["artifacts"] = [self.encode_artifact(a) for a in task.artifacts]
        document["history"] = [self.encode_message(m) for m in task.history]
        if task.metadata:
            document["metadata"] = task.metadata
        return self.tag(document, "task")

    def encode_status(self, status: TaskStatus) -> JSONObject:
        document: JSONObject = {
            "state": self.state_names[status.state],
            "timestamp": _timestamp(status.timestamp),
        }
        if status.message is not None:
            document["message"] = self.encode_message(status.message)
        return document

    def encode_status_update(self, update: StatusUpdate) -> JSONObject:
        document: JSONObject = {
            "taskId": update.task_id,
            "contextId": update.context_id,
            "status": self.encode_status(update.status),
        }
        if update.metadata:
            # Clients that build the task from the stream (a2a-sdk 0.3) merge this into
            # the task's metadata: so the streamed task carries its outcome too.
            document["metadata"] = update.metadata
        return self.tag(document, "status-update")

    def encode_artifact_update(self, update: ArtifactUpdate) -> JSONObject:
        document: JSONObject = {
            "taskId": update.task_id,
            "contextId": update.context_id,
            "artifact": self.encode_artifact(update.artifact),
            "append": update.append,
            "lastChunk": update.last_chunk,
        }
        return self.tag(document, "artifact-update")

    def encode_message(self, message: Message) -> JSONObject:
        document: JSONObject = {
            "messageId": message.message_id,
            "role": self.role_names[message.role],
            "parts": [self.encode_part(p) for p in message.parts],
        }
        if message.task_id is not None:
            document["taskId"] = message.task_id
        if message.context_id is not None:
            document["contextId"] = message.context_id
        if message.metadata:
            document["metadata"] = message.metadata
        return self.tag(document, "message")

    def encode_artifact(self, artifact: Artifact) -> JSONObject:
        return {
            "artifactId": artifact.artifact_id,
            "name": artifact.name,
            "parts": [self.encode_part(p) for p in artifact.parts],
        }

    def encode_error(self, error: A2AError) -> JSONObject:
        return {"code": int(error.code), "message": error.message}

    # What differs between versions.

    push_config_field: str
    state_names: ClassVar[dict[TaskState, str]]
    role_names: ClassVar[dict[Role, str]]

    @abstractmethod
    def decode_part(self, part: Params, modes: Modes) -> Part:
        """A part, checked against the media types the agent accepts (-32005 otherwise)."""

    @abstractmethod
    def decode_push_config(self, config: Params, task_id: str) -> PushConfig:
        """A config's own fields (an inline one, or the one a create carries)."""

    @abstractmethod
    def decode_push_create(self, params: Params) -> CreatePushConfig: ...

    @abstractmethod
    def decode_push_get(self, params: Params) -> GetPushConfig: ...

    @abstractmethod
    def decode_push_list(self, params: Params) -> ListPushConfigs: ...

    @abstractmethod
    def decode_push_delete(self, params: Params) -> DeletePushConfig: ...

    @abstractmethod
    def encode_push_config(self, config: PushConfig) -> JSONObject:
        """A config as Create, Get and List answer it: without its credentials, which are
        write-only (anonymous callers share their tasks and so their configs; nobody needs
        to read back a secret they sent). The token stays: it tells a receiver which task or
        session an update is for (the spec's validation token), and clients read it back."""

    @abstractmethod
    def encode_push_page(self, page: PushConfigPage) -> object:
        """The list's result: v1.0 a page object, v0.3 a bare list."""

    @abstractmethod
    def encode_push_deleted(self) -> object:
        """The delete's result: v1.0 an empty object (google.protobuf.Empty), v0.3 null."""

    @abstractmethod
    def decode_blocking(self, configuration: Params) -> bool: ...

    @abstractmethod
    def encode_part(self, part: Part) -> JSONObject: ...

    @abstractmethod
    def tag(self, document: JSONObject, kind: str) -> JSONObject:
        """The document with its v0.3 `kind` discriminator (v1.0 has none)."""

    @abstractmethod
    def one_of(self, member: str, document: JSONObject) -> JSONObject:
        """A result that is one of several objects: a v1.0 oneof names its member, a v0.3
        result is the (kind-tagged) object itself."""


def _parse_timestamp(params: Params, name: str) -> datetime | None:
    raw = params.optional_str(name)
    if raw is None:
        return None
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise A2AError.invalid_params(
            f"params.{name} must be an RFC 3339 timestamp with a time zone, got {raw[:40]!r}"
        )
    return moment


def _timestamp(moment: datetime) -> str:
    """ISO 8601 in UTC with milliseconds and a Z, as the SDKs write it."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
