"""The PostgreSQL backend (the postgres extra): `open_postgres` puts the pool, the task
rows and their events together for one replica; `open_postgres_stores` adds the push
configs and the leases, as the stores a StoreConfig opens.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import trio

from ...core.errors import StoreUnavailable
from ..api import StoreConfig, Stores
from .events import PostgresTaskEvents
from .pool import FIRST_RETRY, LAST_RETRY, POOL_SIZE, Pool
from .push_configs import PostgresPushConfigStore
from .tasks import PostgresTaskStore

# The name the store's log lines have always carried (the package's), which operators
# filter on.
logger = logging.getLogger(__package__)


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
            nursery.start_soon(events.speak)
            yield store, events
            nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            await pool.close()


@asynccontextmanager
async def open_postgres_stores(config: StoreConfig) -> AsyncIterator[Stores]:
    """The stores of a replica sharing the database at `config.url` with others: the
    tasks keep their payloads whole until their time to live, out of this process (no
    budget counts them), and the task store keeps this replica's leases too."""
    if config.url is None:
        raise ValueError("the PostgreSQL backend needs ADAPTER_STORE_URL")
    async with open_postgres(
        config.url,
        lease_seconds=config.lease_seconds,
        ttl_seconds=config.task_ttl,
        input_ttl=config.input_ttl,
        ignored=config.ignored,
    ) as (shared, events):

        def problem() -> str | None:
            reason = shared.pool.problem
            return None if reason is None else f"the task store is not ready: {reason}"

        configs = PostgresPushConfigStore(shared.pool)
        yield Stores(shared, events, configs, shared, problem)


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
