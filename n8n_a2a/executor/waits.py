"""Tasks waiting for input, and the end of their wait.

A task whose workflow asked a question (where ADAPTER_ALLOW_INPUT_REQUIRED allows it)
waits with no call for the caller's next message; ADAPTER_INPUT_TTL bounds the wait.
Each wait is kept from the task's events, whichever request or process made it, and
ended here as it runs out, unless a message, a cancel or another replica came first.
"""

from __future__ import annotations

import logging

import trio

from ..core import lifecycle, turns
from ..protocol.model import StatusUpdate, TaskEvent, TaskState
from .recorder import TaskRecorder
from .reports import TurnReporter

# The executor's one logger, whichever of its rooms logs: the name its log lines have
# always carried, which operators filter on.
logger = logging.getLogger(__package__)


class InputWaits:
    """When each task waiting for input stops waiting, and its end once it has waited too
    long."""

    def __init__(self, tasks: TaskRecorder, reports: TurnReporter, input_ttl: float) -> None:
        self._tasks = tasks
        self._reports = reports
        self._input_ttl = input_ttl
        # Tasks waiting for input: id -> (its version as it began to wait, the trio time its
        # wait ends, what it waits for), in the order they began, which with one TTL is
        # the order they end.
        self._waiting: dict[str, tuple[int, float, TaskState]] = {}
        self._someone_waits = trio.Event()

    def hear(self, event: TaskEvent) -> None:
        """Keep when each task waiting for input stops waiting (a TaskEvents listener)."""
        if not isinstance(event, StatusUpdate):
            return
        self._waiting.pop(event.task_id, None)
        if lifecycle.takes_message(event.status.state):
            if not self._waiting:
                self._someone_waits.set()
            ends = trio.current_time() + self._input_ttl
            self._waiting[event.task_id] = (event.sequence, ends, event.status.state)

    async def expire(self) -> None:
        """End each task that waited ADAPTER_INPUT_TTL for input, as its wait runs out."""
        while True:
            if not self._waiting:
                self._someone_waits = trio.Event()
                await self._someone_waits.wait()
                continue  # it may have stopped waiting again meanwhile
            task_id, (version, ends, state) = next(iter(self._waiting.items()))
            if trio.current_time() < ends:
                await trio.sleep_until(ends)
                continue  # the first to run out may have stopped waiting meanwhile
            del self._waiting[task_id]
            try:
                await self.end(task_id, version, state)
            except Exception:
                logger.exception("the wait of task %s could not be ended", task_id)

    async def end(self, task_id: str, version: int, state: TaskState | None = None) -> bool:
        """End a task that waited for input too long (in `state`; None: read it), if it
        still waits at `version`; False if its answer, or a cancel, came first."""
        if state is None:  # a wait another replica began: ended here, past its time
            state = (await self._tasks.get(task_id)).status.state
        expired = await self._tasks.end(
            task_id, turns.input_expired(self._input_ttl, state), from_version=version
        )
        if expired is not None:
            self._reports.turn_ended(expired)
        return expired is not None
