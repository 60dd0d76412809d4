"""Long-polls (A2A 1.1 as drafted): a GetTask with `currentGeneration` is held until its
task's generation passes it, or until ADAPTER_LONG_POLL_TIMEOUT, and answered with the
task as it stands then (the spec lets a server answer early, with the task unchanged).

A held poll is a request like any other: each caller may have only so many held at once
(ADAPTER_MAX_POLLS_PER_CALLER; one more is refused -32000, as a stream past its
quota), and shutdown answers every held poll at once with its task as it stands. It
listens first, then looks, so that no change between the two is missed; it hears a
change from any replica (the store's events). The chunks of a streamed answer wake no
poll: they are not the task's as GetTask shows it until the turn's end records them.
"""

from __future__ import annotations

import trio

from ..auth.caller import Caller
from ..core import lifecycle
from ..protocol.model import ArtifactUpdate, Task, TaskEvent
from ..store import TaskEvents
from .recorder import TaskRecorder
from .subscriptions import StreamQuota

_HELD = (
    "long-polls held (ADAPTER_MAX_POLLS_PER_CALLER): poll again when one has answered, "
    "or follow the task with a stream or push notifications"
)


class LongPolls:
    """GetTasks held until their task's generation passes the one the caller has seen."""

    def __init__(
        self, tasks: TaskRecorder, events: TaskEvents, timeout: float, per_caller: int
    ) -> None:
        self._tasks = tasks
        self._events = events
        self._timeout = timeout
        self._quota = StreamQuota(per_caller, _HELD)
        self._held: set[trio.CancelScope] = set()
        self._closing = False

    @property
    def held(self) -> int:
        """Polls held now."""
        return len(self._held)

    def close(self) -> None:
        """Shutdown: every poll held answers now, and none is held from now on."""
        self._closing = True
        for scope in self._held:
            scope.cancel()

    async def get(self, task_id: str, caller: Caller, seen: int) -> Task:
        """The caller's task once its generation is past `seen`; at once if it is already,
        if the task has ended (nothing will change it) or at shutdown; as it stands when
        the wait ends otherwise. TASK_NOT_FOUND as GetTask."""
        changed = trio.Event()

        def hear(event: TaskEvent) -> None:
            # A chunk relayed while its answer comes is no move of the task's.
            chunk = isinstance(event, ArtifactUpdate) and not event.last_chunk
            if event.generation > seen and not chunk:
                changed.set()

        with self._events.subscribe(task_id, hear):
            task = await self._tasks.owned(task_id, caller)
            if not self._holds(task, seen):
                return task
            with self._quota.hold(caller.owner), trio.move_on_after(self._timeout) as scope:
                self._held.add(scope)
                try:
                    await changed.wait()
                finally:
                    self._held.discard(scope)
            return await self._tasks.get(task_id) if changed.is_set() else task

    def _holds(self, task: Task, seen: int) -> bool:
        return (
            task.generation <= seen
            and not lifecycle.is_terminal(task.status.state)
            and not self._closing
        )
