"""The store contract, run against every TaskStore: create, get, move compare-and-set, list."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from n8n_a2a.core.changes import Change
from n8n_a2a.core.errors import IllegalTransition
from n8n_a2a.core.release import Released, released
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import (
    Artifact,
    ArtifactUpdate,
    FileContent,
    ListTasks,
    Message,
    Part,
    Role,
    StatusUpdate,
    TaskState,
)
from n8n_a2a.protocol.versions import V1
from n8n_a2a.store import TaskStore
from n8n_a2a.store.memory import MemoryTaskStore
from tests.support.store_tasks import Ticking, answer, finished, new_task, waiting

StoreFactory = Callable[..., TaskStore]


# Only the PostgreSQL half of the contract is slow: its param is marked, not the file.
@pytest.fixture(
    params=["memory", pytest.param("postgres", marks=(pytest.mark.postgres, pytest.mark.slow))]
)
async def make_store(request: pytest.FixtureRequest) -> AsyncIterator[StoreFactory]:
    if request.param == "memory":
        yield MemoryTaskStore
        return
    from n8n_a2a.store.postgres import Pool, PostgresTaskStore

    pool = Pool(request.getfixturevalue("postgres_url"))
    await pool.prepare()

    def make(**options: Any) -> TaskStore:
        options.pop("max_tasks", None)  # bounded by time to live only: see below
        return PostgresTaskStore(pool, **options)

    yield make
    await pool.close()


async def test_a_task_moves_submitted_working_completed(make_store: StoreFactory) -> None:
    clock = Ticking()
    store = make_store(clock=clock)
    task = new_task(clock)
    await store.create(task)
    assert await store.get(task.id) == task
    working = await store.move(task.id, 0, Change(TaskState.WORKING, clock()))
    assert working is not None
    assert working.task.status.state is TaskState.WORKING
    assert working.task.version == 1
    assert working.events == (StatusUpdate(task.id, "c-1", working.task.status, 1),)
    done = await store.move(task.id, 1, answer(clock))
    assert done is not None
    assert done.task.status.state is TaskState.COMPLETED
    assert [m.role for m in done.task.history] == [Role.USER, Role.AGENT]
    assert done.task.status.message == done.task.history[-1]
    assert done.task.artifacts[0].parts == (Part("12 pallets"),)
    assert done.task.metadata == {"outcome": "ANSWERED"}
    # The artifact comes before the status that ends the task, each with its number.
    assert done.events == (
        ArtifactUpdate(task.id, "c-1", done.task.artifacts[0], 2),
        StatusUpdate(task.id, "c-1", done.task.status, 3, {"outcome": "ANSWERED"}),
    )
    assert done.task.version == 3
    assert await store.get(task.id) == done.task


async def test_data_and_file_parts_read_back_as_written(make_store: StoreFactory) -> None:
    """An upload's marker, a file with its bytes, one by URL, and data of every JSON kind:
    each reads back equal, its events too, whichever store."""
    clock = Ticking()
    store = make_store(clock=clock)
    upload = Part.of_file(FileContent.of_bytes("scan.png", "image/png", b"abc"))
    kept = released(upload, Released.UPLOAD)
    user = Message("m-1", Role.USER, (Part("see"), kept, Part.of_data([1, None])))
    task = replace(new_task(clock), history=(user,))
    await store.create(task)
    working = await store.move(task.id, 0, Change(TaskState.WORKING, clock()))
    assert working is not None
    made = (
        Artifact("a-1", "answer", (Part("done"),)),
        Artifact("a-2", "data", (Part.of_data({"n": 1.5, "s": "é", "t": True}),)),
        Artifact(
            "a-3", "r.csv", (Part.of_file(FileContent.of_bytes("r.csv", "text/csv", b"a,b")),)
        ),
        Artifact("a-4", "file", (Part.of_file(FileContent("", "image/png", url="http://x/y")),)),
        Artifact("a-5", "data", (Part.of_data(None, {"m": 1}),)),
    )
    change = Change(TaskState.COMPLETED, clock(), Message("m-2", Role.AGENT, (Part("done"),)), made)
    done = await store.move(task.id, working.task.version, change)
    assert done is not None
    assert done.task.artifacts == made
    assert [event.sequence for event in done.events] == [2, 3, 4, 5, 6, 7]
    assert await store.get(task.id) == done.task
    assert (await store.get(task.id)).history[0] == user


async def test_a_next_turn_joins_the_history_in_order(make_store: StoreFactory) -> None:
    clock = Ticking()
    store = make_store(clock=clock)
    asked = await waiting(store, clock)
    assert [m.parts[0].text for m in asked.history] == ["hi", "Which item?"]
    reply = Message("m-3", Role.USER, (Part("flour"),), asked.id, asked.context_id)
    turn = Change(TaskState.SUBMITTED, clock(), history=(reply,))
    submitted = await store.move(asked.id, asked.version, turn)
    assert submitted is not None
    # The caller's message joins the history; the status carries no message of its own.
    assert submitted.task.history == (*asked.history, reply)
    assert submitted.task.status.message is None
    assert submitted.events == (
        StatusUpdate(asked.id, "c-1", submitted.task.status, asked.version + 1),
    )
    working = await store.move(asked.id, submitted.task.version, Change(TaskState.WORKING, clock()))
    assert working is not None
    done = await store.move(asked.id, working.task.version, answer(clock))
    assert done is not None
    assert [(m.role, m.parts[0].text) for m in done.task.history] == [
        (Role.USER, "hi"),
        (Role.AGENT, "Which item?"),
        (Role.USER, "flour"),
        (Role.AGENT, "12 pallets"),
    ]
    assert [m.parts[0].text for m in done.task.with_history_length(2).history] == [
        "flour",
        "12 pallets",
    ]


async def test_a_task_waiting_for_input_outlives_the_time_to_live(
    make_store: StoreFactory,
) -> None:
    clock = Ticking()
    store = make_store(ttl_seconds=10, clock=clock)
    asked = await waiting(store, clock)
    done = await finished(store, clock)
    clock.now += timedelta(seconds=30)
    await store.expire()
    assert (await store.get(asked.id)).status.state is TaskState.INPUT_REQUIRED
    with pytest.raises(A2AError):
        await store.get(done)


async def test_a_move_from_an_old_version_changes_nothing(make_store: StoreFactory) -> None:
    clock = Ticking()
    store = make_store(clock=clock)
    task = new_task(clock)
    await store.create(task)
    canceled = Change(TaskState.CANCELED, clock())
    assert await store.move(task.id, 0, canceled) is not None
    # The mover that read version 0 loses: the task is as the first mover left it.
    assert await store.move(task.id, 0, Change(TaskState.WORKING, clock())) is None
    assert (await store.get(task.id)).status.state is TaskState.CANCELED


async def test_a_move_the_lifecycle_forbids_is_a_bug(make_store: StoreFactory) -> None:
    clock = Ticking()
    store = make_store(clock=clock)
    task_id = await finished(store, clock)
    version = (await store.get(task_id)).version
    with pytest.raises(IllegalTransition):
        await store.move(task_id, version, Change(TaskState.WORKING, clock()))


async def test_an_unknown_task_is_32001(make_store: StoreFactory) -> None:
    store = make_store()
    with pytest.raises(A2AError) as raised:
        await store.get("nope")
    assert raised.value.code is ErrorCode.TASK_NOT_FOUND
    with pytest.raises(A2AError):
        await store.move("nope", 0, Change(TaskState.WORKING, datetime.now(UTC)))


async def test_finished_tasks_leave_after_their_time_to_live(make_store: StoreFactory) -> None:
    clock = Ticking()
    store = make_store(ttl_seconds=10, clock=clock)
    old = await finished(store, clock)
    running = new_task(clock)
    await store.create(running)
    clock.now += timedelta(seconds=30)
    fresh = await finished(store, clock)
    await store.expire()
    with pytest.raises(A2AError):
        await store.get(old)
    assert (await store.get(running.id)).status.state is TaskState.SUBMITTED  # never evicted
    assert (await store.get(fresh)).status.state is TaskState.COMPLETED


# Bounded by count as well: the in-memory store only. PostgreSQL keeps what the time to
# live leaves, on disk, shared by the replicas.


async def test_list_filters_and_pages_newest_first(make_store: StoreFactory) -> None:
    clock = Ticking()
    store = make_store(clock=clock)
    ids = [await finished(store, clock) for _ in range(3)]
    other = new_task(clock, context_id="c-2")
    await store.create(other)
    page = await store.list(ListTasks(context_id="c-1", page_size=2), None)
    assert [t.id for t in page.tasks] == ids[:0:-1]
    assert page.total_size == 3
    assert page.tasks[0].artifacts == ()  # only with includeArtifacts
    rest = await store.list(ListTasks(context_id="c-1", page_token=page.next_page_token), None)
    assert [t.id for t in rest.tasks] == ids[:1]
    assert rest.next_page_token == ""
    waiting = await store.list(ListTasks(state=TaskState.SUBMITTED, history_length=0), None)
    assert [(t.id, t.history) for t in waiting.tasks] == [(other.id, ())]


async def test_list_pages_survive_an_expiry_between_pages(make_store: StoreFactory) -> None:
    clock = Ticking()
    store = make_store(ttl_seconds=450, clock=clock)
    ids = []
    for _ in range(5):  # one every 100 s
        ids.append(await finished(store, clock))
        clock.now += timedelta(seconds=100)
    page = await store.list(ListTasks(page_size=2), None)
    assert [t.id for t in page.tasks] == ids[:2:-1]
    assert page.total_size == 5
    clock.now += timedelta(seconds=80)
    await store.expire()  # the two oldest, more than 450 s ago now
    rest = await store.list(ListTasks(page_size=10, page_token=page.next_page_token), None)
    assert [t.id for t in rest.tasks] == [ids[2]]
    assert rest.total_size == 3


async def test_a_task_keeps_its_owner_through_every_move(make_store: StoreFactory) -> None:
    clock = Ticking()
    store = make_store(clock=clock)
    task = new_task(clock, owner="token:alice")
    await store.create(task)
    assert (await store.get(task.id)).owner == "token:alice"
    working = await store.move(task.id, 0, Change(TaskState.WORKING, clock()))
    assert working is not None and working.task.owner == "token:alice"
    done = await store.move(task.id, working.task.version, answer(clock))
    assert done is not None and done.task.owner == "token:alice"
    assert (await store.get(task.id)).owner == "token:alice"


async def test_list_shows_only_the_owners_tasks(make_store: StoreFactory) -> None:
    clock = Ticking()
    store = make_store(clock=clock)
    mine: dict[str | None, list[str]] = {"alice": [], "bob": [], None: []}
    for owner in ["alice", "bob", None, "alice", "bob", "alice"]:
        task = new_task(clock, owner=owner)
        await store.create(task)
        mine[owner].insert(0, task.id)
    for owner, ids in mine.items():
        first = await store.list(ListTasks(page_size=2), owner)
        assert first.total_size == len(ids)  # not even the count shows the others'
        rest = await store.list(ListTasks(page_token=first.next_page_token or None), owner)
        shown = [t.id for t in first.tasks]
        if first.next_page_token:
            shown += [t.id for t in rest.tasks]
        assert shown == ids, owner
    assert (await store.list(ListTasks(), "carol")).tasks == ()
    assert (await store.list(ListTasks(context_id="c-1"), "carol")).total_size == 0


@pytest.mark.parametrize("token", ["not base64!", "bm9waXBl", "MjAyMC0wMS0wMXx4"])
async def test_a_foreign_page_token_is_invalid_params(make_store: StoreFactory, token: str) -> None:
    with pytest.raises(A2AError) as raised:
        await make_store().list(ListTasks(page_token=token), None)
    assert raised.value.code is ErrorCode.INVALID_PARAMS


async def big_tasks(store: TaskStore, clock: Callable[[], datetime], count: int) -> list[str]:
    return [await finished(store, clock, f"{n:04d}" + "z" * 20_000) for n in range(count)]


async def test_a_page_is_bounded_in_bytes_and_its_token_goes_on(make_store: StoreFactory) -> None:
    clock = Ticking()
    store = make_store(clock=clock, max_page_bytes=200_000)
    ids = await big_tasks(store, clock, 30)
    seen: list[str] = []
    token = None
    while True:
        query = ListTasks(page_size=100, page_token=token, include_artifacts=True)
        page = await store.list(query, None)
        assert 0 < len(page.tasks) < 30 and page.total_size == 30
        # The estimate errs on the large side: an encoded page stays within the budget.
        encoded = json.dumps(V1.encode_page(page), ensure_ascii=False).encode()
        assert len(encoded) <= 200_000
        seen += [task.id for task in page.tasks]
        token = page.next_page_token
        if not token:
            break
    assert seen == ids[::-1]


async def test_a_page_holds_at_least_one_task_however_big(make_store: StoreFactory) -> None:
    clock = Ticking()
    store = make_store(clock=clock, max_page_bytes=1000)
    ids = await big_tasks(store, clock, 2)
    first = await store.list(ListTasks(page_size=100), None)
    assert [task.id for task in first.tasks] == [ids[1]]
    rest = await store.list(ListTasks(page_size=100, page_token=first.next_page_token), None)
    assert [task.id for task in rest.tasks] == [ids[0]] and rest.next_page_token == ""
