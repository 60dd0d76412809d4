"""Data and files over real HTTP, both ways and both versions: what the workflow gets, the
artifacts a send, a stream, a push and GetTask/ListTasks carry, and every refusal."""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

import httpx
import pytest
import trio

from n8n_a2a.protocol.parts import MAX_ATTACHMENTS
from n8n_a2a.protocol.push import AllowList
from tests.support.adapter import AdapterFactory, get
from tests.support.jsonrpc import V1, call, get_task, rpc, wait_for_state
from tests.support.push_receiver import PushReceiver, start_push_receiver
from tests.support.sse import open_stream, results, streaming
from tests.support.stub_webhook import StubWebhook

MODES = {
    "input_modes": ("text/plain", "application/json", "text/csv", "image/png"),
    "output_modes": ("text/plain", "application/json", "text/csv", "image/png"),
}
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
PNG_B64 = base64.b64encode(PNG).decode()
CSV_URL = "https://files.example/stock.csv"
#: What the workflow gets of the parts below: the contract's `data` and `files`.
DATA = [{"sku": "F-1", "qty": 4}]
#: What a task keeps of the caller's shelf.png: its facts, under the part's "released".
RELEASED_PNG = {
    "kind": "file",
    "name": "shelf.png",
    "mediaType": "image/png",
    "size": len(PNG),
    "reason": "upload",
}
FILES = [
    {"name": "shelf.png", "mediaType": "image/png", "base64": PNG_B64},
    {"name": "", "mediaType": "text/csv", "url": CSV_URL},
]


@pytest.fixture
async def parts(stub: StubWebhook, start_adapter: AdapterFactory) -> str:
    url: str = await start_adapter(stub.url, **MODES)
    return url


def v1_parts(text: str = "echo-parts") -> list[dict[str, Any]]:
    return [
        {"text": text},
        {"data": DATA[0]},
        {"raw": PNG_B64, "mediaType": "image/png", "filename": "shelf.png"},
        {"url": CSV_URL, "mediaType": "text/csv"},
    ]


def v03_parts(text: str = "echo-parts") -> list[dict[str, Any]]:
    return [
        {"kind": "text", "text": text},
        {"kind": "data", "data": DATA[0]},
        {"kind": "file", "file": {"name": "shelf.png", "mimeType": "image/png", "bytes": PNG_B64}},
        {"kind": "file", "file": {"mimeType": "text/csv", "uri": CSV_URL}},
    ]


def send_v1(parts: list[dict[str, Any]], **configuration: Any) -> dict[str, Any]:
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": parts}
    return call("SendMessage", message=message, configuration=configuration)


def send_v03(parts: list[dict[str, Any]], **configuration: Any) -> dict[str, Any]:
    message = {"kind": "message", "messageId": str(uuid.uuid4()), "role": "user", "parts": parts}
    return call("message/send", "7", message=message, configuration=configuration)


def v1_artifacts(task: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(a["name"], a["parts"][0]) for a in task["artifacts"]]


def assert_v1_echoed(task: dict[str, Any]) -> None:
    """The echo-parts answer as v1.0 writes it: data, each file as it came, the answer."""
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert v1_artifacts(task) == [
        ("data", {"data": {"received": DATA}}),
        ("shelf.png", {"raw": PNG_B64, "mediaType": "image/png", "filename": "shelf.png"}),
        ("file", {"url": CSV_URL, "mediaType": "text/csv"}),
        ("answer", {"text": "1 data, 2 files"}),
    ]


async def test_a_v1_send_carries_data_and_files_both_ways(parts: str, stub: StubWebhook) -> None:
    reply = await rpc(parts, send_v1(v1_parts()), V1)
    task = reply["result"]["task"]
    assert_v1_echoed(task)
    [received] = stub.received
    body = received.json
    assert (body["text"], body["data"], body["files"]) == ("echo-parts", DATA, FILES)
    # The task keeps the caller's file by name, type and size, never its bytes: as a text
    # part that says so, never as a file with empty bytes.
    kept = task["history"][0]["parts"][2]
    assert kept["metadata"] == {"released": RELEASED_PNG}
    assert f"The file shelf.png (image/png, {len(PNG)} bytes) went to the workflow" in kept["text"]
    assert set(kept) == {"text", "metadata"}
    assert task["history"][0]["parts"][3] == {"url": CSV_URL, "mediaType": "text/csv"}


async def test_a_v03_send_carries_data_and_files_both_ways(parts: str, stub: StubWebhook) -> None:
    task = (await rpc(parts, send_v03(v03_parts(), blocking=True)))["result"]
    assert (task["kind"], task["status"]["state"]) == ("task", "completed")
    shown = [(a["name"], a["parts"][0]) for a in task["artifacts"]]
    assert shown == [
        ("data", {"kind": "data", "data": {"received": DATA}}),
        (
            "shelf.png",
            {
                "kind": "file",
                "file": {"bytes": PNG_B64, "mimeType": "image/png", "name": "shelf.png"},
            },
        ),
        ("file", {"kind": "file", "file": {"uri": CSV_URL, "mimeType": "text/csv"}}),
        ("answer", {"kind": "text", "text": "1 data, 2 files"}),
    ]
    assert (stub.received[0].json["data"], stub.received[0].json["files"]) == (DATA, FILES)
    kept = task["history"][0]["parts"][2]
    assert (kept["kind"], kept["metadata"]) == ("text", {"released": RELEASED_PNG})
    assert "The file shelf.png (image/png, " in kept["text"]


async def test_data_alone_makes_an_empty_text(parts: str, stub: StubWebhook) -> None:
    """The workflow engine's A2A node: one data part, nothing else."""
    await rpc(parts, send_v1([{"data": {"question": "flour?"}}]), V1)
    body = stub.received[0].json
    assert (body["text"], body["data"]) == ("", [{"question": "flour?"}])
    assert "files" not in body


async def test_a_non_blocking_send_then_get_and_list_show_the_artifacts(parts: str) -> None:
    sent = await rpc(parts, send_v1(v1_parts(), returnImmediately=True), V1)
    task_id = sent["result"]["task"]["id"]
    assert_v1_echoed(await wait_for_state(parts, task_id, "TASK_STATE_COMPLETED"))
    listed = await rpc(parts, call("ListTasks", includeArtifacts=True), V1)
    [task] = listed["result"]["tasks"]
    assert_v1_echoed(task)
    v03 = (await rpc(parts, call("tasks/get", id=task_id)))["result"]
    assert [a["name"] for a in v03["artifacts"]] == ["data", "shelf.png", "file", "answer"]


async def test_a_v1_stream_sends_each_artifact_as_an_update(parts: str) -> None:
    async with open_stream(parts, streaming(send_v1(v1_parts())), V1) as stream:
        events = await stream.rest()
    updates = [e["result"]["artifactUpdate"]["artifact"] for e in events[2:-1]]
    assert [(a["name"], a["parts"][0]) for a in updates] == v1_artifacts(
        await get_task(parts, events[0]["result"]["task"]["id"])
    )
    assert events[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_v03_stream_sends_each_artifact_as_an_update(parts: str) -> None:
    async with open_stream(parts, streaming(send_v03(v03_parts()))) as stream:
        events = await stream.rest()
    shown = [r["kind"] for r in results(events)]
    assert shown == ["task", "status-update", *["artifact-update"] * 4, "status-update"]
    data = results(events)[2]["artifact"]["parts"][0]
    assert data == {"kind": "data", "data": {"received": DATA}}


async def test_a_push_receiver_gets_the_data_and_file_artifacts(
    stub: StubWebhook, start_adapter: AdapterFactory, nursery: trio.Nursery
) -> None:
    receiver: PushReceiver = await start_push_receiver(nursery)
    adapter = await start_adapter(stub.url, push_allow_hosts=AllowList.parse("127.0.0.1"), **MODES)
    document = send_v1(v1_parts(), taskPushNotificationConfig={"url": receiver.url})
    await rpc(adapter, document, V1)
    with trio.fail_after(10):
        await receiver.wait_received(6)
    pushed = [
        body["artifactUpdate"]["artifact"] for body in receiver.bodies() if "artifactUpdate" in body
    ]
    assert [a["name"] for a in pushed] == ["data", "shelf.png", "file", "answer"]
    assert pushed[1]["parts"][0]["raw"] == PNG_B64


@pytest.mark.parametrize(
    ("part", "words"),
    [
        (
            {"raw": PNG_B64, "mediaType": "application/pdf"},
            "parts[1] is a file part of type application/pdf",
        ),
        ({"data": {"a": 1}}, "parts[1] is a data part of type application/json"),
    ],
)
async def test_a_part_of_a_type_not_accepted_is_32005_before_any_call(
    stub: StubWebhook, start_adapter: AdapterFactory, part: dict[str, Any], words: str
) -> None:
    adapter = await start_adapter(stub.url, input_modes=("text/plain", "image/png"))
    reply = await rpc(adapter, send_v1([{"text": "answer:x"}, part]), V1)
    assert reply["error"]["code"] == -32005
    assert words in reply["error"]["message"]
    v03 = await rpc(
        adapter, send_v03([{"kind": "text", "text": "x"}, {"kind": "data", "data": {}}])
    )
    assert v03["error"]["code"] == -32005
    assert "parts[1] is a data part" in v03["error"]["message"]
    assert stub.received == []


async def test_a_v03_stream_refused_for_a_part_is_its_one_error_event(adapter: str) -> None:
    """a2a-sdk 0.3 reads an error's code only from an event; v1.0 gets plain JSON-RPC."""
    document = streaming(send_v03([{"kind": "data", "data": {}}]))
    async with open_stream(adapter, document) as stream:
        [event] = await stream.rest()
    assert event["id"] == "7"
    assert event["error"]["code"] == -32005
    refused = await rpc(adapter, streaming(send_v1([{"data": {}}])), V1)
    assert refused["error"]["code"] == -32005


async def test_without_the_settings_nothing_changes(adapter: str, stub: StubWebhook) -> None:
    """Text in, text out: a file is -32005 as before, and a reply with data is off contract."""
    card = (await get(adapter + ".well-known/agent-card.json")).json()
    assert card["defaultInputModes"] == card["defaultOutputModes"] == ["text/plain"]
    refused = await rpc(adapter, send_v1(v1_parts("answer:x")[:3]), V1)
    assert refused["error"]["code"] == -32005
    task = (await rpc(adapter, send_v1([{"text": "echo-parts"}]), V1))["result"]["task"]
    assert task["metadata"]["outcome"] == "OFF_CONTRACT"
    assert '"data": {"received": []}' in task["status"]["message"]["parts"][0]["text"]
    assert json.loads(stub.received[0].body).keys() == {
        "text",
        "taskId",
        "contextId",
        "messageId",
        "skillId",
    }


async def test_the_card_declares_the_modes(parts: str) -> None:
    for headers in (V1, {}):
        card = (await get(parts + ".well-known/agent-card.json", **headers)).json()
        assert card["defaultInputModes"] == list(MODES["input_modes"])
        assert card["defaultOutputModes"] == list(MODES["output_modes"])
        assert card["skills"][0]["inputModes"] == list(MODES["input_modes"])


async def test_a_file_the_output_modes_do_not_list_is_off_contract(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    """The workflow echoes a PNG that this deployment may take in but not give out."""
    modes = {**MODES, "output_modes": ("text/plain", "application/json")}
    adapter = await start_adapter(stub.url, **modes)
    task = (await rpc(adapter, send_v1(v1_parts()), V1))["result"]["task"]
    assert task["metadata"]["outcome"] == "OFF_CONTRACT"
    why = task["status"]["message"]["parts"][0]["text"]
    assert "its keys are" in why and '"files"' in why


async def test_the_body_bound_holds_for_files(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start_adapter(stub.url, max_body_bytes=4096, **MODES)
    small = base64.b64encode(bytes(2000)).decode()
    big = base64.b64encode(bytes(4000)).decode()
    fits = send_v1([{"text": "echo-parts"}, {"raw": small, "mediaType": "image/png"}])
    task = (await rpc(adapter, fits, V1))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    # What the workflow got is about as long as what was sent.
    assert len(stub.received[0].body) < len(json.dumps(fits)) + 200
    async with httpx.AsyncClient() as client:
        too_big = send_v1([{"text": "echo-parts"}, {"raw": big, "mediaType": "image/png"}])
        reply = await client.post(adapter, json=too_big, headers=V1)
    assert reply.status_code == 413
    assert reply.json()["error"]["code"] == -32600
    assert len(stub.received) == 1


async def test_more_data_and_file_parts_than_the_bound_are_refused(
    parts: str, stub: StubWebhook
) -> None:
    data: list[dict[str, Any]] = [{"data": {"n": n}} for n in range(MAX_ATTACHMENTS + 1)]
    many = [{"text": "echo-parts"}, *data]
    reply = await rpc(parts, send_v1(many), V1)
    assert reply["error"]["code"] == -32602
    assert f"at most {MAX_ATTACHMENTS} data and file parts" in reply["error"]["message"]
    task = (await rpc(parts, send_v1(many[:-1]), V1))["result"]["task"]
    assert task["artifacts"][-1]["parts"] == [{"text": f"{MAX_ATTACHMENTS} data, 0 files"}]
    assert len(stub.received) == 1


#: Replies whose data JSON cannot write back as it came: each fails its task.
POISONED = [
    '{"answer": "x", "escalate": false, "data": {"v": NaN}}',
    '{"answer": "x", "escalate": false, "data": {"v": 1e400}}',
    '{"answer": "x", "escalate": false, "data": ' + "[" * 500 + "1" + "]" * 500 + "}",
]


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("body", POISONED)
async def test_a_reply_with_data_json_cannot_write_fails_and_every_answer_holds(
    stub: StubWebhook, start_adapter: AdapterFactory, body: str, streamed: bool
) -> None:
    parts = await start_adapter(stub.url, webhook_streaming=streamed, **MODES)
    text = ("stream-json:" if streamed else "reply:") + body
    sent = await rpc(parts, send_v1([{"text": text}]) | {"id": "poison-1"}, V1)
    assert sent["id"] == "poison-1"
    task = sent["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert "off contract" in json.dumps(task["status"])
    assert (await get_task(parts, task["id"]))["status"]["state"] == "TASK_STATE_FAILED"
    listed = await rpc(parts, call("ListTasks", includeArtifacts=True), V1)
    assert [t["id"] for t in listed["result"]["tasks"]] == [task["id"]]
    async with open_stream(parts, streaming(send_v1([{"text": text}])), V1) as stream:
        events = await stream.rest()
    assert events[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_FAILED"
