"""A part no longer kept, marked as such: never an empty file or a cut text posing as whole.

A task gives up a part's payload in two cases: a caller's upload (the workflow got it and
the caller has it; the task keeps its name, type and size) and a finished task's large
part, released to make room for work in flight under ADAPTER_MEMORY_BUDGET. Either way
the part becomes a text part that says what was there and why it is gone, with the same
facts in its metadata under "released": a person reads it as a note, a program tells it
from data by the key, and no client can take it for the bytes it stood for. Pure: no I/O.
"""

from __future__ import annotations

import enum
import json
from dataclasses import replace
from typing import Any

from ..protocol.model import JSONObject, Message, Part, PartKind, Task

#: The part metadata key that marks a released part; its value says what was there.
MARK = "released"
#: Parts holding fewer payload bytes than this stay when a task's payloads are released:
#: their marker would be about as large.
RELEASE_AT = 4096


class Released(enum.Enum):
    """Why a part's payload is gone (the marker's `reason`)."""

    UPLOAD = "upload"  # the caller's own file: the workflow got it, the task keeps its facts
    BUDGET = "budget"  # released, its task finished, to make room under ADAPTER_MEMORY_BUDGET


_WHY = {
    Released.UPLOAD: "went to the workflow; the task keeps its name, type and size, not its bytes",
    Released.BUDGET: "is no longer kept: the adapter released it to make room for work in "
    "flight (ADAPTER_MEMORY_BUDGET). Send the message again to have it made again",
}


def payload_bytes(part: Part) -> int:
    """The bytes a part's payload holds: a file's, data as compact JSON, text as UTF-8.
    A released part holds none (its marker is small and stays)."""
    if is_released(part):
        return 0
    if part.file is not None:
        # As held: the base64 the file came in (4/3 of its bytes).
        return len(part.file.encoded or b"") + len(part.file.url or "")
    if part.kind is PartKind.DATA:
        return len(_json(part.data).encode("utf-8", "surrogatepass"))
    return len(part.text.encode("utf-8", "surrogatepass"))


def task_payload_bytes(task: Task, *, files: bool = True) -> int:
    """The payload bytes a task holds: its artifacts', its history's and its status message's
    parts (what ADAPTER_MEMORY_BUDGET counts of a kept task); `files=False`: but its files',
    which an answer writes from where they are held (protocol/writing.py), never copied."""
    messages = (*task.history, *(() if task.status.message is None else (task.status.message,)))
    parts = [part for artifact in task.artifacts for part in artifact.parts]
    parts += [part for message in messages for part in message.parts]
    # Counted once each: the answer is the status message, the last of the history and
    # an artifact, all of them the same bytes.
    distinct = {id(_payload(part)): part for part in parts if files or part.file is None}
    return sum(payload_bytes(part) for part in distinct.values())


def _payload(part: Part) -> object:
    if part.file is not None:
        return part.file.encoded if part.file.encoded is not None else part.file.url
    return part.data if part.kind is PartKind.DATA else part.text


def is_released(part: Part) -> bool:
    """Whether the part is a marker for a payload no longer kept."""
    return part.kind is PartKind.TEXT and isinstance((part.metadata or {}).get(MARK), dict)


def released(part: Part, why: Released) -> Part:
    """The marker that takes `part`'s place: a text part saying what it was and why it is
    gone, its facts (kind, name, media type, size in bytes, reason) under "released"."""
    facts: JSONObject = {"kind": part.kind.value, "reason": why.value}
    if part.file is not None:
        size = part.file.size if part.file.size is not None else payload_bytes(part)
        facts.update(name=part.file.name, mediaType=part.file.media_type, size=size)
        shown = f"The file {part.file.name or '(unnamed)'} ({part.file.media_type}, {size:,} bytes)"
    else:
        size = payload_bytes(part)
        facts["size"] = size
        noun = "JSON data" if part.kind is PartKind.DATA else "text"
        shown = f"A part of {size:,} bytes of {noun}"
    return Part(f"[{shown} {_WHY[why]}.]", {**(part.metadata or {}), MARK: facts})


def released_task(task: Task) -> Task:
    """The finished task with each part of RELEASE_AT bytes or more released (its artifacts,
    its status message, its history); the task itself when none is. The task's metadata
    says where: "released": ["artifacts", "history", "status"]. What that freed is
    `task_payload_bytes` before less after (a payload shown twice is freed once)."""
    places: set[str] = set()

    def parts_of(where: str, parts: tuple[Part, ...]) -> tuple[Part, ...]:
        kept = []
        for part in parts:
            if payload_bytes(part) >= RELEASE_AT:
                part = released(part, Released.BUDGET)
                places.add(where)
            kept.append(part)
        return tuple(kept)

    def message_of(where: str, message: Message) -> Message:
        return replace(message, parts=parts_of(where, message.parts))

    artifacts = tuple(
        replace(artifact, parts=parts_of("artifacts", artifact.parts))
        for artifact in task.artifacts
    )
    history = tuple(message_of("history", message) for message in task.history)
    status = task.status
    if status.message is not None:
        status = replace(status, message=message_of("status", status.message))
    if not places:
        return task
    metadata = {**task.metadata, MARK: sorted({*task.metadata.get(MARK, ()), *places})}
    return replace(task, artifacts=artifacts, history=history, status=status, metadata=metadata)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
