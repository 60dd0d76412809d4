"""Signing in as a chat bridge does, against a real, OpenID-certified authorization server
(oidc-provider, run on 127.0.0.1): from the adapter's card alone, a per-user OAuth client
registers, signs a user in (code flow, PKCE) and calls the adapter with the access token,
a JWT for the adapter (RFC 9068); its tasks stay its own across a refresh.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import trio

from tests.support.adapter import AdapterFactory, free_port, get
from tests.support.certified_issuer import CertifiedIssuer, start_certified_issuer
from tests.support.jsonrpc import V1, call, send_v1
from tests.support.metrics import sample
from tests.support.oauth_client import OAuthClient, Tokens
from tests.support.stub_webhook import StubWebhook

SCOPES = ("a2a.call",)
#: What the stub answers `answer:X` with: X.
QUESTION = "answer:4 pallets in stock"


@dataclass(frozen=True)
class SignIn:
    """The adapter, its certified issuer, and a client registered there from the card."""

    adapter: str
    issuer: CertifiedIssuer
    client: OAuthClient


async def until_ready(adapter: str) -> None:
    """Until /readyz says ready: the issuer's keys are loaded."""
    with trio.fail_after(10):
        while (await get(adapter + "readyz")).status_code != 200:  # noqa: ASYNC110 - polled
            await trio.sleep(0.02)


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield client


async def start_signin(
    nursery: trio.Nursery,
    stub: StubWebhook,
    start_adapter: AdapterFactory,
    http: httpx.AsyncClient,
    *,
    slash: str = "/",
) -> SignIn:
    """The adapter at `http://127.0.0.1:PORT` + `slash` (its public URL and audience), the
    issuer's resource `http://127.0.0.1:PORT/`, and a client registered from the card."""
    port = free_port()
    resource = f"http://127.0.0.1:{port}/"
    written = resource.removesuffix("/") + slash
    issuer = await start_certified_issuer(nursery, resource=resource, scopes=SCOPES)
    adapter: str = await start_adapter(
        stub.url,
        port=port,
        public_url=written,
        oidc_issuer=issuer.issuer,
        oidc_audience=written,
        oidc_scopes=SCOPES,
        oidc_allow_http=True,
    )
    await until_ready(resource)
    card = (await http.get(resource + ".well-known/agent-card.json", headers=V1)).json()
    client = await OAuthClient.from_card(http, card)
    return SignIn(adapter, issuer, client)


@pytest.fixture
async def signin(
    nursery: trio.Nursery, stub: StubWebhook, start_adapter: AdapterFactory, http: httpx.AsyncClient
) -> SignIn:
    return await start_signin(nursery, stub, start_adapter, http)


def bearer(token: str) -> dict[str, str]:
    return {**V1, "Authorization": f"Bearer {token}"}


async def rpc(http: httpx.AsyncClient, adapter: str, document: Any, token: str) -> Any:
    """A v1.0 JSON-RPC call with `token`; its response (HTTP 200 required)."""
    reply = await http.post(adapter, json=document, headers=bearer(token))
    assert reply.status_code == 200, reply.text
    return reply.json()


async def listed(http: httpx.AsyncClient, adapter: str, token: str) -> list[str]:
    page = (await rpc(http, adapter, call("ListTasks"), token))["result"]
    return [task["id"] for task in page["tasks"]]


async def test_the_card_leads_a_chat_bridge_to_sign_in_and_its_tasks_survive_a_refresh(
    signin: SignIn, stub: StubWebhook, http: httpx.AsyncClient
) -> None:
    adapter, client = signin.adapter, signin.client
    assert client.scheme.required_scopes == SCOPES
    assert client.scheme.metadata_url == signin.issuer.discovery_url
    alice: Tokens = await client.sign_in("alice")
    assert alice.refresh is not None, "the grant alone gives a refresh token"

    sent = await rpc(http, adapter, send_v1(QUESTION), alice.access)
    task = sent["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", sent
    assert [r.headers.get("x-subject-token") for r in stub.received] == [alice.access]

    refreshed = await client.refresh(alice)
    assert refreshed.access != alice.access
    # The owner is issuer and subject, not the token: the refreshed token keeps the task.
    fetched = await rpc(http, adapter, call("GetTask", id=task["id"]), refreshed.access)
    assert fetched["result"]["id"] == task["id"], fetched
    assert fetched["result"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["id"] in await listed(http, adapter, refreshed.access)

    bob = await client.sign_in("bob")
    foreign = await rpc(http, adapter, call("GetTask", id=task["id"]), bob.access)
    assert foreign["error"]["code"] == -32001, foreign
    assert task["id"] not in await listed(http, adapter, bob.access)


async def test_the_id_token_is_no_access_token(signin: SignIn, http: httpx.AsyncClient) -> None:
    tokens = await signin.client.sign_in("alice")
    assert tokens.id is not None
    refused = await http.post(signin.adapter, json=send_v1(QUESTION), headers=bearer(tokens.id))
    assert refused.status_code == 401, refused.text
    metrics = (await http.get(signin.adapter + "metrics")).text
    assert sample(metrics, "n8n_a2a_auth_failures_total", reason="not_access_token") == 1


async def test_a_call_without_a_token_is_shown_where_to_sign_in(
    signin: SignIn, http: httpx.AsyncClient
) -> None:
    adapter = signin.adapter
    refused = await http.post(adapter, json=send_v1(QUESTION), headers=V1)
    assert refused.status_code == 401, refused.text
    metadata_url = adapter + ".well-known/oauth-protected-resource"
    challenge = refused.headers["www-authenticate"]
    assert f'resource_metadata="{metadata_url}"' in challenge, challenge
    assert 'scope="a2a.call"' in challenge, challenge

    metadata = (await http.get(metadata_url)).raise_for_status().json()
    assert metadata["resource"] == adapter
    assert metadata["authorization_servers"] == [signin.issuer.issuer]
    assert "a2a.call" in metadata["scopes_supported"]
    assert metadata["bearer_methods_supported"] == ["header"]


async def test_a_public_url_without_its_last_slash_is_one_resource_with_it(
    nursery: trio.Nursery, stub: StubWebhook, start_adapter: AdapterFactory, http: httpx.AsyncClient
) -> None:
    # Written without its `/`, as an operator may; asked for with it, as the MCP auth
    # library does (and the issuer's resource is so written).
    signin = await start_signin(nursery, stub, start_adapter, http, slash="")
    canonical = signin.adapter + "/"
    metadata_url = canonical + ".well-known/oauth-protected-resource"
    assert (await http.get(metadata_url)).json()["resource"] == canonical
    alice = await signin.client.sign_in("alice")
    sent = await rpc(http, signin.adapter, send_v1(QUESTION), alice.access)
    assert sent["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", sent
