"""What a task keeps of what it is given: bounded, encodable, and marked when changed.

The workflow gets a caller's whole message; the task keeps each message's text up to
ADAPTER_MAX_STORED_TEXT characters, cut with a marker past it, and a caller's file's
name, type and size, never its bytes, so that a table of tasks stays bounded whatever
callers send. A reply's data and files are kept within the same limit. Pure: no I/O.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from ..protocol.errors import A2AError
from ..protocol.model import FileContent, JSONObject, Message, Part, PartKind
from ..protocol.params import MAX_ID_CHARS
from .sanitising import cut, repair

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

    A file is kept without its bytes (its name, type and size; a URL whole). A message
    whose text, data, file names and metadata fit in `limit` characters is kept so. A
    larger one is kept as one text part, the text the workflow got cut at `limit` with a
    marker, without its metadata, data and files: "cut": ["message"]. A lone surrogate
    (which UTF-8 cannot encode) becomes U+FFFD: "repaired": ["message"].
    """
    # The message's JSON values (its metadata, each part's metadata and data), measured as
    # the store will write them: in the order of the parts, so they can be put back.
    values: list[Any] = [message.metadata, *([part.metadata, part.data] for part in message.parts)]
    encoded = _encoded(values)
    texts = sum(_chars(part) for part in message.parts)
    if encoded is None or texts + len(encoded) > limit:
        text, repaired = repair(cut(message.text, limit))
        kept, marks = replace(message, parts=(Part(text),), metadata=None), {"cut": ["message"]}
    else:
        kept, repaired = _kept_whole(message, values, encoded)
        marks = {}
    if repaired:
        marks["repaired"] = ["message"]
    return kept, marks


def _encoded(values: list[Any]) -> str | None:
    """The values as JSON text; None for values too deep to encode again (not kept)."""
    try:
        return json.dumps(values, ensure_ascii=False)
    except (ValueError, RecursionError):
        return None


def _kept_whole(message: Message, values: list[Any], encoded: str) -> tuple[Message, bool]:
    """The message with every part kept (files without their bytes), and whether any of it
    was repaired. The values are read back from their JSON only when it had to be repaired."""
    repaired_json, repaired = repair(encoded)
    if repaired:
        values = json.loads(repaired_json)
    metadata, per_part = values[0], values[1:]
    parts = []
    for part, (part_metadata, data) in zip(message.parts, per_part, strict=True):
        kept_part, fixed = _kept_part(part, part_metadata, data)
        repaired = repaired or fixed
        parts.append(kept_part)
    return replace(message, parts=tuple(parts), metadata=metadata), repaired


def _chars(part: Part) -> int:
    """What a part counts for, beside its metadata and data, against the limit."""
    file = part.file or FileContent("", "")
    return len(part.text) + len(file.name) + len(file.url or "") + _PART_CHARS


def _kept_part(part: Part, metadata: JSONObject | None, data: object) -> tuple[Part, bool]:
    """The part as kept, its metadata and data repaired; a file without its bytes."""
    if part.kind is PartKind.DATA:
        return Part.of_data(data, metadata), False
    if part.file is not None:
        name, fixed = repair(part.file.name)
        url, url_fixed = repair(part.file.url) if part.file.url else ("", False)
        file = replace(part.file.without_bytes(), name=name, url=url or None)
        return Part.of_file(file, metadata), fixed or url_fixed
    text, fixed = repair(part.text)
    return Part(text, metadata), fixed


def kept_parts(parts: tuple[Part, ...], limit: int) -> tuple[tuple[Part, ...], list[str]]:
    """What a task keeps of a reply's data and files, and what it cut: each is kept whole
    while they come to at most `limit` characters (a file's as base64). Past that, data is
    kept as its JSON text cut at `limit`, a file by name, type and size: "data", "files"."""
    kept, cuts, spent = [], [], 0
    for part in parts:
        file = part.file
        if file is not None:
            size = len(file.name) + len(file.url or file.base64)
            if spent + size > limit:
                bare = FileContent(file.name, file.media_type, size=file.size)
                part, size = Part.of_file(bare), len(file.name)
                cuts.append("files")
        else:
            text = json.dumps(part.data, ensure_ascii=False)
            size = len(text)
            if spent + size > limit:
                part, size = Part(cut(text, limit)), limit
                cuts.append("data")
        spent += size
        kept.append(part)
    return tuple(kept), sorted(set(cuts))


def kept_reply(
    text: str, repaired: bool, limit: int, task_metadata: JSONObject
) -> tuple[str, JSONObject]:
    """What a task keeps of the agent's reply, and its marks added to the task's own."""
    marks: JSONObject = {}
    for mark, made in (("cut", len(text) > limit), ("repaired", repaired)):
        if made:
            marks[mark] = [*task_metadata.get(mark, ()), "reply"]
    return cut(text, limit), marks
