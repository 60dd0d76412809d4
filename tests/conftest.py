"""The fixtures the whole suite shares: the stub webhook, the real adapter in front of it,
and a PostgreSQL. Their helpers live in tests/support/."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

import pytest
import trio

# Before the helpers are imported: pytest explains a failed assert in them too.
pytest.register_assert_rewrite("tests.support")

from n8n_a2a.server import serve  # noqa: E402
from tests.support.adapter import AdapterFactory, free_port, make_settings  # noqa: E402
from tests.support.stub_webhook import StubWebhook, start_stub_webhook  # noqa: E402

if TYPE_CHECKING:
    from tests.support.postgres_server import PostgresServer

#: The markers of each folder (or file) whose tests use real sockets, processes, n8n, npm or
#: a PostgreSQL (registered in pyproject.toml): `pytest -m "not slow"` is the fast suite.
MARKERS_BY_PATH = {
    "tests/e2e/": ("e2e", "slow"),
    "tests/interop/": ("interop", "slow"),
    "tests/container/": ("container", "slow"),
    "tests/integration/": ("slow",),
    "tests/replicas/": ("postgres", "slow"),
    "tests/store/postgres/": ("postgres", "slow"),
    "tests/test_readme.py": ("slow",),
    "tests/test_scripts.py": ("slow",),
    "tests/test_main.py": ("slow",),
    "tests/test_server.py": ("slow",),
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test marked by where it lives, and by the PostgreSQL it asks for (the store
    contract runs against both stores: only its PostgreSQL half is slow; a fixture that
    starts the adapter marks nothing, its sockets are on 127.0.0.1 and quick)."""
    root = config.rootpath
    for item in items:
        where = item.path.relative_to(root).as_posix()
        for path, markers in MARKERS_BY_PATH.items():
            if where.startswith(path):
                for marker in markers:
                    item.add_marker(marker)
        callspec = getattr(item, "callspec", None)
        if "postgres_url" in getattr(item, "fixturenames", ()) or (
            callspec is not None and "postgres" in callspec.params.values()
        ):
            item.add_marker("postgres")
            item.add_marker("slow")


@pytest.fixture
async def stub(nursery: trio.Nursery) -> StubWebhook:
    return await start_stub_webhook(nursery)


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
    from tests.support.postgres_server import CannotStart, PostgresServer

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

    from n8n_a2a.store.postgres.schema import migrate

    url = postgres.create_database()
    with psycopg.connect(url, autocommit=True) as connection:
        migrate(connection)
    return url
