"""The embedded default: tasks in this process's memory (their events: ../fanout.py).

Tasks are frozen; the store swaps in a new version on each move. It is bounded:
finished tasks leave after a time to live, or oldest first when it is full; a task
that is not finished (running, or waiting for input) never does. The messages each
caller sent (core/sent.py) are remembered beside their tasks, and leave with them. No method awaits
anything, so each runs in one step and a compare-and-set here is simply a comparison.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from ...core.changes import Change, change_events, moved_task
from ...core.errors import AlreadySent, AtCapacity
from ...core.lifecycle import check_move, is_terminal
from ...core.owners import Owner
from ...core.release import released_task, task_payload_bytes
from ...core.sent import Sent
from ...protocol.errors import A2AError
from ...protocol.model import ListTasks, Task, TaskPage
from ..api import Moved, Payloads
from ..fanout import Clock, utc_now
from ..pages import MAX_PAGE_BYTES, decode_cursor, encode_cursor, fit, list_order


class MemoryTaskStore:
    """Every task this process holds, by id; the payload bytes of the finished ones told
    to `payloads`, which may have their large parts released (`release_payloads`)."""

    def __init__(
        self,
        max_tasks: int = 10_000,
        ttl_seconds: float = 3600.0,
        clock: Clock = utc_now,
        *,
        max_page_bytes: int = MAX_PAGE_BYTES,
        payloads: Payloads | None = None,
    ) -> None:
        self._tasks: dict[str, Task] = {}
        # Finished task ids in the order they finished: eviction takes from the front.
        self._finished: dict[str, None] = {}
        self._max_tasks = max_tasks
        self._ttl = timedelta(seconds=ttl_seconds)
        self._clock = clock
        self._max_page_bytes = max_page_bytes
        self._payloads = payloads
        # By owner and messageId: the fingerprint and the task (a Sent made only when asked).
        self._sent: dict[tuple[Owner, str], tuple[str, str]] = {}
        self._sent_to: dict[str, list[tuple[Owner, str]]] = {}  # their keys, by task

    def __len__(self) -> int:
        return len(self._tasks)

    async def create(self, task: Task, sent: Sent | None = None) -> None:
        self._make_room()
        if sent is not None:
            self._remember(sent, task.id)
        self._tasks[task.id] = task

    async def sent(self, owner: Owner, message_id: str) -> Sent | None:
        found = self._sent.get((owner, message_id))
        return None if found is None else Sent(owner, message_id, *found)

    def _remember(self, sent: Sent, task_id: str) -> None:
        key = (sent.owner, sent.message_id)
        first = self._sent.get(key)
        if first is not None:
            raise AlreadySent(Sent(sent.owner, sent.message_id, *first))
        self._sent[key] = (sent.fingerprint, task_id)
        self._sent_to.setdefault(task_id, []).append(key)

    async def get(self, task_id: str) -> Task:
        try:
            return self._tasks[task_id]
        except KeyError:
            raise A2AError.task_not_found(task_id) from None

    async def move(self, task_id: str, version: int, change: Change) -> Moved | None:
        task = await self.get(task_id)
        if task.version != version:
            return None
        check_move(task_id, task.status.state, change.state)
        if change.sent is not None:
            self._remember(change.sent, task_id)
        events = change_events(task.id, task.context_id, task.version, task.relayed, change)
        moved = moved_task(task, change, events)
        self._tasks[task_id] = moved
        if is_terminal(change.state):
            self._finished[task_id] = None
            if self._payloads is not None:
                self._payloads.keep(task_id, task_payload_bytes(moved))
        return Moved(moved, events)

    def release_payloads(self, task_id: str) -> int:
        """Release a finished task's large parts (core/release.py's marker takes their
        place; its version stays: nobody hears of a finished task again); the bytes freed."""
        task = self._tasks.get(task_id)
        if task is None or task_id not in self._finished:
            return 0
        released = self._tasks[task_id] = released_task(task)
        return task_payload_bytes(task) - task_payload_bytes(released)

    async def list(self, query: ListTasks, owner: str | None) -> TaskPage:
        """A page of the owner's tasks, the most recently updated first (ties broken by id):
        at most `page_size` of them, and no more than fit in the page's bytes (at least one)."""
        found = [
            task
            for task in self._tasks.values()
            if task.owner == owner
            and (query.context_id is None or task.context_id == query.context_id)
            and (query.state is None or task.status.state is query.state)
            and (
                query.status_timestamp_after is None
                or task.status.timestamp >= query.status_timestamp_after
            )
        ]
        found.sort(key=list_order, reverse=True)
        start = 0
        if query.page_token:
            after = decode_cursor(query.page_token)
            start = next((i for i, t in enumerate(found) if list_order(t) < after), len(found))
        views = (
            replace(
                task.with_history_length(query.history_length),
                artifacts=task.artifacts if query.include_artifacts else (),
            )
            for task in found[start : start + query.page_size]
        )
        shown = fit(views, self._max_page_bytes)
        more = start + len(shown) < len(found)
        return TaskPage(
            tasks=tuple(shown),
            next_page_token=encode_cursor(shown[-1]) if more else "",
            page_size=query.page_size,
            total_size=len(found),
        )

    async def expire(self) -> None:
        self._expire()

    def _expire(self) -> None:
        expired_before = self._clock() - self._ttl
        while self._finished:
            oldest = next(iter(self._finished))
            if self._tasks[oldest].status.timestamp >= expired_before:
                break
            self._forget(oldest)

    def _make_room(self) -> None:
        """Drop finished tasks past their time to live, then the oldest while full."""
        self._expire()
        while len(self._tasks) >= self._max_tasks and self._finished:
            self._forget(next(iter(self._finished)))
        if len(self._tasks) >= self._max_tasks:
            raise AtCapacity(
                f"Server busy: all {self._max_tasks} tasks in the table are still running or "
                "waiting for input (ADAPTER_MAX_TASKS; a task waits at most ADAPTER_INPUT_TTL); "
                "retry later",
            )

    def _forget(self, task_id: str) -> None:
        del self._finished[task_id]
        del self._tasks[task_id]
        for key in self._sent_to.pop(task_id, ()):
            del self._sent[key]
        if self._payloads is not None:
            self._payloads.forget(task_id)
