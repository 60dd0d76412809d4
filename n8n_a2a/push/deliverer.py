"""Delivers every update of a task to each of its push configs: in order, at least once,
never in the task's way.

The deliverer watches the events of each task that has a config to deliver to (a
TaskEvents listener per task, which never blocks; with a shared store, events made on
other replicas too). Each config has a route (route.py: what to send, when to retry,
what to give up, all decided without I/O) and one trio task that does what its route
says (driving.py): POST, read the task, wait, and hand back what came of it. A slow or
dead receiver holds up only its own route. A route ends when its task has ended and the
last update is delivered, when its config is deleted, or at shutdown, after the drain's
grace. The routes' modules are imported with the first config delivered to: a start with
none never builds their tables.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import trio
from trio.lowlevel import ParkingLot

from ..observability.metrics import Metrics
from ..protocol.model import TaskEvent
from ..protocol.push import PushConfig
from ..store import PushConfigStore, TaskEvents, TaskStore
from .attempts import BACKOFF_BASE, BACKOFF_CAP, RetrySchedule, Sender

if TYPE_CHECKING:  # imported by the first config delivered to
    from .driving import Means, Running


@dataclass(eq=False)
class _Watch:
    """A task's events, listened to while one of its configs has a route; its routes by
    config id."""

    listening: ExitStack
    routes: dict[str, Running] = field(default_factory=dict)


class Deliverer:
    def __init__(
        self,
        sender: Sender,
        tasks: TaskStore,
        configs: PushConfigStore,
        *,
        max_attempts: int = 5,
        queue_limit: int | None = None,
        metrics: Metrics | None = None,
        backoff_base: float = BACKOFF_BASE,
        backoff_cap: float = BACKOFF_CAP,
        jitter: random.Random | None = None,
    ) -> None:
        """`queue_limit`: the updates one route holds (None: queue.py's DEFAULT_LIMIT)."""
        self._sender = sender
        self._tasks = tasks
        self._configs = configs
        self._retries = RetrySchedule(max_attempts, backoff_base, backoff_cap)
        self._queue_limit = queue_limit
        self._metrics = metrics or Metrics()
        self._jitter = jitter or random.Random()
        self._watched: dict[str, _Watch] = {}
        self._events: TaskEvents | None = None
        self._nursery: trio.Nursery | None = None
        self._changed = ParkingLot()  # a route's queue or delivery moved on
        self._stopped = trio.Event()

    @property
    def queued(self) -> int:
        """Updates waiting to be delivered, or being delivered, over all routes."""
        return sum(running.route.left for running in self._all_routes())

    async def run(
        self, events: TaskEvents, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Deliver the updates of the tasks watched, until the drain is over. Start it
        before the first config is delivered to."""
        async with trio.open_nursery() as nursery:
            self._nursery, self._events = nursery, events
            try:
                task_status.started()
                await self._stopped.wait()
            finally:
                for watch in self._watched.values():
                    watch.listening.close()
                self._watched.clear()
            nursery.cancel_scope.cancel()

    def deliver_to(self, config: PushConfig) -> None:
        """Deliver the task's updates from now on to this config, replacing one of its id
        (the same config again, as a caller sends it with each turn, changes nothing)."""
        from .driving import Running

        assert self._nursery is not None, "run() comes first"
        watch = self._watched.get(config.task_id) or self._watch(config.task_id)
        replaced = watch.routes.get(config.id)
        if replaced is not None and replaced.config == config:
            return
        running = watch.routes[config.id] = Running(
            config,
            self._means(),
            retries=self._retries,
            queue_limit=self._queue_limit,
            jitter=self._jitter.random,
        )
        if replaced is not None:
            replaced.delete()
        self._nursery.start_soon(running.deliver, name=f"push deliveries of task {config.task_id}")

    def stop_delivering_to(self, task_id: str, config_id: str) -> None:
        """The config is deleted: nothing more goes to it, not even what is queued."""
        watch = self._watched.get(task_id)
        running = watch.routes.get(config_id) if watch is not None else None
        if running is not None:
            running.delete()

    def task_ended(self, task_id: str) -> None:
        """The task has ended: its routes end once their queues are delivered."""
        watch = self._watched.get(task_id)
        for running in list(watch.routes.values()) if watch is not None else ():
            running.end_task()

    def on_update(self, event: TaskEvent) -> None:
        """A TaskEvents listener: queue the update for each route of its task. Never blocks."""
        watch = self._watched.get(event.task_id)
        if watch is None:
            return
        heard_at = trio.current_time()
        for running in list(watch.routes.values()):
            running.hear(event, heard_at)

    async def drain(self, grace_seconds: float) -> int:
        """Let the updates under way and queued be delivered within the grace period; log
        and count the ones left, and stop. Returns how many were left."""
        with trio.move_on_after(grace_seconds):
            await self.idle()
        undelivered = 0
        for running in list(self._all_routes()):
            undelivered += running.route.left
            running.end_grace()
        self._stopped.set()
        return undelivered

    async def idle(self) -> None:
        """Until no update is queued or under way."""
        while self.queued:
            await self._changed.park()

    def _means(self) -> Means:
        from .driving import Means

        return Means(
            self._sender, self._tasks, self._configs, self._metrics, self._changed, self._forget
        )

    def _watch(self, task_id: str) -> _Watch:
        assert self._events is not None, "run() comes first"
        watch = self._watched[task_id] = _Watch(ExitStack())
        watch.listening.enter_context(self._events.subscribe(task_id, self.on_update))
        return watch

    def _forget(self, running: Running) -> bool:
        """Take the route out of its task's watch; whether the task has no route left."""
        config = running.config
        watch = self._watched.get(config.task_id)
        if watch is not None and watch.routes.get(config.id) is running:
            del watch.routes[config.id]
            if not watch.routes:
                del self._watched[config.task_id]
                watch.listening.close()
        return config.task_id not in self._watched

    def _all_routes(self) -> Iterator[Running]:
        for watch in self._watched.values():
            yield from watch.routes.values()
