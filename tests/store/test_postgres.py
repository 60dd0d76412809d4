"""What the PostgreSQL store adds to the contract: the schema, events across replicas,
leases, and a database that goes away and comes back."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
import trio

from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import (
    Message,
    Part,
    Role,
    StatusUpdate,
    Task,
    TaskEvent,
    TaskState,
    TaskStatus,
)
from n8n_a2a.store import Change, StoreUnavailable
from n8n_a2a.store.postgres import Pool, PostgresTaskEvents, PostgresTaskStore, open_postgres
from n8n_a2a.store.schema import LATEST, migrate
from tests.postgres_server import PostgresServer

_serial = iter(range(1_000_000))


def new_task(text: str = "hi", context_id: str = "c-1") -> Task:
    task_id = f"p-{next(_serial)}"
    user = Message("m-1", Role.USER, (Part(text),), task_id, context_id)
    return Task(task_id, context_id, TaskStatus(TaskState.SUBMITTED, datetime.now(UTC)), (user,))


async def ready(store: PostgresTaskStore) -> None:
    with trio.fail_after(10):
        while store.pool.problem is not None:  # noqa: ASYNC110 - the pool has no event
            await trio.sleep(0.05)


def now() -> datetime:
    return datetime.now(UTC)


@pytest.fixture
async def replicas(postgres_url: str) -> AsyncIterator[Callable[..., PostgresTaskStore]]:
    """Stores as two replicas would have them: each its own pool on one database."""
    pools: list[Pool] = []

    def replica(lease_seconds: float = 15.0) -> PostgresTaskStore:
        pool = Pool(postgres_url)
        pool.problem = None  # the fixture migrated the schema
        pools.append(pool)
        return PostgresTaskStore(pool, lease_seconds=lease_seconds)

    yield replica
    for pool in pools:
        await pool.close()


def test_the_schema_migrates_once_when_replicas_start_together(postgres: PostgresServer) -> None:
    url = postgres.create_database()
    versions: list[int] = []

    def start() -> None:
        with psycopg.connect(url, autocommit=True) as connection:
            versions.append(migrate(connection))

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert versions == [LATEST] * 4
    with psycopg.connect(url) as connection:
        applied = connection.execute("SELECT version FROM a2a_schema_version").fetchall()
        assert applied == [(version,) for version in range(1, LATEST + 1)]
        assert migrate(connection) == LATEST  # and again, at the next start


async def test_a_move_on_one_replica_reaches_listeners_on_another(
    replicas: Callable[..., PostgresTaskStore],
) -> None:
    here, there = replicas(), replicas()
    heard: list[TaskEvent] = []
    arrived = trio.Event()

    def hear(event: TaskEvent) -> None:
        heard.append(event)
        if isinstance(event, StatusUpdate) and event.final:
            arrived.set()

    task = new_task()
    await here.create(task)
    events = PostgresTaskEvents(there)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(events.listen)
        with events.subscribe(task.id, hear):
            await trio.sleep(0.2)  # LISTEN is in place
            working = await here.move(task.id, 0, Change(TaskState.WORKING, now()))
            assert working is not None
            reply = Message("m-2", Role.AGENT, (Part("done"),))
            done = await here.move(task.id, 1, Change(TaskState.CANCELED, now(), reply))
            assert done is not None
            with trio.fail_after(5):
                await arrived.wait()
        nursery.cancel_scope.cancel()
    assert heard == [*working.events, *done.events]  # each once, in order


async def test_events_published_here_are_not_handed_twice(
    replicas: Callable[..., PostgresTaskStore],
) -> None:
    store = replicas()
    events = PostgresTaskEvents(store)
    heard: list[TaskEvent] = []
    everything: list[TaskEvent] = []
    task = new_task()
    await store.create(task)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(events.listen)
        with events.subscribe(task.id, heard.append), events.subscribe_all(everything.append):
            await trio.sleep(0.2)
            moved = await store.move(task.id, 0, Change(TaskState.WORKING, now()))
            assert moved is not None
            for event in moved.events:
                events.publish(event)
            await trio.sleep(0.3)  # the NOTIFY of that move comes back meanwhile
        nursery.cancel_scope.cancel()
    assert heard == list(moved.events)
    assert everything == list(moved.events)


async def test_text_postgres_cannot_hold_in_a_column_is_invalid_params(
    replicas: Callable[..., PostgresTaskStore],
) -> None:
    store = replicas()
    nul = new_task("a NUL \x00 in the text is kept")
    await store.create(nul)
    assert await store.get(nul.id) == nul
    with pytest.raises(A2AError) as raised:
        await store.create(new_task(context_id="c-\x00"))
    assert raised.value.code is ErrorCode.INVALID_PARAMS


async def test_a_lease_lapses_when_its_replica_stops_renewing(
    replicas: Callable[..., PostgresTaskStore],
) -> None:
    dying, alive = replicas(lease_seconds=1), replicas(lease_seconds=1)
    running, kept = new_task(), new_task()
    for task in (running, kept):
        await dying.create(task)
        assert await dying.move(task.id, 0, Change(TaskState.WORKING, now())) is not None
    await alive.create(finished := new_task())
    assert await alive.move(finished.id, 0, Change(TaskState.CANCELED, now())) is not None
    await trio.sleep(0.6)
    await dying.renew([kept.id])
    assert await alive.lapsed() == ()
    await trio.sleep(0.6)
    # Only the lease not renewed has run out; a finished task holds none.
    assert await alive.lapsed() == (running.id,)


async def test_a_database_that_goes_away_is_unavailable_then_back(
    postgres: PostgresServer, postgres_url: str
) -> None:
    async with open_postgres(postgres_url) as (store, _):
        await ready(store)
        task = new_task()
        await store.create(task)
        postgres.stop()
        try:
            with trio.fail_after(5), pytest.raises(StoreUnavailable) as raised:
                await store.get(task.id)
            assert raised.value.code is ErrorCode.SERVER_BUSY
            assert "PostgreSQL" in raised.value.message
            with trio.fail_after(5), pytest.raises(StoreUnavailable):
                await store.create(new_task())  # refused at once, nothing written
        finally:
            postgres.start()
        with trio.fail_after(10):
            while True:
                try:
                    assert await store.get(task.id) == task
                    break
                except StoreUnavailable:
                    await trio.sleep(0.1)


async def test_a_store_that_never_reached_its_database_says_why(postgres: PostgresServer) -> None:
    url = f"postgresql://postgres@127.0.0.1:{postgres.port}/no_such_database"
    async with open_postgres(url) as (store, _):
        await trio.sleep(0.5)
        assert store.pool.problem is not None
        assert "no_such_database" in store.pool.problem
        with pytest.raises(StoreUnavailable) as raised:
            await store.get("t-1")
        assert "not ready" in raised.value.message


async def test_a_refused_operation_keeps_its_connection(postgres_url: str) -> None:
    pool = Pool(postgres_url, size=1)
    await pool.prepare()
    store = PostgresTaskStore(pool)

    def backend(connection: psycopg.Connection[Any]) -> int:
        row = connection.execute("SELECT pg_backend_pid() AS pid").fetchone()
        assert row is not None
        return int(row["pid"])

    first = await pool.run(backend)
    with pytest.raises(A2AError):
        await store.move("no-such-task", 0, Change(TaskState.WORKING, now()))
    with pytest.raises(A2AError):
        await store.create(new_task(context_id="c-\x00"))
    assert await pool.run(backend) == first  # the same connection, not a new one
    await pool.close()


async def test_a_wait_is_overdue_on_the_databases_clock_until_it_ends(postgres_url: str) -> None:
    pool = Pool(postgres_url)
    pool.problem = None
    store = PostgresTaskStore(pool, input_ttl=1)
    asked, answered = new_task(), new_task()
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
