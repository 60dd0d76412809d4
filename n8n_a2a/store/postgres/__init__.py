"""The shared task store: tasks in PostgreSQL, their events across replicas by LISTEN/NOTIFY.

pool.py holds the connections and their worker threads, tasks.py the task rows, leases.py
this replica's leases on them, events.py the events across replicas, schema.py the tables.
`open_postgres` puts them together for one replica.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import trio

from ...core.errors import StoreUnavailable
from .events import PostgresTaskEvents
from .pool import FIRST_RETRY, LAST_RETRY, POOL_SIZE, Connection, Pool
from .tasks import PostgresTaskStore

__all__ = ["Connection", "Pool", "PostgresTaskEvents", "PostgresTaskStore", "open_postgres"]

logger = logging.getLogger(__name__)


@asynccontextmanager
async def open_postgres(
    url: str,
    *,
    lease_seconds: float = 15.0,
    ttl_seconds: float = 3600.0,
    input_ttl: float = 86400.0,
    pool_size: int = POOL_SIZE,
    ignored: Callable[[], None] = lambda: None,
) -> AsyncIterator[tuple[PostgresTaskStore, PostgresTaskEvents]]:
    """The store and its events, on a pool that connects and migrates in the background:
    until it has, the store answers StoreUnavailable and `pool.problem` says why.
    `ignored` is called for each notification on the channel that is none of ours."""
    pool = Pool(url, pool_size)
    store = PostgresTaskStore(
        pool, lease_seconds=lease_seconds, ttl_seconds=ttl_seconds, input_ttl=input_ttl
    )
    events = PostgresTaskEvents(pool, ignored=ignored)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_prepare_then_listen, pool, events)
            yield store, events
            nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            await pool.close()


async def _prepare_then_listen(pool: Pool, events: PostgresTaskEvents) -> None:
    retry = FIRST_RETRY
    while True:
        try:
            version = await pool.prepare()
            break
        except StoreUnavailable as unavailable:
            logger.debug("task store not ready: %s", unavailable.reason)
            await trio.sleep(retry)
            retry = min(retry * 2, LAST_RETRY)
    logger.info(
        "task store ready",
        extra={"fields": {"event": "store_ready", "schema_version": version}},
    )
    await events.listen()
