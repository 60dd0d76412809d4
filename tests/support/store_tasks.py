"""Tasks in a store as the store tests make and move them: a ticking clock, a new task, one
finished, one waiting for input."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from n8n_a2a.core.changes import Change
from n8n_a2a.protocol.model import Artifact, Message, Part, Role, Task, TaskState, TaskStatus
from n8n_a2a.store import TaskStore

#: Makes a store of the kind under test (tests/store/conftest.py's `make_store`).
StoreFactory = Callable[..., TaskStore]


class Ticking:
    """A clock that moves one second each time it is read."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


_serial = iter(range(1_000_000))


def new_task(
    clock: Callable[[], datetime], context_id: str = "c-1", owner: str | None = None
) -> Task:
    task_id = f"t-{next(_serial)}"
    user = Message("m-1", Role.USER, (Part("hi"),), task_id, context_id)
    status = TaskStatus(TaskState.SUBMITTED, clock())
    return Task(task_id, context_id, status, (user,), owner=owner)


def answer(clock: Callable[[], datetime], text: str = "12 pallets") -> Change:
    reply = Message("m-2", Role.AGENT, (Part(text),))
    artifact = Artifact("a-1", "answer", (Part(text),))
    return Change(
        TaskState.COMPLETED, clock(), reply, (artifact,), metadata={"outcome": "ANSWERED"}
    )


async def finished(store: TaskStore, clock: Callable[[], datetime], text: str = "x") -> str:
    task = new_task(clock)
    await store.create(task)
    working = await store.move(task.id, 0, Change(TaskState.WORKING, clock()))
    assert working is not None
    assert await store.move(task.id, working.task.version, answer(clock, text)) is not None
    return task.id


async def waiting(store: TaskStore, clock: Callable[[], datetime]) -> Task:
    """A task whose workflow asked a question: in input-required."""
    task = new_task(clock)
    await store.create(task)
    working = await store.move(task.id, 0, Change(TaskState.WORKING, clock()))
    assert working is not None
    question = Message("m-q", Role.AGENT, (Part("Which item?"),))
    asked = await store.move(
        task.id, working.task.version, Change(TaskState.INPUT_REQUIRED, clock(), question)
    )
    assert asked is not None
    return asked.task
