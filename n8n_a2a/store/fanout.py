"""What every store shares: the clock its times come from, and the fan-out of a task's
events to the listeners in this process."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from ..protocol.model import ArtifactUpdate, TaskEvent
from . import Listener

logger = logging.getLogger(__name__)

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


class LocalTaskEvents:
    """A broadcast per task, in this process. A task nobody listens to costs a dict look-up."""

    def __init__(self) -> None:
        self._by_task: dict[str, list[Listener]] = {}
        self._everything: list[Listener] = []

    def publish(self, event: TaskEvent) -> None:
        self._hand(event, (*self._everything, *self._by_task.get(event.task_id, ())))

    def relay(self, event: ArtifactUpdate) -> None:
        """To the task's listeners only: a chunk is no event of the process's moves."""
        self._hand(event, self._by_task.get(event.task_id, ()))

    def _hand(self, event: TaskEvent, listeners: Iterable[Listener]) -> None:
        for listener in listeners:
            try:
                listener(event)
            except Exception:
                # One listener's bug must not keep the event from the others, nor fail
                # the move that published it.
                logger.exception("a listener of task %s failed", event.task_id)

    @contextmanager
    def subscribe(self, task_id: str, listener: Listener) -> Iterator[None]:
        listeners = self._by_task.setdefault(task_id, [])
        listeners.append(listener)
        try:
            yield
        finally:
            listeners.remove(listener)
            if not listeners:
                del self._by_task[task_id]

    @contextmanager
    def subscribe_all(self, listener: Listener) -> Iterator[None]:
        self._everything.append(listener)
        try:
            yield
        finally:
            self._everything.remove(listener)
