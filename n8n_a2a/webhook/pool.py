"""The webhook's connections, the idle ones on a stack, and a call's exchange on one.

A request takes the newest idle connection that is still good, or opens one, and the end
of its exchange gives it back, so a call costs the same at any concurrency. No limit on
connections: the executor's ADAPTER_MAX_CONCURRENT_CALLS bounds them. Each connection
carries one exchange at a time: the request's head and body written, the reply read as
webhook/http11.py frames it, and the connection kept only when the reply was read to its
end and may be followed by another.
"""

from __future__ import annotations

import collections
import ssl
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from types import TracebackType
from urllib.parse import urlsplit

import trio

from .errors import ReadError, RemoteProtocolError, WriteError
from .http11 import ReplyHead, ReplyReader, request_target
from .network import Origin, WebhookStream, open_stream

#: Seconds an idle connection is kept: httpx's own default.
KEEPALIVE_EXPIRY = 5.0
#: A body up to this long goes out in the head's write; a longer one in writes of its own,
#: not copied.
JOINED_BODY_BYTES = 64 * 1024

#: A request's body: bytes, or pieces that know their length (a FormBody, a JSON body's Pieces).
Body = bytes | AsyncIterable[bytes | memoryview]
#: How the pool opens a connection (network.py's open_stream; a fake network in tests).
# ssl's type as text: ssl is imported as the first https origin is dialled (http/unused.py).
Dial = Callable[[Origin, "ssl.SSLContext | None"], Awaitable[WebhookStream]]


class Connection:
    """One connection to the webhook, and when it last finished an exchange."""

    __slots__ = ("idle_since", "origin", "stream")

    def __init__(self, origin: Origin, stream: WebhookStream) -> None:
        self.origin = origin
        self.stream = stream
        self.idle_since = 0.0

    def expired(self, now: float) -> bool:
        return now - self.idle_since >= KEEPALIVE_EXPIRY

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True):
            await self.stream.aclose()


class StackPool:
    """HTTP/1.1 connections, the idle ones on a stack; TLS with the context `tls` makes,
    made by the first https connection (reading a trust store costs a start about a
    tenth of its instructions, which an http:// webhook never needs). New connections
    are opened by `dial`."""

    def __init__(self, tls: Callable[[], ssl.SSLContext], dial: Dial = open_stream) -> None:
        self._tls = tls
        self._dial = dial
        self._ssl_context: ssl.SSLContext | None = None
        self._idle: collections.deque[Connection] = collections.deque()
        self._closed = False

    def __repr__(self) -> str:
        return f"<StackPool idle={len(self._idle)} closed={self._closed}>"

    def exchange(self, origin: Origin, head: bytes, body: Body) -> Exchange:
        """The request's exchange (`head` written out, webhook/http11.py's field_lines
        and all): `async with` it for the reply."""
        return Exchange(self, origin, head, body)

    async def take(self, origin: Origin) -> Connection:
        """The newest idle connection to `origin` still good (neither expired nor closed
        by the webhook), or a new one."""
        now = trio.current_time()
        while self._idle:
            connection = self._idle.pop()
            if (
                connection.origin == origin
                and not connection.expired(now)
                and not connection.stream.is_readable()
            ):
                return connection
            await connection.aclose()
        tls = self._tls_context() if origin.scheme == "https" else None
        return Connection(origin, await self._dial(origin, tls))

    def _tls_context(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            self._ssl_context = self._tls()
            self._ssl_context.set_alpn_protocols(["http/1.1"])
        return self._ssl_context

    async def give_back(self, connection: Connection, reusable: bool) -> None:
        """Keep the connection for the next request if it can take one, else close it."""
        if reusable and not self._closed:
            connection.idle_since = trio.current_time()
            self._idle.append(connection)
        else:
            await connection.aclose()
        # The oldest idle connection is the one to go stale first: one look per call
        # keeps the stack from holding connections the server has long closed.
        if len(self._idle) > 1 and self._idle[0].expired(trio.current_time()):
            await self._idle.popleft().aclose()

    async def aclose(self) -> None:
        """Close the idle connections; those in use close when their replies do."""
        self._closed = True
        while self._idle:
            await self._idle.pop().aclose()


class Reply:
    """A reply as it comes: its status and header fields, then its body (`async for`)."""

    __slots__ = ("_first", "_reader", "_stream", "head", "status")

    def __init__(self, stream: WebhookStream, reader: ReplyReader, first: bytes) -> None:
        assert reader.head is not None
        self.head: ReplyHead = reader.head
        self.status = reader.head.status
        self._stream = stream
        self._reader = reader
        self._first = first  # the body's bytes that came with the head

    def header(self, name: bytes) -> str:
        """The header `name` (lower-case) as ReplyHead.header reads it."""
        return self.head.header(name)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        reader, first = self._reader, self._first
        self._first = b""
        if first:
            yield first
        while not reader.ended:
            data = await self._stream.receive()
            if not data:
                reader.receive_eof()
                return
            piece = reader.receive(data)
            if piece:
                yield piece


class Exchange:
    """One request and its reply on a connection of the pool. Entered, it is the reply
    (the errors of webhook/errors.py as they come); left, its connection is given back,
    kept only if the reply was read to its end and allows another."""

    __slots__ = ("_body", "_connection", "_cut", "_head", "_origin", "_pool", "_reader")

    def __init__(self, pool: StackPool, origin: Origin, head: bytes, body: Body) -> None:
        self._pool = pool
        self._origin = origin
        self._head = head
        self._body: Body | None = body
        self._connection: Connection | None = None
        self._reader = ReplyReader()
        self._cut = False

    async def __aenter__(self) -> Reply:
        connection = await self._pool.take(self._origin)
        # Not kept here once sent, nor by the caller (client.py's Outgoing handed it over):
        # its bytes are room for the reply from then on.
        body, self._body = self._body, None
        assert body is not None
        try:
            stream = connection.stream
            first, self._cut = await exchange_head(stream, self._head, body, self._reader)
        except BaseException:
            await self._pool.give_back(connection, reusable=False)
            raise
        self._connection = connection
        return Reply(connection.stream, self._reader, first)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._connection is not None:
            reader = self._reader
            reusable = reader.ended and reader.reusable and not self._cut
            await self._pool.give_back(self._connection, reusable)


async def exchange_head(
    stream: WebhookStream, head: bytes, body: Body, reader: ReplyReader
) -> tuple[bytes, bool]:
    """Send the request and read the reply's head into `reader`: the body's bytes that
    came with it, and whether the request was cut on its way (its reply is then the
    connection's last). A cut with no reply after it is raised, as its WriteError."""
    cut = await send_request(stream, head, body)
    try:
        first = await read_head(stream, reader)
    except (ReadError, RemoteProtocolError) as error:
        if cut is not None:
            raise cut from error  # cut while sending, and no reply to show for it
        raise
    return first, cut is not None


async def send_request(stream: WebhookStream, head: bytes, body: Body) -> WriteError | None:
    """Write the request; a cut on the way is returned, not raised: a webhook may answer
    (a 413, say) and close before it read the whole request, and that answer is the
    reply to read (as httpcore reads it)."""
    try:
        if isinstance(body, bytes):
            if len(body) <= JOINED_BODY_BYTES:
                await stream.send(head + body)
            else:
                await stream.send(head)
                await stream.send(body)
        else:
            await stream.send(head)
            async for piece in body:
                await stream.send(piece)
    except WriteError as error:
        return error
    return None


async def read_head(stream: WebhookStream, reader: ReplyReader) -> bytes:
    """Read until the reply's head is in; the body's bytes that came with it."""
    first = b""
    while reader.head is None:
        data = await stream.receive()
        if not data:
            reader.receive_eof()  # raises: the connection closed before a head
        first = reader.receive(data)
    return first


_DEFAULT_PORTS = {"http": 80, "https": 443}


def request_url(url: str) -> tuple[Origin, bytes, bytes]:
    """An http(s) URL as the settings take it: where to connect, the request target, and
    the Host header, the last two as httpx made them: the host lower-cased and
    IDNA-encoded, the port named only when not the scheme's default, the path and query
    percent-encoded."""
    parts = urlsplit(url)
    host = parts.hostname or ""  # lower-cased, without an IPv6 address's brackets
    raw_host = host.encode("ascii") if host.isascii() else host.encode("idna")
    port = parts.port or _DEFAULT_PORTS[parts.scheme]
    target = request_target(parts.path, parts.query or None)
    named = b"[%b]" % raw_host if b":" in raw_host else raw_host
    host_header = named if port == _DEFAULT_PORTS[parts.scheme] else b"%b:%d" % (named, port)
    origin = Origin(parts.scheme, raw_host.decode("ascii"), port)
    return origin, target, host_header
