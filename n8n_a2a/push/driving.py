"""One config's route driven by a trio task: it does what the route (route.py) says, one
thing at a time (POST, read the task, wait) and hands back what came of it.

deliverer.py imports this module, and with it the routes' tables, when the first config
is delivered to: a start with no push config builds none of them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import assert_never
from urllib.parse import urlsplit

import trio
from trio.lowlevel import ParkingLot

from ..core.errors import StoreUnavailable
from ..observability import traces
from ..observability.metrics import Metrics
from ..protocol.errors import A2AError
from ..protocol.model import TaskEvent
from ..protocol.push import PushConfig
from ..store import PushConfigStore, TaskStore
from .attempts import Answer, Attempt, RetrySchedule, Sender
from .queue import DEFAULT_LIMIT
from .route import (
    Action,
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
    Route,
    TaskEnded,
    TaskRead,
    WaitUntil,
)

# The deliveries' lines keep the logger they have always had: filters name it.
logger = logging.getLogger("n8n_a2a.push.deliverer")

#: What a route says that takes time: its trio task awaits it (the rest is done at once).
Awaited = Post | ReadTask | WaitUntil


@dataclass(frozen=True)
class Means:
    """What every route's driver shares, from the deliverer: the POSTs, the tasks as they
    stand, the configs (told when a task's last route is over), the metrics, where waiters
    hear that a queue or a delivery moved on, and `forget`, which takes a route out of the
    deliverer and says whether its task has none left."""

    sender: Sender
    tasks: TaskStore
    configs: PushConfigStore
    metrics: Metrics
    changed: ParkingLot
    forget: Callable[[Running], bool]


class Running:
    """A route, its trio task's cancel scope, and where that task waits for an update
    while there is nothing to deliver."""

    def __init__(
        self,
        config: PushConfig,
        means: Means,
        *,
        retries: RetrySchedule,
        queue_limit: int | None,
        jitter: Callable[[], float],
    ) -> None:
        """`queue_limit`: None for queue.py's DEFAULT_LIMIT."""
        limit = DEFAULT_LIMIT if queue_limit is None else queue_limit
        self.route = Route(config, retries=retries, queue_limit=limit, jitter=jitter)
        self.scope = trio.CancelScope()
        self.woken = ParkingLot()
        self._means = means

    @property
    def config(self) -> PushConfig:
        return self.route.config

    # What the deliverer tells a route, from outside its task: done at once, never awaited.

    def hear(self, event: TaskEvent, at: float) -> None:
        self._tell(Heard(event, at))

    def end_task(self) -> None:
        self._tell(TaskEnded())

    def delete(self) -> None:
        self._tell(Deleted())

    def end_grace(self) -> None:
        self._tell(GraceOver())

    def _tell(self, event: Event) -> None:
        actions = self.route.handle(event)
        if any(isinstance(action, Close) for action in actions):
            self._means.forget(self)
            self.scope.cancel()
        self._do_at_once(actions)
        self.woken.unpark_all()

    async def deliver(self) -> None:
        """The route's trio task: until the route closes, or its scope is cancelled."""
        with self.scope:
            close = await self._drive()
        if self.scope.cancelled_caught:
            return
        if self._means.forget(self) and close.task_over:
            await self._means.configs.task_ended(self.config.task_id)

    async def _drive(self) -> Close:
        """Do what the route says, one thing at a time, until it closes."""
        event: Event = Ready(trio.current_time())
        while True:
            try:
                awaited = self._do_at_once(self.route.handle(event))
                if isinstance(awaited, Close):
                    return awaited
                event = await self._await(awaited)
            except Exception:
                # A bug here must lose one update, not every route of the process.
                logger.exception("push to a config of task %s failed", self.config.task_id)
                event = Broke(trio.current_time())

    async def _await(self, action: Awaited | None) -> Event:
        """Do the one thing of a route's answer that takes time; what came of it."""
        match action:
            case Post(url=url, body=body, headers=headers):
                if traces.active.enabled:
                    attempt = await self._traced_post(url, body, dict(headers))
                else:
                    attempt = await self._means.sender.post(url, body, dict(headers))
                return Posted(attempt, trio.current_time())
            case ReadTask(task_id=task_id):
                try:
                    task = await self._means.tasks.get(task_id)
                except (A2AError, StoreUnavailable):  # gone, or not to be read now: not posted
                    task = None
                return TaskRead(task, trio.current_time())
            case WaitUntil(at=at):
                await trio.sleep_until(at)
            case None:  # nothing to deliver: until an update comes, or the task's end
                await self.woken.park()
            case _:
                assert_never(action)
        return Ready(trio.current_time())

    async def _traced_post(self, url: str, body: bytes, headers: dict[str, str]) -> Attempt:
        """One attempt within its client span: the config's task and id, the receiver's
        URL without its query, and what came of it (never its headers: the token)."""
        span = traces.active.client("A2A push POST", traces.without_query(url), ())
        span.set("a2a.task_id", self.config.task_id)
        span.set("a2a.push.config_id", self.config.id)
        try:
            attempt = await self._means.sender.post(url, body, headers)
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

    def _do_at_once(self, actions: list[Action]) -> Awaited | Close | None:
        """Count and log what the route says; the one action left to await, if any."""
        awaited: Awaited | Close | None = None
        for action in actions:
            match action:
                case Report():
                    self._report(action)
                case Attempted():
                    self._means.metrics.push_attempted()
                case Post() | ReadTask() | WaitUntil() | Close():
                    awaited = action
                case _:
                    assert_never(action)
        self._means.changed.unpark_all()
        return awaited

    def _report(self, report: Report) -> None:
        metrics = self._means.metrics
        if report.result.counted:
            metrics.push_delivered(report.result.value, report.updates)
        if report.latency is not None:
            metrics.push_latency(report.latency)
        if report.logged:
            level = logging.DEBUG if report.result is Result.DELIVERED else logging.WARNING
            _log(level, self.config, report)


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
