"""The webhook call over real HTTP and TLS: headers, redirects, limits, certificates."""

from __future__ import annotations

import base64
import json
import tracemalloc
from dataclasses import replace
from typing import Any

import pytest
import trio
import trustme

from n8n_a2a.auth.caller import Caller
from n8n_a2a.core.replies import HttpReply, Outcome, TransportFailure
from n8n_a2a.protocol.model import FileContent, Part
from n8n_a2a.webhook.client import WebhookClient
from n8n_a2a.webhook.request import WebhookRequest
from tests.support.adapter import make_settings
from tests.support.forms import parsed_form
from tests.support.stub_webhook import StubWebhook, start_stub_webhook

# ADAPTER_MAX_REPLY_BYTES in the tests of the bound: the stub's "huge" reply is 2 MiB.
MAX_REPLY_BYTES = 1024 * 1024


def request(text: str) -> WebhookRequest:
    return WebhookRequest(text, "t-1", "c-1", "m-1", "check_availability")


async def call(url: str, text: str, caller: Caller | None = None, **settings: Any) -> Any:
    async with WebhookClient(make_settings(url, **settings)) as client:
        return await client.call(request(text), caller or Caller())


async def test_the_body_and_headers(stub: StubWebhook) -> None:
    trace = (("traceparent", "00-" + "a" * 32 + "-" + "b" * 16 + "-01"), ("tracestate", "k=v"))
    reply = await call(stub.url, "answer:ok", Caller("tok.en", trace))
    assert isinstance(reply, HttpReply) and reply.status == 200
    [received] = stub.received
    assert received.json == {
        "text": "answer:ok",
        "taskId": "t-1",
        "contextId": "c-1",
        "messageId": "m-1",
        "skillId": "check_availability",
    }
    assert received.headers["x-subject-token"] == "tok.en"
    assert "authorization" not in received.headers
    assert received.headers["traceparent"] == trace[0][1]
    assert received.headers["tracestate"] == "k=v"


def test_data_and_files_join_the_body_in_order_only_when_present() -> None:
    parts = (
        Part("see"),
        Part.of_data({"sku": "F-1"}),
        Part.of_file(FileContent.of_bytes("", "image/png", b"\x89PNG")),
        Part.of_data([1]),
        Part.of_file(FileContent("r.csv", "text/csv", url="https://files.example/r.csv")),
    )
    body = json.loads(bytes(WebhookRequest("see", "t-1", "c-1", "m-1", "s", parts).body()))
    assert body["text"] == "see"
    assert body["data"] == [{"sku": "F-1"}, [1]]
    assert body["files"] == [
        {"name": "", "mediaType": "image/png", "base64": "iVBORw=="},
        {"name": "r.csv", "mediaType": "text/csv", "url": "https://files.example/r.csv"},
    ]
    plain = json.loads(bytes(WebhookRequest("hi", "t-1", "c-1", "m-1", "s", (Part("hi"),)).body()))
    assert "data" not in plain and "files" not in plain


def test_a_files_base64_in_the_body_is_about_as_long_as_in_the_request() -> None:
    content = bytes(range(256)) * 3000
    sent = base64.b64encode(content).decode()
    parts = (Part.of_file(FileContent.of_bytes("f", "application/pdf", content)),)
    body = WebhookRequest("", "t-1", "c-1", "m-1", "s", parts).body()
    assert len(sent) < len(body) < len(sent) + 200


async def test_a_redirect_is_not_followed(stub: StubWebhook) -> None:
    reply = await call(stub.url, "redirect")
    assert isinstance(reply, HttpReply)
    assert (reply.status, reply.location) == (302, "http://127.0.0.1:9/elsewhere")
    assert len(stub.received) == 1


async def test_the_reply_is_read_up_to_the_limit(stub: StubWebhook) -> None:
    reply = await call(stub.url, "huge", max_reply_bytes=MAX_REPLY_BYTES)
    assert isinstance(reply, HttpReply)
    assert reply.truncated and len(reply.body) == MAX_REPLY_BYTES
    assert reply.read_limit == MAX_REPLY_BYTES  # for the reason to name


async def test_a_reply_within_the_default_limit_is_read_whole(stub: StubWebhook) -> None:
    # 2 MiB: past the 1 MiB once read, within ADAPTER_MAX_REPLY_BYTES's default.
    reply = await call(stub.url, "huge")
    assert isinstance(reply, HttpReply) and not reply.truncated
    assert len(reply.body) == 2 * 1024 * 1024 + len('{"answer":""}')


async def test_connection_refused_is_unreachable() -> None:
    reply = await call("http://127.0.0.1:9/webhook", "x")
    assert isinstance(reply, TransportFailure) and reply.outcome is Outcome.UNREACHABLE


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
async def tls_stub(nursery: trio.Nursery, authority: trustme.CA, tmp_path: Any) -> StubWebhook:
    certificate = authority.issue_cert("127.0.0.1", "localhost")
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    certificate.private_key_and_cert_chain_pem.write_to_path(str(cert_file))
    certificate.private_key_pem.write_to_path(str(key_file))
    return await start_stub_webhook(nursery, certfile=str(cert_file), keyfile=str(key_file))


async def test_tls_is_verified_with_the_ca_bundle(
    tls_stub: StubWebhook, authority: trustme.CA, tmp_path: Any
) -> None:
    assert tls_stub.url.startswith("https://")
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    reply = await call(tls_stub.url, "answer:secure", ca_bundle=str(bundle))
    assert isinstance(reply, HttpReply) and reply.status == 200


async def test_tls_without_the_ca_fails_as_tls(tls_stub: StubWebhook) -> None:
    reply = await call(tls_stub.url, "answer:secure")
    assert isinstance(reply, TransportFailure)
    assert reply.outcome is Outcome.TLS_FAILURE
    assert "certificate" in reply.detail.lower()
    assert not tls_stub.received


async def test_calls_one_after_another_reuse_one_connection(stub: StubWebhook) -> None:
    async with WebhookClient(make_settings(stub.url)) as client:
        for n in range(5):
            await client.call(request(f"answer:{n}"), Caller())
    assert len({r.client_port for r in stub.received}) == 1


async def test_concurrent_calls_open_connections_and_then_share_them(stub: StubWebhook) -> None:
    async with WebhookClient(make_settings(stub.url)) as client:
        async with trio.open_nursery() as nursery:
            for _ in range(8):
                nursery.start_soon(client.call, request("sleep:0.2"), Caller())
        concurrent = {r.client_port for r in stub.received}
        for n in range(8):
            await client.call(request(f"answer:{n}"), Caller())
    assert len(concurrent) == 8
    assert {r.client_port for r in stub.received[8:]} <= concurrent  # reused, none new


async def test_a_connection_the_webhook_closed_is_not_reused(nursery: trio.Nursery) -> None:
    stub = await start_stub_webhook(nursery, keep_alive_seconds=0.1)
    async with WebhookClient(make_settings(stub.url)) as client:
        first = await client.call(request("answer:one"), Caller())
        await trio.sleep(0.5)  # the webhook has closed the idle connection by now
        second = await client.call(request("answer:two"), Caller())
    assert isinstance(first, HttpReply) and isinstance(second, HttpReply)
    assert (first.status, second.status) == (200, 200)
    assert stub.received[0].client_port != stub.received[1].client_port


async def test_the_reply_is_asked_for_uncompressed(stub: StubWebhook) -> None:
    await call(stub.url, "answer:ok")
    assert stub.received[0].headers["accept-encoding"] == "identity"


@pytest.mark.parametrize("verb", ["gzip", "deflate", "raw-deflate"])
async def test_a_reply_compressed_anyway_is_decoded(stub: StubWebhook, verb: str) -> None:
    reply = await call(stub.url, f"{verb}:12 pallets")
    assert isinstance(reply, HttpReply)
    assert reply.body == b'{"answer": "12 pallets", "escalate": false}'
    assert (reply.content_encoding, reply.truncated) == ("", False)


async def test_a_gzip_bomb_is_decoded_no_further_than_the_limit(stub: StubWebhook) -> None:
    reply = await call(stub.url, "gzip-bomb", max_reply_bytes=MAX_REPLY_BYTES)
    assert isinstance(reply, HttpReply)
    assert reply.truncated and len(reply.body) == MAX_REPLY_BYTES
    assert reply.body == bytes(MAX_REPLY_BYTES)


async def test_an_encoding_the_adapter_does_not_decode_is_passed_on_as_it_came(
    stub: StubWebhook,
) -> None:
    reply = await call(stub.url, "brotli")
    assert isinstance(reply, HttpReply)
    assert (reply.content_encoding, reply.body) == ("br", b"\x1b\x00\x00")


@pytest.mark.parametrize(("verb", "why"), [("gzip-garbage", "header"), ("gzip-cut", "early")])
async def test_a_broken_gzip_body_is_a_broken_reply(stub: StubWebhook, verb: str, why: str) -> None:
    reply = await call(stub.url, verb)
    assert isinstance(reply, TransportFailure)
    assert reply.outcome is Outcome.BROKEN_REPLY
    assert "gzip" in reply.detail and why in reply.detail


async def test_every_reply_carries_the_token_for_its_verdict(stub: StubWebhook) -> None:
    caller = Caller("tok.en")
    assert (await call(stub.url, "answer:ok", caller)).subject_token == "tok.en"
    unreachable = await call("http://127.0.0.1:9/webhook", "x", caller)
    assert isinstance(unreachable, TransportFailure)
    assert unreachable.subject_token == "tok.en"


def test_a_lone_surrogate_in_the_text_reaches_the_workflow_as_u_fffd() -> None:
    body = request("flour \ud83d").body()
    assert json.loads(bytes(body))["text"] == "flour \ufffd"


def multipart_parts() -> tuple[Part, ...]:
    return (
        Part("see"),
        Part.of_data({"minimum": 5}),
        Part.of_file(FileContent.of_bytes("stock.csv", "text/csv", b"item,pallets\n")),
        Part.of_file(FileContent("r.csv", "text/csv", url="https://files.example/r.csv")),
        Part.of_file(FileContent.of_bytes("", "image/png", b"\x89PNG")),
    )


def test_the_form_lists_each_file_by_its_field_size_name_and_type() -> None:
    form = WebhookRequest("see", "t-1", "c-1", "m-1", "s", multipart_parts()).form("B")
    [request, *files] = parsed_form(form.content_type, bytes(form))
    assert json.loads(request.get_content()) == {
        "text": "see",
        "taskId": "t-1",
        "contextId": "c-1",
        "messageId": "m-1",
        "skillId": "s",
        "data": [{"minimum": 5}],
        "files": [
            {"name": "stock.csv", "mediaType": "text/csv", "size": 13, "field": "file0"},
            # Sent by reference: the URL, as in the JSON body; no form file.
            {"name": "r.csv", "mediaType": "text/csv", "url": "https://files.example/r.csv"},
            {"name": "", "mediaType": "image/png", "size": 4, "field": "file1"},
        ],
    }
    assert [
        (file.get_param("name", header="content-disposition"), file.get_filename())
        for file in files
    ] == [
        ("file0", "stock.csv"),
        ("file1", "file1"),
    ]
    assert [file.get_payload(decode=True) for file in files] == [b"item,pallets\n", b"\x89PNG"]


async def test_with_multipart_the_webhook_gets_a_form_of_stated_length(stub: StubWebhook) -> None:
    content = bytes(range(256)) * 4096  # 1 MiB, every byte value
    parts = (Part.of_file(FileContent.of_bytes("big.bin", "application/octet-stream", content)),)
    async with WebhookClient(make_settings(stub.url, webhook_files="multipart")) as client:
        reply = await client.call(WebhookRequest("", "t-1", "c-1", "m-1", "s", parts), Caller())
    [received] = stub.received
    kind = received.headers["content-type"]
    assert kind.startswith("multipart/form-data; boundary=n8n-a2a-")
    assert received.headers["content-length"] == str(len(received.body))
    assert "transfer-encoding" not in received.headers
    request, file = parsed_form(kind, received.body)
    assert json.loads(request.get_content())["files"][0]["size"] == len(content)
    assert file.get_payload(decode=True) == content
    # What was sent travels with the reply, for its verdict to read a refusal of its size.
    assert isinstance(reply, HttpReply)
    assert (reply.request_bytes, reply.multipart) == (len(received.body), True)


async def test_by_default_the_json_body_and_its_size_travel_with_the_reply(
    stub: StubWebhook,
) -> None:
    reply = await call(stub.url, "answer:ok")
    [received] = stub.received
    assert received.headers["content-type"] == "application/json"
    assert isinstance(reply, HttpReply)
    assert (reply.request_bytes, reply.multipart) == (len(received.body), False)


class HeldWhenForwarded:
    """A reply's room that notes, as the request is forwarded, the bytes that blocks
    allocated by webhook/client.py still hold (the request's body, if a frame keeps it)."""

    def __init__(self) -> None:
        self.held_by_the_client: int | None = None

    def forwarded(self) -> None:
        snapshot = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(True, "*n8n_a2a/webhook/client.py")]
        )
        self.held_by_the_client = sum(stat.size for stat in snapshot.statistics("filename"))

    async def take(self, size: int) -> None:
        pass


async def test_once_forwarded_the_request_s_body_is_held_by_no_frame(stub: StubWebhook) -> None:
    """Its bytes are the reply's room by then: they must be gone, not merely uncounted."""
    room = HeldWhenForwarded()
    tracemalloc.start()
    try:
        async with WebhookClient(make_settings(stub.url)) as client:
            reply = await client.call(request("answer:" + "x" * 4_000_000), Caller(), room=room)
    finally:
        tracemalloc.stop()
    assert isinstance(reply, HttpReply) and reply.request_bytes > 4_000_000
    assert room.held_by_the_client is not None and room.held_by_the_client < 100_000


async def test_a_turn_for_a_waiting_execution_goes_to_its_resume_target_on_the_origin(
    stub: StubWebhook,
) -> None:
    resumed = replace(request("answer:salt"), resume="/webhook-waiting/5?signature=5ecret-5")
    assert "5ecret" not in repr(resumed)
    async with WebhookClient(make_settings(stub.url)) as client:
        reply = await client.call(resumed, Caller("tok"))
        refused = await client.call(replace(resumed, resume="/webhook-waiting/gone"), Caller())
        plain = await client.call(request("answer:salt"), Caller())
    assert isinstance(reply, HttpReply) and (reply.status, reply.resumed) == (200, True)
    assert isinstance(refused, HttpReply) and (refused.status, refused.resumed) == (401, True)
    assert isinstance(plain, HttpReply) and not plain.resumed
    targets = [received.target for received in stub.received]
    assert targets == [
        "/webhook-waiting/5?signature=5ecret-5",
        "/webhook-waiting/gone",
        "/webhook/supply",
    ]
    # The same body and headers as a webhook call, the token in X-Subject-Token.
    first = stub.received[0]
    assert first.json["text"] == "answer:salt" and first.headers["x-subject-token"] == "tok"


def test_a_reply_told_what_was_sent_keeps_every_other_field() -> None:
    from n8n_a2a.webhook.client import Outgoing, _sent

    reply = HttpReply(
        status=413,
        body=bytearray(b"too large"),
        content_type="text/plain",
        location="/elsewhere",
        truncated=True,
        read_limit=9,
        content_encoding="gzip",
        subject_token="token",
    )
    told = _sent(reply, Outgoing(b"x" * 7), resumed=True)
    assert told == replace(reply, request_bytes=7, multipart=False, resumed=True)
