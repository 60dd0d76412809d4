"""What a caller's file parts cannot make the adapter do: fetch the
URL a part names, or put a file's name in an HTTP header or a log line of its own."""

from __future__ import annotations

import base64
import logging
import uuid
from typing import Any

import httpx
import pytest
import trio

from n8n_a2a.observability.logs import JsonFormatter, TextFormatter
from tests.support.adapter import AdapterFactory
from tests.support.jsonrpc import V1, call, get_task, rpc
from tests.support.sse import open_stream, streaming
from tests.support.stub_webhook import StubWebhook

MODES = {"input_modes": ("text/plain", "*/*"), "output_modes": ("text/plain", "*/*")}
EVIL_NAME = "shelf.png\r\nX-Evil: 1\r\n\r\n2026-12-01 12:00:00,000 ERROR   n8n_a2a: forged"


def send(parts: list[dict[str, Any]]) -> dict[str, Any]:
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": parts}
    return call("SendMessage", message=message)


async def test_a_url_part_is_never_fetched(
    stub: StubWebhook, start_adapter: AdapterFactory, nursery: trio.Nursery
) -> None:
    connections: list[str] = []

    async def note(stream: trio.SocketStream) -> None:
        connections.append(repr(await stream.receive_some(4096)))
        await stream.aclose()

    [listener] = await trio.open_tcp_listeners(0, host="127.0.0.1")
    url = f"http://127.0.0.1:{listener.socket.getsockname()[1]}/stock.csv"
    nursery.start_soon(trio.serve_listeners, note, [listener])
    adapter = await start_adapter(stub.url, **MODES)
    # The caller's part names the URL, and the workflow echoes it back as a reply file.
    parts = [{"text": "echo-parts"}, {"url": url, "mediaType": "text/csv", "filename": "s.csv"}]
    task = (await rpc(adapter, send(parts), V1))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert url in str(task["artifacts"]) and url in str(stub.received[0].json["files"])
    await get_task(adapter, task["id"])
    await rpc(adapter, call("ListTasks", includeArtifacts=True), V1)
    async with open_stream(adapter, streaming(send(parts)), V1) as stream:
        await stream.rest()
    await trio.sleep(0.2)  # time for a fetch, were there one
    assert connections == []


async def test_a_file_name_with_crlf_stays_out_of_headers_and_log_lines(
    stub: StubWebhook, start_adapter: AdapterFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    adapter = await start_adapter(stub.url, **MODES)
    raw = base64.b64encode(b"\x89PNG").decode()
    parts = [
        {"text": "echo-parts"},
        {"raw": raw, "mediaType": "image/png", "filename": EVIL_NAME},
    ]
    async with httpx.AsyncClient() as http:
        reply = await http.post(adapter, json=send(parts), headers=V1)
        task = reply.json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        # Kept as the caller wrote it, where JSON carries it: the upload's marker in the
        # history, and the artifact.
        assert task["history"][0]["parts"][1]["metadata"]["released"]["name"] == EVIL_NAME
        assert EVIL_NAME in [a["parts"][0].get("filename") for a in task["artifacts"]]
        listed = await http.post(adapter, json=call("ListTasks", includeArtifacts=True), headers=V1)
    [received] = stub.received
    assert received.json["files"][0]["name"] == EVIL_NAME
    for headers in (received.headers, reply.headers, listed.headers):
        assert not any("evil" in f"{name}{value}".lower() for name, value in headers.items())
    for record in caplog.records:
        for line in (TextFormatter().format(record), JsonFormatter().format(record)):
            assert "\nX-Evil" not in line and "\n2026-12-01" not in line
