"""Events across replicas: LISTEN/NOTIFY, each event once, and notifications not of ours."""

from __future__ import annotations

from collections.abc import Callable

import psycopg
import pytest
import trio

from n8n_a2a.core.changes import Change
from n8n_a2a.observability.metrics import Metrics
from n8n_a2a.protocol.model import (
    Artifact,
    ArtifactUpdate,
    Message,
    Part,
    Role,
    StatusUpdate,
    TaskEvent,
    TaskState,
)
from n8n_a2a.protocol.params import MAX_ID_CHARS
from n8n_a2a.store.fanout import utc_now as now
from n8n_a2a.store.postgres import Pool, PostgresTaskEvents, PostgresTaskStore
from n8n_a2a.store.postgres.events import CHUNKS_QUEUED, SETTLE_SECONDS, parse_notification
from n8n_a2a.store.postgres.schema import CHANNEL
from tests.support.metrics import counted
from tests.support.tasks import submitted_task


async def test_a_move_on_one_replica_reaches_listeners_on_another(
    replicas: Callable[..., PostgresTaskStore],
) -> None:
    here, there = replicas(), replicas()
    heard: list[TaskEvent] = []
    arrived = trio.Event()

    def hear(event: TaskEvent) -> None:
        heard.append(event)
        if isinstance(event, StatusUpdate) and event.final:
            arrived.set()

    task = submitted_task()
    await here.create(task)
    events = PostgresTaskEvents(there.pool)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(events.listen)
        with events.subscribe(task.id, hear):
            await trio.sleep(0.2)  # LISTEN is in place
            working = await here.move(task.id, 0, Change(TaskState.WORKING, now()))
            assert working is not None
            reply = Message("m-2", Role.AGENT, (Part("done"),))
            # Two chunks went out before the cancel: it counts them, as its event read back.
            cancel = Change(TaskState.CANCELED, now(), reply, relayed=2)
            done = await here.move(task.id, 1, cancel)
            assert done is not None
            with trio.fail_after(5):
                await arrived.wait()
        nursery.cancel_scope.cancel()
    assert heard == [*working.events, *done.events]  # each once, in order
    assert [event.generation for event in heard] == [2, 5]


async def test_events_published_here_are_not_handed_twice(
    replicas: Callable[..., PostgresTaskStore],
) -> None:
    store = replicas()
    events = PostgresTaskEvents(store.pool)
    heard: list[TaskEvent] = []
    everything: list[TaskEvent] = []
    task = submitted_task()
    await store.create(task)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(events.listen)
        with events.subscribe(task.id, heard.append), events.subscribe_all(everything.append):
            await trio.sleep(0.2)
            moved = await store.move(task.id, 0, Change(TaskState.WORKING, now()))
            assert moved is not None
            for event in moved.events:
                events.publish(event)
            await trio.sleep(0.3)  # the NOTIFY of that move comes back meanwhile
        nursery.cancel_scope.cancel()
    assert heard == list(moved.events)
    assert everything == list(moved.events)


async def test_a_relayed_chunk_is_heard_here_and_the_move_after_it_still_is(
    replicas: Callable[..., PostgresTaskStore],
) -> None:
    store = replicas()
    events = PostgresTaskEvents(store.pool)
    heard: list[TaskEvent] = []
    task = submitted_task()
    await store.create(task)
    with events.subscribe(task.id, heard.append):
        working = await store.move(task.id, 0, Change(TaskState.WORKING, now()))
        assert working is not None
        for event in working.events:
            events.publish(event)
        # Numbered as the move that follows it, which must not count as heard.
        piece = Artifact("answer-1", "answer", (Part("tok"),))
        relayed = ArtifactUpdate(task.id, task.context_id, piece, 2, append=False)
        events.relay(relayed)
        answer = Artifact("answer-1", "answer", (Part("tok"),))
        change = Change(TaskState.COMPLETED, now(), artifacts=(answer,))
        done = await store.move(task.id, 1, change)
        assert done is not None
        for event in done.events:
            events.publish(event)
    assert heard == [*working.events, relayed, *done.events]


@pytest.mark.parametrize(
    ("payload", "notified"),
    [
        (b"p-7 3", ("p-7", 3)),
        (b"an id with spaces 12", ("an id with spaces", 12)),
        (b"p-7 2147483647", ("p-7", 2147483647)),
        (b"p" * MAX_ID_CHARS + b" 3", ("p" * MAX_ID_CHARS, 3)),
        (b"not-a-number", None),
        (b"", None),
        (b" 3", None),
        (b"p-7 -1", None),
        (b"p-7 +1", None),
        (b"p-7 2147483648", None),  # past what a2a_task_events.sequence holds
        (b"p-7 " + b"9" * 5000, None),
        ("p-7 \u0661".encode(), None),  # a digit, of another script
        (b"p-\xff 3", None),  # not UTF-8
        (b"p" * (MAX_ID_CHARS + 1) + b" 3", None),
    ],
)
def test_a_notification_carries_a_task_id_and_an_event_number(
    payload: bytes, notified: tuple[str, int] | None
) -> None:
    assert parse_notification(payload) == notified


async def test_a_notification_not_of_ours_is_counted_and_the_listener_hears_on(
    replicas: Callable[..., PostgresTaskStore], postgres_url: str
) -> None:
    here, there = replicas(), replicas()
    metrics = Metrics()
    events = PostgresTaskEvents(there.pool, ignored=metrics.store_notification_ignored)
    task = submitted_task()
    await here.create(task)
    # NOTIFY needs no privilege: anyone who can connect may send these, also naming a task
    # listened to.
    strays = ["", f"{'x' * 5000} 1", f"{task.id} -1", f"{task.id} 2147483648", f"{task.id} \u0661"]

    def send() -> None:
        with psycopg.connect(postgres_url, autocommit=True) as anyone:
            anyone.execute(f"NOTIFY {CHANNEL}, 'not-a-number'")
            for payload in strays:
                anyone.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))

    heard: list[TaskEvent] = []
    arrived = trio.Event()

    def hear(event: TaskEvent) -> None:
        heard.append(event)
        arrived.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(events.listen)
        with events.subscribe(task.id, hear):
            await trio.sleep(0.2)  # LISTEN is in place
            await trio.to_thread.run_sync(send)
            moved = await here.move(task.id, 0, Change(TaskState.WORKING, now()))
            assert moved is not None
            with trio.fail_after(5):
                await arrived.wait()
        nursery.cancel_scope.cancel()
    assert heard == list(moved.events)
    ignored = counted(metrics, "n8n_a2a_store_notifications_ignored_total")
    assert ignored == 1 + len(strays)


async def test_a_chunk_relayed_on_one_replica_reaches_listeners_on_another(
    replicas: Callable[..., PostgresTaskStore],
) -> None:
    """A streamed answer's chunks, which no move records, NOTIFYed as they are relayed:
    heard in order on the other replica, a long one whole (in pieces under PostgreSQL's
    bound on the way); the replica that relayed them hears each once."""
    here, there = replicas(), replicas()
    task = submitted_task()
    await here.create(task)
    speaking, hearing = PostgresTaskEvents(here.pool), PostgresTaskEvents(there.pool)
    heard_there: list[TaskEvent] = []
    heard_here: list[TaskEvent] = []
    texts = ["Yes", ", 12 pallets", "x" * 20_000]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(speaking.speak)
        nursery.start_soon(speaking.listen)
        nursery.start_soon(hearing.listen)
        with (
            hearing.subscribe(task.id, heard_there.append),
            speaking.subscribe(task.id, heard_here.append),
        ):
            await trio.sleep(0.3)  # LISTEN is in place
            sent = [
                ArtifactUpdate(
                    task.id,
                    task.context_id,
                    Artifact("answer-1", "answer", (Part(text),)),
                    2,
                    append=index > 0,
                    last_chunk=False,
                    relayed=index,
                )
                for index, text in enumerate(texts)
            ]
            for update in sent:
                speaking.relay(update)
            with trio.fail_after(5):
                while len(heard_there) < len(sent):  # noqa: ASYNC110 - the NOTIFYs come
                    await trio.sleep(0.01)
            await trio.sleep(0.2)  # nothing more comes: not the chunks' echoes here
        nursery.cancel_scope.cancel()
    assert heard_there == sent
    assert heard_here == sent


async def test_a_replica_settles_its_chunks_before_a_turn_ends_and_keeps_them_for_late_comers(
    replicas: Callable[..., PostgresTaskStore],
) -> None:
    """`settled` returns once the chunks relayed so far are sent (NOTIFYed, and kept for a
    subscriber who joins mid-answer, which another replica reads back); the move that
    ends the turn deletes what was kept."""
    here, there = replicas(), replicas()
    task = submitted_task()
    await here.create(task)
    moved = await here.move(task.id, 0, Change(TaskState.WORKING, now()))
    assert moved is not None
    speaking, other = PostgresTaskEvents(here.pool), PostgresTaskEvents(there.pool)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(speaking.speak)
        for index, text in enumerate(("Yes", ", 12 \x00pallets")):
            artifact = Artifact("answer-1", "answer", (Part(text),))
            speaking.relay(
                ArtifactUpdate(task.id, task.context_id, artifact, 2, index > 0, False, index)
            )
        with trio.fail_after(5):
            await speaking.settled()
        kept = await other.relayed_so_far(task.id)
        assert kept is not None
        assert (kept.artifact.parts[0].text, kept.generation) == ("Yes, 12 \x00pallets", 4)
        answer = Artifact("answer-1", "answer", (Part("Yes, 12 \x00pallets"),))
        done = await here.move(task.id, 1, Change(TaskState.COMPLETED, now(), artifacts=(answer,)))
        assert done is not None
        assert await other.relayed_so_far(task.id) is None
        nursery.cancel_scope.cancel()


async def test_chunks_past_the_queue_are_dropped_for_the_others_and_heard_here(
    autojump_clock: trio.abc.Clock,
) -> None:
    """Nothing sends (the store out of reach, say): past CHUNKS_QUEUED the chunks are
    dropped for the other replicas, never blocking the relay, and this replica's
    listeners hear every one; `settled` gives up after SETTLE_SECONDS."""
    events = PostgresTaskEvents(Pool("postgresql://127.0.0.1:1/none"))
    task = submitted_task()
    heard: list[TaskEvent] = []
    with events.subscribe(task.id, heard.append):
        for index in range(CHUNKS_QUEUED + 10):
            artifact = Artifact("answer-1", "answer", (Part("x"),))
            events.relay(ArtifactUpdate(task.id, task.context_id, artifact, 2, True, False, index))
    assert len(heard) == CHUNKS_QUEUED + 10
    started = trio.current_time()
    await events.settled()
    assert trio.current_time() - started == pytest.approx(SETTLE_SECONDS)
