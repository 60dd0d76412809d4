from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

import pytest
import trio

from n8n_a2a.config import Settings
from n8n_a2a.server import serve
from tests.stub_webhook import StubWebhook, start_stub_webhook

if TYPE_CHECKING:
    from tests.postgres_server import PostgresServer


def make_settings(webhook_url: str = "http://127.0.0.1:9/webhook", **overrides: Any) -> Settings:
    settings = Settings(
        agent_name="Supply agent",
        agent_description="Checks availability of supplies.",
        skill_id="check_availability",
        skill_name="Check availability",
        skill_description="Says whether an item is in stock.",
        skill_examples=("Are there 4 pallets of flour?",),
        webhook_url=webhook_url,
        public_url="http://127.0.0.1:1/",
        host="127.0.0.1",
        port=0,
        webhook_timeout=5.0,
    )
    return replace(settings, **overrides)


def free_port() -> int:
    """A port free now on 127.0.0.1: the card must name the port before the server binds."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
async def stub(nursery: trio.Nursery) -> StubWebhook:
    return await start_stub_webhook(nursery)


AdapterFactory = Callable[..., Any]


@pytest.fixture
async def start_adapter(nursery: trio.Nursery) -> AsyncIterator[AdapterFactory]:
    """Start the real adapter on a free port; returns its public URL, as the card says it."""
    stops: list[trio.Event] = []

    async def start(webhook_url: str, **overrides: Any) -> str:
        stop = trio.Event()
        stops.append(stop)
        port = free_port()
        overrides = {"port": port, "public_url": f"http://127.0.0.1:{port}/", **overrides}
        settings = make_settings(webhook_url, **overrides)
        await nursery.start(partial(serve, settings, shutdown_trigger=stop.wait))
        return settings.public_url

    yield start
    for stop in stops:
        stop.set()


@pytest.fixture
async def adapter(stub: StubWebhook, start_adapter: AdapterFactory) -> str:
    url: str = await start_adapter(stub.url)
    return url


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One PostgreSQL for the session. Where none can be started the tests that need it
    skip, saying why; in CI (CI set) they fail instead."""
    from tests.postgres_server import CannotStart, PostgresServer

    try:
        server = PostgresServer()
        server.start()
    except CannotStart as error:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"PostgreSQL cannot be started here: {error}")
    yield server
    server.remove()


@pytest.fixture
def postgres_url(postgres: PostgresServer) -> str:
    """A fresh database on the session's PostgreSQL, its schema in place."""
    import psycopg

    from n8n_a2a.store.schema import migrate

    url = postgres.create_database()
    with psycopg.connect(url, autocommit=True) as connection:
        migrate(connection)
    return url
