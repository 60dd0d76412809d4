"""What a task keeps of the text it is given: bounded, encodable, and marked when changed.

The workflow gets a caller's whole message; the task keeps each message's text up to
ADAPTER_MAX_STORED_TEXT characters, cut with a marker past it, so that a table of
tasks stays bounded whatever callers send. Pure: no I/O.
"""

from __future__ import annotations

import json
from dataclasses import replace

from .protocol.errors import A2AError
from .protocol.model import JSONObject, Message, Part
from .protocol.params import MAX_ID_CHARS
from .text import cut, repair

#: The default of ADAPTER_MAX_STORED_TEXT: characters of text a task keeps of each message.
MAX_STORED_TEXT = 8192
# What a part counts for beside its text when a message is measured against the limit.
_PART_CHARS = 16


def check_ids(message: Message) -> None:
    """Ids are kept whole, so each must be short and valid Unicode: -32602 otherwise."""
    for name, value in (
        ("messageId", message.message_id),
        ("contextId", message.context_id),
        ("taskId", message.task_id),
    ):
        if value is not None and (len(value) > MAX_ID_CHARS or repair(value)[1]):
            raise A2AError.invalid_params(
                f"params.message.{name} must be at most {MAX_ID_CHARS} characters of valid Unicode"
            )


def kept_message(message: Message, limit: int) -> tuple[Message, JSONObject]:
    """What a task keeps of a caller's message, and the task metadata saying what changed.

    A message whose text and metadata fit in `limit` characters is kept as it came. A
    larger one is kept as one text part, the text the workflow got cut at `limit` with a
    marker, without its metadata: "cut": ["message"]. A lone surrogate (which UTF-8
    cannot encode) becomes U+FFFD: "repaired": ["message"].
    """
    marks: JSONObject = {}
    extras = [message.metadata, *(part.metadata for part in message.parts)]
    try:
        extras_json = json.dumps(extras, ensure_ascii=False)
    except (ValueError, RecursionError):
        extras_json = None  # too deep to encode again: not kept
    texts = sum(len(part.text) + _PART_CHARS for part in message.parts)
    if extras_json is not None and texts + len(extras_json) <= limit:
        repaired_json, repaired = repair(extras_json)
        metadata, *part_metadata = json.loads(repaired_json) if repaired else extras
        parts = []
        for part, part_extra in zip(message.parts, part_metadata, strict=True):
            text, fixed = repair(part.text)
            repaired = repaired or fixed
            parts.append(Part(text, part_extra))
        kept = replace(message, parts=tuple(parts), metadata=metadata)
    else:
        text, repaired = repair(cut(message.text, limit))
        kept = replace(message, parts=(Part(text),), metadata=None)
        marks["cut"] = ["message"]
    if repaired:
        marks["repaired"] = ["message"]
    return kept, marks


def kept_reply(
    text: str, repaired: bool, limit: int, task_metadata: JSONObject
) -> tuple[str, JSONObject]:
    """What a task keeps of the agent's reply, and its marks added to the task's own."""
    marks: JSONObject = {}
    for mark, made in (("cut", len(text) > limit), ("repaired", repaired)):
        if made:
            marks[mark] = [*task_metadata.get(mark, ()), "reply"]
    return cut(text, limit), marks
