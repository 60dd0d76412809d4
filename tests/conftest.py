"""The fixtures the whole suite shares: the stub webhook, the real adapter in front of it,
and a PostgreSQL. Their helpers live in tests/support/."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from functools import partial
from pathlib import Path
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

#: The fast suite's rule, enforced: a test not marked slow that starts a process or reaches
#: beyond 127.0.0.1 fails, saying which marker to add.
pytest_plugins = ("tests.support.fast_suite", "pytester")  # pytester: the guard's own test

#: The markers of each folder (or file) whose tests start processes, n8n, npm or a
#: PostgreSQL, or reach beyond this machine (registered in pyproject.toml): `pytest -m "not
#: slow"` is the fast suite. tests/support/fast_suite.py fails a test that does so unmarked.
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
    "tests/prebuilt/test_main.py": ("slow",),
}
#: The markers of each test that asks for a fixture starting a process, wherever the test
#: lives (a fixture it asks for through another counts: postgres_url asks for postgres).
#: `start_adapter` and `stub` are not here: they serve on 127.0.0.1 in the test's own process.
MARKERS_BY_FIXTURE = {
    "postgres": ("postgres", "slow"),
}


def markers_of(item: pytest.Item, root: Path) -> set[str]:
    """The markers an item gets from its place and its fixtures."""
    where = item.path.relative_to(root).as_posix()
    found = {m for path, ms in MARKERS_BY_PATH.items() if where.startswith(path) for m in ms}
    fixtures = getattr(item, "fixturenames", ())
    return found | {m for name in fixtures for m in MARKERS_BY_FIXTURE.get(name, ())}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test marked by where it lives and by the fixtures it asks for; a param can be
    marked too (the store contract's PostgreSQL half, tests/store/test_contract.py)."""
    for item in items:
        for marker in sorted(markers_of(item, config.rootpath)):
            item.add_marker(marker)


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
