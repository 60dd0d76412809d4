"""The one call to the workflow's production webhook.

One POST per message. The caller's token travels in X-Subject-Token and nowhere
else; redirects are not followed, so it cannot travel to another address; TLS is
always verified (with ADAPTER_CA_BUNDLE when set); one deadline bounds the whole
exchange, and the reply is read up to a limit that holds after decoding: the adapter
asks for no compression, decodes gzip and deflate itself a bounded piece at a time,
and leaves any other encoding to be judged off contract.
"""

from __future__ import annotations

import ssl
import zlib
from dataclasses import dataclass
from functools import partial
from types import TracebackType
from urllib.parse import urlsplit

import trio

from .. import __version__
from ..auth.caller import Caller
from ..config import Settings
from ..core.replies import HttpReply, Outcome, TransportFailure, WebhookReply
from ..observability import traces
from ..protocol.writing import Pieces
from .errors import ConnectError, NetworkError, ProtocolError
from .form import FormBody
from .http11 import field_lines, request_target
from .pool import StackPool, request_url
from .reading import Relay, ReplyRoom
from .request import WebhookRequest

#: What is POSTed: the JSON body (its files' base64 as Pieces), or the multipart/form-data
#: one (ADAPTER_WEBHOOK_FILES).
Body = bytes | Pieces | FormBody

# The most of a compressed reply read as sent, in ADAPTER_MAX_REPLY_BYTES (the most read
# decoded): a stream that decodes to little or nothing (padding, empty blocks) must not
# keep the call reading until its deadline.
_SENT_PER_READ = 2
_INFLATED = ("gzip", "deflate")


class Outgoing:
    """A request's body until it is sent, and what is said of it after: the pool takes the
    bytes (`take`) and drops them once written, so that no frame of the call holds them
    while the reply is read (the request's bytes are the reply's room by then)."""

    __slots__ = ("_body", "content_type", "multipart", "size")

    def __init__(self, body: Body) -> None:
        self._body: Body | None = body
        self.size = len(body)
        self.multipart = isinstance(body, FormBody)
        self.content_type = body.content_type if isinstance(body, FormBody) else "application/json"

    def take(self) -> Body:
        """The body, once: this holds it no more."""
        body, self._body = self._body, None
        assert body is not None, "a request's body is sent once"
        return body


@dataclass(frozen=True, slots=True)
class _Post:
    """Where one request goes: its request target, the URL its span shows (no query: a
    resume's signature is a credential), the span's name, whether it resumes."""

    target: bytes
    shown: str
    span: str
    resumed: bool = False


class WebhookClient:
    """Calls one webhook over its connection pool; use as an async context manager.

    Its requests go straight to webhook/pool.py: no redirect is followed (a 3xx is the
    reply), no proxy is taken from the environment, and the exchange's one deadline
    bounds connect, TLS, send and read alike."""

    def __init__(self, settings: Settings) -> None:
        self._origin, self._target, host = request_url(settings.webhook_url)
        self._shown_url = traces.without_query(settings.webhook_url)  # a span's url.full
        self._shown_path = urlsplit(self._shown_url).path
        self._timeout = settings.webhook_timeout
        self._streaming = settings.webhook_streaming
        self._multipart = settings.webhook_files == "multipart"
        self._max_reply = settings.max_reply_bytes
        self._pool = StackPool(partial(_tls_context, settings.ca_bundle))
        # The fields every request carries, checked once.
        self._fixed_fields = field_lines(
            [
                (b"Host", host),
                (b"Accept", b"application/json"),
                # n8n compresses only when asked; a reply it compresses anyway is decoded.
                (b"Accept-Encoding", b"identity"),
                (b"User-Agent", f"n8n-a2a/{__version__}".encode()),
            ]
        )

    async def __aenter__(self) -> WebhookClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._pool.aclose()

    async def call(
        self,
        request: WebhookRequest,
        caller: Caller,
        relay: Relay | None = None,
        room: ReplyRoom | None = None,
    ) -> WebhookReply:
        """POST the request; every way it can go wrong comes back as a WebhookReply, but
        a reply `room` cannot hold (its AtCapacity). `relay`: where a streamed reply's
        text goes as it comes.

        A resume that finds its execution still running (n8n's 409 "is running already":
        the caller answered before the execution reached its Wait node) is sent again after
        a pause, a few times; any other answer is the reply."""
        reply = await self._call(request, caller, relay, room)
        for pause in _RESUME_PAUSES if request.resume is not None else ():
            if not _still_running(reply):
                break
            await trio.sleep(pause)
            reply = await self._call(request, caller, relay, room)
        return reply

    async def _call(
        self,
        request: WebhookRequest,
        caller: Caller,
        relay: Relay | None,
        room: ReplyRoom | None,
    ) -> WebhookReply:
        outgoing = Outgoing(request.form() if self._multipart else request.body())
        headers = {
            "Content-Type": outgoing.content_type,
            # Stated, not chunked: n8n refuses a JSON body past its bound from the length alone.
            "Content-Length": str(outgoing.size),
            **dict(caller.trace_headers),
        }
        token = caller.subject_token
        if token is not None:
            headers["X-Subject-Token"] = token
        post = self._post_to(request.resume)
        if traces.active.enabled:
            return await self._traced(post, outgoing, headers, caller, relay, room)
        return await self._exchange(post, outgoing, headers, token, relay, room)

    def _post_to(self, resume: str | None) -> _Post:
        """Where the request goes: the webhook, or, on its origin, the resume target of the
        n8n execution waiting for the turn (its path and query: core/resume.py)."""
        if resume is None:
            return _Post(self._target, self._shown_url, "n8n webhook POST")
        path, _, query = resume.partition("?")
        shown = self._shown_url.removesuffix(self._shown_path) + path  # its path, no query
        return _Post(request_target(path, query or None), shown, "n8n resume POST", True)

    async def _traced(
        self,
        post: _Post,
        outgoing: Outgoing,
        headers: dict[str, str],
        caller: Caller,
        relay: Relay | None,
        room: ReplyRoom | None,
    ) -> WebhookReply:
        """The exchange within its client span, whose context n8n receives: its own trace
        joins the adapter's."""
        span = traces.active.client(post.span, post.shown, caller.trace_headers)
        headers.update(span.headers())
        started = trio.current_time()
        try:
            reply = await self._exchange(post, outgoing, headers, caller.subject_token, relay, room)
        except BaseException:
            span.fail("cut before its reply")  # the task was canceled, or the adapter stops
            raise
        else:
            if isinstance(reply, TransportFailure):
                span.fail(reply.outcome.value)  # the outcome's name, never the detail
            else:
                span.set("http.response.status_code", reply.status)
                if reply.status >= 400:
                    span.fail(f"HTTP {reply.status}")
            return reply
        finally:
            span.set("n8n_a2a.webhook.duration_ms", (trio.current_time() - started) * 1000)
            span.end()

    async def _exchange(
        self,
        post: _Post,
        outgoing: Outgoing,
        headers: dict[str, str],
        token: str | None,
        relay: Relay | None,
        room: ReplyRoom | None,
    ) -> WebhookReply:
        """The one exchange, under the call's deadline."""
        # Every reply carries the token, so that its verdict can keep it out of the task.
        with trio.move_on_after(self._timeout):
            try:
                reply = await self._post(post.target, outgoing, headers, token, relay, room)
                return _sent(reply, outgoing, post.resumed)
            except ConnectError as error:
                return _connect_failure(error, token)
            except (NetworkError, ProtocolError) as error:
                # A read or write cut off, or a reply that is no HTTP/1.1 (webhook/http11.py),
                # or the server gone before or while it replied.
                return TransportFailure(Outcome.BROKEN_REPLY, _describe(error), token)
        return TransportFailure(
            Outcome.TIMEOUT, f"no reply within {self._timeout:g} s (ADAPTER_WEBHOOK_TIMEOUT)", token
        )

    async def _post(
        self,
        target: bytes,
        outgoing: Outgoing,
        headers: dict[str, str],
        subject_token: str | None,
        relay: Relay | None = None,
        room: ReplyRoom | None = None,
    ) -> WebhookReply:
        """One exchange. With ADAPTER_WEBHOOK_STREAMING a 2xx reply is read as n8n's
        streamed lines; anything else (an error, a compressed reply) is read whole."""
        fields = field_lines((name.encode(), value.encode()) for name, value in headers.items())
        head = b"POST %b HTTP/1.1\r\n%b%b\r\n" % (target, self._fixed_fields, fields)
        async with self._pool.exchange(self._origin, head, outgoing.take()) as reply:
            if room is not None:
                room.forwarded()  # the request is out, its head answered
            encoding = reply.header(b"content-encoding").strip().lower()
            if encoding == "identity":
                encoding = ""
            if self._streaming and 200 <= reply.status < 300 and not encoding:
                from .streamed_reply import read_stream

                return await read_stream(reply, subject_token, relay, self._max_reply, room)
            limit = self._max_reply
            inflater = _Inflater(encoding) if encoding in _INFLATED else None
            received = bytearray()
            sent = 0
            truncated = False
            try:
                async for chunk in reply:
                    sent += len(chunk)
                    if inflater is not None:
                        # Never more than one byte past the limit, however well it packs.
                        chunk = inflater.inflate(chunk, limit + 1 - len(received))
                    if room is not None:
                        await room.take(len(chunk))
                    received += chunk
                    if len(received) > limit or sent > _SENT_PER_READ * limit:
                        del received[limit:]
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
                status=reply.status,
                body=received,
                content_type=reply.header(b"content-type"),
                location=reply.header(b"location"),
                truncated=truncated,
                read_limit=limit,
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


#: The pauses before a resume is sent again while its execution still runs: 3.1 s in all.
_RESUME_PAUSES = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)


def _tls_context(ca_bundle: str | None) -> ssl.SSLContext:
    """The webhook's TLS context, made as its first https connection is dialled: ssl's
    OpenSSL is imported then, not at the start (http/unused.py)."""
    return ssl.create_default_context(cafile=ca_bundle)


def _still_running(reply: WebhookReply) -> bool:
    """n8n's answer to a resume of an execution that runs still (waiting-webhooks.js)."""
    return (
        isinstance(reply, HttpReply) and reply.status == 409 and b"is running already" in reply.body
    )


def _sent(reply: WebhookReply, outgoing: Outgoing, resumed: bool) -> WebhookReply:
    """The reply with what was sent, by which its verdict can read a refusal of its size
    (or of a resume)."""
    if not isinstance(reply, HttpReply):
        return reply
    # (dataclasses.replace reads the class's fields anew at each call: a send's worth.)
    return HttpReply(
        status=reply.status,
        body=reply.body,
        content_type=reply.content_type,
        location=reply.location,
        truncated=reply.truncated,
        read_limit=reply.read_limit,
        content_encoding=reply.content_encoding,
        subject_token=reply.subject_token,
        request_bytes=outgoing.size,
        multipart=outgoing.multipart,
        resumed=resumed,
    )


def _connect_failure(error: ConnectError, subject_token: str | None) -> TransportFailure:
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ssl.SSLError):
            return TransportFailure(Outcome.TLS_FAILURE, _describe(cause), subject_token)
        cause = cause.__cause__ or cause.__context__
    return TransportFailure(Outcome.UNREACHABLE, _describe(error), subject_token)


def _describe(error: BaseException) -> str:
    return str(error) or type(error).__name__
