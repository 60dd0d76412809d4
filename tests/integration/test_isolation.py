"""Isolation by token on every method that names a task, in both bindings: to a second
caller another's task does not exist. Each answer is compared with the answer for a task
id nobody ever made, so a foreign task gives nothing away (not even that it exists), and
nothing a second caller does reaches the task, its push configs or the workflow.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import trio

from n8n_a2a.protocol.push import AllowList
from tests.support.adapter import AdapterFactory
from tests.support.jsonrpc import V1, call, rpc, send_v1
from tests.support.stub_webhook import StubWebhook

Headers = dict[str, str]
ALICE, BOB = {"Authorization": "Bearer alice.token"}, {"Authorization": "Bearer bob.token"}
CONFIG = {"url": "http://127.0.0.1:9/hook", "token": "t"}


@dataclass(frozen=True)
class Answer:
    """What one attempt got, in a shape both bindings share: (code or status, message)."""

    code: int
    message: str

    def shown_for(self, task_id: str) -> Answer:
        return Answer(self.code, self.message.replace(task_id, "<id>"))


Attempt = Callable[[str, str, Headers], Awaitable[Answer]]


async def jsonrpc(
    adapter: str, method: str, headers: Headers, version: Headers = V1, **params: object
) -> Answer:
    reply = await rpc(adapter, call(method, **params), {**version, **headers})
    assert "error" in reply, (method, reply)
    return Answer(reply["error"]["code"], reply["error"]["message"])


async def rest(adapter: str, verb: str, path: str, headers: Headers, body: Any = None) -> Answer:
    async with httpx.AsyncClient(timeout=10) as http:
        reply = await http.request(verb, adapter + path, json=body, headers={**V1, **headers})
    assert reply.status_code >= 400, (verb, path, reply.text)
    return Answer(reply.status_code, reply.json()["error"]["message"])


async def send_to_the_task(adapter: str, task_id: str, headers: Headers) -> Answer:
    document = send_v1("answer:more")
    document["params"]["message"]["taskId"] = task_id
    reply = await rpc(adapter, document, {**V1, **headers})
    return Answer(reply["error"]["code"], reply["error"]["message"])


V03: Headers = {}
PUSH = "/pushNotificationConfigs"
ATTEMPTS: dict[str, Attempt] = {
    "GetTask": lambda a, t, h: jsonrpc(a, "GetTask", h, id=t),
    "CancelTask": lambda a, t, h: jsonrpc(a, "CancelTask", h, id=t),
    "SubscribeToTask": lambda a, t, h: jsonrpc(a, "SubscribeToTask", h, id=t),
    "SendMessage to the task": send_to_the_task,
    "CreateTaskPushNotificationConfig": lambda a, t, h: jsonrpc(
        a, "CreateTaskPushNotificationConfig", h, taskId=t, id="c2", url=CONFIG["url"]
    ),
    "GetTaskPushNotificationConfig": lambda a, t, h: jsonrpc(
        a, "GetTaskPushNotificationConfig", h, taskId=t, id="c1"
    ),
    "ListTaskPushNotificationConfigs": lambda a, t, h: jsonrpc(
        a, "ListTaskPushNotificationConfigs", h, taskId=t
    ),
    "DeleteTaskPushNotificationConfig": lambda a, t, h: jsonrpc(
        a, "DeleteTaskPushNotificationConfig", h, taskId=t, id="c1"
    ),
    "tasks/pushNotificationConfig/set": lambda a, t, h: jsonrpc(
        a, "tasks/pushNotificationConfig/set", h, V03, taskId=t, pushNotificationConfig=CONFIG
    ),
    "tasks/pushNotificationConfig/get": lambda a, t, h: jsonrpc(
        a, "tasks/pushNotificationConfig/get", h, V03, id=t, pushNotificationConfigId="c1"
    ),
    "tasks/pushNotificationConfig/list": lambda a, t, h: jsonrpc(
        a, "tasks/pushNotificationConfig/list", h, V03, id=t
    ),
    "tasks/pushNotificationConfig/delete": lambda a, t, h: jsonrpc(
        a, "tasks/pushNotificationConfig/delete", h, V03, id=t, pushNotificationConfigId="c1"
    ),
    "GET /tasks/{id}": lambda a, t, h: rest(a, "GET", f"tasks/{t}", h),
    "POST /tasks/{id}:cancel": lambda a, t, h: rest(a, "POST", f"tasks/{t}:cancel", h, {}),
    "POST /tasks/{id}:subscribe": lambda a, t, h: rest(a, "POST", f"tasks/{t}:subscribe", h, {}),
    "GET /tasks/{id}:subscribe": lambda a, t, h: rest(a, "GET", f"tasks/{t}:subscribe", h),
    "POST /tasks/{id}/pushNotificationConfigs": lambda a, t, h: rest(
        a, "POST", f"tasks/{t}{PUSH}", h, {"id": "c2", **CONFIG}
    ),
    "GET /tasks/{id}/pushNotificationConfigs": lambda a, t, h: rest(
        a, "GET", f"tasks/{t}{PUSH}", h
    ),
    "GET /tasks/{id}/pushNotificationConfigs/{id}": lambda a, t, h: rest(
        a, "GET", f"tasks/{t}{PUSH}/c1", h
    ),
    "DELETE /tasks/{id}/pushNotificationConfigs/{id}": lambda a, t, h: rest(
        a, "DELETE", f"tasks/{t}{PUSH}/c1", h
    ),
}


@pytest.fixture
async def pushing(stub: StubWebhook, start_adapter: AdapterFactory) -> str:
    # The held task must still be working at the end, however slow the machine.
    allowed = AllowList.parse("127.0.0.1")
    adapter: str = await start_adapter(stub.url, push_allow_hosts=allowed, webhook_timeout=300)
    return adapter


async def alices_tasks(adapter: str, stub: StubWebhook) -> tuple[str, str]:
    """A task of Alice's still working and one done, each with her push config `c1`."""
    held = await rpc(adapter, send_v1("hold", returnImmediately=True), {**V1, **ALICE})
    done = await rpc(adapter, send_v1("answer:secret plans"), {**V1, **ALICE})
    ids = held["result"]["task"]["id"], done["result"]["task"]["id"]
    with trio.fail_after(5):
        await stub.wait_held()
    for task_id in ids:
        document = call("CreateTaskPushNotificationConfig", taskId=task_id, id="c1", **CONFIG)
        assert "result" in await rpc(adapter, document, {**V1, **ALICE})
    return ids


async def listed(adapter: str, headers: Headers) -> tuple[list[str], list[str]]:
    """The task ids ListTasks shows the caller, in JSON-RPC and in HTTP+JSON."""
    page = (await rpc(adapter, call("ListTasks"), {**V1, **headers}))["result"]
    async with httpx.AsyncClient(timeout=10) as http:
        other = (await http.get(adapter + "tasks", headers={**V1, **headers})).json()
    return [t["id"] for t in page["tasks"]], [t["id"] for t in other["tasks"]]


@pytest.mark.parametrize("name", list(ATTEMPTS))
async def test_a_second_caller_finds_no_task_of_anothers_on_any_method(
    pushing: str, stub: StubWebhook, name: str
) -> None:
    attempt = ATTEMPTS[name]
    held_id, done_id = await alices_tasks(pushing, stub)
    calls = len(stub.received)
    unknown_id = str(uuid.uuid4())
    for other in (BOB, {}):
        unknown = (await attempt(pushing, unknown_id, other)).shown_for(unknown_id)
        assert unknown.code in (-32001, 404), (name, unknown)
        for task_id in (held_id, done_id):
            assert (await attempt(pushing, task_id, other)).shown_for(task_id) == unknown, name
        assert await listed(pushing, other) == ([], [])
    # Nothing of Alice's moved: her tasks, her configs, the workflow's calls.
    assert len(stub.received) == calls
    mine, also_mine = await listed(pushing, ALICE)
    assert sorted(mine) == sorted(also_mine) == sorted([done_id, held_id])
    for task_id, state in ((held_id, "TASK_STATE_WORKING"), (done_id, "TASK_STATE_COMPLETED")):
        task = (await rpc(pushing, call("GetTask", id=task_id), {**V1, **ALICE}))["result"]
        assert task["status"]["state"] == state
        document = call("ListTaskPushNotificationConfigs", taskId=task_id)
        configs = (await rpc(pushing, document, {**V1, **ALICE}))["result"]["configs"]
        assert [config["id"] for config in configs] == ["c1"], name
