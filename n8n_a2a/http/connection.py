"""One accepted connection as the adapter serves it: timed, cut when its client goes.

`Connection` is the stream hypercorn's per-connection server reads and writes: it reports
each request's first byte and the client's end to a ConnectionTimer, and gives each
piece of a send ADAPTER_SEND_TIMEOUT to go out. `Exchanges` is the ASGI layer over the
app on that connection: it reports the request read and the response sent, shields that
last send, says `Connection: close` on an answer that comes before the request was
read whole, and has a response of known length written in one go: hypercorn writes its
head on `http.response.start` and its body on the next event, two sends of the socket
(and two trips through trio's scheduler) where one does. The last words written without
hypercorn (a 503 past the connection limits, a 408 past the read timeout), and the
lingering close after an answer given before the request was read whole, are here too.
"""

from __future__ import annotations

import errno
from collections.abc import Iterable
from typing import TYPE_CHECKING

import trio

from ..protocol import jsonrpc
from ..protocol.errors import A2AError, ErrorCode
from ..protocol.versions import V1
from .timer import ConnectionTimer, Phase

if TYPE_CHECKING:
    from hypercorn.typing import (
        ASGIFramework,
        ASGIReceiveCallable,
        ASGIReceiveEvent,
        ASGISendCallable,
        ASGISendEvent,
        Scope,
    )

# Seconds a last answer written without hypercorn (a 503, a 408) has to go out. After a
# 503 the refused client's request is read and dropped meanwhile: closing on unread
# bytes sends a reset, which can make the client lose the 503.
_FAREWELL_SECONDS = 0.5
#: After an answer given before the request was read whole (a 413, a 405, a 400), what
#: the client still sends is read and dropped for up to LINGER_SECONDS and LINGER_BYTES
#: before the connection closes (RFC 9112 §9.6). Closed at once, the bytes left unread
#: make the kernel send a reset, and the client loses the answer it was sent (httpx on
#: asyncio: a ReadError for a 40 MiB upload, every time). 2 s is what Apache's lingering
#: close waits for each read: time for a body in flight to arrive. LINGER_BYTES (twice
#: the default ADAPTER_MAX_BODY_BYTES) bounds what a client that never stops sending
#: costs on a link fast enough to send more than that in 2 s (loopback, a LAN).
LINGER_SECONDS = 2.0
LINGER_BYTES = 64 * 1024 * 1024
_DROP_READ = 64 * 1024
# Bytes of a response that must go out within the send timeout, one piece after another.
_SEND_PIECE = 64 * 1024


def busy_response(connections: int) -> bytes:
    """The 503 for a connection past the limit of `connections` served at once."""
    return _canned_response(
        "503 Service Unavailable",
        A2AError(
            ErrorCode.SERVER_BUSY,
            f"The adapter has {connections} connections open "
            "(ADAPTER_MAX_CONNECTIONS): try again shortly",
        ),
        b"Retry-After: 1\r\n",
    )


def peer_busy_response(per_peer: int) -> bytes:
    """The 503 for a connection past the limit of `per_peer` served at once to one client
    address."""
    return _canned_response(
        "503 Service Unavailable",
        A2AError(
            ErrorCode.SERVER_BUSY,
            f"Your address has {per_peer} connections open to the adapter "
            "(ADAPTER_MAX_CONNECTIONS_PER_IP): close one, or try again shortly",
        ),
        b"Retry-After: 1\r\n",
    )


def read_timeout_response(read_timeout: float) -> bytes:
    """The 408 for a request that did not arrive whole within `read_timeout` seconds."""
    return _canned_response(
        "408 Request Timeout",
        A2AError(
            ErrorCode.INVALID_REQUEST,
            f"The request did not arrive whole within {read_timeout:g} s "
            "(ADAPTER_REQUEST_READ_TIMEOUT)",
        ),
    )


def _canned_response(status: str, error: A2AError, extra_headers: bytes = b"") -> bytes:
    """A whole HTTP/1.1 response written without hypercorn: a JSON-RPC error, then close."""
    body = jsonrpc.error_response(None, V1.encode_error(error))
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n"
    ).encode()
    return head + extra_headers + b"\r\n" + body


async def say_farewell(
    stream: trio.SocketStream, response: bytes, *, drop_request: bool = False
) -> None:
    """Send a last response to a client that may be gone, within a short grace; with
    `drop_request`, then read and drop what the client still sends until it closes."""
    with trio.move_on_after(_FAREWELL_SECONDS):
        try:
            await stream.send_all(response)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return
        if drop_request:
            await linger(stream)


async def linger(
    stream: trio.SocketStream, seconds: float = LINGER_SECONDS, limit: int = LINGER_BYTES
) -> None:
    """Stop writing, then read and drop what the client sends until it closes, for up to
    `seconds` and `limit` bytes; the caller closes the socket after."""
    socket = stream.socket
    with trio.move_on_after(seconds):
        try:
            if not socket.did_shutdown_SHUT_WR:
                socket.shutdown(trio.socket.SHUT_WR)
            dropped = 0
            while dropped < limit:
                data = await stream.receive_some(_DROP_READ)
                if not data:
                    return
                dropped += len(data)
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # gone already


class Connection(trio.abc.HalfCloseableStream):
    """One accepted socket, as hypercorn's TCPServer reads and writes it.

    `scope` is the connection's cancel scope: its deadline follows the timer, and it is
    cancelled once the client has gone or stopped taking a response.
    """

    def __init__(
        self,
        transport: trio.SocketStream,
        timer: ConnectionTimer,
        send_timeout: float,
        *,
        peeked: bytes = b"",
        one_request: bool = False,
    ) -> None:
        self.transport = transport
        self.timer = timer
        self.send_timeout = send_timeout
        self._deadline = timer.deadline
        self.scope = trio.CancelScope(deadline=self._deadline)
        self.answered = False  # the current request's response has begun
        self.abandoned = False
        #: Closed before its request was read whole: the seam lingers, then closes it.
        self.lingering = False
        #: Bytes read already (the head of a probe past the limits): read first.
        self._peeked = peeked
        #: Serve one request only (a probe past the limits): its answer says so.
        self.one_request = one_request
        #: Bytes held back to go out with the next ones (`hold`), up to one piece.
        self._held: bytearray | None = None

    @property
    def socket(self) -> trio.socket.SocketType:
        """TCPServer takes the peer's and its own address from here."""
        return self.transport.socket

    @property
    def timed_out_reading(self) -> bool:
        return (
            self.scope.cancelled_caught
            and not self.abandoned
            and not self.lingering
            and self.timer.phase is Phase.READING
            and not self.answered
        )

    def retime(self) -> None:
        # Most calls leave the phase as it was: trio's deadline setter is not free.
        deadline = self.timer.deadline
        if deadline != self._deadline:
            self._deadline = self.scope.deadline = deadline

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        if self._peeked:
            data = await self._replay(max_bytes)
        else:
            try:
                data = await self.transport.receive_some(max_bytes)
            except trio.BrokenResourceError:
                self._end()
                raise
        if data:
            self.timer.receiving(trio.current_time())
            self.retime()
        elif self.timer.phase is not Phase.IDLE:
            # hypercorn stops serving a connection whose peer closed its side, even with
            # a request under way; all it has left to do is wait for its idle timer.
            # (Between requests its read loop ends the connection itself: cancelling it
            # there only has every await left in its close raise Cancelled.)
            self._end()
        return data

    async def _replay(self, max_bytes: int | None) -> bytes:
        """The bytes peeked before hypercorn had the connection, as if read now."""
        await trio.lowlevel.checkpoint()
        size = len(self._peeked) if max_bytes is None else max_bytes
        data, self._peeked = self._peeked[:size], self._peeked[size:]
        return data

    def _end(self) -> None:
        """The client has gone, or stopped taking bytes: nothing more can pass."""
        self.abandoned = True
        self.scope.cancel()

    def hold(self) -> None:
        """Hold what is sent from now on (up to one piece) until `release`: a response's
        head, to go out with its body; a last piece, with the body's end. What is held
        already stays held."""
        if self._held is None:
            self._held = bytearray()

    async def release(self) -> None:
        """Send what was held, and hold no more. A client gone meanwhile ends the
        connection, as a send of hypercorn's that fails does."""
        held, self._held = self._held, None
        if held:
            try:
                await self._send(held)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self._end()

    def holds(self, data: bytes | bytearray | memoryview) -> bool:
        """Whether `data` was held, to go with the next bytes sent: while holding, up to
        one piece. An empty send (h11's end of a body of known length) is held too, as
        nothing: what is held goes at `release`, which the exchange calls next, or as the
        connection closes. (Passed on, hypercorn's send takes its send lock, a trip
        through trio's scheduler, and a shielded cancel scope, for no bytes.)"""
        held = self._held
        if held is None or len(held) + len(data) > _SEND_PIECE:
            return False
        held += data
        return True

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if self.holds(data):
            return
        held, self._held = self._held, None
        if held:
            await self._send(held)
        await self._send(data)

    async def _send(self, data: bytes | bytearray | memoryview) -> None:
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

    # hypercorn ends every connection with send_eof, then aclose. trio's own two each
    # pass through its scheduler first (a cancel scope and a trip a call: a checkpoint),
    # for nothing: neither call waits on anything once what was held has gone out.

    async def send_eof(self) -> None:
        # A connection cut (its scope cancelled: a timer ran out, the client went) keeps
        # its socket open past hypercorn's close, for the last words the seam may have
        # for it (a 408); the seam closes it after.
        await trio.lowlevel.checkpoint_if_cancelled()
        await self.release()
        socket = self.transport.socket
        if socket.did_shutdown_SHUT_WR:
            return
        try:
            socket.shutdown(trio.socket.SHUT_WR)
        except OSError as error:
            # As trio.SocketStream says it.
            gone = (
                trio.ClosedResourceError if error.errno == errno.EBADF else trio.BrokenResourceError
            )
            raise gone(str(error)) from error

    async def aclose(self) -> None:
        try:
            await self.release()
        finally:
            if self.lingering or (
                self.timer.phase is Phase.READING and not self.scope.cancel_called
            ):
                # hypercorn closes a connection whose request it has not read whole (an
                # answer before the body, a request refused): what the client still
                # sends is read and dropped first (`linger`), which the seam does once
                # hypercorn is done with the connection, its reads cut here.
                self.lingering = True
                self.scope.cancel()
            else:
                self.transport.socket.close()


def _has_body(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    for name, value in headers:
        if name.lower() == b"transfer-encoding" or (
            name.lower() == b"content-length" and value.strip() != b"0"
        ):
            return True
    return False


class Exchanges:
    """The app as one connection's requests reach it: each request and response is
    reported to the connection's timer."""

    def __init__(self, app: ASGIFramework, connection: Connection) -> None:
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
                if connection.timer.phase is Phase.READING or connection.one_request:
                    # Answered before the body arrived: hypercorn closes the connection
                    # after this response, and RFC 9112 §9.6 has the client told so. (A
                    # probe's, past the limits, closes for it: h11 then ends the
                    # connection after the response, whatever the client sends next.)
                    event = {
                        **event,
                        "headers": [*event.get("headers", ()), (b"connection", b"close")],
                    }
                # The head goes out with the body's first piece, which comes at once:
                # a body of known length, or a stream's first event (the task).
                connection.hold()
                await send(event)
                return
            if event["type"] != "http.response.body" or event.get("more_body", False):
                await send(event)
                await connection.release()
                return
            # hypercorn finishes the exchange inside this call, and quart-trio (the
            # operator's app) cancels the calling task as soon as hypercorn, in there,
            # reports the request over.
            with trio.CancelScope(shield=True):
                connection.hold()  # the last piece and the body's end: one write
                await send(event)
                await connection.release()
            connection.timer.response_sent(trio.current_time())
            connection.retime()

        await self._app(scope, receive_request, send_response)
