"""A real n8n behind the adapter: one n8n 2.41 per test session, started by `n8n/run`.

Starting n8n takes about 20 s, so it happens once, from a synchronous session fixture
(pytest-trio's async fixtures cannot be session-scoped). The first run on a machine also
installs n8n into the cache, which takes minutes; `N8N_A2A_SKIP_E2E=1` skips these tests.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import trio

from tests.e2e.real_n8n import N8n, run
from tests.support.adapter import free_port
from tests.support.openai_stub import OpenAiStub, PortTaken


@pytest.fixture(scope="session")
def n8n(tmp_path_factory: pytest.TempPathFactory) -> Iterator[N8n]:
    """n8n with n8n/workflows/ imported and published, on 127.0.0.1; stopped after the session."""
    if os.environ.get("N8N_A2A_SKIP_E2E") == "1":
        pytest.skip("N8N_A2A_SKIP_E2E=1: the end-to-end tests against a real n8n are skipped")
    run("install", timeout=1800)  # nothing to do once the cache has it
    datadir = tmp_path_factory.mktemp("n8n")
    port = free_port()  # its task broker's port n8n/run finds itself
    try:
        yield N8n(run("start", str(datadir), str(port), timeout=300).strip(), port)
    finally:
        run("stop", str(datadir), timeout=60)


@pytest.fixture
async def openai_stub(nursery: trio.Nursery) -> OpenAiStub:
    """The model the AI Agent workflow calls, on the port its credential names."""
    try:
        return await OpenAiStub().serve(nursery)
    except PortTaken as taken:
        pytest.fail(str(taken), pytrace=False)
