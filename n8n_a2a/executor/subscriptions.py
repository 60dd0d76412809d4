"""Event streams: one subscriber's view of a task, and how many one caller may hold open.

A subscriber sees the task as it was when it joined, then every later event. Events
reach it through a bounded buffer, filled by the publisher's step and emptied at the
subscriber's pace. The publisher never waits: a subscriber too slow to keep up is
dropped (its stream ends with an error) while the task and every other subscriber go on,
so memory stays bounded whatever a client does. A stream holds a connection for as long
as its task runs (a day, for a task waiting for input), so each caller may hold only so
many at once: one caller cannot take every connection.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import trio

from ..core.errors import AtCapacity, SubscriberTooSlow
from ..core.owners import Owner
from ..protocol.model import ArtifactUpdate, StatusUpdate, Task, TaskEvent

#: Events a subscriber may fall behind by before it is dropped. A task makes a handful
#: of events in all; only a reader that stopped reading gets anywhere near this.
DEFAULT_BUFFER = 64


class TaskStream:
    """Events of one task after a known version of it, in order, until the final one."""

    def __init__(self, buffer: int = DEFAULT_BUFFER) -> None:
        self._send, self._receive = trio.open_memory_channel[TaskEvent](buffer)
        self._task: Task | None = None
        self._ended = False

    @property
    def task(self) -> Task:
        """The task as the stream begins: what a stream's first event shows."""
        assert self._task is not None, "begin() comes first"
        return self._task

    def begin(self, task: Task, *, over: bool = False) -> None:
        """Start from this version of the task: events it already includes are skipped.
        `over`: the task is all there is to show (a retried send of a turn that ended)."""
        self._task = task
        self._ended = over

    def hear(self, event: TaskEvent) -> None:
        """A TaskEvents listener: never blocks, never raises."""
        try:
            self._send.send_nowait(event)
        except trio.WouldBlock:
            self._send.close()  # what it holds is still read, then the stream ends
        except trio.ClosedResourceError:
            pass  # dropped already

    @property
    def ended(self) -> bool:
        """Whether the final event has been read."""
        return self._ended

    async def next(self) -> TaskEvent | None:
        """The next event; None after the final one. SubscriberTooSlow if it was dropped."""
        while not self._ended:
            try:
                event = await self._receive.receive()
            except trio.EndOfChannel:
                raise SubscriberTooSlow(self.task.id) from None
            if self._new(event):
                return event
        return None

    def next_come(self) -> TaskEvent | None:
        """The next event if it has come already (None if not, or after the final one),
        without waiting: the events of one step go out together. SubscriberTooSlow as
        `next`."""
        while not self._ended:
            try:
                event = self._receive.receive_nowait()
            except trio.WouldBlock:
                return None
            except trio.EndOfChannel:
                raise SubscriberTooSlow(self.task.id) from None
            if self._new(event):
                return event
        return None

    def _new(self, event: TaskEvent) -> bool:
        """Whether the event is one to show; False for one heard while joining, which the
        task it began with includes already."""
        if event.sequence <= self.task.version:
            return False
        chunk = isinstance(event, ArtifactUpdate) and not event.last_chunk
        if chunk and event.generation <= self.task.generation:
            return False  # a chunk the task it began with holds already (joined mid-answer)
        self._ended = isinstance(event, StatusUpdate) and event.final
        return True


_STREAMS = (
    "streams open (ADAPTER_MAX_STREAMS_PER_CALLER): close one, or follow the task with "
    "GetTask or push notifications"
)


class StreamQuota:
    """Streams open per caller (ADAPTER_MAX_STREAMS_PER_CALLER), or any other request held
    open on a task (`held`: what they are, and what to do instead); anonymous callers,
    who share their tasks, share one count too."""

    def __init__(self, limit: int, held: str = _STREAMS) -> None:
        self._limit = limit
        self._held = held
        self._open: Counter[Owner] = Counter()

    def check(self, owner: Owner) -> None:
        """-32000 when the caller has its limit held already."""
        if self._open[owner] >= self._limit:
            who = "Anonymous callers have" if owner is None else "This caller has"
            raise AtCapacity(f"{who} {self._limit} {self._held}")

    @contextmanager
    def hold(self, owner: Owner) -> Iterator[None]:
        """One stream of the caller's, for as long as the block runs; refused as `check`."""
        self.check(owner)
        self._open[owner] += 1
        try:
            yield
        finally:
            self._open[owner] -= 1
            if not self._open[owner]:
                del self._open[owner]
