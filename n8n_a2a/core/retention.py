"""What a task keeps of what it is given: all of it, encodable, and marked when changed.

Nothing a caller is owed is cut: the workflow gets a caller's whole message, and the task
keeps the workflow's whole answer, data and files, for every path and for as long as it
is kept. What bounds the memory kept tasks hold is ADAPTER_MEMORY_BUDGET, which releases
a finished task's large parts as core/release.py marks them, never a cut.

The one thing a task does not keep whole is a caller's own upload: the workflow got it
and the caller has it, so the history keeps its name, type and size as the marker
`released(part, Released.UPLOAD)`, never a file with empty bytes. A file given by URL is
kept whole (it is only a URL). A lone surrogate, which UTF-8 cannot encode, becomes
U+FFFD: "repaired". Pure: no I/O.
"""

from __future__ import annotations

import json
from dataclasses import replace

from ..protocol.errors import A2AError
from ..protocol.model import JSONObject, Message, Part, PartKind
from ..protocol.params import MAX_ID_CHARS
from .release import Released, released
from .sanitising import repair


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


def kept_message(
    message: Message, task_id: str | None, context_id: str | None
) -> tuple[Message, JSONObject]:
    """What a task keeps of a caller's message, as a turn of `task_id` in `context_id`, and
    the task metadata saying what changed.

    All of it: its text, data and metadata whole, a file given by URL whole, an uploaded
    file as its marker (Released.UPLOAD: name, type and size). A lone surrogate becomes
    U+FFFD: "repaired": ["message"].
    """
    # The message's JSON values (its metadata, each part's metadata and data), repaired in
    # one pass over their JSON text (C code, linear), read back only when it had to be.
    values = message.json_values()
    encoded, repaired = repair(json.dumps(values, ensure_ascii=False))
    if repaired:
        values = json.loads(encoded)
    metadata, per_part = values[0], values[1:]
    parts = []
    for part, (part_metadata, data) in zip(message.parts, per_part, strict=True):
        kept_part, fixed = _kept_part(part, part_metadata, data)
        repaired = repaired or fixed
        parts.append(kept_part)
    # Made whole, not `replace`d: every send's path.
    kept = Message(message.message_id, message.role, tuple(parts), task_id, context_id, metadata)
    return kept, ({"repaired": ["message"]} if repaired else {})


def _kept_part(part: Part, metadata: JSONObject | None, data: object) -> tuple[Part, bool]:
    """The part as kept, its metadata and data repaired; an upload as its marker."""
    if part.kind is PartKind.DATA:
        return Part.of_data(data, metadata), False
    if part.file is not None:
        name, fixed = repair(part.file.name)
        url, url_fixed = repair(part.file.url) if part.file.url else ("", False)
        kept = Part.of_file(replace(part.file, name=name, url=url or None), metadata)
        return (kept if url else released(kept, Released.UPLOAD)), fixed or url_fixed
    text, fixed = repair(part.text)
    return Part(text, metadata), fixed
