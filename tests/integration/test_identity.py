"""Whose task it is, over real HTTP: callers isolated from each other, in the default mode
(the token's digest) and with verified tokens from a local OpenID Connect issuer."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
import trio
import trustme
from cryptography.hazmat.primitives import serialization

from n8n_a2a.core.owners import token_owner
from n8n_a2a.observability.logs import JsonFormatter
from tests.support.adapter import AdapterFactory, free_port, get
from tests.support.jsonrpc import V1, call, rpc, send_v03, send_v1
from tests.support.metrics import sample
from tests.support.oidc_issuer import AUDIENCE, LocalIssuer, start_issuer
from tests.support.sse import open_stream
from tests.support.stub_webhook import StubWebhook

Headers = dict[str, str]


def bearer(token: str) -> Headers:
    return {"Authorization": f"Bearer {token}"}


async def start_oidc_adapter(
    start_adapter: AdapterFactory, stub: StubWebhook, issuer: str, **overrides: Any
) -> str:
    # The local issuer is plain http on loopback: the setting meant for local tests.
    overrides = {"oidc_allow_http": True, "webhook_timeout": HELD, **overrides}
    adapter: str = await start_adapter(
        stub.url, oidc_issuer=issuer, oidc_audience=AUDIENCE, **overrides
    )
    return adapter


#: The webhook timeout here: a held call must still be running when the checks end,
#: however slow the machine (with 5 s, a loaded one saw it time out mid-check).
HELD = 300.0


@pytest.fixture
async def adapter(stub: StubWebhook, start_adapter: AdapterFactory) -> str:
    """The default adapter, but for its webhook timeout (HELD)."""
    url: str = await start_adapter(stub.url, webhook_timeout=HELD)
    return url


@pytest.fixture
async def scoped_adapter(
    issuer: LocalIssuer, stub: StubWebhook, start_adapter: AdapterFactory
) -> str:
    """An adapter whose callers' tokens must carry the scope a2a.call, ready."""
    adapter = await start_oidc_adapter(
        start_adapter, stub, issuer.issuer, oidc_scopes=("a2a.call",)
    )
    await until_ready(adapter)
    return adapter


async def until_ready(adapter: str) -> None:
    with trio.fail_after(5):
        while (await get(adapter + "readyz")).status_code != 200:  # noqa: ASYNC110 - polled
            await trio.sleep(0.02)


@pytest.fixture
async def issuer(nursery: trio.Nursery) -> LocalIssuer:
    return await start_issuer(nursery)


@pytest.fixture
async def oidc_adapter(
    issuer: LocalIssuer, stub: StubWebhook, start_adapter: AdapterFactory
) -> str:
    adapter = await start_oidc_adapter(start_adapter, stub, issuer.issuer)
    await until_ready(adapter)
    return adapter


# The attempts one caller can make on another's task, in both versions; each answers
# the JSON-RPC response (a stream's one error event for a subscription).
Attempt = Callable[[str, str, Headers], Awaitable[dict[str, Any]]]


async def v1_get(adapter: str, task_id: str, headers: Headers) -> dict[str, Any]:
    return await rpc(adapter, call("GetTask", id=task_id), {**V1, **headers})


async def v1_cancel(adapter: str, task_id: str, headers: Headers) -> dict[str, Any]:
    return await rpc(adapter, call("CancelTask", id=task_id), {**V1, **headers})


async def v1_subscribe(adapter: str, task_id: str, headers: Headers) -> dict[str, Any]:
    # A v1.0 subscription refused at once is a plain JSON-RPC error, not a stream.
    return await rpc(adapter, call("SubscribeToTask", id=task_id), {**V1, **headers})


async def v1_continue(adapter: str, task_id: str, headers: Headers) -> dict[str, Any]:
    document = send_v1("answer:more")
    document["params"]["message"]["taskId"] = task_id
    return await rpc(adapter, document, {**V1, **headers})


async def v03_get(adapter: str, task_id: str, headers: Headers) -> dict[str, Any]:
    return await rpc(adapter, call("tasks/get", id=task_id), headers)


async def v03_cancel(adapter: str, task_id: str, headers: Headers) -> dict[str, Any]:
    return await rpc(adapter, call("tasks/cancel", id=task_id), headers)


async def v03_resubscribe(adapter: str, task_id: str, headers: Headers) -> dict[str, Any]:
    async with open_stream(adapter, call("tasks/resubscribe", id=task_id), headers) as s:
        [event] = await s.rest()
    return event


async def v03_continue(adapter: str, task_id: str, headers: Headers) -> dict[str, Any]:
    message = {
        "kind": "message",
        "messageId": str(uuid.uuid4()),
        "role": "user",
        "parts": [{"kind": "text", "text": "answer:more"}],
        "taskId": task_id,
    }
    return await rpc(adapter, call("message/send", message=message), headers)


ATTEMPTS: list[Attempt] = [
    v1_get,
    v1_cancel,
    v1_subscribe,
    v1_continue,
    v03_get,
    v03_cancel,
    v03_resubscribe,
    v03_continue,
]


async def list_ids(adapter: str, headers: Headers) -> list[str]:
    page = (await rpc(adapter, call("ListTasks"), {**V1, **headers}))["result"]
    assert page["totalSize"] == len(page["tasks"])
    return [task["id"] for task in page["tasks"]]


async def check_isolation(
    adapter: str, stub: StubWebhook, alice: Headers, others: list[Headers]
) -> None:
    """Alice's tasks are hers: to anyone else they do not exist, whatever is asked."""
    held = await rpc(adapter, send_v1("hold", returnImmediately=True), {**V1, **alice})
    done = await rpc(adapter, send_v1("answer:secret plans"), {**V1, **alice})
    held_id, done_id = held["result"]["task"]["id"], done["result"]["task"]["id"]
    with trio.fail_after(5):
        await stub.wait_held()
    calls = len(stub.received)
    for other in others:
        for attempt in ATTEMPTS:
            unknown_id = str(uuid.uuid4())
            unknown = (await attempt(adapter, unknown_id, other))["error"]
            for task_id in (held_id, done_id):
                foreign = (await attempt(adapter, task_id, other))["error"]
                assert foreign["code"] == unknown["code"] == -32001, attempt.__name__
                assert foreign["message"].replace(task_id, "<id>") == unknown["message"].replace(
                    unknown_id, "<id>"
                ), attempt.__name__
                assert foreign.get("data") == unknown.get("data")
        assert await list_ids(adapter, other) == []
    assert len(stub.received) == calls  # nobody else's attempt reached the workflow
    assert await list_ids(adapter, alice) == [done_id, held_id]
    got = (await v1_get(adapter, done_id, alice))["result"]
    assert got["artifacts"][0]["parts"] == [{"text": "secret plans"}]
    canceled = (await v1_cancel(adapter, held_id, alice))["result"]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"


async def test_callers_with_different_tokens_never_see_each_others_tasks(
    adapter: str, stub: StubWebhook
) -> None:
    alice, bob = bearer("alice.token.one"), bearer("bob.token.one")
    await check_isolation(adapter, stub, alice, [bob, {}])
    assert await list_ids(adapter, bob) == []


async def test_the_anonymous_caller_owns_what_it_sent_without_a_token(
    adapter: str, stub: StubWebhook
) -> None:
    await check_isolation(adapter, stub, {}, [bearer("someone.else")])


async def test_verified_callers_never_see_each_others_tasks(
    oidc_adapter: str, stub: StubWebhook, issuer: LocalIssuer
) -> None:
    alice, bob = bearer(issuer.mint("alice")), bearer(issuer.mint("bob"))
    await check_isolation(oidc_adapter, stub, alice, [bob])


async def test_a_refreshed_token_still_polls_and_cancels_its_task(
    oidc_adapter: str, stub: StubWebhook, issuer: LocalIssuer
) -> None:
    first = bearer(issuer.mint("poller", lifetime=60, jti="first"))
    sent = await rpc(oidc_adapter, send_v1("hold", returnImmediately=True), {**V1, **first})
    task_id = sent["result"]["task"]["id"]
    refreshed = bearer(issuer.mint("poller", lifetime=3600, jti="second"))
    assert refreshed != first
    polled = (await v1_get(oidc_adapter, task_id, refreshed))["result"]
    assert polled["status"]["state"] == "TASK_STATE_WORKING"
    assert await list_ids(oidc_adapter, refreshed) == [task_id]
    canceled = (await v1_cancel(oidc_adapter, task_id, refreshed))["result"]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    # In the default mode a new token is a new caller: that is the refresh caveat.
    assert token_owner("first") != token_owner("second")


async def test_the_owner_reaches_neither_the_workflow_nor_a_task_nor_a_log_line(
    adapter: str, stub: StubWebhook, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    token = "eyJhbGciOi.owner-test"
    digest = token_owner(token)
    assert digest is not None
    secret = digest.removeprefix("token:")
    reply = await rpc(adapter, send_v1("answer:x"), {**V1, **bearer(token)})
    await rpc(adapter, call("ListTasks"), {**V1, **bearer(token)})
    await rpc(adapter, call("GetTask", id="unknown"), {**V1, **bearer(token)})
    [received] = stub.received
    assert received.headers["x-subject-token"] == token
    assert secret not in json.dumps(received.headers) and secret.encode() not in received.body
    assert "owner" not in received.json
    assert secret not in json.dumps(reply)
    assert secret not in (await get(adapter + "metrics")).text
    for record in caplog.records:
        assert secret not in JsonFormatter().format(record)


def b64json(document: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(document).encode()).rstrip(b"=").decode()


def bad_tokens(issuer: LocalIssuer) -> dict[str, tuple[Headers, str]]:
    """Requests whose token fails, and the reason each is counted under."""
    claims = {"iss": issuer.issuer, "sub": "x", "aud": AUDIENCE, "exp": 2**40}
    alg_none = f"{b64json({'alg': 'none', 'kid': issuer.current.kid})}.{b64json(claims)}."
    return {
        "no token": ({}, "no_token"),
        "malformed header": ({"Authorization": "Bearer two words"}, "malformed"),
        "not a JWT": (bearer("opaque-token"), "malformed"),
        "expired": (bearer(issuer.mint(lifetime=-600)), "expired"),
        "wrong audience": (bearer(issuer.mint(aud="other")), "wrong_audience"),
        "wrong issuer": (bearer(issuer.mint(iss="https://elsewhere.example")), "wrong_issuer"),
        "unknown key": (bearer(issuer.mint(headers={"kid": "made-up"})), "unknown_key"),
        "alg none": (bearer(alg_none), "bad_signature"),
        "HS256 with the public key as secret": (
            bearer(hmac_public(issuer, claims)),
            "bad_signature",
        ),
        "typ JOSE": (bearer(issuer.mint(headers={"typ": "JOSE"})), "not_access_token"),
        "typ a number": (bearer(issuer.mint(headers={"typ": 1})), "not_access_token"),
        "claims nested 2,000 deep": (bearer(nested(issuer, claims, 2000)), "malformed"),
    }


def hmac_public(issuer: LocalIssuer, claims: dict[str, Any]) -> str:
    """The alg-confusion attack: HS256, the issuer's public key (PEM) as the secret."""
    public = issuer.current.private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    signing_input = f"{b64json({'alg': 'HS256', 'kid': issuer.current.kid})}.{b64json(claims)}"
    signature = hmac.new(public, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"


def nested(issuer: LocalIssuer, claims: dict[str, Any], depth: int) -> str:
    """Claims holding arrays `depth` deep, under a signature that is none."""
    deep = json.dumps(claims)[:-1] + ', "n": ' + "[" * depth + "]" * depth + "}"
    header = b64json({"alg": "RS256", "kid": issuer.current.kid})
    return f"{header}.{base64.urlsafe_b64encode(deep.encode()).rstrip(b'=').decode()}.c2ln"


async def test_a_token_past_the_header_bound_is_refused_by_http_alone(
    oidc_adapter: str, stub: StubWebhook, issuer: LocalIssuer
) -> None:
    # Signed, for this agent, but 1 MiB of claims: refused before any verification.
    huge = issuer.mint("alice", blob="x" * 2**20)
    async with httpx.AsyncClient() as client:
        refused = await client.post(oidc_adapter, json=send_v1("x"), headers={**V1, **bearer(huge)})
        assert refused.status_code in (400, 431), refused.text
        fine = await client.post(
            oidc_adapter, json=send_v1("answer:ok"), headers={**V1, **bearer(issuer.mint("bob"))}
        )
    assert fine.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert len(stub.received) == 1 and huge not in refused.text


async def test_a_bad_token_is_401_before_any_webhook_call(
    oidc_adapter: str, stub: StubWebhook, issuer: LocalIssuer
) -> None:
    cases = bad_tokens(issuer)
    async with httpx.AsyncClient() as client:
        for name, (headers, reason) in cases.items():
            for version, body in (("1.0", send_v1("x", request_id=9)), ("0.3", send_v03("x", 9))):
                refused = await client.post(
                    oidc_adapter, json=body, headers={"A2A-Version": version, **headers}
                )
                assert refused.status_code == 401, name
                challenge = refused.headers["www-authenticate"]
                assert challenge.startswith('Bearer realm="a2a"'), name
                assert ('error="invalid_token"' in challenge) == (reason != "no_token"), name
                error = refused.json()["error"]
                assert (refused.json()["id"], error["code"]) == (9, -32600), name
                token = headers.get("Authorization", "").removeprefix("Bearer ")
                for part in token.split("."):
                    assert len(part) < 3 or part not in refused.text + challenge, name
    assert stub.received == []
    metrics = (await get(oidc_adapter + "metrics")).text
    for name, (_, reason) in cases.items():
        expected = sum(2 for _, r in cases.values() if r == reason)
        assert sample(metrics, "n8n_a2a_auth_failures_total", reason=reason) == expected, name
    assert sample(metrics, "n8n_a2a_auth_failures_total", reason="issuer_unreachable") == 0


async def test_a_verified_token_still_reaches_the_workflow(
    oidc_adapter: str, stub: StubWebhook, issuer: LocalIssuer
) -> None:
    token = issuer.mint("alice")
    reply = await rpc(oidc_adapter, send_v1("answer:ok"), {**V1, **bearer(token)})
    assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert stub.received[0].headers["x-subject-token"] == token


async def test_the_card_names_the_issuer_and_requires_its_tokens(oidc_adapter: str) -> None:
    issuer_card = (await get(oidc_adapter + ".well-known/agent-card.json", **V1)).json()
    legacy = (await get(oidc_adapter + ".well-known/agent-card.json")).json()
    name, scheme = next(iter(issuer_card["securitySchemes"].items()))
    url = scheme["openIdConnectSecurityScheme"]["openIdConnectUrl"]
    assert url.endswith("/.well-known/openid-configuration")
    assert issuer_card["securityRequirements"][0] == {"schemes": {name: {"list": []}}}
    assert legacy["securitySchemes"][name]["type"] == "openIdConnect"
    assert legacy["securitySchemes"][name]["openIdConnectUrl"] == url
    assert legacy["security"][0] == {name: []}
    async with httpx.AsyncClient() as client:
        assert (await client.get(url)).json()["jwks_uri"]


async def test_an_issuer_down_at_start_is_not_ready_with_one_clear_line(
    stub: StubWebhook,
    start_adapter: AdapterFactory,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="n8n_a2a")
    port = free_port()
    adapter = await start_oidc_adapter(start_adapter, stub, f"http://127.0.0.1:{port}")
    with trio.fail_after(5):
        while not [r for r in caplog.records if r.name == "n8n_a2a.auth"]:  # noqa: ASYNC110
            await trio.sleep(0.02)
    not_ready = await get(adapter + "readyz")
    assert not_ready.status_code == 503
    assert "ADAPTER_OIDC_ISSUER" in not_ready.json()["reason"]
    refused = await rpc_status(adapter, bearer("a.b.c"))
    assert refused == 401
    [line] = [r for r in caplog.records if r.name == "n8n_a2a.auth"]
    assert line.levelno == logging.WARNING
    text = line.getMessage()
    assert f"127.0.0.1:{port}/.well-known/openid-configuration" in text
    assert "not ready" in text


async def rpc_status(adapter: str, headers: Headers) -> int:
    async with httpx.AsyncClient() as client:
        reply = await client.post(adapter, json=send_v1("answer:x"), headers={**V1, **headers})
    return reply.status_code


async def test_the_issuers_keys_come_over_tls_verified_with_the_ca_bundle(
    nursery: trio.Nursery, stub: StubWebhook, start_adapter: AdapterFactory, tmp_path: Any
) -> None:
    authority = trustme.CA()
    certificate = authority.issue_cert("127.0.0.1")
    cert_file, key_file, bundle = (tmp_path / n for n in ("cert.pem", "key.pem", "ca.pem"))
    certificate.private_key_and_cert_chain_pem.write_to_path(str(cert_file))
    certificate.private_key_pem.write_to_path(str(key_file))
    authority.cert_pem.write_to_path(str(bundle))
    issuer = await start_issuer(nursery, certfile=str(cert_file), keyfile=str(key_file))
    assert issuer.issuer.startswith("https://")

    trusted = await start_oidc_adapter(start_adapter, stub, issuer.issuer, ca_bundle=str(bundle))
    await until_ready(trusted)
    reply = await rpc(trusted, send_v1("answer:ok"), {**V1, **bearer(issuer.mint())})
    assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"

    untrusted = await start_oidc_adapter(start_adapter, stub, issuer.issuer)
    await trio.sleep(0.3)
    assert (await get(untrusted + "readyz")).status_code == 503
    assert await rpc_status(untrusted, bearer(issuer.mint())) == 401


async def test_every_401_says_where_to_learn_to_sign_in_and_the_metadata_is_there(
    issuer: LocalIssuer, stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    port = free_port()
    public = f"http://127.0.0.1:{port}/agents/supply"
    await start_oidc_adapter(
        start_adapter, stub, issuer.issuer, port=port, public_url=public, oidc_scopes=("a2a.call",)
    )
    metadata_url = f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/agents/supply"
    async with httpx.AsyncClient() as client:
        for url, body in (
            (public, send_v1("x")),
            (public + "/message:send", send_v1("x")["params"]),
        ):
            for headers in ({}, bearer("a.b.c"), bearer(issuer.mint(scope="a2a.call", nonce="n"))):
                refused = await client.post(url, json=body, headers={**V1, **headers})
                assert refused.status_code == 401, (url, headers)
                challenge = refused.headers["www-authenticate"]
                assert challenge.endswith(f'scope="a2a.call", resource_metadata="{metadata_url}"')
        # Unauthenticated, cacheable: what RFC 9728 §2 says a client needs.
        metadata = await client.get(metadata_url)
    assert metadata.status_code == 200 and "public" in metadata.headers["cache-control"]
    assert metadata.json() == {
        "resource": public,
        "authorization_servers": [issuer.issuer],
        "scopes_supported": ["a2a.call"],
        "bearer_methods_supported": ["header"],
        "resource_name": "Supply agent",
    }
    metrics = (await get(f"http://127.0.0.1:{port}/metrics")).text
    assert sample(metrics, "n8n_a2a_auth_failures_total", reason="not_access_token") == 2
    assert stub.received == []


async def test_a_token_without_the_scope_is_403_on_both_bindings_before_the_webhook(
    scoped_adapter: str, issuer: LocalIssuer, stub: StubWebhook
) -> None:
    adapter = scoped_adapter
    narrow = bearer(issuer.mint("alice", scope="openid profile"))
    async with httpx.AsyncClient() as client:
        jsonrpc = await client.post(
            adapter, json=send_v1("x", request_id=4), headers={**V1, **narrow}
        )
        rest = await client.post(
            adapter + "message:send", json=send_v1("x")["params"], headers={**V1, **narrow}
        )
    for refused in (jsonrpc, rest):
        assert refused.status_code == 403
        challenge = refused.headers["www-authenticate"]
        assert 'error="insufficient_scope"' in challenge and 'scope="a2a.call"' in challenge
    assert jsonrpc.json()["id"] == 4 and jsonrpc.json()["error"]["code"] == -32600
    assert "a2a.call" in jsonrpc.json()["error"]["message"]
    assert rest.json()["error"]["code"] == 403
    assert stub.received == []
    enough = bearer(issuer.mint("alice", scope="openid a2a.call"))
    reply = await rpc(adapter, send_v1("answer:ok"), {**V1, **enough})
    assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    metrics = (await get(adapter + "metrics")).text
    assert sample(metrics, "n8n_a2a_auth_failures_total", reason="insufficient_scope") == 2


async def test_the_card_offers_the_issuers_code_flow_once_its_discovery_is_read(
    scoped_adapter: str, issuer: LocalIssuer
) -> None:
    adapter = scoped_adapter
    card_url = adapter + ".well-known/agent-card.json"
    card = await get(card_url, **V1)
    assert card.headers["cache-control"] == "public, max-age=300"
    oauth2 = card.json()["securitySchemes"]["oauth2"]["oauth2SecurityScheme"]
    assert oauth2["oauth2MetadataUrl"] == issuer.issuer + "/.well-known/openid-configuration"
    assert oauth2["flows"]["authorizationCode"] == {
        "authorizationUrl": issuer.issuer + "/auth",
        "tokenUrl": issuer.issuer + "/token",
        "refreshUrl": issuer.issuer + "/token",
        "scopes": {"a2a.call": "Required to call this agent"},
        "pkceRequired": True,
    }
    assert card.json()["securityRequirements"] == [
        {"schemes": {"oidc": {"list": ["a2a.call"]}}},
        {"schemes": {"oauth2": {"list": ["a2a.call"]}}},
    ]
    legacy = (await get(card_url)).json()
    assert legacy["securitySchemes"]["oauth2"]["type"] == "oauth2"
    assert legacy["security"] == [{"oidc": ["a2a.call"]}, {"oauth2": ["a2a.call"]}]
    again = await get(card_url, **{**V1, "If-None-Match": card.headers["etag"]})
    assert again.status_code == 304
