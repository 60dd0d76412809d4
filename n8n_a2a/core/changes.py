"""A task's change, as the rules decide it (turns.py) and every store applies it: its next
status and what comes with it, and the events it makes, numbered on from the task's version.

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
    TaskEvent,
    TaskState,
    TaskStatus,
)
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
