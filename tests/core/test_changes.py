"""A change's events: the artifacts first, then the status, numbered on from the version;
and the task it makes."""

from __future__ import annotations

from datetime import UTC, datetime

from n8n_a2a.core.changes import Change, change_events, moved_task
from n8n_a2a.protocol.model import (
    Artifact,
    ArtifactUpdate,
    Message,
    Part,
    Role,
    StatusUpdate,
    Task,
    TaskState,
    TaskStatus,
)

NOW = datetime(2026, 12, 3, tzinfo=UTC)


def test_a_status_alone_is_one_event_numbered_after_the_version() -> None:
    events = change_events("t", "c", 4, 0, Change(TaskState.WORKING, NOW))
    assert events == (StatusUpdate("t", "c", TaskStatus(TaskState.WORKING, NOW), 5),)


def test_artifacts_come_first_in_order_then_the_status_with_the_metadata() -> None:
    first = Artifact("a-1", "answer", (Part("one"),))
    second = Artifact("a-2", "answer", (Part("two"),))
    reply = Message("m-1", Role.AGENT, (Part("done"),), "t", "c")
    change = Change(
        TaskState.COMPLETED,
        NOW,
        message=reply,
        artifacts=(first, second),
        metadata={"outcome": "ANSWERED"},
    )
    assert change_events("t", "c", 1, 0, change) == (
        ArtifactUpdate("t", "c", first, 2),
        ArtifactUpdate("t", "c", second, 3),
        StatusUpdate(
            "t", "c", TaskStatus(TaskState.COMPLETED, NOW, reply), 4, {"outcome": "ANSWERED"}
        ),
    )


def test_empty_metadata_is_no_metadata_on_the_status() -> None:
    [event] = change_events("t", "c", 0, 0, Change(TaskState.CANCELED, NOW, metadata={}))
    assert isinstance(event, StatusUpdate)
    assert event.metadata is None


def test_each_event_is_one_generation_on_past_the_chunks_relayed_before_it() -> None:
    """A2A 1.1: one generation a change of state or artifacts; a task at version 3 with 2
    chunks counted is at generation 6, and the 4 chunks of this turn took 7 to 10."""
    answer = Artifact("a-1", "answer", (Part("whole"),))
    change = Change(TaskState.COMPLETED, NOW, artifacts=(answer,), relayed=4)
    events = change_events("t", "c", 3, 2, change)
    assert [event.sequence for event in events] == [4, 5]
    assert [event.generation for event in events] == [11, 12]


def test_the_moved_task_is_the_task_and_the_change_together() -> None:
    asked = Message("m-1", Role.USER, (Part("hi"),), "t", "c")
    before = Task(
        "t",
        "c",
        TaskStatus(TaskState.WORKING, NOW),
        (asked,),
        metadata={"kept": 1, "outcome": "none"},
        version=1,
        owner="o",
        relayed=2,
        resume="https://n8n.example/resume/1",
    )
    answer = Artifact("a-1", "answer", (Part("whole"),))
    reply = Message("m-2", Role.AGENT, (Part("done"),), "t", "c")
    change = Change(
        TaskState.COMPLETED,
        NOW,
        message=reply,
        artifacts=(answer,),
        metadata={"outcome": "ANSWERED"},
        relayed=3,
    )
    events = change_events("t", "c", 1, 2, change)
    moved = moved_task(before, change, events)
    assert moved == Task(
        "t",
        "c",
        TaskStatus(TaskState.COMPLETED, NOW, reply),
        (asked, reply),
        (answer,),
        {"kept": 1, "outcome": "ANSWERED"},
        version=3,
        owner="o",
        relayed=5,
        resume=None,  # a turn's end says where the next goes: the webhook
    )
    assert moved.artifacts[0] is answer  # the change's own, not a copy
    # A change that ends no turn keeps where the next one goes; no metadata keeps it all.
    working = Change(TaskState.WORKING, NOW)
    kept = moved_task(before, working, change_events("t", "c", 1, 2, working))
    assert kept.resume == before.resume and kept.metadata is before.metadata
    assert kept.history == (asked,) and kept.version == 2
