"""The HTTP+JSON binding's routing under odd requests, as sent on the wire (raw sockets: no
client library to normalise them): encoded slashes and colons, traversal, verbs no route
has, odd query values, thousands of query parameters. Each gets a clean answer, reaches
only what its decoded path names, and another caller's task never."""

from __future__ import annotations

import json

import pytest
import trio

from tests.integration.raw_http import BOUND, Client, Reply, post
from tests.support.stub_webhook import StubWebhook

MINE = "Authorization: Bearer mine.token"
OTHER = "Authorization: Bearer other.token"


async def send(adapter: str, request_line: str, *headers: str) -> Reply:
    """One request on its own connection, its head exactly `request_line` and `headers`."""
    client = await Client.open(adapter)
    try:
        lines = [request_line + " HTTP/1.1", "Host: adapter", "A2A-Version: 1.0", *headers]
        await client.send(("\r\n".join([*lines, "Content-Length: 0", "", ""])).encode())
        return await client.reply()
    finally:
        await client.aclose()


async def my_task(adapter: str) -> str:
    """A completed task of MINE's, its id."""
    body = {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "secret"}]}}
    client = await Client.open(adapter)
    await client.send(post("/message:send", json.dumps(body).encode(), MINE, "A2A-Version: 1.0"))
    reply = await client.reply()
    await client.aclose()
    task_id: str = reply.json["task"]["id"]
    return task_id


def clean_error(reply: Reply, status: int) -> None:
    """An error in the binding's shape (google.rpc.Status) with its HTTP status."""
    assert reply.status == status, reply.body[:200]
    assert reply.json["error"]["code"] == status
    assert len(reply.body) < 1_000


ODD_PATHS = [
    "GET /tasks%2F{id}",
    "GET /tasks/{id}%2F",
    "GET /tasks/{id}%3Asubscribe",
    "POST /tasks/{id}%3Acancel",
    "POST /tasks/{id}%3acancel",
    "GET /tasks/{id}/pushNotificationConfigs",
    "GET /tasks/{id}%2FpushNotificationConfigs",
    "GET //tasks/{id}",
    "GET /tasks/./{id}",
    "GET /tasks/x/../{id}",
    "GET /tasks/x/%2e%2e/{id}",
    "GET /tasks?pageSize=100&includeArtifacts=true",
    "GET /tasks%3FpageSize=1",
]


@pytest.mark.parametrize("odd", ODD_PATHS)
async def test_no_odd_path_reaches_another_caller_s_task(
    adapter: str, stub: StubWebhook, odd: str
) -> None:
    task_id = await my_task(adapter)
    reply = await send(adapter, odd.format(id=task_id), OTHER)
    assert reply.status < 500
    assert b"secret" not in reply.body
    if reply.status == 200:  # only a listing can answer, and it lists none of MINE's
        assert reply.json == {"tasks": [], "nextPageToken": "", "pageSize": 100, "totalSize": 0}
    assert len(stub.received) == 1  # nothing was sent to the workflow on its behalf


@pytest.mark.parametrize(
    "request_line",
    [
        "GET /tasks/../message:send",
        "POST /tasks/x/..%2F..%2Fmessage:send",
        "POST /tasks/%2e%2e/message:send",
        "POST /./message:send/..",
        "POST /message:send%2F..",
        "POST /message%3Asend%3Astream",
    ],
)
async def test_traversal_reaches_no_send(
    adapter: str, stub: StubWebhook, request_line: str
) -> None:
    reply = await send(adapter, request_line, MINE)
    assert reply.status in {400, 404, 405}, reply.body[:200]
    assert stub.received == []


@pytest.mark.parametrize("verb", ["PUT", "PATCH", "TRACE", "CONNECT", "PROPFIND", "FOO", "get"])
async def test_a_verb_no_route_has_is_refused(adapter: str, stub: StubWebhook, verb: str) -> None:
    reply = await send(adapter, f"{verb} /message:send", MINE)
    assert reply.status in {400, 405}, reply.body[:200]
    assert stub.received == []


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("pageSize=%00", "pageSize"),
        ("pageSize=", "pageSize"),
        ("pageSize=%ff", "pageSize"),
        ("pageSize=1e2", "pageSize"),
        ("pageSize=99999999999999999999999999", "pageSize"),
        ("%zz=1&pageSize=%zz", "pageSize"),
        ("includeArtifacts=maybe", "includeArtifacts"),
        ("status=%E2%80%AE", "status"),
        ("historyLength=-1", "historyLength"),
        ("pageToken=" + "x" * 5_000, "pageToken"),
    ],
)
async def test_an_odd_query_value_is_a_400_naming_it(adapter: str, query: str, named: str) -> None:
    reply = await send(adapter, f"GET /tasks?{query}", MINE)
    clean_error(reply, 400)
    assert named in reply.json["error"]["message"]


async def test_thousands_of_query_parameters_are_read_and_ignored(adapter: str) -> None:
    task_id = await my_task(adapter)
    many = "&".join(f"p{index}=1" for index in range(2_500))
    with trio.fail_after(BOUND):
        reply = await send(adapter, f"GET /tasks?pageSize=1&{many}&includeArtifacts=true", MINE)
    assert reply.status == 200
    assert [task["id"] for task in reply.json["tasks"]] == [task_id]
    with trio.fail_after(BOUND):
        repeated = await send(adapter, "GET /tasks?" + "&".join(["pageSize=1"] * 2_500), MINE)
    assert repeated.status == 200
