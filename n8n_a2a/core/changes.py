"""A task's change, as the rules decide it (turns.py) and every store applies it: its next
status and what comes with it, the events it makes, numbered on from the task's version,
and the task it makes.

Here, below the stores, so that the rules name a change without knowing where tasks live.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..protocol.model import (
    Artifact,
    ArtifactUpdate,
    Message,
    StatusUpdate,
    Task,
    TaskEvent,
    TaskState,
    TaskStatus,
)
from .lifecycle import ends_turn
from .sent import Sent


@dataclass(frozen=True, slots=True)
class Change:
    """A task's next status and what comes with it: `history` (the caller's message that
    starts a next turn) joins the history, then the status message; the artifacts join
    the artifacts, the metadata the task's metadata. `sent`: that caller's message as the
    store remembers it (core/sent.py), taken with the move or not at all."""

    state: TaskState
    timestamp: datetime
    message: Message | None = None
    artifacts: tuple[Artifact, ...] = ()
    metadata: dict[str, Any] | None = None
    history: tuple[Message, ...] = ()
    sent: Sent | None = None
    #: The chunks of the turn's answer relayed before it (each a generation of the task's).
    relayed: int = 0
    #: A change that ends a turn: where the next turn goes instead of the webhook (a
    #: waiting execution's resume target, core/resume.py; None: the webhook). Any other
    #: change leaves the task's as it is. A credential: never shown.
    resume: str | None = field(default=None, repr=False)


def change_events(
    task_id: str, context_id: str, version: int, relayed: int, change: Change
) -> tuple[TaskEvent, ...]:
    """The events a change makes of a task at `version` with `relayed` chunks counted,
    numbered on from it: the artifacts first, in order, then the status. Every store
    numbers them so; each event's generation is one more than the last's."""
    events: list[TaskEvent] = []
    relayed += change.relayed
    for artifact in change.artifacts:
        version += 1
        events.append(ArtifactUpdate(task_id, context_id, artifact, version, relayed=relayed))
    status = TaskStatus(change.state, change.timestamp, change.message)
    events.append(
        StatusUpdate(
            task_id, context_id, status, version + 1, change.metadata or None, relayed=relayed
        )
    )
    return tuple(events)


def moved_task(task: Task, change: Change, events: tuple[TaskEvent, ...]) -> Task:
    """The task `change` makes of `task`, given the events it made (change_events'): what
    every store holds after the move, made of the task's and the change's own parts (a
    file among them is the change's object, never a copy read back)."""
    last = events[-1]
    assert isinstance(last, StatusUpdate)  # (change_events ends with the status)
    # A Task made whole, not `replace`d: this is every move's path, and `replace` reads
    # the fields' list again each time.
    return Task(
        task.id,
        task.context_id,
        last.status,
        task.history + change.history + ((change.message,) if change.message else ()),
        task.artifacts + change.artifacts,
        {**task.metadata, **change.metadata} if change.metadata else task.metadata,
        last.sequence,
        task.owner,
        last.relayed,
        change.resume if ends_turn(change.state) else task.resume,
    )
