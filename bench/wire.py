"""Single requests to 127.0.0.1 over raw HTTP/1.1, and the request bodies every client sends.

The load itself goes through wrk and inflight.py; these are the one-off requests around
it: readiness, the first answer checked, the cross-replica probe.
"""

from __future__ import annotations

import json
import socket
import uuid

JSON_HEADERS = {"Content-Type": "application/json"}
A2A_HEADERS = {**JSON_HEADERS, "A2A-Version": "1.0"}


def webhook_body(text: str) -> bytes:
    document = {"text": text, "taskId": "t", "contextId": "c", "messageId": "m", "skillId": "s"}
    return json.dumps(document).encode()


def rpc_body(method: str, params: dict[str, object]) -> bytes:
    document = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return json.dumps(document).encode()


#: Where the HTTP+JSON binding takes a blocking send, under the public URL (spec §11).
REST_SEND_PATH = "/message:send"


#: The messageId of every send body made here. n8n-a2a runs a message sent again once
#: (its first task answers the retry: core/sent.py), so a client sending one body many
#: times puts a new id in its place each time: `fresh` here, send.lua for wrk. As long as
#: a uuid's hex, so that a body made new keeps its length (and its Content-Length).
MESSAGE_ID = "bench-" + "0" * 26


def fresh(body: bytes) -> bytes:
    """The send body as a new message: its MESSAGE_ID replaced by a new one."""
    return body.replace(f'"{MESSAGE_ID}"'.encode(), f'"{uuid.uuid4().hex}"'.encode(), 1)


def _send_params(text: str) -> dict[str, object]:
    """A v1.0 send's params, its messageId MESSAGE_ID (`fresh` makes each one new)."""
    return {"message": {"role": "ROLE_USER", "messageId": MESSAGE_ID, "parts": [{"text": text}]}}


def send_message_body(text: str, method: str = "SendMessage", push_url: str = "") -> bytes:
    """A v1.0 blocking SendMessage (or SendStreamingMessage) over JSON-RPC; with `push_url`,
    carrying a push config inline: every update of its task POSTed there."""
    params = _send_params(text)
    if push_url:
        params["configuration"] = {"taskPushNotificationConfig": {"url": push_url}}
    return rpc_body(method, params)


def rest_send_body(text: str) -> bytes:
    """The same blocking send over HTTP+JSON: the params alone, for POST REST_SEND_PATH."""
    return json.dumps(_send_params(text)).encode()


def post_request(path: str, body: bytes, headers: dict[str, str]) -> bytes:
    """A POST to 127.0.0.1, head and body, as sent."""
    head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    head += f"Content-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def _get_request(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()


def http_get_status(port: int, path: str, timeout: float = 0.5) -> int | None:
    """The status of one GET on 127.0.0.1, or None when nothing answers yet."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
            connection.sendall(_get_request(path))
            head = connection.recv(64)
    except OSError:
        return None
    parts = head.split(b" ", 2)
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None


def http_post(
    port: int, path: str, body: bytes, headers: dict[str, str]
) -> tuple[dict[bytes, bytes], bytes]:
    """One POST on 127.0.0.1; the reply's headers (names lower-case) and whole body, by its
    Content-Length or to its last chunk (an SSE stream)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(post_request(path, body, {"Connection": "close", **headers}))
        return _read_reply(connection)


def http_get(port: int, path: str) -> bytes:
    """The body of one GET on 127.0.0.1."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(_get_request(path))
        return _read_reply(connection)[1]


def _read_reply(connection: socket.socket) -> tuple[dict[bytes, bytes], bytes]:
    """A reply's headers (names lower-case) and whole body, by its Content-Length or to its
    last chunk."""
    received = b""
    while b"\r\n\r\n" not in received and (chunk := connection.recv(65536)):
        received += chunk
    reply_head, _, reply = received.partition(b"\r\n\r\n")
    fields = {}
    for line in reply_head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        fields[name.strip().lower()] = value.strip()
    # The stub keeps the connection open whatever the request says: read just the body.
    if fields.get(b"transfer-encoding", b"").lower() == b"chunked":
        while not _chunks_ended(reply) and (chunk := connection.recv(65536)):
            reply += chunk
        return fields, dechunked(reply)
    length = int(fields.get(b"content-length", b"0"))
    while len(reply) < length and (chunk := connection.recv(65536)):
        reply += chunk
    return fields, reply


def _chunks_ended(data: bytes) -> bool:
    return data.startswith(b"0\r\n\r\n") or b"\r\n0\r\n\r\n" in data


def dechunked(data: bytes) -> bytes:
    """The body a chunked transfer carried (no chunk extensions, no trailers: ours send none)."""
    body = b""
    while True:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return body
        body += data[:size]
        data = data[size + 2 :]
