"""The one call to the workflow's production webhook.

One POST per message. The caller's token travels in X-Subject-Token and nowhere
else; redirects are not followed, so it cannot travel to another address; TLS is
always verified (with ADAPTER_CA_BUNDLE when set); one deadline bounds the whole
exchange, and the reply is read up to a limit.
"""

from __future__ import annotations

import json
import ssl
from dataclasses import dataclass
from types import TracebackType

import httpx
import trio

from . import __version__
from .config import Settings
from .outcome import HttpReply, Outcome, TransportFailure, WebhookReply
from .webhook_pool import StackPoolTransport

#: The most of a reply that is read; a longer one is off contract anyway.
MAX_REPLY_BYTES = 1024 * 1024
_REDACTED = b"[redacted]"


@dataclass(frozen=True, slots=True)
class WebhookRequest:
    """What the workflow receives: the message text and the A2A ids to key a conversation on."""

    text: str
    task_id: str
    context_id: str
    message_id: str
    skill_id: str

    def body(self) -> bytes:
        return json.dumps(
            {
                "text": self.text,
                "taskId": self.task_id,
                "contextId": self.context_id,
                "messageId": self.message_id,
                "skillId": self.skill_id,
            },
            ensure_ascii=False,
        ).encode()


@dataclass(frozen=True, slots=True)
class Caller:
    """What of the A2A request travels to the workflow besides the message, as headers:
    the caller's token (as X-Subject-Token) and its W3C trace context."""

    subject_token: str | None = None
    trace_headers: tuple[tuple[str, str], ...] = ()


class WebhookClient:
    """Calls one webhook over a pooled httpx client; use as an async context manager."""

    def __init__(self, settings: Settings) -> None:
        self._url = settings.webhook_url
        self._timeout = settings.webhook_timeout
        self._client = httpx.AsyncClient(
            transport=StackPoolTransport(ssl.create_default_context(cafile=settings.ca_bundle)),
            follow_redirects=False,
            timeout=httpx.Timeout(settings.webhook_timeout),
            trust_env=False,
        )

    async def __aenter__(self) -> WebhookClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._client.aclose()

    async def call(self, request: WebhookRequest, caller: Caller) -> WebhookReply:
        """POST the request; every way it can go wrong comes back as a WebhookReply."""
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"n8n-a2a/{__version__}",
            **dict(caller.trace_headers),
        }
        if caller.subject_token is not None:
            headers["X-Subject-Token"] = caller.subject_token
        with trio.move_on_after(self._timeout):
            try:
                return await self._post(request.body(), headers, caller.subject_token)
            except httpx.TimeoutException:
                pass
            except httpx.ConnectError as error:
                return _connect_failure(error)
            except httpx.HTTPError as error:
                return TransportFailure(Outcome.BROKEN_REPLY, _describe(error))
        return TransportFailure(
            Outcome.TIMEOUT, f"no reply within {self._timeout:g} s (ADAPTER_WEBHOOK_TIMEOUT)"
        )

    async def _post(
        self, body: bytes, headers: dict[str, str], subject_token: str | None
    ) -> HttpReply:
        async with self._client.stream("POST", self._url, content=body, headers=headers) as reply:
            received = bytearray()
            truncated = False
            async for chunk in reply.aiter_bytes():
                received += chunk
                if len(received) > MAX_REPLY_BYTES:
                    del received[MAX_REPLY_BYTES:]
                    truncated = True
                    break
            content = bytes(received)
            if subject_token:
                # A workflow that echoes the token must not put it into a task's history.
                content = content.replace(subject_token.encode(), _REDACTED)
            return HttpReply(
                status=reply.status_code,
                body=content,
                content_type=reply.headers.get("content-type", ""),
                location=reply.headers.get("location", ""),
                truncated=truncated,
            )


def _connect_failure(error: httpx.ConnectError) -> TransportFailure:
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ssl.SSLError):
            return TransportFailure(Outcome.TLS_FAILURE, _describe(cause))
        cause = cause.__cause__ or cause.__context__
    return TransportFailure(Outcome.UNREACHABLE, _describe(error))


def _describe(error: BaseException) -> str:
    return str(error) or type(error).__name__
