"""The store contract's resume target (core/resume.py), run against every TaskStore: set by
the move that ends a turn, kept by every other move (the next turn's call reads it), and
replaced by the next turn's end; never in the task's repr."""

from __future__ import annotations

from n8n_a2a.core.changes import Change
from n8n_a2a.protocol.model import Message, Part, Role, TaskState
from tests.support.store_tasks import StoreFactory, Ticking, answer, new_task

WAITING = "/webhook-waiting/231?signature=5ecret"


async def test_a_turns_end_says_where_the_next_goes_and_other_moves_keep_it(
    make_store: StoreFactory,
) -> None:
    clock = Ticking()
    store = make_store(clock=clock)
    task = new_task(clock)
    await store.create(task)
    assert (await store.get(task.id)).resume is None
    moved = await store.move(task.id, 0, Change(TaskState.WORKING, clock()))
    assert moved is not None
    question = Message("m-2", Role.AGENT, (Part("Which item?"),))
    asked = Change(TaskState.INPUT_REQUIRED, clock(), question, resume=WAITING)
    moved = await store.move(task.id, 1, asked)
    assert moved is not None and moved.task.resume == WAITING
    assert "5ecret" not in repr(moved.task) and "5ecret" not in repr(asked)
    reply = Message("m-3", Role.USER, (Part("flour"),), task.id, task.context_id)
    for version, change in (
        (2, Change(TaskState.SUBMITTED, clock(), history=(reply,))),
        (3, Change(TaskState.WORKING, clock())),
    ):
        moved = await store.move(task.id, version, change)
        assert moved is not None and moved.task.resume == WAITING
    assert (await store.get(task.id)).resume == WAITING
    moved = await store.move(task.id, 4, answer(clock))
    assert moved is not None and moved.task.resume is None
    assert (await store.get(task.id)).resume is None
