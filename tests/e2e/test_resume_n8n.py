"""One n8n execution across turns, against a real n8n 2.41: n8n/workflows/which_item_wait.json
asks which item and hands the adapter its `$execution.resumeUrl`, waits in a Wait node
("Resume: On Webhook Call", POST), and answers the caller's next message from the same
execution, with what it remembers of the first turn. The URL names n8n's own host
(`localhost` and its port, or WEBHOOK_URL), not the address the adapter dials: the
adapter keeps to ADAPTER_WEBHOOK_URL's origin.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import httpx
import trio
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, Task
from a2a.types import TaskState as SdkTaskState

from tests.e2e.real_n8n import N8n
from tests.support.jsonrpc import V1, call, rpc, send_v1
from tests.support.oidc_issuer import start_issuer, verifying_adapter

StartAdapter = Callable[..., Awaitable[str]]

WHICH_ITEM = "which-item"
EXECUTION = re.compile(r"execution (\d+)\)")


def execution_of(text: str) -> str:
    found = EXECUTION.search(text)
    assert found is not None, text
    return found[1]


def naming(document: dict[str, Any], task: dict[str, Any]) -> dict[str, Any]:
    document["params"]["message"]["taskId"] = task["id"]
    return document


async def test_one_execution_asks_waits_and_answers_the_next_message(
    n8n: N8n, start_adapter: StartAdapter
) -> None:
    adapter = await start_adapter(n8n.webhook(WHICH_ITEM), allow_input_required=True)
    asked = (await rpc(adapter, send_v1("5 pallets?"), V1))["result"]["task"]
    assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", asked
    question = asked["status"]["message"]["parts"][0]["text"]
    assert question.startswith("Which item: flour, sugar, rice or salt?")
    # At once, as an automated caller would: before n8n has the execution waiting, maybe.
    done = (await rpc(adapter, naming(send_v1("sugar"), asked), V1))["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
    answer = done["artifacts"][-1]["parts"][0]["text"]
    assert answer.startswith('3 pallets of sugar in stock; you first asked "5 pallets?"')
    # One execution served both turns.
    assert execution_of(answer) == execution_of(question)
    # Nothing the caller sees holds the resume URL.
    task = (await rpc(adapter, call("GetTask", id=asked["id"]), V1))["result"]
    assert "signature" not in json.dumps([asked, done, task])
    assert "webhook-waiting" not in json.dumps([asked, done, task])
    # The execution is over: a message naming the task is refused as for any finished task.
    late = (await rpc(adapter, naming(send_v1("rice"), done), V1))["error"]
    assert late["code"] == -32004


async def test_n8n_refuses_a_wrong_signature_and_an_unknown_execution_as_said(
    n8n: N8n, start_adapter: StartAdapter
) -> None:
    """The facts core/resume.py words its refusals on, from n8n itself: a wrong signature is
    401 (and changes nothing: the adapter's resume still goes through), an execution n8n
    does not have is 404."""
    adapter = await start_adapter(n8n.webhook(WHICH_ITEM), allow_input_required=True)
    asked = (await rpc(adapter, send_v1("2 pallets?"), V1))["result"]["task"]
    execution = execution_of(asked["status"]["message"]["parts"][0]["text"])
    waiting = f"{n8n.base_url}/webhook-waiting"
    async with httpx.AsyncClient(timeout=10) as http:
        with trio.fail_after(10):  # until the execution waits (its Wait node reached)
            while (  # noqa: ASYNC110 - polled: n8n's state, not ours
                wrong := await http.post(f"{waiting}/{execution}?signature=0", json={})
            ).status_code == 409:
                await trio.sleep(0.1)
        unknown = await http.post(f"{waiting}/999999?signature=0", json={})
    assert (wrong.status_code, unknown.status_code) == (401, 404)
    done = (await rpc(adapter, naming(send_v1("rice"), asked), V1))["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert execution_of(done["artifacts"][-1]["parts"][0]["text"]) == execution


async def _official(adapter: str) -> tuple[Task, Task]:
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, adapter).get_agent_card()
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=True)).create(card)
        first = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text="1?")])
        events = [e async for e in client.send_message(SendMessageRequest(message=first))]
        asked = events[0].task
        answer = Message(
            role=Role.ROLE_USER,
            message_id=str(uuid.uuid4()),
            parts=[Part(text="rice")],
            task_id=asked.id,
            context_id=asked.context_id,
        )
        _ = [e async for e in client.send_message(SendMessageRequest(message=answer))]
        task = await client.get_task(GetTaskRequest(id=asked.id))
        await client.close()
        return asked, task


async def test_the_official_client_streams_both_turns_of_one_execution(
    n8n: N8n, start_adapter: StartAdapter
) -> None:
    adapter = await start_adapter(n8n.webhook(WHICH_ITEM), allow_input_required=True)
    asked, task = await trio.to_thread.run_sync(partial(asyncio.run, _official(adapter)))
    assert task.status.state == SdkTaskState.TASK_STATE_COMPLETED
    question, answer = task.history[1].parts[0].text, task.history[3].parts[0].text
    assert answer.startswith('40 pallets of rice in stock; you first asked "1?"')
    assert execution_of(question) == execution_of(answer)
    assert asked.id == task.id


async def test_a_sign_in_asked_then_the_same_execution_goes_on_with_the_new_token(
    n8n: N8n, start_adapter: StartAdapter, nursery: trio.Nursery
) -> None:
    """n8n/workflows/sign_in_wait.json asks the caller to sign in (auth-required) and waits;
    the caller signs in again (OIDC: the same subject, a new token) and says so on the
    task; the same execution goes on, and sees the new token in X-Subject-Token."""
    issuer = await start_issuer(nursery)
    adapter = await verifying_adapter(
        issuer, start_adapter, n8n.webhook("erp-orders"), allow_auth_required=True
    )
    first, renewed = issuer.mint("alice", jti="first"), issuer.mint("alice", jti="renewed")
    as_first = {**V1, "Authorization": f"Bearer {first}"}
    asked = (await rpc(adapter, send_v1("10 pallets of flour"), as_first))["result"]["task"]
    assert asked["status"]["state"] == "TASK_STATE_AUTH_REQUIRED", asked
    prompt = asked["status"]["message"]["parts"][0]["text"]
    assert prompt.startswith("Sign in to the ERP at https://erp.example/login")
    as_renewed = {**V1, "Authorization": f"Bearer {renewed}"}
    done = (await rpc(adapter, naming(send_v1("done"), asked), as_renewed))["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
    answer = done["artifacts"][-1]["parts"][0]["text"]
    assert answer.startswith(
        f'Signed in: the order "10 pallets of flour" is placed with the token ending '
        f"{renewed[-6:]} (the first ended {first[-6:]}"
    )
    assert execution_of(answer) == execution_of(prompt)
