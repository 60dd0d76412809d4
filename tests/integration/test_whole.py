"""Large answers and files at the default bounds: whole, by digest, on the blocking send,
on GetTask and on a stream (both versions); a caller's large upload reaches the workflow
whole and stays in the history as its marker."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import httpx
import pytest

from tests.support.adapter import AdapterFactory
from tests.support.jsonrpc import V1, call
from tests.support.sse import open_stream, results, streaming
from tests.support.stub_webhook import StubWebhook, payload

MIB = 1024 * 1024
FILES = {
    "input_modes": ("text/plain", "application/octet-stream"),
    "output_modes": ("text/plain", "application/octet-stream"),
    # The bounds stay at their defaults; only the call's deadline is a loaded machine's.
    "webhook_timeout": 120.0,
}


@pytest.fixture
async def adapter(stub: StubWebhook, start_adapter: AdapterFactory) -> str:
    url: str = await start_adapter(stub.url, **FILES)
    return url


def digest(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


async def rpc(adapter: str, document: dict[str, Any]) -> Any:
    async with httpx.AsyncClient(timeout=120) as client:
        reply = await client.post(adapter, json=document, headers=V1)
    assert reply.status_code == 200, reply.text[:500]
    return reply.json()


def send(*parts: dict[str, Any]) -> dict[str, Any]:
    message = {"messageId": "m-whole", "role": "ROLE_USER", "parts": list(parts)}
    return call("SendMessage", message=message)


async def sent_and_got(adapter: str, *parts: dict[str, Any]) -> list[dict[str, Any]]:
    """The task as the blocking send answered it, then as GetTask does."""
    task = (await rpc(adapter, send(*parts)))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task["status"]
    got = (await rpc(adapter, call("GetTask", id=task["id"])))["result"]
    return [task, got]


async def test_a_1_mib_answer_is_whole_on_the_send_and_on_get_task(adapter: str) -> None:
    answer = "x" * (MIB - 8) + "é, done."  # past the 8,192 characters a task once kept
    for task in await sent_and_got(adapter, {"text": "answer:" + answer}):
        assert task["artifacts"][-1]["parts"] == [{"text": answer}]
        assert task["status"]["message"]["parts"] == [{"text": answer}]
        assert "cut" not in task["metadata"]


async def test_a_20_mib_reply_file_is_whole_on_the_send_and_on_get_task(adapter: str) -> None:
    size = 20 * MIB
    for task in await sent_and_got(adapter, {"text": f"file:{size}"}):
        file, answer = task["artifacts"]
        [part] = file["parts"]
        assert (file["name"], part["mediaType"], part["filename"]) == (
            "big.bin",
            "application/octet-stream",
            "big.bin",
        )
        assert "metadata" not in part
        assert digest(base64.b64decode(part["raw"])) == digest(payload(size))
        assert answer["parts"] == [{"text": f"{size} bytes"}]


async def test_a_20_mib_upload_reaches_the_workflow_whole_and_stays_as_its_marker(
    adapter: str, stub: StubWebhook
) -> None:
    content = payload(20 * MIB)
    upload = {"raw": base64.b64encode(content).decode(), "mediaType": "application/octet-stream"}
    upload["filename"] = "scan.bin"
    for task in await sent_and_got(adapter, {"text": "answer:got it"}, upload):
        text, marker = task["history"][0]["parts"]
        assert text == {"text": "answer:got it"}
        # Never a file with empty bytes: a note, its facts under "released".
        assert set(marker) == {"text", "metadata"}
        assert marker["metadata"]["released"] == {
            "kind": "file",
            "name": "scan.bin",
            "mediaType": "application/octet-stream",
            "size": 20 * MIB,
            "reason": "upload",
        }
        assert "scan.bin (application/octet-stream, 20,971,520 bytes)" in marker["text"]
    [received] = stub.received
    [file] = received.json["files"]
    assert (file["name"], file["mediaType"]) == ("scan.bin", "application/octet-stream")
    assert digest(base64.b64decode(file["base64"])) == digest(content)


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_a_20_mib_reply_file_is_whole_on_a_stream(adapter: str, version: str) -> None:
    size = 20 * MIB
    document = streaming(send({"text": f"file:{size}"}))
    if version == "0.3":
        text = {"kind": "text", "text": f"file:{size}"}
        message = {"kind": "message", "messageId": "m-whole", "role": "user", "parts": [text]}
        document = {**document, "method": "message/stream", "params": {"message": message}}
    async with open_stream(adapter, document, {"A2A-Version": version}) as stream:
        events = results(await stream.rest())
    if version == "1.0":
        updates = [e["artifactUpdate"] for e in events if "artifactUpdate" in e]
        raw = [u["artifact"]["parts"][0].get("raw") for u in updates]
    else:
        updates = [e for e in events if e["kind"] == "artifact-update"]
        raw = [u["artifact"]["parts"][0].get("file", {}).get("bytes") for u in updates]
    # The file's artifact, then the answer's.
    assert raw[1:] == [None]
    assert digest(base64.b64decode(raw[0])) == digest(payload(size))
