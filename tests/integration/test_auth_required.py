"""Sign-in asked (ADAPTER_ALLOW_AUTH_REQUIRED), over real HTTP: a reply with
`"authRequired": true` makes the task `auth-required` on both versions and bindings; the
caller's next message on it is its next turn, the workflow getting the new token; who
may continue it (the same caller: with OIDC the same subject, whose token changed; with
plain tokens the same token); its end when nobody signs in (ADAPTER_INPUT_TTL)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import trio

from tests.support.adapter import AdapterFactory
from tests.support.jsonrpc import V1, rpc, send_v03, send_v1
from tests.support.oidc_issuer import start_issuer, verifying_adapter
from tests.support.sse import open_stream, streaming
from tests.support.stub_webhook import StubWebhook

PROMPT = "signin:Sign in to the ERP at https://erp.example/login, then say done."
SAID = "Sign in to the ERP at https://erp.example/login, then say done."


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def naming(document: dict[str, Any], task: dict[str, Any]) -> dict[str, Any]:
    document["params"]["message"]["taskId"] = task["id"]
    return document


@pytest.fixture
async def signing(stub: StubWebhook, start_adapter: AdapterFactory) -> str:
    url: str = await start_adapter(stub.url, allow_auth_required=True)
    return url


async def test_a_sign_in_asked_waits_and_the_next_message_continues_v1(
    signing: str, stub: StubWebhook
) -> None:
    asked = (await rpc(signing, send_v1(PROMPT), V1))["result"]["task"]
    assert asked["status"]["state"] == "TASK_STATE_AUTH_REQUIRED"
    assert asked["status"]["message"]["parts"] == [{"text": SAID}]
    assert asked["metadata"] == {"outcome": "AUTH_REQUIRED"}
    done = (await rpc(signing, naming(send_v1("answer:signed in"), asked), V1))["result"]["task"]
    assert (done["id"], done["status"]["state"]) == (asked["id"], "TASK_STATE_COMPLETED")
    assert [r.json["taskId"] for r in stub.received] == [asked["id"]] * 2


async def test_a_sign_in_asked_on_v0_3_and_streamed(signing: str) -> None:
    asked = (await rpc(signing, send_v03(PROMPT)))["result"]
    assert asked["status"]["state"] == "auth-required"
    async with open_stream(signing, streaming(send_v1(PROMPT)), V1) as stream:
        events = await stream.rest()
    last = events[-1]["result"]["statusUpdate"]
    assert last["status"]["state"] == "TASK_STATE_AUTH_REQUIRED"  # and the stream ended


async def test_the_http_json_binding_asks_and_continues(signing: str) -> None:
    async with httpx.AsyncClient(timeout=10, headers=V1) as http:
        body = {"message": {"messageId": "m-a1", "role": "ROLE_USER", "parts": [{"text": PROMPT}]}}
        asked = (await http.post(f"{signing}/message:send", json=body)).json()["task"]
        assert asked["status"]["state"] == "TASK_STATE_AUTH_REQUIRED"
        body = {
            "message": {
                "messageId": "m-a2",
                "role": "ROLE_USER",
                "parts": [{"text": "answer:ok"}],
                "taskId": asked["id"],
            }
        }
        done = (await http.post(f"{signing}/message:send", json=body)).json()["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_without_the_setting_the_key_is_off_contract(adapter: str) -> None:
    failed = (await rpc(adapter, send_v1(PROMPT), V1))["result"]["task"]
    assert failed["status"]["state"] == "TASK_STATE_FAILED"
    assert failed["metadata"] == {"outcome": "OFF_CONTRACT"}
    assert "authRequired" in failed["status"]["message"]["parts"][0]["text"]


async def test_with_oidc_the_same_subject_continues_with_its_new_token(
    stub: StubWebhook, start_adapter: AdapterFactory, nursery: trio.Nursery
) -> None:
    issuer = await start_issuer(nursery)
    adapter = await verifying_adapter(issuer, start_adapter, stub.url, allow_auth_required=True)
    first, renewed = issuer.mint("alice", jti="1"), issuer.mint("alice", jti="2")
    assert first != renewed
    asked = (await rpc(adapter, send_v1(PROMPT), {**V1, **bearer(first)}))["result"]["task"]
    assert asked["status"]["state"] == "TASK_STATE_AUTH_REQUIRED"
    # Another subject does not see the task at all.
    mallory = bearer(issuer.mint("mallory"))
    refused = (await rpc(adapter, naming(send_v1("answer:x"), asked), {**V1, **mallory}))["error"]
    assert refused["code"] == -32001
    turn = naming(send_v1("answer:signed in"), asked)
    done = (await rpc(adapter, turn, {**V1, **bearer(renewed)}))["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    # The workflow got each turn's own token.
    tokens = [r.headers.get("x-subject-token") for r in stub.received]
    assert tokens == [first, renewed]


async def test_with_plain_tokens_a_new_token_is_another_caller(
    signing: str, stub: StubWebhook
) -> None:
    asked = (await rpc(signing, send_v1(PROMPT), {**V1, **bearer("tok-old")}))["result"]["task"]
    other = naming(send_v1("answer:x"), asked)
    refused = (await rpc(signing, other, {**V1, **bearer("tok-new")}))["error"]
    assert refused["code"] == -32001  # not found: nobody learns another's task exists
    same = naming(send_v1("answer:signed in"), asked)
    done = (await rpc(signing, same, {**V1, **bearer("tok-old")}))["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_sign_in_nobody_does_ends_after_the_input_ttl(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start_adapter(stub.url, allow_auth_required=True, input_ttl=0.3)
    asked = (await rpc(adapter, send_v1(PROMPT), V1))["result"]["task"]
    await trio.sleep(0.8)
    ended = (
        await rpc(
            adapter,
            {"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": asked["id"]}},
            V1,
        )
    )["result"]
    assert ended["status"]["state"] == "TASK_STATE_FAILED"
    assert ended["metadata"] == {"outcome": "INPUT_EXPIRED"}
    assert ended["status"]["message"]["parts"][0]["text"].startswith("No sign-in came within")
