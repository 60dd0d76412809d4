"""Operating the adapter: health, metrics, logs, trace context, bearer auth, TLS."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import pytest
import trio
import trustme

from n8n_a2a.config.settings import MAX_PAYLOAD_BYTES
from n8n_a2a.observability.logs import JsonFormatter, TextFormatter
from tests.support.adapter import AdapterFactory, get
from tests.support.jsonrpc import V1, rpc, send_v1
from tests.support.metrics import sample
from tests.support.stub_webhook import StubWebhook, start_stub_webhook

TOKEN = "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXN1YmplY3Q.sig-n4tur3"
REQUESTS = "n8n_a2a_jsonrpc_requests_total"


async def test_liveness_and_readiness_never_call_the_workflow(
    adapter: str, stub: StubWebhook
) -> None:
    assert (await get(adapter + "healthz")).json() == {"status": "ok"}
    assert (await get(adapter + "readyz")).json() == {"status": "ready"}
    assert stub.received == []


async def test_readiness_can_check_the_webhooks_host(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    reachable = await start_adapter(stub.url, ready_check_webhook=True)
    assert (await get(reachable + "readyz")).status_code == 200
    dead = await start_adapter("http://127.0.0.1:9/webhook", ready_check_webhook=True)
    not_ready = await get(dead + "readyz")
    assert not_ready.status_code == 503
    assert "does not take connections" in not_ready.json()["reason"]
    assert stub.received == []


async def test_metrics_count_outcomes_requests_and_calls(adapter: str, stub: StubWebhook) -> None:
    for text in ("answer:a", "answer:b", "escalate:c", "silent", "n8n-error", "redirect"):
        await rpc(adapter, send_v1(text), V1)
    await rpc(adapter, {"jsonrpc": "2.0", "id": 1, "method": "NoSuchMethod", "params": {}}, V1)
    await rpc(adapter, send_v1("hold", returnImmediately=True), V1)
    with trio.fail_after(5):
        await stub.wait_held()
    text = (await get(adapter + "metrics")).text
    assert sample(text, "n8n_a2a_tasks_total", outcome="ANSWERED") == 2
    assert sample(text, "n8n_a2a_tasks_total", outcome="ESCALATED") == 1
    assert sample(text, "n8n_a2a_tasks_total", outcome="SILENT") == 2
    assert sample(text, "n8n_a2a_tasks_total", outcome="REDIRECTED") == 1
    assert sample(text, "n8n_a2a_tasks_total", outcome="TIMEOUT") == 0
    assert sample(text, "n8n_a2a_webhook_duration_seconds_count") == 6
    assert sample(text, REQUESTS, binding="jsonrpc", method="SendMessage", code="0") == 7
    assert sample(text, REQUESTS, binding="jsonrpc", method="other", code="-32601") == 1
    assert sample(text, "n8n_a2a_webhook_calls_in_flight") == 1
    assert sample(text, "n8n_a2a_webhook_calls_queued") == 0
    assert sample(text, "n8n_a2a_tasks_in_table") == 7


async def test_the_token_is_in_no_log_line_at_any_level(
    adapter: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    headers = {**V1, "Authorization": f"Bearer {TOKEN}"}
    echoes = ("echo-token", "echo-token:escaped", "echo-token:location", "echo-token:content-type")
    for text in ("answer:ok", *echoes, "not-registered", "off-contract-text"):
        await rpc(adapter, send_v1(text), headers)
    await rpc(adapter, {"jsonrpc": "2.0", "id": 1, "method": "Nope", "params": {}}, headers)
    bad = {**V1, "Authorization": f"Bearer {TOKEN} trailing"}
    await rpc(adapter, send_v1("x"), bad)
    assert len(caplog.records) > 10  # DEBUG lines of httpx are in there too
    middle = TOKEN.split(".")[1]
    secret_parts = (TOKEN, middle, "".join(f"%{ord(c):02x}" for c in middle))
    for formatter in (JsonFormatter(), TextFormatter()):
        for record in caplog.records:
            line = formatter.format(record)
            assert not any(part in line for part in secret_parts), line


async def test_each_task_logs_one_structured_line(
    adapter: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="n8n_a2a")
    task = (await rpc(adapter, send_v1("escalate:approve"), V1))["result"]["task"]
    [record] = [r for r in caplog.records if getattr(r, "fields", {}).get("event") == "task"]
    line = json.loads(JsonFormatter().format(record))
    assert line["task_id"] == task["id"]
    assert line["context_id"] == task["contextId"]
    assert (line["outcome"], line["state"], line["webhook_status"]) == (
        "ESCALATED",
        "failed",
        200,
    )
    assert line["webhook_ms"] >= 0
    assert line["level"] == "INFO"


async def test_errors_log_one_structured_line(
    adapter: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="n8n_a2a")
    await rpc(adapter, {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}, V1)
    [record] = [r for r in caplog.records if getattr(r, "fields", {}).get("event") == "rpc_error"]
    assert json.loads(JsonFormatter().format(record))["code"] == -32001


async def test_the_trace_context_reaches_the_workflow(adapter: str, stub: StubWebhook) -> None:
    traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    headers = {**V1, "traceparent": traceparent, "tracestate": "congo=t61rcWkgMzE"}
    await rpc(adapter, send_v1("answer:traced"), headers)
    await rpc(adapter, send_v1("answer:untraced"), {**V1, "traceparent": "garbage"})
    assert stub.received[0].headers["traceparent"] == traceparent
    assert stub.received[0].headers["tracestate"] == "congo=t61rcWkgMzE"
    assert "traceparent" not in stub.received[1].headers


async def test_a_required_token_is_enforced_before_any_webhook_call(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start_adapter(stub.url, require_token=True)
    async with httpx.AsyncClient() as client:
        refused = await client.post(adapter, json=send_v1("answer:x", request_id=4), headers=V1)
        card = (await client.get(adapter + ".well-known/agent-card.json", headers=V1)).json()
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith("Bearer")
    assert refused.json()["id"] == 4
    assert "Authorization: Bearer" in refused.json()["error"]["message"]
    assert stub.received == []
    accepted = await rpc(adapter, send_v1("answer:x"), {**V1, "Authorization": f"Bearer {TOKEN}"})
    assert accepted["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"
    assert card["securityRequirements"] == [{"schemes": {"bearer": {"list": []}}}]


def a_send(request_id: int) -> bytes:
    return json.dumps(send_v1("answer:x", request_id=request_id)).encode()


@pytest.mark.parametrize(
    ("body", "headers", "request_id"),
    [
        (b"{not json", {}, None),
        (b'[{"jsonrpc":"2.0","id":1,"method":"SendMessage"}]', {}, None),
        (a_send(5), {"Content-Type": "text/plain"}, 5),
        (a_send(6), {"A2A-Version": "9.9"}, 6),
        (a_send(7), {"A2A-Version": "¹"}, 7),
        (a_send(8), {"Authorization": "Bearer two words"}, 8),
        (a_send(9), {"Authorization": "Bearer"}, 9),
        (b" " * (MAX_PAYLOAD_BYTES + 1), {}, None),  # over ADAPTER_MAX_BODY_BYTES
    ],
)
async def test_a_required_token_is_checked_before_anything_else(
    stub: StubWebhook,
    start_adapter: AdapterFactory,
    body: bytes,
    headers: dict[str, str],
    request_id: int | None,
) -> None:
    adapter = await start_adapter(stub.url, require_token=True)
    sent = {"Content-Type": "application/json", **V1, **headers}
    async with httpx.AsyncClient() as client:
        refused = await client.post(
            adapter,
            content=body,
            headers={k.encode(): v.encode("latin-1") for k, v in sent.items()},
        )
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith("Bearer")
    assert refused.json()["id"] == request_id
    assert refused.json()["error"]["code"] == -32600
    assert "words" not in refused.text
    assert stub.received == []


async def test_the_token_is_optional_by_default(adapter: str) -> None:
    card = (await get(adapter + ".well-known/agent-card.json")).json()
    assert card["securitySchemes"] == {
        "bearer": {
            "type": "http",
            "scheme": "Bearer",
            "description": card["securitySchemes"]["bearer"]["description"],
        }
    }
    assert "security" not in card
    reply = await rpc(adapter, send_v1("answer:x"), V1)
    assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_tls_to_the_webhook_is_verified_end_to_end(
    nursery: trio.Nursery, start_adapter: AdapterFactory, tmp_path: Any
) -> None:
    authority = trustme.CA()
    certificate = authority.issue_cert("127.0.0.1")
    cert_file, key_file, bundle = (tmp_path / n for n in ("cert.pem", "key.pem", "ca.pem"))
    certificate.private_key_and_cert_chain_pem.write_to_path(str(cert_file))
    certificate.private_key_pem.write_to_path(str(key_file))
    authority.cert_pem.write_to_path(str(bundle))
    tls = await start_stub_webhook(nursery, certfile=str(cert_file), keyfile=str(key_file))

    trusted = await start_adapter(tls.url, ca_bundle=str(bundle))
    task = (await rpc(trusted, send_v1("answer:secure"), V1))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"

    untrusted = await start_adapter(tls.url)
    task = (await rpc(untrusted, send_v1("answer:secure"), V1))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert task["metadata"] == {"outcome": "TLS_FAILURE"}
    assert "TLS" in task["status"]["message"]["parts"][0]["text"]
