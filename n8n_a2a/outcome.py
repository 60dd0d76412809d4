"""The workflow contract: what a webhook reply means (turns.py says what it does to a task).

The workflow answers `{"answer": "...", "escalate": false}`. Only that, with a
non-blank answer, completes a task. Where the deployment allows it, a third key
`"inputRequired": true` makes the answer a question: the task waits for the caller's
next message. Everything else fails it with a reason a person understands; a reply
that has drifted from the contract is shown raw, never guessed at. Whatever the
verdict says never quotes the caller's token and is valid Unicode.
Pure: no I/O, no httpx; webhook/client.py turns the HTTP exchange into a WebhookReply.
"""

from __future__ import annotations

import codecs
import enum
import json
from dataclasses import dataclass, field
from typing import Any

from .text import cut, redact, repair

#: How much of an off-contract or error reply is shown in the task, in characters.
RAW_EXCERPT_CHARS = 2000

_CONTRACT = '{"answer": string, "escalate": boolean}'
# The keys of a question, where ADAPTER_ALLOW_INPUT_REQUIRED allows one.
_WITH_QUESTION = frozenset({"answer", "escalate", "inputRequired"})


class Outcome(enum.Enum):
    """What a webhook call came to. Only ANSWERED completes a task."""

    ANSWERED = "ANSWERED"
    INPUT_REQUIRED = "INPUT_REQUIRED"
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


@dataclass(frozen=True, slots=True)
class HttpReply:
    """The webhook answered over HTTP. `truncated`: the body went past the read limit.
    `content_encoding`: the body is still in this encoding, which the adapter does not
    decode. `subject_token`: the caller's token, so that the verdict can keep it out."""

    status: int
    body: bytes
    content_type: str = ""
    location: str = ""
    truncated: bool = False
    content_encoding: str = ""
    subject_token: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class TransportFailure:
    """No HTTP answer came back; `detail` says why, for a person."""

    outcome: Outcome
    detail: str
    subject_token: str | None = field(default=None, repr=False)


WebhookReply = HttpReply | TransportFailure


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome and the text the task carries: the answer, or why it failed.
    `repaired`: text of the reply that was not valid Unicode is shown as U+FFFD."""

    outcome: Outcome
    text: str
    repaired: bool = False


def classify(reply: WebhookReply, *, input_required: bool = False) -> Verdict:
    """The one place a webhook reply is judged; `input_required`: the third key is allowed.

    The verdict is reached on the reply as it came; then its text, whatever it quotes
    (the answer, a raw excerpt, a header, an error), has the caller's token redacted and
    each lone surrogate (JSON's "\\ud83d" from a string cut through an emoji) replaced.
    """
    verdict = _judge(reply, input_required)
    text, repaired = repair(redact(verdict.text, reply.subject_token))
    return Verdict(verdict.outcome, text, verdict.repaired or repaired)


def _judge(reply: WebhookReply, input_required: bool) -> Verdict:
    if isinstance(reply, TransportFailure):
        return Verdict(reply.outcome, _transport_text(reply))
    if 300 <= reply.status < 400:
        return Verdict(
            Outcome.REDIRECTED,
            f"The webhook answered with a redirect (HTTP {reply.status}"
            f"{' to ' + reply.location if reply.location else ''}), which is not followed, so "
            "the caller's token cannot travel to another address. Set ADAPTER_WEBHOOK_URL to "
            "the final address.",
        )
    if reply.status == 404:
        excerpt, repaired = _excerpt(reply)
        return Verdict(
            Outcome.NOT_REGISTERED,
            "The workflow's webhook is not registered (HTTP 404): the workflow is not "
            "active (published) in n8n, or ADAPTER_WEBHOOK_URL names the wrong path. "
            f"n8n said: {excerpt}",
            repaired,
        )
    if reply.status == 500 and _is_n8n_workflow_error(reply.body):
        return Verdict(
            Outcome.SILENT,
            'The workflow failed before answering (HTTP 500 "Error in workflow"): a node '
            "threw an error before the Respond to Webhook node ran.",
        )
    if not 200 <= reply.status < 300:
        excerpt, repaired = _excerpt(reply)
        return Verdict(
            Outcome.HTTP_ERROR,
            f"The workflow's webhook failed with HTTP {reply.status}: {excerpt}",
            repaired,
        )
    if reply.content_encoding:
        return _off_contract(
            reply,
            f"it is compressed (Content-Encoding: {reply.content_encoding}), which the adapter "
            "does not decode: it asks for no compression and reads gzip and deflate",
        )
    if reply.truncated:
        return _off_contract(reply, "the reply is larger than the adapter reads")
    if not reply.body.strip():
        return Verdict(
            Outcome.SILENT,
            f"The workflow returned nothing (HTTP {reply.status} with an empty body): a node "
            "stopped the run before the Respond to Webhook node answered.",
        )
    return _judge_contract(reply, input_required)


def _judge_contract(reply: HttpReply, input_required: bool) -> Verdict:
    try:
        document = json.loads(reply.body, object_pairs_hook=_refuse_duplicate_keys)
    except _DuplicateKey as duplicate:
        return _off_contract(reply, f"the key {duplicate.key!r} appears twice")
    except (ValueError, RecursionError):
        return _off_contract(reply, "the reply is not JSON")
    if not isinstance(document, dict):
        return _off_contract(reply, "the reply is not a JSON object")
    keys = set(document)
    if keys != {"answer", "escalate"} and not (input_required and keys == _WITH_QUESTION):
        return _off_contract(reply, f"its keys are {sorted(document)}")
    answer, escalate = document["answer"], document["escalate"]
    asks = document.get("inputRequired", False)
    if not isinstance(answer, str):
        return _off_contract(reply, "'answer' is not a string")
    if not isinstance(escalate, bool):
        return _off_contract(reply, "'escalate' is not true or false")
    if not isinstance(asks, bool):
        return _off_contract(reply, "'inputRequired' is not true or false")
    if escalate and asks:
        return _off_contract(reply, "'escalate' and 'inputRequired' are both true")
    if escalate:
        return Verdict(
            Outcome.ESCALATED,
            f"Escalated for human approval: {answer.strip() or '(the workflow gave no reason)'}",
        )
    if not answer.strip():
        return Verdict(Outcome.SILENT, "The workflow returned nothing: its answer is empty.")
    if asks:
        return Verdict(Outcome.INPUT_REQUIRED, answer)
    return Verdict(Outcome.ANSWERED, answer)


def _off_contract(reply: HttpReply, why: str) -> Verdict:
    excerpt, repaired = _excerpt(reply)
    return Verdict(
        Outcome.OFF_CONTRACT,
        f"The workflow's reply is off contract ({why}); expected {_CONTRACT}. "
        f"Raw reply (HTTP {reply.status}, {reply.content_type or 'no Content-Type'}): "
        f"{excerpt}",
        repaired,
    )


def _excerpt(reply: HttpReply) -> tuple[str, bool]:
    """The body to quote, cut at RAW_EXCERPT_CHARS, and whether it was not valid UTF-8
    (its bad bytes are then U+FFFD). The token is redacted before the cut, so that a cut
    through it cannot leave a piece of it behind."""
    if reply.content_encoding:
        return f"({len(reply.body)} bytes of {reply.content_encoding}, not shown)", False
    # A body cut at the read limit may end inside a character: that is not bad UTF-8.
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        text, repaired = decoder.decode(reply.body, final=not reply.truncated), False
    except UnicodeDecodeError:
        text, repaired = reply.body.decode("utf-8", errors="replace"), True
    return cut(redact(text, reply.subject_token), RAW_EXCERPT_CHARS), repaired


def _is_n8n_workflow_error(body: bytes) -> bool:
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(document, dict) and document.get("message") == "Error in workflow"


def _transport_text(failure: TransportFailure) -> str:
    match failure.outcome:
        case Outcome.TIMEOUT:
            return f"The workflow did not answer in time: {failure.detail}"
        case Outcome.UNREACHABLE:
            return f"The workflow's webhook could not be reached: {failure.detail}"
        case Outcome.TLS_FAILURE:
            return (
                f"TLS verification of the webhook failed: {failure.detail}. Set "
                "ADAPTER_CA_BUNDLE to the CA that signed its certificate."
            )
        case _:
            return f"The webhook's reply could not be read: {failure.detail}"


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _refuse_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads keeps the last of two equal keys: {"escalate": true, "escalate": false}
    # would read as not escalated. A reply that says two things is off contract.
    document: dict[str, Any] = {}
    for key, value in pairs:
        if key in document:
            raise _DuplicateKey(key)
        document[key] = value
    return document
