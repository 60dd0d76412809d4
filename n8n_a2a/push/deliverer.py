"""Delivers every update of a task to each of its push configs: in order, at least once,
never in the task's way.

The deliverer hears every event of each task it delivers for (a TaskEvents listener per
task, which never blocks; with a shared store, events made on other replicas too). Each
active config has a route: a bounded queue (queue.py) and one trio task that delivers
its updates one after the other, retrying with exponential backoff and jitter when the
receiver does not answer or asks to come back (408, 429, 5xx). A slow or dead receiver
holds up only its own route. A route ends when its task has ended and the last update
is delivered, when its config is deleted, or at shutdown, after the drain's grace.

What a receiver gets depends on the version its config was made in: v1.0, each event as
a StreamResponse (`application/a2a+json`); v0.3, the Task as it stands when the POST is
made (`application/json`), skipping updates the Task it last got already showed.

Chunks of a streamed answer go to a receiver at most one per CHUNK_INTERVAL: those heard
meanwhile wait in its queue, merged into one appended text. The task's end follows the
last chunk at once: chunks hold it back by CHUNK_INTERVAL at most.
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

from ..lifecycle import is_terminal
from ..metrics import Metrics
from ..protocol import jsonrpc
from ..protocol.errors import A2AError
from ..protocol.model import JSONObject, StatusUpdate, TaskEvent
from ..protocol.push import PushConfig
from ..protocol.versions import codec_for
from ..store import TaskEvents, TaskStore
from . import PushConfigStore
from .queue import DEFAULT_LIMIT, Pending, UpdateQueue, is_chunk
from .sender import Answer, Attempt

logger = logging.getLogger(__name__)

TOKEN_HEADER = "X-A2A-Notification-Token"
# Backoff before attempt n+1: half of min(cap, base * 2**(n-1)), plus up to as much again.
BACKOFF_BASE = 0.5
BACKOFF_CAP = 30.0
#: The least time between two chunks of a streamed answer sent to one receiver, seconds.
CHUNK_INTERVAL = 0.25


class Sender(Protocol):
    """One POST to a receiver (sender.PushSender; a script in tests)."""

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Attempt: ...


@dataclass(eq=False)
class _Route:
    """One config's deliveries."""

    config: PushConfig
    queue: UpdateQueue
    wake: trio.Event = field(default_factory=trio.Event)
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    #: No update will come any more (the task has ended): end once the queue is empty.
    closing: bool = False
    #: The update being delivered now, retries included.
    busy: Pending | None = None
    #: v0.3: the version of the task the receiver was last sent.
    sent_version: int = 0
    #: When the next chunk may go (trio's clock).
    next_chunk_at: float = float("-inf")

    @property
    def left(self) -> int:
        """Updates not delivered yet."""
        return len(self.queue) + (self.busy is not None)


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
        self._max_attempts = max_attempts
        self._queue_limit = queue_limit
        self._metrics = metrics or Metrics()
        self._backoff_base = backoff_base
        self._backoff_cap = backoff_cap
        self._jitter = jitter or random.Random()
        self._routes: dict[str, dict[str, _Route]] = {}
        self._hearing: dict[str, ExitStack] = {}  # a task's events, while it has routes
        self._events: TaskEvents | None = None
        self._nursery: trio.Nursery | None = None
        self._changed = trio.Event()
        self._stopped = trio.Event()

    @property
    def queued(self) -> int:
        """Updates waiting to be delivered, or being delivered, over all routes."""
        return sum(route.left for route in self._all_routes())

    async def run(
        self, events: TaskEvents, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Deliver the events of the tasks followed, until the drain is over. Start it
        before the first config is followed."""
        async with trio.open_nursery() as nursery:
            self._nursery, self._events = nursery, events
            try:
                task_status.started()
                await self._stopped.wait()
            finally:
                for hearing in self._hearing.values():
                    hearing.close()
                self._hearing.clear()
            nursery.cancel_scope.cancel()

    def follow(self, config: PushConfig) -> None:
        """Deliver the task's updates from now on to this config, replacing one of its id
        (the same config again, as a caller sends it with each turn, changes nothing)."""
        assert self._nursery is not None and self._events is not None, "run() comes first"
        if config.task_id not in self._hearing:
            hearing = self._hearing[config.task_id] = ExitStack()
            hearing.enter_context(self._events.subscribe(config.task_id, self.hear))
        routes = self._routes.setdefault(config.task_id, {})
        if config.id in routes and routes[config.id].config == config:
            return
        replaced = routes.pop(config.id, None)
        if replaced is not None:
            self._cancel(replaced)
        route = _Route(config, UpdateQueue(self._queue_limit))
        routes[config.id] = route
        self._nursery.start_soon(
            self._deliver_all, route, name=f"push deliveries of task {config.task_id}"
        )

    def unfollow(self, task_id: str, config_id: str) -> None:
        """The config is deleted: nothing more goes to it, not even what is queued."""
        route = self._routes.get(task_id, {}).get(config_id)
        if route is not None:
            self._forget(route)
            self._cancel(route)

    def task_ended(self, task_id: str) -> None:
        """The task has ended: its routes end once their queues are empty."""
        for route in self._routes.get(task_id, {}).values():
            route.closing = True
            route.wake.set()

    def hear(self, event: TaskEvent) -> None:
        """A TaskEvents listener: queue the event for each route of its task. Never blocks."""
        routes = self._routes.get(event.task_id)
        if not routes:
            return
        heard_at = trio.current_time()
        ended = isinstance(event, StatusUpdate) and is_terminal(event.status.state)
        for route in routes.values():
            for _ in route.queue.put(Pending(event, heard_at)):
                self._metrics.push_delivered("coalesced")
            route.closing = route.closing or ended
            route.wake.set()

    async def drain(self, grace_seconds: float) -> int:
        """Let the updates under way and queued be delivered within the grace period; log
        and count the ones left, and stop. Returns how many were left."""
        with trio.move_on_after(grace_seconds):
            await self.idle()
        undelivered = 0
        for route in list(self._all_routes()):
            if route.left:
                undelivered += route.left
                self._metrics.push_delivered("undelivered", route.left)
                _log(
                    logging.WARNING,
                    route.config,
                    "undelivered",
                    f"{route.left} update(s) not delivered before shutdown",
                    attempts=None,
                )
        self._stopped.set()
        return undelivered

    async def idle(self) -> None:
        """Until no update is queued or under way."""
        while self.queued:
            await self._changed.wait()

    async def _deliver_all(self, route: _Route) -> None:
        with route.scope:
            while True:
                await self._pace(route)
                pending = route.queue.take()
                if pending is None:
                    if route.closing:
                        break
                    route.wake = trio.Event()
                    await route.wake.wait()
                    continue
                route.busy = pending
                try:
                    await self._deliver(route, pending)
                except Exception:
                    # A bug here must lose one update, not every route of the process.
                    logger.exception("push to a config of task %s failed", route.config.task_id)
                    self._metrics.push_delivered("failed")
                finally:
                    route.busy = None
                    self._note_change()
        if route.scope.cancelled_caught:
            return
        self._forget(route)
        if not self._routes.get(route.config.task_id):
            await self._configs.task_ended(route.config.task_id)

    async def _pace(self, route: _Route) -> None:
        """Hold a chunk at the head of the queue until its receiver may have one: later
        chunks merge into it meanwhile."""
        head = route.queue.peek()
        if head is not None and is_chunk(head.event):
            await trio.sleep_until(route.next_chunk_at)
            route.next_chunk_at = trio.current_time() + CHUNK_INTERVAL

    async def _deliver(self, route: _Route, pending: Pending) -> None:
        config = route.config
        body = await self._body(route, pending.event)
        if body is None:
            return
        headers = _headers(config)
        attempts = 0
        while True:
            attempt = await self._sender.post(config.url, body, headers)
            if attempt.answer is Answer.BLOCKED:  # never attempted
                self._end(config, "blocked", attempt, attempts)
                return
            attempts += 1
            self._metrics.push_attempted()
            if attempt.answer is Answer.DELIVERED:
                self._metrics.push_latency(trio.current_time() - pending.heard_at)
                self._end(config, "delivered", attempt, attempts)
                return
            if attempt.answer is Answer.REJECTED:
                self._end(config, "rejected", attempt, attempts)
                return
            if attempts >= self._max_attempts:
                self._end(config, "failed", attempt, attempts)
                return
            await trio.sleep(self._backoff(attempts))

    async def _body(self, route: _Route, event: TaskEvent) -> bytes | None:
        """What the receiver gets for this event; None when there is nothing new to send."""
        codec = codec_for(route.config.version)
        document: JSONObject
        if not codec.facts.pushes_whole_task:
            document = codec.encode_stream_event(event)
        else:
            try:
                task = await self._tasks.get(event.task_id)
            except A2AError:
                _log(logging.WARNING, route.config, "gone", "the task is no longer held", None)
                return None
            if task.version <= route.sent_version:
                self._metrics.push_delivered("coalesced")
                return None
            route.sent_version = task.version
            document = codec.encode_task(task)
        return jsonrpc.dump(document)

    def _backoff(self, attempts: int) -> float:
        ceiling = min(self._backoff_cap, self._backoff_base * 2.0 ** (attempts - 1))
        return ceiling / 2 + self._jitter.uniform(0, ceiling / 2)

    def _end(self, config: PushConfig, result: str, attempt: Attempt, attempts: int) -> None:
        self._metrics.push_delivered(result)
        level = logging.DEBUG if result == "delivered" else logging.WARNING
        _log(level, config, result, attempt.detail, attempts)

    def _forget(self, route: _Route) -> None:
        routes = self._routes.get(route.config.task_id, {})
        if routes.get(route.config.id) is route:
            del routes[route.config.id]
            if not routes:
                del self._routes[route.config.task_id]
                hearing = self._hearing.pop(route.config.task_id, None)
                if hearing is not None:
                    hearing.close()

    def _cancel(self, route: _Route) -> None:
        if route.left:
            self._metrics.push_delivered("canceled", route.left)
        route.scope.cancel()
        self._note_change()

    def _note_change(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    def _all_routes(self) -> Iterator[_Route]:
        for routes in self._routes.values():
            yield from routes.values()


def _headers(config: PushConfig) -> dict[str, str]:
    """The config's own headers: never the caller's token, never X-Subject-Token."""
    headers = {"Content-Type": codec_for(config.version).facts.push_content_type}
    if config.token is not None:
        headers[TOKEN_HEADER] = config.token
    authorization = config.authentication.header if config.authentication else None
    if authorization is not None:
        headers["Authorization"] = authorization
    return headers


def _log(level: int, config: PushConfig, result: str, detail: str, attempts: int | None) -> None:
    # The URL's host only: its path and query may hold a secret, as its token does.
    fields = {
        "event": "push",
        "task_id": config.task_id,
        "config_id": config.id,
        "host": urlsplit(config.url).hostname,
        "result": result,
        "attempts": attempts,
        "detail": detail,
    }
    logger.log(level, "push to %s %s: %s", fields["host"], result, detail, extra={"fields": fields})
