"""The in-process fan-out of task events."""

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
from n8n_a2a.store.fanout import LocalTaskEvents, utc_now


def update(task_id: str, sequence: int, state: TaskState = TaskState.WORKING) -> StatusUpdate:
    return StatusUpdate(task_id, "c-1", TaskStatus(state, datetime.now(UTC)), sequence)


def test_each_listener_hears_its_own_task_in_order_until_it_leaves() -> None:
    events = LocalTaskEvents()
    heard: dict[str, list[TaskEvent]] = {"a": [], "b": [], "all": []}
    with (
        events.subscribe("t-1", heard["a"].append),
        events.subscribe_all(heard["all"].append),
    ):
        with events.subscribe("t-1", heard["b"].append):
            events.publish(update("t-1", 1))
            events.publish(update("t-2", 1))
        events.publish(update("t-1", 2))
    events.publish(update("t-1", 3))
    assert [e.sequence for e in heard["a"]] == [1, 2]
    assert [e.sequence for e in heard["b"]] == [1]
    assert [(e.task_id, e.sequence) for e in heard["all"]] == [("t-1", 1), ("t-2", 1), ("t-1", 2)]


def test_a_task_nobody_listens_to_leaves_nothing_behind() -> None:
    events = LocalTaskEvents()
    with events.subscribe("t-1", lambda event: None):
        pass
    events.publish(update("t-1", 1))
    assert events._by_task == {}


def test_a_failing_listener_does_not_keep_the_event_from_others(
    caplog: pytest.LogCaptureFixture,
) -> None:
    events = LocalTaskEvents()
    heard: list[TaskEvent] = []

    def broken(event: TaskEvent) -> None:
        raise RuntimeError("listener bug")

    with events.subscribe("t-1", broken), events.subscribe("t-1", heard.append):
        events.publish(update("t-1", 1))
    assert len(heard) == 1
    assert "a listener of task t-1 failed" in caplog.text


def test_the_clock_tells_the_time_in_utc() -> None:
    before = datetime.now(UTC)
    told = utc_now()
    assert told.tzinfo is UTC
    assert before <= told <= datetime.now(UTC)


def chunk(task_id: str, sequence: int) -> ArtifactUpdate:
    piece = Artifact("answer-1", "answer", (Part("tok"),))
    return ArtifactUpdate(task_id, "c-1", piece, sequence, append=True, last_chunk=False)


def test_a_relayed_chunk_reaches_the_tasks_listeners_only() -> None:
    events = LocalTaskEvents()
    mine: list[TaskEvent] = []
    everything: list[TaskEvent] = []
    with events.subscribe("t-1", mine.append), events.subscribe_all(everything.append):
        events.relay(chunk("t-1", 2))
        events.relay(chunk("t-2", 2))
        events.publish(update("t-1", 2, TaskState.COMPLETED))
    assert [type(e).__name__ for e in mine] == ["ArtifactUpdate", "StatusUpdate"]
    assert [type(e).__name__ for e in everything] == ["StatusUpdate"]
