"""A file's round trip: a blocking SendMessage carrying one file of FILE_BYTES, which the stub
webhook answers back as its reply file (a message holding FILE_MARKER), so the file crosses
the server both ways, as base64 in JSON each time. The same on every target: the adapter at
its default bounds (its modes taking and giving the file's type), the SDK server's
executor forwarding the message's files and making an artifact of each answered, and the
stub called directly (the floor). Each round trip is checked whole by the digest of the
file the answer carries; the figures are the median time of one and the server's CPU per
round trip.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import socket
import statistics
import time
from typing import Any

from figures import Sample
from procs import cpu_seconds_of
from stub_webhook import FILE_MARKER
from wire import A2A_HEADERS, JSON_HEADERS, MESSAGE_ID, dechunked, fresh, post_request, rpc_body

FILE_BYTES = 5 * 1024 * 1024
MEDIA_TYPE = "application/octet-stream"
#: No figure rather than a wrong one: what a round trip that did not come back whole gets.
NONE: Sample = {"file_ms": None, "file_cpu_ms": None}


def payload() -> bytes:
    """FILE_BYTES that do not compress, the same every run."""
    return hashlib.shake_256(b"n8n-a2a bench file").digest(FILE_BYTES)


def send_body(content: bytes, text: str = FILE_MARKER.decode()) -> bytes:
    """A v1.0 blocking SendMessage: the text (by default the marker's) and the file."""
    file = {"raw": base64.b64encode(content).decode(), "mediaType": MEDIA_TYPE}
    parts = [{"text": text}, {**file, "filename": "bench.bin"}]
    message = {"role": "ROLE_USER", "messageId": MESSAGE_ID, "parts": parts}
    return rpc_body("SendMessage", {"message": message})


def webhook_body(content: bytes) -> bytes:
    """What the adapter sends the webhook for that message (docs/workflow-contract.md)."""
    encoded = base64.b64encode(content).decode()
    file = {"name": "bench.bin", "mediaType": MEDIA_TYPE, "base64": encoded}
    return json.dumps({"text": FILE_MARKER.decode(), "files": [file]}).encode()


def post(port: int, path: str, body: bytes, headers: dict[str, str]) -> bytes:
    """One POST on its own connection: the reply's body, read by its Content-Length, to its
    last chunk, or to the server's close (the stub keeps the connection open)."""
    received = bytearray()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
        try:
            # A new message each trip: n8n-a2a runs a message sent again once.
            connection.sendall(post_request(path, fresh(body), {"Connection": "close", **headers}))
            while not _complete(received) and (chunk := connection.recv(1 << 20)):
                received += chunk
        except (BrokenPipeError, ConnectionResetError):
            # A server that refuses the body early (a 413) may close before it is sent:
            # what it said, if anything, is the reply.
            pass
    head, _, reply = bytes(received).partition(b"\r\n\r\n")
    return dechunked(reply) if b"transfer-encoding: chunked" in head.lower() else reply


def _complete(received: bytearray) -> bool:
    end = received.find(b"\r\n\r\n")
    if end < 0:
        return False
    head = bytes(received[:end]).lower()
    if b"transfer-encoding: chunked" in head:
        return received.endswith(b"\r\n0\r\n\r\n")
    found = re.search(rb"content-length: *(\d+)", head)
    return found is not None and len(received) - end - 4 >= int(found[1])


def files_in(document: Any) -> list[str]:
    """The digests of the files an answer carries: a task's artifacts, or the contract's
    `files` (the stub's own answer)."""
    if "result" in document:
        parts = [p for a in document["result"]["task"].get("artifacts", []) for p in a["parts"]]
        encoded = [p["raw"] for p in parts if "raw" in p]
    else:
        encoded = [f["base64"] for f in document.get("files", [])]
    return [hashlib.sha256(base64.b64decode(e)).hexdigest() for e in encoded]


def round_trips(port: int, count: int, pid: int | None, *, direct: bool = False) -> Sample:
    """`count` round trips one after another, after one untimed when more are asked than
    one (--smoke asks one): the median ms of one, and the server `pid`'s CPU ms per round
    trip (none for the stub called directly)."""
    content = payload()
    digest = hashlib.sha256(content).hexdigest()
    if direct:
        path, body, headers = "/webhook/bench", webhook_body(content), JSON_HEADERS
    else:
        path, body, headers = "/", send_body(content), A2A_HEADERS
    seconds: list[float] = []
    used = 0.0
    warm_up = 1 if count > 1 else 0
    for trip in range(count + warm_up):
        began, cpu = time.perf_counter(), cpu_seconds_of(pid) if pid else 0.0
        reply = post(port, path, body, headers)
        if trip >= warm_up:
            seconds.append(time.perf_counter() - began)
            used += (cpu_seconds_of(pid) if pid else 0.0) - cpu
        try:
            whole = files_in(json.loads(reply)) == [digest]
        except (ValueError, KeyError, TypeError):
            whole = False
        if not whole:
            return dict(NONE)
    sample: Sample = {"file_ms": statistics.median(seconds) * 1000}
    sample["file_cpu_ms"] = 1000 * used / count if pid else None
    return sample
