"""What a webhook call came to, in the contract's words: the reply as it came (over HTTP,
streamed, or none) and the verdict on it (contract.py judges one into the other).

Pure data, no rules: the webhook client makes a WebhookReply, the executor carries it
to the contract and a Verdict on to the task.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from ..protocol.model import Part


class Outcome(enum.Enum):
    """What a webhook call came to. Only ANSWERED completes a task."""

    ANSWERED = "ANSWERED"
    INPUT_REQUIRED = "INPUT_REQUIRED"
    AUTH_REQUIRED = "AUTH_REQUIRED"
    RESUME_FAILED = "RESUME_FAILED"
    ESCALATED = "ESCALATED"
    SILENT = "SILENT"
    OFF_CONTRACT = "OFF_CONTRACT"
    NOT_REGISTERED = "NOT_REGISTERED"
    HTTP_ERROR = "HTTP_ERROR"
    REDIRECTED = "REDIRECTED"
    TIMEOUT = "TIMEOUT"
    UNREACHABLE = "UNREACHABLE"
    TLS_FAILURE = "TLS_FAILURE"
    BROKEN_REPLY = "BROKEN_REPLY"
    ADAPTER_ERROR = "ADAPTER_ERROR"
    CANCELED = "CANCELED"
    SHUTDOWN = "SHUTDOWN"
    INPUT_EXPIRED = "INPUT_EXPIRED"
    LOST = "LOST"
    NODE_ERROR = "NODE_ERROR"


@dataclass(frozen=True, slots=True)
class HttpReply:
    """The webhook answered over HTTP. `truncated`: the body went past `read_limit`
    (ADAPTER_MAX_REPLY_BYTES). `content_encoding`: the body is still in this encoding, which
    the adapter does not decode. `subject_token`: the caller's token, kept out of the
    verdict. `request_bytes`, `multipart`: the request's size and way, to read a refusal."""

    status: int
    body: bytes | bytearray  # the buffer read into: a copy would hold a large reply twice
    content_type: str = ""
    location: str = ""
    truncated: bool = False
    read_limit: int = 0
    content_encoding: str = ""
    subject_token: str | None = field(default=None, repr=False)
    request_bytes: int = 0
    multipart: bool = False
    #: The POST went to a waiting execution's resume URL, not to the webhook.
    resumed: bool = False


@dataclass(frozen=True, slots=True)
class TransportFailure:
    """No HTTP answer came back; `detail` says why, for a person."""

    outcome: Outcome
    detail: str
    subject_token: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class StreamedReply:
    """The webhook streamed its reply as n8n's JSON lines (core/chunks.py read them): the text
    of its items, or what went wrong (`problem`: the stream itself; `error`: an error
    chunk's description). `raw`: the line at fault, or the stream's first bytes, as sent,
    to show. `truncated`: the text went past its bound, `read_limit` (in UTF-8 bytes)."""

    status: int
    text: str
    problem: str = ""
    error: str = ""
    raw: str = ""
    truncated: bool = False
    read_limit: int = 0
    subject_token: str | None = field(default=None, repr=False)


WebhookReply = HttpReply | TransportFailure | StreamedReply


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome and the text the task carries: the answer, or why it failed.
    `repaired`: text of the reply that was not valid Unicode is shown as U+FFFD.
    `parts`: an answer's `data` (one data part) and `files` (a file part each), in order."""

    outcome: Outcome
    text: str
    repaired: bool = False
    parts: tuple[Part, ...] = ()
    #: Where the next turn goes instead of the webhook: a waiting n8n execution's resume
    #: URL, its path and query (a question's or a sign-in's `resumeUrl`). A credential:
    #: never shown.
    resume: str | None = field(default=None, repr=False)
