"""A streamed reply read off a real connection: as it comes, bounded, cut when asked."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from n8n_a2a.auth.caller import Caller
from n8n_a2a.core.contract import classify
from n8n_a2a.core.errors import AtCapacity
from n8n_a2a.core.replies import HttpReply, Outcome, StreamedReply, TransportFailure
from n8n_a2a.webhook.client import WebhookClient
from n8n_a2a.webhook.request import WebhookRequest
from n8n_a2a.webhook.streamed_reply import RELAY_SPACING
from tests.support.adapter import make_settings
from tests.support.stub_webhook import StubWebhook


def request(text: str) -> WebhookRequest:
    return WebhookRequest(text, "t-1", "c-1", "m-1", "check_availability")


async def call(stub: StubWebhook, text: str, relayed: list[str], **settings: Any) -> Any:
    settings.setdefault("webhook_streaming", True)
    async with WebhookClient(make_settings(stub.url, **settings)) as client:
        return await client.call(request(text), Caller(), relayed.append)


async def test_the_items_text_is_the_reply_and_is_relayed_as_it_comes(stub: StubWebhook) -> None:
    relayed: list[str] = []
    reply = await call(stub, "stream:3", relayed)
    assert isinstance(reply, StreamedReply)
    assert reply.text == "chunk 1 chunk 2 chunk 3 " == "".join(relayed)
    assert classify(reply).outcome is Outcome.ANSWERED


async def test_the_first_item_is_relayed_before_the_stream_ends(
    stub: StubWebhook, nursery: trio.Nursery
) -> None:
    relayed: list[str] = []
    first, done = trio.Event(), trio.Event()

    async def run() -> None:
        async with WebhookClient(make_settings(stub.url, webhook_streaming=True)) as client:
            await client.call(request("stream-held:3"), Caller(), heard)
        done.set()

    def heard(text: str) -> None:
        relayed.append(text)
        first.set()

    nursery.start_soon(run)
    await first.wait()  # the stub holds the rest until released: no race to lose
    assert relayed == ["chunk 1 "] and stub.streamed == 0 and not done.is_set()
    stub.release_streams()
    await done.wait()
    assert "".join(relayed) == "chunk 1 chunk 2 chunk 3 "


async def test_a_burst_of_chunks_is_relayed_a_few_times_whole(stub: StubWebhook) -> None:
    relayed: list[str] = []
    started = trio.current_time()
    reply = await call(stub, "stream-burst:2000", relayed, webhook_timeout=120)
    took = trio.current_time() - started
    whole = "".join(str(i % 10) for i in range(2000))
    assert isinstance(reply, StreamedReply) and reply.text == whole == "".join(relayed)
    # The first at once, then one each RELAY_SPACING at most, and the rest: not one per chunk.
    assert len(relayed) <= 2 + took / RELAY_SPACING < 2000


async def test_a_stream_broken_off_is_a_broken_reply(stub: StubWebhook) -> None:
    reply = await call(stub, "stream-broken", [])
    assert isinstance(reply, TransportFailure) and reply.outcome is Outcome.BROKEN_REPLY


async def test_json_items_are_held_back_and_judged_as_the_contract(stub: StubWebhook) -> None:
    relayed: list[str] = []
    reply = await call(stub, 'stream-json:{"answer": "Too many", "escalate": true}', relayed)
    assert relayed == []
    assert classify(reply).outcome is Outcome.ESCALATED


async def test_a_stream_that_stops_writing_is_a_timeout_and_its_connection_closes(
    stub: StubWebhook,
) -> None:
    reply = await call(stub, "stream-held:2", [], webhook_timeout=0.3)
    assert isinstance(reply, TransportFailure) and reply.outcome is Outcome.TIMEOUT
    await stub.wait_released()


async def test_a_cancel_mid_stream_closes_the_connection(
    stub: StubWebhook, nursery: trio.Nursery
) -> None:
    scope = trio.CancelScope()

    async def run() -> None:
        with scope:
            await call(stub, "stream-held:2", [])

    nursery.start_soon(run)
    await stub.wait_held()
    scope.cancel()
    await stub.wait_released()
    assert stub.streamed == 0


async def test_a_stream_past_the_text_bound_stops_reading_and_is_off_contract(
    stub: StubWebhook,
) -> None:
    reply = await call(stub, "stream-huge", [], max_reply_bytes=1024 * 1024)
    assert isinstance(reply, StreamedReply) and reply.truncated
    assert classify(reply).outcome is Outcome.OFF_CONTRACT


async def test_streams_off_their_chunks_fail_with_the_raw_text(stub: StubWebhook) -> None:
    for text, outcome, shown in (
        ("stream-error", Outcome.NODE_ERROR, "The service is down"),
        ("stream-unended", Outcome.OFF_CONTRACT, "without ending"),
        ("stream-garbage", Outcome.OFF_CONTRACT, "502 Bad Gateway"),
        ("stream-unknown", Outcome.OFF_CONTRACT, "surprise"),
    ):
        verdict = classify(await call(stub, text, []))
        assert (verdict.outcome, shown in verdict.text) == (outcome, True), text


async def test_an_error_status_is_read_whole_as_ever(stub: StubWebhook) -> None:
    reply = await call(stub, "not-registered", [])
    assert isinstance(reply, HttpReply) and reply.status == 404


async def test_without_the_setting_a_stream_is_read_whole_as_ever(stub: StubWebhook) -> None:
    relayed: list[str] = []
    reply = await call(stub, "stream:2", relayed, webhook_streaming=False)
    assert isinstance(reply, HttpReply) and relayed == []
    assert classify(reply).outcome is Outcome.OFF_CONTRACT


class CountingRoom:
    """A reply's room that records what it is asked for and refuses past `limit` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.taken = 0
        self.forwarded_at: int | None = None

    def forwarded(self) -> None:
        self.forwarded_at = self.taken

    async def take(self, size: int) -> None:
        if self.taken + size > self.limit:
            raise AtCapacity("no room (ADAPTER_MEMORY_BUDGET)")
        self.taken += size


async def streamed(stub: StubWebhook, text: str, room: CountingRoom) -> Any:
    async with WebhookClient(make_settings(stub.url, webhook_streaming=True)) as client:
        return await client.call(request(text), Caller(), None, room)


async def test_a_streamed_reply_takes_room_for_the_text_it_gathers(stub: StubWebhook) -> None:
    room = CountingRoom(1 << 30)
    reply = await streamed(stub, "stream:3", room)
    assert isinstance(reply, StreamedReply)
    assert room.taken == len(reply.text.encode())  # the text; the lines' JSON is let go


async def test_a_streamed_reply_without_room_ends_its_read_with_the_refusal(
    stub: StubWebhook,
) -> None:
    with pytest.raises(AtCapacity):
        await streamed(stub, "stream-huge", CountingRoom(64 * 1024))
