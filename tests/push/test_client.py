from __future__ import annotations

import ast
import inspect
import re
import ssl
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
import trio

import n8n_a2a.push.client
import n8n_a2a.push.httpcore_errors
from n8n_a2a.push.client import push_client
from tests.support.asgi import handled_lifespan, read_body, serve_on_loopback


async def test_each_post_has_a_connection_of_its_own_and_no_redirect_is_followed(
    nursery: trio.Nursery,
) -> None:
    peers: list[tuple[str, int]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if await handled_lifespan(scope, receive, send):
            return
        await read_body(receive)
        peers.append(tuple(scope["client"]))
        headers = [(b"location", b"http://elsewhere.example/")]
        await send({"type": "http.response.start", "status": 307, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    base = await serve_on_loopback(nursery, app)
    async with push_client(ssl.create_default_context(), 5.0) as client:
        for _ in range(2):
            response = await client.post(base + "/hook", content=b"{}")
            assert response.status_code == 307  # the receiver's final word
            assert response.request.headers["user-agent"].startswith("n8n-a2a/")
    assert len(peers) == 2 and peers[0] != peers[1]  # a new connection each


# The guard: the push client must stay on httpx's and httpcore's public API.

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


@pytest.mark.parametrize("module", [n8n_a2a.push.client, n8n_a2a.push.httpcore_errors])
def test_the_push_client_uses_no_private_name_of_httpx_or_httpcore(module: ModuleType) -> None:
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
