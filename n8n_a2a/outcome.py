"""The workflow contract: what a webhook reply means, and which task state it earns.

The workflow answers `{"answer": "...", "escalate": false}`. Only that, with a
non-blank answer, completes a task. Where the deployment allows it, a third key
`"inputRequired": true` makes the answer a question: the task waits for the caller's
next message. Everything else fails it with a reason a person understands; a reply
that has drifted from the contract is shown raw, never guessed at.
Pure: no I/O, no httpx; webhook.py turns the HTTP exchange into a WebhookReply.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from typing import Any

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


@dataclass(frozen=True, slots=True)
class HttpReply:
    """The webhook answered over HTTP. `truncated`: the body went past the read limit."""

    status: int
    body: bytes
    content_type: str = ""
    location: str = ""
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class TransportFailure:
    """No HTTP answer came back; `detail` says why, for a person."""

    outcome: Outcome
    detail: str


WebhookReply = HttpReply | TransportFailure


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome and the text the task carries: the answer, or why it failed."""

    outcome: Outcome
    text: str


def classify(reply: WebhookReply, *, input_required: bool = False) -> Verdict:
    """The one place a webhook reply is judged; `input_required`: the third key is allowed."""
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
        return Verdict(
            Outcome.NOT_REGISTERED,
            "The workflow's webhook is not registered (HTTP 404): the workflow is not "
            "active (published) in n8n, or ADAPTER_WEBHOOK_URL names the wrong path. "
            f"n8n said: {_excerpt(reply)}",
        )
    if reply.status == 500 and _is_n8n_workflow_error(reply.body):
        return Verdict(
            Outcome.SILENT,
            'The workflow failed before answering (HTTP 500 "Error in workflow"): a node '
            "threw an error before the Respond to Webhook node ran.",
        )
    if not 200 <= reply.status < 300:
        return Verdict(
            Outcome.HTTP_ERROR,
            f"The workflow's webhook failed with HTTP {reply.status}: {_excerpt(reply)}",
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
    return Verdict(
        Outcome.OFF_CONTRACT,
        f"The workflow's reply is off contract ({why}); expected {_CONTRACT}. "
        f"Raw reply (HTTP {reply.status}, {reply.content_type or 'no Content-Type'}): "
        f"{_excerpt(reply)}",
    )


def _excerpt(reply: HttpReply) -> str:
    text = reply.body.decode("utf-8", errors="replace")
    if len(text) <= RAW_EXCERPT_CHARS and not reply.truncated:
        return text
    return f"{text[:RAW_EXCERPT_CHARS]}[... cut at {RAW_EXCERPT_CHARS} characters]"


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
