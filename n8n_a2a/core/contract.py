"""The workflow contract: what a webhook reply means (core/turns.py says what it does to a task).

The workflow answers `{"answer": "...", "escalate": false}`. Only that, with a
non-blank answer, completes a task. Where the deployment allows it, a third key
`"inputRequired": true` makes the answer a question: the task waits for the caller's
next message; `"authRequired": true` makes it a request to sign in, which the caller's
next message says is done; either may carry `"resumeUrl"`, the resume URL of the n8n
execution waiting for that message (resume.py reads it: a credential, never shown);
where the output modes allow them, `"data"` (any JSON value) and
`"files"` (`{name, mediaType, base64 | url}`) come with an answer as artifacts. The
contract is two tables: a reply's keys and their rules (`_KEYS`), and what a reply
within it says (`_SAYS`). Everything else fails it with a reason a person understands;
a reply that has drifted from the contract is shown raw, never guessed at. Whatever the
verdict says never quotes the caller's token and is valid Unicode.
Pure: no I/O, no httpx; webhook/client.py turns the HTTP exchange into a WebhookReply.
"""

from __future__ import annotations

import codecs
import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..protocol import carving, strict
from ..protocol.errors import NotJSON
from ..protocol.media import JSON, TEXT, TEXT_ONLY, Modes
from ..protocol.model import Part
from .attachments import cleaned, data_of, files_of
from .replies import HttpReply, Outcome, StreamedReply, TransportFailure, Verdict, WebhookReply
from .resume import WAITING_PATH, Refused, refused_resume, resume_target
from .sanitising import cut, markup_free, redact, repair, unsigned
from .too_large import size_refusal

#: How much of an off-contract or error reply is shown in the task, in characters.
RAW_EXCERPT_CHARS = 2000

_CONTRACT = '{"answer": string, "escalate": boolean}'
# The bound a reply went past, as a reason names it: the setting and its value.
_PAST = "ADAPTER_MAX_REPLY_BYTES ({:,} bytes), the most of a reply the adapter reads"


def classify(
    reply: WebhookReply,
    *,
    input_required: bool = False,
    modes: Modes = TEXT_ONLY,
    auth_required: bool = False,
    waiting_path: str = WAITING_PATH,
) -> Verdict:
    """The one place a webhook reply is judged; `input_required`, `auth_required`: a
    reply may ask a question, or ask to sign in (with the resume URL of the execution
    waiting for the answer, under `waiting_path`); `modes`: the media types the workflow
    may answer (`data` and `files` with them).

    The verdict is reached on the reply as it came; then its text, whatever it quotes
    (the answer, a raw excerpt, a header, an error), has the caller's token redacted and
    each lone surrogate (JSON's "\\ud83d" from a string cut through an emoji) replaced;
    so have the strings of its data and files (a file's bytes are passed as they came).
    """
    verdict = _judge(reply, _Allowed(input_required, modes, auth_required, waiting_path))
    # Whatever the reply wrote of a resume URL's signature is gone too: it is a credential.
    text, repaired = repair(unsigned(redact(verdict.text, reply.subject_token)))
    parts, parts_repaired = cleaned(verdict.parts, reply.subject_token)
    repaired = verdict.repaired or repaired or parts_repaired
    return Verdict(verdict.outcome, text, repaired, parts, verdict.resume)


@dataclass(frozen=True, slots=True)
class _Allowed:
    """What a reply may carry beside its answer: a question, data, files, a sign-in asked."""

    input_required: bool
    modes: Modes
    auth_required: bool = False
    waiting_path: str = WAITING_PATH


#: What a key's value gives a verdict (data and files, as parts), or why it is off contract.
_Read = tuple[Part, ...] | str


@dataclass(frozen=True, slots=True)
class _Key:
    """One key of the contract: what its value must be (`read`), and whether a reply may
    carry it where the deployment allows (`allowed`; None: every reply must carry it)."""

    name: str
    read: Callable[[Any, Modes], _Read]
    allowed: Callable[[_Allowed], bool] | None = None


def _of(kind: type, wrong: str) -> Callable[[Any, Modes], _Read]:
    return lambda value, _: () if isinstance(value, kind) else wrong


# The keys of a reply, in the order their values are checked: the first wrong one is the
# reason given (data and files first, as they always were). Its keys are checked before
# any value: none missing, none the deployment does not allow.
_KEYS = (
    _Key("data", lambda value, _: data_of(value), lambda a: a.modes.gives(JSON)),
    _Key("files", files_of, lambda a: any(m not in (TEXT, JSON) for m in a.modes.outputs)),
    _Key("answer", _of(str, "'answer' is not a string")),
    _Key("escalate", _of(bool, "'escalate' is not true or false")),
    # ADAPTER_ALLOW_INPUT_REQUIRED: true makes the answer a question.
    _Key(
        "inputRequired",
        _of(bool, "'inputRequired' is not true or false"),
        lambda a: a.input_required,
    ),
    # ADAPTER_ALLOW_AUTH_REQUIRED: true makes the answer a request to sign in.
    _Key(
        "authRequired", _of(bool, "'authRequired' is not true or false"), lambda a: a.auth_required
    ),
    # With either: the resume URL of the n8n execution that waits for the next message.
    _Key(
        "resumeUrl",
        _of(str, "'resumeUrl' is not a string"),
        lambda a: a.input_required or a.auth_required,
    ),
)
_REQUIRED = frozenset(key.name for key in _KEYS if key.allowed is None)


@functools.cache  # (one configuration a process: worked out once, not per reply)
def _allowed_keys(allowed: _Allowed) -> frozenset[str]:
    """The keys a reply may have."""
    return frozenset(k.name for k in _KEYS if k.allowed is None or k.allowed(allowed))


@dataclass(frozen=True, slots=True)
class _Says:
    """What a reply within the contract comes to: its outcome, its text made of its answer,
    and whether its data and files come with it (an answer's, and only an answer's)."""

    outcome: Outcome
    text: Callable[[str], str]
    parts: bool = False


_ANSWERED = _Says(Outcome.ANSWERED, lambda answer: answer, parts=True)
_ASKS = _Says(Outcome.INPUT_REQUIRED, lambda answer: answer)
_SIGN_IN = _Says(Outcome.AUTH_REQUIRED, lambda answer: answer)
_SILENT = _Says(Outcome.SILENT, lambda _: "The workflow returned nothing: its answer is empty.")
_ESCALATED = _Says(
    Outcome.ESCALATED,
    lambda answer: (
        "Escalated for human approval: " + (answer.strip() or "(the workflow gave no reason)")
    ),
)
#: (escalate, the key true of inputRequired and authRequired ("": neither), the answer
#: blank) -> what the reply says. Two things at once is off contract.
_SAYS: dict[tuple[bool, str, bool], _Says | str] = {
    (False, "", False): _ANSWERED,
    (False, "", True): _SILENT,
    (False, "inputRequired", False): _ASKS,
    (False, "inputRequired", True): _SILENT,  # a blank question asks nothing
    (False, "authRequired", False): _SIGN_IN,
    (False, "authRequired", True): _SILENT,  # nor does a blank request to sign in
    (True, "", False): _ESCALATED,
    (True, "", True): _ESCALATED,  # without a reason: said so
    **{
        (True, key, blank): f"'escalate' and '{key}' are both true"
        for key in ("inputRequired", "authRequired")
        for blank in (False, True)
    },
}


#: What a failure short of a reply says by its outcome (else: unread); `{}` is its detail.
_TRANSPORT_TEXTS = {
    Outcome.TIMEOUT: "The workflow did not answer in time: {}",
    Outcome.UNREACHABLE: "The workflow's webhook could not be reached: {}",
    Outcome.TLS_FAILURE: "TLS verification of the webhook failed: {}. Set ADAPTER_CA_BUNDLE to "
    "the CA that signed its certificate.",
}


def _judge(reply: WebhookReply, allowed: _Allowed) -> Verdict:
    if isinstance(reply, TransportFailure):
        said = _TRANSPORT_TEXTS.get(reply.outcome, "The webhook's reply could not be read: {}")
        return Verdict(reply.outcome, said.format(reply.detail))
    if isinstance(reply, StreamedReply):
        return _judge_stream(reply, allowed)
    if 300 <= reply.status < 400:
        return Verdict(
            Outcome.REDIRECTED,
            f"The webhook answered with a redirect (HTTP {reply.status}"
            f"{' to ' + reply.location if reply.location else ''}), which is not followed, so "
            "the caller's token cannot travel to another address. Set ADAPTER_WEBHOOK_URL to "
            "the final address.",
        )
    if not 200 <= reply.status < 300:
        return _http_error(reply)
    if reply.content_encoding:
        return _off_contract(
            reply,
            f"it is compressed (Content-Encoding: {reply.content_encoding}), which the adapter "
            "does not decode: it asks for no compression and reads gzip and deflate",
        )
    if reply.truncated:
        return _off_contract(reply, "the reply is larger than " + _PAST.format(reply.read_limit))
    if not reply.body or reply.body.isspace():  # (strip() would copy a large body)
        return Verdict(
            Outcome.SILENT,
            f"The workflow returned nothing (HTTP {reply.status} with an empty body): a node "
            "stopped the run before the Respond to Webhook node answered.",
        )
    return _judge_contract(reply, allowed)


def _http_error(reply: HttpReply) -> Verdict:
    """An error status: n8n's refusal to resume, a webhook not registered, a workflow that
    failed, a refusal of the request's size naming the bound to raise, or any other."""
    excerpt, repaired = _excerpt(reply)
    if reply.resumed and (refusal := refused_resume(reply.status, reply.body)) is not None:
        return Verdict(Outcome.RESUME_FAILED, f"{refusal} n8n said: {excerpt}", repaired)
    if reply.status == 404:
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
    refused = size_refusal(reply.status, reply.body, reply.request_bytes, reply.multipart)
    if refused is not None:
        return Verdict(Outcome.HTTP_ERROR, f"{refused} n8n said: {excerpt}", repaired)
    text = f"The workflow's webhook failed with HTTP {reply.status}: {excerpt}"
    return Verdict(Outcome.HTTP_ERROR, text, repaired)


def _judge_contract(reply: HttpReply, allowed: _Allowed) -> Verdict:
    document = _document(reply)
    if isinstance(document, str):
        return _off_contract(reply, document)
    if not _REQUIRED <= set(document) <= _allowed_keys(allowed):
        return _off_contract(reply, f"its keys are {sorted(document)}")
    parts: list[Part] = []
    for key in _KEYS:
        read = key.read(document[key.name], allowed.modes) if key.name in document else ()
        if isinstance(read, str):
            return _off_contract(reply, read)
        parts.extend(read)
    answer = document["answer"]
    interrupts = [key for key in ("inputRequired", "authRequired") if document.get(key, False)]
    if len(interrupts) > 1:
        return _off_contract(reply, "'inputRequired' and 'authRequired' are both true")
    says = _SAYS[document["escalate"], "".join(interrupts), not answer.strip()]
    if isinstance(says, str):
        return _off_contract(reply, says)
    resume = _resume_of(document, says, allowed.waiting_path)
    if isinstance(resume, Refused):
        return _off_contract(reply, resume.why)
    parts_given = tuple(parts) if says.parts else ()
    return Verdict(says.outcome, says.text(answer), parts=parts_given, resume=resume)


def _resume_of(document: dict[str, Any], says: _Says, waiting_path: str) -> str | Refused | None:
    """The target the next turn goes to: the reply's `resumeUrl`, which only a question or
    a sign-in asked may carry (None without one)."""
    if "resumeUrl" not in document:
        return None
    if says.outcome not in (Outcome.INPUT_REQUIRED, Outcome.AUTH_REQUIRED):
        return Refused("'resumeUrl' comes only with a question or a sign-in asked")
    return resume_target(document["resumeUrl"], waiting_path)


#: Where a reply's files' base64 is.
_FILES_BASE64: tuple[carving.Path, ...] = (("files", None, "base64"),)
_unique_keys = functools.partial(strict.loads, unique_keys=True)


def _document(reply: HttpReply) -> dict[str, Any] | str:
    """The reply's JSON object, or why it is none."""
    try:
        # A key twice is refused: {"escalate": true, "escalate": false} says two things.
        # A file's long base64 is read as a slice of the body (carving.py), never copied.
        document = carving.loads(reply.body, _FILES_BASE64, _unique_keys).document
    except NotJSON as refused:
        return str(refused)
    except (ValueError, RecursionError):
        return "the reply is not JSON"
    if not isinstance(document, dict):
        return "the reply is not a JSON object"
    # Held to the bounds a request meets, so that no answer can fail on what a task keeps;
    # lone surrogates are repaired instead, as in its text (classify).
    beyond = strict.unwritable(document, "the reply", text=False)
    return document if beyond is None else beyond


def _judge_stream(reply: StreamedReply, allowed: _Allowed) -> Verdict:
    """A streamed reply: its text is the answer, or, when it is a JSON object, judged as a
    reply read whole would be."""
    raw = _quoted(reply.raw, reply.subject_token)
    if reply.error:
        return Verdict(
            Outcome.NODE_ERROR,
            f"A node of the workflow failed while it streamed its reply: {reply.error}. "
            f"The text streamed before: {_quoted(reply.text, reply.subject_token) or '(none)'}",
        )
    why = reply.problem
    if reply.truncated:
        why = "the streamed text is larger than " + _PAST.format(reply.read_limit)
    if why:
        return Verdict(
            Outcome.OFF_CONTRACT,
            f"The workflow's streamed reply is off contract ({why}); expected n8n's stream "
            "chunks, one JSON object a line (the Webhook node's response mode `streaming`). "
            f"Raw stream (HTTP {reply.status}): {raw}",
        )
    if reply.text.lstrip().startswith("{"):
        # Lone surrogates as U+FFFD first: JSON's "\\ud83d" is text, not a reason to refuse.
        body = repair(reply.text)[0].encode()
        return _judge_contract(HttpReply(reply.status, body, "streamed items"), allowed)
    if not reply.text.strip():
        return Verdict(
            Outcome.SILENT,
            f"The workflow streamed no text (HTTP {reply.status}): no node wrote an item "
            "before the run ended.",
        )
    return Verdict(Outcome.ANSWERED, reply.text)


def _quoted(text: str, token: str | None) -> str:
    """Text to quote: the token redacted before the cut, which cannot leave a piece of it."""
    return cut(redact(text, token), RAW_EXCERPT_CHARS)


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
    if "html" in reply.content_type.lower():  # a page (a 404's): its text, as one reads it
        text = markup_free(text)
    return cut(redact(text, reply.subject_token), RAW_EXCERPT_CHARS), repaired


def _is_n8n_workflow_error(body: bytes | bytearray) -> bool:
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(document, dict) and document.get("message") == "Error in workflow"
