"""An OpenAI-compatible model that streams known tokens: what the AI Agent workflow
(n8n/workflows/agent_stream.json) calls instead of a model service.

It answers POST /v1/chat/completions with `stream: true` as OpenAI does, in server-sent
events: a role delta, one delta a token, a stop, a usage chunk and `[DONE]`. A `held` stub
writes the first token and waits until the test releases it, so whatever the caller reads
before then it read before the model had written the rest. It listens on the port of the
credential's URL in n8n/credentials.json, the one place n8n learns where the model is.
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import trio

from tests.support.asgi import handled_lifespan, read_body, serve_on_loopback

CREDENTIALS = Path(__file__).resolve().parents[2] / "n8n" / "credentials.json"
TOKENS = ["In stock: ", "flour 12", ", sugar 3", ", rice 0", ", salt 40", " pallets."]


def credential_port() -> int:
    """The port of the stub credential's URL."""
    [credential] = json.loads(CREDENTIALS.read_text())
    port = urlsplit(str(credential["data"]["url"])).port
    assert port is not None, f"{CREDENTIALS}: the stub credential's URL names no port"
    return port


class PortTaken(RuntimeError):
    """The credential's port is taken on 127.0.0.1, so the stub cannot stand in there."""


@dataclass
class OpenAiStub:
    """Served on 127.0.0.1 by `serve`; `written` counts the tokens sent so far."""

    held: bool = False
    requests: list[dict[str, Any]] = field(default_factory=list)
    written: int = 0
    _released: trio.Event = field(default_factory=trio.Event)

    def release(self) -> None:
        """Let a held stream write its other tokens."""
        self._released.set()

    async def serve(self, nursery: trio.Nursery) -> OpenAiStub:
        port = credential_port()
        # hypercorn would only log a failed bind; say which port and why it must be that one.
        with socket.socket() as probe:
            # As hypercorn binds: a closed connection's TIME_WAIT does not count as taken.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("127.0.0.1", port))
            except OSError as taken:
                raise PortTaken(
                    f"127.0.0.1:{port} is taken ({taken}); the model stub must listen there, "
                    f"the port of the credential's URL in {CREDENTIALS}"
                ) from taken
        await serve_on_loopback(nursery, self._app, port=port)
        return self

    async def _app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if await handled_lifespan(scope, receive, send):
            return
        request: dict[str, Any] = json.loads(await read_body(receive) or b"{}")
        self.requests.append(request)
        route = (scope["method"], scope["path"])
        if route != ("POST", "/v1/chat/completions") or not request.get("stream"):
            # Only the streamed chat completion is stood in for; anything else is a test's bug.
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        chunk = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 0}
        chunk |= {"model": request.get("model", "stub-model")}

        async def event(data: str) -> None:
            body = f"data: {data}\n\n".encode()
            await send({"type": "http.response.body", "body": body, "more_body": True})

        def delta(content: dict[str, str], finish: str | None = None) -> str:
            choice = {"index": 0, "delta": content, "finish_reason": finish}
            return json.dumps({**chunk, "choices": [choice]})

        await event(delta({"role": "assistant", "content": ""}))
        for token in TOKENS:
            await event(delta({"content": token}))
            self.written += 1
            if self.held and self.written == 1:
                await self._released.wait()
        await event(delta({}, "stop"))
        usage = {
            "prompt_tokens": 1,
            "completion_tokens": len(TOKENS),
            "total_tokens": 1 + len(TOKENS),
        }
        await event(json.dumps({**chunk, "choices": [], "usage": usage}))
        await event("[DONE]")
        await send({"type": "http.response.body", "body": b""})
