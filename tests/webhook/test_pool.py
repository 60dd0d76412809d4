"""The stack pool over real sockets: reuse, give-back, errors, TLS; the webhook URL as
httpcore takes it."""

from __future__ import annotations

import ast
import inspect
import re
import socket
import ssl
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from types import ModuleType

import httpcore
import httpx
import pytest
import trio
import trustme

import n8n_a2a.webhook.network
import n8n_a2a.webhook.pool
from n8n_a2a.webhook.pool import StackPool, reply_body, reply_header, request_url
from tests.webhook.h11_server import Server, causes


def request(
    url: str, headers: Sequence[tuple[bytes, bytes]] = (), **extensions: object
) -> httpcore.Request:
    target, host = request_url(url)
    return httpcore.Request(
        b"GET", target, headers=[(b"Host", host), *headers], extensions=extensions
    )


async def get(
    pool: StackPool, url: str, headers: Sequence[tuple[bytes, bytes]] = (), **extensions: object
) -> tuple[int, bytes]:
    """The reply's status and its body, read whole."""
    async with pool.exchange(request(url, headers, **extensions)) as reply:
        body = b"".join([piece async for piece in reply_body(reply)])
    return reply.status, body


@pytest.fixture
async def pool() -> AsyncIterator[StackPool]:
    pool = StackPool(ssl.create_default_context)
    yield pool
    await pool.aclose()


async def test_calls_one_after_another_share_one_connection(
    server: Server, pool: StackPool
) -> None:
    for _ in range(5):
        assert await get(pool, server.url("/ok")) == (200, b"/ok")
    assert server.opened == 1


@pytest.mark.parametrize("read_a_part", [False, True])
async def test_a_reply_closed_early_gives_its_connection_back(
    server: Server, pool: StackPool, read_a_part: bool
) -> None:
    async with pool.exchange(request(server.url("/big"))) as reply:
        if read_a_part:
            async for _ in reply_body(reply):
                break
    # Unread, the rest of the body would come before any next reply: it is closed.
    await server.wait_closed(1)
    assert await get(pool, server.url("/ok")) == (200, b"/ok")
    assert server.opened == 2


async def test_a_connection_the_server_closed_is_dropped(server: Server, pool: StackPool) -> None:
    assert (await get(pool, server.url("/bye")))[0] == 200
    await server.wait_closed(1)
    assert await get(pool, server.url("/ok")) == (200, b"/ok")
    assert server.opened == 2


async def test_closing_the_pool_closes_the_idle_connections(server: Server) -> None:
    pool = StackPool(ssl.create_default_context)
    await get(pool, server.url("/ok"))
    assert server.closed == 0
    await pool.aclose()
    await server.wait_closed(1)


async def test_many_concurrent_calls_each_get_a_connection_then_reuse_them(
    server: Server, pool: StackPool
) -> None:
    replies: list[tuple[int, bytes]] = []

    async def call() -> None:
        replies.append(await get(pool, server.url("/wait")))

    for _ in range(2):
        async with trio.open_nursery() as nursery:
            for _ in range(100):
                nursery.start_soon(call)
    assert replies == [(200, b"/wait")] * 200
    assert server.opened == 100  # the second hundred all went over the first's connections


@pytest.mark.parametrize("path", ["/cut", "/hang-up"])
async def test_a_server_that_closes_mid_reply_is_a_protocol_or_read_error(
    server: Server, pool: StackPool, path: str
) -> None:
    with pytest.raises((httpcore.RemoteProtocolError, httpcore.ReadError)):
        await get(pool, server.url(path))
    await server.wait_closed(1)
    assert (await get(pool, server.url("/ok")))[0] == 200


async def test_a_refused_connection_is_a_connect_error(pool: StackPool) -> None:
    with socket.socket() as bound_not_listening:
        bound_not_listening.bind(("127.0.0.1", 0))
        port = bound_not_listening.getsockname()[1]
        with pytest.raises(httpcore.ConnectError):
            await get(pool, f"http://127.0.0.1:{port}/ok")


async def test_a_call_cut_at_its_deadline_closes_its_connection(
    server: Server, pool: StackPool
) -> None:
    with trio.move_on_after(0.2) as deadline:
        await get(pool, server.url("/silent"))
    assert deadline.cancelled_caught
    await server.wait_closed(1)


async def test_a_read_timeout_asked_for_is_kept(server: Server, pool: StackPool) -> None:
    with pytest.raises(httpcore.ReadTimeout):
        await get(pool, server.url("/silent"), timeout={"read": 0.2})
    await server.wait_closed(1)


async def test_a_header_h11_refuses_is_a_local_protocol_error(
    server: Server, pool: StackPool
) -> None:
    with pytest.raises(httpcore.LocalProtocolError):
        await get(pool, server.url("/ok"), [(b"X-Bad", b"a\x00b")])


async def test_tls_with_the_given_context_reuses_its_connection(
    tls_server: Server, authority: trustme.CA
) -> None:
    context = ssl.create_default_context()
    authority.configure_trust(context)
    made: list[ssl.SSLContext] = []

    def tls() -> ssl.SSLContext:
        made.append(context)
        return context

    pool = StackPool(tls)
    for _ in range(3):
        assert await get(pool, tls_server.url("/ok")) == (200, b"/ok")
    await pool.aclose()
    assert tls_server.opened == 1
    assert made == [context]  # made once, by the first connection


async def test_plain_http_never_makes_a_tls_context(server: Server) -> None:
    def tls() -> ssl.SSLContext:
        raise AssertionError("an http:// webhook needs no trust store")

    pool = StackPool(tls)
    assert await get(pool, server.url("/ok")) == (200, b"/ok")
    await pool.aclose()


async def test_an_untrusted_certificate_is_a_connect_error_caused_by_tls(
    tls_server: Server, pool: StackPool
) -> None:
    with pytest.raises(httpcore.ConnectError) as error:
        await get(pool, tls_server.url("/ok"))
    assert any(isinstance(cause, ssl.SSLCertVerificationError) for cause in causes(error.value))


# The webhook URL as httpx sent it: httpx is the reference, no longer on the path.


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:5678/webhook/check",
        "https://N8N.Example:443/webhook/check?gate=1&x=a b",
        "http://n8n.example:80",
        "http://[::1]:5678/webhook/x",
        "https://bücher.example/webhook/prüfen?q=ä",
        'http://n8n.example/a path/{x}/%41%zz?k="v"<>#fragment',
    ],
)
def test_the_webhook_url_goes_as_httpx_sent_it(url: str) -> None:
    target, host = request_url(url)
    reference = httpx.Request("POST", url)
    assert (target.scheme, target.host, target.port, target.target) == (
        reference.url.raw_scheme,
        reference.url.raw_host,
        reference.url.port,
        reference.url.raw_path,
    )
    assert host == reference.headers["Host"].encode()


@pytest.mark.parametrize(
    "headers",
    [
        [(b"Content-Type", b"application/json")],
        [(b"content-type", b"text/plain"), (b"X-Other", b"x"), (b"CONTENT-TYPE", b"text/html")],
        [(b"Content-Type", "text/plain; name=Grüße".encode())],
        [(b"Content-Type", "text/plain; name=Grüße".encode("latin-1"))],
        [(b"X-Other", b"x")],
    ],
)
def test_a_reply_header_reads_as_httpx_read_it(headers: list[tuple[bytes, bytes]]) -> None:
    reply = httpcore.Response(200, headers=headers)
    assert reply_header(reply, b"content-type") == httpx.Headers(headers).get("content-type", "")


# The guard: the pool and its backend must stay on httpx's and httpcore's public API.

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


@pytest.mark.parametrize("module", [n8n_a2a.webhook.pool, n8n_a2a.webhook.network])
def test_the_pool_uses_no_private_name_of_httpx_or_httpcore(module: ModuleType) -> None:
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
