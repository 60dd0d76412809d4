"""The adapter in front of a real n8n 2.41: every outcome, the token, the context, the timeout,
a workflow that asks a question and takes the answer on the same task, and one that reads a
CSV file and a JSON object and answers with a data object and a CSV file.

Each test starts its own adapter (in this process) in front of one workflow of
n8n/workflows/; the n8n behind them all is the session's, see conftest.py.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
import uuid
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskStatus,
)
from a2a.types import TaskState as SdkTaskState

from tests.e2e.real_n8n import N8n
from tests.support.environments import GOOD
from tests.support.jsonrpc import V1, rpc, send_v03, send_v1

StartAdapter = Callable[..., Awaitable[str]]

AGENT = "check-availability"
TOKEN = "eyJhbGciOiJFUzI1NiJ9.e2e-subject.c2lnbmF0dXJl"


async def send(
    adapter: str, text: str, *, context_id: str | None = None, token: str | None = None
) -> dict[str, Any]:
    """One v1.0 SendMessage over raw JSON-RPC; returns the task."""
    document = send_v1(text)
    if context_id is not None:
        document["params"]["message"]["contextId"] = context_id
    headers = {**V1, **({"Authorization": f"Bearer {token}"} if token else {})}
    task: dict[str, Any] = (await rpc(adapter, document, headers))["result"]["task"]
    return task


def answer_of(task: dict[str, Any]) -> str:
    text: str = task["artifacts"][0]["parts"][0]["text"]
    return text


def reason_of(task: dict[str, Any]) -> str:
    text: str = task["status"]["message"]["parts"][0]["text"]
    return text


async def test_the_agent_answers_from_its_stock_and_sees_the_context(
    n8n: N8n, start_adapter: StartAdapter
) -> None:
    adapter = await start_adapter(n8n.webhook(AGENT))
    task = await send(adapter, "Are there 4 pallets of flour?", context_id="ctx-e2e-flour")
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["metadata"] == {"outcome": "ANSWERED"}
    # The workflow echoes the contextId it received: the caller's, untouched.
    assert answer_of(task) == "Yes: 12 pallets of flour in stock. (conversation ctx-e2e-flour)"
    assert task["contextId"] == "ctx-e2e-flour"
    assert task["history"][1]["parts"] == [{"text": answer_of(task)}]


async def test_a_message_sent_again_places_one_order(n8n: N8n, start_adapter: StartAdapter) -> None:
    """n8n/workflows/orders.json counts each of its runs in its static data: a message
    sent again (its answer lost, say) is its first task, and the workflow ran once."""
    adapter = await start_adapter(n8n.webhook("orders"))
    order = send_v1("30 pallets of flour")
    first: dict[str, Any] = (await rpc(adapter, order, V1))["result"]["task"]
    placed = answer_of(first)
    assert placed.startswith("order ") and placed.endswith(" placed: 30 pallets of flour")
    again: dict[str, Any] = (await rpc(adapter, order, V1))["result"]["task"]
    assert (again["id"], answer_of(again)) == (first["id"], placed)
    # A new message is a new run: the count goes on from the first order's, by one.
    count = int(placed.split()[1])
    other = await send(adapter, "8 pallets of rice")
    assert answer_of(other) == f"order {count + 1} placed: 8 pallets of rice"


async def test_the_probe_finds_a_published_webhook_and_runs_nothing(
    n8n: N8n, start_adapter: StartAdapter
) -> None:
    """`n8n-a2a --probe` (webhook/probe.py): a CORS preflight, which n8n answers from its
    table of registered webhooks. The order workflow counts its runs: the probes place none."""
    adapter = await start_adapter(n8n.webhook("orders"))
    before = int(answer_of(await send(adapter, "1 pallet of salt")).split()[1])

    async def probed(url: str) -> tuple[int, str]:
        environ = {"PATH": "/usr/bin:/bin", **GOOD, "ADAPTER_WEBHOOK_URL": url}
        command = [sys.executable, "-m", "n8n_a2a", "--probe"]
        done = await trio.run_process(command, env=environ, capture_stdout=True, check=False)
        return done.returncode, done.stdout.decode()

    registered = await probed(n8n.webhook("orders"))
    assert registered[0] == 0, registered
    assert "n8n has a POST webhook registered there" in registered[1]
    for wrong in (n8n.webhook("no-such-path"), n8n.webhook("supply-inactive")):
        refused = await probed(wrong)
        assert refused[0] == 1, refused
        assert "n8n has no POST webhook registered there" in refused[1]
    after = int(answer_of(await send(adapter, "1 pallet of salt")).split()[1])
    assert after == before + 1  # the probes ran nothing


async def test_the_agent_over_v03(n8n: N8n, start_adapter: StartAdapter) -> None:
    adapter = await start_adapter(n8n.webhook(AGENT))
    task = (await rpc(adapter, send_v03("5 pallets of sugar?")))["result"]
    assert task["status"]["state"] == "completed"
    assert task["metadata"] == {"outcome": "ANSWERED"}
    # No contextId sent: the adapter minted one, and that is the one the workflow saw.
    expected = f"No: only 3 pallets of sugar in stock. (conversation {task['contextId']})"
    assert task["artifacts"][0]["parts"] == [{"kind": "text", "text": expected}]


@pytest.mark.parametrize(
    ("path", "text", "outcome", "reasons"),
    [
        pytest.param(
            AGENT,
            "Can I have 12 pallets of flour?",
            "ESCALATED",
            (
                "Escalated for human approval: "
                "12 pallets of flour is more than 10: a person must approve it.",
            ),
            id="escalated",
        ),
        # A Code node throws: n8n 2.41 answers 500 {"message":"Error in workflow"}.
        pytest.param(
            "supply-silent", "x", "SILENT", ('HTTP 500 "Error in workflow"',), id="silent-500"
        ),
        # A node returns no items, so the Respond node never runs: 200 with an empty body.
        pytest.param(
            "supply-silent-noitems",
            "x",
            "SILENT",
            ("HTTP 200 with an empty body",),
            id="silent-empty",
        ),
        pytest.param(
            "supply-offcontract",
            "x",
            "OFF_CONTRACT",
            ("its keys are ['result']", '{"result":42}'),
            id="off-contract-json",
        ),
        pytest.param(
            "supply-offcontract-text",
            "x",
            "OFF_CONTRACT",
            ("not JSON", "text/html; charset=utf-8", "sure, whatever you say"),
            id="off-contract-text",
        ),
        pytest.param(
            "supply-inactive",
            "x",
            "NOT_REGISTERED",
            (
                "not active (published) in n8n",
                'n8n said: {"code":404,"message":"The requested webhook '
                '\\"POST supply-inactive\\" is not registered.',
            ),
            id="inactive-404",
        ),
    ],
)
async def test_every_other_outcome_fails_the_task(
    n8n: N8n,
    start_adapter: StartAdapter,
    path: str,
    text: str,
    outcome: str,
    reasons: tuple[str, ...],
) -> None:
    adapter = await start_adapter(n8n.webhook(path))
    task = await send(adapter, text)
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert task["metadata"] == {"outcome": outcome}
    assert "artifacts" not in task
    assert task["status"]["message"]["role"] == "ROLE_AGENT"
    for reason in reasons:
        assert reason in reason_of(task)


async def test_the_token_reaches_the_workflow_in_x_subject_token_only(
    n8n: N8n, start_adapter: StartAdapter
) -> None:
    adapter = await start_adapter(n8n.webhook("supply-token"))
    task = await send(adapter, "who am I?", token=TOKEN)
    # The workflow reports the header's length and whether the token was in its body too.
    assert task["metadata"] == {"outcome": "ANSWERED"}
    assert answer_of(task) == (
        f"token received in X-Subject-Token: {len(TOKEN)} characters; in the body too: no"
    )
    assert TOKEN not in json.dumps(task)


async def test_no_bearer_no_token(n8n: N8n, start_adapter: StartAdapter) -> None:
    adapter = await start_adapter(n8n.webhook("supply-token"))
    assert answer_of(await send(adapter, "who am I?")) == "no token received"


async def test_a_slow_workflow_within_the_timeout_answers(
    n8n: N8n, start_adapter: StartAdapter
) -> None:
    adapter = await start_adapter(n8n.webhook("supply-slow"), webhook_timeout=10.0)
    task = await send(adapter, "take your time")
    assert task["metadata"] == {"outcome": "ANSWERED"}
    assert answer_of(task) == "slow: take your time"


def connections_to(port: int) -> int:
    """This process's established TCP connections to 127.0.0.1:port, read from /proc."""
    sockets = set()
    for fd in Path("/proc/self/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:  # closed since the listing
            continue
        if target.startswith("socket:["):
            sockets.add(target.removeprefix("socket:[").removesuffix("]"))
    count = 0
    for line in Path("/proc/self/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        remote, state, inode = fields[2], fields[3], fields[9]
        established = state == "01"
        if established and int(remote.split(":")[1], 16) == port and inode in sockets:
            count += 1
    return count


async def eventually(condition: Callable[[], bool], within: float = 1.0) -> None:
    """Wait until condition() holds, or fail after `within` seconds."""
    with trio.fail_after(within):
        while not condition():  # noqa: ASYNC110 - a socket's state has no event to wait on
            await trio.sleep(0.02)


async def test_a_workflow_slower_than_the_timeout_fails_and_frees_the_connection(
    n8n: N8n, start_adapter: StartAdapter
) -> None:
    # The workflow waits 3 s; the adapter gives it 1.
    adapter = await start_adapter(n8n.webhook("supply-slow"), webhook_timeout=1.0)
    assert connections_to(n8n.port) == 0
    tasks: list[dict[str, Any]] = []

    async def call() -> None:
        tasks.append(await send(adapter, "hurry"))

    started = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(call)
        # The adapter's call to n8n is open while the workflow waits...
        await eventually(lambda: connections_to(n8n.port) == 1)
    [task] = tasks
    assert trio.current_time() - started < 2.5
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert task["metadata"] == {"outcome": "TIMEOUT"}
    assert reason_of(task) == (
        "The workflow did not answer in time: no reply within 1 s (ADAPTER_WEBHOOK_TIMEOUT)"
    )
    # ...and closed once the deadline passed, not left open until n8n answers.
    await eventually(lambda: connections_to(n8n.port) == 0)


async def test_cancel_of_a_running_workflow_closes_its_call(
    n8n: N8n, start_adapter: StartAdapter
) -> None:
    adapter = await start_adapter(n8n.webhook("supply-slow"), webhook_timeout=10.0)
    document = send_v1("never mind", returnImmediately=True)
    task = (await rpc(adapter, document, V1))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_WORKING"
    await eventually(lambda: connections_to(n8n.port) == 1)  # n8n's Wait node is running
    cancel = {"jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": {"id": task["id"]}}
    canceled = (await rpc(adapter, cancel, V1))["result"]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    await eventually(lambda: connections_to(n8n.port) == 0)  # cut, not left to finish
    get = {"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": task["id"]}}
    await trio.sleep(3.5)  # past the workflow's own 3 s: its late answer changes nothing
    assert (await rpc(adapter, get, V1))["result"]["status"]["state"] == "TASK_STATE_CANCELED"


async def _converse(base_url: str) -> list[Task]:
    """Three messages through the official client: two turns on one context, then too many."""
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        client = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card)
        tasks: list[Task] = []
        for text in ("4 pallets of flour?", "and 2 of salt?", "then 30 of salt"):
            message = Message(
                role=Role.ROLE_USER,
                message_id=str(uuid.uuid4()),
                parts=[Part(text=text)],
                context_id=tasks[0].context_id if tasks else "",
            )
            [event] = [e async for e in client.send_message(SendMessageRequest(message=message))]
            tasks.append(event.task)
        await client.close()
        return tasks


async def test_a_conversation_through_the_official_client(
    n8n: N8n, start_adapter: StartAdapter
) -> None:
    adapter = await start_adapter(n8n.webhook(AGENT))
    # The SDK runs on asyncio: in a worker thread with its own loop, as in another process.
    first, second, third = await trio.to_thread.run_sync(partial(asyncio.run, _converse(adapter)))
    context = first.context_id
    assert context
    assert [t.context_id for t in (second, third)] == [context, context]
    assert first.status.state == second.status.state == SdkTaskState.TASK_STATE_COMPLETED
    assert first.artifacts[0].parts[0].text == (
        f"Yes: 12 pallets of flour in stock. (conversation {context})"
    )
    assert second.artifacts[0].parts[0].text == (
        f"Yes: 40 pallets of salt in stock. (conversation {context})"
    )
    assert third.status.state == SdkTaskState.TASK_STATE_FAILED
    assert third.metadata["outcome"] == "ESCALATED"
    assert third.status.message.parts[0].text == (
        "Escalated for human approval: 30 pallets of salt is more than 10: "
        "a person must approve it."
    )


TURNS = "check-availability-turns"


async def _ask_then_answer(
    base_url: str, streaming: bool
) -> tuple[list[StreamResponse], list[StreamResponse], Task]:
    """Two turns on one task through the official client, as a chat bridge relays them."""
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        client = ClientFactory(ClientConfig(streaming=streaming, httpx_client=http)).create(card)
        question = Message(
            role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text="5 pallets?")]
        )
        first = [e async for e in client.send_message(SendMessageRequest(message=question))]
        asked = first[0].task
        answer = Message(
            role=Role.ROLE_USER,
            message_id=str(uuid.uuid4()),
            parts=[Part(text="sugar")],
            task_id=asked.id,
            context_id=asked.context_id,
        )
        second = [e async for e in client.send_message(SendMessageRequest(message=answer))]
        task = await client.get_task(GetTaskRequest(id=asked.id))
        await client.close()
        return first, second, task


def _last_status(events: list[StreamResponse]) -> TaskStatus:
    last = events[-1]
    return last.status_update.status if last.HasField("status_update") else last.task.status


@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_the_agent_asks_which_item_and_the_answer_continues_the_task(
    n8n: N8n, start_adapter: StartAdapter, streaming: bool
) -> None:
    adapter = await start_adapter(n8n.webhook(TURNS), allow_input_required=True)
    first, second, task = await trio.to_thread.run_sync(
        partial(asyncio.run, _ask_then_answer(adapter, streaming))
    )
    asked = _last_status(first)
    assert asked.state == SdkTaskState.TASK_STATE_INPUT_REQUIRED
    assert asked.message.parts[0].text == "Which item: flour, sugar, rice or salt?"
    # The workflow remembered the 5 pallets of the first turn (its memory keyed on the
    # contextId): 5 is more than the 3 in stock.
    answered = _last_status(second)
    assert answered.state == SdkTaskState.TASK_STATE_COMPLETED
    expected = f"No: only 3 pallets of sugar in stock. (conversation {task.context_id})"
    assert answered.message.parts[0].text == expected
    assert task.id == first[0].task.id
    assert task.artifacts[0].parts[0].text == expected
    assert [(m.role, m.parts[0].text) for m in task.history] == [
        (Role.ROLE_USER, "5 pallets?"),
        (Role.ROLE_AGENT, "Which item: flour, sugar, rice or salt?"),
        (Role.ROLE_USER, "sugar"),
        (Role.ROLE_AGENT, expected),
    ]


async def test_without_the_setting_the_agents_question_is_off_contract(
    n8n: N8n, start_adapter: StartAdapter
) -> None:
    adapter = await start_adapter(n8n.webhook(TURNS))
    asked = await send(adapter, "5 pallets?")
    assert (asked["status"]["state"], asked["metadata"]) == (
        "TASK_STATE_FAILED",
        {"outcome": "OFF_CONTRACT"},
    )
    assert "'inputRequired'" in reason_of(asked)
    # Its answers keep the two-key contract: a strict adapter takes them.
    answered = await send(adapter, "2 pallets of salt?")
    assert answered["metadata"] == {"outcome": "ANSWERED"}


STOCK_REPORT = "stock-report"
#: The stock report's modes: text, JSON data and CSV files, in and out.
PART_MODES = ("text/plain", "application/json", "text/csv")
STOCK_CSV = "item,pallets\nflour,12\nsugar,3\nrice,0\nsalt,40\n"
MINIMUM = {"minimum": 5}
ASKED = "Which items need reordering?"
REPORT = "2 of 4 items are below 5 pallets: sugar (3), rice (0). The reorder list is reorder.csv."
BELOW = {
    "minimum": 5,
    "below": [
        {"item": "sugar", "pallets": 3, "reorder": 2},
        {"item": "rice", "pallets": 0, "reorder": 5},
    ],
}
REORDER_CSV = "item,pallets,reorder\nsugar,3,2\nrice,0,5\n"


def base64_of(text: str) -> str:
    return base64.b64encode(text.encode()).decode("ascii")


def decoded(encoded: str) -> str:
    return base64.b64decode(encoded, validate=True).decode()


def artifacts_by_name(task: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Each artifact's parts by its name, in the task's order."""
    return {artifact["name"]: artifact["parts"] for artifact in task["artifacts"]}


def stock_report_v1() -> dict[str, Any]:
    """A v1.0 SendMessage: the question, the minimum as a data part, the stock list as a
    CSV file sent inline (`raw`, base64), as a chat bridge attaches one."""
    document = send_v1(ASKED)
    document["params"]["message"]["parts"] += [
        {"data": MINIMUM},
        {"raw": base64_of(STOCK_CSV), "filename": "stock.csv", "mediaType": "text/csv"},
    ]
    return document


async def test_a_csv_file_and_a_json_object_in_a_data_object_and_a_csv_file_out(
    n8n: N8n, start_adapter: StartAdapter
) -> None:
    adapter = await start_adapter(
        n8n.webhook(STOCK_REPORT), input_modes=PART_MODES, output_modes=PART_MODES
    )
    task = (await rpc(adapter, stock_report_v1(), V1))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["metadata"] == {"outcome": "ANSWERED"}
    artifacts = artifacts_by_name(task)
    assert list(artifacts) == ["data", "reorder.csv", "answer"]
    assert artifacts["answer"] == [{"text": REPORT}]
    assert artifacts["data"] == [{"data": BELOW}]
    [reorder] = artifacts["reorder.csv"]
    assert decoded(reorder.pop("raw")) == REORDER_CSV
    assert reorder == {"filename": "reorder.csv", "mediaType": "text/csv"}


async def test_the_same_over_v03_file_and_data_parts(n8n: N8n, start_adapter: StartAdapter) -> None:
    adapter = await start_adapter(
        n8n.webhook(STOCK_REPORT), input_modes=PART_MODES, output_modes=PART_MODES
    )
    document = send_v03(ASKED)
    document["params"]["message"]["parts"] += [
        {"kind": "data", "data": MINIMUM},
        {
            "kind": "file",
            "file": {"bytes": base64_of(STOCK_CSV), "name": "stock.csv", "mimeType": "text/csv"},
        },
    ]
    task = (await rpc(adapter, document))["result"]
    assert (task["status"]["state"], task["metadata"]) == ("completed", {"outcome": "ANSWERED"})
    artifacts = artifacts_by_name(task)
    assert artifacts["answer"] == [{"kind": "text", "text": REPORT}]
    assert artifacts["data"] == [{"kind": "data", "data": BELOW}]
    [reorder] = artifacts["reorder.csv"]
    assert decoded(reorder["file"].pop("bytes")) == REORDER_CSV
    assert reorder == {"kind": "file", "file": {"name": "reorder.csv", "mimeType": "text/csv"}}


async def test_the_stock_report_without_its_file_and_data_says_what_it_needs(
    n8n: N8n, start_adapter: StartAdapter
) -> None:
    # A text-only adapter, as by default: the workflow answers, and no node fails.
    adapter = await start_adapter(n8n.webhook(STOCK_REPORT))
    task = await send(adapter, ASKED)
    assert task["metadata"] == {"outcome": "ANSWERED"}
    assert answer_of(task) == (
        "I got no stock list and no minimum. Send the stock list as a CSV file (item,pallets) "
        'and the minimum as JSON data, e.g. {"minimum": 5}.'
    )


async def test_a_data_and_file_reply_to_a_text_only_adapter_is_off_contract(
    n8n: N8n, start_adapter: StartAdapter
) -> None:
    # The adapter takes the parts in but lets the workflow answer text only.
    adapter = await start_adapter(n8n.webhook(STOCK_REPORT), input_modes=PART_MODES)
    task = (await rpc(adapter, stock_report_v1(), V1))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert task["metadata"] == {"outcome": "OFF_CONTRACT"}
    assert "its keys are ['answer', 'data', 'escalate', 'files']" in reason_of(task)
    assert "artifacts" not in task
