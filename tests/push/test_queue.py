"""The per-receiver queue: bounded, in order, status updates coalescing, the end always kept."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from n8n_a2a.protocol.model import (
    Artifact,
    ArtifactUpdate,
    Part,
    StatusUpdate,
    TaskEvent,
    TaskState,
    TaskStatus,
)
from n8n_a2a.push.queue import Pending, UpdateQueue

MOMENT = datetime(2026, 11, 29, tzinfo=UTC)


def status(sequence: int, state: TaskState = TaskState.WORKING) -> Pending:
    return Pending(StatusUpdate("t", "c", TaskStatus(state, MOMENT), sequence), float(sequence))


def artifact(sequence: int) -> Pending:
    answer = Artifact(f"a-{sequence}", "answer", (Part("x"),))
    return Pending(ArtifactUpdate("t", "c", answer, sequence), float(sequence))


def drained(queue: UpdateQueue) -> list[TaskEvent]:
    events = []
    while (pending := queue.take()) is not None:
        events.append(pending.event)
    return events


def sequences(events: list[TaskEvent]) -> list[int]:
    return [event.sequence for event in events]


def test_below_its_limit_it_keeps_everything_in_order() -> None:
    queue = UpdateQueue(limit=4)
    for pending in (status(1), artifact(2), status(3)):
        assert queue.put(pending) == []
    assert len(queue) == 3
    assert sequences(drained(queue)) == [1, 2, 3]
    assert queue.take() is None


def test_when_full_the_oldest_of_two_status_updates_side_by_side_goes() -> None:
    queue = UpdateQueue(limit=3)
    for pending in (artifact(1), status(2), status(3)):
        queue.put(pending)
    [out] = queue.put(status(4))
    assert out.event.sequence == 2
    assert sequences(drained(queue)) == [1, 3, 4]


def test_a_newcomer_coalesces_with_the_last_status_update() -> None:
    queue = UpdateQueue(limit=3)
    for pending in (status(1), artifact(2), status(3)):
        queue.put(pending)
    [out] = queue.put(status(4))
    assert out.event.sequence == 3
    assert sequences(drained(queue)) == [1, 2, 4]


def test_without_status_updates_to_coalesce_the_oldest_goes() -> None:
    queue = UpdateQueue(limit=2)
    queue.put(artifact(1))
    queue.put(artifact(2))
    [out] = queue.put(artifact(3))
    assert out.event.sequence == 1
    assert sequences(drained(queue)) == [2, 3]


def test_a_long_run_behind_a_dead_receiver_stays_bounded_and_ends_with_the_terminal() -> None:
    queue = UpdateQueue(limit=4)
    lost = 0
    states = [TaskState.WORKING, TaskState.INPUT_REQUIRED] * 50
    for sequence, state in enumerate(states, start=1):
        lost += len(queue.put(status(sequence, state)))
        assert len(queue) <= 4
    lost += len(queue.put(artifact(101)))
    lost += len(queue.put(status(102, TaskState.COMPLETED)))
    events = drained(queue)
    assert len(events) == 4
    assert lost == 100 + 2 - 4
    assert isinstance(events[-1], StatusUpdate)
    assert events[-1].status.state is TaskState.COMPLETED
    assert sequences(events) == sorted(sequences(events))  # never reordered


def test_a_queue_holds_two_updates_at_least() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        UpdateQueue(limit=1)


def chunk(sequence: int, text: str, artifact_id: str = "answer-1") -> Pending:
    piece = Artifact(artifact_id, "answer", (Part(text),))
    update = ArtifactUpdate("t", "c", piece, sequence, append=True, last_chunk=False)
    return Pending(update, float(sequence))


def texts(events: list[TaskEvent]) -> list[str]:
    return [
        "".join(p.text for p in e.artifact.parts) if isinstance(e, ArtifactUpdate) else "status"
        for e in events
    ]


def test_chunks_side_by_side_merge_into_one_appended_text() -> None:
    queue = UpdateQueue(limit=4)
    queue.put(status(1))
    queue.put(chunk(2, "Yes"))
    assert queue.put(chunk(2, ", 12")) != []  # merged: counted as coalesced
    queue.put(chunk(2, "."))
    queue.put(status(3, TaskState.COMPLETED))
    events = drained(queue)
    assert texts(events) == ["status", "Yes, 12.", "status"]
    merged = events[1]
    assert isinstance(merged, ArtifactUpdate) and merged.append and not merged.last_chunk


def test_chunks_never_merge_with_anything_else() -> None:
    queue = UpdateQueue(limit=8)
    for pending in (chunk(2, "a"), chunk(2, "b", "other"), artifact(3), chunk(4, "c")):
        assert queue.put(pending) == []
    assert texts(drained(queue)) == ["a", "b", "x", "c"]


def test_a_thousand_chunks_take_one_place_in_the_queue() -> None:
    queue = UpdateQueue(limit=2)
    for n in range(1000):
        queue.put(chunk(2, str(n % 10)))
    assert len(queue) == 1
