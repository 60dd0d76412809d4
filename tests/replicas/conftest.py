"""The replicas a test starts, each one killed after it, whatever it left running."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.replicas.replica import Replica
from tests.support.stub_webhook import StubWebhook


@pytest.fixture
async def replicas(
    stub: StubWebhook, postgres_url: str, tmp_path: Path
) -> AsyncIterator[list[Replica]]:
    """Replicas started in the test (start_replica appends here); all killed after it."""
    started: list[Replica] = []
    yield started
    for replica in started:
        if replica.process.poll() is None:
            replica.process.kill()
            await replica.process.wait()
