"""One connection's stream and ASGI layer over a socket pair, without hypercorn: what they
report to the timer, when they cut the connection, and the last words written by hand."""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, cast

import h11
import pytest
import trio

from n8n_a2a.http.connection import (
    Connection,
    Exchanges,
    busy_response,
    linger,
    peer_busy_response,
    read_timeout_response,
    say_farewell,
)
from n8n_a2a.http.timer import ConnectionTimer, Phase
from n8n_a2a.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from hypercorn.typing import (
        ASGIFramework,
        ASGIReceiveCallable,
        ASGIReceiveEvent,
        ASGISendCallable,
        ASGISendEvent,
        Scope,
    )

KEEP_ALIVE, READ, SEND = 5.0, 30.0, 1.0


@pytest.fixture
async def pair() -> AsyncIterator[tuple[trio.SocketStream, trio.SocketStream]]:
    """The adapter's end of a connection and its client's."""
    ours, theirs = trio.socket.socketpair()
    async with trio.SocketStream(ours) as server, trio.SocketStream(theirs) as client:
        yield server, client


def connect(stream: trio.SocketStream) -> Connection:
    timer = ConnectionTimer(KEEP_ALIVE, READ, since=trio.current_time())
    return Connection(stream, timer, SEND)


@pytest.fixture
def served(
    pair: tuple[trio.SocketStream, trio.SocketStream],
) -> tuple[Connection, trio.SocketStream]:
    """The adapter's end of a connection as the seam serves it, and its client's end."""
    server, client = pair
    return connect(server), client


def parse(response: bytes) -> tuple[h11.Response, dict[str, str], dict[str, object]]:
    parser = h11.Connection(h11.CLIENT)
    parser.send(h11.Request(method="POST", target="/", headers=[("Host", "adapter")]))
    parser.receive_data(response)
    head = parser.next_event()
    assert isinstance(head, h11.Response)
    body = parser.next_event()
    assert isinstance(body, h11.Data)
    assert isinstance(parser.next_event(), h11.EndOfMessage)
    headers = {name.decode(): value.decode() for name, value in head.headers}
    return head, headers, json.loads(body.data)


def test_the_503_asks_to_come_back_and_closes() -> None:
    head, headers, document = parse(busy_response(100))
    assert head.status_code == 503
    assert headers["retry-after"] == "1" and headers["connection"] == "close"
    assert headers["content-type"] == "application/json"
    error = cast("dict[str, object]", document["error"])
    assert error["code"] == ErrorCode.SERVER_BUSY
    assert "100 connections open (ADAPTER_MAX_CONNECTIONS)" in str(error["message"])


def test_the_503_past_a_peers_share_names_its_limit() -> None:
    head, headers, document = parse(peer_busy_response(8))
    assert head.status_code == 503
    assert headers["retry-after"] == "1" and headers["connection"] == "close"
    error = cast("dict[str, object]", document["error"])
    assert error["code"] == ErrorCode.SERVER_BUSY
    assert "8 connections open to the adapter (ADAPTER_MAX_CONNECTIONS_PER_IP)" in str(
        error["message"]
    )


def test_the_408_says_which_timeout_and_closes() -> None:
    head, headers, document = parse(read_timeout_response(2.5))
    assert head.status_code == 408 and headers["connection"] == "close"
    error = cast("dict[str, object]", document["error"])
    assert error["code"] == ErrorCode.INVALID_REQUEST
    assert "within 2.5 s (ADAPTER_REQUEST_READ_TIMEOUT)" in str(error["message"])


async def test_a_farewell_reads_and_drops_the_request_until_the_client_closes(
    pair: tuple[trio.SocketStream, trio.SocketStream], nursery: trio.Nursery
) -> None:
    server, client = pair
    await client.send_all(b"POST / HTTP/1.1\r\n")
    done = trio.Event()

    async def farewell() -> None:
        await say_farewell(server, b"bye", drop_request=True)
        done.set()

    nursery.start_soon(farewell)
    assert await client.receive_some() == b"bye"
    assert await client.receive_some() == b""  # the adapter's end is shut for writing
    assert not done.is_set()  # still dropping what the client sends
    await client.aclose()
    with trio.fail_after(5):
        await done.wait()


async def test_a_farewell_to_a_client_that_is_gone_is_quiet(
    pair: tuple[trio.SocketStream, trio.SocketStream],
) -> None:
    server, client = pair
    await client.aclose()
    await server.aclose()
    await say_farewell(server, b"bye", drop_request=True)


async def test_a_linger_drops_what_the_client_sends_until_it_closes(
    pair: tuple[trio.SocketStream, trio.SocketStream], nursery: trio.Nursery
) -> None:
    server, client = pair
    done = trio.Event()

    async def lingering() -> None:
        await linger(server)
        done.set()

    nursery.start_soon(lingering)
    assert await client.receive_some() == b""  # the adapter's end is shut for writing
    with trio.fail_after(5):
        for _ in range(16):
            await client.send_all(bytes(64 * 1024))  # all taken, nothing reset
        assert not done.is_set()
        await client.send_eof()
        await done.wait()


async def test_a_linger_ends_after_its_time_for_a_client_that_never_stops(
    pair: tuple[trio.SocketStream, trio.SocketStream],
    nursery: trio.Nursery,
    autojump_clock: trio.abc.Clock,
) -> None:
    server, client = pair

    async def send_for_ever() -> None:
        with contextlib.suppress(trio.BrokenResourceError):
            while True:
                await client.send_all(bytes(1024))
                await trio.sleep(0.1)

    nursery.start_soon(send_for_ever)
    start = trio.current_time()
    await linger(server, seconds=2.0)
    assert trio.current_time() - start == pytest.approx(2.0)
    nursery.cancel_scope.cancel()


async def test_a_linger_ends_after_its_bytes_for_a_client_that_never_stops(
    pair: tuple[trio.SocketStream, trio.SocketStream], nursery: trio.Nursery
) -> None:
    server, client = pair

    async def send_for_ever() -> None:
        with contextlib.suppress(trio.BrokenResourceError):
            while True:
                await client.send_all(bytes(64 * 1024))

    nursery.start_soon(send_for_ever)
    with trio.fail_after(5):  # far below its time, far above what 1 MiB takes
        await linger(server, seconds=60.0, limit=2**20)
    nursery.cancel_scope.cancel()


async def test_peeked_bytes_are_read_first_as_the_requests_own(
    pair: tuple[trio.SocketStream, trio.SocketStream],
) -> None:
    server, client = pair
    timer = ConnectionTimer(KEEP_ALIVE, READ, since=trio.current_time())
    connection = Connection(server, timer, SEND, peeked=b"GET /healthz")
    assert await connection.receive_some(4) == b"GET "
    assert connection.timer.phase is Phase.READING
    assert await connection.receive_some(64) == b"/healthz"
    await client.send_all(b" HTTP/1.1\r\n")
    assert await connection.receive_some(64) == b" HTTP/1.1\r\n"


async def test_closed_before_its_request_was_read_a_connection_is_left_to_linger(
    pair: tuple[trio.SocketStream, trio.SocketStream],
) -> None:
    # hypercorn's close after an answer before the body (a 413): its reads are cut, the
    # socket stays open for the seam's linger, and no 408 follows.
    server, client = pair
    connection = connect(server)
    await client.send_all(b"POST / HTTP/1.1\r\nContent-Length: 100\r\n\r\n")
    with connection.scope:
        await connection.receive_some()
        connection.answered = True
        await connection.send_eof()
        await connection.aclose()
        await connection.aclose()  # (hypercorn's close may come twice)
        await trio.sleep_forever()  # the reads that follow: cut
    assert connection.lingering and connection.scope.cancelled_caught
    assert not connection.timed_out_reading
    assert server.socket.fileno() != -1
    assert await client.receive_some() == b""  # shut for writing, not closed


async def test_a_requests_first_byte_starts_the_read_timeout(
    pair: tuple[trio.SocketStream, trio.SocketStream],
) -> None:
    server, client = pair
    connection = connect(server)
    assert connection.scope.deadline == connection.timer.since + KEEP_ALIVE
    await client.send_all(b"G")
    assert await connection.receive_some() == b"G"
    assert connection.timer.phase is Phase.READING
    assert connection.scope.deadline == connection.timer.since + READ
    assert not connection.abandoned


async def test_a_client_that_closes_under_a_request_abandons_the_connection(
    pair: tuple[trio.SocketStream, trio.SocketStream],
) -> None:
    server, client = pair
    connection = connect(server)
    await client.send_all(b"POST / HTTP/1.1\r\n")
    await client.send_eof()
    assert await connection.receive_some() == b"POST / HTTP/1.1\r\n"
    assert await connection.receive_some() == b""
    assert connection.abandoned and connection.scope.cancel_called


async def test_a_client_that_closes_between_requests_leaves_the_end_to_hypercorn(
    served: tuple[Connection, trio.SocketStream],
) -> None:
    # Its read loop stops on the end of the stream and closes the connection; a cancel
    # would only make each await of that close raise Cancelled.
    connection, client = served
    await client.send_eof()
    assert await connection.receive_some() == b""
    assert not connection.abandoned and not connection.scope.cancel_called


async def test_a_client_that_stops_taking_a_response_is_cut_after_the_send_timeout(
    pair: tuple[trio.SocketStream, trio.SocketStream], autojump_clock: trio.abc.Clock
) -> None:
    server, _ = pair
    connection = connect(server)
    start = trio.current_time()
    with pytest.raises(trio.BrokenResourceError):
        await connection.send_all(bytes(8 * 1024 * 1024))  # far more than the buffers
    assert trio.current_time() - start == pytest.approx(SEND)
    assert connection.abandoned and connection.scope.cancel_called


async def test_a_request_cut_while_it_was_read_timed_out_reading(
    pair: tuple[trio.SocketStream, trio.SocketStream], autojump_clock: trio.abc.Clock
) -> None:
    server, client = pair
    connection = connect(server)
    await client.send_all(b"POST / HTTP/1.1\r\n")
    with connection.scope:
        await connection.receive_some()
        await connection.receive_some()  # the rest never comes
    assert connection.timed_out_reading
    connection.answered = True  # a response had begun: it is not a request's timeout
    assert not connection.timed_out_reading


def http_scope(*headers: tuple[bytes, bytes]) -> Scope:
    return cast("Scope", {"type": "http", "headers": list(headers)})


class Exchange:
    """An app on the connection that reads the body (or not) and answers 200, noting the
    timer's phase and the connection's deadline at each step."""

    def __init__(self, connection: Connection, *requests: ASGIReceiveEvent) -> None:
        self.connection = connection
        self.requests = list(requests)
        self.sent: list[ASGISendEvent] = []
        self.seen: list[tuple[Phase, float]] = []

    @property
    def phases(self) -> list[Phase]:
        return [phase for phase, _ in self.seen]

    async def run(self, scope: Scope, *, read_body: bool = False) -> None:
        await Exchanges(self.app(read_body), self.connection)(scope, self.receive, self.send)

    def app(self, read_body: bool) -> ASGIFramework:
        async def answer(
            scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable
        ) -> None:
            self.note()
            if read_body:
                await receive()
                self.note()
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok", "more_body": False})
            self.note()

        return answer

    async def receive(self) -> ASGIReceiveEvent:
        return self.requests.pop(0)

    async def send(self, event: ASGISendEvent) -> None:
        self.sent.append(event)

    def note(self) -> None:
        self.seen.append((self.connection.timer.phase, self.connection.scope.deadline))


async def test_a_request_without_a_body_is_read_with_its_head(
    pair: tuple[trio.SocketStream, trio.SocketStream],
) -> None:
    exchange = Exchange(connect(pair[0]))
    await exchange.run(http_scope(), read_body=False)
    assert exchange.phases == [Phase.RESPONDING, Phase.IDLE]
    assert exchange.connection.answered
    start = exchange.sent[0]
    assert start["type"] == "http.response.start" and list(start["headers"]) == []


async def test_a_body_read_whole_lifts_the_read_timeout_until_the_answer_is_sent(
    pair: tuple[trio.SocketStream, trio.SocketStream],
) -> None:
    exchange = Exchange(
        connect(pair[0]), {"type": "http.request", "body": b"hello", "more_body": False}
    )
    await exchange.run(http_scope((b"content-length", b"5")), read_body=True)
    assert exchange.phases == [Phase.READING, Phase.RESPONDING, Phase.IDLE]
    assert exchange.seen[1][1] == math.inf
    assert exchange.seen[2][1] == exchange.connection.timer.since + KEEP_ALIVE


async def test_a_probes_answer_past_the_limits_says_the_connection_closes(
    pair: tuple[trio.SocketStream, trio.SocketStream],
) -> None:
    timer = ConnectionTimer(KEEP_ALIVE, READ, since=trio.current_time())
    exchange = Exchange(Connection(pair[0], timer, SEND, one_request=True))
    await exchange.run(http_scope())
    start = exchange.sent[0]
    assert start["type"] == "http.response.start"
    assert list(start["headers"]) == [(b"connection", b"close")]
    assert exchange.phases == [Phase.RESPONDING, Phase.IDLE]


async def test_an_answer_before_the_body_says_the_connection_closes(
    pair: tuple[trio.SocketStream, trio.SocketStream],
) -> None:
    exchange = Exchange(connect(pair[0]))
    await exchange.run(http_scope((b"Transfer-Encoding", b"chunked")), read_body=False)
    start = exchange.sent[0]
    assert start["type"] == "http.response.start"
    assert list(start["headers"]) == [(b"connection", b"close")]
    # Still reading: the read timeout bounds what is left of the connection.
    assert exchange.phases == [Phase.READING, Phase.READING]


class Wire:
    """A transport that keeps each send it is asked for; its socket, each end."""

    def __init__(self) -> None:
        self.sends: list[bytes] = []
        self.socket = WireSocket(self.sends)

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        self.sends.append(bytes(data))


class WireSocket:
    """The ends of a Wire, as the connection makes them: on its socket."""

    def __init__(self, sends: list[bytes]) -> None:
        self.sends = sends
        self.did_shutdown_SHUT_WR = False

    def shutdown(self, how: int) -> None:
        assert how == trio.socket.SHUT_WR
        self.did_shutdown_SHUT_WR = True
        self.sends.append(b"<eof>")

    def close(self) -> None:
        self.sends.append(b"<close>")


def on_wire() -> tuple[Wire, Connection]:
    wire = Wire()
    timer = ConnectionTimer(KEEP_ALIVE, READ, since=trio.current_time())
    return wire, Connection(cast("trio.SocketStream", wire), timer, SEND)


async def hypercorn_writes(connection: Connection, *events: ASGISendEvent) -> None:
    """An app's events through Exchanges, each written as hypercorn writes it: the head
    on `http.response.start`, the body on the body's event, then, after a chunked body's
    last, its end (h11's last chunk: "END" here)."""
    chunked = True

    async def app(scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable) -> None:
        for event in events:
            await send(event)

    async def write(event: ASGISendEvent) -> None:
        nonlocal chunked
        if event["type"] == "http.response.start":
            chunked = not any(name.lower() == b"content-length" for name, _ in event["headers"])
            await connection.send_all(b"HEAD")
            return
        await connection.send_all(cast("bytes", event.get("body", b"")))
        if chunked and not event.get("more_body", False):
            await connection.send_all(b"END")

    async def no_request() -> ASGIReceiveEvent:
        raise AssertionError("not read")

    await Exchanges(cast("ASGIFramework", app), connection)(http_scope(), no_request, write)


async def test_a_response_of_known_length_goes_out_in_one_send() -> None:
    wire, connection = on_wire()
    start: ASGISendEvent = {
        "type": "http.response.start",
        "status": 200,
        "headers": [(b"Content-Length", b"4")],
    }
    await hypercorn_writes(
        connection,
        start,
        {"type": "http.response.body", "body": b"body", "more_body": True},
        {"type": "http.response.body", "body": b"", "more_body": False},
    )
    assert wire.sends == [b"HEADbody"]


async def test_a_streams_head_goes_with_its_first_event_and_its_end_with_its_last() -> None:
    wire, connection = on_wire()
    await hypercorn_writes(
        connection,
        {"type": "http.response.start", "status": 200, "headers": []},
        {"type": "http.response.body", "body": b"task", "more_body": True},
        {"type": "http.response.body", "body": b"working", "more_body": True},
        {"type": "http.response.body", "body": b"completed", "more_body": False},
    )
    assert wire.sends == [b"HEADtask", b"working", b"completedEND"]


async def test_held_bytes_go_out_before_more_than_a_piece_and_before_the_end() -> None:
    wire, connection = on_wire()
    connection.hold()
    await connection.send_all(b"HEAD")
    large = bytes(100 * 1024)
    await connection.send_all(large)
    assert wire.sends == [b"HEAD", large[: 64 * 1024], large[64 * 1024 :]]
    connection.hold()
    await connection.send_all(b"HEAD")
    await connection.aclose()
    assert wire.sends[3:] == [b"HEAD", b"<close>"]


async def test_the_server_holds_a_response_without_its_send_lock_and_sends_it_at_the_end() -> None:
    from hypercorn.config import Config
    from hypercorn.events import RawData
    from hypercorn.trio.worker_context import WorkerContext

    from n8n_a2a.http.hypercorn_seam import _HTTP11Server

    wire, connection = on_wire()
    # (hypercorn 0.17 and 0.18 annotate the app and the stream otherwise: see the seam.)
    server = _HTTP11Server(
        cast("Any", None), Config(), WorkerContext(None), {}, cast("Any", connection)
    )
    connection.hold()
    async with server.send_lock:  # held elsewhere: a held piece does not wait for it
        await server.protocol_send(RawData(b"HEAD"))
        await server.protocol_send(RawData(b"body"))
    async with server.send_lock:  # the end of the body: nothing, held as well
        await server.protocol_send(RawData(b""))
    assert wire.sends == []
    await connection.release()  # the exchange's, after the body's last event
    assert wire.sends == [b"HEADbody"]
    await server.protocol_send(RawData(b"next"))  # no longer holding
    assert wire.sends == [b"HEADbody", b"next"]


class IdleTask:
    """Stands in for TCPServer's idle task: notes what is asked of it."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def restart(self, task_group: object, action: object) -> None:
        self.asked.append("restart")

    async def stop(self) -> None:
        self.asked.append("stop")


async def test_the_server_spawns_no_idle_task_per_request_and_closes_idle_at_shutdown() -> None:
    from hypercorn.config import Config
    from hypercorn.events import Updated
    from hypercorn.trio.worker_context import WorkerContext

    from n8n_a2a.http.hypercorn_seam import _HTTP11Server

    _, connection = on_wire()
    context = WorkerContext(None)
    server = _HTTP11Server(cast("Any", None), Config(), context, {}, cast("Any", connection))
    server.idle_task = idle_task = cast("Any", IdleTask())
    server._task_group = cast("Any", None)  # (what run() sets)
    for idle in (False, True, False, True, False):  # three requests begin, two end
        await server.protocol_send(Updated(idle=idle))
    assert idle_task.asked == []
    server.close_if_idle()
    assert not connection.scope.cancel_called  # a request is under way
    await context.terminated.set()
    await server.protocol_send(Updated(idle=True))  # after shutdown: TCPServer's way
    assert idle_task.asked == ["restart"]
    server.close_if_idle()
    assert connection.scope.cancel_called


async def test_the_servers_idle_task_starts_none_until_shutdown() -> None:
    from hypercorn.config import Config
    from hypercorn.trio.task_group import TaskGroup
    from hypercorn.trio.worker_context import WorkerContext

    from n8n_a2a.http.hypercorn_seam import _HTTP11Server

    _, connection = on_wire()
    context = WorkerContext(None)
    server = _HTTP11Server(cast("Any", None), Config(), context, {}, cast("Any", connection))
    started: list[str] = []

    async def idle_timeout() -> None:
        started.append("idle")

    async with TaskGroup() as task_group:
        # What run() does as the connection begins: no task, no lock.
        await server.idle_task.restart(task_group, idle_timeout)
        await trio.testing.wait_all_tasks_blocked()
        assert started == []
        await context.terminated.set()
        await server.idle_task.restart(task_group, idle_timeout)
    assert started == ["idle"]


async def test_the_end_of_the_response_reaches_the_client_once_however_often_it_is_sent(
    served: tuple[Connection, trio.SocketStream],
) -> None:
    connection, client = served
    await connection.send_all(b"last")
    await connection.send_eof()
    await connection.send_eof()  # hypercorn's close may come twice
    assert await client.receive_some() == b"last"
    assert await client.receive_some() == b""
    await connection.aclose()
    assert connection.transport.socket.fileno() == -1


async def test_the_end_sent_on_a_closed_connection_says_it_is_closed(
    served: tuple[Connection, trio.SocketStream],
) -> None:
    connection, _ = served
    await connection.aclose()
    with pytest.raises(trio.ClosedResourceError):
        await connection.send_eof()
