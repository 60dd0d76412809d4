"""ListTasks page tokens: where a page ended (the last task's status time and id), opaque to
the caller, so that the next page starts right after it even if tasks left meanwhile."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from datetime import datetime

from ..protocol.errors import A2AError
from ..protocol.model import Task
from . import encoded_size


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
