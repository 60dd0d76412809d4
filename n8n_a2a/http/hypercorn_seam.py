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
- It has no connection limit: at the file limit accept(2) fails and new clients wait
  in the listen backlog (trio.serve_listeners logs each failure ten times a second).

And its HTTP/1.1 protocol switches a connection to HTTP/2 on the prior-knowledge preface
or `Upgrade: h2c` (H11Protocol raises H2ProtocolAssumedError or H2CProtocolRequiredError,
and ProtocolWrapper.handle makes an H2Protocol), and to a WebSocket on `Upgrade:
websocket`: paths whose flow control and reads no timer of ours bounds. The adapter
serves HTTP/1.1 only (an ingress in front speaks it to us).

So each connection runs hypercorn's own TCPServer on a stream of ours (connection.py),
inside a cancel scope whose deadline follows a ConnectionTimer (timer.py); as its
H11Protocol, an HTTP11Protocol of ours (protocol.py, made by hypercorn's ProtocolWrapper
as hypercorn_h11.py stands for hypercorn's module) serves its requests, each through a
RequestStream (request_stream.py), read and framed without h11 (framing.py): it refuses
the preface and drops `Upgrade`, so that no request ever makes hypercorn switch. The accept
loop here counts connections, in all and by client address (slots.py): one past either
limit gets a 503, unless its request is a probe's (health, readiness, metrics), served
in a slot beyond the limits; where accept(2) fails for want of descriptors or memory all
the same, its listener waits and tries again (listener.py).

This module and protocol.py are the two that use hypercorn beyond its Config and ASGI
types: the names and signatures they rely on are pinned by tests/http/test_hypercorn_seam.py.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, cast

import trio
from hypercorn.app_wrappers import ASGIWrapper
from hypercorn.config import Config, Sockets
from hypercorn.events import Closed, Event, RawData, Updated
from hypercorn.protocol.h11 import H11Protocol
from hypercorn.trio.lifespan import Lifespan
from hypercorn.trio.tcp_server import MAX_RECV, TCPServer
from hypercorn.trio.worker_context import TrioSingleTask, WorkerContext
from hypercorn.typing import AppWrapper, ASGIFramework, LifespanState, TaskGroup
from hypercorn.utils import repr_socket_addr

from ..config import Settings
from .connection import (
    Connection,
    Exchanges,
    busy_response,
    linger,
    peer_busy_response,
    read_timeout_response,
    say_farewell,
)
from .descriptors import ConnectionLimits
from .listener import ACCEPT_FAILURE_LOG_INTERVAL, PatientListener
from .protocol import HTTP11Protocol
from .slots import (
    ALL_CONNECTIONS,
    PEEK_BYTES,
    PEEK_SECONDS,
    PER_IP,
    PROBE_PATHS,
    Admission,
    Head,
    Slots,
    Ticket,
    peeked_head,
)
from .timer import ConnectionTimer

if H11Protocol is not HTTP11Protocol:  # type: ignore[comparison-overlap]
    # hypercorn's protocol package was imported before this package stood in for its h11
    # module (unused.py): h11 would serve, without the adapter's refusals.
    raise ImportError("hypercorn.protocol was imported before n8n_a2a.http: see http/unused.py")

logger = logging.getLogger(__name__)

ShutdownTrigger = Callable[[], Awaitable[None]]


class ServedConfig(Config):
    """hypercorn's Config, its response headers (its own, in its order) made once a second:
    hypercorn writes the same Date anew for each response (time.gmtime and a format)."""

    _made_at: tuple[int, str] | None = None  # the second and protocol they were made for
    _made: tuple[tuple[bytes, bytes], ...] = ()

    def response_headers(self, protocol: str) -> list[tuple[bytes, bytes]]:
        made_at = (int(time.time()), protocol)
        if made_at != self._made_at:
            self._made_at, self._made = made_at, tuple(super().response_headers(protocol))
        return list(self._made)  # a list of its own: a caller may extend it


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
                    for listener in listeners:
                        accepting.start_soon(
                            _accept_each, PatientListener(listener), connections, accept
                        )
                    task_status.started(binds)
                    await shutdown_trigger()
                    accepting.cancel_scope.cancel()
            finally:
                # Idle connections close at once; the others get graceful_timeout.
                await context.terminated.set()
                accept.close_idle()
                connections.cancel_scope.deadline = trio.current_time() + config.graceful_timeout
        await lifespan.wait_for_shutdown()
        lifespan_nursery.cancel_scope.cancel()


async def _accept_each(
    listener: PatientListener,
    connections: trio.Nursery,
    serve: Callable[[trio.SocketStream], Awaitable[None]],
) -> None:
    """trio.serve_listeners for one listener, without its handler's last close (a cancel
    scope cancelled to close a stream hypercorn has closed already): `serve` closes each."""
    async with listener:
        while True:
            connections.start_soon(serve, await listener.accept())


class _Acceptor:
    """Serves each accepted connection, or refuses it past the limits (a probe's request
    is served all the same); closes it after."""

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
        per_ip = min(settings.max_connections_per_ip, limits.connections)
        self._slots = Slots(limits.connections, per_ip, limits.refusals)
        self._busy = {
            ALL_CONNECTIONS: busy_response(limits.connections),
            PER_IP: peer_busy_response(per_ip),
        }
        # When each limit reached may be logged again: once per interval at most.
        self._quiet_until = dict.fromkeys(self._busy, -math.inf)
        self._serving: set[_HTTP11Server] = set()
        self._too_slow = read_timeout_response(self._read_timeout)

    async def __call__(self, stream: trio.SocketStream) -> None:
        try:
            ticket = self._slots.admit(_peer(stream))
            try:
                if ticket.admission is Admission.SERVE:
                    await self._serve(stream)
                else:
                    await self._past_the_limits(stream, ticket)
            finally:
                self._slots.leave(ticket)
        finally:
            # Closed already but where the connection failed before hypercorn had it, or
            # it was refused. (Closing a socket takes no await: nothing to cancel.)
            stream.socket.close()

    async def _serve(
        self, stream: trio.SocketStream, peeked: bytes = b"", *, one_request: bool = False
    ) -> None:
        timer = ConnectionTimer(
            self._keep_alive_timeout, self._read_timeout, since=trio.current_time()
        )
        connection = Connection(
            stream, timer, self._send_timeout, peeked=peeked, one_request=one_request
        )
        app = ASGIWrapper(Exchanges(self._app, connection))
        with connection.scope:
            # hypercorn 0.18 annotates the stream as an SSLStream, but its plain-TCP path
            # takes any stream with a `socket` and no `do_handshake` (0.17 annotates
            # trio.abc.Stream).
            server = _HTTP11Server(app, self._config, self._context, self._state, connection)  # type: ignore[arg-type]
            self._serving.add(server)
            try:
                await server.run()
            finally:
                self._serving.discard(server)
                server.forget_protocol()
        if connection.timed_out_reading:
            # The request's sender learns why; a client that sent nothing yet (idle
            # keep-alive) gets no bytes it could take for the answer to its next request.
            await say_farewell(stream, self._too_slow)
        elif connection.lingering:
            await linger(stream)

    def close_idle(self) -> None:
        """At shutdown: close the connections between a response and the next request."""
        for server in self._serving:
            server.close_if_idle()

    async def _past_the_limits(self, stream: trio.SocketStream, ticket: Ticket) -> None:
        """A probe's request is served, in a probe slot; anything else gets the 503 of the
        limit the connection is past."""
        past = ticket.past or ALL_CONNECTIONS
        self._note(past)
        if ticket.admission is Admission.DROP:
            return  # closed unanswered: a flood must not cost a file per refusal
        head, peeked = await _peek(stream)
        probe = self._slots.probe(ticket) if head is Head.PROBE else None
        if probe is None:
            await say_farewell(stream, self._busy[past], drop_request=True)
            return
        try:
            await self._serve(stream, peeked, one_request=True)
        finally:
            self._slots.leave(probe)

    def _note(self, past: str) -> None:
        now = trio.current_time()
        if now < self._quiet_until[past]:
            return
        self._quiet_until[past] = now + ACCEPT_FAILURE_LOG_INTERVAL
        served = self._slots.served
        logger.warning(
            "%d connections open, at most %d from one address (%s reached): new ones get "
            "503 until one closes, but for probes (/healthz, /readyz, /metrics)",
            served.total,
            served.per_peer,
            past,
        )


def _peer(stream: trio.SocketStream) -> str:
    """The client's address, as its connections are counted by."""
    try:
        address = stream.socket.getpeername()
    except OSError:
        return ""  # gone already: hypercorn finds it so, and ends the connection
    return str(address[0]) if isinstance(address, tuple) else str(address)


async def _peek(stream: trio.SocketStream) -> tuple[Head, bytes]:
    """What a connection past the limits begins with (read from it: the 503 needs it
    gone, a probe's is served from it), within PEEK_SECONDS: a probe's head, or not."""
    head, verdict = b"", Head.MORE
    with trio.move_on_after(PEEK_SECONDS):
        try:
            while verdict is Head.MORE:
                data = await stream.receive_some(PEEK_BYTES)
                if not data:
                    break
                head += data
                verdict = peeked_head(head, PROBE_PATHS)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
    return (Head.OTHER if verdict is Head.MORE else verdict), head


class _HTTP11Server(TCPServer):
    """hypercorn's per-connection server, serving its requests with an HTTP11Protocol,
    and no task of its own per request for idle time.

    TCPServer times a connection's idle time (from a response's end to the next request's
    head) with a task, stopped as each request comes and started anew after its response,
    each time under a lock: a task spawned and one ended, two cancel scopes and two trips
    through trio's scheduler a request. The ConnectionTimer bounds idle time already; all
    that task did besides is close an idle connection at once on shutdown, which
    `close_if_idle` does: so its idle task starts none (the first one, `run`'s, from the
    connection's start, neither) until shutdown has begun; then TCPServer times idle
    time itself again.

    TCPServer makes its ProtocolWrapper inside `run`, before the first byte is read, and
    the wrapper its H11Protocol (a plain TCP stream has no ALPN to ask for h2): the
    adapter's HTTP11Protocol, as hypercorn_h11.py stands for hypercorn's module.
    """

    #: Between a response's end (or the connection's start) and the next request's head.
    idle = True

    def __init__(
        self,
        app: AppWrapper,
        config: Config,
        context: WorkerContext,
        state: LifespanState,
        stream: trio.SSLStream[trio.SocketStream],
    ) -> None:
        super().__init__(app, config, context, state, stream)
        self.idle_task = _ShutdownIdleTask(context)

    async def protocol_send(self, event: Event) -> None:
        # Bytes the connection holds back (a response's head and body, to go out in one
        # send: connection.py) need neither TCPServer's send lock nor its shielded scope:
        # holding them awaits nothing, and each lock taken is a trip through trio's
        # scheduler.
        if isinstance(event, RawData) and cast("Connection", self.stream).holds(event.data):
            return
        if isinstance(event, Updated):
            self.idle = event.idle
            if not self.context.terminated.is_set():
                return
        await super().protocol_send(event)

    def forget_protocol(self) -> None:
        """Once `run` has returned: drop the protocol, and with it the reference cycle
        through it (the wrapper and its H11Protocol each hold `protocol_send`, bound to
        this server). Left in place, the connection's 34 objects (hypercorn's server and
        protocol, h11's state, our Connection, the socket) outlive it until the collector
        finds them: after a burst of slow calls, in its full passes, which scan every
        task kept besides."""
        # (Never made when the connection failed before its first byte was read.)
        vars(self).pop("protocol", None)

    async def _read_data(self) -> None:
        # TCPServer's read loop, less the fail_after(config.read_timeout) it puts around
        # each read: that timeout stays off here (server.py; the connection's own scope
        # bounds its reads, timer.py), and trio's fail_after costs a cancel scope a read
        # all the same. tests/http/test_hypercorn_seam.py holds this to hypercorn's loop.
        while True:
            try:
                data = await self.stream.receive_some(MAX_RECV)
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                break
            await self.protocol.handle(RawData(bytes(data)))
            if not data:
                break
        await self.protocol.handle(Closed())

    def close_if_idle(self) -> None:
        if self.idle:
            cast("Connection", self.stream).scope.cancel()


class _ShutdownIdleTask(TrioSingleTask):
    """TCPServer's idle task, started only once shutdown has begun: before, the
    connection's timer bounds its idle time, and `close_if_idle` closes it at shutdown.
    `run` starts one as each connection begins, a task and a lock taken per connection."""

    def __init__(self, context: WorkerContext) -> None:
        super().__init__()
        self._context = context

    async def restart(self, task_group: TaskGroup, action: Callable[..., Any]) -> None:
        if self._context.terminated.is_set():
            await super().restart(task_group, action)
