"""Delivers every update of a task to each of its push configs: in order, at least once,
never in the task's way.

The deliverer watches the events of each task that has a config to deliver to (a
TaskEvents listener per task, which never blocks; with a shared store, events made on
other replicas too). Each config has a route (route.py: what to send, when to retry,
what to give up, all decided without I/O) and one trio task that does what its route
says: POST, read the task, wait, and hand back what came of it. A slow or dead receiver
holds up only its own route. A route ends when its task has ended and the last update
is delivered, when its config is deleted, or at shutdown, after the drain's grace.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import urlsplit

import trio
from trio.lowlevel import ParkingLot

from ..core.errors import StoreUnavailable
from ..observability import traces
from ..observability.metrics import Metrics
from ..protocol.errors import A2AError
from ..protocol.model import TaskEvent
from ..protocol.push import PushConfig
from ..store import TaskEvents, TaskStore
from . import PushConfigStore
from .queue import DEFAULT_LIMIT
from .route import (
    BACKOFF_BASE,
    BACKOFF_CAP,
    Action,
    Answer,
    Attempt,
    Attempted,
    Broke,
    Close,
    Deleted,
    Event,
    GraceOver,
    Heard,
    Post,
    Posted,
    ReadTask,
    Ready,
    Report,
    Result,
    RetrySchedule,
    Route,
    TaskEnded,
    TaskRead,
    WaitUntil,
)

logger = logging.getLogger(__name__)


class Sender(Protocol):
    """One POST to a receiver (sender.PushSender; a script in tests)."""

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Attempt: ...


@dataclass(eq=False)
class _Running:
    """A route, and what its trio task needs: its cancel scope, and where it waits for
    an update while there is nothing to deliver."""

    route: Route
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    woken: ParkingLot = field(default_factory=ParkingLot)


@dataclass(eq=False)
class _Watch:
    """A task's events, listened to while one of its configs has a route; its routes by
    config id."""

    listening: ExitStack
    routes: dict[str, _Running] = field(default_factory=dict)


class Deliverer:
    def __init__(
        self,
        sender: Sender,
        tasks: TaskStore,
        configs: PushConfigStore,
        *,
        max_attempts: int = 5,
        queue_limit: int = DEFAULT_LIMIT,
        metrics: Metrics | None = None,
        backoff_base: float = BACKOFF_BASE,
        backoff_cap: float = BACKOFF_CAP,
        jitter: random.Random | None = None,
    ) -> None:
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
        assert self._nursery is not None, "run() comes first"
        watch = self._watched.get(config.task_id) or self._watch(config.task_id)
        replaced = watch.routes.get(config.id)
        if replaced is not None and replaced.route.config == config:
            return
        route = Route(
            config, retries=self._retries, queue_limit=self._queue_limit, jitter=self._jitter.random
        )
        running = watch.routes[config.id] = _Running(route)
        if replaced is not None:
            self._tell(replaced, Deleted())
        self._nursery.start_soon(
            self._deliver, running, name=f"push deliveries of task {config.task_id}"
        )

    def stop_delivering_to(self, task_id: str, config_id: str) -> None:
        """The config is deleted: nothing more goes to it, not even what is queued."""
        watch = self._watched.get(task_id)
        running = watch.routes.get(config_id) if watch is not None else None
        if running is not None:
            self._tell(running, Deleted())

    def task_ended(self, task_id: str) -> None:
        """The task has ended: its routes end once their queues are delivered."""
        watch = self._watched.get(task_id)
        for running in list(watch.routes.values()) if watch is not None else ():
            self._tell(running, TaskEnded())

    def on_update(self, event: TaskEvent) -> None:
        """A TaskEvents listener: queue the update for each route of its task. Never blocks."""
        watch = self._watched.get(event.task_id)
        if watch is None:
            return
        heard = Heard(event, trio.current_time())
        for running in list(watch.routes.values()):
            self._tell(running, heard)

    async def drain(self, grace_seconds: float) -> int:
        """Let the updates under way and queued be delivered within the grace period; log
        and count the ones left, and stop. Returns how many were left."""
        with trio.move_on_after(grace_seconds):
            await self.idle()
        undelivered = 0
        for running in list(self._all_routes()):
            undelivered += running.route.left
            self._tell(running, GraceOver())
        self._stopped.set()
        return undelivered

    async def idle(self) -> None:
        """Until no update is queued or under way."""
        while self.queued:
            await self._changed.park()

    def _watch(self, task_id: str) -> _Watch:
        assert self._events is not None, "run() comes first"
        watch = self._watched[task_id] = _Watch(ExitStack())
        watch.listening.enter_context(self._events.subscribe(task_id, self.on_update))
        return watch

    def _tell(self, running: _Running, event: Event) -> None:
        """An event from outside the route's task: done at once, never awaited."""
        actions = running.route.handle(event)
        if any(isinstance(action, Close) for action in actions):
            self._forget(running)
            running.scope.cancel()
        self._do_at_once(running, actions)
        running.woken.unpark_all()

    async def _deliver(self, running: _Running) -> None:
        with running.scope:
            close = await self._drive(running)
        if running.scope.cancelled_caught:
            return
        self._forget(running)
        task_id = running.route.config.task_id
        if close.task_over and task_id not in self._watched:
            await self._configs.task_ended(task_id)

    async def _drive(self, running: _Running) -> Close:
        """Do what the route says, one thing at a time, until it closes."""
        event: Event = Ready(trio.current_time())
        while True:
            try:
                awaited = self._do_at_once(running, running.route.handle(event))
                if isinstance(awaited, Close):
                    return awaited
                event = await self._await(running, awaited)
            except Exception:
                # A bug here must lose one update, not every route of the process.
                logger.exception("push to a config of task %s failed", running.route.config.task_id)
                event = Broke(trio.current_time())

    async def _await(self, running: _Running, action: Action | None) -> Event:
        """Do the one thing of a route's answer that takes time; what came of it."""
        match action:
            case Post(url=url, body=body, headers=headers):
                if traces.active.enabled:
                    attempt = await self._traced_post(running, url, body, dict(headers))
                else:
                    attempt = await self._sender.post(url, body, dict(headers))
                return Posted(attempt, trio.current_time())
            case ReadTask(task_id=task_id):
                try:
                    task = await self._tasks.get(task_id)
                except (A2AError, StoreUnavailable):  # gone, or not to be read now: not posted
                    task = None
                return TaskRead(task, trio.current_time())
            case WaitUntil(at=at):
                await trio.sleep_until(at)
            case _:  # nothing to deliver: until an update comes, or the task's end
                await running.woken.park()
        return Ready(trio.current_time())

    async def _traced_post(
        self, running: _Running, url: str, body: bytes, headers: dict[str, str]
    ) -> Attempt:
        """One attempt within its client span: the config's task and id, the receiver's
        URL without its query, and what came of it (never its headers: the token)."""
        config = running.route.config
        span = traces.active.client("A2A push POST", traces.without_query(url), ())
        span.set("a2a.task_id", config.task_id)
        span.set("a2a.push.config_id", config.id)
        try:
            attempt = await self._sender.post(url, body, headers)
        except BaseException:
            span.fail("cut before its answer")
            raise
        else:
            span.set("a2a.push.answer", attempt.answer.value)
            if attempt.status is not None:
                span.set("http.response.status_code", attempt.status)
            if attempt.answer is not Answer.DELIVERED:
                span.fail(attempt.answer.value)
            return attempt
        finally:
            span.end()

    def _do_at_once(self, running: _Running, actions: list[Action]) -> Action | None:
        """Count and log what the route says; the one action left to await, if any."""
        awaited: Action | None = None
        for action in actions:
            if isinstance(action, Report):
                self._report(running.route.config, action)
            elif isinstance(action, Attempted):
                self._metrics.push_attempted()
            else:
                awaited = action
        self._changed.unpark_all()
        return awaited

    def _report(self, config: PushConfig, report: Report) -> None:
        if report.result.counted:
            self._metrics.push_delivered(report.result.value, report.updates)
        if report.latency is not None:
            self._metrics.push_latency(report.latency)
        if report.logged:
            level = logging.DEBUG if report.result is Result.DELIVERED else logging.WARNING
            _log(level, config, report)

    def _forget(self, running: _Running) -> None:
        config = running.route.config
        watch = self._watched.get(config.task_id)
        if watch is None or watch.routes.get(config.id) is not running:
            return
        del watch.routes[config.id]
        if not watch.routes:
            del self._watched[config.task_id]
            watch.listening.close()

    def _all_routes(self) -> Iterator[_Running]:
        for watch in self._watched.values():
            yield from watch.routes.values()


def _log(level: int, config: PushConfig, report: Report) -> None:
    # The URL's host only: its path and query may hold a secret, as its token does.
    fields = {
        "event": "push",
        "task_id": config.task_id,
        "config_id": config.id,
        "host": urlsplit(config.url).hostname,
        "result": report.result.value,
        "attempts": report.attempts,
        "detail": report.detail,
    }
    logger.log(
        level,
        "push to %s %s: %s",
        fields["host"],
        fields["result"],
        report.detail,
        extra={"fields": fields},
    )
