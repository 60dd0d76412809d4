"""The storage seam, whole: what the executor, the push deliverer and the reaper work
through, and what a backend (memory/, postgres/) opens for one process.

A `TaskStore` holds tasks and moves them compare-and-set on their version, so that two
movers (a cancel and a verdict, or two processes) never both move one task. A
`TaskEvents` carries every change, one frozen event each, to whoever listens: a blocking
send waiting for its task's end, a stream, the executor cutting a call that was
canceled. A `PushConfigStore` holds the push configs beside the tasks, and `Leases` keep
a shared store's running tasks to the replica that runs them. The store knows tasks, not
the workflow contract: no Verdict here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from dataclasses import dataclass, field
from typing import Protocol

from ..core.changes import Change
from ..core.owners import Owner
from ..core.sent import Sent
from ..protocol.model import ArtifactUpdate, ListTasks, Task, TaskEvent, TaskPage
from ..protocol.push import PushConfig

Listener = Callable[[TaskEvent], None]


@dataclass(frozen=True, slots=True)
class Moved:
    """A change that took: the task as it is now, and the events it made, in order."""

    task: Task
    events: tuple[TaskEvent, ...]


class TaskStore(Protocol):
    """Tasks by id. Every method may be called from any task of the process."""

    async def create(self, task: Task, sent: Sent | None = None) -> None:
        """Hold a new task (version 0); AtCapacity when there is no room. `sent`: the
        message that made it, remembered with it (for as long as the task is kept); if
        its owner sent that messageId before, AlreadySent, and nothing is held."""

    async def sent(self, owner: Owner, message_id: str) -> Sent | None:
        """The message `owner` sent under `message_id`, while its task is kept."""

    async def get(self, task_id: str) -> Task:
        """The task; A2AError TASK_NOT_FOUND for an id the store does not hold."""

    async def list(self, query: ListTasks, owner: str | None) -> TaskPage:
        """A page of the owner's tasks (`Task.owner`), the most recently updated first, of at
        most `query.page_size` tasks and about pages.MAX_PAGE_BYTES (`encoded_size`), but
        never empty while one is left; nothing of another owner's tasks shows, not even in
        the counts."""

    async def move(self, task_id: str, version: int, change: Change) -> Moved | None:
        """Apply `change` if the task is still at `version`; None if it has moved since.
        The change's `sent` message is remembered with the move, as `create`'s (AlreadySent:
        nothing moved).

        The lifecycle must allow the move (IllegalTransition otherwise: a bug)."""

    async def expire(self) -> None:
        """Drop finished tasks past their time to live."""


class TaskEvents(Protocol):
    """Publishes each task event to the listeners of its task, in the order published.

    Listeners are called synchronously, in the publisher's step: they must not block
    (set an event, put into a bounded buffer, cancel a scope) and must not raise. With
    several processes on one store, a task's listeners hear its events wherever they were
    made; `subscribe_all` hears those published in its own process only, so that each
    event reaches exactly one process's (a delivery that must happen once).
    """

    def publish(self, event: TaskEvent) -> None: ...

    def relay(self, event: ArtifactUpdate) -> None:
        """A chunk of an artifact under way, which no move made: to this process's
        listeners of its task at once, never recorded nor numbered, so a later move's
        event of the same number still reaches them. Other processes never hear it: a
        row and a NOTIFY for each chunk would cost the database a write per token."""

    async def settled(self) -> None:
        """Until the chunks relayed so far have gone to the other processes (at once with
        none): a move that ends their turn comes after them everywhere."""

    async def relayed_so_far(self, task_id: str) -> ArtifactUpdate | None:
        """The chunks of the task's answer under way relayed so far, from any process, as
        one chunk numbered as the last (None without any): what a subscriber who joins
        mid-answer begins with."""

    def subscribe(self, task_id: str, listener: Listener) -> AbstractContextManager[None]:
        """Hear every event of one task from now on, from any process, until the context
        exits."""

    def subscribe_all(self, listener: Listener) -> AbstractContextManager[None]:
        """Hear every event this process publishes from now on, until the context exits."""


class PushConfigStore(Protocol):
    """Push configs by task and id. Every method may be called from any task of the process."""

    async def put(self, config: PushConfig, limit: int) -> bool:
        """Hold the config, replacing the task's config of the same id; False (and nothing
        held) when the task has `limit` configs already and this id is new."""

    async def get(self, task_id: str, config_id: str) -> PushConfig | None: ...

    async def list(self, task_id: str) -> tuple[PushConfig, ...]:
        """The task's configs, in the order they were first made."""

    async def delete(self, task_id: str, config_id: str) -> bool:
        """Forget the config; False if there was none (a delete is idempotent)."""

    async def task_ended(self, task_id: str) -> None:
        """The task has ended and its updates are delivered: its configs may go once a
        finished task would leave the TaskStore."""


class Leases(Protocol):
    """What a store that several replicas share offers to keep their leases
    (executor/reaper.py drives them)."""

    async def renew(self, task_ids: Sequence[str]) -> None:
        """Extend this replica's leases on these tasks."""

    async def lapsed(self) -> tuple[str, ...]:
        """Unfinished tasks whose lease has run out."""

    async def expire(self) -> None:
        """Drop finished tasks past their time to live."""

    async def overdue_waits(self) -> tuple[tuple[str, int], ...]:
        """Tasks waiting for input past their time, with their versions."""


class Payloads(Protocol):
    """Where the payload bytes of the finished tasks a store holds in this process are
    counted: told when a task finishes and when it leaves."""

    def keep(self, task_id: str, size: int) -> None: ...

    def forget(self, task_id: str) -> None: ...


class Keeper(Protocol):
    """A store whose finished tasks' large parts can be released to make room."""

    def release_payloads(self, task_id: str) -> int:
        """Release the finished task's large parts; the payload bytes that freed."""
        ...


class PayloadBudget(Payloads, Protocol):
    """ADAPTER_MEMORY_BUDGET as a backend sees it (budget/room.py's MemoryBudget): it
    counts the payloads a store holds in this process, and is given the store that can
    release them."""

    def keep_in(self, keeper: Keeper) -> None: ...


def _ready() -> str | None:
    return None


def _nothing() -> None:
    pass


def _none_held() -> int:
    return 0


@dataclass(frozen=True, slots=True)
class StoreConfig:
    """What a backend opens its stores with: ADAPTER_STORE_URL (None: in memory), the
    bounds of tasks, and the process's parts a store may count in."""

    url: str | None = field(default=None, repr=False)  # it may hold a password
    max_tasks: int = 10_000
    task_ttl: float = 3600.0
    lease_seconds: float = 15.0
    input_ttl: float = 86400.0
    #: Where a store in this process's memory counts its finished tasks' payloads.
    budget: PayloadBudget | None = None
    #: Called for each notification a shared store hears that is none of ours.
    ignored: Callable[[], None] = _nothing


@dataclass(frozen=True, slots=True)
class Stores:
    """What a backend opens: where tasks and push configs live, how their events are
    heard, the leases (a shared store only), why the store is not ready (None: it is),
    and how many tasks it holds in this process's memory (n8n_a2a_tasks_in_table; none
    for a store out of the process)."""

    tasks: TaskStore
    events: TaskEvents
    configs: PushConfigStore
    leases: Leases | None = None
    problem: Callable[[], str | None] = _ready
    held: Callable[[], int] = _none_held


#: A backend: its stores, opened with a StoreConfig for as long as the context lasts.
Backend = Callable[[StoreConfig], AbstractAsyncContextManager[Stores]]
