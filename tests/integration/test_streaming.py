"""Streams over real HTTP: SendStreamingMessage, SubscribeToTask and their v0.3 twins."""

from __future__ import annotations

from functools import partial

import pytest
import trio

from n8n_a2a.server import serve
from tests.support.adapter import AdapterFactory, free_port, make_settings
from tests.support.jsonrpc import V1, call, get_task, rpc, send_v03, send_v1, wait_for_state
from tests.support.sse import kinds_v1, open_stream, results, streaming
from tests.support.stub_webhook import StubWebhook


async def test_a_v1_stream_shows_working_long_before_the_answer(adapter: str) -> None:
    async with open_stream(adapter, streaming(send_v1("sleep:1", request_id=42)), V1) as stream:
        first = await stream.next()
        started = trio.current_time()
        working = await stream.next()
        assert working is not None and trio.current_time() - started < 0.5
        rest = await stream.rest()
    events = [first, working, *rest]
    assert all(event is not None and event["id"] == 42 for event in events)
    assert kinds_v1(events) == [  # type: ignore[arg-type]
        "task TASK_STATE_SUBMITTED",
        "statusUpdate TASK_STATE_WORKING",
        "artifactUpdate",
        "statusUpdate TASK_STATE_COMPLETED",
    ]
    artifact = rest[0]["result"]["artifactUpdate"]["artifact"]
    assert artifact["parts"] == [{"text": "slept"}]


async def test_a_v03_stream_has_kinds_and_final_on_the_last(adapter: str) -> None:
    async with open_stream(adapter, streaming(send_v03("answer:12 pallets"))) as stream:
        events = await stream.rest()
    assert all(event["id"] == "7" for event in events)
    shown = [(r["kind"], r.get("final"), r.get("status", {}).get("state")) for r in results(events)]
    assert shown == [
        ("task", None, "submitted"),
        ("status-update", False, "working"),
        ("artifact-update", None, None),
        ("status-update", True, "completed"),
    ]


async def test_a_failed_task_streams_its_reason(adapter: str) -> None:
    async with open_stream(adapter, streaming(send_v1("escalate:needs a person")), V1) as stream:
        events = await stream.rest()
    last = events[-1]["result"]["statusUpdate"]["status"]
    assert last["state"] == "TASK_STATE_FAILED"
    assert "needs a person" in last["message"]["parts"][0]["text"]


async def test_a_subscriber_joining_mid_task_gets_the_task_then_the_rest(adapter: str) -> None:
    sent = await rpc(adapter, send_v1("sleep:0.5", returnImmediately=True), V1)
    task_id = sent["result"]["task"]["id"]
    subscribe = call("SubscribeToTask", request_id="s", id=task_id)
    async with open_stream(adapter, subscribe, V1) as stream:
        events = await stream.rest()
    assert kinds_v1(events) == [
        "task TASK_STATE_WORKING",
        "artifactUpdate",
        "statusUpdate TASK_STATE_COMPLETED",
    ]
    v03 = {"jsonrpc": "2.0", "id": 3, "method": "tasks/resubscribe", "params": {"id": task_id}}
    async with open_stream(adapter, v03) as stream:
        [refused] = await stream.rest()
    assert refused["error"]["code"] == -32004  # a finished task has nothing left to stream


async def test_a_v1_subscription_refused_at_once_is_a_plain_error(adapter: str) -> None:
    # As the official v1.0 servers answer, and every v1.0 client reads with its type.
    reply = await rpc(adapter, call("SubscribeToTask", id="nope"), V1)
    assert (reply["id"], reply["error"]["code"]) == (1, -32001)
    done = await rpc(adapter, send_v1("answer:x"), V1)
    finished = call("SubscribeToTask", id=done["result"]["task"]["id"])
    assert (await rpc(adapter, finished, V1))["error"]["code"] == -32004


async def test_a_v03_subscription_refused_at_once_is_the_stream_s_one_event(
    adapter: str,
) -> None:
    # a2a-sdk 0.3 reads an error's code only from an event of the stream.
    document = {"jsonrpc": "2.0", "id": "r", "method": "tasks/resubscribe", "params": {"id": "x"}}
    async with open_stream(adapter, document) as stream:
        [refused] = await stream.rest()
    assert (refused["id"], refused["error"]["code"]) == ("r", -32001)


async def test_two_subscribers_of_which_one_stops_reading(adapter: str, stub: StubWebhook) -> None:
    sent = await rpc(adapter, send_v1("sleep:0.3", returnImmediately=True), V1)
    task_id = sent["result"]["task"]["id"]
    subscribe = call("SubscribeToTask", id=task_id)
    async with (
        open_stream(adapter, subscribe, V1) as idle,
        open_stream(adapter, subscribe, V1) as reading,
    ):
        assert (await idle.next()) is not None  # then it reads no more
        events = await reading.rest()
        assert kinds_v1(events)[-1] == "statusUpdate TASK_STATE_COMPLETED"
    assert (await get_task(adapter, task_id))["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_client_hanging_up_mid_stream_does_not_stop_the_task(adapter: str) -> None:
    async with open_stream(adapter, streaming(send_v1("sleep:0.3")), V1) as stream:
        task = await stream.next()
        assert task is not None
        task_id = task["result"]["task"]["id"]
    # The client left; the call goes on.
    done = await wait_for_state(adapter, task_id, "TASK_STATE_COMPLETED")
    assert done["artifacts"][0]["parts"] == [{"text": "slept"}]


async def test_cancel_mid_stream_ends_it_canceled(adapter: str, stub: StubWebhook) -> None:
    async with open_stream(adapter, streaming(send_v1("hold")), V1) as stream:
        task = await stream.next()
        assert task is not None
        assert await stream.next() is not None  # working
        await rpc(adapter, call("CancelTask", id=task["result"]["task"]["id"]), V1)
        events = await stream.rest()
    assert kinds_v1(events) == ["statusUpdate TASK_STATE_CANCELED"]
    with trio.fail_after(5):
        await stub.wait_released()


async def test_shutdown_mid_stream_ends_it_with_the_shutdown_failure(
    stub: StubWebhook, nursery: trio.Nursery
) -> None:
    stop = trio.Event()
    port = free_port()
    adapter = f"http://127.0.0.1:{port}/"
    settings = make_settings(stub.url, port=port, public_url=adapter, shutdown_grace=0.2)
    await nursery.start(partial(serve, settings, shutdown_trigger=stop.wait))
    async with open_stream(adapter, streaming(send_v1("hold")), V1) as stream:
        assert await stream.next() is not None
        assert await stream.next() is not None  # working
        stop.set()
        events = await stream.rest()
    status = events[-1]["result"]["statusUpdate"]["status"]
    assert status["state"] == "TASK_STATE_FAILED"
    assert status["message"]["metadata"] == {"outcome": "SHUTDOWN"}


async def test_a_quiet_stream_gets_keep_alive_comments(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start_adapter(stub.url, stream_keepalive=0.1)
    async with open_stream(adapter, streaming(send_v1("sleep:0.55")), V1) as stream:
        events = await stream.rest()
    assert kinds_v1(events)[-1] == "statusUpdate TASK_STATE_COMPLETED"
    assert stream.comments >= 3


@pytest.mark.parametrize("method", ["SendStreamingMessage", "SubscribeToTask"])
async def test_malformed_stream_params_are_32602(adapter: str, method: str) -> None:
    document = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {}}
    assert (await rpc(adapter, document, V1))["error"]["code"] == -32602


async def test_a_caller_past_its_streams_is_refused_and_others_are_not(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start_adapter(stub.url, max_streams_per_caller=2)
    mine = {**V1, "Authorization": "Bearer mine"}
    async with (
        open_stream(adapter, streaming(send_v1("sleep:5")), mine) as first,
        open_stream(adapter, streaming(send_v1("sleep:5")), mine) as second,
    ):
        assert await first.next() is not None and await second.next() is not None
        # A third, in v1.0: a plain error; a subscription counts as a stream too.
        refused = await rpc(adapter, streaming(send_v1("sleep:5")), mine)
        assert refused["error"]["code"] == -32000
        assert "ADAPTER_MAX_STREAMS_PER_CALLER" in refused["error"]["message"]
        task_id = (await first.next() or {})["result"]["statusUpdate"]["taskId"]
        subscription = await rpc(adapter, call("SubscribeToTask", id=task_id), mine)
        assert subscription["error"]["code"] == -32000
        # Another caller, and the anonymous ones, still stream.
        for headers in ({**V1, "Authorization": "Bearer yours"}, V1):
            async with open_stream(adapter, streaming(send_v1("answer:x")), headers) as other:
                assert len(await other.rest()) == 4
    # Both closed: the caller has its quota back.
    async with open_stream(adapter, streaming(send_v1("answer:x")), mine) as again:
        assert len(await again.rest()) == 4


async def test_a_v03_caller_past_its_streams_gets_the_stream_s_one_error_event(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start_adapter(stub.url, max_streams_per_caller=1)
    async with open_stream(adapter, streaming(send_v03("sleep:5"))) as held:
        assert await held.next() is not None
        async with open_stream(adapter, streaming(send_v03("answer:x"))) as refused:
            [error] = await refused.rest()
    assert error["error"]["code"] == -32000
