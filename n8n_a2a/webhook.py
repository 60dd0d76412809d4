"""The one call to the workflow's production webhook.

One POST per message. The caller's token travels in X-Subject-Token and nowhere
else; redirects are not followed, so it cannot travel to another address; TLS is
always verified (with ADAPTER_CA_BUNDLE when set); one deadline bounds the whole
exchange, and the reply is read up to a limit that holds after decoding: the adapter
asks for no compression, decodes gzip and deflate itself a bounded piece at a time,
and leaves any other encoding to be judged off contract.
"""

from __future__ import annotations

import collections
import json
import logging
import ssl
import typing
import zlib
from dataclasses import dataclass
from types import TracebackType

import httpcore
import httpx
import trio

from . import __version__
from .config import Settings
from .outcome import HttpReply, Outcome, TransportFailure, WebhookReply
from .text import repair

#: The most of a reply that is read, decoded; a longer one is off contract anyway.
MAX_REPLY_BYTES = 1024 * 1024
# The most of a compressed reply that is read as sent: a stream that decodes to little
# or nothing (padding, empty blocks) must not keep the call reading until its deadline.
_MAX_SENT_BYTES = 2 * MAX_REPLY_BYTES
_INFLATED = ("gzip", "deflate")

# httpcore's DEBUG trace quotes every reply's headers, and a workflow's Location or
# Content-Type may carry the caller's token: its lines stop at INFO, whatever the level.
logging.getLogger("httpcore").setLevel(logging.INFO)


@dataclass(frozen=True, slots=True)
class WebhookRequest:
    """What the workflow receives: the message text and the A2A ids to key a conversation on."""

    text: str
    task_id: str
    context_id: str
    message_id: str
    skill_id: str

    def body(self) -> bytes:
        document = json.dumps(
            {
                "text": self.text,
                "taskId": self.task_id,
                "contextId": self.context_id,
                "messageId": self.message_id,
                "skillId": self.skill_id,
            },
            ensure_ascii=False,
        )
        # A lone surrogate (JSON's "\ud83d" in the caller's text) has no UTF-8.
        return repair(document)[0].encode()


@dataclass(frozen=True, slots=True)
class Caller:
    """What of the A2A request travels to the workflow besides the message, as headers:
    the caller's token (as X-Subject-Token) and its W3C trace context."""

    subject_token: str | None = None
    trace_headers: tuple[tuple[str, str], ...] = ()


class _StackPool(httpcore.AsyncConnectionPool):
    """httpcore's connection pool, with bookkeeping that costs the same at any concurrency.

    httpcore's own pool walks every connection it holds on each request and on each
    reply, and polls the socket of every idle one (has_expired): its cost per call grows
    with the calls under way. Here idle connections wait on a stack; a request takes the
    newest that is still good, or opens one, and its reply's close gives it back. No limit
    on connections: the executor's ADAPTER_MAX_CONCURRENT_CALLS bounds them.
    """

    def __init__(self, ssl_context: ssl.SSLContext) -> None:
        # httpx's own default keep-alive expiry, which the transport would have passed.
        super().__init__(ssl_context=ssl_context, max_connections=None, keepalive_expiry=5.0)
        self._idle: collections.deque[httpcore.AsyncConnectionInterface] = collections.deque()

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        origin = request.url.origin
        while True:
            connection = await self._take(origin)
            try:
                response = await connection.handle_async_request(request)
            except httpcore.ConnectionNotAvailable:
                continue  # the server closed it just now: take another
            except BaseException:
                await self._give(connection)
                raise
            assert isinstance(response.stream, typing.AsyncIterable)
            return httpcore.Response(
                status=response.status,
                headers=response.headers,
                content=_GiveBackOnClose(response.stream, connection, self),
                extensions=response.extensions,
            )

    async def _take(self, origin: httpcore.Origin) -> httpcore.AsyncConnectionInterface:
        while self._idle:
            connection = self._idle.pop()
            if (
                connection.can_handle_request(origin)
                and connection.is_available()
                and not connection.has_expired()
            ):
                return connection
            await _close(connection)
        return self.create_connection(origin)

    async def _give(self, connection: httpcore.AsyncConnectionInterface) -> None:
        if connection.is_idle():
            self._idle.append(connection)
        elif not connection.is_closed():
            await _close(connection)
        # The oldest idle connection is the one to go stale first: one look per call
        # keeps the stack from holding connections the server has long closed.
        if len(self._idle) > 1 and self._idle[0].has_expired():
            await _close(self._idle.popleft())

    async def aclose(self) -> None:
        while self._idle:
            await _close(self._idle.pop())
        await super().aclose()


class _GiveBackOnClose:
    """A reply's body stream that gives its connection back to the pool when closed."""

    def __init__(
        self,
        stream: typing.AsyncIterable[bytes],
        connection: httpcore.AsyncConnectionInterface,
        pool: _StackPool,
    ) -> None:
        self._stream = stream
        self._connection = connection
        self._pool = pool
        self._closed = False

    async def __aiter__(self) -> typing.AsyncIterator[bytes]:
        try:
            async for part in self._stream:
                yield part
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            with trio.CancelScope(shield=True):
                closer = getattr(self._stream, "aclose", None)
                if closer is not None:
                    await closer()
                await self._pool._give(self._connection)


async def _close(connection: httpcore.AsyncConnectionInterface) -> None:
    with trio.CancelScope(shield=True):
        await connection.aclose()


class _Transport(httpx.AsyncHTTPTransport):
    """httpx's transport (its error mapping and all) over the stack pool."""

    def __init__(self, ssl_context: ssl.SSLContext) -> None:
        super().__init__(verify=ssl_context, trust_env=False)
        self._pool = _StackPool(ssl_context)  # httpx 0.28 sends every request through _pool


class WebhookClient:
    """Calls one webhook over a pooled httpx client; use as an async context manager."""

    def __init__(self, settings: Settings) -> None:
        self._url = settings.webhook_url
        self._timeout = settings.webhook_timeout
        self._client = httpx.AsyncClient(
            transport=_Transport(ssl.create_default_context(cafile=settings.ca_bundle)),
            follow_redirects=False,
            timeout=httpx.Timeout(settings.webhook_timeout),
            trust_env=False,
        )

    async def __aenter__(self) -> WebhookClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._client.aclose()

    async def call(self, request: WebhookRequest, caller: Caller) -> WebhookReply:
        """POST the request; every way it can go wrong comes back as a WebhookReply."""
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            # n8n compresses only when asked; a reply it compresses anyway is decoded below.
            "Accept-Encoding": "identity",
            "User-Agent": f"n8n-a2a/{__version__}",
            **dict(caller.trace_headers),
        }
        token = caller.subject_token
        if token is not None:
            headers["X-Subject-Token"] = token
        # Every reply carries the token, so that its verdict can keep it out of the task.
        with trio.move_on_after(self._timeout):
            try:
                return await self._post(request.body(), headers, token)
            except httpx.TimeoutException:
                pass
            except httpx.ConnectError as error:
                return _connect_failure(error, token)
            except httpx.HTTPError as error:
                return TransportFailure(Outcome.BROKEN_REPLY, _describe(error), token)
        return TransportFailure(
            Outcome.TIMEOUT, f"no reply within {self._timeout:g} s (ADAPTER_WEBHOOK_TIMEOUT)", token
        )

    async def _post(
        self, body: bytes, headers: dict[str, str], subject_token: str | None
    ) -> WebhookReply:
        async with self._client.stream("POST", self._url, content=body, headers=headers) as reply:
            encoding = reply.headers.get("content-encoding", "").strip().lower()
            if encoding == "identity":
                encoding = ""
            inflater = _Inflater(encoding) if encoding in _INFLATED else None
            received = bytearray()
            sent = 0
            truncated = False
            try:
                async for chunk in reply.aiter_raw():
                    sent += len(chunk)
                    if inflater is not None:
                        # Never more than one byte past the limit, however well it packs.
                        chunk = inflater.inflate(chunk, MAX_REPLY_BYTES + 1 - len(received))
                    received += chunk
                    if len(received) > MAX_REPLY_BYTES or sent > _MAX_SENT_BYTES:
                        del received[MAX_REPLY_BYTES:]
                        truncated = True
                        break
                if inflater is not None and not truncated and sent and not inflater.ended:
                    raise zlib.error("the stream ends early")
            except zlib.error as error:
                return TransportFailure(
                    Outcome.BROKEN_REPLY,
                    f"the reply's {encoding} body cannot be decoded: {error}",
                    subject_token,
                )
            return HttpReply(
                status=reply.status_code,
                body=bytes(received),
                content_type=reply.headers.get("content-type", ""),
                location=reply.headers.get("location", ""),
                truncated=truncated,
                content_encoding="" if inflater is not None else encoding,
                subject_token=subject_token,
            )


class _Inflater:
    """Decodes a gzip or deflate body a bounded piece at a time: a chunk that would
    expand to gigabytes gives at most what the reader has room for."""

    def __init__(self, encoding: str) -> None:
        self._deflate = encoding == "deflate"
        self._stream = zlib.decompressobj(zlib.MAX_WBITS if self._deflate else zlib.MAX_WBITS | 16)
        self._first = True

    @property
    def ended(self) -> bool:
        """Whether the stream reached its end (and, for gzip, its checksum matched)."""
        return self._stream.eof

    def inflate(self, data: bytes, room: int) -> bytes:
        try:
            return self._stream.decompress(data, room)
        except zlib.error:
            if not (self._deflate and self._first):
                raise
            # "deflate" without zlib's header, as some servers send it (httpx reads both).
            self._stream = zlib.decompressobj(-zlib.MAX_WBITS)
            return self._stream.decompress(data, room)
        finally:
            self._first = False


def _connect_failure(error: httpx.ConnectError, subject_token: str | None) -> TransportFailure:
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ssl.SSLError):
            return TransportFailure(Outcome.TLS_FAILURE, _describe(cause), subject_token)
        cause = cause.__cause__ or cause.__context__
    return TransportFailure(Outcome.UNREACHABLE, _describe(error), subject_token)


def _describe(error: BaseException) -> str:
    return str(error) or type(error).__name__
