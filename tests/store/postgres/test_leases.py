"""Leases on running tasks, and waits for input, on the database's clock."""

from __future__ import annotations

from collections.abc import Callable

import trio

from n8n_a2a.core.changes import Change
from n8n_a2a.protocol.model import Message, Part, Role, TaskState
from n8n_a2a.store.fanout import utc_now as now
from n8n_a2a.store.postgres import Pool, PostgresTaskStore
from tests.support.tasks import submitted_task


async def test_a_lease_lapses_when_its_replica_stops_renewing(
    replicas: Callable[..., PostgresTaskStore],
) -> None:
    dying, alive = replicas(lease_seconds=1), replicas(lease_seconds=1)
    running, kept = submitted_task(), submitted_task()
    for task in (running, kept):
        await dying.create(task)
        assert await dying.move(task.id, 0, Change(TaskState.WORKING, now())) is not None
    await alive.create(finished := submitted_task())
    assert await alive.move(finished.id, 0, Change(TaskState.CANCELED, now())) is not None
    await trio.sleep(0.6)
    await dying.renew([kept.id])
    assert await alive.lapsed() == ()
    await trio.sleep(0.6)
    # Only the lease not renewed has run out; a finished task holds none.
    assert await alive.lapsed() == (running.id,)


async def test_a_wait_is_overdue_on_the_databases_clock_until_it_ends(postgres_url: str) -> None:
    pool = Pool(postgres_url)
    pool.problem = None
    store = PostgresTaskStore(pool, input_ttl=1)
    asked, answered = submitted_task(), submitted_task()
    for task in (asked, answered):
        await store.create(task)
        assert await store.move(task.id, 0, Change(TaskState.WORKING, now())) is not None
        assert await store.move(task.id, 1, Change(TaskState.INPUT_REQUIRED, now())) is not None
    turn = Message("m-3", Role.USER, (Part("flour"),), answered.id, "c-1")
    moved = await store.move(answered.id, 2, Change(TaskState.SUBMITTED, now(), history=(turn,)))
    assert moved is not None and moved.task.history[-1] == turn
    assert await store.overdue_waits() == ()
    await trio.sleep(1.2)
    assert await store.overdue_waits() == ((asked.id, 2),)  # the answered one waits no more
    await pool.close()
