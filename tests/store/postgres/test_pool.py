"""The pool: a database that goes away and comes back, refusals that keep their connection,
and reasons that never quote a piece of the store's URL."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
import trio
from psycopg.types.json import Json

from n8n_a2a.core.changes import Change
from n8n_a2a.core.errors import StoreUnavailable
from n8n_a2a.protocol.errors import A2AError
from n8n_a2a.protocol.model import TaskState
from n8n_a2a.store.fanout import utc_now as now
from n8n_a2a.store.postgres import Pool, PostgresTaskStore, open_postgres
from n8n_a2a.store.postgres.pool import LARGE_BYTES, dumped
from n8n_a2a.store.postgres.schema import CHANNEL
from tests.support.postgres_server import PostgresServer
from tests.support.tasks import submitted_task


async def ready(store: PostgresTaskStore) -> None:
    with trio.fail_after(10):
        while store.pool.problem is not None:  # noqa: ASYNC110 - the pool has no event
            await trio.sleep(0.05)


async def test_a_database_that_goes_away_is_unavailable_then_back(
    postgres: PostgresServer, postgres_url: str
) -> None:
    async with open_postgres(postgres_url) as (store, _):
        await ready(store)
        task = submitted_task()
        await store.create(task)
        postgres.stop()
        try:
            with trio.fail_after(5), pytest.raises(StoreUnavailable) as raised:
                await store.get(task.id)
            assert "PostgreSQL" in raised.value.message
            with trio.fail_after(5), pytest.raises(StoreUnavailable):
                await store.create(submitted_task())  # refused at once, nothing written
        finally:
            postgres.start()
        with trio.fail_after(10):
            while True:
                try:
                    assert await store.get(task.id) == task
                    break
                except StoreUnavailable:
                    await trio.sleep(0.1)


async def test_a_call_begun_before_a_failure_does_not_say_the_database_is_back(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="n8n_a2a.store.postgres")
    pool = Pool(postgres_url, size=2)
    await pool.prepare()
    finished: list[str] = []

    def slow(connection: psycopg.Connection[Any]) -> str:
        connection.execute("SELECT pg_sleep(0.5)")
        return "slow"

    def killed(connection: psycopg.Connection[Any]) -> None:
        connection.execute("SELECT pg_terminate_backend(pg_backend_pid())")

    def events() -> list[str]:
        return [str(getattr(record, "fields", {}).get("event")) for record in caplog.records]

    async with trio.open_nursery() as nursery:

        async def under_way() -> None:
            finished.append(await pool.run(slow))

        nursery.start_soon(under_way)
        await trio.sleep(0.1)  # the slow query is on the one connection there was
        with pytest.raises(StoreUnavailable) as raised:
            await pool.run(killed)  # on a new one, which the server ends
        assert "terminating connection" in raised.value.message
    # The slow query finished on its old connection: no proof the failure is over.
    assert finished == ["slow"] and events() == ["store_down"]
    assert await pool.run(slow) == "slow"  # begun after the failure: it is
    assert events() == ["store_down", "store_up"]
    await pool.close()


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
        await store.create(submitted_task(context_id="c-\x00"))
    assert await pool.run(backend) == first  # the same connection, not a new one
    await pool.close()


async def test_a_connection_that_carried_a_large_document_is_closed_after_its_work(
    postgres_url: str,
) -> None:
    """libpq keeps the buffers a large statement or result grew as long as the connection
    lives: one whose work sent or read more than LARGE_BYTES of JSON is not kept."""
    pool = Pool(postgres_url, size=1)
    await pool.prepare()
    large = "x" * (LARGE_BYTES + 1)

    def backend(connection: psycopg.Connection[Any]) -> int:
        row = connection.execute("SELECT pg_backend_pid() AS pid").fetchone()
        assert row is not None
        return int(row["pid"])

    def echo(document: object) -> Callable[[psycopg.Connection[Any]], int]:
        def work(connection: psycopg.Connection[Any]) -> int:
            row = connection.execute(
                "SELECT %s::json AS echoed, pg_backend_pid() AS pid",
                (Json(document, dumps=dumped),),
            ).fetchone()
            assert row is not None and row["echoed"] == document
            return int(row["pid"])

        return work

    first = await pool.run(backend)
    assert await pool.run(echo({"text": "small"})) == first  # kept
    assert await pool.run(echo({"text": large})) == first  # its work done on it, then closed
    again = await pool.run(backend)
    assert again != first
    # Counted both ways: sent and read back, half of it is still under.
    assert await pool.run(echo({"text": large[: LARGE_BYTES // 2 - 100]})) == again
    assert await pool.run(backend) == again

    def read(connection: psycopg.Connection[Any]) -> int:
        # Read, not sent: a document the database makes.
        row = connection.execute(
            "SELECT json_build_object('text', repeat('y', %s)) AS made, pg_backend_pid() AS pid",
            (LARGE_BYTES,),
        ).fetchone()
        assert row is not None and len(row["made"]["text"]) == LARGE_BYTES
        return int(row["pid"])

    assert await pool.run(read) == again
    assert await pool.run(backend) != again
    await pool.close()


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
        await pool.listener(CHANNEL)
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
