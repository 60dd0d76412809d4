"""Push notifications with the official clients: a2a-sdk 1.3.0 (v1.0, v0.3 compat and v1.0
over HTTP+JSON, in this process) and @a2a-js/sdk 1.3.0 on Node (v1.0, legacyCompat,
legacyCompat on v0.3, v1.0 over HTTP+JSON).

Each client sends with an inline config carrying a token to three receivers served here on
127.0.0.1 (which ADAPTER_PUSH_ALLOW_HOSTS allows): one that answers, one that answers 503
twice first, one that never answers. Then it makes, reads, lists and deletes a config
with the SDK's own calls, and tries two configs the adapter must refuse: the cloud
metadata address, and a name (localhost) that resolves to the allowed 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from a2a.client import A2ACardResolver
from a2a.types import (
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskPushNotificationConfig,
)
from a2a.types import TaskState as SdkTaskState
from a2a.utils.errors import A2AError as SdkError

from n8n_a2a.protocol.push import AllowList
from tests.interop import matrix, sdk_modes
from tests.interop.sdk_modes import SdkMode
from tests.support.adapter import AdapterFactory
from tests.support.push_receiver import PushReceiver, start_push_receiver
from tests.support.stub_webhook import StubWebhook

PUSH_TOKEN = "per-task-push-token"
# Slow enough that `working` is delivered before the task ends (a v0.3 receiver gets the
# task as it stands when the POST is made).
TEXT = "sleep:0.3"
METADATA = "http://169.254.169.254/latest/meta-data/"

Result = dict[str, Any]


class Receivers:
    def __init__(self, ok: PushReceiver, flaky: PushReceiver, dead: PushReceiver) -> None:
        self.ok, self.flaky, self.dead = ok, flaky, dead
        flaky.statuses = [503, 503]
        dead.hold = True

    def arguments(self) -> list[str]:
        localhost = f"http://localhost:{self.ok.port}/hook"
        return [self.ok.url, self.flaky.url, self.dead.url, METADATA, localhost]


@pytest.fixture
async def receivers(nursery: trio.Nursery) -> Receivers:
    return Receivers(*[await start_push_receiver(nursery) for _ in range(3)])


@pytest.fixture
async def adapter(stub: StubWebhook, start_adapter: AdapterFactory) -> str:
    url: str = await start_adapter(stub.url, push_allow_hosts=AllowList.parse("127.0.0.1"))
    return url


# What every client must see.


def _states(bodies: list[Any], version: str) -> list[str]:
    """The states the receiver was told of, in order, as v0.3 names."""
    if version == "0.3":
        return [body["status"]["state"] for body in bodies]
    return [
        body["statusUpdate"]["status"]["state"].removeprefix("TASK_STATE_").lower()
        for body in bodies
        if "statusUpdate" in body
    ]


async def check_push(result: Result, receivers: Receivers, version: str, caller_token: str) -> None:
    sent = result["sent"]["task"]
    assert sent["state"] == "completed"
    # The ok receiver: from `working` to the end, in order, each with the config's token.
    with trio.fail_after(10):
        while "completed" not in _states(receivers.ok.bodies(), version):
            await receivers.ok.wait_received(len(receivers.ok.received) + 1)
    assert _states(receivers.ok.bodies(), version) == ["working", "completed"]
    content_type = "application/a2a+json" if version == "1.0" else "application/json"
    for delivery in receivers.ok.received:
        assert delivery.headers["x-a2a-notification-token"] == PUSH_TOKEN
        assert delivery.headers["content-type"] == content_type
        assert "authorization" not in delivery.headers  # never the caller's token
        assert caller_token.encode() not in delivery.body

    # The flaky one: two 503s for the first update, then every update.
    with trio.fail_after(10):
        while "completed" not in _states(receivers.flaky.bodies(), version):
            await receivers.flaky.wait_received(len(receivers.flaky.received) + 1)
    answered = receivers.flaky.bodies()[2:]
    assert receivers.flaky.bodies()[0] == receivers.flaky.bodies()[1] == answered[0]
    assert _states(answered, version) == ["working", "completed"]

    # The dead one held up nothing.
    assert result["dead"]["task"]["state"] == "completed"
    assert result["deadMs"] < 5000  # its first attempt alone may take 10 s
    assert receivers.dead.held >= 1

    bridge = {"taskId": sent["id"], "id": "bridge", "url": receivers.ok.url, "token": PUSH_TOKEN}
    assert result["created"] == {"config": bridge}
    assert result["got"] == {"config": bridge}
    # The inline config, named after its task, is still there to read.
    assert [c["id"] for c in result["listed"]] == [sent["id"], "bridge"]
    assert result["afterDelete"]["error"]["code"] == -32001

    assert set(result["refused"]) == {METADATA, receivers.arguments()[-1]}
    for url, refused in result["refused"].items():
        assert refused["error"]["code"] == -32602, url
        assert "ADAPTER_PUSH_ALLOW_HOSTS" in refused["error"]["message"]
    assert "cloud metadata" in result["refused"][METADATA]["error"]["message"]
    localhost = result["refused"][receivers.arguments()[-1]]["error"]["message"]
    assert "its host resolves to a loopback address" in localhost
    assert "127.0.0.1" not in localhost and "::1" not in localhost


# a2a-sdk 1.3.0, in a worker thread with its own event loop.

_CODES = {"InvalidParamsError": -32602, "TaskNotFoundError": -32001}


def _failure(error: SdkError) -> Result:
    name = type(error).__name__
    return {"error": {"type": name, "code": _CODES.get(name), "message": error.message}}


def _state(task: Any) -> str:
    return str(SdkTaskState.Name(task.status.state)).removeprefix("TASK_STATE_").lower()


def _config(config: TaskPushNotificationConfig) -> Result:
    return {"taskId": config.task_id, "id": config.id, "url": config.url, "token": config.token}


async def _drive_sdk(base_url: str, urls: list[str], mode: SdkMode) -> Result:
    ok, flaky, dead, *refused = urls
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {matrix.TOKEN}"}) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        # The chat bridge's way: one config for every send of this client.
        client = mode.client(
            card,
            streaming=False,
            httpx_client=http,
            push_notification_config=TaskPushNotificationConfig(url=ok, token=PUSH_TOKEN),
        )

        async def send(url: str | None = None) -> Result:
            message = Message(
                role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text=TEXT)]
            )
            request = SendMessageRequest(message=message)
            if url is not None:
                inline = TaskPushNotificationConfig(url=url, token=PUSH_TOKEN)
                request.configuration.CopyFrom(
                    SendMessageConfiguration(task_push_notification_config=inline)
                )
            [event] = [e async for e in client.send_message(request)]
            return {"task": {"id": event.task.id, "state": _state(event.task)}}

        async def attempt(call: Any) -> Result:
            try:
                return {"config": _config(await call)}
            except SdkError as error:
                return _failure(error)

        result: Result = {"sent": await send(), "flaky": await send(flaky)}
        started = time.monotonic()
        result["dead"] = await send(dead)
        result["deadMs"] = (time.monotonic() - started) * 1000
        task_id = result["sent"]["task"]["id"]
        bridge = TaskPushNotificationConfig(task_id=task_id, id="bridge", url=ok, token=PUSH_TOKEN)
        named = GetTaskPushNotificationConfigRequest(task_id=task_id, id="bridge")
        result["created"] = await attempt(client.create_task_push_notification_config(bridge))
        result["got"] = await attempt(client.get_task_push_notification_config(named))
        listed = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task_id)
        )
        result["listed"] = [_config(c) for c in listed.configs]
        for _ in range(2):
            await client.delete_task_push_notification_config(
                DeleteTaskPushNotificationConfigRequest(task_id=task_id, id="bridge")
            )
        result["afterDelete"] = await attempt(client.get_task_push_notification_config(named))
        result["refused"] = {
            url: await attempt(
                client.create_task_push_notification_config(
                    TaskPushNotificationConfig(task_id=task_id, url=url)
                )
            )
            for url in refused
        }
        await client.close()
        return result


@sdk_modes.parametrize(" push")
async def test_python_sdk_push(adapter: str, receivers: Receivers, mode: SdkMode) -> None:
    drive = partial(asyncio.run, _drive_sdk(adapter, receivers.arguments(), mode))
    result = await trio.to_thread.run_sync(drive)
    await check_push(result, receivers, "0.3" if mode.v03 else "1.0", matrix.TOKEN)


# @a2a-js/sdk on Node, from its own npm install.

JS_VERSION = matrix.pinned_js_version("@a2a-js/sdk")


@pytest.fixture(scope="module")
def client_dir() -> Path:
    return matrix.node_client()


@pytest.mark.parametrize(
    "mode",
    [
        pytest.param(
            mode,
            marks=pytest.mark.client("@a2a-js/sdk (Node)", JS_VERSION, f"{mode} push"),
            id=mode.replace(" ", "-"),
        )
        for mode in matrix.JS_MODES
    ],
)
async def test_js_sdk_push(
    client_dir: Path,
    adapter: str,
    receivers: Receivers,
    mode: str,
    request: pytest.FixtureRequest,
) -> None:
    driver = client_dir / "drive.mjs"
    arguments = [TEXT, PUSH_TOKEN, *receivers.arguments()]
    result = await matrix.drive(["node", driver, adapter, matrix.TOKEN, mode, "push", *arguments])
    matrix.note_runtime(request, result)
    assert (result["protocolVersion"], result["transport"]) == matrix.JS_MODES[mode]
    await check_push(result, receivers, matrix.JS_MODES[mode][0], matrix.TOKEN)
