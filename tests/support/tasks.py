"""Tasks as the unit tests make them: a fixed moment, and a task just submitted."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

from n8n_a2a.protocol.model import Message, Part, Role, Task, TaskState, TaskStatus

#: The moment every hand-made task and change carries.
MOMENT = datetime(2026, 11, 29, 18, 34, 32, tzinfo=UTC)

_serial = itertools.count()


def submitted_task(text: str = "hi", context_id: str = "c-1") -> Task:
    """A task just submitted with the caller's message, under an id no other test uses."""
    task_id = f"p-{next(_serial)}"
    user = Message("m-1", Role.USER, (Part(text),), task_id, context_id)
    return Task(task_id, context_id, TaskStatus(TaskState.SUBMITTED, datetime.now(UTC)), (user,))
