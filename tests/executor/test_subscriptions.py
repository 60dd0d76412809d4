"""A subscriber's bounded view of a task, without a server."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from n8n_a2a.core.errors import AtCapacity, SubscriberTooSlow
from n8n_a2a.executor.subscriptions import StreamQuota, TaskStream
from n8n_a2a.protocol.model import StatusUpdate, Task, TaskState, TaskStatus

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def task_at(version: int) -> Task:
    return Task("t-1", "c-1", TaskStatus(TaskState.WORKING, NOW), version=version)


def update(sequence: int, state: TaskState = TaskState.WORKING) -> StatusUpdate:
    return StatusUpdate("t-1", "c-1", TaskStatus(state, NOW), sequence)


async def test_events_the_first_task_already_shows_are_skipped() -> None:
    stream = TaskStream(buffer=8)
    stream.begin(task_at(2))
    for sequence in (1, 2, 3):  # heard while joining: 1 and 2 are in the task already
        stream.hear(update(sequence))
    stream.hear(update(4, TaskState.COMPLETED))
    heard = [await stream.next(), await stream.next()]
    assert [e.sequence for e in heard if e is not None] == [3, 4]
    assert await stream.next() is None  # nothing after the final event


async def test_an_interrupted_state_ends_the_stream_too() -> None:
    stream = TaskStream(buffer=8)
    stream.begin(task_at(0))
    stream.hear(update(1, TaskState.INPUT_REQUIRED))
    assert await stream.next() is not None
    assert await stream.next() is None


async def test_a_full_buffer_drops_the_subscriber_after_what_it_held() -> None:
    stream = TaskStream(buffer=2)
    stream.begin(task_at(0))
    for sequence in (1, 2, 3, 4):  # the publisher never waits: 3 and 4 are lost
        stream.hear(update(sequence))
    assert [(await stream.next()), (await stream.next())] == [update(1), update(2)]
    with pytest.raises(SubscriberTooSlow, match="task t-1"):
        await stream.next()


def test_the_events_come_already_are_taken_without_waiting_until_the_final_one() -> None:
    stream = TaskStream(buffer=8)
    stream.begin(task_at(1))
    assert stream.next_come() is None  # none has come: no wait for one
    for sequence in (1, 2, 3):
        stream.hear(update(sequence))
    stream.hear(update(4, TaskState.COMPLETED))
    assert [stream.next_come(), stream.next_come()] == [update(2), update(3)]
    assert not stream.ended
    assert stream.next_come() == update(4, TaskState.COMPLETED)
    assert stream.ended
    stream.hear(update(5))
    assert stream.next_come() is None  # nothing after the final event


def test_a_dropped_subscriber_is_told_so_without_waiting_too() -> None:
    stream = TaskStream(buffer=1)
    stream.begin(task_at(0))
    for sequence in (1, 2):
        stream.hear(update(sequence))
    assert stream.next_come() == update(1)
    with pytest.raises(SubscriberTooSlow):
        stream.next_come()


def test_a_caller_holds_at_most_its_quota_of_streams_and_gets_them_back() -> None:
    quota = StreamQuota(2)
    with quota.hold("token:a"), quota.hold("token:a"):
        with pytest.raises(AtCapacity) as refused, quota.hold("token:a"):
            pass
        assert "ADAPTER_MAX_STREAMS_PER_CALLER" in refused.value.message
        with quota.hold("token:b"):  # another caller has a quota of its own
            pass
    quota.check("token:a")  # both given back
    with quota.hold("token:a"), quota.hold("token:a"):
        pass


def test_anonymous_callers_share_one_quota() -> None:
    quota = StreamQuota(1)
    with quota.hold(None):
        with pytest.raises(AtCapacity, match="Anonymous callers have 1 streams open"):
            quota.check(None)
        quota.check("token:a")
