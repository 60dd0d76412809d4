"""The updates waiting for one receiver: bounded, in order, the task's end never lost.

A receiver that is slow or down must not make the adapter hold every update of a long
task. When the queue is full, a status update that a later one supersedes goes (two
status updates side by side coalesce into the later one); only a queue with no such
pair drops its oldest update. The terminal update is the task's last, so it always
finds room. Chunks of a streamed answer (an artifact update that is not the last)
merge into the chunk waiting at the tail, one appended text: a receiver is sent as few
as its pace allows, and the chunks never crowd out a status. Pure: the deliverer's
listener fills it, its delivery loop empties it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace

from ..protocol.model import ArtifactUpdate, Part, StatusUpdate, TaskEvent

#: Updates one receiver may fall behind by. A task makes a handful in all.
DEFAULT_LIMIT = 16


@dataclass(frozen=True, slots=True)
class Pending:
    """An update to deliver, and when it was heard (for the delivery latency)."""

    event: TaskEvent
    heard_at: float


class UpdateQueue:
    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        if limit < 2:
            raise ValueError("an update queue holds at least 2 updates")
        self._items: deque[Pending] = deque()
        self._limit = limit

    def __len__(self) -> int:
        return len(self._items)

    def put(self, pending: Pending) -> list[Pending]:
        """Queue an update; the updates it pushed out to make room (coalesced or dropped),
        or the chunk merged into the one before it."""
        merged = _merged(self._items[-1].event, pending.event) if self._items else None
        if merged is not None:
            self._items[-1] = replace(self._items[-1], event=merged)
            return [pending]
        pushed_out = []
        if len(self._items) >= self._limit:
            pushed_out.append(self._make_room(pending))
        self._items.append(pending)
        return pushed_out

    def peek(self) -> Pending | None:
        """The oldest update, left in the queue."""
        return self._items[0] if self._items else None

    def take(self) -> Pending | None:
        """The oldest update, None when there is none."""
        return self._items.popleft() if self._items else None

    def _make_room(self, newcomer: Pending) -> Pending:
        items = [*self._items, newcomer]
        for index in range(len(items) - 1):
            if isinstance(items[index].event, StatusUpdate) and isinstance(
                items[index + 1].event, StatusUpdate
            ):
                break
        else:
            index = 0  # no status update to coalesce: the oldest goes
        removed = self._items[index]
        del self._items[index]
        return removed


def is_chunk(event: TaskEvent | None) -> bool:
    """Whether the event is a chunk of a streamed answer, which a later one goes on."""
    return isinstance(event, ArtifactUpdate) and not event.last_chunk


def _merged(first: TaskEvent, then: TaskEvent) -> ArtifactUpdate | None:
    """Two chunks of one artifact side by side as one, in the first's place with both
    texts; None for any other two updates."""
    if not (isinstance(first, ArtifactUpdate) and isinstance(then, ArtifactUpdate)):
        return None
    if first.last_chunk or then.last_chunk:
        return None
    if first.artifact.artifact_id != then.artifact.artifact_id:
        return None
    text = "".join(part.text for part in (*first.artifact.parts, *then.artifact.parts))
    artifact = replace(first.artifact, parts=(Part(text),))
    # The later one's number and generation: a receiver sees a gap where two went as one.
    return replace(first, artifact=artifact, sequence=then.sequence, relayed=then.relayed)
