"""The server's own start and stop: the address it cannot take, and its two log lines."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
import trio
import trustme

from n8n_a2a import __version__
from n8n_a2a.server import CannotListen, serve
from tests.support.adapter import free_port, make_settings, send_in_background, wait_until_serving
from tests.support.card_keys import KID, private_pem
from tests.support.environments import GOOD
from tests.support.jsonrpc import V1, rpc, send_v1
from tests.support.stub_webhook import StubWebhook, start_stub_webhook


def fields(caplog: pytest.LogCaptureFixture, event: str) -> dict[str, Any]:
    [record] = [r for r in caplog.records if getattr(r, "fields", {}).get("event") == event]
    assert record.levelno == logging.INFO
    found: dict[str, Any] = getattr(record, "fields")  # noqa: B009 - set through `extra`
    return found


async def test_an_address_in_use_raises_cannot_listen_naming_it() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(CannotListen) as raised:
            await serve(make_settings(port=port))
    assert str(raised.value) == (
        f"cannot listen on 127.0.0.1:{port} (ADAPTER_HOST, ADAPTER_PORT): address already in use"
    )


async def test_start_and_stop_each_log_one_line(
    stub: StubWebhook, nursery: trio.Nursery, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    port = free_port()
    public_url = f"http://127.0.0.1:{port}/"
    settings = make_settings(stub.url, port=port, public_url=public_url, shutdown_grace=2.0)
    stop = trio.Event()
    stopped = trio.Event()

    async def run(task_status: trio.TaskStatus[list[str]]) -> None:
        await serve(settings, shutdown_trigger=stop.wait, task_status=task_status)
        stopped.set()

    await nursery.start(run)
    assert fields(caplog, "start") == {
        "event": "start",
        "version": __version__,
        "listening": [f"http://127.0.0.1:{port}"],
        "public_url": public_url,
        "a2a_versions": ["1.0", "0.3"],
    }
    finishing = send_in_background(nursery, public_url, "sleep:1")
    cut = send_in_background(nursery, public_url, "hold")
    with trio.fail_after(5):
        await stub.wait_received(2)
        await stub.wait_held()
    stop.set()
    assert (await finishing.answer())["result"]["task"]["metadata"] == {"outcome": "ANSWERED"}
    assert (await cut.answer())["result"]["task"]["metadata"] == {"outcome": "SHUTDOWN"}
    with trio.fail_after(10):
        await stopped.wait()
    assert fields(caplog, "stop") == {
        "event": "stop",
        "reason": "shutdown requested",
        "calls_finished": 1,
        "calls_cut": 1,
        "push_undelivered": 0,
    }


def process_environ(stub: StubWebhook, port: int, **more: str) -> dict[str, str]:
    """The environment of an adapter process on `port` in front of the stub, logging JSON."""
    return {
        **os.environ,
        **GOOD,
        "ADAPTER_WEBHOOK_URL": stub.url,
        "ADAPTER_PUBLIC_URL": f"http://127.0.0.1:{port}/",
        "ADAPTER_HOST": "127.0.0.1",
        "ADAPTER_PORT": str(port),
        "ADAPTER_LOG_FORMAT": "json",
        **more,
    }


async def serve_until_sigint(
    environ: dict[str, str], while_serving: Callable[[str], Awaitable[None]] | None = None
) -> str:
    """Run the adapter process until it serves, then `while_serving(public_url)`, then
    SIGINT; what it wrote on stderr, once it ended on its own with status 0."""
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "n8n_a2a"], env=environ, stderr=subprocess.PIPE
    )
    try:
        await wait_until_serving(environ["ADAPTER_PUBLIC_URL"])
        if while_serving is not None:
            await while_serving(environ["ADAPTER_PUBLIC_URL"])
        process.send_signal(signal.SIGINT)
        with trio.fail_after(10):
            assert await process.wait() == 0
        assert process.stderr is not None
        output = b""
        while chunk := await process.stderr.receive_some():
            output += chunk
    finally:
        process.kill()
        await process.wait()
    return output.decode()


async def test_a_signal_is_the_reason_and_the_lines_are_the_only_ones_at_info(
    stub: StubWebhook,
) -> None:
    port = free_port()
    output = await serve_until_sigint(process_environ(stub, port))
    lines = [json.loads(line) for line in output.splitlines()]
    assert [(line["event"], line["level"]) for line in lines] == [
        ("start", "INFO"),
        ("stop", "INFO"),
    ]
    assert lines[0]["listening"] == [f"http://127.0.0.1:{port}"]
    assert (lines[1]["reason"], lines[1]["calls_finished"], lines[1]["calls_cut"]) == (
        "SIGINT",
        0,
        0,
    )


async def test_a_signed_card_is_logged_by_its_key_name_and_the_key_is_shown_nowhere(
    stub: StubWebhook, tmp_path: Any
) -> None:
    key = tmp_path / "card-key.pem"
    key.write_bytes(private_pem("ES256"))
    environ = process_environ(
        stub,
        free_port(),
        ADAPTER_LOG_LEVEL="DEBUG",
        ADAPTER_CARD_SIGNING_KEY=str(key),
        ADAPTER_CARD_SIGNING_KID=KID,
    )
    served: list[str] = []
    cards: list[Any] = []

    async def look(public_url: str) -> None:
        async with httpx.AsyncClient(base_url=public_url) as client:
            served.extend([(await client.get(path)).text for path in ("readyz", "metrics")])
            cards.append((await client.get(".well-known/agent-card.json")).json())

    output = await serve_until_sigint(environ, look)
    start = json.loads(output.splitlines()[0])
    assert start["card_signature"] == {"alg": "ES256", "kid": KID}
    assert len(cards[0]["signatures"]) == 1
    material = [row for row in key.read_text().splitlines() if not row.startswith("-----")]
    assert not [row for row in material if any(row in text for text in [output, *served])]


async def test_the_command_calls_an_https_webhook_by_name_and_is_scraped(
    nursery: trio.Nursery, tmp_path: Any
) -> None:
    """What the command's start stands in for is there when used: trio's TLS for an https
    webhook, its thread cache for a name's lookup and the first scrape's metrics
    (http/unused.py)."""
    authority = trustme.CA()
    certificate = authority.issue_cert("localhost", "127.0.0.1")
    cert_file, key_file, bundle = (tmp_path / n for n in ("cert.pem", "key.pem", "ca.pem"))
    certificate.private_key_and_cert_chain_pem.write_to_path(str(cert_file))
    certificate.private_key_pem.write_to_path(str(key_file))
    authority.cert_pem.write_to_path(str(bundle))
    tls = await start_stub_webhook(nursery, certfile=str(cert_file), keyfile=str(key_file))
    webhook_url = tls.url.replace("//127.0.0.1:", "//localhost:")
    environ = process_environ(
        tls, free_port(), ADAPTER_WEBHOOK_URL=webhook_url, ADAPTER_CA_BUNDLE=str(bundle)
    )
    answers: list[Any] = []

    async def call(public_url: str) -> None:
        answers.append((await rpc(public_url, send_v1("answer:secure"), V1))["result"]["task"])
        async with httpx.AsyncClient(base_url=public_url) as client:
            answers.append((await client.get("metrics")).status_code)

    await serve_until_sigint(environ, call)
    [task, scraped] = answers
    assert task["status"]["state"] == "TASK_STATE_COMPLETED" and scraped == 200
    assert task["artifacts"][0]["parts"][0]["text"] == "secure"
    assert tls.received and tls.received[0].json


#: A start with the default configuration, in a process of its own: once it has served
#: its card, the names of every module it has imported, one a line (a stand-in is none:
#: http/unused.py).
MODULES_ONCE_SERVING = """
import sys
from functools import partial

import n8n_a2a.__main__  # the command's imports, as it starts
import trio

from n8n_a2a.config import load_settings
from n8n_a2a.http.unused import StandIn
from n8n_a2a.server import serve


async def main() -> None:
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        settings = load_settings()
        await nursery.start(partial(serve, settings, shutdown_trigger=stop.wait))
        stream = await trio.open_tcp_stream(settings.host, settings.port)
        await stream.send_all(b"GET /.well-known/agent-card.json HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n")
        assert (await stream.receive_some()).startswith(b"HTTP/1.1 200 ")
        await stream.aclose()
        imported = (name for name, module in sys.modules.items() if not isinstance(module, StandIn))
        print("\\n".join(sorted(imported)))
        stop.set()


trio.run(main)
"""


def test_a_default_start_imports_nothing_its_configuration_does_not_use() -> None:
    """Without a store URL, an issuer or a signing key, the PostgreSQL driver, PyJWT and
    cryptography (and our modules on them: the card's signing among them) cost the start
    their import and their memory for nothing, as do the streamed reply's reading without
    ADAPTER_WEBHOOK_STREAMING, OpenTelemetry without an endpoint, the push routes' tables
    before a config, the HTTP+JSON binding's before its first request, and
    prometheus_client before the operator's app (and /metrics) is first asked, the email
    package before a card's If-Modified-Since, html's entities before a webhook answers
    with an HTML page, ssl (OpenSSL) before an https URL is dialled or a CA bundle read,
    and hashlib (OpenSSL's digests) before a caller's token: they are imported by the
    configuration (or the first config, or request) that names them.
    hypercorn's HTTP/2 and WebSocket modules (h2's, hpack, hyperframe, priority, wsproto),
    for protocols the adapter refuses, are imported never, nor its readers of configuration
    files (tomllib, logging.config) the adapter never gives it, nor multiprocessing for
    its typing, nor its typing, nor its HTTP/1.1 protocol with h11 and its HTTPStream (the
    adapter's own serves), not even to serve the card; nor trio's DTLS, TLS,
    subprocess, path and file modules, nor its thread cache (ctypes.util), each imported
    as it is first used (http/unused.py)."""
    port = free_port()
    environ = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        **GOOD,
        "ADAPTER_HOST": "127.0.0.1",
        "ADAPTER_PORT": str(port),
        "ADAPTER_PUBLIC_URL": f"http://127.0.0.1:{port}/",
    }
    done = subprocess.run(
        [sys.executable, "-c", MODULES_ONCE_SERVING],
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    modules = set(done.stdout.split())
    assert "n8n_a2a.app" in modules  # the listing is of a process that served
    unused = (
        "psycopg",
        "jwt",
        "cryptography",
        "opentelemetry",
        "httpx",
        "quart",
        "flask",
        "prometheus_client",
        "email",
        "html",  # for a webhook's HTML error page (core/sanitising.py)
        "difflib",  # for an ADAPTER_ name that is no variable's (config/load.py)
        # OpenSSL: its TLS, for an https webhook, push or issuer, or a CA bundle (http/
        # unused.py); its digests, for a caller's token (core/owners.py).
        "ssl",
        "_ssl",
        "hashlib",
        "_hashlib",
        "hmac",
        "secrets",
        # HTTP/2 and WebSocket support, for protocols the adapter refuses (http/unused.py).
        "wsproto",
        "hpack",
        "hyperframe",
        "priority",
        "multiprocessing",  # for hypercorn's typing (http/unused.py)
        "h11",  # hypercorn's HTTP/1.1, served by the adapter's own (http/hypercorn_h11.py)
    )
    # trio's, until their first use (http/unused.py); the thread cache's ctypes.util.
    trios = (
        "trio._dtls",
        "trio._ssl",
        "trio._highlevel_ssl_helpers",
        "trio._subprocess",
        "trio._path",
        "trio._file_io",
        "trio._core._thread_cache",
        "ctypes.util",
    )
    ours = (
        "n8n_a2a.store.postgres",
        "n8n_a2a.auth.verifier",
        "n8n_a2a.webhook.streamed_reply",
        "n8n_a2a.core.chunks",
        "n8n_a2a.observability.otel_traces",
        "n8n_a2a.push.driving",
        "n8n_a2a.push.route",
        "n8n_a2a.push.queue",
        "n8n_a2a.protocol.card_signature",
        "n8n_a2a.protocol.jcs",
        "n8n_a2a.app.rest",
        "n8n_a2a.protocol.rest",
        "n8n_a2a.protocol.addresses",
        "n8n_a2a.observability.exposition",
    )
    # Stood in for (http/unused.py): hypercorn.typing, h2.events (hypercorn.typing imports
    # h2's package, its version alone, for it), tomllib and logging.config; what they
    # would import is not.
    # And hypercorn's HTTP/1.1 protocol's module is the adapter's (http/hypercorn_h11.py):
    # what hypercorn's would import is not.
    stood_in = (
        "hypercorn.typing",
        "h2.",
        "tomllib.",
        "logging.handlers",
        "socketserver",
        "hypercorn.protocol.http_stream",
        "hypercorn.protocol.events",
    )
    found = [
        m
        for m in modules
        if m.split(".")[0] in unused or m in trios or m.startswith(ours + stood_in)
    ]
    assert sorted(found) == []
