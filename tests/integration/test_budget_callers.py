"""The memory budget's callers, through the real adapter over raw sockets: a promise holds
nothing, a caller not verified releases nothing, a read releases nothing, and a caller's
own oldest results go first (docs/operating.md, "Memory")."""

from __future__ import annotations

import trio

from tests.integration.raw_http import Client, post_head
from tests.support.adapter import AdapterFactory
from tests.support.jsonrpc import V1, call, rpc, send_v1
from tests.support.stub_webhook import StubWebhook

Headers = dict[str, str]

MiB = 1024 * 1024


def chunked_head(path: str = "/") -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: adapter", "Content-Type: application/json"]
    return "\r\n".join([*lines, "Transfer-Encoding: chunked", "", ""]).encode()


async def promises(adapter: str, heads: list[bytes]) -> list[Client]:
    """Connections that send a request's head and not one byte of its body."""
    clients = [await Client.open(adapter) for _ in heads]
    for client, head in zip(clients, heads, strict=True):
        await client.send(head)
    await trio.sleep(0.3)  # each head read, its request at its route
    return clients


async def two_callers(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> tuple[str, Headers, Headers]:
    """An adapter whose budget holds two callers' shares of 4 MiB, and the two callers."""
    adapter = await start_adapter(
        stub.url, memory_budget=8 * MiB, memory_share=4 * MiB, max_body_bytes=4 * MiB
    )
    ann, bob = ({**V1, "Authorization": f"Bearer {name}"} for name in ("ann", "bob"))
    return adapter, ann, bob


async def test_header_only_promises_hold_nothing_and_every_other_send_goes_on(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    """Four connections promising the whole default budget (two by Content-Length, two
    chunked), no body byte sent: a small send is answered at once, not refused."""
    adapter = await start_adapter(stub.url, memory_wait=1.0)
    heads = [post_head("/", 32 * MiB)] * 2 + [chunked_head()] * 2
    clients = await promises(adapter, heads)
    with trio.fail_after(5):
        answer = await rpc(adapter, send_v1("answer:served"), V1)
    assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", answer
    for client in clients:
        await client.stream.aclose()


async def test_a_caller_without_a_token_can_release_nobody_s_results(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    """Its promises are never charged: the victim's kept text stays whole."""
    adapter = await start_adapter(
        stub.url, require_token=True, memory_budget=4 * MiB, max_body_bytes=2 * MiB
    )
    victim = {**V1, "Authorization": "Bearer victim"}
    text = "v" * 1_000_000
    sent = await rpc(adapter, send_v1("answer:" + text), victim)
    task_id = sent["result"]["task"]["id"]
    clients = await promises(adapter, [post_head("/", 2 * MiB)] * 4)
    for client in clients:
        await client.stream.aclose()
    await trio.sleep(0.2)
    got = await rpc(adapter, call("GetTask", id=task_id), victim)
    assert got["result"]["artifacts"][-1]["parts"] == [{"text": text}]
    assert "released" not in got["result"]["metadata"]


async def test_reading_your_own_task_releases_nobody_s_results(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter, ann, bob = await two_callers(stub, start_adapter)
    texts = {"bob": "b" * 1_400_000, "ann": "a" * 1_400_000}  # bob's is the older
    ids = {}
    for name, headers in (("bob", bob), ("ann", ann)):
        sent = await rpc(adapter, send_v1("answer:" + texts[name]), headers)
        ids[name] = sent["result"]["task"]["id"]
    for _ in range(3):
        mine = await rpc(adapter, call("GetTask", id=ids["ann"]), ann)
        assert mine["result"]["artifacts"][-1]["parts"] == [{"text": texts["ann"]}]
        await rpc(adapter, call("ListTasks", includeArtifacts=True), ann)
    theirs = await rpc(adapter, call("GetTask", id=ids["bob"]), bob)
    assert theirs["result"]["artifacts"][-1]["parts"] == [{"text": texts["bob"]}]
    assert "released" not in theirs["result"]["metadata"]


async def test_a_caller_s_own_sends_release_its_own_oldest_results_first(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter, ann, bob = await two_callers(stub, start_adapter)
    bob_sent = await rpc(adapter, send_v1("answer:" + "b" * 1_400_000), bob)
    ann_ids = []
    for letter in "xyz":  # each 2.8 MB kept: past ann's share by the second
        sent = await rpc(adapter, send_v1("answer:" + letter * 1_400_000), ann)
        ann_ids.append(sent["result"]["task"]["id"])
    oldest = await rpc(adapter, call("GetTask", id=ann_ids[0]), ann)
    assert oldest["result"]["metadata"]["released"] == ["artifacts", "history", "status"]
    newest = await rpc(adapter, call("GetTask", id=ann_ids[-1]), ann)
    assert "released" not in newest["result"]["metadata"]
    theirs = await rpc(adapter, call("GetTask", id=bob_sent["result"]["task"]["id"]), bob)
    assert "released" not in theirs["result"]["metadata"]
