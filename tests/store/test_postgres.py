"""What the PostgreSQL store adds to the contract: the schema, events across replicas,
leases, and a database that goes away and comes back."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
import trio

from n8n_a2a.metrics import Metrics
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
from n8n_a2a.protocol.params import MAX_ID_CHARS
from n8n_a2a.store import Change, StoreUnavailable
from n8n_a2a.store.postgres import (
    CHANNEL,
    Pool,
    PostgresTaskEvents,
    PostgresTaskStore,
    open_postgres,
    parse_notification,
)
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
        assert 'database "<dbname>" does not exist' in store.pool.problem
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


@pytest.mark.parametrize(
    ("payload", "notified"),
    [
        (b"p-7 3", ("p-7", 3)),
        (b"an id with spaces 12", ("an id with spaces", 12)),
        (b"p-7 2147483647", ("p-7", 2147483647)),
        (b"p" * MAX_ID_CHARS + b" 3", ("p" * MAX_ID_CHARS, 3)),
        (b"not-a-number", None),
        (b"", None),
        (b" 3", None),
        (b"p-7 -1", None),
        (b"p-7 +1", None),
        (b"p-7 2147483648", None),  # past what a2a_task_events.sequence holds
        (b"p-7 " + b"9" * 5000, None),
        ("p-7 \u0661".encode(), None),  # a digit, of another script
        (b"p-\xff 3", None),  # not UTF-8
        (b"p" * (MAX_ID_CHARS + 1) + b" 3", None),
    ],
)
def test_a_notification_carries_a_task_id_and_an_event_number(
    payload: bytes, notified: tuple[str, int] | None
) -> None:
    assert parse_notification(payload) == notified


async def test_a_notification_not_of_ours_is_counted_and_the_listener_hears_on(
    replicas: Callable[..., PostgresTaskStore], postgres_url: str
) -> None:
    here, there = replicas(), replicas()
    metrics = Metrics()
    events = PostgresTaskEvents(there, ignored=metrics.store_notification_ignored)
    task = new_task()
    await here.create(task)
    # NOTIFY needs no privilege: anyone who can connect may send these, also naming a task
    # listened to.
    strays = ["", f"{'x' * 5000} 1", f"{task.id} -1", f"{task.id} 2147483648", f"{task.id} \u0661"]

    def send() -> None:
        with psycopg.connect(postgres_url, autocommit=True) as anyone:
            anyone.execute(f"NOTIFY {CHANNEL}, 'not-a-number'")
            for payload in strays:
                anyone.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))

    heard: list[TaskEvent] = []
    arrived = trio.Event()

    def hear(event: TaskEvent) -> None:
        heard.append(event)
        arrived.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(events.listen)
        with events.subscribe(task.id, hear):
            await trio.sleep(0.2)  # LISTEN is in place
            await trio.to_thread.run_sync(send)
            moved = await here.move(task.id, 0, Change(TaskState.WORKING, now()))
            assert moved is not None
            with trio.fail_after(5):
                await arrived.wait()
        nursery.cancel_scope.cancel()
    assert heard == list(moved.events)
    ignored = metrics.registry.get_sample_value("n8n_a2a_store_notifications_ignored_total")
    assert ignored == 1 + len(strays)


def test_a_reason_names_each_piece_of_the_url_it_quotes() -> None:
    pool = Pool("postgresql://a:p%40ss@db-1:5433,db-2:5434/ledger?sslmode=disable")
    refused = psycopg.OperationalError(
        'connection to server at "db-2" (10.0.0.7), port 5434 failed: FATAL:  password'
        ' authentication failed for user "a"\nand more'
    )
    assert pool.reason(refused) == (
        'connection to server at "<host>" (<address>), port <port> failed: FATAL:  password'
        ' authentication failed for user "<user>"'  # a short user name only standing alone
    )
    misread = psycopg.ProgrammingError('bad "p%40ss" or "P@SSword", in "ledger" on "DB-1"')
    assert pool.reason(misread) == 'bad "<password>" or "<password>word", in "<dbname>" on "<host>"'


def password_required(postgres: PostgresServer, role: str) -> None:
    """A role that logs in with a password, unlike the others of the session's cluster."""
    rule = f"host all {role} 127.0.0.1/32 scram-sha-256\n"
    hba = postgres.data / "pg_hba.conf"
    if rule not in hba.read_text():
        hba.write_text(rule + hba.read_text())
    with psycopg.connect(postgres.url(), autocommit=True) as connection:
        connection.execute(f"DROP ROLE IF EXISTS {role}")
        connection.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'the-right-one'")
        connection.execute("SELECT pg_reload_conf()")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:  # the postmaster rereads pg_hba.conf in its own time
        try:
            psycopg.connect(postgres.url().replace("postgres@", f"{role}@")).close()
        except psycopg.OperationalError:
            return
        time.sleep(0.05)
    raise AssertionError("pg_hba.conf was not reread")


@pytest.mark.parametrize("host", ["127.0.0.1", "a2a-ledger.invalid"])
async def test_why_the_database_cannot_be_reached_names_no_piece_of_its_url(
    postgres: PostgresServer, host: str, caplog: pytest.LogCaptureFixture
) -> None:
    password_required(postgres, "a2a_ledger_keeper")
    wrong = "p@ss/S3cr%t"
    user = f"a2a_ledger_keeper:{quote(wrong, safe='')}"
    url = f"postgresql://{user}@{host}:{postgres.port}/a2a_ledger"
    pool = Pool(url)
    with pytest.raises(StoreUnavailable) as refused:
        await pool.prepare()
    with pytest.raises(StoreUnavailable) as unheard:
        await pool.listener()
    await pool.close()
    assert caplog.records  # the first failure is logged, with why
    told = [
        pool.problem or "",
        refused.value.message,
        unheard.value.message,
        *(f"{record.getMessage()} {getattr(record, 'fields', '')}" for record in caplog.records),
    ]
    pieces = ["a2a_ledger", wrong, quote(wrong, safe=""), "S3cr", host, str(postgres.port)]
    assert [piece for piece in pieces if any(piece in text for text in told)] == []
    why = "password authentication failed" if host == "127.0.0.1" else "<host>"
    assert why in (pool.problem or "")
