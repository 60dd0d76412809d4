"""Push notifications over real HTTP: the config methods in both versions, inline configs,
deliveries to receivers on 127.0.0.1, the address policy, metrics and shutdown."""

from __future__ import annotations

import logging
import re
import socket
import uuid
from functools import partial
from typing import Any

import httpx
import pytest
import trio

from n8n_a2a.protocol.push import AllowList
from n8n_a2a.push import service
from n8n_a2a.server import serve
from tests.support.adapter import AdapterFactory, free_port, make_settings
from tests.support.jsonrpc import V1, call, rpc, send_v03, send_v1, wait_for_state
from tests.support.push import Blackhole
from tests.support.push_receiver import PushReceiver, start_push_receiver
from tests.support.stub_webhook import StubWebhook

ALLOW_LOOPBACK = AllowList.parse("127.0.0.1")
CALLER_TOKEN = "eyJhbGciOi.caller-token"


@pytest.fixture
async def pushing(stub: StubWebhook, start_adapter: AdapterFactory) -> str:
    url: str = await start_adapter(stub.url, push_allow_hosts=ALLOW_LOOPBACK)
    return url


@pytest.fixture
async def receiver(nursery: trio.Nursery) -> PushReceiver:
    return await start_push_receiver(nursery)


def inline_v1(text: str, url: str, **config: Any) -> dict[str, Any]:
    return send_v1(text, taskPushNotificationConfig={"url": url, **config})


def kinds(receiver: PushReceiver) -> list[str]:
    shown = []
    for body in receiver.bodies():
        [(member, event)] = body.items()
        shown.append(f"{member} {event.get('status', {}).get('state', '')}".strip())
    return shown


async def test_an_inline_v1_config_hears_every_update_from_the_first_with_its_token(
    pushing: str, receiver: PushReceiver
) -> None:
    headers = {**V1, "Authorization": f"Bearer {CALLER_TOKEN}"}
    document = inline_v1("answer:12 pallets", receiver.url, token="per-task-token")
    task = (await rpc(pushing, document, headers))["result"]["task"]
    with trio.fail_after(10):
        await receiver.wait_received(3)
    assert kinds(receiver) == [
        "statusUpdate TASK_STATE_WORKING",
        "artifactUpdate",
        "statusUpdate TASK_STATE_COMPLETED",
    ]
    assert {b[next(iter(b))]["taskId"] for b in receiver.bodies()} == {task["id"]}
    for delivery in receiver.received:
        assert delivery.headers["x-a2a-notification-token"] == "per-task-token"
        assert delivery.headers["content-type"] == "application/a2a+json"
        # The caller's own token goes to the workflow only, never to a receiver.
        assert "authorization" not in delivery.headers
        assert "x-subject-token" not in delivery.headers
        assert CALLER_TOKEN.encode() not in delivery.body


async def test_an_inline_v03_config_gets_the_task_as_v03_receivers_expect(
    pushing: str, receiver: PushReceiver
) -> None:
    document = send_v03("answer:yes")
    document["params"]["configuration"]["pushNotificationConfig"] = {
        "url": receiver.url,
        "token": "tok",
        "authentication": {"schemes": ["Bearer"], "credentials": "receiver-secret"},
    }
    task = (await rpc(pushing, document))["result"]
    await wait_for_state(pushing, task["id"], "TASK_STATE_COMPLETED")
    with trio.fail_after(10):
        while not receiver.received or receiver.bodies()[-1]["status"]["state"] != "completed":
            await receiver.wait_received(len(receiver.received) + 1)
    assert {body["kind"] for body in receiver.bodies()} == {"task"}
    assert {body["id"] for body in receiver.bodies()} == {task["id"]}
    assert receiver.bodies()[-1]["artifacts"][0]["parts"] == [{"kind": "text", "text": "yes"}]
    for delivery in receiver.received:
        assert delivery.headers["content-type"] == "application/json"
        assert delivery.headers["authorization"] == "Bearer receiver-secret"
        assert delivery.headers["x-a2a-notification-token"] == "tok"


async def test_v1_config_methods_on_a_finished_task(pushing: str) -> None:
    task = (await rpc(pushing, send_v1("answer:x"), V1))["result"]["task"]
    config = {
        "taskId": task["id"],
        "id": "bridge",
        "url": "https://example.com/tck-push-webhook",
        "authentication": {"scheme": "Bearer", "credentials": "c"},
    }
    # Credentials are write-only: no answer carries them back.
    as_read = {**config, "authentication": {"scheme": "Bearer"}}
    created = await rpc(pushing, call("CreateTaskPushNotificationConfig", **config), V1)
    assert created["result"] == as_read
    got = await rpc(
        pushing, call("GetTaskPushNotificationConfig", taskId=task["id"], id="bridge"), V1
    )
    assert got["result"] == as_read
    listed = await rpc(pushing, call("ListTaskPushNotificationConfigs", taskId=task["id"]), V1)
    assert listed["result"] == {"configs": [as_read], "nextPageToken": ""}
    for _ in range(2):  # idempotent
        deleted = await rpc(
            pushing, call("DeleteTaskPushNotificationConfig", taskId=task["id"], id="bridge"), V1
        )
        assert deleted["result"] == {}
    gone = await rpc(
        pushing, call("GetTaskPushNotificationConfig", taskId=task["id"], id="bridge"), V1
    )
    assert gone["error"]["code"] == -32001
    assert gone["error"]["data"][0]["reason"] == "TASK_NOT_FOUND"
    listed = await rpc(pushing, call("ListTaskPushNotificationConfigs", taskId=task["id"]), V1)
    assert listed["result"]["configs"] == []


async def test_v03_config_methods(pushing: str) -> None:
    task = (await rpc(pushing, send_v03("answer:x")))["result"]
    config = {"url": "https://example.com/hook", "token": "t"}
    created = await rpc(
        pushing,
        call("tasks/pushNotificationConfig/set", taskId=task["id"], pushNotificationConfig=config),
    )
    # Without an id, the config is named after its task, as the SDKs do.
    expected = {"taskId": task["id"], "pushNotificationConfig": {"id": task["id"], **config}}
    assert created["result"] == expected
    got = await rpc(pushing, call("tasks/pushNotificationConfig/get", id=task["id"]))
    assert got["result"] == expected
    listed = await rpc(pushing, call("tasks/pushNotificationConfig/list", id=task["id"]))
    assert listed["result"] == [expected]
    delete = call(
        "tasks/pushNotificationConfig/delete", id=task["id"], pushNotificationConfigId=task["id"]
    )
    assert (await rpc(pushing, delete))["result"] is None
    assert (await rpc(pushing, delete))["result"] is None
    assert (await rpc(pushing, call("tasks/pushNotificationConfig/list", id=task["id"])))[
        "result"
    ] == []


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("CreateTaskPushNotificationConfig", {"url": "https://example.com/"}),
        ("GetTaskPushNotificationConfig", {"id": "c"}),
        ("ListTaskPushNotificationConfigs", {}),
        ("DeleteTaskPushNotificationConfig", {"id": "c"}),
    ],
)
async def test_config_methods_on_an_unknown_task_are_32001(
    pushing: str, method: str, params: dict[str, Any]
) -> None:
    reply = await rpc(pushing, call(method, taskId=str(uuid.uuid4()), **params), V1)
    assert reply["error"]["code"] == -32001


@pytest.mark.parametrize(
    ("url", "words"),
    [
        (
            "http://169.254.169.254/latest/meta-data/",
            r"169\.254\.169\.254 is the cloud metadata address",
        ),
        ("http://10.0.0.7:8080/hook", r"10\.0\.0\.7 is a private address"),
        ("http://[::1]:8080/hook", r"::1 is a loopback address"),
        # 127.0.0.1 is allowed, a name that resolves to it (or to ::1) is not; and which
        # address the name resolves to is not the caller's to learn.
        ("http://localhost:8080/hook", r"its host resolves to a loopback address;"),
    ],
)
async def test_a_config_leading_where_the_policy_refuses_is_32602(
    pushing: str, url: str, words: str
) -> None:
    task = (await rpc(pushing, send_v1("answer:x"), V1))["result"]["task"]
    reply = await rpc(
        pushing, call("CreateTaskPushNotificationConfig", taskId=task["id"], url=url), V1
    )
    assert reply["error"]["code"] == -32602
    assert re.search(words, reply["error"]["message"])
    assert "ADAPTER_PUSH_ALLOW_HOSTS" in reply["error"]["message"]
    # An inline one is refused before a task is made.
    sent = await rpc(pushing, inline_v1("answer:x", url), V1)
    assert sent["error"]["code"] == -32602
    listed = await rpc(pushing, call("ListTasks"), V1)
    assert len(listed["result"]["tasks"]) == 1


async def test_a_config_on_a_running_task_hears_the_rest_of_it(
    pushing: str, stub: StubWebhook, receiver: PushReceiver
) -> None:
    task = (await rpc(pushing, send_v1("hold", returnImmediately=True), V1))["result"]["task"]
    created = await rpc(
        pushing, call("CreateTaskPushNotificationConfig", taskId=task["id"], url=receiver.url), V1
    )
    assert created["result"]["id"] == task["id"]
    await rpc(pushing, call("CancelTask", id=task["id"]), V1)
    with trio.fail_after(10):
        await receiver.wait_received(1)
    assert kinds(receiver) == ["statusUpdate TASK_STATE_CANCELED"]


async def test_at_most_the_configured_number_of_configs_per_task(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start_adapter(stub.url, push_max_configs=2)
    task = (await rpc(adapter, send_v1("answer:x"), V1))["result"]["task"]

    async def create(config_id: str) -> dict[str, Any]:
        document = call(
            "CreateTaskPushNotificationConfig",
            taskId=task["id"],
            id=config_id,
            url=f"https://example.com/{config_id}",
        )
        return await rpc(adapter, document, V1)

    assert "result" in await create("a")
    assert "result" in await create("b")
    refused = await create("c")
    assert refused["error"]["code"] == -32602
    assert "ADAPTER_PUSH_MAX_CONFIGS" in refused["error"]["message"]
    assert "result" in await create("a")  # a replacement is no new config


async def test_a_dead_receiver_does_not_hold_up_a_blocking_send(
    pushing: str, receiver: PushReceiver
) -> None:
    receiver.hold = True
    with trio.fail_after(5):  # the receiver's attempt may take 10 s
        reply = await rpc(pushing, inline_v1("answer:fast", receiver.url), V1)
    assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_metrics_count_deliveries_and_attempts(pushing: str, receiver: PushReceiver) -> None:
    receiver.statuses = [503]
    await rpc(pushing, inline_v1("answer:x", receiver.url), V1)
    with trio.fail_after(10):
        await receiver.wait_received(4)
    async with httpx.AsyncClient() as client:
        # The receiver has answered the last one; its delivery is counted a moment later.
        while 'n8n_a2a_push_deliveries_total{result="delivered"} 3.0' not in (  # noqa: ASYNC110
            text := (await client.get(pushing + "metrics")).text
        ):
            await trio.sleep(0.02)
    assert "n8n_a2a_push_attempts_total 4.0" in text
    assert "n8n_a2a_push_delivery_seconds_count 3.0" in text
    assert "n8n_a2a_push_updates_queued 0.0" in text
    assert 'n8n_a2a_push_deliveries_total{result="blocked"} 0.0' in text


async def test_shutdown_gives_deliveries_the_grace_then_logs_the_undelivered(
    stub: StubWebhook,
    receiver: PushReceiver,
    nursery: trio.Nursery,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    receiver.hold = True
    port = free_port()
    public_url = f"http://127.0.0.1:{port}/"
    settings = make_settings(
        stub.url,
        port=port,
        public_url=public_url,
        shutdown_grace=0.5,
        push_allow_hosts=ALLOW_LOOPBACK,
    )
    stop, stopped = trio.Event(), trio.Event()

    async def run(task_status: trio.TaskStatus[list[str]]) -> None:
        await serve(settings, shutdown_trigger=stop.wait, task_status=task_status)
        stopped.set()

    await nursery.start(partial(run))
    await rpc(public_url, inline_v1("answer:x", receiver.url), V1)
    with trio.fail_after(5):
        await receiver.wait_held()
    stop.set()
    with trio.fail_after(10):
        await stopped.wait()
    [stop_line] = [r for r in caplog.records if getattr(r, "fields", {}).get("event") == "stop"]
    assert getattr(stop_line, "fields")["push_undelivered"] == 3  # noqa: B009 - set through `extra`
    undelivered = [
        r for r in caplog.records if getattr(r, "fields", {}).get("result") == "undelivered"
    ]
    assert len(undelivered) == 1
    assert getattr(undelivered[0], "fields")["host"] == "127.0.0.1"  # noqa: B009


async def test_no_token_or_credentials_reach_a_log_line(
    pushing: str, receiver: PushReceiver, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    receiver.statuses = [503, 401]
    headers = {**V1, "Authorization": f"Bearer {CALLER_TOKEN}"}
    document = inline_v1(
        "answer:x",
        receiver.url + "?key=url-secret",
        token="push-token-secret",
        authentication={"scheme": "Bearer", "credentials": "credentials-secret"},
    )
    await rpc(pushing, document, headers)
    with trio.fail_after(10):
        await receiver.wait_received(4)
    # The 401 ended the first update's delivery (logged) before the next one was sent.
    results = [getattr(r, "fields", {}).get("result") for r in caplog.records]
    assert "rejected" in results
    for secret in (CALLER_TOKEN, "push-token-secret", "credentials-secret"):
        assert secret not in caplog.text  # at any level, httpx's and httpcore's lines too
    # The URL's path and query may be a secret too: ours name its host only. (httpx's own
    # request lines, which name the URL, are kept out of the log by observability/logs.py.)
    ours = [r for r in caplog.records if r.name.startswith("n8n_a2a")]
    assert not any("url-secret" in f"{r.getMessage()} {getattr(r, 'fields', '')}" for r in ours)


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("CreateTaskPushNotificationConfig", {"url": "https://example.com/"}),
        ("GetTaskPushNotificationConfig", {"id": "bridge"}),
        ("ListTaskPushNotificationConfigs", {}),
        ("DeleteTaskPushNotificationConfig", {"id": "bridge"}),
    ],
)
async def test_config_methods_on_another_callers_task_are_32001(
    pushing: str, method: str, params: dict[str, Any]
) -> None:
    owner = {**V1, "Authorization": "Bearer owner-token"}
    other = {**V1, "Authorization": "Bearer another-token"}
    task = (await rpc(pushing, send_v1("answer:x"), owner))["result"]["task"]
    config = call(
        "CreateTaskPushNotificationConfig", taskId=task["id"], id="bridge", url="https://e.com/"
    )
    assert "result" in await rpc(pushing, config, owner)
    refused = await rpc(pushing, call(method, taskId=task["id"], **params), other)
    assert refused["error"]["code"] == -32001
    assert refused["error"]["message"] == f"Task not found: {task['id']}"
    # The owner's config is untouched.
    got = call("GetTaskPushNotificationConfig", taskId=task["id"], id="bridge")
    assert (await rpc(pushing, got, owner))["result"]["url"] == "https://e.com/"


async def test_a_question_and_its_next_turn_reach_the_receiver(
    stub: StubWebhook, start_adapter: AdapterFactory, receiver: PushReceiver
) -> None:
    adapter = await start_adapter(
        stub.url, allow_input_required=True, push_allow_hosts=ALLOW_LOOPBACK
    )
    document = inline_v1("ask:Which item?", receiver.url, id="bridge", token="tok")
    task = (await rpc(adapter, document, V1))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    with trio.fail_after(10):
        await receiver.wait_received(2)
    # The next turn, as the TCK sends it: naming the task, without a config of its own.
    follow_up = send_v1("answer:flour, 12 pallets")
    follow_up["params"]["message"]["taskId"] = task["id"]
    done = (await rpc(adapter, follow_up, V1))["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    with trio.fail_after(10):
        await receiver.wait_received(6)
    assert kinds(receiver) == [
        "statusUpdate TASK_STATE_WORKING",
        "statusUpdate TASK_STATE_INPUT_REQUIRED",
        "statusUpdate TASK_STATE_SUBMITTED",
        "statusUpdate TASK_STATE_WORKING",
        "artifactUpdate",
        "statusUpdate TASK_STATE_COMPLETED",
    ]
    assert {d.headers["x-a2a-notification-token"] for d in receiver.received} == {"tok"}


async def test_a_next_turn_may_bring_its_own_config(
    stub: StubWebhook, start_adapter: AdapterFactory, nursery: trio.Nursery
) -> None:
    first, second = [await start_push_receiver(nursery) for _ in range(2)]
    adapter = await start_adapter(
        stub.url, allow_input_required=True, push_allow_hosts=ALLOW_LOOPBACK
    )
    task = (await rpc(adapter, inline_v1("ask:Which item?", first.url), V1))["result"]["task"]
    follow_up = inline_v1("answer:flour", second.url, id="second")
    follow_up["params"]["message"]["taskId"] = task["id"]
    await rpc(adapter, follow_up, V1)
    with trio.fail_after(10):
        await first.wait_received(6)
        await second.wait_received(4)
    # The second config hears the turn it came with from its first update on.
    assert kinds(second) == [
        "statusUpdate TASK_STATE_SUBMITTED",
        "statusUpdate TASK_STATE_WORKING",
        "artifactUpdate",
        "statusUpdate TASK_STATE_COMPLETED",
    ]
    listed = await rpc(adapter, call("ListTaskPushNotificationConfigs", taskId=task["id"]), V1)
    assert [c["id"] for c in listed["result"]["configs"]] == [task["id"], "second"]


async def test_a_second_anonymous_caller_never_reads_the_first_one_s_credentials(
    pushing: str, receiver: PushReceiver
) -> None:
    # Anonymous callers share their tasks, and so their configs: the receiver's secret
    # still reaches the receiver, and nobody else.
    first = inline_v1(
        "sleep:0.2",
        receiver.url,
        token="tok",
        authentication={"scheme": "Bearer", "credentials": "first-callers-secret"},
    )
    task = (await rpc(pushing, first, V1))["result"]["task"]
    listing = call("ListTaskPushNotificationConfigs", taskId=task["id"])
    async with httpx.AsyncClient() as second:  # a client of its own, no token
        listed = (await second.post(pushing, json=listing, headers=V1)).text
    assert "first-callers-secret" not in listed and '"scheme":"Bearer"' in listed
    with trio.fail_after(10):
        await receiver.wait_received(1)
    assert receiver.received[0].headers["authorization"] == "Bearer first-callers-secret"


async def test_push_names_that_never_answer_never_hold_up_the_webhooks_lookups(
    stub: StubWebhook, start_adapter: AdapterFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The system resolver itself: names under blackhole.test never answer (until the end).
    blackhole = Blackhole(socket.getaddrinfo)
    monkeypatch.setattr(socket, "getaddrinfo", blackhole)
    monkeypatch.setattr(service, "LOOKUP_TIMEOUT", 0.5)
    # The webhook by name, so that each of its connections looks it up as well.
    adapter = await start_adapter(stub.url.replace("127.0.0.1", "localhost"))
    answers: list[dict[str, Any]] = []
    try:
        task = (await rpc(adapter, send_v1("answer:x"), V1))["result"]["task"]
        async with httpx.AsyncClient(headers=V1) as client:

            async def create(n: int) -> None:
                url = f"https://h{n}.blackhole.test/hook"
                config = call("CreateTaskPushNotificationConfig", taskId=task["id"], url=url)
                answers.append((await client.post(adapter, json=config)).json())

            async def send() -> None:
                answers.append((await client.post(adapter, json=send_v1("sleep:0.1"))).json())

            with trio.fail_after(10):
                async with trio.open_nursery() as nursery:
                    for n in range(60):
                        nursery.start_soon(create, n)
                # Their lookups are under way still. Sends at once need new connections
                # to the webhook (one at most finds the idle one), so lookups of its name.
                async with trio.open_nursery() as nursery:
                    for _ in range(3):
                        nursery.start_soon(send)
        states = [answer["result"]["task"]["status"]["state"] for answer in answers[60:]]
        assert states == ["TASK_STATE_COMPLETED"] * 3
    finally:
        blackhole.end()
    codes = sorted(answer["error"]["code"] for answer in answers[:60])
    # Anonymous callers' two lookups at once got no answer; the others no turn.
    assert codes == [-32602] * 2 + [-32000] * 58
