"""Any replica answers for any task; nothing is left `working` when one dies or the
database restarts. Two real adapter processes on one PostgreSQL, in front of the stub."""

from __future__ import annotations

import json
import signal
import uuid
from pathlib import Path
from typing import Any

import httpx
import psycopg
import trio
from a2a.client import Client
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)

from tests.replicas.replica import Replica, rpc, start_replica, with_client
from tests.support.postgres_server import PostgresServer
from tests.support.push_receiver import start_push_receiver
from tests.support.stub_webhook import StubWebhook


def request(text: str, *, blocking: bool = True) -> SendMessageRequest:
    message = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text=text)])
    return SendMessageRequest(
        message=message, configuration=SendMessageConfiguration(return_immediately=not blocking)
    )


async def send(client: Client, text: str, *, blocking: bool = True) -> Task:
    [event] = [e async for e in client.send_message(request(text, blocking=blocking))]
    return event.task


async def get(url: str, task_id: str) -> Task:
    async def work(client: Client) -> Task:
        return await client.get_task(GetTaskRequest(id=task_id))

    return await with_client(url, work)


async def send_to(url: str, text: str, *, blocking: bool = True) -> Task:
    async def work(client: Client) -> Task:
        return await send(client, text, blocking=blocking)

    return await with_client(url, work)


async def subscribe(url: str, task_id: str) -> list[StreamResponse]:
    async def work(client: Client) -> list[StreamResponse]:
        return [e async for e in client.subscribe(SubscribeToTaskRequest(id=task_id))]

    return await with_client(url, work, streaming=True)


async def send_message_to(url: str, message: Message, answers: list[Task]) -> None:
    """Send this very message (its messageId as it is), blocking; its task to `answers`."""

    async def work(client: Client) -> Task:
        [event] = [e async for e in client.send_message(SendMessageRequest(message=message))]
        return event.task

    answers.append(await with_client(url, work))


def outcome(task: Task) -> str:
    return str(task.metadata["outcome"]) if "outcome" in task.metadata else ""


async def two(
    replicas: list[Replica], stub: StubWebhook, url: str, tmp_path: Path, **settings: str
) -> tuple[Replica, Replica]:
    for _ in range(2):
        replicas.append(await start_replica(stub.url, url, tmp_path, **settings))
    return replicas[-2], replicas[-1]


async def test_any_replica_answers_polls_cancels_and_streams_another_ones_task(
    stub: StubWebhook, postgres_url: str, replicas: list[Replica], tmp_path: Path
) -> None:
    a, b = await two(replicas, stub, postgres_url, tmp_path)

    # A non-blocking send on A, polled on B until it ends.
    sent = await send_to(a.url, "sleep:0.5", blocking=False)
    assert sent.status.state == TaskState.TASK_STATE_WORKING
    with trio.fail_after(10):
        # A client polling GetTask, as docs/calling.md tells it to.
        while (polled := await get(b.url, sent.id)).status.state == TaskState.TASK_STATE_WORKING:  # noqa: ASYNC110
            await trio.sleep(0.1)
    assert polled.status.state == TaskState.TASK_STATE_COMPLETED
    assert [p.text for p in polled.artifacts[0].parts] == ["slept"]

    # A cancel on B cuts the call A runs: its connection closes within a second.
    held = await send_to(a.url, "hold", blocking=False)
    await stub.wait_held()

    async def cancel(client: Client) -> Task:
        return await client.cancel_task(CancelTaskRequest(id=held.id))

    canceled = await with_client(b.url, cancel)
    assert canceled.status.state == TaskState.TASK_STATE_CANCELED
    with trio.fail_after(1):
        await stub.wait_released()
    assert (await get(a.url, held.id)).status.state == TaskState.TASK_STATE_CANCELED

    # A subscription on B follows a task A runs, to its end.
    running = await send_to(a.url, "sleep:1", blocking=False)
    with trio.fail_after(10):
        events = await subscribe(b.url, running.id)
    assert events[0].task.id == running.id
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    assert any(e.HasField("artifact_update") for e in events)

    # ListTasks on either replica shows every task.
    async def listed(client: Client) -> list[str]:
        page = await client.list_tasks(ListTasksRequest(page_size=10))
        return [t.id for t in page.tasks]

    assert set(await with_client(b.url, listed)) == {sent.id, held.id, running.id}


async def test_one_message_sent_to_both_replicas_at_once_runs_the_workflow_once(
    stub: StubWebhook, postgres_url: str, replicas: list[Replica], tmp_path: Path
) -> None:
    """A retry racing its first sending (a load balancer that failed over, a client that
    sent again at once), each to another replica: one task, one workflow call, and both
    answered with it. Three rounds, each with its own message."""
    a, b = await two(replicas, stub, postgres_url, tmp_path)
    for round_ in range(3):
        message = Message(
            role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text="sleep:0.3")]
        )
        answers: list[Task] = []
        with trio.fail_after(20):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(send_message_to, a.url, message, answers)
                nursery.start_soon(send_message_to, b.url, message, answers)
        assert [answer.status.state for answer in answers] == [TaskState.TASK_STATE_COMPLETED] * 2
        assert answers[0].id == answers[1].id, round_
        calls = [r.json["taskId"] for r in stub.received if r.json["taskId"] == answers[0].id]
        assert calls == [answers[0].id], round_


async def poll_11(url: str, task_id: str, generation: str) -> dict[str, Any]:
    """A v1.1 GetTask held until the task's generation passes `generation`."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "GetTask",
        "params": {"id": task_id, "currentGeneration": generation},
    }
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(url, json=body, headers={"A2A-Version": "1.1"})
    task: dict[str, Any] = response.json()["result"]
    return task


async def test_a_long_poll_on_one_replica_is_woken_by_a_change_on_another(
    stub: StubWebhook, postgres_url: str, replicas: list[Replica], tmp_path: Path
) -> None:
    """A2A 1.1 as drafted: a GetTask with currentGeneration held on B while A runs the
    task, answered at the task's end (not at B's 20 s timeout) with the generation A's
    moves made."""
    a, b = await two(replicas, stub, postgres_url, tmp_path, ADAPTER_LONG_POLL_TIMEOUT="20")
    sent = await send_to(a.url, "sleep:0.5", blocking=False)
    started = trio.current_time()
    with trio.fail_after(10):
        woken = await poll_11(b.url, sent.id, "2")
    assert woken["status"]["state"] == "TASK_STATE_COMPLETED"
    assert woken["generation"] == "4" and trio.current_time() - started < 10


async def test_a_replica_killed_mid_call_leaves_its_task_lost_not_working(
    stub: StubWebhook, postgres_url: str, replicas: list[Replica], tmp_path: Path
) -> None:
    a, b = await two(replicas, stub, postgres_url, tmp_path, ADAPTER_LEASE_SECONDS="2")
    held = await send_to(a.url, "hold", blocking=False)
    await stub.wait_held()
    streamed: list[StreamResponse] = []
    async with trio.open_nursery() as nursery:

        async def follow() -> None:
            streamed.extend(await subscribe(b.url, held.id))

        nursery.start_soon(follow)
        await trio.sleep(0.5)
        await a.stop(signal.SIGKILL)
        # The lease (2 s) runs out, then B's reaper (every 2/3 s) ends the task.
        with trio.fail_after(8):
            while (lost := await get(b.url, held.id)).status.state != TaskState.TASK_STATE_FAILED:  # noqa: ASYNC110
                await trio.sleep(0.2)
    assert outcome(lost) == "LOST"
    assert "may or may not have run" in lost.status.message.parts[0].text
    # The stream on B heard the end.
    assert streamed[-1].status_update.status.state == TaskState.TASK_STATE_FAILED


async def test_replicas_restarted_find_the_finished_tasks(
    stub: StubWebhook, postgres_url: str, replicas: list[Replica], tmp_path: Path
) -> None:
    a, b = await two(replicas, stub, postgres_url, tmp_path)
    answered = await send_to(a.url, "answer:12 pallets")
    escalated = await send_to(b.url, "escalate:ask a person")
    assert (await a.stop(), await b.stop()) == (0, 0)
    c, d = await two(replicas, stub, postgres_url, tmp_path)
    for url in (c.url, d.url):
        assert (await get(url, answered.id)).status.state == TaskState.TASK_STATE_COMPLETED
        assert outcome(await get(url, escalated.id)) == "ESCALATED"


async def test_a_database_restart_mid_load_refuses_clearly_then_recovers(
    stub: StubWebhook,
    postgres: PostgresServer,
    postgres_url: str,
    replicas: list[Replica],
    tmp_path: Path,
) -> None:
    a, b = await two(replicas, stub, postgres_url, tmp_path, ADAPTER_LEASE_SECONDS="5")
    answers: list[dict[str, object]] = []  # blocking sends, the load
    probed: list[dict[str, object]] = []  # non-blocking sends, ten a second
    stop_sending = trio.Event()

    def message(text: str) -> dict[str, object]:
        return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}

    async def sender(url: str) -> None:
        while not stop_sending.is_set():
            answers.append(await rpc(url, "SendMessage", {"message": message("sleep:0.2")}))
            await trio.sleep(0.02)

    async def prober() -> None:
        # A blocking sender waits out the outage with its task; these ask while it lasts.
        while not stop_sending.is_set():
            params = {"message": message("answer:ok"), "configuration": {"returnImmediately": True}}
            probed.append(await rpc(b.url, "SendMessage", params))
            await trio.sleep(0.1)

    async with trio.open_nursery() as nursery:
        for index in range(8):
            nursery.start_soon(sender, (a.url, b.url)[index % 2])
        nursery.start_soon(prober)
        await trio.sleep(1.5)
        postgres.stop()
        await trio.sleep(1.5)
        postgres.start()
        await trio.sleep(2.5)
        stop_sending.set()
    refused = [a for a in answers + probed if "error" in a]
    done = [a for a in answers if "result" in a]
    assert refused and done
    for answer in refused:
        error = answer["error"]
        assert isinstance(error, dict)
        assert error["code"] == -32000, error
        assert "The task store is unavailable" in error["message"], error
    # Sends answered after the database came back went through.
    assert "result" in answers[-1] and "result" in probed[-1]
    # Nothing is left working or waiting: what the outage interrupted ends, by its own
    # verdict recorded late or, past the lease, as LOST.
    with trio.fail_after(20), psycopg.connect(postgres_url) as connection:
        while True:
            (unfinished,) = connection.execute(
                "SELECT count(*) FROM a2a_tasks WHERE state IN ('submitted', 'working')"
            ).fetchone() or (0,)
            if unfinished == 0:
                break
            await trio.sleep(0.5)
        rows = connection.execute("SELECT state, count(*) FROM a2a_tasks GROUP BY state")
        states: dict[str, int] = dict(rows.fetchall())
    assert set(states) <= {"completed", "failed"}
    assert states["completed"] >= len(done)
    # Each replica said once that the store went away, and once that it came back.
    for replica in (a, b):
        events = [json.loads(line).get("event") for line in replica.log.read_text().splitlines()]
        assert events.count("store_down") == 1, replica.log.read_text()
        assert events.count("store_up") == 1, replica.log.read_text()


async def test_push_configs_hear_a_cancel_and_a_loss_made_by_the_other_replica(
    stub: StubWebhook,
    postgres_url: str,
    replicas: list[Replica],
    tmp_path: Path,
    nursery: trio.Nursery,
) -> None:
    receiver = await start_push_receiver(nursery)
    a, b = await two(
        replicas,
        stub,
        postgres_url,
        tmp_path,
        ADAPTER_PUSH_ALLOW_HOSTS="127.0.0.1",
        ADAPTER_LEASE_SECONDS="2",
    )

    def pushed(text: str) -> dict[str, object]:
        message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
        configuration = {
            "returnImmediately": True,
            "taskPushNotificationConfig": {"url": receiver.url},
        }
        return {"message": message, "configuration": configuration}

    canceled = (await rpc(a.url, "SendMessage", pushed("hold")))["result"]["task"]["id"]
    # Its config is there on the other replica too.
    listed = await rpc(b.url, "ListTaskPushNotificationConfigs", {"taskId": canceled})
    assert [c["url"] for c in listed["result"]["configs"]] == [receiver.url]
    assert "result" in await rpc(b.url, "CancelTask", {"id": canceled})
    with trio.fail_after(10):
        await receiver.wait_received(2)  # working, then the cancel made on B
    states = [body["statusUpdate"]["status"]["state"] for body in receiver.bodies()]
    assert states == ["TASK_STATE_WORKING", "TASK_STATE_CANCELED"]
    # The replica that delivers dies with its call: the one that ends the task LOST takes
    # over its configs, and the receiver hears the end.
    lost = (await rpc(a.url, "SendMessage", pushed("hold")))["result"]["task"]["id"]
    await stub.wait_held(2)
    with trio.fail_after(10):
        await receiver.wait_received(3)  # its `working`, from A
    await a.stop(signal.SIGKILL)
    with trio.fail_after(10):
        await receiver.wait_received(4)
    [last] = receiver.bodies()[3:]
    assert last["statusUpdate"]["taskId"] == lost
    assert last["statusUpdate"]["status"]["state"] == "TASK_STATE_FAILED"


async def test_a_database_outage_longer_than_the_lease_loses_no_live_call(
    stub: StubWebhook,
    postgres: PostgresServer,
    postgres_url: str,
    replicas: list[Replica],
    tmp_path: Path,
) -> None:
    """The database is down for three leases while a call runs on A and its workflow
    answers: when it is back, A renews its lease first thing and records the verdict, and
    B's reaper, which watches a lease of its own first, never ends the task LOST."""
    a, _ = await two(
        replicas,
        stub,
        postgres_url,
        tmp_path,
        ADAPTER_LEASE_SECONDS="2",
        ADAPTER_WEBHOOK_TIMEOUT="30",
    )
    sent = await send_to(a.url, "sleep:2", blocking=False)
    assert sent.status.state == TaskState.TASK_STATE_WORKING
    await trio.sleep(0.5)
    postgres.stop()
    await trio.sleep(6)  # the workflow answered at 2 s, into the outage
    postgres.start()
    with trio.fail_after(20), psycopg.connect(postgres_url) as connection:
        while True:
            row = connection.execute(
                "SELECT state, metadata->>'outcome' FROM a2a_tasks WHERE id = %s", (sent.id,)
            ).fetchone()
            if row is not None and row[0] not in ("submitted", "working"):
                break
            await trio.sleep(0.2)
    assert row == ("completed", "ANSWERED")
    assert (await get(a.url, sent.id)).artifacts[0].parts[0].text == "slept"


async def test_a_subscriber_on_another_replica_hears_each_chunk_as_it_is_relayed(
    stub: StubWebhook, postgres_url: str, replicas: list[Replica], tmp_path: Path
) -> None:
    """A streamed reply on A (ADAPTER_WEBHOOK_STREAMING): a subscription on B hears its
    first chunk while the workflow still holds the rest, then the whole answer and the
    end."""
    a, b = await two(replicas, stub, postgres_url, tmp_path, ADAPTER_WEBHOOK_STREAMING="true")
    sent = await send_to(a.url, "stream-late:3", blocking=False)
    body = {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": sent.id}}
    events: list[dict[str, Any]] = []
    released = False
    async with (
        httpx.AsyncClient(timeout=30) as http,
        http.stream("POST", b.url, json=body, headers={"A2A-Version": "1.0"}) as stream,
    ):
        with trio.fail_after(20):
            async for line in stream.aiter_lines():
                if not line.startswith("data: "):
                    continue
                result = json.loads(line.removeprefix("data: "))["result"]
                events.append(result)
                update = result.get("artifactUpdate")
                if update is not None and not update["lastChunk"] and not released:
                    # The first chunk, heard on B while A's workflow is held: let it go on.
                    assert stub.streamed == 0
                    stub.release_streams()
                    released = True
    chunks = [e["artifactUpdate"] for e in events if "artifactUpdate" in e]
    assert chunks[0]["artifact"]["parts"][0]["text"] == "chunk 1 "
    assert not chunks[0]["lastChunk"] and chunks[-1]["lastChunk"]
    assert chunks[-1]["artifact"]["parts"][0]["text"] == "chunk 1 chunk 2 chunk 3 "
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_subscriber_who_joins_mid_answer_on_another_replica_begins_with_it(
    stub: StubWebhook, postgres_url: str, replicas: list[Replica], tmp_path: Path
) -> None:
    """A streamed reply on A, its first chunk relayed and the rest held: a subscription on
    B begins with the task holding that chunk (at its generation), then hears the rest,
    the whole answer and the end; the answer so far is gone from the database then."""
    a, b = await two(replicas, stub, postgres_url, tmp_path, ADAPTER_WEBHOOK_STREAMING="true")
    sent = await send_to(a.url, "stream-held:3", blocking=False)
    await stub.wait_held()
    await trio.sleep(0.5)  # the first chunk relayed, and kept
    body = {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": sent.id}}
    events: list[dict[str, Any]] = []
    async with (
        httpx.AsyncClient(timeout=30) as http,
        http.stream("POST", b.url, json=body, headers={"A2A-Version": "1.1"}) as stream,
    ):
        with trio.fail_after(20):
            async for line in stream.aiter_lines():
                if line.startswith("data: "):
                    events.append(json.loads(line.removeprefix("data: "))["result"])
                    if len(events) == 1:
                        stub.release_streams()
    first = events[0]["task"]
    assert first["artifacts"][-1]["parts"] == [{"text": "chunk 1 "}]
    assert first["generation"] == "3"  # working 2, its first chunk 3
    rest = [e["artifactUpdate"] for e in events[1:] if "artifactUpdate" in e]
    assert rest[0]["append"] and rest[0]["artifact"]["parts"][0]["text"].startswith("chunk 2")
    assert rest[-1]["artifact"]["parts"][0]["text"] == "chunk 1 chunk 2 chunk 3 "
    generations = [int(next(iter(e.values()))["generation"]) for e in events[1:]]
    assert generations == list(range(4, 4 + len(generations)))
    with psycopg.connect(postgres_url) as connection:
        kept = connection.execute(
            "SELECT count(*) FROM a2a_task_relays WHERE task_id = %s", (sent.id,)
        ).fetchone()
    assert kept == (0,)
