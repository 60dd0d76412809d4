"""What the PostgreSQL task rows add to the store contract (tests/store/test_contract.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from n8n_a2a.core.changes import Change
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import Artifact, FileContent, Message, Part, Role, TaskState
from n8n_a2a.protocol.writing import dump
from n8n_a2a.store.documents import event_doc, event_of
from n8n_a2a.store.postgres import PostgresTaskStore
from n8n_a2a.store.postgres.pool import Connection, Row
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


async def test_a_move_logs_each_artifact_s_update_whole_though_it_sent_the_artifact_once(
    replicas: Callable[..., PostgresTaskStore],
) -> None:
    """The statement makes an artifact's update of the artifact it sent for the task's
    artifacts: the events table holds the documents documents.event_doc writes."""
    store = replicas()
    task = submitted_task()
    await store.create(task)
    assert await store.move(task.id, 0, Change(TaskState.WORKING, datetime.now(UTC)))
    held = Part.of_file(FileContent.of_bytes("b.bin", "application/octet-stream", b"\x00" * 9))
    files, answer = Artifact("a-1", "file", (held,)), Artifact("a-2", "answer", (Part("ok"),))
    reply = Message("m-2", Role.AGENT, (Part("ok"),), task.id, task.context_id)
    change = Change(
        TaskState.COMPLETED, datetime.now(UTC), reply, (files, answer), {"outcome": "ANSWERED"}
    )
    moved = await store.move(task.id, 1, change)
    assert moved is not None

    def logged(connection: Connection) -> list[Row]:
        return connection.execute(
            "SELECT sequence, event, relayed FROM a2a_task_events"
            " WHERE task_id = %s AND sequence > 1 ORDER BY sequence",
            (task.id,),
        ).fetchall()

    rows = await store.pool.run(logged)
    # The artifacts' updates as the statement made them: what event_doc writes.
    written = [json.loads(dump(event_doc(event))) for event in moved.events]
    assert [row["event"] for row in rows] == written
    read = [
        event_of(task.id, task.context_id, row["sequence"], row["event"], row["relayed"])
        for row in rows
    ]
    assert read == list(moved.events)
    assert [event.sequence for event in read] == [2, 3, 4]
