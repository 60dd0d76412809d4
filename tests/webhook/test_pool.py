"""The stack pool and its transport over real sockets: reuse, give-back, errors, TLS."""

from __future__ import annotations

import ast
import inspect
import re
import socket
import ssl
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import h11
import httpcore
import httpx
import pytest
import trio
import trustme

import n8n_a2a.webhook.pool
from n8n_a2a.webhook.pool import StackPoolTransport

#: A body far bigger than the socket buffers, so it cannot arrive before it is read.
BIG = 8 * 1024 * 1024


@dataclass
class Server:
    """A bare HTTP/1.1 server on 127.0.0.1 that counts its connections; the request's
    path picks the reply: `/ok`, `/wait` (after 0.1 s), `/big` (BIG bytes), `/bye`
    (then closes the connection, as after a keep-alive timeout), `/cut` (closes midway
    through the body), `/hang-up` (closes without a reply), `/silent` (never replies)."""

    ssl_context: ssl.SSLContext | None = None
    port: int = 0
    opened: int = 0
    closed: int = 0
    _changed: trio.Event = field(default_factory=trio.Event)

    def url(self, path: str) -> str:
        scheme = "https" if self.ssl_context else "http"
        return f"{scheme}://127.0.0.1:{self.port}{path}"

    async def wait_closed(self, count: int) -> None:
        with trio.fail_after(5):
            while self.closed < count:
                await self._changed.wait()

    def _note(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def serve_connection(self, tcp: trio.SocketStream) -> None:
        self.opened += 1
        stream: trio.abc.Stream = tcp
        if self.ssl_context is not None:
            stream = trio.SSLStream(tcp, self.ssl_context, server_side=True)
        connection = h11.Connection(h11.SERVER)
        try:
            while isinstance(request := await _next_event(connection, stream), h11.Request):
                while not isinstance(await _next_event(connection, stream), h11.EndOfMessage):
                    pass
                if not await self._answer(request.target.decode(), connection, stream):
                    return
                connection.start_next_cycle()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the client closed it, or failed the TLS handshake
        finally:
            await stream.aclose()
            self.closed += 1
            self._note()

    async def _answer(self, path: str, connection: h11.Connection, stream: trio.abc.Stream) -> bool:
        """Reply; whether the connection stays open for another request."""
        if path == "/hang-up":
            return False
        if path == "/silent":
            while await stream.receive_some():
                pass
            return False
        if path == "/wait":
            await trio.sleep(0.1)
        body = b"x" * BIG if path == "/big" else path.encode()
        length = 1000 if path == "/cut" else len(body)
        head = h11.Response(status_code=200, headers=[("Content-Length", str(length))])
        if path == "/cut":
            await _send(connection, stream, head, h11.Data(data=b"x" * 10))
            return False
        await _send(connection, stream, head, h11.Data(data=body), h11.EndOfMessage())
        return path != "/bye"


async def _next_event(connection: h11.Connection, stream: trio.abc.Stream) -> object:
    while (event := connection.next_event()) is h11.NEED_DATA:
        connection.receive_data(bytes(await stream.receive_some(65536)))
    return event


async def _send(connection: h11.Connection, stream: trio.abc.Stream, *events: h11.Event) -> None:
    await stream.send_all(b"".join(connection.send(event) or b"" for event in events))


async def start_server(nursery: trio.Nursery, ssl_context: ssl.SSLContext | None = None) -> Server:
    server = Server(ssl_context)
    listeners = await nursery.start(
        partial(trio.serve_tcp, host="127.0.0.1"), server.serve_connection, 0
    )
    server.port = listeners[0].socket.getsockname()[1]
    return server


@pytest.fixture
async def server(nursery: trio.Nursery) -> Server:
    return await start_server(nursery)


def open_client(
    ssl_context: ssl.SSLContext | None = None, timeout: float = 5.0
) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=StackPoolTransport(ssl_context or ssl.create_default_context()),
        timeout=timeout,
        trust_env=False,
    )


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with open_client() as client:
        yield client


async def test_calls_one_after_another_share_one_connection(
    server: Server, client: httpx.AsyncClient
) -> None:
    for _ in range(5):
        reply = await client.get(server.url("/ok"))
        assert (reply.status_code, reply.content) == (200, b"/ok")
    assert server.opened == 1


@pytest.mark.parametrize("read_a_part", [False, True])
async def test_a_reply_closed_early_gives_its_connection_back(
    server: Server, client: httpx.AsyncClient, read_a_part: bool
) -> None:
    async with client.stream("GET", server.url("/big")) as reply:
        if read_a_part:
            async for _ in reply.aiter_raw():
                break
    # Unread, the rest of the body would come before any next reply: it is closed.
    await server.wait_closed(1)
    reply = await client.get(server.url("/ok"))
    assert (reply.status_code, reply.content) == (200, b"/ok")
    assert server.opened == 2


async def test_a_connection_the_server_closed_is_dropped(
    server: Server, client: httpx.AsyncClient
) -> None:
    assert (await client.get(server.url("/bye"))).status_code == 200
    await server.wait_closed(1)
    reply = await client.get(server.url("/ok"))
    assert (reply.status_code, reply.content) == (200, b"/ok")
    assert server.opened == 2


async def test_closing_the_client_closes_the_idle_connections(server: Server) -> None:
    async with open_client() as client:
        await client.get(server.url("/ok"))
        assert server.closed == 0
    await server.wait_closed(1)


async def test_many_concurrent_calls_each_get_a_connection_then_reuse_them(
    server: Server, client: httpx.AsyncClient
) -> None:
    replies: list[httpx.Response] = []

    async def get() -> None:
        replies.append(await client.get(server.url("/wait")))

    for _ in range(2):
        async with trio.open_nursery() as nursery:
            for _ in range(100):
                nursery.start_soon(get)
    assert [(r.status_code, r.content) for r in replies] == [(200, b"/wait")] * 200
    assert server.opened == 100  # the second hundred all went over the first's connections


@pytest.mark.parametrize("path", ["/cut", "/hang-up"])
async def test_a_server_that_closes_mid_reply_is_a_protocol_error(
    server: Server, client: httpx.AsyncClient, path: str
) -> None:
    with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)) as error:
        await client.get(server.url(path))
    assert isinstance(error.value.__cause__, httpcore.RemoteProtocolError | httpcore.ReadError)
    assert (await client.get(server.url("/ok"))).status_code == 200


async def test_a_refused_connection_is_a_connect_error(client: httpx.AsyncClient) -> None:
    with socket.socket() as bound_not_listening:
        bound_not_listening.bind(("127.0.0.1", 0))
        port = bound_not_listening.getsockname()[1]
        with pytest.raises(httpx.ConnectError):
            await client.get(f"http://127.0.0.1:{port}/ok")


async def test_no_reply_in_time_is_a_timeout(server: Server) -> None:
    async with open_client(timeout=0.2) as client:
        with pytest.raises(httpx.ReadTimeout):
            await client.get(server.url("/silent"))
    await server.wait_closed(1)


async def test_a_header_h11_refuses_is_a_local_protocol_error(
    server: Server, client: httpx.AsyncClient
) -> None:
    with pytest.raises(httpx.LocalProtocolError):
        await client.get(server.url("/ok"), headers={"X-Bad": "a\x00b"})


async def test_an_unsupported_scheme_is_refused(client: httpx.AsyncClient) -> None:
    with pytest.raises(httpx.UnsupportedProtocol, match="ftp://"):
        await client.get("ftp://127.0.0.1/ok")


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
async def tls_server(nursery: trio.Nursery, authority: trustme.CA) -> Server:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(context)
    return await start_server(nursery, context)


async def test_tls_with_the_given_context_reuses_its_connection(
    tls_server: Server, authority: trustme.CA
) -> None:
    context = ssl.create_default_context()
    authority.configure_trust(context)
    async with open_client(context) as client:
        for _ in range(3):
            reply = await client.get(tls_server.url("/ok"))
            assert (reply.status_code, reply.content) == (200, b"/ok")
    assert tls_server.opened == 1


async def test_an_untrusted_certificate_is_a_connect_error_caused_by_tls(
    tls_server: Server, client: httpx.AsyncClient
) -> None:
    with pytest.raises(httpx.ConnectError) as error:
        await client.get(tls_server.url("/ok"))
    assert any(isinstance(cause, ssl.SSLCertVerificationError) for cause in causes(error.value))


def causes(error: BaseException | None) -> Iterator[BaseException]:
    """The error and what caused it, as the webhook client walks them to tell TLS apart."""
    while error is not None:
        yield error
        error = error.__cause__ or error.__context__


# The guard: the pool must stay on httpx's and httpcore's public API.

LIBRARIES = {"httpx", "httpcore"}


def private_uses(source: str, namespace: dict[str, object]) -> list[str]:
    """Each place where the source reaches into httpx or httpcore by a private name:
    an import of a private module or name; a private attribute of anything but `self`;
    or, in a class built on theirs, a private attribute of `self` that their classes
    (named as in `namespace`) have too."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [
                f"line {node.lineno}: import {alias.name}"
                for alias in node.names
                if _theirs(alias.name) and _private_in(alias.name)
            ]
        elif isinstance(node, ast.ImportFrom) and _theirs(node.module or ""):
            found += [
                f"line {node.lineno}: from {node.module} import {alias.name}"
                for alias in node.names
                if _private_in(f"{node.module}.{alias.name}")
            ]
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            if not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                found.append(f"line {node.lineno}: .{node.attr}")
        elif isinstance(node, ast.ClassDef):
            theirs = _their_private_names(node, namespace)
            found += [
                f"line {n.lineno}: self.{n.attr} in {node.name}, a name of its base's"
                for n in ast.walk(node)
                if isinstance(n, ast.Attribute)
                and isinstance(n.value, ast.Name)
                and n.value.id == "self"
                and n.attr in theirs
            ]
    return found


def _theirs(dotted: str) -> bool:
    return dotted.split(".")[0] in LIBRARIES


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_in(dotted: str) -> bool:
    return any(_private(part) for part in dotted.split("."))


def _their_private_names(node: ast.ClassDef, namespace: dict[str, object]) -> set[str]:
    """The private names the class's httpx or httpcore bases define or set on self."""
    names: set[str] = set()
    for base in node.bases:
        base_class = _resolve(base, namespace)
        assert isinstance(base_class, type)
        for klass in inspect.getmro(base_class):
            if not _theirs(klass.__module__):
                continue
            for name, member in vars(klass).items():
                if _private(name):
                    names.add(name)
                method = member.fget if isinstance(member, property) else member
                if inspect.isfunction(method):
                    names |= set(re.findall(r"self\.(_\w+)", inspect.getsource(method)))
    return names


def _resolve(expression: ast.expr, namespace: dict[str, object]) -> object:
    """What a base class expression (`Name` or `module.Name`) names in the namespace."""
    if isinstance(expression, ast.Name):
        return namespace[expression.id]
    assert isinstance(expression, ast.Attribute), ast.dump(expression)
    return getattr(_resolve(expression.value, namespace), expression.attr)


def test_the_pool_uses_no_private_name_of_httpx_or_httpcore() -> None:
    module = n8n_a2a.webhook.pool
    source = Path(inspect.getfile(module)).read_text()
    assert private_uses(source, vars(module)) == []


def test_the_guard_finds_each_kind_of_private_use() -> None:
    source = (
        "import httpx\n"
        "from httpx._transports.default import map_httpcore_exceptions\n"
        "from httpcore import _models\n"
        "class Transport(httpx.AsyncHTTPTransport):\n"
        "    def __init__(self, pool):\n"
        "        self._pool = pool\n"
        "        self._mine = None\n"
        "    def count(self):\n"
        "        return len(self._pool._connections)\n"
    )
    assert sorted(private_uses(source, {"httpx": httpx})) == [
        "line 2: from httpx._transports.default import map_httpcore_exceptions",
        "line 3: from httpcore import _models",
        "line 6: self._pool in Transport, a name of its base's",
        "line 9: ._connections",
        "line 9: self._pool in Transport, a name of its base's",
    ]
