"""The store contract's messages sent (core/sent.py), run against every TaskStore: each
remembered with its task's making or move, at most once per owner and messageId, even
by two at once, and gone with the task."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
import trio

from n8n_a2a.core.changes import Change
from n8n_a2a.core.errors import AlreadySent
from n8n_a2a.core.sent import Sent
from n8n_a2a.protocol.errors import A2AError
from n8n_a2a.protocol.model import Message, Part, Role, Task, TaskState
from tests.support.store_tasks import StoreFactory, Ticking, answer, new_task, waiting


def sent(message_id: str, owner: str | None = None, fingerprint: str = "f-1") -> Sent:
    return Sent(owner, message_id, fingerprint)


def next_turn(asked: Task, now: datetime) -> Change:
    """The caller's answer to `asked`'s question, m-3, remembered with the move."""
    reply = Message("m-3", Role.USER, (Part("flour"),), asked.id, asked.context_id)
    return Change(TaskState.SUBMITTED, now, history=(reply,), sent=sent("m-3"))


async def test_a_message_is_found_by_its_owner_and_id_alone(make_store: StoreFactory) -> None:
    clock = Ticking()
    store = make_store(clock=clock)
    mine = new_task(clock, owner="o-1")
    await store.create(mine, sent("m-a", "o-1"))
    assert await store.sent("o-1", "m-a") == Sent("o-1", "m-a", "f-1", mine.id)
    assert await store.sent(None, "m-a") is None  # the anonymous caller is another
    assert await store.sent("o-2", "m-a") is None
    assert await store.sent("o-1", "m-b") is None
    anonymous = new_task(clock)
    await store.create(anonymous, sent("m-a"))  # the same id, another owner: its own
    assert await store.sent(None, "m-a") == Sent(None, "m-a", "f-1", anonymous.id)


async def test_a_message_sent_again_makes_no_task(make_store: StoreFactory) -> None:
    clock = Ticking()
    store = make_store(clock=clock)
    first = new_task(clock)
    await store.create(first, sent("m-a", fingerprint="f-1"))
    second = new_task(clock)
    with pytest.raises(AlreadySent) as taken:
        await store.create(second, sent("m-a", fingerprint="f-2"))
    assert taken.value.first == Sent(None, "m-a", "f-1", first.id)
    with pytest.raises(A2AError):
        await store.get(second.id)
    await store.create(second)  # without a message to remember, it is any task


async def test_a_next_turns_message_is_remembered_with_its_move(make_store: StoreFactory) -> None:
    clock = Ticking()
    store = make_store(clock=clock)
    asked = await waiting(store, clock)
    turn = next_turn(asked, clock())
    moved = await store.move(asked.id, asked.version, turn)
    assert moved is not None
    assert await store.sent(None, "m-3") == Sent(None, "m-3", "f-1", asked.id)


async def test_a_move_whose_message_was_sent_before_moves_nothing(
    make_store: StoreFactory,
) -> None:
    clock = Ticking()
    store = make_store(clock=clock)
    other = new_task(clock)
    await store.create(other, sent("m-3"))
    asked = await waiting(store, clock)
    turn = next_turn(asked, clock())
    with pytest.raises(AlreadySent) as taken:
        await store.move(asked.id, asked.version, turn)
    assert taken.value.first.task_id == other.id
    assert await store.get(asked.id) == asked  # no move, no event


async def test_a_move_that_lost_remembers_nothing(make_store: StoreFactory) -> None:
    clock = Ticking()
    store = make_store(clock=clock)
    asked = await waiting(store, clock)
    turn = next_turn(asked, clock())
    assert await store.move(asked.id, asked.version - 1, turn) is None
    assert await store.sent(None, "m-3") is None


async def test_two_sendings_at_once_make_one_task(make_store: StoreFactory) -> None:
    """Two requests (two replicas, on PostgreSQL) taking one message in the same moment:
    one task is made, the other is told which."""
    clock = Ticking()
    store = make_store(clock=clock)
    tasks = [new_task(clock) for _ in range(8)]
    made: list[str] = []
    taken: list[str] = []

    async def make(index: int) -> None:
        try:
            await store.create(tasks[index], sent("m-race"))
            made.append(tasks[index].id)
        except AlreadySent as refused:
            taken.append(refused.first.task_id)

    async with trio.open_nursery() as nursery:
        for index in range(len(tasks)):
            nursery.start_soon(make, index)
    assert len(made) == 1
    assert taken == made * (len(tasks) - 1)


async def test_messages_leave_with_their_task(make_store: StoreFactory) -> None:
    clock = Ticking()
    store = make_store(ttl_seconds=10, clock=clock)
    task = new_task(clock)
    await store.create(task, sent("m-gone"))
    working = await store.move(task.id, 0, Change(TaskState.WORKING, clock()))
    assert working is not None
    assert await store.move(task.id, 1, answer(clock)) is not None
    clock.now += timedelta(seconds=30)
    await store.expire()
    assert await store.sent(None, "m-gone") is None
    await store.create(new_task(clock), sent("m-gone"))  # its id is free again
