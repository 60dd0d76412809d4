"""Workflows that stream, through the adapter: n8n's Webhook node in its `streaming`
response mode, a Respond to Webhook node writing the stock list a line at a time
(n8n/workflows/stock_stream.json) or an AI Agent writing its model's tokens
(n8n/workflows/agent_stream.json), and an adapter with ADAPTER_WEBHOOK_STREAMING=true.

The stock workflow waits at a gate the test holds after each line (tests/e2e/gate.py), the
agent's model (tests/support/openai_stub.py) after its first token: what the stream shows
before the test lets them go on, it showed before they finished. No clock decides anything.
"""

from __future__ import annotations

import asyncio
import uuid
from functools import partial
from typing import Any
from urllib.parse import urlencode

import httpx
import trio
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, Task, TaskState

from tests.e2e.gate import Gate
from tests.e2e.real_n8n import N8n
from tests.support.adapter import AdapterFactory
from tests.support.jsonrpc import V1, rpc, send_v1
from tests.support.openai_stub import TOKENS, OpenAiStub
from tests.support.sse import open_stream, streaming

LINES = ["flour: 12 pallets\n", "sugar: 3 pallets\n", "rice: 0 pallets\n", "salt: 40 pallets\n"]
STOCK = "".join(LINES)


def _texts(update: dict[str, Any]) -> str:
    return "".join(part["text"] for part in update["artifact"]["parts"])


def _as_a_client_builds_it(updates: list[dict[str, Any]]) -> str:
    """The artifact's text after every update: appended to, or replaced."""
    text = ""
    for update in updates:
        text = text + _texts(update) if update["append"] else _texts(update)
    return text


async def test_the_first_line_reaches_the_stream_while_the_workflow_is_held(
    n8n: N8n, start_adapter: AdapterFactory, nursery: trio.Nursery
) -> None:
    gate = await Gate().serve(nursery)
    webhook = n8n.webhook("stock-stream?" + urlencode({"gate": gate.url}))
    adapter = await start_adapter(webhook, webhook_streaming=True)
    async with open_stream(adapter, streaming(send_v1("The stock, please.")), V1) as stream:
        before: list[dict[str, Any]] = []
        with trio.fail_after(30):
            while "artifactUpdate" not in (event := await stream.next() or {}).get("result", {}):
                assert event, "the stream ended before any line of the stock list"
                before.append(event["result"])
        first = event["result"]["artifactUpdate"]
        # The workflow cannot end while the gate is shut: this line came before its end.
        assert not gate.is_open
        assert [next(iter(result)) for result in before] == ["task", "statusUpdate"]
        assert before[1]["statusUpdate"]["status"]["state"] == "TASK_STATE_WORKING"
        assert first["artifact"]["name"] == "answer"
        assert (_texts(first), first["append"], first["lastChunk"]) == (LINES[0], False, False)
        gate.open()
        rest = [event["result"] for event in await stream.rest()]
    updates = [first, *(result["artifactUpdate"] for result in rest if "artifactUpdate" in result)]
    # The later lines came appended to the first (those n8n wrote within one RELAY_SPACING
    # of each other as one chunk); the last update ends it.
    chunks = [update for update in updates if not update["lastChunk"]]
    assert "".join(_texts(chunk) for chunk in chunks) == STOCK
    assert [chunk["append"] for chunk in chunks[1:]] == [True] * (len(chunks) - 1)
    assert updates[-1]["lastChunk"]
    assert _as_a_client_builds_it(updates) == STOCK
    assert gate.hits == len(LINES)
    status = rest[-1]["statusUpdate"]["status"]
    assert status["state"] == "TASK_STATE_COMPLETED"
    assert status["message"]["parts"] == [{"text": STOCK}]


async def test_a_blocking_send_of_the_same_workflow_answers_the_whole_list(
    n8n: N8n, start_adapter: AdapterFactory
) -> None:
    # No gate: the workflow pauses half a second between lines, by itself.
    adapter = await start_adapter(n8n.webhook("stock-stream"), webhook_streaming=True)
    task = (await rpc(adapter, send_v1("The stock, please."), V1))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["metadata"] == {"outcome": "ANSWERED"}
    assert [artifact["name"] for artifact in task["artifacts"]] == ["answer"]
    assert task["artifacts"][0]["parts"] == [{"text": STOCK}]
    assert task["status"]["message"]["parts"] == [{"text": STOCK}]


async def _stream_through_the_official_client(
    adapter: str, gate: Gate
) -> tuple[list[str], bool, Task]:
    """A streaming send through a2a-sdk: the chunks it hands over, whether the gate was
    still shut when the first came (opening it then), and the task GetTask finds after."""
    chunks: list[str] = []
    shut_at_first = False
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, adapter).get_agent_card()
        client = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(card)
        message = Message(
            role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text="Stock?")]
        )
        task_id = ""
        async for event in client.send_message(SendMessageRequest(message=message)):
            task_id = task_id or event.task.id
            update = event.artifact_update
            if update.artifact.parts and not update.last_chunk:
                if not chunks:
                    shut_at_first = not gate.is_open
                    trio.from_thread.run_sync(gate.open)
                chunks += [part.text for part in update.artifact.parts]
        task = await client.get_task(GetTaskRequest(id=task_id))
        await client.close()
        return chunks, shut_at_first, task


async def test_the_official_client_gets_the_first_line_while_the_workflow_is_held(
    n8n: N8n, start_adapter: AdapterFactory, nursery: trio.Nursery
) -> None:
    gate = await Gate().serve(nursery)
    webhook = n8n.webhook("stock-stream?" + urlencode({"gate": gate.url}))
    adapter = await start_adapter(webhook, webhook_streaming=True)
    # The SDK runs on asyncio: in a worker thread with its own loop, as in another process.
    chunks, shut_at_first, task = await trio.to_thread.run_sync(
        partial(asyncio.run, _stream_through_the_official_client(adapter, gate))
    )
    assert shut_at_first
    # Once the gate is open the workflow writes its other lines back to back, and the relay
    # sends what came within one RELAY_SPACING as one chunk: the count of chunks after the
    # first is n8n's timing, the text is not.
    assert chunks[0] == LINES[0]
    assert "".join(chunks) == STOCK
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert [part.text for part in task.artifacts[0].parts] == [STOCK]


async def test_the_agents_first_token_reaches_the_stream_while_the_model_is_held(
    n8n: N8n, start_adapter: AdapterFactory, openai_stub: OpenAiStub
) -> None:
    openai_stub.held = True
    adapter = await start_adapter(n8n.webhook("agent-stream"), webhook_streaming=True)
    async with open_stream(adapter, streaming(send_v1("What is in stock?")), V1) as stream:
        with trio.fail_after(30):
            while "artifactUpdate" not in (event := await stream.next() or {}).get("result", {}):
                assert event, "the stream ended before the agent wrote a token"
        first = event["result"]["artifactUpdate"]
        # The model has written one token and waits: this chunk came before its last token.
        assert openai_stub.written == 1
        assert first["artifact"]["name"] == "answer"
        assert (_texts(first), first["append"], first["lastChunk"]) == (TOKENS[0], False, False)
        openai_stub.release()
        rest = [event["result"] for event in await stream.rest()]
    assert openai_stub.written == len(TOKENS)
    assert [request["messages"][-1]["content"] for request in openai_stub.requests] == [
        "What is in stock?"
    ]
    updates = [first, *(result["artifactUpdate"] for result in rest if "artifactUpdate" in result)]
    assert updates[-1]["lastChunk"]
    assert _as_a_client_builds_it(updates) == "".join(TOKENS)
    status = rest[-1]["statusUpdate"]["status"]
    assert status["state"] == "TASK_STATE_COMPLETED"
    assert status["message"]["parts"] == [{"text": "".join(TOKENS)}]
