"""What the PostgreSQL task rows add to the store contract (tests/store/test_contract.py)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from n8n_a2a.core.changes import Change
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import Artifact, FileContent, Part, TaskState
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


async def test_a_move_s_file_is_the_change_s_own_and_reads_back_as_a_slice(
    replicas: Callable[..., PostgresTaskStore],
) -> None:
    """The move gives the task it made of the row it found and the change (the file the
    change's object, never its 27 MiB read back); a task read gives a file as a slice of
    the document the database sent, not a str and bytes of its own."""
    store = replicas()
    task = submitted_task()
    await store.create(task)
    content = bytes(range(256)) * 400  # past carving.CARVE_AT as base64
    held = Part.of_file(FileContent.of_bytes("b.bin", "application/octet-stream", content))
    answer = Artifact("a-1", "file", (held,))
    assert await store.move(task.id, 0, Change(TaskState.WORKING, datetime.now(UTC)))
    change = Change(TaskState.COMPLETED, datetime.now(UTC), artifacts=(answer,))
    moved = await store.move(task.id, 1, change)
    assert moved is not None and moved.task.artifacts[0] is answer
    read = await store.get(task.id)
    assert read == moved.task
    [part] = read.artifacts[0].parts
    assert part.file is not None and part.file.content == content
    assert isinstance(part.file.encoded.pieces[0], memoryview)  # type: ignore[union-attr]
