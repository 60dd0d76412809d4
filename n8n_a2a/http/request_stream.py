"""One request as the app sees it (ASGI's `http` scope), in place of hypercorn's
HTTPStream: the request's events for the app's `receive`, the app's `send` for the
protocol (protocol.py) to write.

HTTPStream hands the app its events through a trio memory channel made for each
request, whose every send and receive passes through trio's scheduler even when it need
not wait; and it copies each piece of a response's body. Here the events wait in a
deque: the app waits only when there is none, the protocol only when MAX_WAITING are
unread (as the channel bounds them: a body is read no faster than the app takes it),
and a response's body goes to the protocol as the app gave it (a view of a file's
base64 stays one).

What it keeps of HTTPStream's, each as HTTPStream does it: the scope (its path
percent-decoded, its state copied per request); the app run in the connection's task
group, an error of its logged ("Error in ASGI Framework") and answered 500 if no
response had begun; a body's pieces as `http.request` events, `more_body` on all but
the last; `http.disconnect` once the request is over (its response sent, or the client
gone), and again at every `receive` after; a response's head on `http.response.start`,
its body on `http.response.body` (none for HEAD, 1xx, 204, 304), its end when
`more_body` is not set.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote

import trio

from .errors import ResponseError
from .framing import NO_BODY_STATUSES

if TYPE_CHECKING:
    from hypercorn.config import Config
    from hypercorn.typing import AppWrapper, ASGIReceiveEvent, ASGISendEvent, HTTPScope

#: The most request events waiting for the app: hypercorn's max_app_queue_size.
MAX_WAITING = 10


class Responder(Protocol):
    """What writes the app's response: the connection's protocol."""

    async def respond(self, status: int, headers: list[tuple[bytes, bytes]]) -> None: ...
    async def write(self, data: bytes | bytearray | memoryview) -> None: ...
    async def end_response(self) -> None: ...
    async def app_done(self, stream: RequestStream) -> None: ...


class _State:
    """Where the response is (plain numbers: an Enum class costs the start more)."""

    REQUEST = 0  # no response begun
    RESPONSE = 1  # its head sent
    CLOSED = 2  # its body ended
    NAMES = ("not begun", "begun", "ended")


def scope_of(
    config: Config,
    method: str,
    raw_path: bytes,
    http_version: str,
    headers: list[tuple[bytes, bytes]],
    addresses: tuple[tuple[str, int] | None, tuple[str, int] | None],
    state: dict[str, Any],
    *,
    ssl: bool = False,
) -> HTTPScope:
    """The request's scope, as HTTPStream makes it for HTTP/1.1."""
    path, _, query_string = raw_path.partition(b"?")
    return {
        "type": "http",
        "http_version": http_version,
        "asgi": {"spec_version": "2.1", "version": "3.0"},
        "method": method,
        "scheme": "https" if ssl else "http",
        "path": unquote(path.decode("ascii")),
        "raw_path": path,
        "query_string": query_string,
        "root_path": config.root_path,
        "headers": headers,
        "client": addresses[0],
        "server": addresses[1],
        "state": state.copy(),  # type: ignore[typeddict-item]
        "extensions": {},
    }


class RequestStream:
    """One request's exchange with the app: `run` it in the connection's task group; the
    protocol `put`s the request's events and `close`s it once the request is over."""

    __slots__ = (
        *("_app", "_config", "_events", "_protocol", "_status", "_waiting"),
        *("closed", "scope", "state"),
    )

    def __init__(self, protocol: Responder, app: AppWrapper, config: Config, scope: HTTPScope):
        self._protocol = protocol
        self._app = app
        self._config = config
        self.scope = scope
        self._events: deque[ASGIReceiveEvent] = deque()
        # The app waiting for an event, or the protocol for room: never both at once.
        self._waiting = trio.lowlevel.ParkingLot()
        self.state = _State.REQUEST
        self._status = 0
        #: The request is over: the app hears `http.disconnect` from now on.
        self.closed = False

    async def run(self) -> None:
        """The app, for this request; what it leaves undone (an error) answered."""
        try:
            await self._app(
                self.scope, self.receive, self.send, trio.to_thread.run_sync, trio.from_thread.run
            )
        except trio.Cancelled:
            raise
        except BaseExceptionGroup as error:
            _, others = error.split(trio.Cancelled)
            if others is None:
                raise
            await self._config.log.exception("Error in ASGI Framework")
        except Exception:
            await self._config.log.exception("Error in ASGI Framework")
        finally:
            await self._protocol.app_done(self)

    async def put(self, event: ASGIReceiveEvent) -> None:
        """A request event for the app, once fewer than MAX_WAITING wait."""
        while len(self._events) >= MAX_WAITING and not self.closed:
            await self._waiting.park()
        if not self.closed:
            self._events.append(event)
            self._waiting.unpark()

    def close(self) -> None:
        """The request is over (its response sent, or the client gone)."""
        if not self.closed:
            self.closed = True
            self._waiting.unpark_all()

    async def receive(self) -> ASGIReceiveEvent:
        while not self._events:
            if self.closed:
                return {"type": "http.disconnect"}  # (an app may keep what it is given)
            await self._waiting.park()
        event = self._events.popleft()
        if self._waiting:  # the protocol, waiting for room
            self._waiting.unpark()
        return event

    async def send(self, message: ASGISendEvent) -> None:
        kind = message["type"]
        if kind == "http.response.start" and self.state == _State.REQUEST:
            headers = _validated(message.get("headers", ()))
            self.state = _State.RESPONSE
            self._status = int(message["status"])  # type: ignore[typeddict-item]
            await self._protocol.respond(self._status, headers)
        elif kind == "http.response.body" and self.state == _State.RESPONSE:
            body = message.get("body", b"")
            if body and not self._suppressed():
                await self._protocol.write(body)  # type: ignore[arg-type]
            if not message.get("more_body", False):
                self.state = _State.CLOSED
                await self._protocol.end_response()
        else:
            raise ResponseError(
                f"{kind} is not expected: the response is {_State.NAMES[self.state]}"
            )

    def _suppressed(self) -> bool:
        status = self._status
        return self.scope["method"] == "HEAD" or status < 200 or status in NO_BODY_STATUSES


def _validated(headers: Any) -> list[tuple[bytes, bytes]]:
    """The response's headers as HTTPStream passes them on: trimmed, no pseudo-header."""
    found = [(bytes(name).strip(), bytes(value).strip()) for name, value in headers]
    if any(name[:1] == b":" for name, _ in found):
        raise ValueError("Pseudo headers are not valid")
    return found
