"""Request bodies under ADAPTER_MEMORY_BUDGET, through the real adapter: charged to their
caller as their bytes come (nothing for a promise, nothing for a caller not verified),
refused retryably past the wait, given back when done; reads that release nothing."""

from __future__ import annotations

from typing import Any

import httpx
import trio

from n8n_a2a.app.admission import message_values
from n8n_a2a.protocol.model import Message, Part, Role
from tests.support.adapter import AdapterFactory
from tests.support.jsonrpc import V1, call, rpc, send_v1
from tests.support.stub_webhook import StubWebhook

KiB = 1024
# A budget that holds one 24 KiB send and nothing past 8 KiB more beside it.
BUDGET = {"memory_budget": 32 * KiB, "max_body_bytes": 32 * KiB, "memory_wait": 0.5}


def padded(text: str, size: int = 24 * KiB) -> dict[str, Any]:
    """A blocking send of `text` whose body is about `size` bytes (its metadata's padding)."""
    document = send_v1(text)
    document["params"]["message"]["metadata"] = {"padding": "p" * size}
    return document


def with_data(document: dict[str, Any], data: object) -> dict[str, Any]:
    """The send with a data part beside its text."""
    document["params"]["message"]["parts"].append({"data": data})
    return document


async def test_a_send_past_the_budget_is_refused_retryably_and_does_nothing(
    stub: StubWebhook, start_adapter: AdapterFactory, nursery: trio.Nursery
) -> None:
    adapter = await start_adapter(stub.url, **BUDGET)
    holding = trio.Event()

    async def hold() -> None:
        await rpc(adapter, padded("hold", 24 * KiB), V1)
        holding.set()

    nursery.start_soon(hold)
    await stub.wait_held()
    async with httpx.AsyncClient() as client:
        refused = await client.post(adapter, json=padded("second", 16 * KiB), headers=V1)
        rest = await client.post(
            adapter + "message:send",
            json={"message": padded("third", 16 * KiB)["params"]["message"]},
            headers=V1,
        )
    assert refused.status_code == 200 and refused.headers["retry-after"] == "1"
    error = refused.json()
    assert error["id"] is None  # its body was never read
    assert error["error"]["code"] == -32000
    message = error["error"]["message"]
    assert "ADAPTER_MEMORY_BUDGET, 32,768 bytes" in message and "retry later" in message
    assert rest.status_code == 503 and rest.headers["retry-after"] == "1"
    assert "ADAPTER_MEMORY_BUDGET" in rest.json()["error"]["message"]
    # Nothing was done: no task made, no webhook called.
    assert len(stub.received) == 1
    listed = await rpc(adapter, call("ListTasks"), V1)
    assert len(listed["result"]["tasks"]) == 1


async def test_a_send_canceled_while_it_holds_gives_its_bytes_back(
    stub: StubWebhook, start_adapter: AdapterFactory, nursery: trio.Nursery
) -> None:
    adapter = await start_adapter(stub.url, **BUDGET)
    nursery.start_soon(rpc, adapter, padded("hold"), V1)
    await stub.wait_held()
    [held] = (await rpc(adapter, call("ListTasks"), V1))["result"]["tasks"]
    canceled = await rpc(adapter, call("CancelTask", id=held["id"]), V1)
    assert canceled["result"]["status"]["state"] == "TASK_STATE_CANCELED"
    answer = await rpc(adapter, padded("answer:room again", 24 * KiB), V1)
    assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_request_waiting_for_room_is_served_once_room_is_given_back(
    stub: StubWebhook, start_adapter: AdapterFactory, nursery: trio.Nursery
) -> None:
    adapter = await start_adapter(stub.url, **{**BUDGET, "memory_wait": 10.0})
    nursery.start_soon(rpc, adapter, padded("sleep:0.5"), V1)
    await stub.wait_received()
    with trio.fail_after(5):
        answer = await rpc(adapter, padded("answer:waited", 24 * KiB), V1)
    assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert len(stub.received) == 2


def test_a_message_s_json_values_are_its_metadata_s_and_its_parts() -> None:
    message = Message(
        "m",
        Role.USER,
        (Part("hi", {"k": [1, 2]}), Part.of_data({"rows": [[1, 2], [3, 4]]})),
        metadata={"a": 1},
    )
    # The list of the three and its items (4), a part's two (2 x 2), {"a": 1} (1),
    # {"k": [1, 2]} (3), the data (7).
    assert message_values(message) == 19


async def test_a_send_whose_json_values_do_not_fit_is_refused_with_its_id(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start_adapter(
        stub.url, input_modes=("text/plain", "application/json"), **BUDGET
    )
    # 300 values cost about 45 KiB held as Python objects, past the 32 KiB budget, in a
    # body of about 1 KiB; 100 of them (about 15 KiB) fit.
    sent = with_data(send_v1("many values"), [0] * 300)
    async with httpx.AsyncClient() as client:
        refused = await client.post(adapter, json=sent, headers=V1)
    error = refused.json()
    assert refused.headers.get("retry-after") == "1", error
    assert error["id"] == sent["id"] and error["error"]["code"] == -32000
    assert "ADAPTER_MEMORY_BUDGET, 32,768 bytes" in error["error"]["message"]
    assert stub.received == []
    fits = await rpc(adapter, with_data(send_v1("answer:fits"), [0] * 100), V1)
    assert fits["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
