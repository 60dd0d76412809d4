"""The servers the pool's and the network backend's tests call: plain and TLS."""

from __future__ import annotations

import ssl

import pytest
import trio
import trustme

from tests.webhook.h11_server import Server, start_server


@pytest.fixture
async def server(nursery: trio.Nursery) -> Server:
    return await start_server(nursery)


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
async def tls_server(nursery: trio.Nursery, authority: trustme.CA) -> Server:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(context)
    return await start_server(nursery, context)
