"""A real, OpenID-certified authorization server for the tests: npm's oidc-provider, run on
127.0.0.1 by tests/support/oidc_provider/provider.mjs.

It is installed exactly as tests/support/oidc_provider/package-lock.json pins it (npm ci,
no install scripts) into the tests' cache (tests/support/installs.py), and started as a
node process in the test's nursery, which ends it (SIGTERM) when the test is over.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import httpx
import pytest
import trio

from tests.support import installs
from tests.support.adapter import free_port

PROJECT = Path(__file__).parent / "oidc_provider"
#: Installing is not part of it: a cold start of node with oidc-provider takes about a second.
START_DEADLINE = 30.0


@dataclass(frozen=True)
class CertifiedIssuer:
    """A running oidc-provider: its issuer URL, and the one resource server it serves."""

    issuer: str
    resource: str
    scopes: tuple[str, ...]

    @property
    def discovery_url(self) -> str:
        return self.issuer + "/.well-known/openid-configuration"


def node_major() -> int:
    """Node's major version; the test fails, saying so, without node and npm."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("the certified issuer (oidc-provider) needs node and npm (Node 20+) on PATH")
    major = int(installs.run(["node", "--version"]).strip().lstrip("v").split(".")[0])
    if major < 20:
        pytest.fail(
            f"the certified issuer (oidc-provider 8) needs Node 20 or later; node is {major}"
        )
    return major


def installed() -> Path:
    """A directory with oidc-provider in node_modules (npm ci of the pins) and provider.mjs."""
    return installs.npm_project("oidc-provider", PROJECT, ("provider.mjs",), node_major())


class _Lines:
    """Lines of a process's output, as they come."""

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self.stream = stream
        self.buffer = b""

    async def next(self) -> str | None:
        """The next line, or None at the end of the output."""
        while b"\n" not in self.buffer:
            chunk = await self.stream.receive_some()
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode(errors="replace")


async def _drain(stream: trio.abc.ReceiveStream, into: bytearray) -> None:
    """Keep reading `stream` (so that node never blocks on a full pipe), keeping what it says."""
    async for chunk in stream:
        into += chunk


async def start_certified_issuer(
    nursery: trio.Nursery, *, resource: str, scopes: tuple[str, ...]
) -> CertifiedIssuer:
    """Start oidc-provider on a free loopback port; its access tokens are JWTs for `resource`
    (also when a client names none), with `scopes` as that resource server's scopes."""
    directory = await trio.to_thread.run_sync(installed)
    port = free_port()
    argv = ["node", "provider.mjs", "--port", str(port), "--resource", resource]
    for scope in scopes:
        argv += ["--scope", scope]
    process: trio.Process = await nursery.start(
        partial(
            trio.run_process,
            argv,
            cwd=directory,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            check=False,  # the nursery's end stops it with SIGTERM: not an error
        )
    )
    assert process.stdout is not None and process.stderr is not None
    said = bytearray()
    nursery.start_soon(_drain, process.stderr, said)
    issuer = f"http://127.0.0.1:{port}"
    lines = _Lines(process.stdout)
    with trio.move_on_after(START_DEADLINE) as waiting:
        while (line := await lines.next()) != f"READY {issuer}":
            if line is None:
                await process.wait()
                pytest.fail(f"oidc-provider exited {process.returncode}:\n{said.decode()}")
    if waiting.cancelled_caught:
        process.terminate()
        pytest.fail(f"oidc-provider not ready after {START_DEADLINE} s:\n{said.decode()}")
    nursery.start_soon(_drain, process.stdout, bytearray())
    started = CertifiedIssuer(issuer, resource, scopes)
    async with httpx.AsyncClient() as client:
        discovery = (await client.get(started.discovery_url)).json()
    assert discovery["issuer"] == issuer, discovery
    return started
