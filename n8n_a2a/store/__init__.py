"""Where tasks live, and how their changes are heard: the two seams the executor works through.

A `TaskStore` holds tasks and moves them compare-and-set on their version, so that two
movers (a cancel and a verdict, or two processes) never both move one task. A
`TaskEvents` carries every change, one frozen event each, to whoever listens: a blocking
send waiting for its task's end, a stream, the executor cutting a call that was
canceled. The store knows tasks, not the workflow contract: no Verdict here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from ..protocol.model import (
    Artifact,
    ArtifactUpdate,
    ListTasks,
    Message,
    Part,
    StatusUpdate,
    Task,
    TaskEvent,
    TaskPage,
    TaskState,
    TaskStatus,
)

Listener = Callable[[TaskEvent], None]

#: About the most bytes of tasks one ListTasks page carries (always at least one task).
MAX_PAGE_BYTES = 1024 * 1024
# Generous JSON sizes of what a task has beside its strings: keys, states, timestamps.
_TASK_BYTES = 160
_MESSAGE_BYTES = 96
_PART_BYTES = 32


def encoded_size(task: Task) -> int:
    """About the bytes the task takes in a JSON answer, for a store to bound a page by:
    its strings and metadata exactly, the rest (keys, states, timestamps) generously."""
    strings: list[object] = [task.id, task.context_id, task.metadata]
    size = _TASK_BYTES
    messages = task.history + ((task.status.message,) if task.status.message else ())
    for message in messages:
        strings += (message.message_id, message.task_id, message.context_id, message.metadata)
        strings += map(_part_strings, message.parts)
        size += _MESSAGE_BYTES + _PART_BYTES * len(message.parts)
    for artifact in task.artifacts:
        strings += (artifact.artifact_id, artifact.name)
        strings += map(_part_strings, artifact.parts)
        size += _MESSAGE_BYTES + _PART_BYTES * len(artifact.parts)
    return size + len(json.dumps(strings, ensure_ascii=False).encode())


def _part_strings(part: Part) -> object:
    """What of a part goes on the wire as written: its text, metadata, data and file."""
    file = part.file
    if file is None:
        return (part.text, part.metadata, part.data)
    return (part.metadata, file.name, file.media_type, file.url, file.base64)


@dataclass(frozen=True, slots=True)
class Change:
    """A task's next status and what comes with it: `history` (the caller's message that
    starts a next turn) joins the history, then the status message; the artifacts join
    the artifacts, the metadata the task's metadata."""

    state: TaskState
    timestamp: datetime
    message: Message | None = None
    artifacts: tuple[Artifact, ...] = ()
    metadata: dict[str, Any] | None = None
    history: tuple[Message, ...] = ()


@dataclass(frozen=True, slots=True)
class Moved:
    """A change that took: the task as it is now, and the events it made, in order."""

    task: Task
    events: tuple[TaskEvent, ...]


def change_events(
    task_id: str, context_id: str, version: int, change: Change
) -> tuple[TaskEvent, ...]:
    """The events a change makes of a task at `version`, numbered on from it: the artifacts
    first, in order, then the status. Every store numbers them so."""
    events: list[TaskEvent] = []
    for artifact in change.artifacts:
        version += 1
        events.append(ArtifactUpdate(task_id, context_id, artifact, version))
    status = TaskStatus(change.state, change.timestamp, change.message)
    events.append(StatusUpdate(task_id, context_id, status, version + 1, change.metadata or None))
    return tuple(events)


class TaskStore(Protocol):
    """Tasks by id. Every method may be called from any task of the process."""

    async def create(self, task: Task) -> None:
        """Hold a new task (version 0); AtCapacity when there is no room."""

    async def get(self, task_id: str) -> Task:
        """The task; A2AError TASK_NOT_FOUND for an id the store does not hold."""

    async def list(self, query: ListTasks, owner: str | None) -> TaskPage:
        """A page of the owner's tasks (`Task.owner`), the most recently updated first, of at
        most `query.page_size` tasks and about MAX_PAGE_BYTES (`encoded_size`), but never
        empty while one is left; nothing of another owner's tasks shows, not even in the
        counts."""

    async def move(self, task_id: str, version: int, change: Change) -> Moved | None:
        """Apply `change` if the task is still at `version`; None if it has moved since.

        The lifecycle must allow the move (IllegalTransition otherwise: a bug)."""

    async def expire(self) -> None:
        """Drop finished tasks past their time to live."""


class TaskEvents(Protocol):
    """Publishes each task event to the listeners of its task, in the order published.

    Listeners are called synchronously, in the publisher's step: they must not block
    (set an event, put into a bounded buffer, cancel a scope) and must not raise. With
    several processes on one store, a task's listeners hear its events wherever they were
    made; `subscribe_all` hears those published in its own process only, so that each
    event reaches exactly one process's (a delivery that must happen once).
    """

    def publish(self, event: TaskEvent) -> None: ...

    def relay(self, event: ArtifactUpdate) -> None:
        """A chunk of an artifact under way, which no move made: to this process's
        listeners of its task at once, never recorded nor numbered, so a later move's
        event of the same number still reaches them. Other processes never hear it: a
        row and a NOTIFY for each chunk would cost the database a write per token."""

    def subscribe(self, task_id: str, listener: Listener) -> AbstractContextManager[None]:
        """Hear every event of one task from now on, from any process, until the context
        exits."""

    def subscribe_all(self, listener: Listener) -> AbstractContextManager[None]:
        """Hear every event this process publishes from now on, until the context exits."""
