"""What the PostgreSQL task rows add to the store contract (tests/store/test_contract.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.store.postgres import PostgresTaskStore
from tests.support.tasks import submitted_task


async def test_text_postgres_cannot_hold_in_a_column_is_invalid_params(
    replicas: Callable[..., PostgresTaskStore],
) -> None:
    store = replicas()
    nul = submitted_task("a NUL \x00 in the text is kept")
    await store.create(nul)
    assert await store.get(nul.id) == nul
    with pytest.raises(A2AError) as raised:
        await store.create(submitted_task(context_id="c-\x00"))
    assert raised.value.code is ErrorCode.INVALID_PARAMS
