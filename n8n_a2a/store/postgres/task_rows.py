"""A task's row in PostgreSQL and the values its statements take, both ways: the task a
row holds, the states a move may leave, a document as a json value, the sent message's
columns and a change's events as the move logs them. No I/O: tasks.py runs them.
"""

from __future__ import annotations

from typing import Any, LiteralString

from psycopg.types.json import Json

from ...core import lifecycle
from ...core.owners import Owner
from ...core.sent import Sent
from ...protocol.model import ArtifactUpdate, JSONObject, Task, TaskEvent, TaskState, TaskStatus
from ..documents import artifact_of, event_doc, message_of
from .pool import Row, dumped

#: The columns a Task is read from (task_of).
TASK_COLUMNS: LiteralString = (
    "id, context_id, owner, state, status_timestamp, status_message, history, artifacts, "
    "metadata, version, relayed, waiting"
)


def task_of(row: Row) -> Task:
    return Task(
        id=row["id"],
        context_id=row["context_id"],
        status=TaskStatus(
            TaskState(row["state"]),
            row["status_timestamp"],
            None if row["status_message"] is None else message_of(row["status_message"]),
        ),
        history=tuple(message_of(m) for m in row["history"]),
        artifacts=tuple(artifact_of(a) for a in row["artifacts"]),
        metadata=row["metadata"],
        version=row["version"],
        owner=row["owner"],
        relayed=row["relayed"],
        # What its workflow needs to go on: where the next turn goes (core/resume.py).
        resume=(row["waiting"] or {}).get("resume"),
    )


def leaves_for(to: TaskState) -> list[str]:
    """The states a task may be moved to `to` from: the lifecycle decides, the UPDATE checks."""
    return [state.value for state in TaskState if lifecycle.may_move(state, to)]


def json_value(document: JSONObject) -> Json:
    """A message's, an artifact's or an event's document as a json value: written as answers
    are (writing.py), a file's base64 spliced in as it is held rather than escaped, and
    counted (pool.py)."""
    return Json(document, dumps=dumped)


def sender(owner: Owner) -> str:
    """The owner as `a2a_sent_messages` keys it: never NULL, never two owners alike."""
    return "" if owner is None else f"@{owner}"


def sent_parameters(sent: Sent | None) -> dict[str, str | None]:
    if sent is None:
        return {"sender": None, "message_id": None, "fingerprint": None}
    return {
        "sender": sender(sent.owner),
        "message_id": sent.message_id,
        "fingerprint": sent.fingerprint,
    }


def logged(events: tuple[TaskEvent, ...]) -> dict[str, list[Any]]:
    """The change's events as the statement logs them: each one's document, but for an
    artifact's update its artifact's place in `made` (1 on; 0 for none), where the
    statement takes the artifact from: an artifact, and a file in it, goes to the
    database once, not twice. (change_events makes each update of one of the change's
    artifacts, in their order.)"""
    documents, places = [], []
    made = 0
    for event in events:
        doc, place = event_doc(event), 0
        if isinstance(event, ArtifactUpdate):
            made = place = made + 1
            del doc["artifact"]
        documents.append(json_value(doc))
        places.append(place)
    return {"events": documents, "made_at": places}
