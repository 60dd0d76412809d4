"""ListTasks pages: their bound in bytes (about a task's JSON size), and their tokens,
where a page ended (the last task's status time and id), opaque to the caller, so that
the next page starts right after it even if tasks left meanwhile."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from datetime import datetime

from ..protocol.errors import A2AError
from ..protocol.model import Part, Task

#: About the most bytes of tasks one ListTasks page carries (always at least one task).
MAX_PAGE_BYTES = 1024 * 1024
# Generous JSON sizes of what a task has beside its strings: keys, states, timestamps.
_TASK_BYTES = 160
_MESSAGE_BYTES = 96
_PART_BYTES = 32


def encoded_size(task: Task) -> int:
    """About the bytes the task takes in a JSON answer, for a store to bound a page by:
    its strings and metadata exactly, the rest (keys, states, timestamps) generously."""
    strings: list[object] = [task.id, task.context_id, task.metadata]
    size = _TASK_BYTES
    messages = task.history + ((task.status.message,) if task.status.message else ())
    for message in messages:
        strings += (message.message_id, message.task_id, message.context_id, message.metadata)
        strings += map(_part_strings, message.parts)
        size += _MESSAGE_BYTES + _PART_BYTES * len(message.parts) + _base64_size(message.parts)
    for artifact in task.artifacts:
        strings += (artifact.artifact_id, artifact.name)
        strings += map(_part_strings, artifact.parts)
        size += _MESSAGE_BYTES + _PART_BYTES * len(artifact.parts) + _base64_size(artifact.parts)
    return size + len(json.dumps(strings, ensure_ascii=False).encode())


def _base64_size(parts: tuple[Part, ...]) -> int:
    """What the parts' files take as base64, written as it is held, with its quotes."""
    return sum(len(part.file.encoded) + 2 for part in parts if part.file and part.file.encoded)


def _part_strings(part: Part) -> object:
    """What of a part goes on the wire as written: its text, metadata, data and file's
    name, type and URL."""
    file = part.file
    if file is None:
        return (part.text, part.metadata, part.data)
    return (part.metadata, file.name, file.media_type, file.url)


def list_order(task: Task) -> tuple[datetime, str]:
    """What ListTasks sorts by, newest first: the status time, ties broken by id."""
    return task.status.timestamp, task.id


def encode_cursor(task: Task) -> str:
    moment, task_id = list_order(task)
    return base64.urlsafe_b64encode(f"{moment.isoformat()}|{task_id}".encode()).decode()


def decode_cursor(token: str) -> tuple[datetime, str]:
    """The position a token names; -32602 for a token this agent did not give."""
    try:
        moment, _, task_id = base64.urlsafe_b64decode(token.encode()).decode().partition("|")
        position = datetime.fromisoformat(moment), task_id
    except (binascii.Error, UnicodeError, ValueError):
        position = None
    if position is None or position[0].tzinfo is None:
        raise A2AError.invalid_params("params.pageToken is not a token this agent gave")
    return position


def fit(views: Iterable[Task], max_bytes: int) -> list[Task]:
    """The tasks as the page shows them, in order, while they fit in about `max_bytes`
    (`encoded_size`); always the first."""
    shown: list[Task] = []
    size = 0
    for view in views:
        size += encoded_size(view)
        if shown and size > max_bytes:
            break
        shown.append(view)
    return shown
