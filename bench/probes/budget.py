"""What a large file costs the adapter's memory, and what ADAPTER_MEMORY_BUDGET bounds.

Each figure on a fresh adapter of this checkout (or `--adapter name=path`), started as
bench/run starts it, in front of a stub webhook of this script's own (a thread: it reads
each body, checks every file in it against its digest, and answers either a short text or
a file of the size asked):

- `idle`: RSS after one small send, settled;
- `upload`: the peak RSS (VmHWM) less idle of one blocking send with a --mib file;
- `reply`: the same for one text send answered with a --mib file;
- `burst`: --burst such uploads at once under ADAPTER_MEMORY_BUDGET=--budget MiB: how many
  completed, how many were refused retryably, the peak less idle, over the budget (the k
  of docs/operating.md's formula), and RSS after, less idle; then the same burst with
  each send asking a --mib file back (`reply:N`): none may end otherwise (a failed
  task is work done and lost);
- `promises`: four connections that send a POST's head promising the body bound (two by
  Content-Length, two chunked) and no body byte, under the default budget; then one small
  send, timed: what it came to, and how long it took.

The reply bound is raised for the run (ADAPTER_MAX_REPLY_BYTES where the checkout has
it, else its constant). These are figures, not a test: the exit status says only that
the harness ran. `.venv/bin/python bench/probes/budget.py`
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import _tool  # noqa: F401  (bench/ on sys.path: the tool's modules)
from procs import free_port, rss_kib, settle, stop
from settings import CHECKOUT
from targets import Target, server_command
from wire import A2A_HEADERS, MESSAGE_ID, fresh, http_get_status, post_request

MIB = 1024 * 1024
# Until the reply bound is a setting, the adapter runs with its constant raised.
_LAUNCH = (
    "import n8n_a2a.webhook.client as c\n"
    "if hasattr(c, 'MAX_REPLY_BYTES'):\n"
    "    c.MAX_REPLY_BYTES = {bound}; c._MAX_SENT_BYTES = 2 * {bound}\n"
    "from n8n_a2a.__main__ import main\n"
    "main()\n"
)


class _Stub(BaseHTTPRequestHandler):
    """The webhook: every file checked by digest; `reply:N` answered with an N MiB file."""

    bad = 0

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        for entry in request.get("files", []):
            content = base64.b64decode(entry["base64"])
            if hashlib.sha256(content).hexdigest() != entry["name"]:
                _Stub.bad += 1
        reply: dict[str, object] = {"answer": "got it", "escalate": False}
        verb, _, size = request["text"].partition(":")
        if verb == "reply":
            reply["files"] = [file_entry(int(size) * MIB)]
        body = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def file_entry(size: int) -> dict[str, str]:
    content = bytes(range(256)) * (size // 256)
    return {
        "name": hashlib.sha256(content).hexdigest(),
        "mediaType": "application/octet-stream",
        "base64": base64.b64encode(content).decode(),
    }


def send(text: str, file_size: int = 0) -> bytes:
    parts: list[object] = [{"text": text}]
    if file_size:
        entry = file_entry(file_size)
        parts.append(
            {"raw": entry["base64"], "filename": entry["name"], "mediaType": entry["mediaType"]}
        )
    message = {"role": "ROLE_USER", "messageId": MESSAGE_ID, "parts": parts}
    request = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    return json.dumps(request, separators=(",", ":")).encode()


def answered(port: int, body: bytes) -> str:
    """What one blocking send came to: the task's state, or the error's code."""
    with socket.create_connection(("127.0.0.1", port), timeout=300) as connection:
        sent = post_request("/", fresh(body), {"Connection": "close", **A2A_HEADERS})
        connection.sendall(sent)
        received = b"".join(iter(lambda: connection.recv(1 << 20), b""))
    document = json.loads(received.partition(b"\r\n\r\n")[2])
    if "error" in document:
        return f"error {document['error']['code']}"
    return str(document["result"]["task"]["status"]["state"])


@contextmanager
def serving(checkout: Path, webhook: str, **settings: str) -> Iterator[tuple[int, int]]:
    """A fresh adapter of `checkout` with the ADAPTER_* `settings`: its pid and port."""
    port = free_port()
    command, environment = server_command(Target("adapter", "adapter", checkout), port, webhook)
    bound = str(64 * MIB)
    environment.update(
        ADAPTER_INPUT_MODES="text/plain,application/octet-stream",
        ADAPTER_OUTPUT_MODES="text/plain,application/octet-stream",
        ADAPTER_MAX_BODY_BYTES=bound,
        ADAPTER_MAX_REPLY_BYTES=bound,
        ADAPTER_LOG_LEVEL="WARNING",
        **{f"ADAPTER_{name.upper()}": value for name, value in settings.items()},
    )
    command = [sys.executable, "-c", _LAUNCH.format(bound=bound)]
    process = subprocess.Popen(
        command, env=environment, cwd=checkout, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        while http_get_status(port, "/.well-known/agent-card.json") != 200:
            time.sleep(0.01)
        answered(port, send("warm"))
        settle(process.pid, 5)
        yield process.pid, port
    finally:
        stop(process)


def peak_of_one(checkout: Path, webhook: str, body: bytes) -> tuple[float, float, str]:
    """Idle RSS, and the peak less idle, in MiB, of one blocking send; what it came to."""
    with serving(checkout, webhook, memory_budget=str(1024 * MIB)) as (pid, port):
        idle = rss_kib(pid)
        outcome = answered(port, body)
        return idle / 1024, (rss_kib(pid, "VmHWM") - idle) / 1024, outcome


def burst(checkout: Path, webhook: str, arguments: argparse.Namespace, text: str) -> str:
    body = send(text, arguments.mib * MIB)
    outcomes: list[str] = []
    with serving(checkout, webhook, memory_budget=str(arguments.budget * MIB)) as (pid, port):
        idle = rss_kib(pid)

        def one() -> None:
            outcomes.append(answered(port, body))

        threads = [threading.Thread(target=one) for _ in range(arguments.burst)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        peak = rss_kib(pid, "VmHWM") - idle
        settle(pid, 10)
        after = rss_kib(pid) - idle
    completed = outcomes.count("TASK_STATE_COMPLETED")
    refused = outcomes.count("error -32000")
    return (
        f"{completed} completed, {refused} refused (-32000), {len(outcomes) - completed - refused}"
        f" other; peak {peak / 1024:.0f} MiB over idle = {peak / 1024 / arguments.budget:.2f}"
        f" x the budget; after: {after / 1024:+.0f} MiB"
    )


def promised(checkout: Path, webhook: str) -> str:
    """One small send behind four connections that promise the body bound each."""
    bound = 64 * MIB  # serving's ADAPTER_MAX_BODY_BYTES
    head = b"POST / HTTP/1.1\r\nHost: adapter\r\nContent-Type: application/json\r\n"
    heads = [head + b"Content-Length: %d\r\n\r\n" % bound] * 2
    heads += [head + b"Transfer-Encoding: chunked\r\n\r\n"] * 2
    with serving(checkout, webhook, memory_budget=str(128 * MIB), memory_wait="10") as (_, port):
        promises = [socket.create_connection(("127.0.0.1", port)) for _ in heads]
        try:
            for connection, promise in zip(promises, heads, strict=True):
                connection.sendall(promise)
            time.sleep(0.3)  # each head read
            started = time.monotonic()
            outcome = answered(port, send("small"))
            took = time.monotonic() - started
        finally:
            for connection in promises:
                connection.close()
    return f"a small send behind them: {outcome} in {took * 1000:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--adapter", metavar="PATH", default=str(CHECKOUT))
    parser.add_argument("--mib", type=int, default=20)
    parser.add_argument("--burst", type=int, default=16)
    parser.add_argument("--budget", type=int, default=64)
    arguments = parser.parse_args()
    checkout = Path(arguments.adapter).resolve()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    webhook = f"http://127.0.0.1:{server.server_address[1]}/webhook"
    try:
        print(f"{checkout}: one {arguments.mib} MiB file", flush=True)
        upload = peak_of_one(checkout, webhook, send("upload", arguments.mib * MIB))
        print(f"  idle    {upload[0]:.0f} MiB of RSS", flush=True)
        print(f"  upload  peak {upload[1]:+.0f} MiB over idle ({upload[2]})", flush=True)
        reply = peak_of_one(checkout, webhook, send(f"reply:{arguments.mib}"))
        print(f"  reply   peak {reply[1]:+.0f} MiB over idle ({reply[2]})", flush=True)
        print(f"  burst   {arguments.burst} uploads, budget {arguments.budget} MiB:", flush=True)
        print(f"          {burst(checkout, webhook, arguments, 'burst')}", flush=True)
        print(f"          each asking a {arguments.mib} MiB file back:", flush=True)
        asked = burst(checkout, webhook, arguments, f"reply:{arguments.mib}")
        print(f"          {asked}", flush=True)
        print("  promises four connections of a head and no body byte (128 MiB):", flush=True)
        print(f"          {promised(checkout, webhook)}", flush=True)
        print(f"  files the webhook got damaged: {_Stub.bad}", flush=True)
    finally:
        server.shutdown()


if __name__ == "__main__":
    main()
