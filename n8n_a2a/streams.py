"""One subscriber's view of a task: the task as it was when it joined, then every later event.

Events reach a subscriber through a bounded buffer, filled by the publisher's step and
emptied at the subscriber's pace. The publisher never waits: a subscriber too slow to
keep up is dropped (its stream ends with an error) while the task and every other
subscriber go on, so memory stays bounded whatever a client does.
"""

from __future__ import annotations

import trio

from .protocol.errors import A2AError, ErrorCode
from .protocol.model import StatusUpdate, Task, TaskEvent

#: Events a subscriber may fall behind by before it is dropped. A task makes a handful
#: of events in all; only a reader that stopped reading gets anywhere near this.
DEFAULT_BUFFER = 64


class SubscriberTooSlow(A2AError):
    """The subscriber's buffer filled up: its stream ends, the task goes on."""

    def __init__(self, task_id: str) -> None:
        super().__init__(
            ErrorCode.SERVER_BUSY,
            f"This stream fell too far behind task {task_id} and was closed; the task goes "
            "on: GetTask or SubscribeToTask shows where it is",
        )


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

    def begin(self, task: Task) -> None:
        """Start from this version of the task: events it already includes are skipped."""
        self._task = task

    def hear(self, event: TaskEvent) -> None:
        """A TaskEvents listener: never blocks, never raises."""
        try:
            self._send.send_nowait(event)
        except trio.WouldBlock:
            self._send.close()  # what it holds is still read, then the stream ends
        except trio.ClosedResourceError:
            pass  # dropped already

    async def next(self) -> TaskEvent | None:
        """The next event; None after the final one. SubscriberTooSlow if it was dropped."""
        while not self._ended:
            try:
                event = await self._receive.receive()
            except trio.EndOfChannel:
                raise SubscriberTooSlow(self.task.id) from None
            if event.sequence <= self.task.version:
                continue  # heard while joining, already in the task it began with
            self._ended = isinstance(event, StatusUpdate) and event.final
            return event
        return None
