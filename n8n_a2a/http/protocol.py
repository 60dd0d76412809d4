"""The HTTP/1.1 protocol each connection is served by, in place of hypercorn's
H11Protocol: its requests read and its responses framed by framing.py, each request
served to the app by a RequestStream (request_stream.py) in place of HTTPStream.

hypercorn's per-connection server (TCPServer) hands its protocol the bytes it reads
(RawData, then Closed) and sends what the protocol gives back. H11Protocol does the
same on an h11 connection, and pays for h11's generality twice over: h11 validates each
event's headers as it makes it, then H11Protocol walks the request's headers three more
times for the upgrades it would make (HTTP/2, a WebSocket) that the adapter refuses.
This protocol makes none: framing.py refuses the HTTP/2 preface and drops `Upgrade`.
A body that comes whole with its last piece reaches the app as one event, not two.

What it keeps of H11Protocol's, each as H11Protocol does it: `Updated(idle=False)` as a
request begins and `Updated(idle=True)` as the connection waits for the next; a 100
Continue for a request that expects one; a refused request answered with its status,
`Content-Length: 0` and `Connection: close`, then Closed (whatever the app sends for it
after is dropped); a request pipelined behind one being answered read only once that
one's response has gone (PAUSED); after a response the connection kept for the next
request, unless either side said close, the server is shutting down, or
`keep_alive_max_requests` is reached (that response says `Connection: close`).

hypercorn's ProtocolWrapper makes it as its H11Protocol (hypercorn_h11.py stands for
hypercorn's module of that name: unused.py); this module and the seam are the two that
use hypercorn beyond its Config and ASGI types.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from hypercorn.config import Config
from hypercorn.events import Closed, Event, RawData, Updated
from hypercorn.typing import AppWrapper, ConnectionState, TaskGroup, WorkerContext

from .errors import RequestError
from .framing import BodyData, HTTP11Connection, RequestHead, Signal
from .request_stream import RequestStream, scope_of


class HTTP11Protocol:
    """One connection's requests, read with an HTTP11Connection, each served by a
    RequestStream; its constructor takes what H11Protocol's does."""

    def __init__(
        self,
        app: AppWrapper,
        config: Config,
        context: WorkerContext,
        task_group: TaskGroup,
        connection_state: ConnectionState,
        ssl: bool,
        client: tuple[str, int] | None,
        server: tuple[str, int] | None,
        send: Callable[[Event], Awaitable[None]],
    ) -> None:
        self.app = app
        self.config = config
        self.context = context
        self.task_group = task_group
        self.connection_state = connection_state
        self.ssl = ssl
        self.client = client
        self.server = server
        self.send = send
        self.connection = HTTP11Connection(max_head=config.h11_max_incomplete_size)
        self.can_read = context.event_class()
        self.stream: RequestStream | None = None
        self.keep_alive_requests = 0
        #: A request was refused: its answer has gone, and nothing else will.
        self.refused = False

    async def initiate(self) -> None:
        pass

    async def handle(self, event: Event) -> None:
        if isinstance(event, RawData):
            self.connection.receive_data(event.data)
            await self._handle_events()
        elif isinstance(event, Closed):
            self._close_stream()

    async def _handle_events(self) -> None:
        connection = self.connection
        while True:
            if connection.waiting_for_continue:
                await self._write(connection.respond(100, self.config.response_headers("h11")))
            try:
                event = connection.next_event()
            except RequestError as error:
                await self._refuse(error.status)
                return
            if isinstance(event, BodyData):
                if self.stream is None:
                    return
                await self._body(event.data)
            elif isinstance(event, RequestHead):
                await self.send(Updated(idle=False))
                await self._create_stream(event)
            elif event is Signal.BODY_END:
                if self.stream is None:
                    return
                await self.stream.put({"type": "http.request", "body": b"", "more_body": False})
            elif event is Signal.PAUSED:
                await self.can_read.clear()
                await self.can_read.wait()
            else:  # NEED_DATA, or the client closed between requests
                return

    async def _body(self, data: bytes) -> None:
        """A piece of the body, for the app; the last one says so, when it came with it."""
        assert self.stream is not None
        last = self.connection.next_event_is_body_end()
        await self.stream.put({"type": "http.request", "body": data, "more_body": not last})

    async def _create_stream(self, request: RequestHead) -> None:
        scope = scope_of(
            self.config,
            request.method.decode("ascii").upper(),
            request.target,
            request.http_version.decode(),
            request.headers,
            (self.client, self.server),
            self.connection_state,
            ssl=self.ssl,
        )
        self.stream = RequestStream(self, self.app, self.config, scope)
        self.task_group.spawn(self.stream.run)
        self.keep_alive_requests += 1
        await self.context.mark_request()

    # The app's response (request_stream.py's Responder), for the stream being served.

    async def respond(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        if self.refused:
            return  # (H11Protocol's h11 refuses it, and H11Protocol lets that pass)
        headers = [*headers, *self.config.response_headers("h11")]
        if status >= 200 and self.keep_alive_requests >= self.config.keep_alive_max_requests:
            headers.append((b"connection", b"close"))
        await self._write(self.connection.respond(status, headers))

    async def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self.refused:
            await self._write(self.connection.body(data))

    async def end_response(self) -> None:
        if not self.refused:
            await self._write(self.connection.end())
        await self._maybe_recycle()

    async def app_done(self, stream: RequestStream) -> None:
        """The app has returned (or failed): a request left unanswered gets a 500."""
        if stream.closed:  # (answered, or its client gone: no longer the one served)
            return
        if self.connection.answering and not self.refused:
            await self._answer_alone(500)
        await self._maybe_recycle()

    async def _write(self, data: bytes | bytearray | memoryview) -> None:
        await self.send(RawData(data=data))  # type: ignore[arg-type]  # (a view goes too)

    async def _answer_alone(self, status: int) -> None:
        """An empty answer the app did not give (a refusal, a 500), then the close."""
        headers = [(b"content-length", b"0"), (b"connection", b"close")]
        await self._write(
            self.connection.respond(status, [*headers, *self.config.response_headers("h11")])
        )
        await self._write(self.connection.end())

    async def _refuse(self, status: int) -> None:
        if self.connection.answering:
            await self._answer_alone(status)
        self.refused = True
        await self.send(Closed())

    async def _maybe_recycle(self) -> None:
        self._close_stream()
        if not self.context.terminated.is_set() and self.connection.reusable:
            self.connection.start_next_cycle()
            await self.can_read.set()
            await self.send(Updated(idle=True))
        else:
            await self.can_read.set()
            await self.send(Closed())

    def _close_stream(self) -> None:
        if self.stream is not None:
            self.stream.close()
            self.stream = None
