"""A stand-in for an n8n production webhook, served for real on 127.0.0.1.

The message text picks the reply, so one adapter in front of it reaches every
outcome: `answer:X`, `escalate:X`, `ask:X` (X as a question: input required), `silent`,
`n8n-error`, `not-registered`, `http-503`, `off-contract-json`, `off-contract-text`,
`reply:B` (the body B as it is, as JSON),
`redirect`, `sleep:S`, `hold` (never answers), `echo-token` (or `echo-token:HOW`, HOW
one of `escaped`, `location`, `content-type`), `huge`, `lone-surrogate`, `echo-parts`
(the request's `data` and `files` back: `data` as `{"received": [...]}`, `files` as they
came; the adapter needs input and output modes that allow them), `file:N` (the answer
`N bytes` and one file `big.bin`, application/octet-stream, of `payload(N)`); compressed
whatever the adapter accepts: `gzip:X`, `deflate:X`, `raw-deflate:X` (the answer X),
`gzip-cut` (a gzip stream without its end), `gzip-garbage`, `gzip-bomb`, `brotli`;
streamed as n8n 2.41 writes a Webhook node's `streaming` response mode (one JSON chunk a
line, see n8n_a2a/core/chunks.py): `stream:N` (N items, a keepalive among them),
`stream-held:N` (the first item, then held until `release_streams()` or the adapter
closes the connection, then the rest), `stream-burst:N` (N items of one digit each, as
fast as they can be written), `stream-broken` (an item, then the connection dropped),
`stream-json:J` (one item, the text J),
`stream-error` (an item, then a node's error chunk), `stream-unended` (a begin without
its end), `stream-garbage` (a line that is not JSON), `stream-unknown` (a chunk type n8n
does not write), `stream-huge` (items past 1 MiB of text);
payloads of real size (tests/support/payloads.py): `payload:answer:N`, `payload:file:N`,
`payload:upload`, and `payload-held:...`, the same reply held halfway through its body
until `release_payload()` lets it go on (one release a held reply, in order);
anything else is echoed as the answer.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from tests.support import payloads
from tests.support.asgi import handled_lifespan, lower_headers, read_body, serve_on_loopback

Scope = dict[str, Any]


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    client_port: int = 0  # which connection of the adapter's it came on
    target: str = ""  # the request target: path and query

    @property
    def json(self) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(self.body)
        return result


@dataclass
class StubWebhook:
    base_url: str = ""
    received: list[Received] = field(default_factory=list)
    held: int = 0
    released: int = 0
    #: Streams that have written all they were asked to.
    streamed: int = 0
    #: Payload replies held halfway (counted in `held` too), and let go on so far.
    payloads_held: int = 0
    payloads_released: int = 0
    #: Resumes asked of each waiting execution (its id in n8n's waiting path).
    resumes: dict[str, int] = field(default_factory=dict)
    #: No call is answered until this many have come (0: each at once).
    replies_after: int = 0
    _streams_go: trio.Event = field(default_factory=trio.Event)
    _changed: trio.Event = field(default_factory=trio.Event)

    @property
    def url(self) -> str:
        return f"{self.base_url}/webhook/supply"

    def _note(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def _wait_until(self, reached: Callable[[], bool]) -> None:
        while not reached():
            await self._changed.wait()

    async def wait_received(self, count: int = 1) -> None:
        await self._wait_until(lambda: len(self.received) >= count)

    async def wait_held(self, count: int = 1) -> None:
        """Until `count` calls are being held open."""
        await self._wait_until(lambda: self.held >= count)

    def release_streams(self) -> None:
        """Let every `stream-held` reply, now and later, write its rest."""
        self._streams_go.set()

    def release_payload(self) -> None:
        """Let the next held payload reply (`payload-held:...`) write the rest of its body."""
        self.payloads_released += 1
        self._note()

    async def wait_released(self, count: int = 1) -> None:
        """Until the adapter has closed `count` held connections."""
        await self._wait_until(lambda: self.released >= count)

    def _resumed(self, path: str, query: str) -> tuple[int, str, bytes, list[tuple[bytes, bytes]]]:
        """A POST to n8n's waiting path, refused as n8n 2.41 refuses one (200: resumed, the
        message then answered as a webhook call is): a signature not the one the question gave
        is 401, the execution `gone` is 409 (finished), `unknown` 404, `busy` 409 (running
        still) twice, then resumed, `stuck` always running."""
        json_type = "application/json; charset=utf-8"
        execution = path.removeprefix("/webhook-waiting/")
        if query != f"signature=5ecret-{execution}":
            return 401, json_type, b'{"code":401,"message":"Invalid token"}', []
        if execution == "gone":
            body = b'{"code":409,"message":"The execution \\"gone\\" has finished already."}'
            return 409, json_type, body, []
        self.resumes[execution] = self.resumes.get(execution, 0) + 1
        if execution == "stuck" or (execution == "busy" and self.resumes[execution] <= 2):
            running = f'{{"code":409,"message":"The execution {execution} is running already."}}'
            return 409, json_type, running.encode(), []
        if execution == "unknown":
            return 404, json_type, b'{"code":404,"message":"The execution was not found"}', []
        return 200, json_type, b"", []

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if await handled_lifespan(scope, receive, send):
            return
        body = await read_body(receive)
        headers = lower_headers(scope)
        query = scope.get("query_string", b"").decode()
        target = scope["path"] + (f"?{query}" if query else "")
        self.received.append(Received(headers, body, scope["client"][1], target))
        self._note()
        await self._wait_until(lambda: len(self.received) >= self.replies_after)
        try:
            request = json.loads(body)
            text = request.get("text", "")
        except ValueError:
            request, text = {}, ""
        if text == "hold":
            await self._hold(receive)
            return
        if text.startswith("stream"):
            await self._stream(text, receive, send)
            return
        if text.startswith("payload-held:"):
            await self._held_payload(payloads.reply(text, request), send)
            return
        if scope["path"].startswith("/webhook-waiting/"):
            status, content_type, reply, extra = self._resumed(scope["path"], query)
            if status == 200:
                status, content_type, reply, extra = await self._reply(text, headers, request)
        else:
            status, content_type, reply, extra = await self._reply(text, headers, request)
        response_headers = [(b"content-type", content_type.encode()), *extra]
        await send({"type": "http.response.start", "status": status, "headers": response_headers})
        await send({"type": "http.response.body", "body": reply})

    async def _hold(self, receive: Any) -> None:
        """Never answer; count the moment the adapter closes the connection."""
        self.held += 1
        self._note()
        try:
            while (await receive())["type"] != "http.disconnect":
                pass
        finally:
            self.released += 1
            self._note()

    async def _stream(self, text: str, receive: Any, send: Any) -> None:
        """Write the chunks a streamed reply is made of, each as n8n flushes it."""
        start = [(b"content-type", b"application/json; charset=utf-8")]
        await send({"type": "http.response.start", "status": 200, "headers": start})
        lines = _streamed_lines(text)
        # Held after the first item until released; `stream-late`, also a second before it
        # (time for a subscriber to join before the first chunk).
        held = text.startswith(("stream-held:", "stream-late:"))
        for index, line in enumerate(lines):
            await send({"type": "http.response.body", "body": line, "more_body": True})
            if index == 0 and text.startswith("stream-late:"):
                await trio.sleep(1.0)
            if held and index == 1 and not await self._held_until_released(receive):
                return
        if text == "stream-broken":
            raise _Broken  # hypercorn drops the connection mid-body
        await send({"type": "http.response.body", "body": b""})
        self.streamed += 1
        self._note()

    async def _held_payload(self, reply: bytes, send: Any) -> None:
        """Write half the reply's body, then the rest once released: the adapter has
        begun reading the answer when the test goes on."""
        start = [(b"content-type", b"application/json; charset=utf-8")]
        await send({"type": "http.response.start", "status": 200, "headers": start})
        half = len(reply) // 2
        await send({"type": "http.response.body", "body": reply[:half], "more_body": True})
        self.held += 1
        self.payloads_held += 1
        number = self.payloads_held
        self._note()
        await self._wait_until(lambda: self.payloads_released >= number)
        await send({"type": "http.response.body", "body": reply[half:]})

    async def _held_until_released(self, receive: Any) -> bool:
        """Wait for `release_streams()`; False if the adapter closed the connection first."""
        self.held += 1
        self._note()
        gone = False
        async with trio.open_nursery() as nursery:

            async def released() -> None:
                await self._streams_go.wait()
                nursery.cancel_scope.cancel()

            async def disconnected() -> None:
                nonlocal gone
                while (await receive())["type"] != "http.disconnect":
                    pass
                gone = True
                self.released += 1
                self._note()
                nursery.cancel_scope.cancel()

            nursery.start_soon(released)
            nursery.start_soon(disconnected)
        return not gone

    async def _reply(
        self, text: str, headers: dict[str, str], request: dict[str, Any]
    ) -> tuple[int, str, bytes, list[tuple[bytes, bytes]]]:
        json_type = "application/json; charset=utf-8"
        if text == "echo-parts":
            return 200, json_type, _echo_parts(request), []
        verb, _, argument = text.partition(":")
        if verb == "answer":
            return 200, json_type, _contract(argument, escalate=False), []
        if verb == "payload":
            return 200, json_type, payloads.reply(text, request), []
        if verb == "file":
            return 200, json_type, _file_reply(int(argument)), []
        if verb == "escalate":
            return 200, json_type, _contract(argument, escalate=True), []
        if verb == "ask":
            question = {"answer": argument, "escalate": False, "inputRequired": True}
            return 200, json_type, json.dumps(question).encode(), []
        if verb == "ask-resume":
            # A question from an execution that waits at n8n's resume URL, named with n8n's
            # default host (not the stub's): `gone` for one no longer waiting (then 409).
            where = f"http://localhost:5678/webhook-waiting/{argument}?signature=5ecret-{argument}"
            question = {"answer": "Which item?", "escalate": False, "inputRequired": True}
            return 200, json_type, json.dumps({**question, "resumeUrl": where}).encode(), []
        if verb == "signin":
            asked = {"answer": argument, "escalate": False, "authRequired": True}
            return 200, json_type, json.dumps(asked).encode(), []
        if verb == "sleep":
            await trio.sleep(float(argument))
            return 200, json_type, _contract("slept", escalate=False), []
        if text == "silent":
            return 200, json_type, b"", []
        if text == "n8n-error":
            return 500, json_type, b'{"message":"Error in workflow"}', []
        if text == "not-registered":
            body = {
                "code": 404,
                "message": 'The requested webhook "POST supply" is not registered.',
                "hint": "The workflow must be active for a production URL to run successfully.",
            }
            return 404, json_type, json.dumps(body).encode(), []
        if text == "http-503":
            return 503, "text/plain", b"upstream overloaded", []
        if text == "off-contract-json":
            return 200, json_type, b'{"result":42}', []
        if verb == "reply":
            return 200, json_type, argument.encode(), []
        if text == "off-contract-text":
            return 200, "text/html; charset=utf-8", b"sure, whatever you say", []
        if text == "redirect":
            return 302, "text/plain", b"", [(b"location", b"http://127.0.0.1:9/elsewhere")]
        if verb == "echo-token":
            return _echo_token(headers.get("x-subject-token", ""), argument)
        if text == "lone-surrogate":
            # What Node writes for a string cut through an emoji.
            return 200, json_type, b'{"answer": "flour \\ud83d", "escalate": false}', []
        if verb in _WBITS:
            packer = zlib.compressobj(wbits=_WBITS[verb])
            packed = packer.compress(_contract(argument, escalate=False)) + packer.flush()
            encoding = verb.removeprefix("raw-").encode()
            return 200, json_type, packed, [(b"content-encoding", encoding)]
        if text == "gzip-cut":
            packer = zlib.compressobj(wbits=31)
            packed = packer.compress(_contract("cut", escalate=False)) + packer.flush()
            return 200, json_type, packed[:-8], [(b"content-encoding", b"gzip")]
        if text == "gzip-garbage":
            return 200, json_type, b"not gzip at all", [(b"content-encoding", b"gzip")]
        if text == "gzip-bomb":
            return 200, json_type, gzip_bomb(), [(b"content-encoding", b"gzip")]
        if text == "brotli":
            return 200, json_type, b"\x1b\x00\x00", [(b"content-encoding", b"br")]
        if text == "huge":
            return 200, json_type, b'{"answer":"' + b"x" * (2 * 1024 * 1024) + b'"}', []
        return 200, json_type, _contract(text, escalate=False), []


def _chunk(kind: str, content: str | None = None, *, item: int = 0) -> bytes:
    """One line as n8n's sendChunk writes it (an error chunk has no timestamp)."""
    metadata: dict[str, Any] = {
        "nodeId": "4f1c",
        "nodeName": "AI Agent",
        "itemIndex": item,
        "runIndex": 0,
    }
    if kind != "error":
        metadata["timestamp"] = 1764590000000
    chunk: dict[str, Any] = {"type": kind}
    if content is not None:
        chunk["content"] = content
    chunk["metadata"] = metadata
    return json.dumps(chunk, separators=(",", ":")).encode() + b"\n"


_KEEPALIVE = b'{"type":"keepalive"}\n'


class _Broken(Exception):
    """Raised mid-reply: the connection is dropped without the chunked body's end."""


def _streamed_lines(text: str) -> list[bytes]:
    """The lines of a streamed reply, begin first."""
    verb, _, argument = text.partition(":")
    begin, end = _chunk("begin"), _chunk("end")
    if verb in ("stream", "stream-held", "stream-late"):
        items = [_chunk("item", f"chunk {i} ") for i in range(1, int(argument) + 1)]
        return [begin, *items[:1], _KEEPALIVE, *items[1:], end]
    if verb == "stream-json":
        return [begin, _chunk("item", argument), end]
    if verb == "stream-error":
        return [begin, _chunk("item", "partial "), _chunk("error", "The service is down")]
    if verb == "stream-unended":
        return [begin, _chunk("item", "partial ")]
    if verb == "stream-garbage":
        return [begin, b"<html>502 Bad Gateway</html>\n", end]
    if verb == "stream-unknown":
        return [begin, _chunk("surprise", "?"), end]
    if verb == "stream-broken":
        return [begin, _chunk("item", "partial ")]
    if verb == "stream-burst":
        return [begin, *(_chunk("item", str(i % 10)) for i in range(int(argument))), end]
    if verb == "stream-huge":
        piece = "x" * (64 * 1024)
        return [begin, *(_chunk("item", piece) for _ in range(17)), end]
    raise ValueError(f"no streamed reply {text!r}")


# Content-Encoding verbs and their zlib framing: gzip, zlib's, none.
_WBITS = {"gzip": 31, "deflate": 15, "raw-deflate": -15}


def _contract(answer: str, *, escalate: bool) -> bytes:
    return json.dumps({"answer": answer, "escalate": escalate}).encode()


def payload(size: int) -> bytes:
    """`size` bytes that do not compress, the same each time: a reply file's, an upload's."""
    return hashlib.shake_256(b"n8n-a2a stub payload").digest(size)


def _file_reply(size: int) -> bytes:
    content = base64.b64encode(payload(size)).decode()
    file = {"name": "big.bin", "mediaType": "application/octet-stream", "base64": content}
    reply = {"answer": f"{size} bytes", "escalate": False, "files": [file]}
    return json.dumps(reply).encode()


def _echo_parts(request: dict[str, Any]) -> bytes:
    """The request's data and files back: one data artifact and a file artifact each."""
    data = request.get("data", [])
    files = request.get("files", [])
    answer = f"{len(data)} data, {len(files)} files"
    reply = {"answer": answer, "escalate": False, "data": {"received": data}, "files": files}
    return json.dumps(reply).encode()


def _echo_token(token: str, how: str) -> tuple[int, str, bytes, list[tuple[bytes, bytes]]]:
    """A workflow that puts the caller's token into its reply, disguised as asked."""
    if how == "escaped":
        disguised = "".join(_json_escaped(i, c) for i, c in enumerate(token))
        body = ('{"answer": "your token is ' + disguised + '", "escalate": false}').encode()
        return 200, "application/json", body, []
    if how == "location":
        where = "http://127.0.0.1:9/callback?t=" + "".join(f"%{ord(c):02x}" for c in token)
        return 302, "text/plain", b"", [(b"location", where.encode())]
    if how == "content-type":
        return 200, f"text/plain; token={token}", b"not the contract", []
    return 200, "application/json", _contract(f"your token is {token}", escalate=False), []


def _json_escaped(index: int, char: str) -> str:
    """Every other character as a \\u escape, in upper- and lower-case hex by turns."""
    if char == "/":
        return "\\/"
    if index % 2 == 0:
        return char
    return f"\\u{ord(char):04X}" if index % 4 == 1 else f"\\u{ord(char):04x}"


@functools.cache
def gzip_bomb() -> bytes:
    """About 1 MB of gzip that would decode to 1 GiB of zeros.

    Each block is flushed in full, so one compressed block repeated is a valid stream; its
    trailer is never reached by a reader that stops at its limit.
    """
    packer = zlib.compressobj(9, wbits=31)
    header = packer.compress(b"")
    block = packer.compress(bytes(1024 * 1024)) + packer.flush(zlib.Z_FULL_FLUSH)
    return header + block * 1024 + packer.flush()


async def start_stub_webhook(
    nursery: trio.Nursery,
    *,
    certfile: str | None = None,
    keyfile: str | None = None,
    keep_alive_seconds: float = 5.0,
) -> StubWebhook:
    """Serve a new stub on a free port of 127.0.0.1, over TLS when given a certificate."""
    stub = StubWebhook()
    stub.base_url = await serve_on_loopback(
        nursery, stub, certfile=certfile, keyfile=keyfile, keep_alive_seconds=keep_alive_seconds
    )
    return stub
