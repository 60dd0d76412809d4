"""Version-neutral A2A objects: what the task table holds and the codecs translate."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from .base64_bytes import Base64Bytes
from .push import PushConfig, PushOperation

JSONObject = dict[str, Any]


class TaskState(enum.Enum):
    SUBMITTED = "submitted"
    WORKING = "working"
    INPUT_REQUIRED = "input-required"
    AUTH_REQUIRED = "auth-required"
    COMPLETED = "completed"
    CANCELED = "canceled"
    FAILED = "failed"
    REJECTED = "rejected"

    # Members are singletons, equal by identity: hashed by identity too, in C. (Enum's own
    # hash is a Python call, and the lifecycle's tables look a state up at every move.)
    __hash__ = object.__hash__


# The spec's two kinds of state a task's stream ends in: terminal (the task is done for
# good) and interrupted (it waits for the caller: more input, or credentials). The wire
# says so (a status update's `final`), so the one list of them lives here, in protocol/,
# which imports nothing outside it. Everyone else asks core/lifecycle.py, which answers every
# question about a state from these two and its table.
TERMINAL_STATES = frozenset(
    {TaskState.COMPLETED, TaskState.CANCELED, TaskState.FAILED, TaskState.REJECTED}
)
INTERRUPTED_STATES = frozenset({TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED})


class Role(enum.Enum):
    USER = "user"
    AGENT = "agent"


class PartKind(enum.Enum):
    TEXT = "text"
    DATA = "data"
    FILE = "file"


@dataclass(frozen=True, slots=True)
class FileContent:
    """A file: its name ("" without one), media type, and its bytes or a URL (never both).

    The bytes are held as the base64 they came in and go out as (base64_bytes.py); `size`
    is their length decoded. A task never keeps a file without both: a part no longer kept
    is a marker instead (core/release.py).
    """

    name: str
    media_type: str
    encoded: Base64Bytes | None = None
    url: str | None = None
    size: int | None = None

    @classmethod
    def of_bytes(cls, name: str, media_type: str, content: bytes) -> FileContent:
        return cls.of_base64(name, media_type, Base64Bytes.of_bytes(content))

    @classmethod
    def of_base64(cls, name: str, media_type: str, encoded: Base64Bytes) -> FileContent:
        return cls(name, media_type, encoded=encoded, size=encoded.size)

    @property
    def content(self) -> bytes | None:
        """The bytes decoded (a copy: where bytes must be sent raw, and in tests)."""
        return None if self.encoded is None else self.encoded.decoded()


@dataclass(frozen=True, slots=True)
class Part:
    """One part of a message or an artifact: text, a JSON value (`data`), or a file."""

    text: str = ""
    metadata: JSONObject | None = None
    kind: PartKind = PartKind.TEXT
    data: Any = None
    file: FileContent | None = None

    @classmethod
    def of_data(cls, data: Any, metadata: JSONObject | None = None) -> Part:
        return cls(metadata=metadata, kind=PartKind.DATA, data=data)

    @classmethod
    def of_file(cls, file: FileContent, metadata: JSONObject | None = None) -> Part:
        return cls(metadata=metadata, kind=PartKind.FILE, file=file)


@dataclass(frozen=True, slots=True)
class Message:
    message_id: str
    role: Role
    parts: tuple[Part, ...]
    task_id: str | None = None
    context_id: str | None = None
    metadata: JSONObject | None = None

    @property
    def text(self) -> str:
        """The text of the text parts, one part a line: what the workflow receives."""
        return "\n".join(part.text for part in self.parts if part.kind is PartKind.TEXT)

    def json_values(self) -> list[Any]:
        """Its JSON values as parsed: its metadata, then each part's [metadata, data], in
        the order of the parts (so that they can be put back)."""
        return [self.metadata, *([part.metadata, part.data] for part in self.parts)]


@dataclass(frozen=True, slots=True)
class Artifact:
    artifact_id: str
    name: str
    parts: tuple[Part, ...]


@dataclass(frozen=True, slots=True)
class TaskStatus:
    state: TaskState
    timestamp: datetime
    message: Message | None = None


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    context_id: str
    status: TaskStatus
    history: tuple[Message, ...] = ()
    artifacts: tuple[Artifact, ...] = ()
    metadata: JSONObject = field(default_factory=dict)
    #: The sequence number of the task's latest event (0: just created). Stores move a
    #: task compare-and-set on it; it never goes on the wire.
    version: int = 0
    #: Who sent the message that made it (an opaque digest; None: the anonymous caller).
    #: Only its owner may see or touch it; it never goes on the wire, nor into a log line.
    owner: str | None = field(default=None, repr=False)
    #: The chunks of streamed answers relayed to its listeners (never recorded one by one:
    #: each move counts those relayed before it). Part of its generation, not on the wire.
    relayed: int = 0
    #: Where its next turn goes instead of the webhook: the resume target of the n8n
    #: execution that waits for it (the workflow's `resumeUrl`). A credential: it never
    #: goes on the wire, nor into a log line.
    resume: str | None = field(default=None, repr=False)

    @property
    def generation(self) -> int:
        """A2A 1.1's `generation`: 1 when made, and 1 more for every change of its state or
        its artifacts, each an event: its recorded events (`version`) and the chunks
        relayed (`relayed`)."""
        return self.version + self.relayed + 1

    def with_history_length(self, history_length: int | None) -> Task:
        """The task with only the last `history_length` messages (None: all of them)."""
        if history_length is None or history_length >= len(self.history):
            return self
        kept = self.history[len(self.history) - history_length :] if history_length else ()
        return replace(self, history=kept)


# What happens to a task after it is made. `sequence` numbers one task's events in the
# order they happened (what a subscription from a point counts by); it never goes on the
# wire. `relayed` is the task's count of relayed chunks when the event was made, so that
# `generation` (A2A 1.1's, on the wire to those who ask) is the task's after the event.


@dataclass(frozen=True, slots=True)
class StatusUpdate:
    """The task's status changed."""

    task_id: str
    context_id: str
    status: TaskStatus
    sequence: int
    #: What the change added to the task's metadata (its outcome, when it ends).
    metadata: JSONObject | None = None
    relayed: int = 0

    @property
    def generation(self) -> int:
        return self.sequence + self.relayed + 1

    @property
    def final(self) -> bool:
        """The last event of the task's stream: a terminal or an interrupted state."""
        return self.status.state in TERMINAL_STATES or self.status.state in INTERRUPTED_STATES


@dataclass(frozen=True, slots=True)
class ArtifactUpdate:
    """The task gained an artifact."""

    task_id: str
    context_id: str
    artifact: Artifact
    sequence: int
    append: bool = False
    last_chunk: bool = True
    relayed: int = 0

    @property
    def generation(self) -> int:
        return self.sequence + self.relayed + 1


TaskEvent = StatusUpdate | ArtifactUpdate


# The operations a caller can ask for, whichever protocol version it speaks.


@dataclass(frozen=True, slots=True)
class SendMessage:
    """A send (`streaming`: answered as a stream of the task's events).

    A stream always follows the task to its end, so it is always `blocking`: v1.0 says
    `returnImmediately` has no effect on a stream, and v0.3's `blocking: false` is read
    the same way. `push_config` is registered for the new task before its first event
    (its task id is the task's, once there is one).
    """

    message: Message
    history_length: int | None = None
    blocking: bool = True
    streaming: bool = False
    push_config: PushConfig | None = None
    #: `ifGenerationMatch` (A2A 1.1): the generation the message's task must be at.
    if_generation_match: int | None = None


@dataclass(frozen=True, slots=True)
class GetTask:
    """`current_generation` (A2A 1.1): answer once the task's generation passes it."""

    task_id: str
    history_length: int | None = None
    current_generation: int | None = None


@dataclass(frozen=True, slots=True)
class CancelTask:
    task_id: str


@dataclass(frozen=True, slots=True)
class SubscribeToTask:
    """v1.0 `SubscribeToTask`, v0.3 `tasks/resubscribe`: the task, then its later events."""

    task_id: str


@dataclass(frozen=True, slots=True)
class ListTasks:
    """v1.0 `ListTasks`: filters, a page, and how much of each task to show."""

    context_id: str | None = None
    state: TaskState | None = None
    status_timestamp_after: datetime | None = None
    page_size: int = 50
    page_token: str | None = None
    history_length: int | None = None
    include_artifacts: bool = False


@dataclass(frozen=True, slots=True)
class TaskPage:
    tasks: tuple[Task, ...]
    next_page_token: str
    page_size: int
    total_size: int


Operation = SendMessage | GetTask | CancelTask | ListTasks | SubscribeToTask | PushOperation
