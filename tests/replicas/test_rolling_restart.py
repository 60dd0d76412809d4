"""A rolling restart under load stays whole: three replicas on one PostgreSQL, each stopped
(SIGTERM) and started again in turn, and the database restarted once, while callers of
every kind send 72 messages: blocking, streaming and polling ones, each with a push
config. A caller that finds its replica gone (a refused or cut connection, -32000)
sends the same message again to the next replica, as a client behind a load balancer
that retries does. Nothing is lost, each message runs the workflow once, every push is
delivered once."""

from __future__ import annotations

import itertools
import json
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import psycopg
import trio

from tests.replicas.replica import Replica, start_replica
from tests.support.postgres_server import PostgresServer
from tests.support.push_receiver import PushReceiver, start_push_receiver
from tests.support.stub_webhook import StubWebhook

V1 = {"A2A-Version": "1.0"}
MESSAGES = 72
KINDS = ("blocking", "streaming", "polling")
#: How long a caller keeps trying one message, from replica to replica.
PATIENCE = 60.0


class Balancer:
    """The replicas' URLs, handed out in turn; a stopped replica's taken out until its
    successor is in."""

    def __init__(self, replicas: list[Replica]) -> None:
        self.replicas = replicas
        self._turn = itertools.count()

    def next_url(self) -> str:
        live = [r.url for r in self.replicas if r.process.poll() is None]
        return live[next(self._turn) % len(live)] if live else self.replicas[0].url


def send_params(number: int, receiver: PushReceiver, *, return_now: bool) -> dict[str, Any]:
    message = {
        "messageId": f"rolling-{number}-{uuid.uuid4()}",
        "role": "ROLE_USER",
        # Slow enough that every stop finds calls under way, which its drain lets finish.
        "parts": [{"text": "sleep:0.4"}],
    }
    configuration: dict[str, Any] = {
        "taskPushNotificationConfig": {"url": receiver.url, "token": f"push-{number}"}
    }
    if return_now:
        configuration["returnImmediately"] = True
    return {"message": message, "configuration": configuration}


def envelope(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


class Caller:
    """One message's caller: sends it until it is answered, from replica to replica."""

    def __init__(self, balancer: Balancer, http: httpx.AsyncClient) -> None:
        self.balancer = balancer
        self.http = http
        self.tries = 0

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The result of a call that went through; a refusal of a replica going away (or of
        the database down) is tried again on the next one."""
        with trio.fail_after(PATIENCE):
            while True:
                self.tries += 1
                url = self.balancer.next_url()
                try:
                    reply = await self.http.post(url, json=envelope(method, params), headers=V1)
                    answer: dict[str, Any] = reply.json()
                except (httpx.TransportError, ValueError):
                    await trio.sleep(0.1)
                    continue
                if "result" in answer:
                    result: dict[str, Any] = answer["result"]
                    return result
                assert answer["error"]["code"] == -32000, answer  # busy, stopping, store down
                await trio.sleep(0.1)

    async def stream(self, params: dict[str, Any]) -> str:
        """The state a streaming send's stream ended in; a stream cut before its end is
        sent again (the same message: its task's stream)."""
        with trio.fail_after(PATIENCE):
            while True:
                self.tries += 1
                url = self.balancer.next_url()
                last = ""
                try:
                    document = envelope("SendStreamingMessage", params)
                    async with self.http.stream("POST", url, json=document, headers=V1) as reply:
                        async for line in reply.aiter_lines():
                            if not line.startswith("data: "):
                                continue
                            event = json.loads(line.removeprefix("data: "))
                            if "error" in event:
                                assert event["error"]["code"] == -32000, event
                                break
                            result = event["result"]
                            status = (result.get("statusUpdate") or result.get("task") or {}).get(
                                "status"
                            )
                            if status is not None:
                                last = status["state"]
                except httpx.TransportError:
                    pass
                if last in ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED"):
                    return last
                await trio.sleep(0.1)


async def one_message(
    number: int,
    balancer: Balancer,
    receiver: PushReceiver,
    http: httpx.AsyncClient,
    outcomes: dict[int, str],
    retried: list[int],
) -> None:
    caller = Caller(balancer, http)
    try:
        await _one(number, caller, receiver, outcomes)
    finally:
        if caller.tries > 1:
            retried.append(number)


async def _one(
    number: int, caller: Caller, receiver: PushReceiver, outcomes: dict[int, str]
) -> None:
    kind = KINDS[number % len(KINDS)]
    if kind == "blocking":
        task = (await caller.call("SendMessage", send_params(number, receiver, return_now=False)))[
            "task"
        ]
        outcomes[number] = task["status"]["state"]
    elif kind == "streaming":
        outcomes[number] = await caller.stream(send_params(number, receiver, return_now=False))
    else:
        made = await caller.call("SendMessage", send_params(number, receiver, return_now=True))
        task_id = made["task"]["id"]
        while True:
            task = await caller.call("GetTask", {"id": task_id})
            if task["status"]["state"] in ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED"):
                outcomes[number] = task["status"]["state"]
                return
            await trio.sleep(0.1)


async def start_three(
    stub: StubWebhook, store: str, tmp_path: Path, receiver: PushReceiver
) -> list[Replica]:
    settings = {
        "ADAPTER_LEASE_SECONDS": "3",
        "ADAPTER_PUSH_ALLOW_HOSTS": "127.0.0.1",
        "ADAPTER_SHUTDOWN_GRACE": "5",
    }
    return [await start_replica(stub.url, store, tmp_path, **settings) for _ in range(3)]


async def test_a_rolling_restart_and_a_database_restart_under_load_lose_nothing(
    stub: StubWebhook,
    postgres: PostgresServer,
    postgres_url: str,
    replicas: list[Replica],
    tmp_path: Path,
    nursery: trio.Nursery,
) -> None:
    receiver = await start_push_receiver(nursery)
    replicas.extend(await start_three(stub, postgres_url, tmp_path, receiver))
    balancer = Balancer(replicas)
    outcomes: dict[int, str] = {}
    settings = {
        "ADAPTER_LEASE_SECONDS": "3",
        "ADAPTER_PUSH_ALLOW_HOSTS": "127.0.0.1",
        "ADAPTER_SHUTDOWN_GRACE": "5",
    }

    retried: list[int] = []

    async def restarts() -> None:
        for index in range(3):
            await trio.sleep(2.0)
            old = replicas[index]
            assert await old.stop() == 0
            replicas[index] = await start_replica(stub.url, postgres_url, tmp_path, **settings)
            if index == 1:  # and once, the database
                postgres.stop()
                await trio.sleep(1.0)
                postgres.start()

    async with httpx.AsyncClient(timeout=30) as http:
        with trio.fail_after(180):
            async with trio.open_nursery() as load:
                load.start_soon(restarts)
                for number in range(MESSAGES):
                    load.start_soon(
                        one_message, number, balancer, receiver, http, outcomes, retried
                    )
                    await trio.sleep(0.15)  # 72 messages over some 11 s, the restarts among them
    print(
        "retried", len(retried), "deliveries", len(receiver.received), "calls", len(stub.received)
    )
    assert retried, "no caller had to send a message again: no restart was felt"
    # None lost: every message answered, by its own task's answer.
    assert Counter(outcomes.values()) == {"TASK_STATE_COMPLETED": MESSAGES}, _unfinished(
        postgres_url
    )
    # One workflow call a message, however many times its caller sent it.
    runs = Counter(r.json["messageId"] for r in stub.received)
    assert len(runs) == MESSAGES and set(runs.values()) == {1}, runs.most_common(3)
    # Every push delivered once: each task's events, none twice, its end among them.
    with trio.fail_after(20):
        while True:
            ends = [b for b in receiver.bodies() if _state(b) == "TASK_STATE_COMPLETED"]
            if len({_task(b) for b in ends}) == MESSAGES:
                break
            await receiver.wait_received(len(receiver.received) + 1)
    delivered = Counter((_task(b), _state(b)) for b in receiver.bodies())
    assert set(delivered.values()) == {1}, [k for k, n in delivered.items() if n > 1][:5]


def _task(body: dict[str, Any]) -> str:
    update = body.get("statusUpdate") or body.get("artifactUpdate") or {}
    return str(update.get("taskId", body.get("task", {}).get("id", "")))


def _state(body: dict[str, Any]) -> str:
    update = body.get("statusUpdate")
    return str(update["status"]["state"]) if update else "artifact"


def _unfinished(store: str) -> list[tuple[Any, ...]]:
    """The tasks that did not complete, and why: what a failure of the test shows."""
    with psycopg.connect(store) as connection:
        rows = connection.execute(
            "SELECT id, state, metadata, status_message FROM a2a_tasks WHERE state <> 'completed'"
        )
        return list(rows.fetchall())
