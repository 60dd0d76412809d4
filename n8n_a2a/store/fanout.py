"""What every store shares: the clock its times come from, and the fan-out of a task's
events to the listeners in this process."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from types import TracebackType

from ..protocol.model import ArtifactUpdate, TaskEvent
from .api import Listener
from .relays import RelayedSoFar

logger = logging.getLogger(__name__)

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


class LocalTaskEvents:
    """A broadcast per task, in this process. A task nobody listens to costs a dict look-up."""

    def __init__(self) -> None:
        self._by_task: dict[str, list[Listener]] = {}
        self._everything: list[Listener] = []
        self._so_far = RelayedSoFar()

    def publish(self, event: TaskEvent) -> None:
        if self._so_far:  # a move after chunks ends their turn
            self._so_far.drop(event.task_id)
        self._hand(event, (*self._everything, *self._by_task.get(event.task_id, ())))

    def relay(self, event: ArtifactUpdate, *, keep: bool = True) -> None:
        """To the task's listeners only: a chunk is no event of the process's moves.
        `keep`: it joins what `relayed_so_far` answers (False: the caller keeps it)."""
        if keep:
            self._so_far.add(event)
        self._hand(event, self._by_task.get(event.task_id, ()))

    async def settled(self) -> None:
        """At once: this process's listeners heard each chunk as it was relayed."""

    async def relayed_so_far(self, task_id: str) -> ArtifactUpdate | None:
        """The chunks of the task's answer relayed so far, as one (None without any)."""
        return self._so_far.get(task_id)

    def _hand(self, event: TaskEvent, listeners: Iterable[Listener]) -> None:
        for listener in listeners:
            try:
                listener(event)
            except Exception:
                # One listener's bug must not keep the event from the others, nor fail
                # the move that published it.
                logger.exception("a listener of task %s failed", event.task_id)

    def subscribe(self, task_id: str, listener: Listener) -> AbstractContextManager[None]:
        # Every send subscribes (its call, a blocking send's wait): a plain class costs a
        # third of what a generator's contextmanager does.
        return _Hearing(self._by_task, task_id, listener)

    @contextmanager
    def subscribe_all(self, listener: Listener) -> Iterator[None]:
        self._everything.append(listener)
        try:
            yield
        finally:
            self._everything.remove(listener)


class _Hearing:
    """One listener of one task's events, from the block's start to its end."""

    __slots__ = ("_by_task", "_listener", "_listeners", "_task_id")

    def __init__(
        self, by_task: dict[str, list[Listener]], task_id: str, listener: Listener
    ) -> None:
        self._by_task = by_task
        self._task_id = task_id
        self._listener = listener
        self._listeners: list[Listener] = []

    def __enter__(self) -> None:
        self._listeners = self._by_task.setdefault(self._task_id, [])
        self._listeners.append(self._listener)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._listeners.remove(self._listener)
        if not self._listeners:
            del self._by_task[self._task_id]
