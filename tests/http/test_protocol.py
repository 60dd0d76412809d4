"""HTTP11Protocol as hypercorn's per-connection server drives it: bytes in (RawData,
Closed), and the events it sends back (the bytes to write, Updated, Closed), for an app
of a few lines."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio
import trio.testing
from hypercorn.app_wrappers import ASGIWrapper
from hypercorn.config import Config
from hypercorn.events import Closed, Event, RawData, Updated
from hypercorn.trio.task_group import TaskGroup
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState

from n8n_a2a.http.protocol import HTTP11Protocol

GET = b"GET /a HTTP/1.1\r\nHost: adapter\r\n\r\n"


class Served:
    """A protocol over an app that answers each request with its method, path and body."""

    def __init__(self, config: Config, context: WorkerContext, task_group: TaskGroup) -> None:
        self.sent: list[Event] = []
        self.received: list[dict[str, Any]] = []
        self.protocol = HTTP11Protocol(
            ASGIWrapper(self.app),
            config,
            context,
            task_group,
            ConnectionState({}),
            False,
            ("127.0.0.1", 50000),
            ("127.0.0.1", 8000),
            self.send,
        )

    async def send(self, event: Event) -> None:
        self.sent.append(event)

    async def app(self, scope: Any, receive: Any, send: Any) -> None:
        body = b""
        while True:
            event = await receive()
            self.received.append(event)
            body += event.get("body", b"")
            if not event.get("more_body", False):
                break
        if scope["path"] == "/hold":
            await trio.sleep_forever()
        if scope["path"] == "/fail":
            raise RuntimeError("the app's own bug")
        answer = b"%s %s %s" % (scope["method"].encode(), scope["raw_path"], body)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-length", b"%d" % len(answer))],
            }
        )
        await send({"type": "http.response.body", "body": answer})

    async def feed(self, *pieces: bytes) -> None:
        for piece in pieces:
            await self.protocol.handle(RawData(piece))
            await trio.testing.wait_all_tasks_blocked()

    def written(self) -> bytes:
        return b"".join(bytes(event.data) for event in self.sent if isinstance(event, RawData))

    def others(self) -> list[Event]:
        return [event for event in self.sent if not isinstance(event, RawData)]


@asynccontextmanager
async def served(config: Config | None = None) -> AsyncIterator[Served]:
    config = config or Config()
    config.include_date_header = False
    context = WorkerContext(None)
    async with TaskGroup() as task_group:
        yield Served(config, context, task_group)
        task_group._nursery.cancel_scope.cancel()  # type: ignore[union-attr]


def response(text: bytes, *extra: bytes) -> bytes:
    head = b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\nserver: hypercorn-h11\r\n" % len(text)
    return head + b"".join(extra) + b"\r\n" + text


async def test_requests_on_one_connection_are_answered_in_turn_and_it_is_kept() -> None:
    async with served() as connection:
        await connection.feed(GET)
        post = b"POST /b HTTP/1.1\r\nHost: adapter\r\nContent-Length: 5\r\n\r\nhe"
        await connection.feed(post, b"llo")
        assert connection.written() == response(b"GET /a ") + response(b"POST /b hello")
        assert connection.others() == [
            Updated(idle=False),
            Updated(idle=True),
            Updated(idle=False),
            Updated(idle=True),
        ]
        # The GET's empty body; the POST's first piece, then its last with its end.
        assert [event["more_body"] for event in connection.received] == [False, True, False]


async def test_a_pipelined_request_waits_for_the_answer_before_it() -> None:
    async with served() as connection:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(connection.feed, GET + GET.replace(b"/a", b"/c"))
        assert connection.written() == response(b"GET /a ") + response(b"GET /c ")


async def test_a_client_s_close_is_honoured_after_its_answer() -> None:
    async with served() as connection:
        await connection.feed(GET.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))
        assert connection.written() == response(b"GET /a ", b"Connection: close\r\n")
        assert connection.others() == [Updated(idle=False), Closed()]


async def test_a_refused_request_gets_its_status_then_the_connection_closes() -> None:
    async with served() as connection:
        await connection.feed(b"GET /a HTTP/2.0\r\nHost: adapter\r\n\r\n")
        assert connection.written() == (
            b"HTTP/1.1 505 HTTP Version Not Supported\r\ncontent-length: 0\r\n"
            b"connection: close\r\nserver: hypercorn-h11\r\n\r\n"
        )
        assert connection.others() == [Closed()]


async def test_a_request_refused_within_its_body_closes_without_a_second_answer() -> None:
    async with served() as connection:
        head = b"POST /hold HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
        await connection.feed(head, b"zz\r\n")
        assert connection.written().startswith(b"HTTP/1.1 400 Bad Request\r\n")
        assert connection.others() == [Updated(idle=False), Closed()]


async def test_an_expected_continue_is_sent_before_the_body_is_read() -> None:
    async with served() as connection:
        head = b"POST /b HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n"
        await connection.feed(head)
        assert connection.written() == b"HTTP/1.1 100 Continue\r\nserver: hypercorn-h11\r\n\r\n"
        await connection.feed(b"{}")
        assert connection.written().endswith(response(b"POST /b {}"))


async def test_the_last_request_the_config_allows_says_close() -> None:
    config = Config()
    config.keep_alive_max_requests = 2
    async with served(config) as connection:
        await connection.feed(GET, GET)
        assert connection.written() == response(b"GET /a ") + response(
            b"GET /a ", b"connection: close\r\n"
        )
        assert connection.others()[-1] == Closed()


async def test_the_app_hears_the_client_gone() -> None:
    async with served() as connection:
        await connection.feed(b"POST /hold HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\n")
        await connection.protocol.handle(Closed())
        await trio.testing.wait_all_tasks_blocked()
        assert connection.protocol.stream is None
        assert connection.written() == b""


async def test_an_app_that_fails_before_its_answer_gets_a_500_and_the_close() -> None:
    async with served() as connection:
        await connection.feed(GET.replace(b"/a", b"/fail"))
        assert connection.written() == (
            b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n"
            b"connection: close\r\nserver: hypercorn-h11\r\n\r\n"
        )
        assert connection.others() == [Updated(idle=False), Closed()]
