"""One config's deliveries as a state machine: events in, actions out, no I/O.

A route is what the adapter owes one receiver: the updates waiting for it (queue.py),
the one being delivered, retries included, and the pace of a streamed answer's chunks.
The trio driver (deliverer.py) feeds it events and does what it answers:

- events: an update of the task heard (`Heard`), the task's end (`TaskEnded`), the
  driver free again or a wait run out (`Ready`), what a POST came to (`Posted`), the
  task as it stands for a v0.3 receiver (`TaskRead`), the driver's step broken by a bug
  (`Broke`), the config deleted or replaced (`Deleted`), the shutdown's grace over
  (`GraceOver`);
- actions: POST this body (`Post`), read the task (`ReadTask`), wait until a moment
  (`WaitUntil`), count an attempt (`Attempted`), say what became of updates (`Report`:
  delivered, or given up with the reason), and end the route (`Close`).

Only `Ready`, `Posted`, `TaskRead` and `Broke` (what the driver's own step brings) move
a delivery on, and each answers with at most one thing to await, last: the driver has
one thing under way at a time. `Heard` and `TaskEnded` only queue and mark (they come
from the task's events, which never wait); an empty answer to `Ready` means there is
nothing to do until the next of them.

The schedule: a POST that gets no answer, or one that asks to come back (408, 429,
5xx), is made again after a backoff with jitter, up to `RetrySchedule.max_attempts`
attempts; any other answer ends that update's delivery and the next one goes. A v1.0
receiver gets each event as a StreamResponse; a v0.3 one the Task as it stands when the
POST is made, and no update its last Task already showed. Chunks of a streamed answer
go at most one per CHUNK_INTERVAL: those heard meanwhile wait in the queue, merged into
one appended text; the task's end follows the last chunk at once.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import assert_never

from ..core.lifecycle import is_terminal
from ..protocol import writing
from ..protocol.model import StatusUpdate, Task, TaskEvent
from ..protocol.push import PushConfig
from ..protocol.versions import codec_for
from .attempts import Answer, Attempt, RetrySchedule
from .queue import DEFAULT_LIMIT, Pending, UpdateQueue, is_chunk

TOKEN_HEADER = "X-A2A-Notification-Token"
#: The least time between two chunks of a streamed answer sent to one receiver, seconds.
CHUNK_INTERVAL = 0.25


# Events: what the driver tells a route.


@dataclass(frozen=True, slots=True)
class Heard:
    """An update of the task, heard at `at`."""

    event: TaskEvent
    at: float


@dataclass(frozen=True, slots=True)
class TaskEnded:
    """No update will come any more: the route ends once the queue is delivered."""


@dataclass(frozen=True, slots=True)
class Ready:
    """The driver is free at `at`: woken by an update or the task's end, or a wait ran out."""

    at: float


@dataclass(frozen=True, slots=True)
class Posted:
    """What the POST asked for came to, at `at`."""

    attempt: Attempt
    at: float


@dataclass(frozen=True, slots=True)
class TaskRead:
    """The task as it stands at `at` (v0.3 receivers); None when the store no longer holds it."""

    task: Task | None
    at: float


@dataclass(frozen=True, slots=True)
class Broke:
    """The driver's step raised (a bug): the update under way is lost, the next one goes."""

    at: float


@dataclass(frozen=True, slots=True)
class Deleted:
    """The config is deleted or replaced: nothing more goes to it, not even what is queued."""


@dataclass(frozen=True, slots=True)
class GraceOver:
    """The shutdown's grace is over: what is left is not delivered."""


Event = Heard | TaskEnded | Ready | Posted | TaskRead | Broke | Deleted | GraceOver


# Actions: what a route asks of the driver.


@dataclass(frozen=True, slots=True)
class Post:
    """POST this body to the receiver, then say what came of it (`Posted`)."""

    url: str
    body: bytes
    headers: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class ReadTask:
    """Read the task as it stands, then hand it over (`TaskRead`)."""

    task_id: str


@dataclass(frozen=True, slots=True)
class WaitUntil:
    """Wait until `at` (the driver's clock), then say so (`Ready`)."""

    at: float


@dataclass(frozen=True, slots=True)
class Attempted:
    """One attempt was made (counted; a blocked POST is none)."""


class Result(enum.Enum):
    """What became of an update for one config (metrics.PUSH_RESULTS, and `gone`)."""

    DELIVERED = "delivered"
    REJECTED = "rejected"
    FAILED = "failed"
    BLOCKED = "blocked"
    COALESCED = "coalesced"
    CANCELED = "canceled"
    UNDELIVERED = "undelivered"
    GONE = "gone"  # a v0.3 receiver's task is no longer held: logged, not counted

    @property
    def counted(self) -> bool:
        return self is not Result.GONE


@dataclass(frozen=True, slots=True)
class Report:
    """What became of `updates` updates: counted by result and, when `logged`, a log line."""

    result: Result
    detail: str = ""
    attempts: int | None = None
    updates: int = 1
    latency: float | None = None  # delivered: seconds since the update was heard
    logged: bool = True


@dataclass(frozen=True, slots=True)
class Close:
    """The route is over. `task_over`: its task ended and every update went (the config
    store may let the task's configs go once no route of the task is left)."""

    task_over: bool


Action = Post | ReadTask | WaitUntil | Attempted | Report | Close


class _Phase(enum.Enum):
    IDLE = "waiting for an update"
    PACING = "holding a chunk until its receiver may have one"
    READING = "waiting for the task as it stands"
    POSTING = "waiting for a POST's answer"
    BACKING_OFF = "waiting to POST again"
    CLOSED = "over"


class Route:
    """The deliveries to one config, in order, at least once."""

    def __init__(
        self,
        config: PushConfig,
        *,
        retries: RetrySchedule | None = None,
        queue_limit: int = DEFAULT_LIMIT,
        jitter: Callable[[], float],
    ) -> None:
        """`jitter` draws a number in [0, 1) for each backoff (random.Random().random)."""
        self.config = config
        self._retries = retries or RetrySchedule()
        self._jitter = jitter
        self._queue = UpdateQueue(queue_limit)
        self._phase = _Phase.IDLE
        self._closing = False  # no update will come: close once the queue is empty
        self._busy: Pending | None = None  # being delivered, retries included
        self._body = b""  # the busy update's, once made
        self._attempts = 0  # of the busy update
        self._wait_until = -math.inf  # PACING, BACKING_OFF: until when
        self._next_chunk_at = -math.inf
        self._sent_version = 0  # v0.3: the task's version the receiver was last sent
        self._whole_task = codec_for(config.version).facts.pushes_whole_task
        self._headers = headers(config)

    @property
    def left(self) -> int:
        """Updates not delivered yet, the one under way included."""
        return len(self._queue) + (self._busy is not None)

    def handle(self, event: Event) -> list[Action]:
        """Take one event; what the driver is to do, in order."""
        if self._phase is _Phase.CLOSED:
            return []
        match event:
            case Heard():
                return self._heard(event)
            case TaskEnded():
                self._closing = True
                return []
            case Ready(at=at):
                return self._ready(at)
            case Posted():
                return self._posted(event)
            case TaskRead():
                return self._task_read(event)
            case Broke(at=at):
                return self._broke(at)
            case Deleted() | GraceOver():
                return self._close_early(event)
            case _:
                assert_never(event)

    def _heard(self, heard: Heard) -> list[Action]:
        pushed_out = self._queue.put(Pending(heard.event, heard.at))
        update = heard.event
        if isinstance(update, StatusUpdate) and is_terminal(update.status.state):
            self._closing = True
        if not pushed_out:
            return []
        return [Report(Result.COALESCED, updates=len(pushed_out), logged=False)]

    def _ready(self, at: float) -> list[Action]:
        if self._phase is _Phase.IDLE:
            return self._next(at)
        if self._phase not in (_Phase.PACING, _Phase.BACKING_OFF):
            return []  # an answer is awaited: it moves the route on
        if at < self._wait_until:
            return [WaitUntil(self._wait_until)]
        if self._phase is _Phase.PACING:
            return self._next(at)
        self._phase = _Phase.POSTING
        return [self._post()]

    def _next(self, at: float) -> list[Action]:
        """The driver is free: start on the oldest update, or close, or wait for one."""
        head = self._queue.peek()
        if head is None:
            if self._closing:
                self._phase = _Phase.CLOSED
                return [Close(task_over=True)]
            self._phase = _Phase.IDLE
            return []
        if is_chunk(head.event):
            # A chunk waits until its receiver may have one: later ones merge into it.
            if at < self._next_chunk_at:
                self._phase, self._wait_until = _Phase.PACING, self._next_chunk_at
                return [WaitUntil(self._next_chunk_at)]
            self._next_chunk_at = at + CHUNK_INTERVAL
        self._busy, self._attempts = self._queue.take(), 0
        assert self._busy is not None
        if self._whole_task:
            self._phase = _Phase.READING
            return [ReadTask(self.config.task_id)]
        self._body = writing.dump(codec_for(self.config.version).encode_stream_event(head.event))
        self._phase = _Phase.POSTING
        return [self._post()]

    def _task_read(self, read: TaskRead) -> list[Action]:
        if self._phase is not _Phase.READING:
            return []
        task = read.task
        if task is None:
            return self._done(Report(Result.GONE, "the task is no longer held"), read.at)
        if task.version <= self._sent_version:
            return self._done(Report(Result.COALESCED, logged=False), read.at)
        self._sent_version = task.version
        self._body = writing.dump(codec_for(self.config.version).encode_task(task))
        self._phase = _Phase.POSTING
        return [self._post()]

    def _posted(self, posted: Posted) -> list[Action]:
        if self._phase is not _Phase.POSTING or self._busy is None:
            return []
        attempt, at = posted.attempt, posted.at
        if attempt.answer is Answer.BLOCKED:  # never attempted
            return self._done(self._report(Result.BLOCKED, attempt), at)
        self._attempts += 1
        if attempt.answer is Answer.DELIVERED:
            latency = at - self._busy.heard_at
            report = Report(Result.DELIVERED, attempt.detail, self._attempts, latency=latency)
            return [Attempted(), *self._done(report, at)]
        if attempt.answer is Answer.REJECTED:
            return [Attempted(), *self._done(self._report(Result.REJECTED, attempt), at)]
        if self._attempts >= self._retries.max_attempts:
            return [Attempted(), *self._done(self._report(Result.FAILED, attempt), at)]
        self._phase = _Phase.BACKING_OFF
        self._wait_until = at + self._retries.delay(self._attempts, self._jitter())
        return [Attempted(), WaitUntil(self._wait_until)]

    def _broke(self, at: float) -> list[Action]:
        if self._busy is None:
            return self._next(at)
        # The driver logged the error itself, with its traceback.
        return self._done(Report(Result.FAILED, "the delivery broke", logged=False), at)

    def _close_early(self, event: Deleted | GraceOver) -> list[Action]:
        left, self._phase = self.left, _Phase.CLOSED
        if not left:
            return [Close(task_over=False)]
        if isinstance(event, Deleted):
            report = Report(Result.CANCELED, updates=left, logged=False)
        else:
            detail = f"{left} update(s) not delivered before shutdown"
            report = Report(Result.UNDELIVERED, detail, updates=left)
        return [report, Close(task_over=False)]

    def _done(self, report: Report, at: float) -> list[Action]:
        """The busy update's delivery is over: on with the next one."""
        self._busy, self._body = None, b""
        return [report, *self._next(at)]

    def _report(self, result: Result, attempt: Attempt) -> Report:
        return Report(result, attempt.detail, self._attempts)

    def _post(self) -> Post:
        return Post(self.config.url, self._body, self._headers)


def headers(config: PushConfig) -> dict[str, str]:
    """The config's own headers: never the caller's token, never X-Subject-Token."""
    sent = {"Content-Type": codec_for(config.version).facts.push_content_type}
    if config.token is not None:
        sent[TOKEN_HEADER] = config.token
    authorization = config.authentication.header if config.authentication else None
    if authorization is not None:
        sent["Authorization"] = authorization
    return sent
