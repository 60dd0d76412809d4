"""HTTP/1.1 connections: hypercorn's protocol serves each one, under an accept loop of ours.

`hypercorn.trio.serve` (0.17 and 0.18) cannot bound connections, for four reasons:

- It does the bookkeeping that ends a response (the next request cycle, the keep-alive
  timer, the close that `Connection: close` or an early answer calls for) inside the
  app's last `send` call (protocol/h11.py, `_maybe_recycle`). Its first step tells the
  app the request is over, and quart-trio answers that by cancelling the very task
  that is making the call: the rest is cut at its first await. Idle keep-alive
  connections then never time out, `Connection: close` is not honoured, and a
  connection answered before its body arrived (413, 405) hangs.
- Its `read_timeout` applies to each read alone: it would cut a long blocking send (the
  reads made while a response is produced count too), yet never a body that trickles
  in a byte at a time. Its keep-alive timer also runs while a request's head arrives.
- It shields every send from cancellation, so a client that stops taking a response
  holds its connection, and shutdown, for ever.
- It has no connection limit: at the file limit accept(2) fails, and new clients wait
  unanswered in the listen backlog (trio.serve_listeners logs each failure, with its
  traceback, ten times a second).

So each connection runs hypercorn's own TCPServer (its HTTP/1.1 protocol, h11 and all)
inside a cancel scope whose deadline follows a ConnectionTimer. The stream under
TCPServer reports each request's first byte and the client's end, and gives each piece
of a send ADAPTER_SEND_TIMEOUT to go out; an ASGI layer over the app reports the request
read and the response sent, shields that last send, and says `Connection: close` on an
answer that comes before the request was read whole. The accept loop counts
connections and answers one past the limit with a 503; where accept(2) fails for want of
descriptors or memory all the same, it waits and tries again, and says so once in a while.
"""

from __future__ import annotations

import errno
import logging
import math
import os
import resource
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from functools import partial

import trio
from hypercorn.app_wrappers import ASGIWrapper
from hypercorn.config import Config, Sockets
from hypercorn.trio.lifespan import Lifespan
from hypercorn.trio.tcp_server import TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import (
    ASGIFramework,
    ASGIReceiveCallable,
    ASGIReceiveEvent,
    ASGISendCallable,
    ASGISendEvent,
    LifespanState,
    Scope,
)
from hypercorn.utils import repr_socket_addr

from .config import Settings
from .connection_timer import ConnectionTimer, Phase
from .protocol import jsonrpc
from .protocol.errors import A2AError, ErrorCode
from .protocol.versions import V1

logger = logging.getLogger(__name__)

#: Connections answered 503 at once; past that many, one more is closed unanswered.
REFUSALS_AT_ONCE = 256
#: File descriptors the process needs beside connections, webhook calls and push POSTs
#: (the listening socket, logs, the CA bundle, DNS look-ups: trio's 40 threads and push's 8).
OTHER_DESCRIPTORS = 64
#: Seconds between two log lines about accept(2) failing for want of resources.
ACCEPT_FAILURE_LOG_INTERVAL = 10.0
# Seconds to wait after such a failure before accepting again (trio's own pause).
_ACCEPT_RETRY = 0.1
# accept(2)'s errors that say the process or the system is short of something.
_SHORTAGES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
# Seconds a last answer written without hypercorn (a 503, a 408) has to go out. After a
# 503 the refused client's request is read and dropped meanwhile: closing on unread
# bytes sends a reset, which can make the client lose the 503.
_FAREWELL_SECONDS = 0.5
# Bytes of a response that must go out within the send timeout, one piece after another.
_SEND_PIECE = 64 * 1024


def descriptors_needed(settings: Settings) -> int:
    """File descriptors the adapter may hold at once at its configured limits."""
    return _shared(settings) + OTHER_DESCRIPTORS


def _shared(settings: Settings) -> int:
    """The descriptors that share the file limit in proportion when it is short."""
    return (
        settings.max_connections
        + settings.max_concurrent_calls
        + REFUSALS_AT_ONCE
        + settings.push_max_concurrent
    )


def raised_file_limit(soft: int, hard: int, needed: int) -> int:
    """The soft RLIMIT_NOFILE to set: `needed` where the hard limit allows it."""
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return soft
    if hard == resource.RLIM_INFINITY:
        return needed
    return min(hard, needed)


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    connections: int  # served at once
    refusals: int  # answered 503 at once; past that many, one more is closed unanswered
    push_posts: int  # push POSTs under way at once


def limits_within(settings: Settings, file_limit: int) -> ConnectionLimits:
    """ADAPTER_MAX_CONNECTIONS, REFUSALS_AT_ONCE and ADAPTER_PUSH_MAX_CONCURRENT, or fewer
    when the file limit has no room for them: past the limit a client gets a 503, past
    the file limit no answer.

    Short of room, connections, refusals, webhook calls and push POSTs share what the
    limit leaves in the proportion configured (a call past its share fails as
    UNREACHABLE; a push POST past its share waits for its turn).
    """
    if file_limit == resource.RLIM_INFINITY or file_limit >= descriptors_needed(settings):
        return ConnectionLimits(
            settings.max_connections, REFUSALS_AT_ONCE, settings.push_max_concurrent
        )
    spare = max(0, file_limit - OTHER_DESCRIPTORS)
    wanted = _shared(settings)
    return ConnectionLimits(
        connections=max(1, spare * settings.max_connections // wanted),
        refusals=spare * REFUSALS_AT_ONCE // wanted,
        push_posts=max(1, spare * settings.push_max_concurrent // wanted),
    )


def fit_file_limit(settings: Settings) -> ConnectionLimits:
    """Raise the process's file limit for the configured limits; the limits that fit."""
    needed = descriptors_needed(settings)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = raised_file_limit(soft, hard, needed)
    if limit != soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    limits = limits_within(settings, limit)
    if limits.connections < settings.max_connections:
        logger.warning(
            "the file limit (RLIMIT_NOFILE) is %d, below the %d that ADAPTER_MAX_CONNECTIONS, "
            "ADAPTER_MAX_CONCURRENT_CALLS and ADAPTER_PUSH_MAX_CONCURRENT need: at most %d "
            "connections are served at once, and %d push POSTs made",
            limit,
            needed,
            limits.connections,
            limits.push_posts,
        )
    return limits


ShutdownTrigger = Callable[[], Awaitable[None]]


async def serve_http(
    app: ASGIFramework,
    config: Config,
    settings: Settings,
    limits: ConnectionLimits,
    sockets: Sockets,
    *,
    shutdown_trigger: ShutdownTrigger,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve `app` on the listening `sockets` until `shutdown_trigger` returns, as
    hypercorn's trio worker does (lifespan, graceful_timeout), with bounded connections
    (`limits`: what fit_file_limit found room for)."""
    state: LifespanState = {}
    lifespan = Lifespan(ASGIWrapper(app), config, state)
    context = WorkerContext(None)
    accept = _Acceptor(app, config, context, state, settings, limits)
    async with trio.open_nursery() as lifespan_nursery:
        await lifespan_nursery.start(lifespan.handle_lifespan)
        await lifespan.wait_for_startup()
        async with trio.open_nursery() as connections:
            listeners = [
                trio.SocketListener(trio.socket.from_stdlib_socket(sock))
                for sock in sockets.insecure_sockets
            ]
            binds = [
                "http://" + repr_socket_addr(listener.socket.family, listener.socket.getsockname())
                for listener in listeners
            ]
            try:
                async with trio.open_nursery() as accepting:
                    accepting.start_soon(
                        partial(trio.serve_listeners, handler_nursery=connections),
                        accept,
                        [PatientListener(listener) for listener in listeners],
                    )
                    task_status.started(binds)
                    await shutdown_trigger()
                    accepting.cancel_scope.cancel()
            finally:
                # Idle connections close at once; the others get graceful_timeout.
                await context.terminated.set()
                connections.cancel_scope.deadline = trio.current_time() + config.graceful_timeout
        await lifespan.wait_for_shutdown()
        lifespan_nursery.cancel_scope.cancel()


class PatientListener(trio.abc.Listener[trio.SocketStream]):
    """A listener whose accept() waits out a shortage (EMFILE, ENFILE, ENOBUFS, ENOMEM)
    and tries again, logging it once per interval with a count, without a traceback.

    trio.serve_listeners does the same, but logs every failed try, ten a second, each
    with its traceback: a log flood on top of the shortage.
    """

    def __init__(
        self,
        listener: trio.abc.Listener[trio.SocketStream],
        interval: float = ACCEPT_FAILURE_LOG_INTERVAL,
    ) -> None:
        self._listener = listener
        self._interval = interval
        self._unreported = 0
        self._quiet_until = -math.inf

    async def accept(self) -> trio.SocketStream:
        while True:
            try:
                return await self._listener.accept()
            except OSError as error:
                if error.errno not in _SHORTAGES:
                    raise
                self._failed(error.errno)
            await trio.sleep(_ACCEPT_RETRY)

    async def aclose(self) -> None:
        await self._listener.aclose()

    def _failed(self, number: int) -> None:
        self._unreported += 1
        now = trio.current_time()
        if now < self._quiet_until:
            return
        name = errno.errorcode[number]
        fields = {"event": "accept_failed", "errno": name, "failures": self._unreported}
        logger.error(
            "accepting a connection failed with %s (%s), %d time(s) since the last such "
            "line; new clients wait in the listen backlog meanwhile",
            name,
            os.strerror(number),
            self._unreported,
            extra={"fields": fields},
        )
        self._unreported = 0
        self._quiet_until = now + self._interval


class _Acceptor:
    """Serves each accepted connection, or refuses it past the limit."""

    def __init__(
        self,
        app: ASGIFramework,
        config: Config,
        context: WorkerContext,
        state: LifespanState,
        settings: Settings,
        limits: ConnectionLimits,
    ) -> None:
        self._app = app
        self._config = config
        self._context = context
        self._state = state
        self._keep_alive_timeout = settings.keep_alive_timeout
        self._read_timeout = settings.request_read_timeout
        self._send_timeout = settings.send_timeout
        self._max_connections = limits.connections
        self._max_refusals = limits.refusals
        self._open = 0
        self._refusing = 0
        self._full_noted = False
        self._busy = _canned_response(
            "503 Service Unavailable",
            A2AError(
                ErrorCode.SERVER_BUSY,
                f"The adapter has {limits.connections} connections open "
                "(ADAPTER_MAX_CONNECTIONS): try again shortly",
            ),
            b"Retry-After: 1\r\n",
        )
        self._too_slow = _canned_response(
            "408 Request Timeout",
            A2AError(
                ErrorCode.INVALID_REQUEST,
                f"The request did not arrive whole within {self._read_timeout:g} s "
                "(ADAPTER_REQUEST_READ_TIMEOUT)",
            ),
        )

    async def __call__(self, stream: trio.SocketStream) -> None:
        if self._open >= self._max_connections:
            await self._refuse(stream)
            return
        self._open += 1
        try:
            await self._serve(stream)
        finally:
            self._open -= 1
            if self._open < self._max_connections:
                self._full_noted = False

    async def _serve(self, stream: trio.SocketStream) -> None:
        timer = ConnectionTimer(
            self._keep_alive_timeout, self._read_timeout, since=trio.current_time()
        )
        connection = _Connection(stream, timer, self._send_timeout)
        app = ASGIWrapper(_Exchanges(self._app, connection))
        with connection.scope:
            # hypercorn 0.18 annotates the stream as an SSLStream, but its plain-TCP path
            # takes any stream with a `socket` (0.17 annotates trio.abc.Stream).
            server = TCPServer(app, self._config, self._context, self._state, connection)  # type: ignore[arg-type]
            await server.run()
        if connection.timed_out_reading:
            # The request's sender learns why; a client that sent nothing yet (idle
            # keep-alive) gets no bytes it could take for the answer to its next request.
            with trio.move_on_after(_FAREWELL_SECONDS):
                await _send_quietly(stream, self._too_slow)

    async def _refuse(self, stream: trio.SocketStream) -> None:
        if not self._full_noted:
            self._full_noted = True
            logger.warning(
                "%d connections open (ADAPTER_MAX_CONNECTIONS): new ones get 503 until one closes",
                self._open,
            )
        if self._refusing >= self._max_refusals:
            return  # closed unanswered: a flood must not cost a file per refusal
        self._refusing += 1
        try:
            with trio.move_on_after(_FAREWELL_SECONDS):
                if await _send_quietly(stream, self._busy):
                    await stream.send_eof()
                    while await stream.receive_some():
                        pass
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            self._refusing -= 1


async def _send_quietly(stream: trio.SocketStream, data: bytes) -> bool:
    """Send to a peer that may be gone; whether it went out."""
    try:
        await stream.send_all(data)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        return False
    return True


def _canned_response(status: str, error: A2AError, extra_headers: bytes = b"") -> bytes:
    """A whole HTTP/1.1 response written without hypercorn: a JSON-RPC error, then close."""
    body = jsonrpc.error_response(None, V1.encode_error(error))
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n"
    ).encode()
    return head + extra_headers + b"\r\n" + body


class _Connection(trio.abc.HalfCloseableStream):
    """One accepted socket, as hypercorn's TCPServer reads and writes it.

    `scope` is the connection's cancel scope: its deadline follows the timer, and it is
    cancelled once the client has gone or stopped taking a response.
    """

    def __init__(
        self, transport: trio.SocketStream, timer: ConnectionTimer, send_timeout: float
    ) -> None:
        self.transport = transport
        self.timer = timer
        self.send_timeout = send_timeout
        self.scope = trio.CancelScope(deadline=timer.deadline)
        self.answered = False  # the current request's response has begun
        self.abandoned = False

    @property
    def socket(self) -> trio.socket.SocketType:
        """TCPServer takes the peer's and its own address from here."""
        return self.transport.socket

    @property
    def timed_out_reading(self) -> bool:
        return (
            self.scope.cancelled_caught
            and not self.abandoned
            and self.timer.phase is Phase.READING
            and not self.answered
        )

    def retime(self) -> None:
        self.scope.deadline = self.timer.deadline

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        try:
            data = await self.transport.receive_some(max_bytes)
        except trio.BrokenResourceError:
            self._end()
            raise
        if data:
            self.timer.receiving(trio.current_time())
            self.retime()
        else:
            # hypercorn stops serving a connection whose peer closed its side, even with
            # a request under way; all it has left to do is wait for its idle timer.
            self._end()
        return data

    def _end(self) -> None:
        """The client has gone, or stopped taking bytes: nothing more can pass."""
        self.abandoned = True
        self.scope.cancel()

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        # hypercorn shields its sends from cancellation, so a client that stops taking
        # a response would hold the connection, and shutdown, for ever. Each piece must
        # go out within the send timeout; a response's length and duration are unbounded.
        view = memoryview(data)
        for start in range(0, len(view), _SEND_PIECE):
            with trio.move_on_after(self.send_timeout) as piece:
                await self.transport.send_all(view[start : start + _SEND_PIECE])
            if piece.cancelled_caught:
                self._end()
                raise trio.BrokenResourceError("the client took no more of the response")

    async def wait_send_all_might_not_block(self) -> None:
        await self.transport.wait_send_all_might_not_block()

    async def send_eof(self) -> None:
        await self.transport.send_eof()

    async def aclose(self) -> None:
        await self.transport.aclose()


def _has_body(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    for name, value in headers:
        if name.lower() == b"transfer-encoding" or (
            name.lower() == b"content-length" and value.strip() != b"0"
        ):
            return True
    return False


class _Exchanges:
    """The app as one connection's requests reach it: each request and response is
    reported to the connection's timer."""

    def __init__(self, app: ASGIFramework, connection: _Connection) -> None:
        self._app = app
        self._connection = connection

    async def __call__(
        self, scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable
    ) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        connection = self._connection
        connection.answered = False
        # A pipelined request may have arrived whole while the previous one was answered.
        connection.timer.receiving(trio.current_time())
        if not _has_body(scope["headers"]):
            # Read whole with its head. (The app may answer before it takes the empty
            # body's event, so that event cannot be what says so.)
            connection.timer.request_read()
        connection.retime()

        async def receive_request() -> ASGIReceiveEvent:
            event = await receive()
            if event["type"] == "http.request" and not event.get("more_body", False):
                connection.timer.request_read()
                connection.retime()
            return event

        async def send_response(event: ASGISendEvent) -> None:
            if event["type"] == "http.response.start":
                connection.answered = True
                if connection.timer.phase is Phase.READING:
                    # Answered before the body arrived: hypercorn closes the connection
                    # after this response, and RFC 9112 §9.6 has the client told so.
                    event = {
                        **event,
                        "headers": [*event.get("headers", ()), (b"connection", b"close")],
                    }
            if event["type"] != "http.response.body" or event.get("more_body", False):
                await send(event)
                return
            # hypercorn finishes the exchange inside this call, and quart-trio cancels
            # the calling task as soon as hypercorn, in there, reports the request over.
            with trio.CancelScope(shield=True):
                await send(event)
            connection.timer.response_sent(trio.current_time())
            connection.retime()

        await self._app(scope, receive_request, send_response)
