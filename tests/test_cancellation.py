"""What a hang-up or a deadline does to a webhook call: nothing is lost, nothing dangles."""

from __future__ import annotations

from typing import Any

import httpx
import trio

from tests.support.jsonrpc import V1, rpc, send_v1
from tests.support.stub_webhook import StubWebhook


async def test_a_client_that_hangs_up_does_not_kill_the_call(
    adapter: str, stub: StubWebhook
) -> None:
    async with httpx.AsyncClient() as client:
        with trio.move_on_after(0.3):
            await client.post(adapter, json=send_v1("sleep:1", request_id="gone"), headers=V1)
    # The send was abandoned mid-call; the task still reaches its terminal state.
    [received] = stub.received
    task_id = received.json["taskId"]
    get = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}}
    with trio.fail_after(5):
        while True:
            task = (await rpc(adapter, get, V1))["result"]
            if task["status"]["state"] != "TASK_STATE_WORKING":
                break
            await trio.sleep(0.05)
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "slept"}]


async def test_the_deadline_closes_the_connection(stub: StubWebhook, start_adapter: Any) -> None:
    adapter = await start_adapter(stub.url, webhook_timeout=0.3)
    task = (await rpc(adapter, send_v1("hold"), V1))["result"]["task"]
    assert task["metadata"] == {"outcome": "TIMEOUT"}
    with trio.fail_after(5):
        await stub.wait_released()
    assert stub.held == stub.released == 1
