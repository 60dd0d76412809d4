"""A wire codec: a JSON-RPC method and its params into a version-neutral Operation, and a
Task, a task event or an A2AError back into one version's JSON.

A codec is one version's facts (facts.py: its spellings, what serving it means) and its
shapes (v1.py, v03.py: how its parts, push configs and discriminators are laid out); the
rules both versions share are here. The executor and the task table never see either.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from .errors import A2AError, ErrorCode, quoted
from .facts import STREAM_VERBS, Verb, VersionFacts
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
    PushOperation,
)

# ListTasks paging, as the spec bounds it.
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100


class Shapes(Protocol):
    """How one version lays out what the versions lay out differently."""

    def decode_part(self, part: Params, modes: Modes) -> Part:
        """A part, checked against the media types the agent accepts (-32005 otherwise)."""

    def encode_part(self, part: Part) -> JSONObject: ...

    def decode_blocking(self, configuration: Params) -> bool:
        """Whether a send's configuration asks to wait for the task's end (or interruption)."""

    def decode_push_config(self, config: Params, task_id: str) -> PushConfig:
        """A config's own fields (an inline one, or the one a create carries)."""

    def decode_push_create(self, params: Params) -> CreatePushConfig: ...

    def decode_push_get(self, params: Params) -> GetPushConfig: ...

    def decode_push_list(self, params: Params) -> ListPushConfigs: ...

    def decode_push_delete(self, params: Params) -> DeletePushConfig: ...

    def encode_push_config(self, config: PushConfig) -> JSONObject:
        """A config as Create, Get and List answer it: without its credentials, which are
        write-only (anonymous callers share their tasks and so their configs; nobody needs
        to read back a secret they sent). The token stays: it tells a receiver which task or
        session an update is for (the spec's validation token), and clients read it back."""

    def encode_push_page(self, page: PushConfigPage) -> object:
        """The list's result: v1.0 a page object, v0.3 a bare list."""

    def encode_push_deleted(self) -> object:
        """The delete's result: v1.0 an empty object (google.protobuf.Empty), v0.3 null."""

    def with_kind(self, document: JSONObject, kind: str) -> JSONObject:
        """A Task, Message or update with its `kind` discriminator (v0.3), or as it is (v1.0,
        which has none)."""

    def union_member(self, member: str, document: JSONObject) -> JSONObject:
        """A result that is one of several objects (a send's, a stream event): v1.0 names the
        member it is, `{member: document}` (a oneof); v0.3 sends the object, whose kind says."""


# eq=False: a codec is one of two, known by identity (and hashable, which facts are not).
@dataclass(frozen=True, slots=True, eq=False)
class Codec:
    """One protocol version's wire: its facts and its shapes, with the rules both share."""

    facts: VersionFacts
    shapes: Shapes

    def decode(self, method: str, params: JSONObject, modes: Modes = TEXT_ONLY) -> Operation:
        """The operation a request asks for; A2AError for anything this agent cannot do.
        `modes`: the media types the agent accepts and answers (the card's)."""
        verb = self.facts.methods.get(method)
        if verb is None:
            raise A2AError(
                ErrorCode.METHOD_NOT_FOUND,
                f"Method not found: {quoted(method)} is not an A2A {self.facts.version} method"
                f"{self.facts.other_version_hint}",
            )
        reader = Params(params)
        match verb:
            case Verb.SEND | Verb.SEND_STREAMING:
                return self._decode_send(reader, modes, streaming=verb is Verb.SEND_STREAMING)
            case Verb.SUBSCRIBE:
                return SubscribeToTask(reader.required_id("id"))
            case Verb.GET:
                return GetTask(reader.required_id("id"), reader.optional_int("historyLength"))
            case Verb.CANCEL:
                return CancelTask(reader.required_id("id"))
            case Verb.LIST:
                return self._decode_list(reader)
            case Verb.EXTENDED_CARD:
                raise A2AError(
                    ErrorCode.EXTENDED_AGENT_CARD_NOT_CONFIGURED,
                    "This agent has no extended Agent Card",
                )
            case _:
                return self._decode_push(verb, reader)

    def refuses_as_event(self, method: str) -> bool:
        """Whether a request of `method` refused before its stream opens (for its params)
        is answered with the stream's one error event, not a plain JSON-RPC error: for the
        stream methods of a version whose clients read a code only from an event (v0.3)."""
        stream = self.facts.methods.get(method) in STREAM_VERBS
        return stream and not self.facts.refuses_streams_plainly

    def _decode_push(self, verb: Verb, params: Params) -> PushOperation:
        match verb:
            case Verb.PUSH_CREATE:
                return self.shapes.decode_push_create(params)
            case Verb.PUSH_GET:
                return self.shapes.decode_push_get(params)
            case Verb.PUSH_LIST:
                return self.shapes.decode_push_list(params)
            case _:
                return self.shapes.decode_push_delete(params)

    def _decode_send(self, params: Params, modes: Modes, streaming: bool) -> SendMessage:
        message = self._decode_message(params.required_object("message"), modes)
        configuration = params.optional_object("configuration") or Params({}, "configuration")
        accepted = configuration.optional_str_list("acceptedOutputModes")
        if accepted and not modes.answers_any_of(accepted):
            raise A2AError(
                ErrorCode.CONTENT_TYPE_NOT_SUPPORTED,
                f"This agent answers in {', '.join(modes.outputs)}; "
                f"acceptedOutputModes was {accepted[:8]}",
            )
        inline = configuration.optional_object(self.facts.push_config_field)
        # Read (and so checked) on a stream too, where it has no effect: see SendMessage.
        blocking = self.shapes.decode_blocking(configuration)
        return SendMessage(
            message=message,
            history_length=configuration.optional_int("historyLength"),
            blocking=blocking or streaming,
            streaming=streaming,
            # Its task id is the new task's, once there is one.
            push_config=(
                None if inline is None else self.shapes.decode_push_config(inline, task_id="")
            ),
        )

    def _decode_list(self, params: Params) -> ListTasks:
        page_size = params.optional_int("pageSize")
        if page_size is not None and not 1 <= page_size <= MAX_PAGE_SIZE:
            raise A2AError.invalid_params(
                f"params.pageSize must be from 1 to {MAX_PAGE_SIZE}, got {page_size}"
            )
        status = params.optional_str("status")
        state = None
        if status is not None and status != "TASK_STATE_UNSPECIFIED":
            state = self.facts.state_named(status)
            if state is None:
                raise A2AError.invalid_params(f"params.status {quoted(status)} is not a task state")
        return ListTasks(
            context_id=params.optional_id("contextId"),
            state=state,
            status_timestamp_after=_parse_timestamp(params, "statusTimestampAfter"),
            page_size=page_size or DEFAULT_PAGE_SIZE,
            page_token=params.optional_str("pageToken"),
            history_length=params.optional_int("historyLength"),
            include_artifacts=bool(params.optional_bool("includeArtifacts")),
        )

    def _decode_message(self, message: Params, modes: Modes) -> Message:
        user = self.facts.roles[Role.USER]
        if message.required_str("role") != user:
            raise A2AError.invalid_params(f"{message.path}.role must be {user!r}")
        parts = tuple(
            self.shapes.decode_part(part, modes) for part in message.required_objects("parts")
        )
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
        return self.shapes.union_member("task", self.encode_task(task))

    def encode_stream_event(self, item: Task | TaskEvent) -> JSONObject:
        """The `result` of one stream response (an SSE event): the Task, or one of its events.
        A v1.0 push receiver gets the same."""
        match item:
            case Task():
                return self.shapes.union_member("task", self.encode_task(item))
            case StatusUpdate():
                return self.shapes.union_member("statusUpdate", self._encode_status_update(item))
            case ArtifactUpdate():
                update = self._encode_artifact_update(item)
                return self.shapes.union_member("artifactUpdate", update)

    def encode_task(self, task: Task) -> JSONObject:
        document: JSONObject = {
            "id": task.id,
            "contextId": task.context_id,
            "status": self._encode_status(task.status),
        }
        if task.artifacts:
            document["artifacts"] = [self._encode_artifact(a) for a in task.artifacts]
        document["history"] = [self._encode_message(m) for m in task.history]
        if task.metadata:
            document["metadata"] = task.metadata
        return self.shapes.with_kind(document, "task")

    def encode_page(self, page: TaskPage) -> JSONObject:
        return {
            "tasks": [self.encode_task(task) for task in page.tasks],
            "nextPageToken": page.next_page_token,
            "pageSize": page.page_size,
            "totalSize": page.total_size,
        }

    def encode_push_config(self, config: PushConfig) -> JSONObject:
        return self.shapes.encode_push_config(config)

    def encode_push_page(self, page: PushConfigPage) -> object:
        return self.shapes.encode_push_page(page)

    def encode_push_deleted(self) -> object:
        return self.shapes.encode_push_deleted()

    def encode_error(self, error: A2AError) -> JSONObject:
        document: JSONObject = {"code": int(error.code), "message": error.message}
        if self.facts.error_info and error.code.is_a2a:
            document["data"] = [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": error.code.name,
                    "domain": "a2a-protocol.org",
                }
            ]
        return document

    def _encode_status(self, status: TaskStatus) -> JSONObject:
        document: JSONObject = {
            "state": self.facts.states[status.state],
            "timestamp": _timestamp(status.timestamp),
        }
        if status.message is not None:
            document["message"] = self._encode_message(status.message)
        return document

    def _encode_status_update(self, update: StatusUpdate) -> JSONObject:
        document: JSONObject = {
            "taskId": update.task_id,
            "contextId": update.context_id,
            "status": self._encode_status(update.status),
        }
        if update.metadata:
            # Clients that build the task from the stream (a2a-sdk 0.3) merge this into
            # the task's metadata: so the streamed task carries its outcome too.
            document["metadata"] = update.metadata
        if self.facts.status_final:
            # The SDKs' v0.3 models refuse an update without it: true on the last event,
            # after which the stream closes.
            document["final"] = update.final
        return self.shapes.with_kind(document, "status-update")

    def _encode_artifact_update(self, update: ArtifactUpdate) -> JSONObject:
        document: JSONObject = {
            "taskId": update.task_id,
            "contextId": update.context_id,
            "artifact": self._encode_artifact(update.artifact),
            "append": update.append,
            "lastChunk": update.last_chunk,
        }
        return self.shapes.with_kind(document, "artifact-update")

    def _encode_message(self, message: Message) -> JSONObject:
        document: JSONObject = {
            "messageId": message.message_id,
            "role": self.facts.roles[message.role],
            "parts": [self.shapes.encode_part(p) for p in message.parts],
        }
        if message.task_id is not None:
            document["taskId"] = message.task_id
        if message.context_id is not None:
            document["contextId"] = message.context_id
        if message.metadata:
            document["metadata"] = message.metadata
        return self.shapes.with_kind(document, "message")

    def _encode_artifact(self, artifact: Artifact) -> JSONObject:
        return {
            "artifactId": artifact.artifact_id,
            "name": artifact.name,
            "parts": [self.shapes.encode_part(p) for p in artifact.parts],
        }


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
