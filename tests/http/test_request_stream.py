"""One request's exchange with the app: its scope as hypercorn's HTTPStream makes it, its
events waiting for the app (at most MAX_WAITING), its response passed on as given."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing
from hypercorn.config import Config
from hypercorn.protocol.events import Request
from hypercorn.protocol.http_stream import HTTPStream
from hypercorn.typing import ConnectionState

from n8n_a2a.http.errors import ResponseError
from n8n_a2a.http.request_stream import MAX_WAITING, RequestStream, scope_of

HEADERS = [(b"host", b"adapter"), (b"content-length", b"2")]
ADDRESSES = (("127.0.0.1", 50000), ("127.0.0.1", 8000))


class Responder:
    """The protocol's side, recorded."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    async def respond(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        self.calls.append(("respond", status, headers))

    async def write(self, data: bytes | bytearray | memoryview) -> None:
        self.calls.append(("write", data))

    async def end_response(self) -> None:
        self.calls.append(("end",))

    async def app_done(self, stream: RequestStream) -> None:
        self.calls.append(("done",))


@pytest.mark.parametrize("ssl", [False, True])
async def test_the_scope_is_the_one_hypercorn_s_http_stream_makes(ssl: bool) -> None:
    made: list[Any] = []

    class TaskGroup:
        async def spawn_app(self, app: Any, config: Any, scope: Any, send: Any) -> Any:
            made.append(scope)
            return None

    config = Config()
    state = ConnectionState({"key": "value"})
    stream = HTTPStream(None, config, None, TaskGroup(), ssl, *ADDRESSES, None, 1)  # type: ignore[arg-type]
    raw = b"/a%20b/c?d=e%20f"
    await stream.handle(Request(1, HEADERS, "1.1", "POST", raw, state))
    ours = scope_of(config, "POST", raw, "1.1", HEADERS, ADDRESSES, state, ssl=ssl)
    assert ours == made[0]
    assert ours["path"] == "/a b/c" and ours["query_string"] == b"d=e%20f"
    assert ours["state"] is not state  # a copy per request, as HTTPStream's


async def say(stream: RequestStream, message: dict[str, Any]) -> None:
    """An ASGI message of the app's, sent to the stream."""
    await stream.send(message)  # type: ignore[arg-type]


def stream_of(responder: Responder, app: Any = None, method: str = "POST") -> RequestStream:
    scope = scope_of(Config(), method, b"/", "1.1", HEADERS, ADDRESSES, {})
    return RequestStream(responder, app, Config(), scope)


async def test_the_app_waits_for_events_and_the_protocol_for_room() -> None:
    stream = stream_of(Responder())
    got: list[Any] = []

    async def app_reads() -> None:
        while True:
            event = await stream.receive()
            got.append(event)
            if event["type"] == "http.disconnect":
                return

    async with trio.open_nursery() as nursery:
        nursery.start_soon(app_reads)
        await trio.testing.wait_all_tasks_blocked()
        assert got == []  # waiting
        piece = {"type": "http.request", "body": b"x", "more_body": True}
        for _ in range(3):
            await stream.put(piece)  # type: ignore[arg-type]
        await trio.testing.wait_all_tasks_blocked()
        assert len(got) == 3
        stream.close()
    assert got[-1] == {"type": "http.disconnect"}
    assert await stream.receive() == {"type": "http.disconnect"}  # and again after


async def test_no_more_than_max_waiting_events_wait_for_the_app() -> None:
    stream = stream_of(Responder())
    put = 0

    async def protocol_puts() -> None:
        nonlocal put
        for _ in range(MAX_WAITING + 2):
            await stream.put({"type": "http.request", "body": b"x", "more_body": True})
            put += 1

    async with trio.open_nursery() as nursery:
        nursery.start_soon(protocol_puts)
        await trio.testing.wait_all_tasks_blocked()
        assert put == MAX_WAITING
        await stream.receive()
        await trio.testing.wait_all_tasks_blocked()
        assert put == MAX_WAITING + 1
        stream.close()  # the client gone: the protocol waits no more, puts nothing more


async def test_a_response_goes_to_the_protocol_as_the_app_gave_it() -> None:
    responder = Responder()
    stream = stream_of(responder)
    view = memoryview(b"abcdef")[1:4]
    await say(stream, {"type": "http.response.start", "status": 200, "headers": [(b"a", b" b ")]})
    await say(stream, {"type": "http.response.body", "body": view, "more_body": True})
    await say(stream, {"type": "http.response.body", "body": b""})
    assert responder.calls == [("respond", 200, [(b"a", b"b")]), ("write", view), ("end",)]
    assert responder.calls[1][1] is view  # not copied
    with pytest.raises(ResponseError):
        await say(stream, {"type": "http.response.body", "body": b"more"})


@pytest.mark.parametrize(("method", "status"), [("HEAD", 200), ("GET", 204), ("GET", 304)])
async def test_no_body_is_written_where_none_may_be(method: str, status: int) -> None:
    responder = Responder()
    stream = stream_of(responder, method=method)
    await say(stream, {"type": "http.response.start", "status": status, "headers": []})
    await say(stream, {"type": "http.response.body", "body": b"abc"})
    assert [call[0] for call in responder.calls] == ["respond", "end"]


async def test_a_pseudo_header_is_refused() -> None:
    stream = stream_of(Responder())
    with pytest.raises(ValueError, match="Pseudo"):
        await say(stream, {"type": "http.response.start", "status": 200, "headers": [(b":a", b"")]})


async def test_an_app_s_error_is_logged_and_the_protocol_told_it_is_done(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def failing(*_: Any) -> None:
        raise RuntimeError("boom")

    responder = Responder()
    await stream_of(responder, failing).run()
    assert responder.calls == [("done",)]
    assert "Error in ASGI Framework" in caplog.text
